/* cache.c — a cache directory opened (formats/cache.md): its manifest, one read-only LMDB
 * environment per shard directory (cache/store/read/lmdb_env.c says how it is opened), and the
 * pool that keeps a bounded number of them open; the records are read through reader.c.
 *
 * Damaged files. LMDB trusts its pages: a flipped bit in a branch page or a truncated
 * data.mdb can make it read outside the file, which is SIGSEGV or SIGBUS, not an error
 * code. So: at open every shard's last page must lie inside data.mdb, every value LMDB
 * returns must lie inside the file, and every call into LMDB and every read of mapped
 * bytes runs under a per-thread fault guard (guard.h) that turns a fault into XTTS_ECORRUPT
 * naming the shard. Outside a guarded region the previous signal disposition applies.
 */
#include "cache/store/read/cache_internal.h"
#include "cache/store/read/guard.h"
#include "cache/store/read/lmdb_env.h"
#include "cache/store/read/lmdb_file.h"

#include <errno.h>
#include <fcntl.h>
#include <lmdb.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

/* snprintf that truncates quietly: messages are one bounded line. */
__attribute__((format(printf, 3, 4))) static void say(char *buf, size_t cap, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, cap, fmt, ap);
    va_end(ap);
}

static char *dup_str(const char *s) {
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p) memcpy(p, s, n);
    return p;
}

static xtts_status shard_fail(shard_t *s, xtts_status code, const char *fmt, const char *detail) {
    s->status = code;
    say(s->error, sizeof s->error, fmt, s->name, detail);
    return code;
}

/* LMDB does not tell where it mapped a file (me_mapaddr is only the MDB_FIXEDMAP address),
 * so find the mapping that holds a value it returned. NULL when unknown (then only the
 * fault guard protects reads). */
static const char *mapping_start(const void *p, uint64_t *len) {
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f) return NULL;
    char line[512];
    const char *found = NULL;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && (uintptr_t)p >= lo && (uintptr_t)p < hi) {
            found = (const char *)(uintptr_t)lo;
            *len = hi - lo;
            break;
        }
    }
    fclose(f);
    return found;
}

/* Compare a meta value inside txn (guarded by the caller). */
static int meta_equals(MDB_txn *txn, MDB_dbi dbi, const char *key, const char *want, shard_t *s) {
    MDB_val k = {strlen(key), (void *)key}, v;
    if (mdb_get(txn, dbi, &k, &v) != MDB_SUCCESS) return -1;
    const char *p = v.mv_data;
    if (!s->map) {
        uint64_t region = 0;
        s->map = mapping_start(p, &region);
        if (s->map && region < s->file_bytes) s->file_bytes = region;
    }
    if (s->map && (p < s->map || p + v.mv_size > s->map + s->file_bytes)) return -2;
    return v.mv_size == strlen(want) && !memcmp(p, want, v.mv_size) ? 1 : 0;
}


/* Worth closing an idle environment of the pool and trying again. */
static int pool_may_relieve(int e) { return e == EMFILE || e == ENFILE || e == ENOMEM; }

/* liblmdb takes its page size from the meta pages and then trusts it: page size and meta
 * locations must agree before mdb_env_open maps the file (cache/store/read/lmdb_file.h, the check the
 * writer makes too). 0 when they look sound, -1 (the shard failed, the reason kept). */
static int meta_pages_check(shard_t *s, const char *data_path) {
    int fd = open(data_path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        s->sys_errno = errno;
        char detail[300];
        say(detail, sizeof detail, "%s: %s", data_path, strerror(s->sys_errno));
        shard_fail(s, xtts_resource_status(s->sys_errno), "%s: cannot open %s", detail);
        return -1;
    }
    uint8_t m[2][XTTS_LMDB_META_BYTES];
    const char *why = xtts_lmdb_meta_pages(fd, s->file_bytes, m);
    close(fd);
    if (why) {
        shard_fail(s, XTTS_ECORRUPT, "%s: damaged meta pages (%s)", why);
        return -1;
    }
    return 0;
}

