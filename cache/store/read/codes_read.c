/* codes_read.c — the audio codes directories read (codes_read.h): names, the header, the
 * check of a value, and the read-only reader under the fault guard. */
#include "cache/store/read/codes_read.h"
#include "cache/store/read/guard.h"
#include "cache/store/read/lmdb_env.h"
#include "cache/store/read/lmdb_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct xtts_codes_reader {
    char path[4096];
    xtts_codes_header hdr;
    MDB_env *env;
    MDB_dbi meta_dbi, codes_dbi;
};

void xtts_codes_dir_name(const char *dvae_sha256, const char *norms_sha256, char out[XTTS_CODES_NAME_MAX]) {
    xtts_sha256 h;
    uint8_t d[32];
    char hex[17];
    xtts_sha256_init(&h);
    xtts_sha256_update(&h, dvae_sha256, strlen(dvae_sha256));
    xtts_sha256_update(&h, norms_sha256, strlen(norms_sha256));
    xtts_sha256_final(&h, d);
    xtts_hex(d, 8, hex);
    snprintf(out, XTTS_CODES_NAME_MAX, "%s%.16s", XTTS_CODES_DIR_PREFIX, hex);
}

xtts_status xtts_codes_name_check(const char *path, const xtts_codes_header *h, xtts_error *err) {
    char name[XTTS_CODES_NAME_MAX];
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    xtts_codes_dir_name(h->dvae_sha256, h->norms_sha256, name);
    if (strcmp(base, name))
        return xtts_error_set(err, XTTS_ECORRUPT, "%s: the header's hashes give the name %s", path, name);
    return XTTS_OK;
}

int xtts_codes_dir_name_valid(const char *n) {
    size_t p = strlen(XTTS_CODES_DIR_PREFIX);
    if (strncmp(n, XTTS_CODES_DIR_PREFIX, p) || strlen(n) != p + 16) return 0;
    for (n += p; *n; n++)
        if (!((*n >= '0' && *n <= '9') || (*n >= 'a' && *n <= 'f'))) return 0;
    return 1;
}

uint32_t xtts_codes_entry_crc(const uint8_t *key, const uint8_t *n_le, const void *codes, size_t bytes) {
    uint32_t crc = xtts_crc32(0, key, XTTS_CODES_KEY_BYTES);
    crc = xtts_crc32(crc, n_le, 4);
    return xtts_crc32(crc, codes, bytes);
}

static int meta_get(MDB_txn *txn, MDB_dbi dbi, const char *key, char *out, size_t cap) {
    MDB_val k = {strlen(key), (void *)key}, v;
    if (mdb_get(txn, dbi, &k, &v) || v.mv_size >= cap) return -1;
    memcpy(out, v.mv_data, v.mv_size);
    out[v.mv_size] = '\0';
    return 0;
}

static int is_hex64(const char *s) {
    if (strlen(s) != 64) return 0;
    for (const char *p = s; *p; p++)
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'))) return 0;
    return 1;
}

xtts_status xtts_codes_header_read(MDB_txn *txn, MDB_dbi meta, const char *path, xtts_codes_header *h,
                                   xtts_error *err) {
    char format[64], tokens[32], *end;
    if (meta_get(txn, meta, "format", format, sizeof format) ||
        meta_get(txn, meta, "dvae_sha256", h->dvae_sha256, sizeof h->dvae_sha256) ||
        meta_get(txn, meta, "norms_sha256", h->norms_sha256, sizeof h->norms_sha256) ||
        meta_get(txn, meta, "num_tokens", tokens, sizeof tokens))
        return xtts_error_set(err, XTTS_ECORRUPT, "%s: header incomplete (format, dvae_sha256, norms_sha256, num_tokens)",
                              path);
    if (strcmp(format, XTTS_CODES_FORMAT))
        return xtts_error_set(err, XTTS_EMISMATCH, "%s: format \"%s\", this build reads \"%s\"", path, format,
                              XTTS_CODES_FORMAT);
    errno = 0;
    unsigned long t = strtoul(tokens, &end, 10);
    if (errno || *end || t < 1 || t > XTTS_CODES_MAX_TOKENS || !is_hex64(h->dvae_sha256) || !is_hex64(h->norms_sha256))
        return xtts_error_set(err, XTTS_ECORRUPT, "%s: header: a hash or num_tokens (\"%s\") out of form", path, tokens);
    h->num_tokens = (uint32_t)t;
    MDB_val k = {9, (void *)"mel_norms"}, v;
    if (mdb_get(txn, meta, &k, &v) || v.mv_size % 4 || v.mv_size < 4 || v.mv_size / 4 > XTTS_CODES_MAX_MELS)
        return xtts_error_set(err, XTTS_ECORRUPT, "%s: header: no mel_norms of 1 to %d float32 values", path,
                              XTTS_CODES_MAX_MELS);
    h->n_mels = (uint32_t)(v.mv_size / 4);
    for (uint32_t i = 0; i < h->n_mels; i++) {
        uint32_t u = xtts_get_le32((const uint8_t *)v.mv_data + 4 * i);
        memcpy(&h->mel_norms[i], &u, 4);
    }
    return XTTS_OK;
}

