/* reader.c — read a cache directory (formats/cache.md): the manifest, one read-only LMDB
 * environment per shard, records by global index or id, fixed-shape batches.
 *
 * Shards are opened MDB_RDONLY | MDB_NOLOCK | MDB_NORDAHEAD | MDB_NOTLS: no lock file is
 * written (a cache on a read-only filesystem reads fine), readers take no slot in a lock
 * table (any number of threads and processes), and a read transaction is not tied to the
 * thread that began it. The writer must not run on the same directory meanwhile.
 *
 * Damaged files. LMDB trusts its pages: a flipped bit in a branch page or a truncated
 * data.mdb can make it read outside the file, which is SIGSEGV or SIGBUS, not an error
 * code. So: at open every shard's last page must lie inside data.mdb, every value LMDB
 * returns must lie inside the file, and every call into LMDB and every read of mapped
 * bytes runs under a per-thread fault guard that turns a fault into XTTS_ECORRUPT naming
 * the shard. Outside a guarded region the previous signal disposition applies.
 */
#include "cache/store/read/reader.h"
#include "cache/store/read/guard.h"
#include "cache/store/read/lmdb_file.h"

#include <errno.h>
#include <lmdb.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

/* formats/record.c: write decoded mels with non-temporal stores (for a batch, read later
 * and larger than the cache); belongs in formats/record.h. */

/* snprintf that truncates quietly: messages are one bounded line. */
__attribute__((format(printf, 3, 4))) static void say(char *buf, size_t cap, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, cap, fmt, ap);
    va_end(ap);
}

/* ---- fault guard ---------------------------------------------------------------------- */

__thread sigjmp_buf *xtts_guard_jb;
static struct sigaction old_segv, old_bus;
static pthread_once_t guard_once = PTHREAD_ONCE_INIT;

static void guard_handler(int sig, siginfo_t *si, void *uc) {
    sigjmp_buf *jb = xtts_guard_jb;
    if (jb) {
        xtts_guard_jb = NULL;
        siglongjmp(*jb, sig);
    }
    /* Not a fault of a guarded read: give the signal back to whoever had it. */
    struct sigaction *old = sig == SIGBUS ? &old_bus : &old_segv;
    if ((old->sa_flags & SA_SIGINFO) && old->sa_sigaction) {
        old->sa_sigaction(sig, si, uc);
        return;
    }
    if (old->sa_handler != SIG_DFL && old->sa_handler != SIG_IGN) {
        old->sa_handler(sig);
        return;
    }
    signal(sig, SIG_DFL); /* returning re-executes the faulting access, now fatal */
}

static void guard_install(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = guard_handler;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &old_segv);
    sigaction(SIGBUS, &sa, &old_bus);
}

/* LMDB's internal consistency checks call this before abort(); inside a guard, leave. */
void xtts_guard_lmdb_assert(MDB_env *env, const char *msg) {
    (void)env;
    (void)msg;
    sigjmp_buf *jb = xtts_guard_jb;
    if (jb) {
        xtts_guard_jb = NULL;
        siglongjmp(*jb, SIGABRT);
    }
}

const char *xtts_guard_signame(int sig) {
    return sig == SIGBUS ? "SIGBUS" : sig == SIGSEGV ? "SIGSEGV" : "LMDB assertion";
}

/* ---- cache ------------------------------------------------------------------------------ */

typedef struct {
    char *name, *path;
    uint64_t first, manifest_first, records, bytes, entries;
    uint64_t local_first; /* the directory's local key of the entry's first record */
    int ranged;           /* a range of a shared directory (manifest format_version 3): the
                             directory may hold keys outside it, which are not the entry's */
    size_t home;          /* the first entry of the same directory: it alone holds the
                             environment (one per directory), its databases and its map */
    uint64_t dir_entries; /* home: the directory's "records" entries */
    MDB_env *env;
    MDB_dbi records_dbi, ids_dbi, meta_dbi;
    MDB_dbi lengths_dbi; /* format 2: the "lengths" database */
    uint64_t lengths_entries;
    MDB_dbi quality_dbi; /* the "quality" database, when has_quality */
    int has_quality;
    MDB_dbi keys_dbi; /* the "keys" database (content keys), when has_keys */
    int has_keys;
    const char *map;     /* start of the memory map */
    uint64_t file_bytes; /* size of data.mdb at open */
    xtts_status status;
    char error[XTTS_ERRMSG_MAX];
    int sys_errno; /* the errno of a failed open of the files (a resource limit, not damage) */
    int pins;      /* readers holding a read transaction on env (the pool closes only idle ones) */
    uint64_t used; /* pool clock at the last pin */
} shard_t;

struct xtts_cache {
    char *dir;
    xtts_manifest_info manifest;
    xtts_cache_config cfg;
    char hash[65];
    size_t n_shards;
    shard_t *shards;
    uint64_t count;
    size_t max_frames;
    /* The pool of open environments: an environment holds a descriptor (data.mdb) and a
     * map, so at most pool_cap stay open; the least recently used idle one is closed to
     * open another, and reopened when read again. */
    pthread_mutex_t pool_mu;
    size_t pool_cap, pool_open;
    uint64_t pool_clock;
    /* the directory as opened: a shard (re)opened after an update or a rebuild exchanged it
     * would be the new cache's under the old manifest, so each opening checks it first */
    dev_t dir_dev;
    ino_t dir_ino;
    int dir_known;
};

