/* writer_commit.c — records into the cache writer and out to its shards: put (the checks
 * of a record, duplicate ids, a new shard when the next record would overflow this one),
 * reject, the caller's state, and the commit that writes all that is pending in one LMDB
 * transaction (growing the map and replaying on MDB_MAP_FULL). writer.c says how commits,
 * state and rotation fit together.
 */
#include "cache/store/writer_core.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#define PENDING_BYTES_MAX ((uint64_t)2 << 20) /* commit early past this much buffered data */
#define MAP_BYTES_MAX ((uint64_t)1 << 42)

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
    xtts_writer_pending_clear(w);
    return XTTS_OK;
}

static xtts_status new_shard(xtts_cache_writer *w, xtts_error *err) {
    int number = w->n_shards ? w->shards[w->n_shards - 1].number + 1 : 0;
    if (number > XTTS_MAX_SHARDS - 1)
        return xtts_error_set(err, XTTS_ERANGE, "%s: more than %d shards; raise the shard size", w->dir, XTTS_MAX_SHARDS);
    MDB_env *env;
    xtts_status st = xtts_writer_env_open(w, number, 1, &env, err);
    if (st) return st;
    if ((st = xtts_writer_shards_push(w, number, 0, 0, err))) { mdb_env_close(env); return st; }
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
    xtts_writer_shard_path(w, w->shards[w->n_shards - 1].number, path, sizeof path);
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
            xtts_status st = xtts_writer_env_open(w, s->number, 0, &env, err);
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
            xtts_writer_shard_path(w, s->number, path, sizeof path);
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

xtts_status xtts_cache_writer_put_source(xtts_cache_writer *w, uint64_t input_index, const char *id, const void *record,
                                         size_t len, const char *source_path, xtts_error *err) {
    return put_record(w, input_index, id, record, len, source_path, NULL, 0, err);
}

xtts_status xtts_cache_writer_put_entries(xtts_cache_writer *w, uint64_t input_index, const char *id,
                                          const void *record, size_t len, const char *source_path,
                                          const xtts_cache_entry *entries, size_t n_entries, xtts_error *err) {
    return put_record(w, input_index, id, record, len, source_path, entries, n_entries, err);
}