/* the shard directory and its data file exist, the file can hold the records the manifest
 * gives it, and its meta pages look sound; 0 or -1 (failed, with the reason kept) */
static int shard_open_files(shard_t *s) {
    char detail[300];
    struct stat st;
    char data_path[4200];
    xtts_path_join(data_path, sizeof data_path, s->path, "data.mdb");
    const char *failed = NULL;
    int e = 0, is_dir = 0;
    if (stat(s->path, &st) != 0) failed = s->path, e = errno;
    else if (!(is_dir = S_ISDIR(st.st_mode))) e = ENOTDIR;
    else if (stat(data_path, &st) != 0) failed = data_path, e = errno;
    if (failed && e != ENOENT && e != ENOTDIR) { /* a permission or the system: not a missing shard */
        s->sys_errno = e;
        say(detail, sizeof detail, "%s: %s", failed, strerror(e));
        shard_fail(s, xtts_resource_status(e), "%s: cannot open %s", detail);
        return -1;
    }
    if (!is_dir) {
        say(detail, sizeof detail, "%s: %s", s->path, failed ? strerror(e) : "not a directory");
        shard_fail(s, XTTS_ENOTFOUND, "%s: shard missing (%s)", detail);
        return -1;
    }
    if (failed) {
        say(detail, sizeof detail, "%s: %s", data_path, strerror(e));
        shard_fail(s, XTTS_ENOTFOUND, "%s: shard has no data file (%s)", detail);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) { /* a FIFO or a device would block open() or map nothing */
        say(detail, sizeof detail, "%s", data_path);
        shard_fail(s, XTTS_ECORRUPT, "%s: damaged (%s is not a regular file)", detail);
        return -1;
    }
    s->file_bytes = (uint64_t)st.st_size;
    /* Every record is a key and a value of at least a record header: a count the file
     * cannot hold is refused before any work is bounded by it. */
    uint64_t can_hold = s->file_bytes / (XTTS_RECORD_HEADER_BYTES + 8);
    if (s->records > can_hold) {
        say(detail, sizeof detail, "the manifest says %llu records, data.mdb of %llu bytes holds at most %llu",
            (unsigned long long)s->records, (unsigned long long)s->file_bytes, (unsigned long long)can_hold);
        shard_fail(s, XTTS_ECORRUPT, "%s: %s", detail);
        return -1;
    }
    return meta_pages_check(s, data_path);
}

/* the LMDB environment, read-only, mapping the file as it is (never the size a writer
 * may grow it to: a reader needs no room to grow), and the file long enough for its
 * pages; 0 or -1 */
static int shard_open_env(shard_t *s) {
    char detail[300];
    int rc;
    volatile int fault_stage = 0;
    GUARD(sig)
    rc = xtts_lmdb_env_open(&s->env, s->path, XTTS_LMDB_SHARD_READ, s->file_bytes);
    GUARD_END(sig)
    if (sig) rc = MDB_CORRUPTED, fault_stage = 1;
    if (rc > 0 && rc != ENOENT) { /* liblmdb's own codes are negative: this is errno */
        s->sys_errno = rc;
        say(detail, sizeof detail, "%s/data.mdb: %s", s->path, strerror(rc));
        shard_fail(s, xtts_resource_status(rc), "%s: cannot open %s", detail);
        return -1;
    }
    if (rc) {
        say(detail, sizeof detail, "%s%s", fault_stage ? "fault while reading meta pages: " : "",
                 fault_stage ? xtts_guard_signame(sig) : mdb_strerror(rc));
        shard_fail(s, rc == ENOENT ? XTTS_ENOTFOUND : XTTS_ECORRUPT, "%s: cannot open LMDB environment (%s)", detail);
        return -1;
    }
    MDB_envinfo info;
    MDB_stat est;
    GUARD(sig_info)
    mdb_env_info(s->env, &info);
    mdb_env_stat(s->env, &est);
    GUARD_END(sig_info)
    if (sig_info) {
        shard_fail(s, XTTS_ECORRUPT, "%s: damaged meta pages (%s)", xtts_guard_signame(sig_info));
        return -1;
    }
    uint64_t need = ((uint64_t)info.me_last_pgno + 1) * est.ms_psize;
    if (need > s->file_bytes) {
        say(detail, sizeof detail, "data.mdb has %llu bytes, its pages reach %llu",
                 (unsigned long long)s->file_bytes, (unsigned long long)need);
        shard_fail(s, XTTS_ECORRUPT, "%s: truncated (%s)", detail);
        return -1;
    }
    if (info.me_mapsize < s->file_bytes) s->file_bytes = info.me_mapsize; /* only the map is readable */
    s->map = NULL; /* found from the first value read */
    return 0;
}

