/* writer.c — append records to a cache directory's LMDB shards, crash-safe and
 * resumable (formats/cache.md, "Directory" and "Shard").
 *
 * Everything since the last commit is kept in memory (records, rejects, state blobs)
 * and written in ONE write transaction into the last shard: the records, their ids,
 * and the meta keys "next_input", "rejects" (the rejects committed while this shard was
 * the last one, so that a commit's cost does not grow with all rejects so far) and
 * "state:*". LMDB commits are atomic and
 * durable, so after a kill -9 the last shard's meta describes exactly the records
 * committed. Keeping the pending records also makes MDB_MAP_FULL harmless: the
 * transaction is aborted, the map doubled and the whole commit replayed.
 *
 * A new shard is created when the next record would take the current one past
 * shard_bytes; the pending records are committed to the old shard first, so every
 * commit goes to exactly one shard. A shard directory that never saw a commit (a crash
 * right after rotation) holds nothing and is removed when the build is reopened.
 *
 * State and commit points: a caller sets its state (running statistics ...) including
 * input i, then puts or rejects input i. set_state values wait in state_after until the
 * next put or reject succeeds, which adopts them into the pending commit; automatic
 * commits (every commit_every inputs) happen at the END of a put or reject, and the
 * commit before a rotation, which happens at the start of a put, leaves state_after out.
 * So every commit holds the records and rejects up to some input and exactly the state
 * set before that input was added.
 *
 * Duplicate ids are refused at put time through a fixed-size filter of id hashes (its
 * memory does not grow with the records); a "maybe" from it is confirmed against the
 * pending records and the shards' "ids" databases.
 */
#include "cache/store/writer.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "cache/store/writer_internal.h"
#include "formats/record.h"

#define DEFAULT_SHARD_BYTES ((uint64_t)1 << 30)
#define DEFAULT_COMMIT_EVERY 256u
#define PENDING_BYTES_MAX ((uint64_t)2 << 20) /* commit early past this much buffered data */
#define MAP_BYTES_MAX ((uint64_t)1 << 42)

typedef struct {
    uint64_t input;
    char *id;
    uint8_t *data;
    size_t len;
    char *source; /* audio path, stored as meta "audio:<id>" in the record's shard; may be NULL */
    uint8_t lengths[XTTS_LENGTHS_BYTES]; /* its "lengths" entry (format 2) */
    uint8_t *entries;   /* its entries in other databases, packed (entries_pack) */
    size_t entries_len;
} pending_record;

typedef struct {
    char *key;
    uint8_t *data;
    size_t len;
} state_blob;

typedef struct {
    int number;
    uint64_t records; /* committed */
    uint64_t bytes;   /* committed record value bytes */
} shard_info;


struct xtts_cache_writer {
    char *dir;
    int part, n_parts;
    uint64_t part_first, part_end;
    uint64_t shard_bytes, map_bytes0;
    uint32_t commit_every;
    xtts_cache_config cfg;
    char hash[65];
    int lock_fd, part_lock_fd;

    shard_info *shards; /* every shard of this build (or part), in order */
    size_t n_shards, cap_shards;
    MDB_env *env;       /* the last shard's environment (NULL before the first shard) */
    int last_committed; /* the last shard has seen a commit */

    uint64_t next_input;         /* committed */
    uint64_t next_input_pending; /* including pending puts and rejects */
    json_t *rejects;             /* committed, all shards */
    json_t *shard_rejects;       /* committed into the last shard */
    json_t *rejects_pending;
    state_blob *state;           /* committed */
    size_t n_state;
    state_blob *state_pending;   /* adopted by a put or reject since the last commit */
    size_t n_state_pending;
    state_blob *state_after;     /* set since the last put or reject */
    size_t n_state_after;

    pending_record *pend;
    size_t n_pend, cap_pend;
    uint64_t pend_bytes;
    uint32_t ops_pending; /* puts and rejects since the last commit */

    xtts_id_filter ids; /* every stored or pending id: a "maybe" is confirmed in the shards */
    xtts_status failed; /* set by a failed commit: the writer only aborts from here */
    char failed_msg[XTTS_ERRMSG_MAX];
};

/* ---- small helpers ---------------------------------------------------------- */

static void shard_path(const xtts_cache_writer *w, int number, char *out, size_t cap) {
    char name[32];
    xtts_shard_name(name, w->part, number);
    xtts_path_join(out, cap, w->dir, name);
}

static void blobs_free(state_blob *b, size_t n) {
    for (size_t i = 0; i < n; i++) { free(b[i].key); free(b[i].data); }
    free(b);
}

/* Set key to data (taking ownership of data) in a blob list. -1 when out of memory. */
static int blob_set(state_blob **list, size_t *n, const char *key, uint8_t *data, size_t len) {
    for (size_t i = 0; i < *n; i++)
        if (!strcmp((*list)[i].key, key)) {
            free((*list)[i].data);
            (*list)[i].data = data;
            (*list)[i].len = len;
            return 0;
        }
    state_blob *nb = realloc(*list, (*n + 1) * sizeof *nb);
    char *k = strdup(key);
    if (nb) *list = nb;
    if (!nb || !k) { free(k); return -1; }
    (*list)[(*n)++] = (state_blob){k, data, len};
    return 0;
}

/* A put or reject succeeded: the state set before it belongs to the pending commit. */
static int adopt_state_after(xtts_cache_writer *w) {
    for (size_t i = 0; i < w->n_state_after; i++) {
        state_blob *b = &w->state_after[i];
        if (blob_set(&w->state_pending, &w->n_state_pending, b->key, b->data, b->len)) {
            /* keep the rest where it is; nothing is lost but this adoption */
            return -1;
        }
        free(b->key);
        b->key = NULL;
        b->data = NULL;
    }
    free(w->state_after);
    w->state_after = NULL;
    w->n_state_after = 0;
    return 0;
}

static void pending_clear(xtts_cache_writer *w) {
    for (size_t i = 0; i < w->n_pend; i++) {
        free(w->pend[i].id); free(w->pend[i].data); free(w->pend[i].source); free(w->pend[i].entries);
    }
    w->n_pend = 0;
    w->pend_bytes = 0;
    w->ops_pending = 0;
    json_array_clear(w->rejects_pending);
    blobs_free(w->state_pending, w->n_state_pending);
    w->state_pending = NULL;
    w->n_state_pending = 0;
}

static void writer_free(xtts_cache_writer *w) {
    if (!w) return;
    if (w->env) mdb_env_close(w->env);
    pending_clear(w);
    blobs_free(w->state_after, w->n_state_after);
    free(w->pend);
    json_decref(w->rejects);
    json_decref(w->shard_rejects);
    json_decref(w->rejects_pending);
    blobs_free(w->state, w->n_state);
    free(w->shards);
    xtts_id_filter_free(&w->ids);
    xtts_unlock(w->part_lock_fd);
    xtts_unlock(w->lock_fd);
    free(w->dir);
    free(w);
}

static xtts_status fail(xtts_cache_writer *w, xtts_error *err, xtts_status code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* A failed commit: remember it so that every later call reports the same thing. */
static xtts_status fail(xtts_cache_writer *w, xtts_error *err, xtts_status code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->failed_msg, sizeof w->failed_msg, fmt, ap);
    va_end(ap);
    w->failed = code;
    return xtts_error_set(err, code, "%s", w->failed_msg);
}

static xtts_status check_failed(const xtts_cache_writer *w, xtts_error *err) {
    if (!w->failed) return XTTS_OK;
    return xtts_error_set(err, w->failed, "%s", w->failed_msg);
}

/* ---- shard environments ------------------------------------------------------ */