xtts_status xtts_codes_value_decode(const char *path, uint32_t num_tokens, const uint8_t *key, const void *val,
                                    size_t len, uint16_t *codes, size_t cap, size_t *n, xtts_error *err) {
    const uint8_t *p = val;
    char hex[17];
    xtts_hex(key, 8, hex);
    if (len < XTTS_CODES_VALUE_HEAD + 2 || (len - XTTS_CODES_VALUE_HEAD) % 2 ||
        xtts_get_le32(p) != (len - XTTS_CODES_VALUE_HEAD) / 2)
        return xtts_error_set(err, XTTS_ECORRUPT, "%s: key %s...: value of %zu bytes does not hold its count", path,
                              hex, len);
    size_t count = xtts_get_le32(p);
    if (xtts_codes_entry_crc(key, p, p + XTTS_CODES_VALUE_HEAD, 2 * count) != xtts_get_le32(p + 4))
        return xtts_error_set(err, XTTS_ECORRUPT, "%s: key %s...: checksum mismatch", path, hex);
    *n = count;
    if (count > cap)
        return xtts_error_set(err, XTTS_ERANGE, "%s: key %s...: %zu codes, room for %zu", path, hex, count, cap);
    for (size_t i = 0; i < count; i++) {
        codes[i] = xtts_get_le16(p + XTTS_CODES_VALUE_HEAD + 2 * i);
        if (codes[i] >= num_tokens)
            return xtts_error_set(err, XTTS_ECORRUPT, "%s: key %s...: code %zu is %u, the codebook has %u", path, hex, i,
                                  codes[i], num_tokens);
    }
    return XTTS_OK;
}

/* The environment, its databases and its header, read-only; 0 or a status. */
static xtts_status reader_env_open(xtts_codes_reader *r, uint64_t file_bytes, xtts_error *err) {
    int rc;
    MDB_txn *volatile txn = NULL;
    volatile int stage = 0;
    volatile xtts_status st = XTTS_OK;
    xtts_error e;
    xtts_error_clear(&e);
    GUARD(sig)
    rc = xtts_lmdb_env_open(&r->env, r->path, XTTS_LMDB_CODES_READ, file_bytes);
    if (!rc) stage = 1, rc = mdb_txn_begin(r->env, NULL, MDB_RDONLY, (MDB_txn **)&txn);
    if (!rc) stage = 2, rc = mdb_dbi_open(txn, "meta", 0, &r->meta_dbi);
    if (!rc) rc = mdb_dbi_open(txn, "codes", 0, &r->codes_dbi);
    if (!rc) stage = 3, st = xtts_codes_header_read(txn, r->meta_dbi, r->path, &r->hdr, &e);
    GUARD_END(sig)
    if (sig) {
        if (txn) mdb_txn_abort(txn);
        return xtts_error_set(err, XTTS_ECORRUPT, "%s: damaged (%s while reading its %s)", r->path,
                              xtts_guard_signame(sig), stage < 2 ? "meta pages" : "databases");
    }
    if (rc || st) {
        if (txn) mdb_txn_abort(txn);
        if (st) return xtts_error_set(err, st, "%s", e.msg);
        if (stage == 0 && rc > 0)
            return xtts_error_set(err, rc == ENOMEM ? XTTS_ENOMEM : XTTS_EIO, "%s: cannot open: %s", r->path,
                                  strerror(rc));
        if (stage == 1) return xtts_error_set(err, XTTS_EIO, "%s: cannot begin a read transaction (%s)", r->path,
                                              mdb_strerror(rc));
        return xtts_error_set(err, XTTS_ECORRUPT, "%s: %s: %s", r->path,
                              stage == 2 ? "databases \"meta\" and \"codes\"" : "cannot open", mdb_strerror(rc));
    }
    rc = mdb_txn_commit(txn); /* the database handles stay open only after a commit */
    return rc ? xtts_error_set(err, XTTS_EIO, "%s: %s", r->path, mdb_strerror(rc)) : XTTS_OK;
}