struct xtts_cache_reader {
    xtts_cache *c;
    MDB_txn **txn; /* per shard, begun on first use; each pins its shard's environment */
    size_t *held;  /* the shards with a transaction, least recently used first */
    size_t n_held, hold_max;
    size_t busy;   /* the shard a foreach walks (never released meanwhile), or (size_t)-1 */
    xtts_record_decoder *dec;
    float *seg_mel; /* xtts_cache_reader_segment's scratch */
    size_t seg_mel_cap;
    int16_t *seg_wave;
    size_t seg_wave_cap;
    int batch_streaming; /* xtts_cache_reader_set_batch_streaming: -1 auto, 0 off, 1 on */
};

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

/* Failures of the system rather than of the files: a descriptor or memory limit, a
 * permission. They stop a read with the errno's words and never call a shard damaged. */
static xtts_status resource_status(int e) { return e == ENOMEM ? XTTS_ENOMEM : XTTS_EIO; }

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
        shard_fail(s, resource_status(s->sys_errno), "%s: cannot open %s", detail);
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
        shard_fail(s, resource_status(e), "%s: cannot open %s", detail);
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
    int rc = mdb_env_create(&s->env);
    if (rc) {
        s->env = NULL;
        s->sys_errno = rc > 0 ? rc : ENOMEM;
        shard_fail(s, XTTS_ENOMEM, "%s: cannot make an LMDB environment: %s", mdb_strerror(rc));
        return -1;
    }
    mdb_env_set_maxdbs(s->env, 8);
    mdb_env_set_assert(s->env, xtts_guard_lmdb_assert);
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    uint64_t map_bytes = (s->file_bytes + page - 1) / page * page;
    if (map_bytes < page) map_bytes = page;
    mdb_env_set_mapsize(s->env, (size_t)map_bytes);
    volatile int fault_stage = 0;
    GUARD(sig)
    rc = mdb_env_open(s->env, s->path, MDB_RDONLY | MDB_NOLOCK | MDB_NORDAHEAD | MDB_NOTLS, 0444);
    GUARD_END(sig)
    if (sig) rc = MDB_CORRUPTED, fault_stage = 1;
    if (rc > 0 && rc != ENOENT) { /* liblmdb's own codes are negative: this is errno */
        s->sys_errno = rc;
        say(detail, sizeof detail, "%s/data.mdb: %s", s->path, strerror(rc));
        shard_fail(s, resource_status(rc), "%s: cannot open %s", detail);
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

/* Hold shard si's environment open for a read transaction, reopening it when the pool
 * closed it. A resource limit met while reopening is returned and not kept as the shard's
 * fault (a later read tries again). */
static xtts_status shard_pin(xtts_cache *c, size_t si, xtts_error *err) {
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

static void shard_unpin(xtts_cache *c, size_t si) {
    pthread_mutex_lock(&c->pool_mu);
    c->shards[si].pins--;
    pthread_mutex_unlock(&c->pool_mu);
}

void xtts_cache_guard_faults(void) { pthread_once(&guard_once, guard_install); }

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

/* ---- reader ----------------------------------------------------------------------------- */

xtts_status xtts_cache_reader_new(xtts_cache *c, xtts_cache_reader **out, xtts_error *err) {
    *out = NULL;
    xtts_cache_reader *r = calloc(1, sizeof *r);
    if (r) r->txn = calloc(c->n_shards ? c->n_shards : 1, sizeof *r->txn);
    if (r) r->held = calloc(c->n_shards ? c->n_shards : 1, sizeof *r->held);
    if (r) xtts_record_decoder_new(&r->dec);
    if (!r || !r->txn || !r->held || !r->dec) {
        xtts_cache_reader_delete(r);
        return xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory for a reader", c->dir);
    }
    r->c = c;
    r->batch_streaming = -1;
    r->busy = (size_t)-1;
    /* When the pool cannot hold every shard, a reader keeps transactions on two at most,
     * so that the others' environments can be closed. */
    r->hold_max = c->pool_cap >= c->n_shards ? c->n_shards : c->pool_cap < 2 ? 1 : 2;
    *out = r;
    return XTTS_OK;
}

void xtts_cache_reader_set_batch_streaming(xtts_cache_reader *r, int mode) {
    r->batch_streaming = mode < 0 ? -1 : mode != 0;
}

void xtts_cache_reader_delete(xtts_cache_reader *r) {
    if (!r) return;
    if (r->txn && r->c)
        for (size_t i = 0; i < r->c->n_shards; i++)
            if (r->txn[i]) {
                mdb_txn_abort(r->txn[i]);
                shard_unpin(r->c, i);
            }
    free(r->txn);
    free(r->held);
    xtts_record_decoder_delete(r->dec);
    free(r->seg_mel);
    free(r->seg_wave);
    free(r);
}

/* End the reader's transaction on shard si, if any, and let the pool close its
 * environment. */
static void reader_drop_txn(xtts_cache_reader *r, size_t si) {
    si = r->c->shards[si].home;
    if (!r->txn[si]) return;
    mdb_txn_abort(r->txn[si]);
    r->txn[si] = NULL;
    shard_unpin(r->c, si);
    for (size_t i = 0; i < r->n_held; i++)
        if (r->held[i] == si) {
            memmove(r->held + i, r->held + i + 1, (r->n_held - i - 1) * sizeof *r->held);
            r->n_held--;
            break;
        }
}

/* Make room for one more transaction: drop the least recently used one that no foreach
 * is walking; 0 when there is none to drop. */
static int reader_release_oldest(xtts_cache_reader *r) {
    for (size_t i = 0; i < r->n_held; i++)
        if (r->held[i] != r->busy) {
            reader_drop_txn(r, r->held[i]);
            return 1;
        }
    return 0;
}

static xtts_status reader_txn(xtts_cache_reader *r, size_t si, MDB_txn **txn, xtts_error *err) {
    si = r->c->shards[si].home; /* one environment and transaction per directory */
    shard_t *s = &r->c->shards[si];
    if (r->txn[si]) {
        if (r->hold_max < r->c->n_shards) /* keep the order of use for reader_release_oldest */
            for (size_t i = 0; i + 1 < r->n_held; i++)
                if (r->held[i] == si) {
                    memmove(r->held + i, r->held + i + 1, (r->n_held - i - 1) * sizeof *r->held);
                    r->held[r->n_held - 1] = si;
                    break;
                }
        *txn = r->txn[si];
        return XTTS_OK;
    }
    while (r->n_held >= r->hold_max && reader_release_oldest(r)) {
    }
    xtts_status st = shard_pin(r->c, si, err);
    if (st) return st;
    MDB_txn *volatile t = NULL;
    int rc;
    GUARD(sig)
    rc = mdb_txn_begin(s->env, NULL, MDB_RDONLY, (MDB_txn **)&t);
    GUARD_END(sig)
    if (sig || rc) {
        shard_unpin(r->c, si);
        if (sig) return xtts_error_set(err, XTTS_ECORRUPT, "%s: damaged meta pages (%s)", s->name, xtts_guard_signame(sig));
        return xtts_error_set(err, rc > 0 ? resource_status(rc) : XTTS_EIO, "%s: cannot begin a read transaction (%s)",
                              s->name, mdb_strerror(rc));
    }
    r->txn[si] = t;
    r->held[r->n_held++] = si;
    *txn = t;
    return XTTS_OK;
}

static int in_map(const shard_t *s, const void *p, size_t len) {
    const char *q = p;
    if (!s->map) return 1;
    return q >= s->map && (uint64_t)(q - s->map) <= s->file_bytes && len <= s->file_bytes - (uint64_t)(q - s->map);
}

/* Raw value of (shard si, local index). Guarded. */
/* The directory's local key of global index in shard entry s. */
static uint64_t local_key(const shard_t *s, uint64_t index) { return index - s->first + s->local_first; }

static xtts_status shard_get(xtts_cache_reader *r, size_t si, uint64_t local, uint64_t index, MDB_val *val,
                             xtts_error *err) {
    shard_t *s = &r->c->shards[r->c->shards[si].home];
    MDB_txn *txn;
    xtts_status st = reader_txn(r, si, &txn, err);
    if (st) return st;
    uint8_t kb[8];
    xtts_put_be64(kb, local);
    MDB_val k = {8, kb};
    int rc;
    GUARD(sig)
    rc = mdb_get(txn, s->records_dbi, &k, val);
    GUARD_END(sig)
    if (sig) {
        reader_drop_txn(r, si);
        return xtts_error_set(err, XTTS_ECORRUPT, "%s: index %llu (local %llu): damaged LMDB pages (%s)", s->name,
                              (unsigned long long)index, (unsigned long long)local, xtts_guard_signame(sig));
    }
    if (rc == MDB_NOTFOUND)
        return xtts_error_set(err, XTTS_ECORRUPT, "%s: index %llu (local %llu): record missing from \"records\"",
                              s->name, (unsigned long long)index, (unsigned long long)local);
    if (rc)
        return xtts_error_set(err, XTTS_ECORRUPT, "%s: index %llu (local %llu): %s", s->name,
                              (unsigned long long)index, (unsigned long long)local, mdb_strerror(rc));
    if (!in_map(s, val->mv_data, val->mv_size))
        return xtts_error_set(err, XTTS_ECORRUPT, "%s: index %llu (local %llu): value points outside data.mdb",
                              s->name, (unsigned long long)index, (unsigned long long)local);
    return XTTS_OK;
}

static xtts_status locate(xtts_cache_reader *r, uint64_t index, size_t *si, xtts_error *err) {
    *si = xtts_cache_shard_index_of(r->c, index);
    if (*si == (size_t)-1)
        return xtts_error_set(err, XTTS_ERANGE, "%s: index %llu out of range (%llu records)", r->c->dir,
                              (unsigned long long)index, (unsigned long long)r->c->count);
    return XTTS_OK;
}

xtts_status xtts_cache_reader_raw(xtts_cache_reader *r, uint64_t index, const void **buf, size_t *len,
                                  xtts_error *err) {
    size_t si;
    xtts_status st = locate(r, index, &si, err);
    if (st) return st;
    MDB_val v;
    st = shard_get(r, si, local_key(&r->c->shards[si], index), index, &v, err);
    if (st) return st;
    *buf = v.mv_data;
    *len = v.mv_size;
    return XTTS_OK;
}

/* Prefix a record codec error with shard, index and id. */
static xtts_status record_error(xtts_cache_reader *r, size_t si, uint64_t index, const void *buf, size_t len,
                                const xtts_error *inner, xtts_error *err) {
    char id[80];
    GUARD(sig)
    xtts_record_claimed_id(buf, len, id, sizeof id);
    GUARD_END(sig)
    if (sig) strcpy(id, "?");
    return xtts_error_set(err, inner->code, "%s: index %llu, id '%s': %s", r->c->shards[si].name,
                          (unsigned long long)index, id, inner->msg);
}

/* The ids a record carries index the manifest's tables: each must lie inside its table when
 * the manifest has one (an empty table holds none; without "languages", the built-in 17). */
static xtts_status check_table_ids(xtts_cache_reader *r, size_t si, uint64_t index, const xtts_record_header *h,
                                   xtts_error *err) {
    const xtts_manifest_info *m = &r->c->manifest;
    size_t n_langs = m->has_languages ? m->n_languages : XTTS_N_LANGS;
    const char *what = NULL;
    uint32_t id = 0;
    size_t n = 0;
    if (m->has_speakers && h->speaker_id >= m->n_speakers) what = "speaker", id = h->speaker_id, n = m->n_speakers;
    else if (h->lang_id >= n_langs) what = "language", id = h->lang_id, n = n_langs;
    if (!what) return XTTS_OK;
    return xtts_error_set(err, XTTS_ECORRUPT, "%s: index %llu, id '%s': %s id %u outside the manifest's %zu %ss",
                          r->c->shards[si].name, (unsigned long long)index, h->id, what, id, n, what);
}

xtts_status xtts_cache_reader_header(xtts_cache_reader *r, uint64_t index, xtts_record_header *hdr,
                                     xtts_error *err) {
    size_t si;
    xtts_status st = locate(r, index, &si, err);
    if (st) return st;
    MDB_val v;
    st = shard_get(r, si, local_key(&r->c->shards[si], index), index, &v, err);
    if (st) return st;
    xtts_error e;
    xtts_error_clear(&e);
    GUARD(sig)
    st = xtts_record_parse_header(v.mv_data, v.mv_size, hdr, &e);
    GUARD_END(sig)
    if (sig)
        return xtts_error_set(err, XTTS_ECORRUPT, "%s: index %llu: fault reading the record (%s)",
                              r->c->shards[si].name, (unsigned long long)index, xtts_guard_signame(sig));
    if (st) return record_error(r, si, index, v.mv_data, v.mv_size, &e, err);
    return check_table_ids(r, si, index, hdr, err);
}

static xtts_status reader_get(xtts_cache_reader *r, uint64_t index, xtts_record_header *h, int32_t *tokens,
                              size_t tokens_cap, void *mel, xtts_dtype out_dtype, size_t n_mels_cap, size_t frames_cap,
                              xtts_error *err) {
    size_t si;
    xtts_status st = locate(r, index, &si, err);
    if (st) return st;
    MDB_val v;
    st = shard_get(r, si, local_key(&r->c->shards[si], index), index, &v, err);
    if (st) return st;
    xtts_error e;
    xtts_error_clear(&e);
    GUARD(sig)
    st = xtts_record_decode(r->dec, v.mv_data, v.mv_size, h, tokens, tokens_cap, mel, out_dtype, n_mels_cap,
                            frames_cap, &e);
    GUARD_END(sig)
    if (sig)
        return xtts_error_set(err, XTTS_ECORRUPT, "%s: index %llu: fault reading the record (%s)",
                              r->c->shards[si].name, (unsigned long long)index, xtts_guard_signame(sig));
    if (st) return record_error(r, si, index, v.mv_data, v.mv_size, &e, err);
    return check_table_ids(r, si, index, h, err);
}

xtts_status xtts_cache_reader_get(xtts_cache_reader *r, uint64_t index, xtts_record_header *hdr, int32_t *tokens,
                                  size_t tokens_cap, void *mel, xtts_dtype out_dtype, size_t n_mels_cap,
                                  size_t frames_cap, xtts_error *err) {
    xtts_record_header own; /* without hdr the ids are checked against the manifest's tables all the same */
    return reader_get(r, index, hdr ? hdr : &own, tokens, tokens_cap, mel, out_dtype, n_mels_cap, frames_cap, err);
}

xtts_status xtts_cache_reader_find_local(xtts_cache_reader *r, size_t si, const char *id, uint64_t *local,
                                         xtts_error *err) {
    if (si >= r->c->n_shards)
        return xtts_error_set(err, XTTS_ERANGE, "shard %zu of a cache of %zu shards", si, r->c->n_shards);
    shard_t *e = &r->c->shards[si], *s = &r->c->shards[e->home];
    MDB_txn *txn;
    xtts_status st = reader_txn(r, si, &txn, err);
    if (st) return st;
    size_t n = strlen(id);
    if (n == 0 || n > XTTS_RECORD_MAX_ID) return xtts_error_set(err, XTTS_ENOTFOUND, "%s: no id '%.200s'", s->name, id);
    MDB_val k = {n, (void *)id}, v;
    int rc;
    volatile int bad = 0;
    GUARD(sig)
    rc = mdb_get(txn, s->ids_dbi, &k, &v);
    if (!rc) {
        if (v.mv_size != 8 || !in_map(s, v.mv_data, 8)) bad = 1;
        else *local = xtts_get_be64(v.mv_data);
    }
    GUARD_END(sig)
    if (sig) {
        reader_drop_txn(r, si);
        return xtts_error_set(err, XTTS_ECORRUPT, "%s: id '%s': damaged LMDB pages (%s)", s->name, id, xtts_guard_signame(sig));
    }
    if (rc == MDB_NOTFOUND) return xtts_error_set(err, XTTS_ENOTFOUND, "%s: no id '%.200s'", s->name, id);
    if (rc) return xtts_error_set(err, XTTS_ECORRUPT, "%s: id '%s': %s", s->name, id, mdb_strerror(rc));
    if (bad) return xtts_error_set(err, XTTS_ECORRUPT, "%s: id '%s': \"ids\" value is not an 8-byte index", s->name, id);
    if (e->ranged) { /* a key outside the entry's range is another entry's, or no record's */
        if (*local < e->local_first || *local - e->local_first >= e->records)
            return xtts_error_set(err, XTTS_ENOTFOUND, "%s: no id '%.200s'", s->name, id);
        *local -= e->local_first;
        return XTTS_OK;
    }
    if (*local >= s->records)
        return xtts_error_set(err, XTTS_ECORRUPT, "%s: id '%s': \"ids\" points at local index %llu of %llu records",
                              s->name, id, (unsigned long long)*local, (unsigned long long)s->records);
    return XTTS_OK;
}

xtts_status xtts_cache_reader_find(xtts_cache_reader *r, const char *id, uint64_t *index, xtts_error *err) {
    xtts_error first_err;
    xtts_error_clear(&first_err);
    for (size_t si = 0; si < r->c->n_shards; si++) {
        uint64_t local;
        xtts_error e;
        xtts_status st = xtts_cache_reader_find_local(r, si, id, &local, &e);
        if (st == XTTS_OK) {
            *index = r->c->shards[si].first + local;
            return XTTS_OK;
        }
        if (st != XTTS_ENOTFOUND && first_err.code == XTTS_OK) first_err = e;
    }
    /* An unreadable shard may hold the id: report that rather than "absent". */
    if (first_err.code) return xtts_error_set(err, first_err.code, "%s", first_err.msg);
    return xtts_error_set(err, XTTS_ENOTFOUND, "%s: id '%s' not in the cache", r->c->dir, id);
}

/* A ranged entry shows the walk of a database only its own range, with keys (and the
 * "ids" values) made relative to it, so that it reads as a dense shard of its own: 1 pass
 * the entry (k and v may now point at kb and vb), 0 skip it, -1 past the range (stop).
 * keyed: the database is keyed by local index; else "ids" (keyed: 0) or "meta" (-1). */
static int range_view(const shard_t *s, int keyed, MDB_val *k, MDB_val *v, uint8_t kb[8], uint8_t vb[8]) {
    if (!s->ranged || keyed < 0) return 1;
    MDB_val *x = keyed ? k : v;
    uint8_t *b = keyed ? kb : vb;
    if (x->mv_size != 8) return 1; /* not an index: the caller's checks name it */
    uint64_t key = xtts_get_be64(x->mv_data);
    if (key < s->local_first) return 0;
    if (key - s->local_first >= s->records) return keyed ? -1 : 0;
    xtts_put_be64(b, key - s->local_first);
    x->mv_data = b;
    return 1;
}

xtts_status xtts_cache_reader_foreach(xtts_cache_reader *r, size_t si, const char *db, xtts_cache_foreach_fn cb,
                                      void *ctx, xtts_error *err) {
    if (si >= r->c->n_shards) return xtts_error_set(err, XTTS_ERANGE, "%s: no shard %zu", r->c->dir, si);
    shard_t *e = &r->c->shards[si]; /* the entry: its range */
    MDB_dbi dbi;
    if (!strcmp(db, "records") || !strcmp(db, "ids") || !strcmp(db, "meta")) {
    } else if (!strcmp(db, "lengths") && r->c->cfg.format_version >= 2) {
    } else if (!strcmp(db, XTTS_CACHE_DB_QUALITY) && e->status == XTTS_OK && e->has_quality) {
    } else if (!strcmp(db, XTTS_CACHE_DB_QUALITY) && e->status == XTTS_OK) {
        return xtts_error_set(err, XTTS_ENOTFOUND, "%s: no database \"%s\"", e->name, db);
    } else {
        return xtts_error_set(err, XTTS_EUSAGE, "%s: no database \"%s\"", e->name, db);
    }
    MDB_txn *txn;
    xtts_status st = reader_txn(r, si, &txn, err);
    if (st) return st;
    shard_t *s = &r->c->shards[e->home]; /* the directory: its environment, databases and map */
    if (!strcmp(db, "records")) dbi = s->records_dbi;
    else if (!strcmp(db, "ids")) dbi = s->ids_dbi;
    else if (!strcmp(db, "meta")) dbi = s->meta_dbi;
    else if (!strcmp(db, "lengths")) dbi = s->lengths_dbi;
    else dbi = s->quality_dbi;
    MDB_cursor *volatile cur = NULL;
    volatile int rc = mdb_cursor_open(txn, dbi, (MDB_cursor **)&cur);
    if (rc) return xtts_error_set(err, XTTS_EIO, "%s: \"%s\": %s", s->name, db, mdb_strerror(rc));
    /* The shards are opened for random reads (no read-ahead: training reads records in
     * shuffled order). A walk over every record reads the file nearly in order: let the
     * kernel read ahead for it, then go back to random. Without this a verify of a cache
     * larger than the page cache faults in one 4 KiB page at a time. */
    int scan = s->map && !strcmp(db, "records");
    if (scan) (void)madvise((void *)s->map, s->file_bytes, MADV_SEQUENTIAL);
    volatile int outside = 0;
    volatile uint64_t n = 0;
    size_t busy_before = r->busy;
    r->busy = e->home; /* the callback may read other shards with this reader: keep this one */
    int keyed = !strcmp(db, "meta") ? -1 : strcmp(db, "ids") != 0;
    uint8_t start[8], kb[8], vb[8];
    xtts_put_be64(start, e->local_first);
    GUARD(sig)
    MDB_val k = {8, start}, v;
    MDB_cursor_op op = e->ranged && keyed == 1 ? MDB_SET_RANGE : MDB_FIRST;
    for (rc = mdb_cursor_get(cur, &k, &v, op); rc == MDB_SUCCESS; rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
        if (!in_map(s, k.mv_data, k.mv_size) || !in_map(s, v.mv_data, v.mv_size)) {
            outside = 1;
            break;
        }
        int view = range_view(e, keyed, &k, &v, kb, vb);
        if (view < 0) break;
        if (view == 0) continue;
        n++;
        if (cb(ctx, k.mv_data, k.mv_size, v.mv_data, v.mv_size)) break;
    }
    GUARD_END(sig)
    r->busy = busy_before;
    mdb_cursor_close(cur);
    if (scan) (void)madvise((void *)s->map, s->file_bytes, MADV_RANDOM);
    if (sig) {
        reader_drop_txn(r, si);
        return xtts_error_set(err, XTTS_ECORRUPT, "%s: \"%s\": damaged LMDB pages after %llu entries (%s)", s->name,
                              db, (unsigned long long)n, xtts_guard_signame(sig));
    }
    if (outside)
        return xtts_error_set(err, XTTS_ECORRUPT, "%s: \"%s\": entry %llu points outside data.mdb", s->name, db,
                              (unsigned long long)n);
    if (rc != MDB_SUCCESS && rc != MDB_NOTFOUND)
        return xtts_error_set(err, XTTS_ECORRUPT, "%s: \"%s\": after %llu entries: %s", s->name, db,
                              (unsigned long long)n, mdb_strerror(rc));
    return XTTS_OK;
}

xtts_status xtts_cache_reader_meta(xtts_cache_reader *r, size_t si, const char *key, char **val, size_t *len,
                                   xtts_error *err) {
    *val = NULL;
    if (si >= r->c->n_shards) return xtts_error_set(err, XTTS_ERANGE, "%s: no shard %zu", r->c->dir, si);
    shard_t *s = &r->c->shards[r->c->shards[si].home];
    MDB_txn *txn;
    xtts_status st = reader_txn(r, si, &txn, err);
    if (st) return st;
    MDB_val k = {strlen(key), (void *)key}, v;
    int rc;
    char *volatile copy = NULL;
    GUARD(sig)
    rc = mdb_get(txn, s->meta_dbi, &k, &v);
    if (!rc && in_map(s, v.mv_data, v.mv_size) && (copy = malloc(v.mv_size + 1))) {
        memcpy(copy, v.mv_data, v.mv_size);
        copy[v.mv_size] = '\0';
    }
    GUARD_END(sig)
    if (sig) {
        free(copy);
        reader_drop_txn(r, si);
        return xtts_error_set(err, XTTS_ECORRUPT, "%s: meta \"%s\": damaged LMDB pages (%s)", s->name, key,
                              xtts_guard_signame(sig));
    }
    if (rc == MDB_NOTFOUND) return xtts_error_set(err, XTTS_ENOTFOUND, "%s: meta \"%s\" absent", s->name, key);
    if (rc) return xtts_error_set(err, XTTS_ECORRUPT, "%s: meta \"%s\": %s", s->name, key, mdb_strerror(rc));
    if (!copy) return xtts_error_set(err, XTTS_ECORRUPT, "%s: meta \"%s\": unreadable value", s->name, key);
    *val = copy;
    if (len) *len = v.mv_size;
    return XTTS_OK;
}

/* ---- per-record databases ------------------------------------------------------------- */

const xtts_cache *xtts_cache_reader_cache(const xtts_cache_reader *r) { return r->c; }

size_t xtts_cache_shards_with_db(const xtts_cache *c, const char *db) {
    size_t n = 0;
    int keys = !strcmp(db, XTTS_CACHE_DB_KEYS);
    if (!keys && strcmp(db, XTTS_CACHE_DB_QUALITY)) return 0;
    for (size_t i = 0; i < c->n_shards; i++)
        n += c->shards[i].status == XTTS_OK && (keys ? c->shards[i].has_keys : c->shards[i].has_quality);
    return n;
}

xtts_status xtts_cache_reader_value(xtts_cache_reader *r, uint64_t index, const char *db, const void **buf,
                                    size_t *len, xtts_error *err) {
    int keys = !strcmp(db, XTTS_CACHE_DB_KEYS);
    if (!keys && strcmp(db, XTTS_CACHE_DB_QUALITY))
        return xtts_error_set(err, XTTS_EUSAGE, "no per-record database \"%s\"", db);
    size_t si;
    xtts_status st = locate(r, index, &si, err);
    if (st) return st;
    shard_t *s = &r->c->shards[r->c->shards[si].home];
    MDB_txn *txn;
    if ((st = reader_txn(r, si, &txn, err))) return st;
    uint64_t local = local_key(&r->c->shards[si], index);
    if (keys ? !s->has_keys : !s->has_quality)
        return xtts_error_set(err, XTTS_ENOTFOUND, "%s: index %llu: no \"%s\" database in the shard", s->name,
                              (unsigned long long)index, db);
    uint8_t kb[8];
    xtts_put_be64(kb, local);
    MDB_val k = {8, kb}, v;
    int rc;
    GUARD(sig)
    rc = mdb_get(txn, keys ? s->keys_dbi : s->quality_dbi, &k, &v);
    GUARD_END(sig)
    if (sig) {
        reader_drop_txn(r, si);
        return xtts_error_set(err, XTTS_ECORRUPT, "%s: index %llu: \"%s\": damaged LMDB pages (%s)", s->name,
                              (unsigned long long)index, db, xtts_guard_signame(sig));
    }
    if (rc == MDB_NOTFOUND)
        return xtts_error_set(err, XTTS_ENOTFOUND, "%s: index %llu: no \"%s\" entry", s->name, (unsigned long long)index, db);
    if (rc)
        return xtts_error_set(err, XTTS_ECORRUPT, "%s: index %llu: \"%s\": %s", s->name, (unsigned long long)index, db,
                              mdb_strerror(rc));
    if (!in_map(s, v.mv_data, v.mv_size))
        return xtts_error_set(err, XTTS_ECORRUPT, "%s: index %llu: \"%s\" value points outside data.mdb", s->name,
                              (unsigned long long)index, db);
    *buf = v.mv_data;
    *len = v.mv_size;
    return XTTS_OK;
}

/* ---- batches ---------------------------------------------------------------------------- */

static void *alloc_array(size_t n, size_t size) {
    if (n && size > SIZE_MAX / n) return NULL;
    size_t bytes = n * size;
    bytes = (bytes + 63) & ~(size_t)63;
    return aligned_alloc(64, bytes ? bytes : 64);
}

xtts_status xtts_batch_init(const xtts_cache *c, size_t batch_size, xtts_dtype mel_dtype, xtts_batch *b,
                             xtts_error *err) {
    memset(b, 0, sizeof *b);
    b->batch_size = batch_size;
    b->max_tokens = (size_t)c->cfg.max_tokens;
    b->n_mels = (size_t)c->cfg.mel.n_mels;
    b->max_frames = c->max_frames;
    b->mel_dtype = mel_dtype;
    size_t mel_row = b->n_mels * b->max_frames;
    b->tokens = alloc_array(batch_size, b->max_tokens * sizeof(int32_t));
    b->mel = alloc_array(batch_size, mel_row * xtts_dtype_size(mel_dtype));
    b->n_tokens = alloc_array(batch_size, sizeof(uint32_t));
    b->n_frames = alloc_array(batch_size, sizeof(uint32_t));
    b->speaker_id = alloc_array(batch_size, sizeof(uint32_t));
    b->lang_id = alloc_array(batch_size, sizeof(uint32_t));
    b->split = alloc_array(batch_size, 1);
    b->index = alloc_array(batch_size, sizeof(uint64_t));
    if (!b->tokens || !b->mel || !b->n_tokens || !b->n_frames || !b->speaker_id || !b->lang_id || !b->split ||
        !b->index) {
        xtts_batch_free(b);
        return xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory for a batch of %zu", c->dir, batch_size);
    }
    return XTTS_OK;
}

void xtts_batch_free(xtts_batch *b) {
    if (!b) return;
    free(b->tokens);
    free(b->mel);
    free(b->n_tokens);
    free(b->n_frames);
    free(b->speaker_id);
    free(b->lang_id);
    free(b->split);
    free(b->index);
    memset(b, 0, sizeof *b);
}

xtts_status xtts_cache_reader_batch(xtts_cache_reader *r, const uint64_t *indices, size_t n, xtts_batch *b,
                                    xtts_error *err) {
    if (n > b->batch_size)
        return xtts_error_set(err, XTTS_ERANGE, "%s: %zu records do not fit a batch of %zu", r->c->dir, n,
                              b->batch_size);
    size_t esize = xtts_dtype_size(b->mel_dtype);
    size_t mel_row = b->n_mels * b->max_frames;
    int32_t pad_token = r->c->cfg.pad_token;
    /* A batch is filled now and read later; when its mels outgrow a core's cache (1 MiB
     * and up) they go straight to memory: the decoder's scratch stays cached, and two
     * threads do not contend for read-for-ownership traffic. Smaller batches and
     * single-record gets keep ordinary stores (their output is likely still cached when
     * read). */
    xtts_record_decoder_set_streaming(r->dec, r->batch_streaming >= 0 ? r->batch_streaming
                                                                      : n * mel_row * esize >= ((size_t)1 << 20));
    for (size_t i = 0; i < n; i++) {
        xtts_record_header h;
        int32_t *tok = b->tokens + i * b->max_tokens;
        uint8_t *mel = (uint8_t *)b->mel + i * mel_row * esize;
        xtts_status st = xtts_cache_reader_get(r, indices[i], &h, tok, b->max_tokens, mel, b->mel_dtype, b->n_mels,
                                               b->max_frames, err);
        if (!st && h.n_mels != b->n_mels) {
            size_t si = xtts_cache_shard_index_of(r->c, indices[i]);
            st = xtts_error_set(err, XTTS_ECORRUPT, "%s: index %llu, id '%s': %u mel channels, the batch has %zu",
                                r->c->shards[si].name, (unsigned long long)indices[i], h.id, h.n_mels, b->n_mels);
        }
        if (st) {
            xtts_record_decoder_set_streaming(r->dec, 0);
            return st;
        }
        for (size_t t = h.tokens_padded; t < b->max_tokens; t++) tok[t] = pad_token;
        b->n_tokens[i] = h.n_tokens;
        b->n_frames[i] = h.n_frames;
        b->speaker_id[i] = h.speaker_id;
        b->lang_id[i] = h.lang_id;
        b->split[i] = h.split;
        b->index[i] = indices[i];
    }
    xtts_record_decoder_set_streaming(r->dec, 0);
    return XTTS_OK;
}

/* ---- version 2: lengths index, text, waveform, aligned segments ----------------- */

typedef struct {
    xtts_lengths *out;
    uint64_t first, count, n;
    const char *shard;
    xtts_error *err;
    xtts_status st;
} lengths_ctx;

static int lengths_cb(void *ctx, const void *key, size_t key_len, const void *val, size_t val_len) {
    lengths_ctx *x = ctx;
    if (key_len != 8 || xtts_get_be64(key) != x->n || x->n >= x->count) {
        x->st = xtts_error_set(x->err, XTTS_ECORRUPT, "%s: \"lengths\": entry %llu has a key out of order", x->shard,
                               (unsigned long long)x->n);
        return 1;
    }
    xtts_error e;
    if (xtts_lengths_unpack(val, val_len, &x->out[x->first + x->n], &e)) {
        x->st = xtts_error_set(x->err, XTTS_ECORRUPT, "%s: \"lengths\": local index %llu: %s", x->shard,
                               (unsigned long long)x->n, e.msg);
        return 1;
    }
    x->n++;
    return 0;
}

int xtts_cache_has_lengths_index(const xtts_cache *c) { return c->cfg.format_version >= 2; }

xtts_status xtts_cache_lengths(xtts_cache_reader *r, xtts_lengths *out, xtts_error *err) {
    xtts_cache *c = r->c;
    if (c->cfg.format_version < 2) { /* no index: the headers, without decompressing */
        for (uint64_t i = 0; i < c->count; i++) {
            xtts_record_header h;
            xtts_status st = xtts_cache_reader_header(r, i, &h, err);
            if (st) return st;
            xtts_lengths_from_header(&h, &out[i]);
        }
        return XTTS_OK;
    }
    for (size_t si = 0; si < c->n_shards; si++) {
        shard_t *s = &c->shards[si];
        lengths_ctx x = {out, s->first, s->records, 0, s->name, err, XTTS_OK};
        xtts_status st = xtts_cache_reader_foreach(r, si, "lengths", lengths_cb, &x, err);
        if (st) return st;
        if (x.st) return x.st;
        if (x.n != s->records)
            return xtts_error_set(err, XTTS_ECORRUPT, "%s: \"lengths\" holds %llu entries for %llu records", s->name,
                                  (unsigned long long)x.n, (unsigned long long)s->records);
    }
    return XTTS_OK;
}

/* Run a record-codec call on record index under the fault guard, with errors named. */
#define WITH_RECORD(r, index, CALL)                                                                          \
    do {                                                                                                     \
        size_t si_;                                                                                          \
        xtts_status st_ = locate(r, index, &si_, err);                                                       \
        if (st_) return st_;                                                                                 \
        MDB_val v;                                                                                           \
        st_ = shard_get(r, si_, local_key(&r->c->shards[si_], index), index, &v, err);                            \
        if (st_) return st_;                                                                                 \
        xtts_error e;                                                                                        \
        xtts_error_clear(&e);                                                                                \
        GUARD(sig_)                                                                                          \
        st_ = (CALL);                                                                                        \
        GUARD_END(sig_)                                                                                      \
        if (sig_)                                                                                            \
            return xtts_error_set(err, XTTS_ECORRUPT, "%s: index %llu: fault reading the record (%s)",       \
                                  r->c->shards[si_].name, (unsigned long long)index, xtts_guard_signame(sig_));         \
        if (st_) return record_error(r, si_, index, v.mv_data, v.mv_size, &e, err);                          \
    } while (0)

xtts_status xtts_cache_reader_text(xtts_cache_reader *r, uint64_t index, const char **orig, size_t *orig_len,
                                   const char **norm, size_t *norm_len, xtts_error *err) {
    WITH_RECORD(r, index, xtts_record_decode_text(r->dec, v.mv_data, v.mv_size, orig, orig_len, norm, norm_len, &e));
    return XTTS_OK;
}

xtts_status xtts_cache_reader_wave(xtts_cache_reader *r, uint64_t index, int16_t *out, size_t first, size_t n,
                                   xtts_error *err) {
    WITH_RECORD(r, index, xtts_record_decode_wave(r->dec, v.mv_data, v.mv_size, out, first, n, &e));
    return XTTS_OK;
}

xtts_status xtts_cache_reader_check(xtts_cache_reader *r, uint64_t index, xtts_error *err) {
    WITH_RECORD(r, index, xtts_record_check(r->dec, v.mv_data, v.mv_size, &e));
    return XTTS_OK;
}

xtts_status xtts_cache_reader_segment(xtts_cache_reader *r, uint64_t index, size_t start_frame, size_t seg_frames,
                                      float *wave, float *mel, xtts_error *err) {
    xtts_cache *c = r->c;
    xtts_record_header h;
    xtts_status st = xtts_cache_reader_header(r, index, &h, err);
    if (st) return st;
    size_t hop = (size_t)c->cfg.mel.hop_samples;
    if (seg_frames == 0 || start_frame > h.n_frames || seg_frames > h.n_frames - start_frame)
        return xtts_error_set(err, XTTS_ERANGE, "%s: index %llu, id '%s': frames [%zu, %zu) outside its %u frames", c->dir,
                              (unsigned long long)index, h.id, start_frame, start_frame + seg_frames, h.n_frames);
    if (wave && h.audio == XTTS_AUDIO_NONE)
        return xtts_error_set(err, XTTS_ENOTFOUND, "%s: index %llu, id '%s': no waveform stored (built with --audio none)",
                              c->dir, (unsigned long long)index, h.id);
    if (mel) {
        size_t need = (size_t)h.n_mels * h.frames_padded;
        if (need > r->seg_mel_cap) {
            float *p = realloc(r->seg_mel, need * sizeof *p);
            if (!p) return xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", c->dir);
            r->seg_mel = p;
            r->seg_mel_cap = need;
        }
        st = xtts_cache_reader_get(r, index, &h, NULL, 0, r->seg_mel, XTTS_DTYPE_F32, h.n_mels, h.frames_padded, err);
        if (st) return st;
        for (size_t ch = 0; ch < h.n_mels; ch++)
            memcpy(mel + ch * seg_frames, r->seg_mel + ch * h.frames_padded + start_frame, seg_frames * sizeof *mel);
    }
    if (wave) {
        size_t first = start_frame * hop, n = seg_frames * hop;
        size_t have = first < h.n_samples ? h.n_samples - first : 0;
        if (have > n) have = n;
        if (have > r->seg_wave_cap) {
            int16_t *p = realloc(r->seg_wave, have * sizeof *p);
            if (!p) return xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", c->dir);
            r->seg_wave = p;
            r->seg_wave_cap = have;
        }
        if (have && (st = xtts_cache_reader_wave(r, index, r->seg_wave, first, have, err))) return st;
        for (size_t i = 0; i < have; i++) wave[i] = (float)r->seg_wave[i] / 32768.0f;
        for (size_t i = have; i < n; i++) wave[i] = 0.0f; /* past the end of the audio */
    }
    return XTTS_OK;
}