static xtts_status env_open(xtts_cache_writer *w, int number, int create, MDB_env **out, xtts_error *err) {
    char path[4096];
    shard_path(w, number, path, sizeof path);
    *out = NULL;
    if (create && mkdir(path, 0755) != 0 && errno != EEXIST)
        return xtts_error_set(err, XTTS_EIO, "%s: cannot create shard directory: %s", path, strerror(errno));
    xtts_status fst = xtts_lmdb_file_check(path, err); /* a cut data.mdb would be SIGBUS inside liblmdb */
    if (fst) return fst;
    MDB_env *env;
    int rc = mdb_env_create(&env);
    if (rc) return xtts_error_set(err, xtts_mdb_status(rc), "%s: %s", path, mdb_strerror(rc));
    rc = mdb_env_set_maxdbs(env, XTTS_SHARD_MAX_DBS);
    if (!rc) rc = mdb_env_set_mapsize(env, (size_t)w->map_bytes0);
    if (!rc) rc = mdb_env_open(env, path, 0, 0644);
    if (rc) {
        mdb_env_close(env);
        return xtts_error_set(err, xtts_mdb_status(rc), "%s: cannot open shard: %s", path, mdb_strerror(rc));
    }
    *out = env;
    return XTTS_OK;
}

/* Read what a shard holds: whether it was ever committed ("format" present), its
 * "config_hash", and its record count and bytes. */
typedef struct {
    int committed;
    char format[32];
    char hash[65];
    uint64_t records, ids, bytes;
    json_t *rejects; /* meta "rejects" (new reference) or NULL */
} shard_scan;

static int meta_get(MDB_txn *txn, MDB_dbi meta, const char *key, MDB_val *v) {
    MDB_val k = {strlen(key), (void *)key};
    return mdb_get(txn, meta, &k, v);
}

static xtts_status scan_shard(xtts_cache_writer *w, MDB_env *env, int number, shard_scan *s,
                              xtts_error *err) {
    char path[4096];
    shard_path(w, number, path, sizeof path);
    memset(s, 0, sizeof *s);
    MDB_txn *txn;
    MDB_dbi meta, recs, ids;
    int rc = mdb_txn_begin(env, NULL, MDB_RDONLY, &txn);
    if (rc) return xtts_error_set(err, xtts_mdb_status(rc), "%s: %s", path, mdb_strerror(rc));
    rc = mdb_dbi_open(txn, "meta", 0, &meta);
    if (rc == MDB_NOTFOUND) { mdb_txn_abort(txn); return XTTS_OK; } /* never committed */
    MDB_val v;
    if (!rc && !(rc = meta_get(txn, meta, "format", &v))) {
        s->committed = 1;
        snprintf(s->format, sizeof s->format, "%.*s", (int)(v.mv_size < 31 ? v.mv_size : 31), (const char *)v.mv_data);
    }
    if (rc == MDB_NOTFOUND) rc = 0;
    if (!rc && s->committed && !(rc = meta_get(txn, meta, "config_hash", &v)))
        snprintf(s->hash, sizeof s->hash, "%.*s", (int)(v.mv_size < 64 ? v.mv_size : 64), (const char *)v.mv_data);
    if (rc == MDB_NOTFOUND) rc = 0;
    if (!rc && s->committed && !(rc = meta_get(txn, meta, "rejects", &v))) {
        json_error_t je;
        s->rejects = json_loadb(v.mv_data, v.mv_size, 0, &je);
        if (!json_is_array(s->rejects)) {
            mdb_txn_abort(txn);
            return xtts_error_set(err, XTTS_ECORRUPT, "%s: meta \"rejects\" is not a JSON array", path);
        }
    }
    if (rc == MDB_NOTFOUND) rc = 0;
    if (!rc && s->committed) {
        MDB_stat ms;
        rc = mdb_dbi_open(txn, "records", 0, &recs);
        if (!rc) rc = mdb_stat(txn, recs, &ms);
        if (!rc) s->records = ms.ms_entries;
        if (!rc) rc = mdb_dbi_open(txn, "ids", 0, &ids);
        if (!rc) rc = mdb_stat(txn, ids, &ms);
        if (!rc) s->ids = ms.ms_entries;
        MDB_cursor *cur = NULL;
        if (!rc) rc = mdb_cursor_open(txn, recs, &cur);
        MDB_val k;
        uint64_t expect = 0;
        while (!rc && !(rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT))) {
            if (k.mv_size != 8 || xtts_get_be64(k.mv_data) != expect) {
                mdb_cursor_close(cur);
                mdb_txn_abort(txn);
                return xtts_error_set(err, XTTS_ECORRUPT, "%s: record keys are not 0..n-1 (index %llu)", path,
                                      (unsigned long long)expect);
            }
            expect++;
            s->bytes += v.mv_size;
        }
        if (rc == MDB_NOTFOUND) rc = 0;
        if (cur) mdb_cursor_close(cur);
        /* the ids into the filter, for the duplicate check */
        if (!rc) rc = mdb_cursor_open(txn, ids, &cur);
        while (!rc && !(rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)))
            if (xtts_id_filter_add(&w->ids, xtts_id_hash(k.mv_data, k.mv_size)) < 0) rc = ENOMEM;
        if (rc == MDB_NOTFOUND) rc = 0;
        if (cur) mdb_cursor_close(cur);
    }
    mdb_txn_abort(txn);
    if (rc) return xtts_error_set(err, xtts_mdb_status(rc), "%s: cannot read the shard: %s", path, mdb_strerror(rc));
    if (s->committed && s->records != s->ids)
        return xtts_error_set(err, XTTS_ECORRUPT, "%s: %llu records but %llu ids", path, (unsigned long long)s->records,
                              (unsigned long long)s->ids);
    return XTTS_OK;
}

/* Load next_input and the state blobs from the last shard's meta. */
static xtts_status load_state(xtts_cache_writer *w, int number, xtts_error *err) {
    char path[4096];
    shard_path(w, number, path, sizeof path);
    MDB_txn *txn;
    MDB_dbi meta;
    MDB_cursor *cur = NULL;
    MDB_val k, v;
    int rc = mdb_txn_begin(w->env, NULL, MDB_RDONLY, &txn);
    if (!rc) rc = mdb_dbi_open(txn, "meta", 0, &meta);
    if (!rc) rc = meta_get(txn, meta, "next_input", &v);
    if (rc) goto lmdb_fail;
    if (v.mv_size != 8) {
        mdb_txn_abort(txn);
        return xtts_error_set(err, XTTS_ECORRUPT, "%s: meta \"next_input\" is %zu bytes, not 8", path, v.mv_size);
    }
    w->next_input = w->next_input_pending = xtts_get_be64(v.mv_data);
    rc = mdb_cursor_open(txn, meta, &cur);
    static const char prefix[] = "state:";
    k.mv_size = sizeof prefix - 1;
    k.mv_data = (void *)prefix;
    for (rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); !rc; rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
        if (k.mv_size < sizeof prefix - 1 || memcmp(k.mv_data, prefix, sizeof prefix - 1)) break;
        state_blob *nb = realloc(w->state, (w->n_state + 1) * sizeof *nb);
        if (!nb) { rc = ENOMEM; break; }
        w->state = nb;
        state_blob *b = &w->state[w->n_state];
        size_t kl = k.mv_size - (sizeof prefix - 1);
        b->key = malloc(kl + 1);
        b->data = malloc(v.mv_size ? v.mv_size : 1);
        b->len = v.mv_size;
        if (!b->key || !b->data) { free(b->key); free(b->data); rc = ENOMEM; break; }
        memcpy(b->key, (const char *)k.mv_data + sizeof prefix - 1, kl);
        b->key[kl] = '\0';
        memcpy(b->data, v.mv_data, v.mv_size);
        w->n_state++;
    }
    if (rc == MDB_NOTFOUND) rc = 0;
    mdb_cursor_close(cur);
lmdb_fail:
    mdb_txn_abort(txn);
    if (rc) return xtts_error_set(err, xtts_mdb_status(rc), "%s: cannot read the writer state: %s", path, mdb_strerror(rc));
    return XTTS_OK;
}

/* ---- open --------------------------------------------------------------------- */

void xtts_cache_writer_options_defaults(xtts_cache_writer_options *opt, const char *dir) {
    memset(opt, 0, sizeof *opt);
    opt->dir = dir;
    opt->part = -1;
    opt->shard_bytes = DEFAULT_SHARD_BYTES;
    opt->commit_every = DEFAULT_COMMIT_EVERY;
}

/* config_hash of a manifest file, or "" when it cannot be read. */
static void manifest_hash(const char *path, char out[65]) {
    out[0] = '\0';
    json_error_t je;
    json_t *m = json_load_file(path, 0, &je);
    json_t *h = json_object_get(m, "config_hash");
    if (json_is_string(h)) snprintf(out, 65, "%s", json_string_value(h));
    json_decref(m);
}

