/* codes_store.c — the audio codes directory of a cache (codes_store.h; formats/cache.md,
 * "Audio codes"): an LMDB environment keyed by content key, its header in "meta". */
#include "cache/store/codes_store.h"
#include "cache/store/read/lmdb_file.h"

#include <dirent.h>
#include <errno.h>
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache/store/writer_internal.h"
#include "common/mel_params.h"
#include "kernels/dvae.h"

#define CODES_LOCK "writer.lock"
#define CODES_MAP_BYTES ((size_t)1 << 34) /* 16 GiB of address space: about 100,000 hours of codes */

struct xtts_codes_store {
    char path[4096];
    xtts_codes_header hdr;
    MDB_env *env;
    MDB_dbi meta_dbi, codes_dbi;
    MDB_txn *wtxn; /* the write transaction of what was put since the last commit */
    int writable, lock_fd;
};

size_t xtts_codes_expected(uint32_t n_samples) {
    xtts_mel_params p;
    if (xtts_mel_preset("xtts", &p, NULL)) return 0;
    return xtts_dvae_codes_len(xtts_mel_n_frames(&p, n_samples));
}

static xtts_status lmdb_fail(xtts_codes_store *s, int rc, const char *what, xtts_error *err) {
    return xtts_error_set(err, rc == MDB_CORRUPTED || rc == MDB_INVALID ? XTTS_ECORRUPT : XTTS_EIO, "%s: %s: %s",
                          s->path, what, mdb_strerror(rc));
}

static xtts_status header_write(xtts_codes_store *s, MDB_txn *txn, const xtts_codes_header *h, xtts_error *err) {
    char tokens[32];
    snprintf(tokens, sizeof tokens, "%u", h->num_tokens);
    const char *kv[][2] = {{"format", XTTS_CODES_FORMAT},
                           {"dvae_sha256", h->dvae_sha256},
                           {"norms_sha256", h->norms_sha256},
                           {"num_tokens", tokens}};
    for (size_t i = 0; i < sizeof kv / sizeof kv[0]; i++) {
        MDB_val k = {strlen(kv[i][0]), (void *)kv[i][0]}, v = {strlen(kv[i][1]), (void *)kv[i][1]};
        int rc = mdb_put(txn, s->meta_dbi, &k, &v, 0);
        if (rc) return lmdb_fail(s, rc, "meta", err);
    }
    if (h->n_mels < 1 || h->n_mels > XTTS_CODES_MAX_MELS)
        return xtts_error_set(err, XTTS_EUSAGE, "%s: %u mel norms", s->path, h->n_mels);
    uint8_t norms[4 * XTTS_CODES_MAX_MELS];
    for (uint32_t i = 0; i < h->n_mels; i++) {
        uint32_t u;
        memcpy(&u, &h->mel_norms[i], 4);
        xtts_put_le32(norms + 4 * i, u);
    }
    MDB_val k = {9, (void *)"mel_norms"}, v = {4 * (size_t)h->n_mels, norms};
    int rc = mdb_put(txn, s->meta_dbi, &k, &v, 0);
    if (rc) return lmdb_fail(s, rc, "meta", err);
    s->hdr = *h;
    return XTTS_OK;
}

/* Open the environment and its two databases (creating them when writable); the header is
 * read, or written when the store is new and h is given. */
static xtts_status env_open(xtts_codes_store *s, const xtts_codes_header *h, xtts_error *err) {
    int rc = xtts_lmdb_env_open(&s->env, s->path, s->writable ? XTTS_LMDB_CODES_WRITE : XTTS_LMDB_CODES_COPY,
                                s->writable ? CODES_MAP_BYTES : 0);
    if (rc) return lmdb_fail(s, rc, "cannot open", err);
    MDB_txn *txn;
    if ((rc = mdb_txn_begin(s->env, NULL, s->writable ? 0 : MDB_RDONLY, &txn))) return lmdb_fail(s, rc, "txn", err);
    unsigned create = s->writable ? MDB_CREATE : 0;
    rc = mdb_dbi_open(txn, "meta", create, &s->meta_dbi);
    if (!rc) rc = mdb_dbi_open(txn, "codes", create, &s->codes_dbi);
    if (rc) {
        mdb_txn_abort(txn);
        return xtts_error_set(err, XTTS_ECORRUPT, "%s: databases \"meta\" and \"codes\": %s", s->path, mdb_strerror(rc));
    }
    MDB_val fk = {6, (void *)"format"}, fv;
    xtts_status st;
    if (h && mdb_get(txn, s->meta_dbi, &fk, &fv)) st = header_write(s, txn, h, err);
    else st = xtts_codes_header_read(txn, s->meta_dbi, s->path, &s->hdr, err);
    if (st) {
        mdb_txn_abort(txn);
        return st;
    }
    rc = mdb_txn_commit(txn); /* also read-only: the handles stay open only after a commit */
    return rc ? lmdb_fail(s, rc, "commit", err) : XTTS_OK;
}

