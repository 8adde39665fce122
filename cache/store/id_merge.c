/* id_merge.c — several shards' "ids" databases read together in key order
 * (cache/store/writer_internal.h). The merge of a build in parts and xtts-cache-verify find an id
 * stored twice with it, in memory that does not grow with the records.
 *
 * Descriptors and address space do not grow with the shards either: each shard's ids are
 * read a batch at a time into memory, its environment opened for the batch (mapping the
 * data file as it is) and closed again, so a merge over any number of shards holds one
 * data.mdb open at a time. The next batch starts after the last id read (MDB_SET_RANGE).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache/store/writer_internal.h"

enum { BATCH = 256 }; /* ids read per opening of a shard */

/* A range of a shard directory's local indices that a source of the merge gives. */
typedef struct {
    uint64_t lo, count; /* local indices lo..lo+count-1 (count UINT64_MAX: every one) */
    size_t source;      /* the source's index among the paths given */
} id_range;

/* One shard directory's "ids", read a batch at a time: those of every range the sources give
 * of it (a shared directory is listed once a run of kept records, thousands of times after
 * many updates: one cursor for them all keeps the merge's memory and its choice of the
 * smallest id independent of the runs). */
typedef struct {
    const char *path;
    id_range *ranges;    /* [n_ranges], by lo */
    size_t n_ranges;
    char *arena;         /* the batch's ids, one after another */
    size_t arena_cap;
    size_t off[BATCH], len[BATCH];
    uint64_t local[BATCH]; /* each id's local index within its range */
    size_t source[BATCH];  /* and that range's source */
    size_t n, pos;       /* ids in the batch, the current one */
    char last[512];      /* the batch's last id: where the next batch starts */
    size_t last_len;
    int started, ended;  /* a batch was read; the database has no ids past the batch */
} id_cursor;

struct xtts_id_merge {
    id_cursor *c;
    size_t n;
    id_cursor *last; /* returned by the last call: advanced at the next */
};

void xtts_id_merge_close(xtts_id_merge *m) {
    if (!m) return;
    for (size_t i = 0; i < m->n; i++) free(m->c[i].arena), free(m->c[i].ranges);
    free(m->c);
    free(m);
}

/* The range of x that holds local index local (the last that starts at or before it), or NULL. */
static const id_range *range_of(const id_cursor *x, uint64_t local) {
    size_t a = 0, b = x->n_ranges;
    while (a < b) {
        size_t mid = a + (b - a) / 2;
        if (x->ranges[mid].lo <= local) a = mid + 1; else b = mid;
    }
    const id_range *r = a ? &x->ranges[a - 1] : NULL;
    return r && (r->count == UINT64_MAX || local - r->lo < r->count) ? r : NULL;
}

/* Copy one entry into the batch; -1 when out of memory or the id does not fit last. */
static int batch_add(id_cursor *x, const MDB_val *k, const MDB_val *v, size_t *used) {
    uint64_t local = v->mv_size == 8 ? xtts_get_be64(v->mv_data) : UINT64_MAX;
    const id_range *r = range_of(x, local);
    if (!r) return 0; /* in none of the ranges */
    if (k->mv_size >= sizeof x->last) return -1;
    if (*used + k->mv_size > x->arena_cap) {
        size_t cap = x->arena_cap ? x->arena_cap * 2 : 16384;
        while (cap < *used + k->mv_size) cap *= 2;
        char *p = realloc(x->arena, cap);
        if (!p) return -1;
        x->arena = p;
        x->arena_cap = cap;
    }
    memcpy(x->arena + *used, k->mv_data, k->mv_size);
    x->off[x->n] = *used;
    x->len[x->n] = k->mv_size;
    x->local[x->n] = local == UINT64_MAX ? local : local - r->lo;
    x->source[x->n] = r->source;
    *used += k->mv_size;
    x->n++;
    return 0;
}

/* The entries of cur from the first (or the one after x->last) into the batch. */
static int batch_read(id_cursor *x, MDB_cursor *cur) {
    MDB_val k, v;
    int rc;
    if (!x->started) {
        rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST);
    } else {
        k.mv_size = x->last_len;
        k.mv_data = x->last;
        rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
        if (!rc && k.mv_size == x->last_len && !memcmp(k.mv_data, x->last, x->last_len))
            rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
    }
    size_t used = 0;
    x->n = x->pos = 0;
    while (!rc && x->n < BATCH) {
        if (batch_add(x, &k, &v, &used)) return ENOMEM;
        rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
    }
    x->started = 1;
    x->ended = rc == MDB_NOTFOUND;
    if (x->n) {
        x->last_len = x->len[x->n - 1];
        memcpy(x->last, x->arena + x->off[x->n - 1], x->last_len);
    }
    return rc == MDB_NOTFOUND ? 0 : rc;
}