/* Append "key A -> B" for the fields in which old and now differ (objects compared field
 * by field, as "mel.hop_samples"), up to 4 of them. */
static void json_differences(const json_t *old, const json_t *now, const char *prefix, char *out, size_t cap, int *shown) {
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)now, key, v) {
        json_t *was = json_object_get(old, key);
        if (was && json_equal(was, v)) continue;
        char name[96];
        snprintf(name, sizeof name, "%s%s", prefix, key);
        if (json_is_object(was) && json_is_object(v)) {
            char sub[100];
            snprintf(sub, sizeof sub, "%s.", name);
            json_differences(was, v, sub, out, cap, shown);
            continue;
        }
        size_t n = strlen(out);
        if (*shown == 4) {
            if (n < 5 || strcmp(out + n - 5, ", ...")) snprintf(out + n, cap - n, ", ...");
            return;
        }
        char *a = was ? json_dumps(was, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
        char *b = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
        snprintf(out + n, cap - n, "%s%s %.24s%s -> %.24s%s", *shown ? ", " : "", name, a ? a : "(none)",
                 a && strlen(a) > 24 ? "..." : "", b ? b : "?", b && strlen(b) > 24 ? "..." : "");
        free(a);
        free(b);
        (*shown)++;
    }
}

/* The configuration fields in which a manifest differs from cfg, or "" when the
 * manifest's "config" cannot be read. */
void xtts_cache_config_differences(const char *manifest_path, const xtts_cache_config *cfg, char *out, size_t cap) {
    out[0] = '\0';
    json_error_t je;
    json_t *m = json_load_file(manifest_path, 0, &je);
    json_t *old = json_object_get(m, "config");
    json_t *now = xtts_cache_config_to_json(cfg);
    int shown = 0;
    if (json_is_object(old) && now) json_differences(old, now, "", out, cap, &shown);
    json_decref(now);
    json_decref(m);
}

/* Append a line to a mismatch description (kept short: the first reasons win). */
static void why_add(char *why, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void why_add(char *why, size_t cap, const char *fmt, ...) {
    size_t n = strlen(why);
    if (n + 4 >= cap) return;
    if (n) { snprintf(why + n, cap - n, "; "); n += 2; }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why + n, cap - n, fmt, ap);
    va_end(ap);
}

/* Remove what another configuration or another layout left in the directory. */
static xtts_status remove_old(xtts_cache_writer *w, const xtts_dir_listing *l, xtts_error *err) {
    char path[4096];
    xtts_status st;
    /* every shard to remove holds LMDB's files alone, checked before the first goes */
    for (size_t i = 0; i < l->n_shards; i++) {
        if (w->part >= 0 && l->shards[i].part >= 0 && l->shards[i].part != w->part) continue;
        char name[32];
        xtts_shard_name(name, l->shards[i].part, l->shards[i].number);
        xtts_path_join(path, sizeof path, w->dir, name);
        if ((st = xtts_shard_dir_check(path, err))) return st;
    }
    /* Newest first: a kill part way leaves shards 0..k, which a re-run reads again. */
    for (size_t i = l->n_shards; i-- > 0;) {
        const xtts_dir_shard *s = &l->shards[i];
        /* A part build removes its own shards and whole-build shards, never other parts'. */
        if (w->part >= 0 && s->part >= 0 && s->part != w->part) continue;
        char name[32];
        xtts_shard_name(name, s->part, s->number);
        xtts_path_join(path, sizeof path, w->dir, name);
        if ((st = xtts_remove_shard_dir(path, err))) return st;
    }
    xtts_path_join(path, sizeof path, w->dir, "manifest.json");
    if ((st = xtts_remove_file(path, err))) return st;
    if (l->n_base && (st = xtts_remove_base_dirs(w->dir, err))) return st;
    for (size_t i = 0; i < l->n_parts; i++) {
        if (w->part >= 0 && l->parts[i] != w->part) continue;
        char name[40];
        xtts_manifest_name(name, l->parts[i]);
        xtts_path_join(path, sizeof path, w->dir, name);
        if ((st = xtts_remove_file(path, err))) return st;
    }
    return XTTS_OK;
}

static xtts_status shards_push(xtts_cache_writer *w, int number, uint64_t records, uint64_t bytes, xtts_error *err) {
    if (w->n_shards == w->cap_shards) {
        size_t nc = w->cap_shards ? 2 * w->cap_shards : 8;
        shard_info *p = realloc(w->shards, nc * sizeof *p);
        if (!p) return xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", w->dir);
        w->shards = p;
        w->cap_shards = nc;
    }
    w->shards[w->n_shards++] = (shard_info){number, records, bytes};
    return XTTS_OK;
}

/* Open the own shards in order, check their configuration, and load the state. */
static xtts_status open_existing(xtts_cache_writer *w, const xtts_dir_listing *l, char *why, size_t why_cap,
                                 xtts_error *err) {
    size_t n_own = 0;
    for (size_t i = 0; i < l->n_shards; i++)
        if (l->shards[i].part == w->part) n_own++;
    int *nums = malloc((n_own ? n_own : 1) * sizeof *nums);
    if (!nums) return xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", w->dir);
    n_own = 0;
    for (size_t i = 0; i < l->n_shards; i++)
        if (l->shards[i].part == w->part) nums[n_own++] = l->shards[i].number;
    xtts_status st = XTTS_OK;
    char path[4096];
    for (size_t i = 0; i < n_own; i++) {
        shard_path(w, (int)i, path, sizeof path);
        if (nums[i] != (int)i) {
            st = xtts_error_set(err, XTTS_ECORRUPT, "%s: missing (the next shard present is number %d)", path, nums[i]);
            break;
        }
        MDB_env *env;
        if ((st = env_open(w, (int)i, 0, &env, err))) break;
        shard_scan s;
        st = scan_shard(w, env, (int)i, &s, err);
        if (st) { json_decref(s.rejects); mdb_env_close(env); break; }
        json_decref(w->shard_rejects);
        w->shard_rejects = s.rejects ? s.rejects : json_array();
        if (!w->shard_rejects || json_array_extend(w->rejects, w->shard_rejects)) {
            mdb_env_close(env);
            st = xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", w->dir);
            break;
        }
        if (!s.committed) {
            mdb_env_close(env);
            if (i + 1 == n_own) { /* created by a rotation that was killed before its first commit */
                st = xtts_remove_shard_dir(path, err);
                break;
            }
            st = xtts_error_set(err, XTTS_ECORRUPT, "%s: shard holds no commit but later shards exist", path);
            break;
        }
        if (strcmp(s.format, xtts_cache_format_name(w->cfg.format_version))) {
            why_add(why, why_cap, "%s has format \"%s\", this build writes \"%s\"", path, s.format,
                    xtts_cache_format_name(w->cfg.format_version));
        } else if (strcmp(s.hash, w->hash)) {
            why_add(why, why_cap, "%s has config_hash %.12s..., this build %.12s...", path, s.hash, w->hash);
        }
        if ((st = shards_push(w, (int)i, s.records, s.bytes, err))) { mdb_env_close(env); break; }
        if (w->env) mdb_env_close(w->env);
        w->env = env;
        w->last_committed = 1;
    }
    free(nums);
    if (st) return st;
    if (why[0] || !w->n_shards) return XTTS_OK;
    return load_state(w, w->shards[w->n_shards - 1].number, err);
}

static void reset_loaded(xtts_cache_writer *w) {
    if (w->env) mdb_env_close(w->env);
    w->env = NULL;
    w->n_shards = 0;
    w->last_committed = 0;
    w->next_input = w->next_input_pending = 0;
    json_array_clear(w->rejects);
    json_array_clear(w->shard_rejects);
    blobs_free(w->state, w->n_state);
    w->state = NULL;
    w->n_state = 0;
    xtts_id_filter_free(&w->ids);
    memset(&w->ids, 0, sizeof w->ids);
}

/* The options a writer cannot start from, and a configuration the manifest could not hold
 * (refused now, not after the build); then the directory, made when missing. */