xtts_status xtts_codes_store_create(const char *cache_dir, const xtts_codes_header *hdr, xtts_codes_store **out,
                                    xtts_error *err) {
    *out = NULL;
    xtts_codes_store *s = calloc(1, sizeof *s);
    if (!s) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    s->writable = 1;
    s->lock_fd = -1;
    char name[XTTS_CODES_NAME_MAX];
    xtts_codes_dir_name(hdr->dvae_sha256, hdr->norms_sha256, name);
    xtts_status st = XTTS_OK;
    if (xtts_path_join(s->path, sizeof s->path, cache_dir, name) >= sizeof s->path)
        st = xtts_error_set(err, XTTS_ERANGE, "%s: path too long", cache_dir);
    else if (mkdir(s->path, 0777) && errno != EEXIST)
        st = xtts_error_set(err, XTTS_EIO, "%s: cannot create: %s", s->path, strerror(errno));
    if (!st) st = xtts_lock(s->path, CODES_LOCK, 1, &s->lock_fd, "audio codes being computed", err);
    if (!st) st = xtts_lmdb_file_check(s->path, err);
    if (!st) st = env_open(s, hdr, err);
    if (!st && (strcmp(s->hdr.dvae_sha256, hdr->dvae_sha256) || strcmp(s->hdr.norms_sha256, hdr->norms_sha256) ||
                s->hdr.num_tokens != hdr->num_tokens))
        st = xtts_error_set(err, XTTS_EMISMATCH, "%s: header (dvae %.16s, norms %.16s, %u tokens) differs from the model's",
                            s->path, s->hdr.dvae_sha256, s->hdr.norms_sha256, s->hdr.num_tokens);
    if (st) {
        xtts_codes_store_close(s);
        return st;
    }
    *out = s;
    return XTTS_OK;
}

xtts_status xtts_codes_store_open(const char *path, xtts_codes_store **out, xtts_error *err) {
    *out = NULL;
    xtts_codes_store *s = calloc(1, sizeof *s);
    if (!s) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    s->lock_fd = -1;
    snprintf(s->path, sizeof s->path, "%s", path);
    char data[4200];
    struct stat sb;
    xtts_status st = XTTS_OK;
    xtts_path_join(data, sizeof data, path, "data.mdb");
    if (stat(data, &sb)) st = xtts_error_set(err, XTTS_ENOTFOUND, "%s: no data.mdb", path);
    if (!st) st = xtts_lmdb_file_check(path, err); /* a file cut short is refused before it is mapped */
    if (!st) st = env_open(s, NULL, err);
    if (!st) st = xtts_codes_name_check(path, &s->hdr, err);
    if (st) {
        xtts_codes_store_close(s);
        return st;
    }
    *out = s;
    return XTTS_OK;
}

const xtts_codes_header *xtts_codes_store_header(const xtts_codes_store *s) { return &s->hdr; }
const char *xtts_codes_store_path(const xtts_codes_store *s) { return s->path; }

xtts_status xtts_codes_store_get(xtts_codes_store *s, const uint8_t key[XTTS_CODES_KEY_BYTES], uint16_t *codes,
                                 size_t cap, size_t *n, xtts_error *err) {
    MDB_txn *txn = s->wtxn;
    int rc = 0;
    if (!txn && (rc = mdb_txn_begin(s->env, NULL, MDB_RDONLY, &txn))) return lmdb_fail(s, rc, "txn", err);
    MDB_val k = {XTTS_CODES_KEY_BYTES, (void *)key}, v;
    rc = mdb_get(txn, s->codes_dbi, &k, &v);
    xtts_status st;
    if (rc == MDB_NOTFOUND) st = XTTS_ENOTFOUND, xtts_error_set(err, XTTS_ENOTFOUND, "%s: no entry", s->path);
    else if (rc) st = lmdb_fail(s, rc, "codes", err);
    else st = xtts_codes_value_decode(s->path, s->hdr.num_tokens, key, v.mv_data, v.mv_size, codes, cap, n, err);
    if (txn != s->wtxn) mdb_txn_abort(txn);
    return st;
}

xtts_status xtts_codes_store_put(xtts_codes_store *s, const uint8_t key[XTTS_CODES_KEY_BYTES], const uint16_t *codes,
                                 size_t n, xtts_error *err) {
    if (!s->writable || n == 0 || n > ((size_t)1 << 31))
        return xtts_error_set(err, XTTS_EUSAGE, "%s: put of %zu codes refused", s->path, n);
    int rc;
    if (!s->wtxn && (rc = mdb_txn_begin(s->env, NULL, 0, &s->wtxn))) return lmdb_fail(s, rc, "txn", err);
    MDB_val k = {XTTS_CODES_KEY_BYTES, (void *)key}, v = {XTTS_CODES_VALUE_HEAD + 2 * n, NULL};
    if ((rc = mdb_put(s->wtxn, s->codes_dbi, &k, &v, MDB_RESERVE))) return lmdb_fail(s, rc, "put", err);
    uint8_t *p = v.mv_data;
    xtts_put_le32(p, (uint32_t)n);
    for (size_t i = 0; i < n; i++) xtts_put_le16(p + XTTS_CODES_VALUE_HEAD + 2 * i, codes[i]);
    xtts_put_le32(p + 4, xtts_codes_entry_crc(key, p, p + XTTS_CODES_VALUE_HEAD, 2 * n));
    return XTTS_OK;
}

