/* writer_dir.c — cache directory listing, flock() locks and shard removal shared by
 * the writer and merge (formats/cache.md, "Directory").
 */
#include "cache/store/writer_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

void xtts_shard_name(char out[32], int part, int number) {
    if (part < 0) snprintf(out, 32, "shard-%05d", number);
    else snprintf(out, 32, "shard-%05d-%05d", part, number);
}

void xtts_manifest_name(char out[40], int part) {
    if (part < 0) snprintf(out, 40, "manifest.json");
    else snprintf(out, 40, "manifest.part-%05d.json", part);
}

/* Exactly five decimal digits at s. */
static int digits5(const char *s, int *out) {
    int v = 0;
    for (int i = 0; i < 5; i++) {
        if (s[i] < '0' || s[i] > '9') return 0;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return 1;
}

int xtts_shard_name_parse(const char *n, int *part, int *number) {
    size_t len = strlen(n);
    int a = 0, b = 0;
    if (strncmp(n, "shard-", 6) || (len != 11 && len != 17) || !digits5(n + 6, &a)) return 0;
    if (len == 11) { *part = -1; *number = a; return 1; }
    if (n[11] != '-' || !digits5(n + 12, &b)) return 0;
    *part = a;
    *number = b;
    return 1;
}

int xtts_base_name_parse(const char *name, int *number) {
    return strlen(name) == 10 && !strncmp(name, "base-", 5) && digits5(name + 5, number);
}

static int cmp_shard(const void *a, const void *b) {
    const xtts_dir_shard *x = a, *y = b;
    if (x->part != y->part) return x->part < y->part ? -1 : 1;
    return (x->number > y->number) - (x->number < y->number);
}

static int cmp_int(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

xtts_status xtts_dir_list(const char *dir, xtts_dir_listing *out, xtts_error *err) {
    memset(out, 0, sizeof *out);
    DIR *d = opendir(dir);
    if (!d) return xtts_error_set(err, errno == ENOENT ? XTTS_ENOTFOUND : XTTS_EIO, "%s: cannot open directory: %s", dir,
                                  strerror(errno));
    size_t cap_s = 0, cap_p = 0;
    struct dirent *e;
    xtts_status st = XTTS_OK;
    while ((e = readdir(d)) != NULL) {
        const char *n = e->d_name;
        size_t len = strlen(n);
        int a = 0, b = 0;
        if (!strcmp(n, "manifest.json")) {
            out->has_manifest = 1;
        } else if (len == 24 && !strncmp(n, "manifest.part-", 14) && digits5(n + 14, &a) && !strcmp(n + 19, ".json")) {
            if (out->n_parts == cap_p) {
                cap_p = cap_p ? 2 * cap_p : 16;
                int *p = realloc(out->parts, cap_p * sizeof *p);
                if (!p) { st = XTTS_ENOMEM; break; }
                out->parts = p;
            }
            out->parts[out->n_parts++] = a;
        } else if (xtts_base_name_parse(n, &a)) {
            out->n_base++;
        } else if (xtts_shard_name_parse(n, &a, &b)) {
            if (out->n_shards == cap_s) {
                cap_s = cap_s ? 2 * cap_s : 16;
                xtts_dir_shard *p = realloc(out->shards, cap_s * sizeof *p);
                if (!p) { st = XTTS_ENOMEM; break; }
                out->shards = p;
            }
            out->shards[out->n_shards].part = a;
            out->shards[out->n_shards].number = b;
            out->n_shards++;
        }
    }
    closedir(d);
    if (st) {
        xtts_dir_listing_free(out);
        return xtts_error_set(err, st, "%s: out of memory listing the directory", dir);
    }
    if (out->n_shards) qsort(out->shards, out->n_shards, sizeof *out->shards, cmp_shard);
    if (out->n_parts) qsort(out->parts, out->n_parts, sizeof *out->parts, cmp_int);
    return XTTS_OK;
}

/* A manifest.json a cache build wrote, even a damaged one: it names a "config_hash" (a NeMo
 * manifest, say, has none). */
static int is_cache_manifest(const char *dir) {
    char path[4096];
    if (xtts_path_join(path, sizeof path, dir, "manifest.json") >= sizeof path) return 0;
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    static const char key[] = "\"config_hash\"";
    const size_t k = sizeof key - 1;
    char buf[65536 + sizeof key];
    size_t have = 0, n;
    int yes = 0;
    while (!yes && (n = fread(buf + have, 1, 65536, f)) > 0) {
        have += n;
        yes = memmem(buf, have, key, k) != NULL;
        if (have >= k - 1) { /* keep the tail, where the key may start */
            memmove(buf, buf + have - (k - 1), k - 1);
            have = k - 1;
        }
    }
    fclose(f);
    return yes;
}

/* The names a build puts in its directory besides shards and manifests: the locks and the
 * temporary files of an atomic write. */
static int is_build_scratch(const char *n) {
    return !strncmp(n, XTTS_LOCK_NAME, strlen(XTTS_LOCK_NAME)) || !strcmp(n, XTTS_UPDATE_MARK) ||
           (!strncmp(n, "manifest", 8) && strstr(n, ".json.tmp."));
}

xtts_status xtts_dir_check_cache_or_empty(const char *dir, xtts_error *err) {
    DIR *d = opendir(dir);
    if (!d) {
        if (errno == ENOENT) return XTTS_OK;
        return xtts_error_set(err, errno == ENOTDIR ? XTTS_EINPUT : XTTS_EIO, "%s: cannot open directory: %s", dir,
                              strerror(errno));
    }
    char foreign[256] = "";
    int ours = 0, bad_manifest = 0, a, b;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        const char *n = e->d_name;
        if (!strcmp(n, ".") || !strcmp(n, "..") || is_build_scratch(n)) continue;
        size_t len = strlen(n);
        int is_ours = xtts_shard_name_parse(n, &a, &b) || xtts_base_name_parse(n, &a) ||
                      (len == 24 && !strncmp(n, "manifest.part-", 14) && !strcmp(n + 19, ".json"));
        int manifest = !strcmp(n, "manifest.json");
        if (manifest) is_ours = is_cache_manifest(dir);
        ours |= is_ours;
        if (!is_ours && (!foreign[0] || manifest)) snprintf(foreign, sizeof foreign, "%s", n);
        bad_manifest |= manifest && !is_ours;
    }
    closedir(d);
    if (foreign[0] && (!ours || bad_manifest))
        return xtts_error_set(err, XTTS_EINPUT,
                              "%s: not empty and not a cache (it holds %s%s): give an empty or new directory, or "
                              "a cache to resume or replace; nothing in it was changed",
                              dir, foreign, bad_manifest ? ", which is no cache manifest" : "");
    return XTTS_OK;
}

void xtts_dir_listing_free(xtts_dir_listing *l) {
    if (!l) return;
    free(l->shards);
    free(l->parts);
    memset(l, 0, sizeof *l);
}

xtts_status xtts_lock(const char *dir, const char *name, int exclusive, int *fd_out, const char *what, xtts_error *err) {
    *fd_out = -1;
    char path[4096];
    if (xtts_path_join(path, sizeof path, dir, name) >= sizeof path)
        return xtts_error_set(err, XTTS_ERANGE, "%s: path too long", dir);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return xtts_error_set(err, XTTS_EIO, "%s: cannot open lock file: %s", path, strerror(errno));
    if (flock(fd, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) != 0) {
        int e = errno;
        char holder[64] = "";
        if (e == EWOULDBLOCK) {
            char buf[32];
            ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
            if (n > 0) {
                buf[n] = '\0';
                long pid = strtol(buf, NULL, 10);
                if (pid > 0) snprintf(holder, sizeof holder, " (pid %ld)", pid);
            }
        }
        close(fd);
        if (e == EWOULDBLOCK)
            return xtts_error_set(err, XTTS_EBUSY, "%s: %s: lock %s is held by another process%s", dir, what, name, holder);
        return xtts_error_set(err, XTTS_EIO, "%s: cannot lock: %s", path, strerror(e));
    }
    if (exclusive) {
        char buf[32];
        int n = snprintf(buf, sizeof buf, "%ld\n", (long)getpid());
        if (ftruncate(fd, 0) == 0 && pwrite(fd, buf, (size_t)n, 0) < 0) { /* the pid is only a hint */ }
    }
    *fd_out = fd;
    return XTTS_OK;
}

void xtts_remove_manifest_temps(const char *dir, int part) {
    char prefix[48];
    xtts_manifest_name(prefix, part);
    strcat(prefix, ".tmp.");
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    char path[4096];
    while ((e = readdir(d)))
        if (!strncmp(e->d_name, prefix, strlen(prefix)) &&
            xtts_path_join(path, sizeof path, dir, e->d_name) < sizeof path)
            unlink(path);
    closedir(d);
}

void xtts_unlock(int fd) {
    if (fd < 0) return;
    flock(fd, LOCK_UN);
    close(fd);
}

xtts_status xtts_remove_file(const char *path, xtts_error *err) {
    if (unlink(path) != 0 && errno != ENOENT)
        return xtts_error_set(err, XTTS_EIO, "%s: cannot remove: %s", path, strerror(errno));
    return XTTS_OK;
}

xtts_status xtts_shard_dir_check(const char *path, xtts_error *err) {
    DIR *d = opendir(path);
    if (!d) {
        if (errno == ENOENT) return XTTS_OK;
        if (errno == ENOTDIR)
            return xtts_error_set(err, XTTS_EINPUT, "%s: a file, not a shard directory: left as it is", path);
        return xtts_error_set(err, XTTS_EIO, "%s: cannot open: %s", path, strerror(errno));
    }
    struct dirent *e;
    xtts_status st = XTTS_OK;
    while (!st && (e = readdir(d)) != NULL) {
        const char *n = e->d_name;
        if (strcmp(n, ".") && strcmp(n, "..") && strcmp(n, "data.mdb") && strcmp(n, "lock.mdb"))
            st = xtts_error_set(err, XTTS_EINPUT, "%s: holds %s, which is not the cache's: the shard is left as it is",
                                path, n);
    }
    closedir(d);
    return st;
}

xtts_status xtts_remove_shard_dir(const char *path, xtts_error *err) {
    /* only LMDB's two files: anything else in it is not the cache's, and stops the removal
     * before any file is gone */
    xtts_status st = xtts_shard_dir_check(path, err);
    if (st) return st;
    char p[4096];
    static const char *const files[] = {"data.mdb", "lock.mdb"};
    for (int i = 0; i < 2 && !st; i++) {
        if (xtts_path_join(p, sizeof p, path, files[i]) >= sizeof p) return xtts_error_set(err, XTTS_ERANGE, "%s: path too long", path);
        st = xtts_remove_file(p, err);
    }
    if (st) return st;
    if (rmdir(path) != 0 && errno != ENOENT)
        return xtts_error_set(err, XTTS_EIO, "%s: cannot remove directory: %s", path, strerror(errno));
    return XTTS_OK;
}

xtts_status xtts_mdb_status(int rc) {
    switch (rc) {
    case MDB_SUCCESS: return XTTS_OK;
    case ENOMEM: return XTTS_ENOMEM;
    case MDB_CORRUPTED:
    case MDB_INVALID:
    case MDB_PAGE_NOTFOUND:
    case MDB_INCOMPATIBLE:
    case MDB_BAD_DBI: return XTTS_ECORRUPT;
    case MDB_VERSION_MISMATCH: return XTTS_EMISMATCH;
    case MDB_NOTFOUND: return XTTS_ENOTFOUND;
    default: return XTTS_EIO;
    }
}

xtts_status xtts_shard_count_records(const char *path, uint64_t *records, xtts_error *err) {
    *records = 0;
    MDB_env *env = NULL;
    MDB_txn *txn = NULL;
    MDB_dbi dbi;
    MDB_stat ms;
    xtts_status fst = xtts_lmdb_file_check(path, err);
    if (fst) return fst;
    int rc = xtts_lmdb_env_open(&env, path, XTTS_LMDB_SHARD_READ, 0);
    if (!rc) rc = mdb_txn_begin(env, NULL, MDB_RDONLY, &txn);
    if (!rc) rc = mdb_dbi_open(txn, "records", 0, &dbi);
    if (!rc) rc = mdb_stat(txn, dbi, &ms);
    if (!rc) *records = ms.ms_entries;
    if (txn) mdb_txn_abort(txn);
    if (env) mdb_env_close(env);
    if (rc) return xtts_error_set(err, xtts_mdb_status(rc), "%s: cannot read the shard: %s", path, mdb_strerror(rc));
    return XTTS_OK;
}

xtts_status xtts_remove_base_dirs(const char *dir, xtts_error *err) {
    DIR *d = opendir(dir);
    if (!d) return errno == ENOENT ? XTTS_OK : xtts_error_set(err, XTTS_EIO, "%s: cannot list: %s", dir, strerror(errno));
    struct dirent *e;
    xtts_status st = XTTS_OK;
    char path[4096];
    int number;
    while (!st && (e = readdir(d)) != NULL)
        if (xtts_base_name_parse(e->d_name, &number)) {
            xtts_path_join(path, sizeof path, dir, e->d_name);
            st = xtts_remove_shard_dir(path, err);
        }
    closedir(d);
    return st;
}