static xtts_status check_open_options(const xtts_cache_writer_options *opt, const xtts_cache_config *cfg,
                                      xtts_error *err) {
    if (!opt || !opt->dir || !opt->dir[0] || !cfg)
        return xtts_error_set(err, XTTS_EUSAGE, "cache writer: no output directory given");
    if (opt->part < -1 || opt->part >= XTTS_MAX_PARTS)
        return xtts_error_set(err, XTTS_EUSAGE, "%s: part %d out of range", opt->dir, opt->part);
    if (opt->part >= 0 && (opt->n_parts <= opt->part || opt->n_parts > XTTS_MAX_PARTS))
        return xtts_error_set(err, XTTS_EUSAGE, "%s: part %d of %d parts: the part must be below the number of parts",
                              opt->dir, opt->part, opt->n_parts);
    if (strlen(opt->dir) > 3000) return xtts_error_set(err, XTTS_ERANGE, "%.80s...: directory path too long", opt->dir);
    json_t *cj = xtts_cache_config_to_json(cfg);
    xtts_cache_config checked;
    xtts_error cerr;
    xtts_status st = cj ? xtts_cache_config_from_json(cj, &checked, opt->dir, &cerr) : XTTS_ENOMEM;
    json_decref(cj);
    if (st == XTTS_ENOMEM) return xtts_error_set(err, st, "%s: out of memory", opt->dir);
    if (st) return xtts_error_set(err, XTTS_EUSAGE, "invalid cache configuration: %s", cerr.msg);
    /* the parents only: the directory itself is made already locked (writer_lock_new_dir) */
    char parent[4096];
    snprintf(parent, sizeof parent, "%s", opt->dir);
    size_t n = strlen(parent);
    while (n > 1 && parent[n - 1] == '/') parent[--n] = '\0';
    char *slash = strrchr(parent, '/');
    if (!slash || slash == parent) return XTTS_OK;
    *slash = '\0';
    return xtts_mkdir_p(parent, err);
}

/* A writer with the options' sizes and the configuration's hash, holding nothing yet. *out is
 * set whenever it was allocated, for the caller to free on failure. */
static xtts_status writer_new(const xtts_cache_writer_options *opt, const xtts_cache_config *cfg,
                              xtts_cache_writer **out, xtts_error *err) {
    xtts_cache_writer *w = *out = calloc(1, sizeof *w);
    if (!w) return xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", opt->dir);
    w->lock_fd = w->part_lock_fd = -1;
    w->dir = strdup(opt->dir);
    w->rejects = json_array();
    w->shard_rejects = json_array();
    w->rejects_pending = json_array();
    if (!w->dir || !w->rejects || !w->shard_rejects || !w->rejects_pending)
        return xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", opt->dir);
    w->part = opt->part;
    w->n_parts = opt->part >= 0 ? opt->n_parts : 0;
    w->part_first = opt->part_first;
    w->part_end = opt->part_end;
    w->shard_bytes = opt->shard_bytes ? opt->shard_bytes : DEFAULT_SHARD_BYTES;
    w->commit_every = opt->commit_every ? opt->commit_every : DEFAULT_COMMIT_EVERY;
    w->map_bytes0 = opt->map_bytes ? opt->map_bytes : w->shard_bytes + w->shard_bytes / 4 + ((uint64_t)32 << 20);
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0) page = 4096;
    w->map_bytes0 = (w->map_bytes0 + (uint64_t)page - 1) / (uint64_t)page * (uint64_t)page;
    w->cfg = *cfg;
    xtts_cache_config_hash(cfg, w->hash);
    return XTTS_OK;
}

/* A whole build or a merge holds the directory lock exclusively; part builds share it (so
 * parts run side by side but never beside a whole build or a merge) and hold their own part
 * lock exclusively. The locks are taken in dir (w->dir, or the new directory's temporary name). */
static xtts_status writer_lock_in(xtts_cache_writer *w, const char *dir, xtts_error *err) {
    xtts_status st;
    if (w->part < 0) {
        st = xtts_lock(dir, XTTS_LOCK_NAME, 1, &w->lock_fd, "another build or merge is running in this directory", err);
    } else {
        st = xtts_lock(dir, XTTS_LOCK_NAME, 0, &w->lock_fd, "a whole build or a merge is running in this directory", err);
        if (!st) {
            char name[40];
            snprintf(name, sizeof name, "%s-part-%05d", XTTS_LOCK_NAME, w->part);
            char what[64];
            snprintf(what, sizeof what, "part %d is already being built", w->part);
            st = xtts_lock(dir, name, 1, &w->part_lock_fd, what, err);
        }
    }
    return st;
}

/* A directory that does not exist yet appears already locked, so that no reader ever sees it
 * without its lock (and takes it for an empty or broken cache): it is made under a temporary
 * name beside it (DIR.xtts-new.PID), locked there, and renamed into place, never over a
 * directory that appeared meanwhile. 1 when done so; 0 when DIR exists (or appeared, or the
 * file system cannot rename without replacing) and is to be locked where it is. */
static int writer_lock_new_dir(xtts_cache_writer *w, xtts_status *st, xtts_error *err) {
    struct stat sb;
    if (stat(w->dir, &sb) == 0 || errno != ENOENT) return 0;
    char dir[4096], tmp[4200], lock[4300];
    snprintf(dir, sizeof dir, "%s", w->dir);
    for (size_t n = strlen(dir); n > 1 && dir[n - 1] == '/'; n--) dir[n - 1] = '\0';
    snprintf(tmp, sizeof tmp, "%s.xtts-new.%ld", dir, (long)getpid());
    if (mkdir(tmp, 0755) != 0) return 0;
    *st = writer_lock_in(w, tmp, err);
    if (!*st && renameat2(AT_FDCWD, tmp, AT_FDCWD, dir, RENAME_NOREPLACE) == 0) return 1;
    xtts_unlock(w->part_lock_fd);
    xtts_unlock(w->lock_fd);
    w->lock_fd = w->part_lock_fd = -1;
    DIR *d = opendir(tmp); /* it holds the lock files this call made, nothing else */
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && xtts_path_join(lock, sizeof lock, tmp, e->d_name) < sizeof lock)
            unlink(lock);
    if (d) closedir(d);
    rmdir(tmp);
    return 0;
}

static xtts_status writer_lock(xtts_cache_writer *w, xtts_error *err) {
    xtts_status st = XTTS_OK;
    if (!writer_lock_new_dir(w, &st, err)) st = writer_lock_in(w, w->dir, err);
    if (st) return st;
    /* this process is now the one writer of its manifest: drop what a killed one left */
    xtts_remove_manifest_temps(w->dir, w->part);
    return XTTS_OK;
}

/* Why the directory cannot be resumed as it is, into why (left "" when it can): what it holds
 * besides this build's own shards, and a manifest of another configuration. */
static void foreign_contents(const xtts_cache_writer *w, const xtts_dir_listing *l, char *why, size_t why_cap) {
    char path[4096];
    if (w->part < 0) {
        for (size_t i = 0; i < l->n_shards; i++)
            if (l->shards[i].part >= 0) {
                why_add(why, why_cap, "it holds shards of a build in parts (shard-%05d-%05d)", l->shards[i].part,
                        l->shards[i].number);
                break;
            }
        if (l->n_parts) why_add(why, why_cap, "it holds partial manifests (manifest.part-%05d.json)", l->parts[0]);
    } else {
        for (size_t i = 0; i < l->n_shards; i++)
            if (l->shards[i].part < 0) {
                why_add(why, why_cap, "it holds shards of a whole build (shard-%05d)", l->shards[i].number);
                break;
            }
        for (size_t i = 0; i < l->n_parts; i++)
            if (l->parts[i] == w->part) {
                char name[40], h[65];
                xtts_manifest_name(name, w->part);
                xtts_path_join(path, sizeof path, w->dir, name);
                manifest_hash(path, h);
                if (strcmp(h, w->hash)) why_add(why, why_cap, "%s has config_hash %.12s..., this build %.12s...", path, h[0] ? h : "(unreadable)", w->hash);
            }
    }
    if (l->n_base) /* a plain build would list only its own shards: the shared ones would be lost */
        why_add(why, why_cap, "it holds an updated cache sharing shards with an earlier one (base-NNNNN); update it "
                              "with --update");
    if (l->has_manifest) {
        char h[65];
        xtts_path_join(path, sizeof path, w->dir, "manifest.json");
        manifest_hash(path, h);
        if (strcmp(h, w->hash)) {
            char diff[400];
            xtts_cache_config_differences(path, &w->cfg, diff, sizeof diff);
            why_add(why, why_cap, "%s has config_hash %.12s..., this build %.12s...%s%s", path,
                    h[0] ? h : "(unreadable)", w->hash, diff[0] ? ": " : "", diff);
        }
    }
}

