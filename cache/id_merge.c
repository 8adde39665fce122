/* id_merge.c — several shards' "ids" databases read together in key order
 * (cache/writer_internal.h). The merge of a build in parts and xtts-cache-verify find an id
 * stored twice with it, in memory that does not grow with the records.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/writer_internal.h"

typedef struct {
    const char *path;
    MDB_env *env;
    MDB_txn *txn;
    MDB_cursor *cur;
    MDB_val k, v;
    int live;
} id_cursor;

struct xtts_id_merge {
    id_cursor *c;
    size_t n;
    id_cursor *last; /* returned by the last call: advanced at the next */
};

void xtts_id_merge_close(xtts_id_merge *m) {
    if (!m) return;
    for (size_t i = 0; i < m->n; i++) {
        if (m->c[i].cur) mdb_cursor_close(m->c[i].cur);
        if (m->c[i].txn) mdb_txn_abort(m->c[i].txn);
        if (m->c[i].env) mdb_env_close(m->c[i].env);
    }
    free(m->c);
    free(m);
}

static xtts_status cursor_open(id_cursor *x, xtts_error *err) {
    xtts_status st = xtts_lmdb_file_check(x->path, err);
    if (st) return st;
    MDB_dbi dbi;
    int rc = mdb_env_create(&x->env);
    if (!rc) rc = mdb_env_set_maxdbs(x->env, 4);
    if (!rc) rc = mdb_env_open(x->env, x->path, MDB_RDONLY | MDB_NOLOCK | MDB_NORDAHEAD, 0644);
    if (!rc) rc = mdb_txn_begin(x->env, NULL, MDB_RDONLY, &x->txn);
    if (!rc) rc = mdb_dbi_open(x->txn, "ids", 0, &dbi);
    if (!rc) rc = mdb_cursor_open(x->txn, dbi, &x->cur);
    if (!rc) rc = mdb_cursor_get(x->cur, &x->k, &x->v, MDB_FIRST);
    x->live = rc == 0;
    if (rc == MDB_NOTFOUND) rc = 0;
    if (rc) return xtts_error_set(err, xtts_mdb_status(rc), "%s: cannot read its ids: %s", x->path, mdb_strerror(rc));
    return XTTS_OK;
}

xtts_status xtts_id_merge_open(const char *const *paths, size_t n, xtts_id_merge **out, xtts_error *err) {
    *out = NULL;
    xtts_id_merge *m = calloc(1, sizeof *m);
    if (!m || !(m->c = calloc(n ? n : 1, sizeof *m->c))) {
        free(m);
        return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    }
    m->n = n;
    for (size_t i = 0; i < n; i++) {
        m->c[i].path = paths[i];
        xtts_status st = cursor_open(&m->c[i], err);
        if (st) {
            xtts_id_merge_close(m);
            return st;
        }
    }
    *out = m;
    return XTTS_OK;
}

/* Memcmp order, a prefix first: LMDB's default key order. */
static int key_cmp(const MDB_val *a, const MDB_val *b) {
    size_t n = a->mv_size < b->mv_size ? a->mv_size : b->mv_size;
    int r = memcmp(a->mv_data, b->mv_data, n);
    return r ? r : (a->mv_size > b->mv_size) - (a->mv_size < b->mv_size);
}

xtts_status xtts_id_merge_next(xtts_id_merge *m, int *got, const void **id, size_t *len, size_t *source,
                               uint64_t *local, xtts_error *err) {
    *got = 0;
    id_cursor *x = m->last;
    if (x) {
        m->last = NULL;
        int rc = mdb_cursor_get(x->cur, &x->k, &x->v, MDB_NEXT);
        if (rc == MDB_NOTFOUND) {
            x->live = 0;
        } else if (rc) {
            x->live = 0;
            return xtts_error_set(err, xtts_mdb_status(rc), "%s: cannot read its ids: %s", x->path, mdb_strerror(rc));
        }
    }
    id_cursor *min = NULL;
    for (size_t i = 0; i < m->n; i++) /* the first cursor holding the smallest id */
        if (m->c[i].live && (!min || key_cmp(&m->c[i].k, &min->k) < 0)) min = &m->c[i];
    if (!min) return XTTS_OK;
    m->last = min;
    *got = 1;
    *id = min->k.mv_data;
    *len = min->k.mv_size;
    *source = (size_t)(min - m->c);
    *local = min->v.mv_size == 8 ? xtts_get_be64(min->v.mv_data) : UINT64_MAX;
    return XTTS_OK;
}