xtts_status xtts_codes_reader_open(const char *path, xtts_codes_reader **out, xtts_error *err) {
    *out = NULL;
    xtts_codes_reader *r = calloc(1, sizeof *r);
    if (!r) return xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", path);
    xtts_status st = XTTS_OK;
    char data[4200];
    struct stat sb;
    if (snprintf(r->path, sizeof r->path, "%s", path) >= (int)sizeof r->path)
        st = xtts_error_set(err, XTTS_ERANGE, "%s: path too long", path);
    else if (xtts_path_join(data, sizeof data, path, "data.mdb"), stat(data, &sb))
        st = xtts_error_set(err, XTTS_ENOTFOUND, "%s: no data.mdb", path);
    else if (!S_ISREG(sb.st_mode))
        st = xtts_error_set(err, XTTS_ECORRUPT, "%s: damaged (%s is not a regular file)", path, data);
    if (!st) st = xtts_lmdb_file_check(path, err);
    if (!st) st = reader_env_open(r, (uint64_t)sb.st_size, err);
    if (!st) st = xtts_codes_name_check(path, &r->hdr, err);
    if (st) {
        xtts_codes_reader_close(r);
        return st;
    }
    *out = r;
    return XTTS_OK;
}

const xtts_codes_header *xtts_codes_reader_header(const xtts_codes_reader *r) { return &r->hdr; }

xtts_status xtts_codes_reader_get(xtts_codes_reader *r, const uint8_t key[XTTS_CODES_KEY_BYTES], uint16_t *codes,
                                  size_t cap, size_t *n, xtts_error *err) {
    MDB_txn *volatile txn = NULL;
    MDB_val k = {XTTS_CODES_KEY_BYTES, (void *)key}, v;
    volatile int rc = 0;
    volatile xtts_status st = XTTS_OK;
    xtts_error e;
    xtts_error_clear(&e);
    GUARD(sig)
    rc = mdb_txn_begin(r->env, NULL, MDB_RDONLY, (MDB_txn **)&txn);
    if (!rc) rc = mdb_get(txn, r->codes_dbi, &k, &v);
    if (!rc) st = xtts_codes_value_decode(r->path, r->hdr.num_tokens, key, v.mv_data, v.mv_size, codes, cap, n, &e);
    GUARD_END(sig)
    if (txn) mdb_txn_abort(txn);
    char hex[17];
    xtts_hex(key, 8, hex);
    if (sig)
        return xtts_error_set(err, XTTS_ECORRUPT, "%s: key %s...: damaged LMDB pages (%s)", r->path, hex,
                              xtts_guard_signame(sig));
    if (!txn) return xtts_error_set(err, XTTS_EIO, "%s: cannot begin a read transaction (%s)", r->path, mdb_strerror(rc));
    if (rc == MDB_NOTFOUND) return xtts_error_set(err, XTTS_ENOTFOUND, "%s: key %s...: no entry", r->path, hex);
    if (rc) return xtts_error_set(err, XTTS_ECORRUPT, "%s: key %s...: %s", r->path, hex, mdb_strerror(rc));
    return st ? xtts_error_set(err, st, "%s", e.msg) : XTTS_OK;
}

uint64_t xtts_codes_reader_count(xtts_codes_reader *r) {
    MDB_txn *volatile txn = NULL;
    MDB_stat ms;
    volatile uint64_t n = 0;
    GUARD(sig)
    if (!mdb_txn_begin(r->env, NULL, MDB_RDONLY, (MDB_txn **)&txn) && !mdb_stat(txn, r->codes_dbi, &ms)) n = ms.ms_entries;
    GUARD_END(sig)
    (void)sig;
    if (txn) mdb_txn_abort(txn);
    return n;
}

void xtts_codes_reader_close(xtts_codes_reader *r) {
    if (!r) return;
    if (r->env) mdb_env_close(r->env);
    free(r);
}