/* Open an optional database: 0 with *has set, or LMDB's error when it exists but fails. */
static int optional_dbi(MDB_txn *txn, const char *name, MDB_dbi *dbi, int *has) {
    int rc = mdb_dbi_open(txn, name, 0, dbi);
    *has = rc == 0;
    return rc == MDB_NOTFOUND ? 0 : rc;
}

/* the databases, and the shard's configuration, format and counts against the manifest */
static void shard_open_databases(xtts_cache *c, shard_t *s) {
    char detail[300];
    int rc;
    MDB_txn *txn = NULL;
    GUARD(sig_txn)
    rc = mdb_txn_begin(s->env, NULL, MDB_RDONLY, &txn);
    GUARD_END(sig_txn)
    if (sig_txn) {
        shard_fail(s, XTTS_ECORRUPT, "%s: damaged meta pages (%s)", xtts_guard_signame(sig_txn));
        return;
    }
    if (rc) {
        shard_fail(s, XTTS_EIO, "%s: cannot begin a read transaction (%s)", mdb_strerror(rc));
        return;
    }
    volatile int stage = 0;
    volatile int hash_ok = 0, format_ok = 0;
    MDB_stat rst;
    GUARD(sig2)
    stage = 1;
    rc = mdb_dbi_open(txn, "records", 0, &s->records_dbi);
    if (!rc) stage = 2, rc = mdb_dbi_open(txn, "ids", 0, &s->ids_dbi);
    if (!rc) stage = 3, rc = mdb_dbi_open(txn, "meta", 0, &s->meta_dbi);
    if (!rc) stage = 4, rc = mdb_stat(txn, s->records_dbi, &rst);
    if (!rc && c->cfg.format_version >= 2) {
        MDB_stat lst;
        stage = 5, rc = mdb_dbi_open(txn, "lengths", 0, &s->lengths_dbi);
        if (!rc) rc = mdb_stat(txn, s->lengths_dbi, &lst);
        if (!rc) s->lengths_entries = lst.ms_entries;
    }
    if (!rc) { /* optional: caches built before the quality metrics or content keys have none */
        int qrc = optional_dbi(txn, XTTS_CACHE_DB_QUALITY, &s->quality_dbi, &s->has_quality);
        int krc = qrc ? 0 : optional_dbi(txn, XTTS_CACHE_DB_KEYS, &s->keys_dbi, &s->has_keys);
        if (qrc || krc) stage = qrc ? 7 : 8, rc = qrc ? qrc : krc;
    }
    if (!rc) {
        stage = 6;
        hash_ok = meta_equals(txn, s->meta_dbi, "config_hash", c->hash, s);
        format_ok = meta_equals(txn, s->meta_dbi, "format", xtts_cache_format_name(c->cfg.format_version), s);
    }
    GUARD_END(sig2)
    if (sig2) {
        mdb_txn_abort(txn);
        say(detail, sizeof detail, "%s while reading its databases", xtts_guard_signame(sig2));
        shard_fail(s, XTTS_ECORRUPT, "%s: damaged (%s)", detail);
        return;
    }
    if (rc) {
        mdb_txn_abort(txn);
        static const char *what[] = {"",       "records", "ids", "meta", "records", "lengths", "meta", XTTS_CACHE_DB_QUALITY,
                                     XTTS_CACHE_DB_KEYS};
        say(detail, sizeof detail, "database \"%s\": %s", what[stage], mdb_strerror(rc));
        shard_fail(s, XTTS_ECORRUPT, "%s: %s", detail);
        return;
    }
    s->entries = s->dir_entries = rst.ms_entries;
    rc = mdb_txn_commit(txn); /* keeps the database handles for later transactions */
    if (rc) {
        shard_fail(s, XTTS_EIO, "%s: %s", mdb_strerror(rc));
        return;
    }
    if (hash_ok != 1) {
        say(detail, sizeof detail, "%s",
                 hash_ok == -1 ? "has no config_hash" : "config_hash differs from the manifest's");
        shard_fail(s, XTTS_EMISMATCH, "%s: shard %s (built with another configuration)", detail);
        return;
    }
    if (format_ok != 1) {
        say(detail, sizeof detail, "%s, expected \"%s\"", format_ok == -1 ? "missing" : "another format",
            xtts_cache_format_name(c->cfg.format_version));
        shard_fail(s, XTTS_EMISMATCH, "%s: meta \"format\" is %s", detail);
        return;
    }
    if (c->cfg.format_version >= 2 && s->lengths_entries != s->entries) {
        say(detail, sizeof detail, "\"lengths\" holds %llu entries for %llu records",
            (unsigned long long)s->lengths_entries, (unsigned long long)s->entries);
        shard_fail(s, XTTS_ECORRUPT, "%s: %s", detail);
        return;
    }
    if (s->ranged && s->entries >= s->local_first && s->entries - s->local_first >= s->records) {
        s->entries = s->records; /* the entry's view: its range, as a dense shard of its own */
        return;
    }
    if (s->ranged) {
        say(detail, sizeof detail, "holds %llu records, the manifest's range ends at key %llu",
            (unsigned long long)s->entries, (unsigned long long)(s->local_first + s->records));
        shard_fail(s, XTTS_ECORRUPT, "%s: %s", detail);
        return;
    }
    if (s->entries != s->records) {
        say(detail, sizeof detail, "holds %llu records, the manifest says %llu",
                 (unsigned long long)s->entries, (unsigned long long)s->records);
        shard_fail(s, XTTS_ECORRUPT, "%s: %s", detail);
        return;
    }
}