/* Resume the own shards when nothing stands against it; otherwise (or on request) replace
 * what the directory holds when forced, and refuse when not. */
static xtts_status resume_or_replace(xtts_cache_writer *w, const xtts_cache_writer_options *opt,
                                     const xtts_dir_listing *l, char *why, size_t why_cap, xtts_error *err) {
    xtts_status st = XTTS_OK;
    if (!why[0]) {
        st = open_existing(w, l, why, why_cap, err);
        if (st == XTTS_ECORRUPT && opt->force) { /* --force replaces a damaged build too */
            why_add(why, why_cap, "%s", err ? err->msg : "damaged shards");
            st = XTTS_OK;
        } else if (st == XTTS_ECORRUPT && err && strlen(err->msg) < sizeof err->msg - 40) {
            strcat(err->msg, "; use --force to rebuild the cache");
        }
    }
    if (!st && opt->replace && (l->n_shards || l->has_manifest || l->n_parts))
        why_add(why, why_cap, "replaced on request");
    if (st || !why[0]) return st;
    if (!opt->force && !opt->replace)
        return xtts_error_set(err, XTTS_EMISMATCH,
                              "%s: holds a cache built with another configuration or layout (%s); use --force to replace it",
                              w->dir, why);
    reset_loaded(w);
    return remove_old(w, l, err);
}

/* What the directory holds decides: resume, start empty, replace, or refuse. */
static xtts_status writer_take_dir(xtts_cache_writer *w, const xtts_cache_writer_options *opt, xtts_error *err) {
    xtts_dir_listing l;
    xtts_status st = xtts_dir_list(w->dir, &l, err);
    if (st) return st;
    char why[1024] = "";
    foreign_contents(w, &l, why, sizeof why);
    st = resume_or_replace(w, opt, &l, why, sizeof why, err);
    xtts_dir_listing_free(&l);
    return st;
}

xtts_status xtts_cache_writer_open(const xtts_cache_writer_options *opt, const xtts_cache_config *cfg,
                                   xtts_cache_writer **out, xtts_error *err) {
    *out = NULL;
    xtts_status st = check_open_options(opt, cfg, err);
    if (st) return st;
    if ((st = xtts_dir_check_cache_or_empty(opt->dir, err))) return st;
    xtts_cache_writer *w = NULL;
    st = writer_new(opt, cfg, &w, err);
    if (!st) st = writer_lock(w, err);
    if (!st) st = writer_take_dir(w, opt, err);
    if (st) {
        writer_free(w);
        return st;
    }
    *out = w;
    return XTTS_OK;
}

uint64_t xtts_cache_writer_next_input(const xtts_cache_writer *w) { return w->next_input; }

uint64_t xtts_cache_writer_count(const xtts_cache_writer *w) {
    uint64_t n = w->n_pend;
    for (size_t i = 0; i < w->n_shards; i++) n += w->shards[i].records;
    return n;
}

/* ---- commit ------------------------------------------------------------------- */

static int put_meta(MDB_txn *txn, MDB_dbi meta, const char *key, const void *data, size_t len) {
    MDB_val k = {strlen(key), (void *)key}, v = {len, (void *)data};
    return mdb_put(txn, meta, &k, &v, 0);
}

/* A record's entries as one blob: for each, the database name's length (u8), the name,
 * the value's length (u32 LE) and the value. NULL with *len 0 for none; -1 when out of
 * memory or a name is not 1..XTTS_CACHE_DB_NAME_MAX bytes. */
static int entries_pack(const xtts_cache_entry *e, size_t n, uint8_t **out, size_t *len) {
    *out = NULL;
    *len = 0;
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        size_t nl = strlen(e[i].db);
        if (nl == 0 || nl > XTTS_CACHE_DB_NAME_MAX || e[i].len > UINT32_MAX) return -1;
        total += 1 + nl + 4 + e[i].len;
    }
    if (!total) return 0;
    uint8_t *b = malloc(total), *p = b;
    if (!b) return -1;
    for (size_t i = 0; i < n; i++) {
        size_t nl = strlen(e[i].db);
        *p++ = (uint8_t)nl;
        memcpy(p, e[i].db, nl);
        p += nl;
        xtts_put_le32(p, (uint32_t)e[i].len);
        p += 4;
        if (e[i].len) memcpy(p, e[i].data, e[i].len);
        p += e[i].len;
    }
    *out = b;
    *len = total;
    return 0;
}

/* A pending record's entries into their databases under its local key. */
static int entries_put(MDB_txn *txn, const pending_record *r, uint8_t key[8]) {
    const uint8_t *p = r->entries, *end = r->entries + r->entries_len;
    int rc = 0;
    while (!rc && p && p < end) {
        char name[XTTS_CACHE_DB_NAME_MAX + 1];
        size_t nl = *p++;
        memcpy(name, p, nl);
        name[nl] = 0;
        p += nl;
        uint32_t vl = xtts_get_le32(p);
        p += 4;
        MDB_dbi dbi;
        rc = mdb_dbi_open(txn, name, MDB_CREATE, &dbi);
        MDB_val k = {8, key}, v = {vl, (void *)p};
        if (!rc) rc = mdb_put(txn, dbi, &k, &v, MDB_APPEND);
        p += vl;
    }
    return rc;
}

/* Everything pending, in one transaction on the last shard. Returns an LMDB code. */
static int commit_txn(xtts_cache_writer *w, const char *rejects_text) {
    shard_info *s = &w->shards[w->n_shards - 1];
    MDB_txn *txn;
    MDB_dbi recs, ids, meta;
    int rc = mdb_txn_begin(w->env, NULL, 0, &txn);
    if (rc) return rc;
    if (!rc) rc = mdb_dbi_open(txn, "records", MDB_CREATE, &recs);
    if (!rc) rc = mdb_dbi_open(txn, "ids", MDB_CREATE, &ids);
    if (!rc) rc = mdb_dbi_open(txn, "meta", MDB_CREATE, &meta);
    MDB_dbi lens = 0;
    int v2 = w->cfg.format_version >= 2;
    if (!rc && v2) rc = mdb_dbi_open(txn, "lengths", MDB_CREATE, &lens);
    /* The records first, then their lengths, then their entries: the small databases' pages
     * of this commit then lie side by side in the file instead of one among every record's
     * pages, and a reader that walks one of them (an update's plan, its sums) touches a run
     * of pages (an update of 100,000 records: 28,578 page faults, now 6,086). */
    for (size_t i = 0; !rc && i < w->n_pend; i++) {
        uint8_t key[8];
        xtts_put_be64(key, s->records + i);
        MDB_val k = {8, key}, v = {w->pend[i].len, w->pend[i].data};
        rc = mdb_put(txn, recs, &k, &v, MDB_APPEND);
        if (rc) break;
        MDB_val ik = {strlen(w->pend[i].id), w->pend[i].id}, iv = {8, key};
        rc = mdb_put(txn, ids, &ik, &iv, MDB_NOOVERWRITE);
        if (!rc && w->pend[i].source) {
            char mk[8 + 512];
            snprintf(mk, sizeof mk, "audio:%s", w->pend[i].id);
            rc = put_meta(txn, meta, mk, w->pend[i].source, strlen(w->pend[i].source));
        }
    }
    for (size_t i = 0; !rc && v2 && i < w->n_pend; i++) {
        uint8_t key[8];
        xtts_put_be64(key, s->records + i);
        MDB_val k = {8, key}, lv = {XTTS_LENGTHS_BYTES, w->pend[i].lengths};
        rc = mdb_put(txn, lens, &k, &lv, MDB_APPEND);
    }
    for (size_t i = 0; !rc && i < w->n_pend; i++) {
        uint8_t key[8];
        xtts_put_be64(key, s->records + i);
        rc = entries_put(txn, &w->pend[i], key);
    }
    const char *fmt = xtts_cache_format_name(w->cfg.format_version);
    if (!rc) rc = put_meta(txn, meta, "format", fmt, strlen(fmt));
    if (!rc) rc = put_meta(txn, meta, "config_hash", w->hash, 64);
    uint8_t next[8];
    xtts_put_be64(next, w->next_input_pending);
    if (!rc) rc = put_meta(txn, meta, "next_input", next, 8);
    if (!rc) rc = put_meta(txn, meta, "rejects", rejects_text, strlen(rejects_text));
    /* The whole state goes into every commit: this shard may be new, and the last
     * shard's meta is the one a resume reads. */
    char key[600];
    for (size_t i = 0; !rc && i < w->n_state; i++) {
        int replaced = 0;
        for (size_t k = 0; k < w->n_state_pending; k++)
            if (!strcmp(w->state_pending[k].key, w->state[i].key)) replaced = 1;
        if (replaced) continue;
        snprintf(key, sizeof key, "state:%s", w->state[i].key);
        rc = put_meta(txn, meta, key, w->state[i].data, w->state[i].len);
    }
    for (size_t i = 0; !rc && i < w->n_state_pending; i++) {
        snprintf(key, sizeof key, "state:%s", w->state_pending[i].key);
        rc = put_meta(txn, meta, key, w->state_pending[i].data, w->state_pending[i].len);
    }
    if (rc) {
        mdb_txn_abort(txn);
        return rc;
    }
    return mdb_txn_commit(txn);
}