xtts_status xtts_codes_store_commit(xtts_codes_store *s, xtts_error *err) {
    if (!s->wtxn) return XTTS_OK;
    int rc = mdb_txn_commit(s->wtxn);
    s->wtxn = NULL;
    return rc ? lmdb_fail(s, rc, "commit", err) : XTTS_OK;
}

uint64_t xtts_codes_store_count(xtts_codes_store *s) {
    MDB_txn *txn;
    MDB_stat st;
    if (mdb_txn_begin(s->env, NULL, MDB_RDONLY, &txn)) return 0;
    uint64_t n = mdb_stat(txn, s->codes_dbi, &st) ? 0 : st.ms_entries;
    mdb_txn_abort(txn);
    return n;
}

void xtts_codes_store_close(xtts_codes_store *s) {
    if (!s) return;
    if (s->wtxn) mdb_txn_abort(s->wtxn);
    if (s->env) mdb_env_close(s->env);
    xtts_unlock(s->lock_fd);
    free(s);
}

static int cmp_names(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

xtts_status xtts_codes_dirs(const char *cache_dir, char ***names, size_t *n, xtts_error *err) {
    *names = NULL;
    *n = 0;
    DIR *d = opendir(cache_dir);
    if (!d) return xtts_error_set(err, XTTS_EIO, "%s: cannot list: %s", cache_dir, strerror(errno));
    struct dirent *e;
    size_t cap = 0;
    while ((e = readdir(d))) {
        if (!xtts_codes_dir_name_valid(e->d_name)) continue;
        if (*n == cap) {
            char **g = realloc(*names, (cap = cap ? 2 * cap : 4) * sizeof *g);
            if (!g) break;
            *names = g;
        }
        if (!((*names)[*n] = strdup(e->d_name))) break;
        ++*n;
    }
    int failed = e != NULL;
    closedir(d);
    if (failed) {
        xtts_codes_dirs_free(*names, *n);
        *names = NULL, *n = 0;
        return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    }
    if (*n) qsort(*names, *n, sizeof **names, cmp_names);
    return XTTS_OK;
}

void xtts_codes_dirs_free(char **names, size_t n) {
    for (size_t i = 0; i < n; i++) free(names[i]);
    free(names);
}

xtts_status xtts_codes_dir_remove(const char *path, xtts_error *err) {
    static const char *files[] = {"data.mdb", "lock.mdb", CODES_LOCK};
    char f[4200];
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        xtts_path_join(f, sizeof f, path, files[i]);
        if (unlink(f) && errno != ENOENT) return xtts_error_set(err, XTTS_EIO, "%s: cannot remove: %s", f, strerror(errno));
    }
    if (rmdir(path) && errno != ENOENT) return xtts_error_set(err, XTTS_EIO, "%s: cannot remove: %s", path, strerror(errno));
    return XTTS_OK;
}

/* Copy the codes directory name of from_dir into to_dir. */
static xtts_status copy_one(const char *from_dir, const char *to_dir, const char *name, xtts_error *err) {
    char src[4096], dst[4096];
    xtts_path_join(src, sizeof src, from_dir, name);
    xtts_path_join(dst, sizeof dst, to_dir, name);
    xtts_codes_store *s = NULL;
    xtts_status st = xtts_codes_dir_remove(dst, err);
    if (!st && mkdir(dst, 0777)) st = xtts_error_set(err, XTTS_EIO, "%s: cannot create: %s", dst, strerror(errno));
    if (!st) st = xtts_codes_store_open(src, &s, err);
    if (!st) {
        int rc = mdb_env_copy2(s->env, dst, MDB_CP_COMPACT);
        if (rc) st = xtts_error_set(err, XTTS_EIO, "%s: cannot copy to %s: %s", src, dst, mdb_strerror(rc));
    }
    xtts_codes_store_close(s);
    return st;
}

xtts_status xtts_codes_dirs_copy(const char *from_dir, const char *to_dir, xtts_error *err) {
    char **names;
    size_t n;
    xtts_status st = xtts_codes_dirs(from_dir, &names, &n, err);
    if (st) return st;
    for (size_t i = 0; !st && i < n; i++) st = copy_one(from_dir, to_dir, names[i], err);
    xtts_codes_dirs_free(names, n);
    return st;
}