/* ---- the pool of open environments ---------------------------------------------------- */

/* How many environments may stay open at once: half the descriptors RLIMIT_NOFILE leaves
 * free when the cache is opened (the other half stays the program's), 1 to 512. */
static size_t pool_capacity(void) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= 4096) return 512;
    size_t limit = (size_t)rl.rlim_cur, used = 0;
    for (size_t fd = 0; fd < limit; fd++) used += fcntl((int)fd, F_GETFD) != -1;
    size_t cap = used < limit ? (limit - used) / 2 : 0;
    return cap < 1 ? 1 : cap > 512 ? 512 : cap;
}

static void shard_close_env(xtts_cache *c, shard_t *s) {
    if (!s->env) return;
    mdb_env_close(s->env);
    s->env = NULL;
    s->map = NULL;
    c->pool_open--;
}

/* Close the least recently used environment no reader holds; 0 when every open one is
 * held. pool_mu held (or the cache not yet shared). */
static int pool_evict(xtts_cache *c) {
    shard_t *lru = NULL;
    for (size_t i = 0; i < c->n_shards; i++) {
        shard_t *s = &c->shards[i];
        if (s->env && s->pins == 0 && (!lru || s->used < lru->used)) lru = s;
    }
    if (!lru) return 0;
    shard_close_env(c, lru);
    return 1;
}