/* Fold the pending state into the committed state after a successful commit. */
static xtts_status adopt_pending(xtts_cache_writer *w, xtts_error *err) {
    shard_info *s = &w->shards[w->n_shards - 1];
    for (size_t i = 0; i < w->n_pend; i++) s->bytes += w->pend[i].len;
    s->records += w->n_pend;
    w->next_input = w->next_input_pending;
    if (json_array_extend(w->rejects, w->rejects_pending) || json_array_extend(w->shard_rejects, w->rejects_pending))
        return xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", w->dir);
    for (size_t i = 0; i < w->n_state_pending; i++) {
        state_blob *p = &w->state_pending[i];
        size_t k = 0;
        while (k < w->n_state && strcmp(w->state[k].key, p->key)) k++;
        if (k == w->n_state) {
            state_blob *nb = realloc(w->state, (w->n_state + 1) * sizeof *nb);
            if (!nb) return xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", w->dir);
            w->state = nb;
            w->state[w->n_state++] = *p;
        } else {
            free(w->state[k].key);
            free(w->state[k].data);
            w->state[k] = *p;
        }
        p->key = NULL;
        p->data = NULL;
    }
    w->last_committed = 1;
    pending_clear(w);
    return XTTS_OK;
}

static xtts_status new_shard(xtts_cache_writer *w, xtts_error *err) {
    int number = w->n_shards ? w->shards[w->n_shards - 1].number + 1 : 0;
    if (number > XTTS_MAX_SHARDS - 1)
        return xtts_error_set(err, XTTS_ERANGE, "%s: more than %d shards; raise the shard size", w->dir, XTTS_MAX_SHARDS);
    MDB_env *env;
    xtts_status st = env_open(w, number, 1, &env, err);
    if (st) return st;
    if ((st = shards_push(w, number, 0, 0, err))) { mdb_env_close(env); return st; }
    if (w->env) mdb_env_close(w->env);
    w->env = env;
    w->last_committed = 0;
    json_array_clear(w->shard_rejects);
    return XTTS_OK;
}

/* Why a commit failed, in words: LMDB reports a short write as EIO and loses errno, so
 * look at the filesystem's free space and the file size limit as well. */
