/* reader.c — the records of an opened cache (cache.c): by global index or id, raw or
 * decoded, a shard's database walked, per-record values, fixed-shape batches, and version
 * 2's lengths index, text, waveform and aligned segments. A reader holds one read
 * transaction per shard it touched (pinning its environment in the cache's pool); every
 * call into LMDB and every read of mapped bytes runs under the fault guard (guard.h).
 */
#include "cache/store/read/cache_internal.h"
#include "cache/store/read/guard.h"

#include <errno.h>
#include <lmdb.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

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
                xtts_shard_unpin(r->c, i);
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
    xtts_shard_unpin(r->c, si);
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
    xtts_status st = xtts_shard_pin(r->c, si, err);
    if (st) return st;
    MDB_txn *volatile t = NULL;
    int rc;
    GUARD(sig)
    rc = mdb_txn_begin(s->env, NULL, MDB_RDONLY, (MDB_txn **)&t);
    GUARD_END(sig)
    if (sig || rc) {
        xtts_shard_unpin(r->c, si);
        if (sig) return xtts_error_set(err, XTTS_ECORRUPT, "%s: damaged meta pages (%s)", s->name, xtts_guard_signame(sig));
        return xtts_error_set(err, rc > 0 ? xtts_resource_status(rc) : XTTS_EIO, "%s: cannot begin a read transaction (%s)",
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
    return xtts_cache_record_error(r->c->shards[si].name, index, id, inner, err);
}

/* the record's ids inside the manifest's tables, its fault named with shard, index and id */
static xtts_status check_table_ids(xtts_cache_reader *r, size_t si, uint64_t index, const xtts_record_header *h,
                                   xtts_error *err) {
    xtts_error e;
    if (!xtts_cache_check_table_ids(r->c, h, &e)) return XTTS_OK;
    return xtts_cache_record_error(r->c->shards[si].name, index, h->id, &e, err);
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