/* Open and check shard s's environment, making room in the pool first; a descriptor or
 * memory limit met on the way closes another idle environment and tries again. On failure
 * nothing of the shard stays open and s->status says why (s->sys_errno when it is the
 * system's). pool_mu held (or the cache not yet shared). */
/* 1 when c's directory is no longer the one opened (an update's exchange, a rebuild). */
static int dir_replaced(const xtts_cache *c) {
    struct stat sb;
    return c->dir_known && stat(c->dir, &sb) == 0 && (sb.st_dev != c->dir_dev || sb.st_ino != c->dir_ino);
}

static void shard_open(xtts_cache *c, shard_t *s) {
    if (dir_replaced(c)) { /* refused, not kept as the shard's fault: the cache is not damaged */
        s->status = XTTS_EBUSY;
        s->sys_errno = ESTALE;
        snprintf(s->error, sizeof s->error, "%s: the cache was replaced while it was read (an update or a rebuild "
                 "exchanged the directory); open it again to read the new one", c->dir);
        return;
    }
    while (c->pool_open >= c->pool_cap && pool_evict(c)) {
    }
    for (;;) {
        s->status = XTTS_OK;
        s->sys_errno = 0;
        if (!shard_open_files(s) && !shard_open_env(s)) shard_open_databases(c, s);
        if (s->env) c->pool_open++;
        if (!s->status) {
            s->used = ++c->pool_clock;
            return;
        }
        shard_close_env(c, s);
        if (!s->sys_errno || !pool_may_relieve(s->sys_errno) || !pool_evict(c)) return;
    }
}

/* An entry listing a directory an earlier entry opened (its home): the home's state, and
 * its own range against the directory's records. */
static void entry_check(xtts_cache *c, shard_t *s) {
    const shard_t *h = &c->shards[s->home];
    s->status = h->status;
    s->sys_errno = h->sys_errno;
    s->has_quality = h->has_quality;
    s->has_keys = h->has_keys;
    snprintf(s->error, sizeof s->error, "%s", h->error);
    if (s->status) return;
    if (h->dir_entries < s->local_first || h->dir_entries - s->local_first < s->records) {
        char detail[300];
        say(detail, sizeof detail, "holds %llu records, the manifest's range ends at key %llu",
            (unsigned long long)h->dir_entries, (unsigned long long)(s->local_first + s->records));
        shard_fail(s, XTTS_ECORRUPT, "%s: %s", detail);
        return;
    }
    s->entries = s->records;
}

xtts_status xtts_shard_pin(xtts_cache *c, size_t si, xtts_error *err) {
    shard_t *s = &c->shards[si];
    xtts_status st = XTTS_OK;
    pthread_mutex_lock(&c->pool_mu);
    if (!s->status && !s->env) {
        shard_open(c, s);
        if (s->status && s->sys_errno) {
            st = xtts_error_set(err, s->status, "%s", s->error);
            s->status = XTTS_OK;
            s->sys_errno = 0;
        }
    }
    if (!st && s->status) st = xtts_error_set(err, s->status, "%s", s->error);
    if (!st) {
        s->pins++;
        s->used = ++c->pool_clock;
    }
    pthread_mutex_unlock(&c->pool_mu);
    return st;
}

void xtts_shard_unpin(xtts_cache *c, size_t si) {
    pthread_mutex_lock(&c->pool_mu);
    c->shards[si].pins--;
    pthread_mutex_unlock(&c->pool_mu);
}