static void commit_failure_hint(const xtts_cache_writer *w, const char *path, int rc, char *out, size_t cap) {
    out[0] = '\0';
    if (rc == MDB_MAP_FULL) { snprintf(out, cap, " (map size limit reached)"); return; }
    if (rc != ENOSPC && rc != EDQUOT && rc != EFBIG && rc != EIO) return;
    struct statvfs vfs;
    struct rlimit rl;
    uint64_t need = w->pend_bytes + ((uint64_t)1 << 20);
    if (statvfs(path, &vfs) == 0 && (uint64_t)vfs.f_bavail * vfs.f_frsize < need)
        snprintf(out, cap, " (disk full: %llu bytes free)", (unsigned long long)vfs.f_bavail * vfs.f_frsize);
    else if (rc == EDQUOT)
        snprintf(out, cap, " (disk quota exceeded)");
    else if ((rc == EFBIG || rc == EIO) && getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        snprintf(out, cap, " (file size limit of %llu bytes)", (unsigned long long)rl.rlim_cur);
    else if (rc == ENOSPC)
        snprintf(out, cap, " (disk full)");
    else if (rc == EIO)
        snprintf(out, cap, " (a failed write: device error)");
}

static xtts_status commit_pending(xtts_cache_writer *w, xtts_error *err) {
    xtts_status st = check_failed(w, err);
    if (st) return st;
    int nothing = w->n_pend == 0 && w->n_state_pending == 0 && w->next_input_pending == w->next_input &&
                  json_array_size(w->rejects_pending) == 0;
    if (nothing && (w->last_committed || !w->n_shards)) return XTTS_OK;
    if (!w->n_shards && (st = new_shard(w, err))) return st;

    json_t *all = json_deep_copy(w->shard_rejects);
    if (!all || json_array_extend(all, w->rejects_pending)) {
        json_decref(all);
        return xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", w->dir);
    }
    char *rejects_text = json_dumps(all, JSON_COMPACT);
    if (!rejects_text) {
        json_decref(all);
        return xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", w->dir);
    }
    char path[4096];
    shard_path(w, w->shards[w->n_shards - 1].number, path, sizeof path);
    int rc;
    for (;;) {
        rc = commit_txn(w, rejects_text);
        if (rc == MDB_MAP_RESIZED) { /* another process grew it; adopt the new size */
            rc = mdb_env_set_mapsize(w->env, 0);
            if (!rc) continue;
        }
        if (rc != MDB_MAP_FULL) break;
        MDB_envinfo info;
        mdb_env_info(w->env, &info);
        uint64_t grown = (uint64_t)info.me_mapsize * 2;
        if (grown > MAP_BYTES_MAX) break;
        rc = mdb_env_set_mapsize(w->env, (size_t)grown);
        if (rc) break;
    }
    free(rejects_text);
    json_decref(all);
    if (rc) {
        char hint[160] = "";
        commit_failure_hint(w, path, rc, hint, sizeof hint);
        return fail(w, err, xtts_mdb_status(rc),
                    "%s: commit of %zu records failed: %s%s; the cache holds the first %llu records of the input, "
                    "re-run to resume",
                    path, w->n_pend, mdb_strerror(rc), hint, (unsigned long long)w->next_input);
    }
    return adopt_pending(w, err);
}

xtts_status xtts_cache_writer_commit(xtts_cache_writer *w, xtts_error *err) {
    xtts_status st = check_failed(w, err);
    if (st) return st;
    if (adopt_state_after(w)) return xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", w->dir);
    return commit_pending(w, err);
}

/* ---- put, reject, state ------------------------------------------------------- */

/* Is id stored already (pending, or in a shard)? Only called on a hash hit. */
static xtts_status id_stored(xtts_cache_writer *w, const char *id, int *found, uint64_t *index, xtts_error *err) {
    *found = 0;
    uint64_t first = 0;
    for (size_t i = 0; i < w->n_shards; i++) first += w->shards[i].records;
    for (size_t i = 0; i < w->n_pend; i++)
        if (!strcmp(w->pend[i].id, id)) { *found = 1; *index = first + i; return XTTS_OK; }
    first = 0;
    for (size_t i = 0; i < w->n_shards; i++) {
        shard_info *s = &w->shards[i];
        if (!s->records) continue;
        MDB_env *env = w->env;
        int own = 0;
        if (i + 1 != w->n_shards) {
            xtts_status st = env_open(w, s->number, 0, &env, err);
            if (st) return st;
            own = 1;
        }
        MDB_txn *txn;
        MDB_dbi ids;
        MDB_val k = {strlen(id), (void *)id}, v;
        int rc = mdb_txn_begin(env, NULL, MDB_RDONLY, &txn);
        if (!rc) {
            rc = mdb_dbi_open(txn, "ids", 0, &ids);
            if (!rc) rc = mdb_get(txn, ids, &k, &v);
            if (!rc && v.mv_size == 8) { *found = 1; *index = first + xtts_get_be64(v.mv_data); }
            mdb_txn_abort(txn);
        }
        if (own) mdb_env_close(env);
        if (rc && rc != MDB_NOTFOUND) {
            char path[4096];
            shard_path(w, s->number, path, sizeof path);
            return xtts_error_set(err, xtts_mdb_status(rc), "%s: %s", path, mdb_strerror(rc));
        }
        if (*found) return XTTS_OK;
        first += s->records;
    }
    return XTTS_OK;
}

static xtts_status check_input(xtts_cache_writer *w, uint64_t input_index, const char *id, xtts_error *err) {
    xtts_status st = check_failed(w, err);
    if (st) return st;
    if (input_index < w->next_input_pending)
        return xtts_error_set(err, XTTS_EUSAGE, "%s: record %llu (%s): not after the last record stored (record %llu)",
                              w->dir, (unsigned long long)input_index + 1, id ? id : "",
                              (unsigned long long)w->next_input_pending);
    return XTTS_OK;
}

/* After a put or reject was added: adopt the state set before it, commit when due. */
static xtts_status after_input(xtts_cache_writer *w, xtts_error *err) {
    if (adopt_state_after(w)) return xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", w->dir);
    if (w->ops_pending >= w->commit_every || w->pend_bytes >= PENDING_BYTES_MAX) return commit_pending(w, err);
    return XTTS_OK;
}

static xtts_status put_record(xtts_cache_writer *w, uint64_t input_index, const char *id, const void *record,
                              size_t len, const char *source, const xtts_cache_entry *entries, size_t n_entries,
                              xtts_error *err);

xtts_status xtts_cache_writer_put(xtts_cache_writer *w, uint64_t input_index, const char *id, const void *record,
                                  size_t len, xtts_error *err) {
    return put_record(w, input_index, id, record, len, NULL, NULL, 0, err);
}

/* The checks of a record before it is taken: its id, its header, the configuration's shape. */
static xtts_status check_record(xtts_cache_writer *w, uint64_t input_index, const char *id, const void *record,
                                size_t len, xtts_record_header *hdr, xtts_error *err);

static xtts_status put_record(xtts_cache_writer *w, uint64_t input_index, const char *id, const void *record,
                              size_t len, const char *source, const xtts_cache_entry *entries, size_t n_entries,
                              xtts_error *err) {
    xtts_record_header hdr;
    xtts_status st = check_record(w, input_index, id, record, len, &hdr, err);
    if (st) return st;
    for (size_t i = 0; i < n_entries; i++)
        if (xtts_cache_db_reserved(entries[i].db) || !entries[i].db[0] || strlen(entries[i].db) > XTTS_CACHE_DB_NAME_MAX)
            return xtts_error_set(err, XTTS_EUSAGE, "%s: record '%s': '%.40s' cannot name a record's database", w->dir,
                                  id, entries[i].db);
    size_t id_len = strlen(id);
    /* into the filter now (a refused record's bits only add to the false "maybe"s) */
    int maybe = xtts_id_filter_add(&w->ids, xtts_id_hash(id, id_len));
    if (maybe < 0) return xtts_error_set(err, XTTS_ENOMEM, "%s: record '%s': out of memory", w->dir, id);
    if (maybe) {
        int found;
        uint64_t at = 0;
        if ((st = id_stored(w, id, &found, &at, err))) return st;
        if (found)
            return xtts_error_set(err, XTTS_EINPUT, "%s: record %llu (%s): duplicate id, already stored at index %llu",
                                  w->dir, (unsigned long long)input_index + 1, id, (unsigned long long)at);
    }
    /* Rotate when this record would take a non-empty shard past shard_bytes. */
    if (w->n_shards) {
        shard_info *s = &w->shards[w->n_shards - 1];
        if (s->records + w->n_pend > 0 && s->bytes + w->pend_bytes + len > w->shard_bytes) {
            if ((st = commit_pending(w, err))) return st; /* without state_after: see the top */
            if ((st = new_shard(w, err))) return st;
        }
    } else if ((st = new_shard(w, err))) {
        return st;
    }
    if (w->n_pend == w->cap_pend) {
        size_t nc = w->cap_pend ? 2 * w->cap_pend : 64;
        pending_record *p = realloc(w->pend, nc * sizeof *p);
        if (!p) return xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", w->dir);
        w->pend = p;
        w->cap_pend = nc;
    }
    pending_record *p = &w->pend[w->n_pend];
    p->input = input_index;
    p->id = strdup(id);
    p->data = malloc(len);
    p->len = len;
    p->source = source ? strdup(source) : NULL;
    int packed = entries_pack(entries, n_entries, &p->entries, &p->entries_len);
    if (!p->id || !p->data || (source && !p->source) || packed) {
        free(p->id);
        free(p->data);
        free(p->source);
        free(p->entries);
        return xtts_error_set(err, XTTS_ENOMEM, "%s: record '%s': out of memory", w->dir, id);
    }
    memcpy(p->data, record, len);
    xtts_lengths_pack(&hdr, p->lengths);
    w->n_pend++;
    w->pend_bytes += len;
    w->ops_pending++;
    w->next_input_pending = input_index + 1;
    return after_input(w, err);
}

static xtts_status check_record(xtts_cache_writer *w, uint64_t input_index, const char *id, const void *record,
                                size_t len, xtts_record_header *hdr, xtts_error *err) {
    xtts_status st = check_input(w, input_index, id, err);
    if (st) return st;
    size_t id_len = id ? strlen(id) : 0;
    if (id_len == 0) return xtts_error_set(err, XTTS_EINPUT, "%s: record %llu: empty id", w->dir, (unsigned long long)input_index + 1);
    if (id_len > XTTS_ID_MAX_BYTES)
        return xtts_error_set(err, XTTS_ERANGE, "%s: record '%.40s...': id of %zu bytes, the store keeps ids up to %d bytes",
                              w->dir, id, id_len, XTTS_ID_MAX_BYTES);
    xtts_error rerr;
    if (xtts_record_parse_header(record, len, hdr, &rerr))
        return xtts_error_set(err, XTTS_EINPUT, "%s: record '%s': not a valid record: %s", w->dir, id, rerr.msg);
    if (strcmp(hdr->id, id))
        return xtts_error_set(err, XTTS_EINPUT, "%s: record '%s': the encoded record carries id '%s'", w->dir, id, hdr->id);
    /* Every record of a cache has the configuration's fixed shape. */
    int want_frames = xtts_cache_config_padded_frames(&w->cfg, (int)hdr->n_frames);
    unsigned want_flags = w->cfg.shuffle ? XTTS_RECORD_SHUFFLED : 0;
    if (hdr->n_mels != w->cfg.mel.n_mels || hdr->dtype != w->cfg.dtype || hdr->flags != want_flags ||
        hdr->tokens_padded != (uint32_t)w->cfg.max_tokens || want_frames == 0 || hdr->frames_padded != (uint32_t)want_frames)
        return xtts_error_set(err, XTTS_EINPUT,
                              "%s: record '%s': shape (%u mels, %s%s, %u tokens, %u of %u frames) does not match the "
                              "cache configuration (%d mels, %s%s, %d tokens, %d frames)",
                              w->dir, id, hdr->n_mels, xtts_dtype_name((xtts_dtype)hdr->dtype),
                              (hdr->flags & XTTS_RECORD_SHUFFLED) ? " shuffled" : "", hdr->tokens_padded, hdr->n_frames,
                              hdr->frames_padded, w->cfg.mel.n_mels, xtts_dtype_name((xtts_dtype)w->cfg.dtype),
                              w->cfg.shuffle ? " shuffled" : "", w->cfg.max_tokens, want_frames);
    int want_audio = w->cfg.format_version >= 2 ? w->cfg.audio : XTTS_AUDIO_NONE;
    if (hdr->version != (unsigned)w->cfg.format_version || hdr->audio != want_audio ||
        (hdr->version >= 2 && hdr->pad_token != (uint32_t)w->cfg.pad_token))
        return xtts_error_set(err, XTTS_EINPUT,
                              "%s: record '%s': version %u with waveform %s and pad token %u does not match the cache "
                              "configuration (version %d, waveform %s, pad token %d)",
                              w->dir, id, hdr->version, xtts_audio_store_name(hdr->audio), hdr->pad_token,
                              w->cfg.format_version, xtts_audio_store_name(want_audio), w->cfg.pad_token);
    return XTTS_OK;
}

xtts_status xtts_cache_writer_reject(xtts_cache_writer *w, uint64_t input_index, const char *id, const char *reason,
                                     xtts_error *err) {
    xtts_status st = check_input(w, input_index, id, err);
    if (st) return st;
    char line[1024];
    snprintf(line, sizeof line, "%s", reason ? reason : "");
    for (char *c = line; *c; c++)
        if (*c == '\n' || *c == '\r' || *c == '\t') *c = ' ';
    /* json_string refuses text that is not UTF-8; say so rather than lose the reject. */
    json_t *jid = json_string(id ? id : "");
    json_t *jreason = json_string(line);
    if (!jid) jid = json_string("(id not UTF-8)");
    if (!jreason) jreason = json_string("(reason not UTF-8)");
    json_t *r = json_pack("{s:I, s:o, s:o}", "input", (json_int_t)input_index, "id", jid, "reason", jreason);
    if (!r || json_array_append_new(w->rejects_pending, r))
        return xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", w->dir);
    w->ops_pending++;
    w->next_input_pending = input_index + 1;
    return after_input(w, err);
}

xtts_status xtts_cache_writer_set_state(xtts_cache_writer *w, const char *key, const void *data, size_t len,
                                        xtts_error *err) {
    xtts_status st = check_failed(w, err);
    if (st) return st;
    size_t kl = key ? strlen(key) : 0;
    if (kl == 0 || kl > 200) return xtts_error_set(err, XTTS_EUSAGE, "%s: state key must be 1 to 200 bytes", w->dir);
    uint8_t *copy = malloc(len ? len : 1);
    if (!copy) return xtts_error_set(err, XTTS_ENOMEM, "%s: state '%s': out of memory", w->dir, key);
    if (len) memcpy(copy, data, len);
    if (blob_set(&w->state_after, &w->n_state_after, key, copy, len)) {
        free(copy);
        return xtts_error_set(err, XTTS_ENOMEM, "%s: state '%s': out of memory", w->dir, key);
    }
    return XTTS_OK;
}

xtts_status xtts_cache_writer_get_state(xtts_cache_writer *w, const char *key, void **data, size_t *len, xtts_error *err) {
    *data = NULL;
    *len = 0;
    for (size_t i = 0; i < w->n_state; i++) {
        if (strcmp(w->state[i].key, key)) continue;
        void *p = malloc(w->state[i].len ? w->state[i].len : 1);
        if (!p) return xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", w->dir);
        memcpy(p, w->state[i].data, w->state[i].len);
        *data = p;
        *len = w->state[i].len;
        return XTTS_OK;
    }
    return xtts_error_set(err, XTTS_ENOTFOUND, "%s: no writer state '%s'", w->dir, key);
}

uint64_t xtts_cache_writer_rejected(const xtts_cache_writer *w) {
    return json_array_size(w->rejects) + json_array_size(w->rejects_pending);
}

/* Rejects so far, committed and pending, as a JSON array (a new reference; NULL when out of
 * memory). */
static json_t *all_rejects(const xtts_cache_writer *w) {
    json_t *all = json_deep_copy(w->rejects);
    if (all) json_array_extend(all, w->rejects_pending);
    return all;
}

void xtts_part_block(uint64_t n, int part, int n_parts, uint64_t *first, uint64_t *end) {
    if (part < 0 || n_parts < 1 || part >= n_parts) { *first = 0; *end = n; return; }
    /* n * part fits: n is bounded by memory (inputs are held), part < 100000 */
    unsigned __int128 a = (unsigned __int128)n * (unsigned)part, b = (unsigned __int128)n * (unsigned)(part + 1);
    *first = (uint64_t)(a / (unsigned)n_parts);
    *end = (uint64_t)(b / (unsigned)n_parts);
}

/* ---- finish, abort ------------------------------------------------------------ */

/* The manifest: what the build adds (extra), then the keys the writer fills. */
static json_t *build_manifest(xtts_cache_writer *w, const xtts_manifest_extra *extra) {
    json_t *m = xtts_manifest_extra_to_json(extra);
    json_t *shards = json_array();
    json_t *cfg = xtts_cache_config_to_json(&w->cfg);
    json_t *rejects = all_rejects(w);
    if (!m || !shards || !cfg || !rejects) goto oom;
    uint64_t first = 0;
    for (size_t i = 0; i < w->n_shards; i++) {
        char name[32];
        xtts_shard_name(name, w->part, w->shards[i].number);
        json_t *s = json_pack("{s:s, s:I, s:I, s:I}", "name", name, "records", (json_int_t)w->shards[i].records, "bytes",
                              (json_int_t)w->shards[i].bytes, "first_index", (json_int_t)first);
        if (!s || json_array_append_new(shards, s)) goto oom;
        first += w->shards[i].records;
    }
    json_object_set_new(m, "format_version", json_integer(w->cfg.format_version));
    json_object_set_new(m, "tool_version", json_string(XTTS_VERSION));
    json_object_set_new(m, "records", json_integer((json_int_t)first));
    json_object_set_new(m, "config", cfg);
    json_object_set_new(m, "config_hash", json_string(w->hash));
    json_object_set_new(m, "shards", shards);
    json_object_set_new(m, "rejected", json_integer((json_int_t)json_array_size(rejects)));
    json_object_set_new(m, "rejects", rejects);
    if (w->part >= 0) {
        json_object_set_new(m, "part", json_integer(w->part));
        json_object_set_new(m, "n_parts", json_integer(w->n_parts));
        json_object_set_new(m, "part_inputs", json_pack("[I, I]", (json_int_t)w->part_first, (json_int_t)w->part_end));
    }
    return m;
oom:
    json_decref(m);
    json_decref(shards);
    json_decref(cfg);
    json_decref(rejects);
    return NULL;
}

xtts_status xtts_cache_writer_finish(xtts_cache_writer *w, const xtts_manifest_extra *extra, xtts_error *err) {
    xtts_status st = xtts_cache_writer_commit(w, err);
    if (st) { writer_free(w); return st; }
    const xtts_manifest_extra none = {0};
    json_t *m = build_manifest(w, extra ? extra : &none);
    if (!m) {
        xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory building the manifest", w->dir);
        writer_free(w);
        return XTTS_ENOMEM;
    }
    char name[40], path[4096];
    xtts_manifest_name(name, w->part);
    xtts_path_join(path, sizeof path, w->dir, name);
    /* Never write a manifest that would not load back (e.g. "stats" in extra of another
     * n_mels than the configuration's). */
    char *text = json_dumps(m, JSON_COMPACT);
    json_t *check = NULL;
    st = text ? xtts_manifest_parse(text, strlen(text), path, &check, err)
              : xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", path);
    free(text);
    json_decref(check);
    if (!st) st = xtts_manifest_write(path, m, err);
    json_decref(m);
    writer_free(w);
    return st;
}

void xtts_cache_writer_abort(xtts_cache_writer *w) { writer_free(w); }

xtts_status xtts_cache_writer_put_source(xtts_cache_writer *w, uint64_t input_index, const char *id, const void *record,
                                         size_t len, const char *source_path, xtts_error *err) {
    return put_record(w, input_index, id, record, len, source_path, NULL, 0, err);
}

xtts_status xtts_cache_writer_put_entries(xtts_cache_writer *w, uint64_t input_index, const char *id,
                                          const void *record, size_t len, const char *source_path,
                                          const xtts_cache_entry *entries, size_t n_entries, xtts_error *err) {
    return put_record(w, input_index, id, record, len, source_path, entries, n_entries, err);
}

int xtts_cache_db_reserved(const char *name) {
    return !strcmp(name, "records") || !strcmp(name, "ids") || !strcmp(name, "meta") || !strcmp(name, "lengths");
}