/* Read the shard's next batch of ids, opening its environment for the time of the read. */
static xtts_status batch_fill(id_cursor *x, xtts_error *err) {
    xtts_status st = xtts_lmdb_file_check(x->path, err);
    if (st) return st;
    MDB_env *env = NULL;
    MDB_txn *txn = NULL;
    MDB_cursor *cur = NULL;
    MDB_dbi dbi;
    int rc = xtts_lmdb_env_open(&env, x->path, XTTS_LMDB_SHARD_READ, 0);
    if (!rc) rc = mdb_txn_begin(env, NULL, MDB_RDONLY, &txn);
    if (!rc) rc = mdb_dbi_open(txn, "ids", 0, &dbi);
    if (!rc) rc = mdb_cursor_open(txn, dbi, &cur);
    if (!rc) rc = batch_read(x, cur);
    if (cur) mdb_cursor_close(cur);
    if (txn) mdb_txn_abort(txn);
    if (env) mdb_env_close(env);
    if (rc) {
        x->n = x->pos = 0;
        x->ended = 1;
        return xtts_error_set(err, xtts_mdb_status(rc), "%s: cannot read its ids: %s", x->path, mdb_strerror(rc));
    }
    return XTTS_OK;
}

xtts_status xtts_id_merge_open(const char *const *paths, size_t n, xtts_id_merge **out, xtts_error *err) {
    return xtts_id_merge_open_ranges(paths, NULL, NULL, n, out, err);
}

static int cmp_id_range(const void *a, const void *b) {
    const id_range *x = a, *y = b;
    return (x->lo > y->lo) - (x->lo < y->lo);
}

/* The cursors of the sources: one per directory (the sources of one path share it), each with
 * its ranges sorted. Errors: XTTS_ENOMEM. */
static xtts_status group_sources(xtts_id_merge *m, const char *const *paths, const uint64_t *lo, const uint64_t *count,
                                 size_t n, xtts_error *err) {
    for (size_t i = 0; i < n; i++) {
        size_t c = 0;
        while (lo && c < m->n && strcmp(m->c[c].path, paths[i])) c++; /* every id of a path: a cursor of its own */
        if (!lo || c == m->n) {
            c = m->n++;
            m->c[c].path = paths[i];
            if (!(m->c[c].ranges = malloc(sizeof *m->c[c].ranges))) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
        } else {
            id_range *g = realloc(m->c[c].ranges, (m->c[c].n_ranges + 1) * sizeof *g);
            if (!g) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
            m->c[c].ranges = g;
        }
        m->c[c].ranges[m->c[c].n_ranges++] = (id_range){lo ? lo[i] : 0, count ? count[i] : UINT64_MAX, i};
    }
    for (size_t c = 0; c < m->n; c++) qsort(m->c[c].ranges, m->c[c].n_ranges, sizeof *m->c[c].ranges, cmp_id_range);
    return XTTS_OK;
}

xtts_status xtts_id_merge_open_ranges(const char *const *paths, const uint64_t *lo, const uint64_t *count, size_t n,
                                      xtts_id_merge **out, xtts_error *err) {
    *out = NULL;
    xtts_id_merge *m = calloc(1, sizeof *m);
    if (!m || !(m->c = calloc(n ? n : 1, sizeof *m->c))) {
        free(m);
        return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    }
    xtts_status st = group_sources(m, paths, lo, count, n, err);
    for (size_t i = 0; !st && i < m->n; i++) st = batch_fill(&m->c[i], err);
    if (st) {
        xtts_id_merge_close(m);
        return st;
    }
    *out = m;
    return XTTS_OK;
}

/* Memcmp order, a prefix first: LMDB's default key order. */
static int key_cmp(const char *a, size_t an, const char *b, size_t bn) {
    size_t n = an < bn ? an : bn;
    int r = memcmp(a, b, n);
    return r ? r : (an > bn) - (an < bn);
}

static int live(const id_cursor *x) { return x->pos < x->n; }
static const char *key_of(const id_cursor *x) { return x->arena + x->off[x->pos]; }

xtts_status xtts_id_merge_next(xtts_id_merge *m, int *got, const void **id, size_t *len, size_t *source,
                               uint64_t *local, xtts_error *err) {
    *got = 0;
    id_cursor *x = m->last;
    if (x) {
        m->last = NULL;
        x->pos++;
        if (x->pos == x->n && !x->ended) {
            xtts_status st = batch_fill(x, err);
            if (st) return st;
        }
    }
    id_cursor *min = NULL;
    for (size_t i = 0; i < m->n; i++) { /* the smallest id; of equal ones, the lowest source's */
        id_cursor *c = &m->c[i];
        if (!live(c)) continue;
        int d = min ? key_cmp(key_of(c), c->len[c->pos], key_of(min), min->len[min->pos]) : -1;
        if (d < 0 || (d == 0 && c->source[c->pos] < min->source[min->pos])) min = c;
    }
    if (!min) return XTTS_OK;
    m->last = min;
    *got = 1;
    *id = key_of(min);
    *len = min->len[min->pos];
    *source = min->source[min->pos];
    *local = min->local[min->pos];
    return XTTS_OK;
}