xtts_status xtts_cache_open_ex(const char *dir, unsigned flags, xtts_cache **out, xtts_error *err) {
    *out = NULL;
    xtts_cache *c = calloc(1, sizeof *c);
    if (!c || !(c->dir = dup_str(dir))) {
        free(c);
        return xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", dir);
    }
    pthread_mutex_init(&c->pool_mu, NULL);
    struct stat dsb;
    if (stat(dir, &dsb) == 0) {
        c->dir_dev = dsb.st_dev;
        c->dir_ino = dsb.st_ino;
        c->dir_known = 1;
    }
    char path[4200], why[600];
    xtts_status st;
    if (xtts_cache_build_running(dir, why, sizeof why)) { /* its shards may be changing under us */
        st = xtts_error_set(err, XTTS_EBUSY, "%s", why);
        goto fail;
    }
    xtts_path_join(path, sizeof path, dir, "manifest.json");
    /* every key and its type is checked here, once (formats/manifest.c) */
    st = xtts_manifest_info_init(&c->manifest, path, err);
    if (st == XTTS_ENOTFOUND) {
        int unfinished = xtts_cache_unfinished(dir, why, sizeof why);
        if (unfinished) st = xtts_error_set(err, unfinished == 2 ? XTTS_EBUSY : XTTS_ENOTFOUND, "%s", why);
    }
    if (st) goto fail;
    c->cfg = c->manifest.config;
    memcpy(c->hash, c->manifest.config_hash, 65);
    if (c->cfg.mel.n_mels <= 0 || c->cfg.mel.n_mels > XTTS_RECORD_MAX_MELS || c->cfg.max_tokens <= 0 ||
        c->cfg.max_tokens > XTTS_RECORD_MAX_TOKENS || c->cfg.max_frames <= 0 ||
        c->cfg.max_frames > XTTS_RECORD_MAX_FRAMES) {
        st = xtts_error_set(err, XTTS_EINPUT, "%s: config shape (n_mels, max_tokens, max_frames) out of limits", path);
        goto fail;
    }
    c->max_frames = (size_t)xtts_cache_config_max_padded_frames(&c->cfg);
    c->pool_cap = pool_capacity();

    uint64_t total = c->manifest.records;
    c->n_shards = c->manifest.n_shards;
    c->shards = calloc(c->n_shards ? c->n_shards : 1, sizeof *c->shards);
    if (!c->shards) {
        st = xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", path);
        goto fail;
    }
    uint64_t first = 0;
    for (size_t i = 0; i < c->n_shards; i++) {
        shard_t *s = &c->shards[i];
        const xtts_manifest_shard *ms = &c->manifest.shards[i];
        s->records = ms->records;
        s->bytes = ms->bytes;
        s->manifest_first = ms->first_index;
        s->local_first = ms->local_first;
        s->ranged = c->manifest.format_version >= XTTS_MANIFEST_VERSION_SHARED;
        s->name = dup_str(ms->name);
        s->path = malloc(strlen(dir) + strlen(ms->name) + 2);
        if (!s->name || !s->path) {
            st = xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", path);
            goto fail;
        }
        xtts_path_join(s->path, strlen(dir) + strlen(ms->name) + 2, dir, s->name);
        s->first = first;
        if (s->records > UINT64_MAX - first) {
            st = xtts_error_set(err, XTTS_EINPUT, "%s: shard record counts overflow", path);
            goto fail;
        }
        first += s->records;
        for (s->home = 0; strcmp(c->shards[s->home].name, s->name); s->home++) {
        }
        if (s->home == i) shard_open(c, s);
        else entry_check(c, s);
        if (s->status == XTTS_OK && s->manifest_first != s->first) {
            s->status = XTTS_ECORRUPT;
            say(s->error, sizeof s->error, "%s: manifest first_index %llu, the shards before it hold %llu records",
                     s->name, (unsigned long long)s->manifest_first, (unsigned long long)s->first);
        }
        /* a resource limit is the system's, not a fault of the shard: it stops every open */
        if (s->status && (s->sys_errno || !(flags & XTTS_CACHE_OPEN_TOLERANT))) {
            st = xtts_error_set(err, s->status, "%s: %s", dir, s->error);
            goto fail;
        }
    }
    if (first != total && !(flags & XTTS_CACHE_OPEN_TOLERANT)) {
        st = xtts_error_set(err, XTTS_ECORRUPT, "%s: \"records\" is %llu but the shards hold %llu", path,
                            (unsigned long long)total, (unsigned long long)first);
        goto fail;
    }
    c->count = first;
    *out = c;
    return XTTS_OK;
fail:
    xtts_cache_close(c);
    return st;
}

xtts_status xtts_cache_open(const char *dir, xtts_cache **out, xtts_error *err) {
    return xtts_cache_open_ex(dir, 0, out, err);
}

void xtts_cache_close(xtts_cache *c) {
    if (!c) return;
    for (size_t i = 0; i < c->n_shards; i++) {
        shard_close_env(c, &c->shards[i]);
        free(c->shards[i].name);
        free(c->shards[i].path);
    }
    pthread_mutex_destroy(&c->pool_mu);
    free(c->shards);
    xtts_manifest_info_free(&c->manifest);
    free(c->dir);
    free(c);
}

uint64_t xtts_cache_count(const xtts_cache *c) { return c->count; }
const xtts_cache_config *xtts_cache_get_config(const xtts_cache *c) { return &c->cfg; }
const char *xtts_cache_config_hash_hex(const xtts_cache *c) { return c->hash; }
const xtts_manifest_info *xtts_cache_manifest(const xtts_cache *c) { return &c->manifest; }
const char *xtts_cache_dir(const xtts_cache *c) { return c->dir; }
size_t xtts_cache_max_frames(const xtts_cache *c) { return c->max_frames; }
size_t xtts_cache_n_shards(const xtts_cache *c) { return c->n_shards; }

size_t xtts_cache_shard_index_of(const xtts_cache *c, uint64_t index) {
    if (index >= c->count) return (size_t)-1;
    size_t lo = 0, hi = c->n_shards; /* last shard with first <= index and records > 0 */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->shards[mid].first <= index) lo = mid;
        else hi = mid;
    }
    while (lo < c->n_shards && index >= c->shards[lo].first + c->shards[lo].records) lo++;
    return lo < c->n_shards ? lo : (size_t)-1;
}

const char *xtts_cache_shard_of(const xtts_cache *c, uint64_t index) {
    size_t i = xtts_cache_shard_index_of(c, index);
    return i == (size_t)-1 ? NULL : c->shards[i].name;
}

void xtts_cache_shard_get(const xtts_cache *c, size_t i, xtts_cache_shard *o) {
    const shard_t *s = &c->shards[i];
    o->name = s->name;
    o->path = s->path;
    o->first_index = s->first;
    o->manifest_first = s->manifest_first;
    o->records = s->records;
    o->bytes = s->bytes;
    o->entries = s->entries;
    o->local_first = s->local_first;
    o->ranged = s->ranged;
    o->status = s->status;
    o->error = s->status ? s->error : "";
}

xtts_status xtts_cache_record_error(const char *shard, uint64_t index, const char *id, const xtts_error *inner,
                                    xtts_error *err) {
    return xtts_error_set(err, inner->code, "%s: index %llu, id '%s': %s", shard, (unsigned long long)index, id,
                          inner->msg);
}

xtts_status xtts_cache_check_table_ids(const xtts_cache *c, const xtts_record_header *h, xtts_error *e) {
    const xtts_manifest_info *m = &c->manifest;
    size_t n_langs = m->has_languages ? m->n_languages : XTTS_N_LANGS;
    if (m->has_speakers && h->speaker_id >= m->n_speakers)
        return xtts_error_set(e, XTTS_ECORRUPT, "speaker id %u outside the manifest's %zu speakers", h->speaker_id,
                              m->n_speakers);
    if (h->lang_id >= n_langs)
        return xtts_error_set(e, XTTS_ECORRUPT, "language id %u outside the manifest's %zu languages", h->lang_id,
                              n_langs);
    return XTTS_OK;
}
