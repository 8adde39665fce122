/* keys.c — a finished cache as a source of records, looked up by id and content key
 * (keys.h). Each shard stays open read-only with one read transaction for the source's
 * life, so what a lookup returns points into the mapped shard and is copied only by the
 * writer that stores it. */
#include "cache/store/keys.h"

#include <errno.h>
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/store/writer_internal.h"
#include "formats/manifest.h"

typedef struct {
    MDB_env *env;
    MDB_txn *txn;
    MDB_dbi records, ids, keys, lengths;
    int has_lengths; /* a "lengths" database (format 2): a record's figures without reading it */
    MDB_dbi own[XTTS_SHARD_MAX_DBS]; /* every database of the records' own, "keys" among them */
    char *own_names[XTTS_SHARD_MAX_DBS];
    size_t n_own;
    char path[4096];
    char name[24];
    uint64_t bytes; /* the sum of its "records" value sizes, referenced or not */
    int empty;      /* no record, and so no "keys" database */
} source_shard;

/* A manifest entry: the records of a range of one directory's keys. */
typedef struct {
    size_t dir;
    uint64_t local_first, records;
} source_range;

struct xtts_cache_source {
    source_shard *shards; /* one per directory */
    size_t n_shards;
    source_range *ranges; /* one per manifest entry that lists records, by directory and first key */
    size_t n_ranges;
    int ranged;           /* manifest format_version 3: a directory's keys outside its ranges are no record */
    uint64_t records;
};

static int cmp_range(const void *a, const void *b) {
    const source_range *x = a, *y = b;
    if (x->dir != y->dir) return x->dir < y->dir ? -1 : 1;
    return (x->local_first > y->local_first) - (x->local_first < y->local_first);
}

size_t xtts_keys_value_bytes(int n_mels) { return XTTS_CONTENT_KEY_BYTES + 4 + 16 * (size_t)n_mels; }

static void put_f64(uint8_t *p, double d) {
    uint64_t u;
    memcpy(&u, &d, 8);
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(u >> (8 * i));
}

static double get_f64(const uint8_t *p) {
    uint64_t u;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(&u, p, 8); /* the stored order (the loop below is not merged into one load) */
#else
    u = 0;
    for (int i = 0; i < 8; i++) u |= (uint64_t)p[i] << (8 * i);
#endif
    double d;
    memcpy(&d, &u, 8);
    return d;
}

void xtts_keys_value_pack(const uint8_t key[XTTS_CONTENT_KEY_BYTES], int n_mels, const double *sum,
                          const double *sumsq, uint8_t *out) {
    memcpy(out, key, XTTS_CONTENT_KEY_BYTES);
    uint8_t *p = out + XTTS_CONTENT_KEY_BYTES;
    xtts_put_le32(p, (uint32_t)n_mels);
    p += 4;
    for (int c = 0; c < n_mels; c++) put_f64(p + 8 * (size_t)c, sum[c]);
    p += 8 * (size_t)n_mels;
    for (int c = 0; c < n_mels; c++) put_f64(p + 8 * (size_t)c, sumsq[c]);
}

int xtts_keys_value_unpack(const void *value, size_t len, int n_mels, double *sum, double *sumsq) {
    const uint8_t *p = value;
    if (n_mels < 0 || len != xtts_keys_value_bytes(n_mels) || xtts_get_le32(p + XTTS_CONTENT_KEY_BYTES) != (uint32_t)n_mels)
        return -1;
    p += XTTS_CONTENT_KEY_BYTES + 4;
    for (int c = 0; c < n_mels; c++) sum[c] = get_f64(p + 8 * (size_t)c);
    p += 8 * (size_t)n_mels;
    for (int c = 0; c < n_mels; c++) sumsq[c] = get_f64(p + 8 * (size_t)c);
    return 0;
}

/* The shard's databases of records' own: every named database but the writer's four. */
static int list_own(source_shard *sh) {
    MDB_dbi main_db;
    MDB_cursor *cur;
    int rc = mdb_dbi_open(sh->txn, NULL, 0, &main_db);
    if (!rc) rc = mdb_cursor_open(sh->txn, main_db, &cur);
    if (rc) return rc;
    MDB_val k, v;
    int c = mdb_cursor_get(cur, &k, &v, MDB_FIRST);
    while (!c && !rc) {
        char name[XTTS_CACHE_DB_NAME_MAX + 1];
        if (k.mv_size >= 1 && k.mv_size <= XTTS_CACHE_DB_NAME_MAX && !memchr(k.mv_data, 0, k.mv_size)) {
            memcpy(name, k.mv_data, k.mv_size);
            name[k.mv_size] = 0;
            if (!xtts_cache_db_reserved(name) && sh->n_own < XTTS_SHARD_MAX_DBS - 4) {
                rc = mdb_dbi_open(sh->txn, name, 0, &sh->own[sh->n_own]);
                if (!rc && !(sh->own_names[sh->n_own] = strdup(name))) rc = ENOMEM;
                if (!rc) sh->n_own++;
            }
        }
        c = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
    }
    mdb_cursor_close(cur);
    return rc;
}

/* The sum of the "records" value sizes of the shard. */
static int sum_bytes(source_shard *sh) {
    MDB_cursor *cur;
    int rc = mdb_cursor_open(sh->txn, sh->records, &cur);
    if (rc) return rc;
    MDB_val k, v;
    for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); !rc; rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT))
        sh->bytes += v.mv_size;
    mdb_cursor_close(cur);
    return rc == MDB_NOTFOUND ? 0 : rc;
}

static xtts_status shard_open(source_shard *sh, xtts_error *err) {
    xtts_status st = xtts_lmdb_file_check(sh->path, err);
    if (st) return st;
    /* with the kernel's read-ahead: an update walks the keys, lengths and quality databases
     * in key order (cache/store/read/lmdb_env.c) */
    int rc = xtts_lmdb_env_open(&sh->env, sh->path, XTTS_LMDB_SHARD_SCAN, 0);
    if (!rc) rc = mdb_txn_begin(sh->env, NULL, MDB_RDONLY, &sh->txn);
    if (!rc) rc = mdb_dbi_open(sh->txn, "records", 0, &sh->records);
    if (!rc) rc = mdb_dbi_open(sh->txn, "ids", 0, &sh->ids);
    if (rc) return xtts_error_set(err, xtts_mdb_status(rc), "%s: cannot open shard: %s", sh->path, mdb_strerror(rc));
    rc = mdb_dbi_open(sh->txn, XTTS_KEYS_DB, 0, &sh->keys);
    MDB_stat ms;
    if (rc == MDB_NOTFOUND && !mdb_stat(sh->txn, sh->records, &ms) && ms.ms_entries == 0) {
        sh->empty = 1; /* a shard that took only rejects (an update's): no record to look up */
        return XTTS_OK;
    }
    if (rc == MDB_NOTFOUND)
        return xtts_error_set(err, XTTS_EUNSUPPORTED, "%s: no content keys (a cache built before they were stored)", sh->path);
    if (!rc) {
        int lr = mdb_dbi_open(sh->txn, "lengths", 0, &sh->lengths);
        sh->has_lengths = lr == 0;
        if (lr && lr != MDB_NOTFOUND) rc = lr;
    }
    if (!rc) rc = list_own(sh);
    /* the handles opened in a read transaction that commits stay the environment's, for the
     * transactions of other threads (views) too; the source then reads in a transaction of its own */
    if (!rc) rc = mdb_txn_commit(sh->txn);
    sh->txn = NULL;
    if (!rc) rc = mdb_txn_begin(sh->env, NULL, MDB_RDONLY, &sh->txn);
    if (!rc) rc = sum_bytes(sh);
    if (rc) return xtts_error_set(err, xtts_mdb_status(rc), "%s: %s", sh->path, mdb_strerror(rc));
    return XTTS_OK;
}

xtts_status xtts_cache_source_open(const char *dir, const char *config_hash, xtts_cache_source **out,
                                   xtts_error *err) {
    *out = NULL;
    char path[4096];
    xtts_path_join(path, sizeof path, dir, "manifest.json");
    FILE *probe = fopen(path, "r");
    if (!probe) return xtts_error_set(err, XTTS_ENOTFOUND, "%s: not a finished cache (no manifest.json)", dir);
    fclose(probe);
    xtts_manifest_info info;
    xtts_status st = xtts_manifest_info_init(&info, path, err);
    if (!st && strcmp(info.config_hash, config_hash))
        st = xtts_error_set(err, XTTS_EMISMATCH, "%s: a cache of another configuration (config_hash %.12s..., this build's "
                            "%.12s...)", dir, info.config_hash, config_hash);
    xtts_cache_source *s = st ? NULL : calloc(1, sizeof *s);
    if (!st && (!s || !(s->shards = calloc(info.n_shards ? info.n_shards : 1, sizeof *s->shards)) ||
                !(s->ranges = calloc(info.n_shards ? info.n_shards : 1, sizeof *s->ranges))))
        st = xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", dir);
    if (s) s->records = info.records;
    if (s) s->ranged = info.format_version >= XTTS_MANIFEST_VERSION_SHARED;
    for (size_t i = 0; !st && i < info.n_shards; i++) {
        size_t d = 0; /* one environment per directory, however many entries list it */
        while (d < s->n_shards && strcmp(s->shards[d].name, info.shards[i].name)) d++;
        if (info.shards[i].records) s->ranges[s->n_ranges++] = (source_range){d, info.shards[i].local_first, info.shards[i].records};
        if (d < s->n_shards) continue;
        source_shard *sh = &s->shards[s->n_shards++];
        snprintf(sh->name, sizeof sh->name, "%s", info.shards[i].name);
        xtts_path_join(sh->path, sizeof sh->path, dir, info.shards[i].name);
        st = shard_open(sh, err);
    }
    xtts_manifest_info_free(&info);
    if (st) {
        xtts_cache_source_close(s);
        return st;
    }
    qsort(s->ranges, s->n_ranges, sizeof *s->ranges, cmp_range); /* the manifest's ranges do not overlap */
    *out = s;
    return XTTS_OK;
}

uint64_t xtts_cache_source_records(const xtts_cache_source *s) { return s ? s->records : 0; }
size_t xtts_cache_source_dirs(const xtts_cache_source *s) { return s ? s->n_shards : 0; }
const char *xtts_cache_source_dir_name(const xtts_cache_source *s, size_t d) { return s->shards[d].name; }
const char *xtts_cache_source_dir_path(const xtts_cache_source *s, size_t d) { return s->shards[d].path; }
uint64_t xtts_cache_source_dir_bytes(const xtts_cache_source *s, size_t d) { return s->shards[d].bytes; }

/* Whether local key `local` of directory d is a record of the source: in the range that
 * starts last at or before it (the ranges are sorted and do not overlap; an update lists one
 * per run of kept records, thousands after many updates, and every lookup asks). */
static int referenced(const xtts_cache_source *s, size_t d, uint64_t local) {
    if (!s->ranged) return 1;
    size_t a = 0, b = s->n_ranges; /* the first range after (d, local) */
    while (a < b) {
        size_t mid = a + (b - a) / 2;
        const source_range *r = &s->ranges[mid];
        if (r->dir < d || (r->dir == d && r->local_first <= local)) a = mid + 1; else b = mid;
    }
    const source_range *r = a ? &s->ranges[a - 1] : NULL;
    return r && r->dir == d && local - r->local_first < r->records;
}

static xtts_status fill_hit(source_shard *sh, MDB_val *local, const uint8_t *key, xtts_cache_source_hit *hit,
                            xtts_error *err) {
    MDB_val kv, rv;
    int rc = mdb_get(sh->txn, sh->keys, local, &kv);
    if (rc == MDB_NOTFOUND) return xtts_error_set(err, XTTS_ECORRUPT, "%s: a record without its content key", sh->path);
    if (rc) return xtts_error_set(err, xtts_mdb_status(rc), "%s: %s", sh->path, mdb_strerror(rc));
    if (kv.mv_size < XTTS_CONTENT_KEY_BYTES || memcmp(kv.mv_data, key, XTTS_CONTENT_KEY_BYTES)) return XTTS_OK;
    rc = mdb_get(sh->txn, sh->records, local, &rv);
    if (rc) return xtts_error_set(err, rc == MDB_NOTFOUND ? XTTS_ECORRUPT : xtts_mdb_status(rc), "%s: record missing: %s",
                                  sh->path, mdb_strerror(rc));
    hit->same = 1;
    hit->record = rv.mv_data;
    hit->len = rv.mv_size;
    hit->keys_value = kv.mv_data;
    hit->keys_len = kv.mv_size;
    for (size_t d = 0; d < sh->n_own; d++) {
        MDB_val ev;
        rc = mdb_get(sh->txn, sh->own[d], local, &ev);
        if (rc == MDB_NOTFOUND) continue;
        if (rc) return xtts_error_set(err, xtts_mdb_status(rc), "%s: %s", sh->path, mdb_strerror(rc));
        hit->entries[hit->n_entries++] = (xtts_cache_entry){sh->own_names[d], ev.mv_data, ev.mv_size};
    }
    return XTTS_OK;
}

/* A thread's own read transactions on the source's shards, with a cursor on each database it
 * reads (view_get) that steps to the next local key when that is the one asked for (the
 * records an update keeps come in runs of consecutive keys). */
typedef struct {
    MDB_txn *txn;
    MDB_cursor *cur[4]; /* keys, records, lengths, and the database of one entry (entry) */
    uint64_t at[4];     /* where each cursor stands, with placed */
    int placed[4];
    int entry;          /* 1 + the index in own[] of that database, 0 not looked for, -1 none */
} view_shard;

struct xtts_cache_source_view {
    const xtts_cache_source *s;
    view_shard *d;       /* [s->n_shards] */
    int has_last;        /* a find's last record: the next input is most often the next key */
    size_t last_dir;
    uint64_t last_local;
};

/* Where id is among the source's records (a record no entry lists any more is none): *found,
 * and then its directory and local key. Reads through view v's transactions, or the
 * source's own when v is NULL. Errors: XTTS_ECORRUPT (an "ids" value that is not a local
 * index), XTTS_EIO (LMDB), naming the shard. */
static xtts_status locate_id(const xtts_cache_source *s, xtts_cache_source_view *v, const char *id, size_t *dir,
                             uint64_t *local, int *found, xtts_error *err) {
    *found = 0;
    size_t n = strlen(id);
    if (n == 0 || n > XTTS_LMDB_MAX_KEY) return XTTS_OK;
    for (size_t i = 0; i < s->n_shards; i++) {
        const source_shard *sh = &s->shards[i];
        if (sh->empty) continue;
        MDB_txn *txn = sh->txn;
        int rc = 0;
        if (v) {
            if (!v->d[i].txn) rc = mdb_txn_begin(sh->env, NULL, MDB_RDONLY, &v->d[i].txn);
            txn = v->d[i].txn;
        }
        MDB_val k = {n, (void *)id}, iv;
        if (!rc) rc = mdb_get(txn, sh->ids, &k, &iv);
        if (rc == MDB_NOTFOUND) continue;
        if (rc) return xtts_error_set(err, xtts_mdb_status(rc), "%s: %s", sh->path, mdb_strerror(rc));
        if (iv.mv_size != 8) return xtts_error_set(err, XTTS_ECORRUPT, "%s: id '%s': bad index", sh->path, id);
        if (!referenced(s, i, xtts_get_be64(iv.mv_data))) continue;
        *found = 1;
        *dir = i;
        *local = xtts_get_be64(iv.mv_data);
        return XTTS_OK;
    }
    return XTTS_OK;
}

xtts_status xtts_cache_source_find(xtts_cache_source *s, const char *id, const uint8_t key[XTTS_CONTENT_KEY_BYTES],
                                   xtts_cache_source_hit *hit, xtts_error *err) {
    memset(hit, 0, sizeof *hit);
    size_t dir;
    uint64_t local;
    xtts_status st = locate_id(s, NULL, id, &dir, &local, &hit->found, err);
    if (st || !hit->found) return st;
    hit->dir = dir;
    hit->local = local;
    uint8_t lk[8];
    xtts_put_be64(lk, local);
    MDB_val lv = {8, lk};
    return fill_hit(&s->shards[dir], &lv, key, hit, err);
}


xtts_status xtts_cache_source_view_open(const xtts_cache_source *s, xtts_cache_source_view **out, xtts_error *err) {
    xtts_cache_source_view *v = calloc(1, sizeof *v);
    if (v) v->d = calloc(s->n_shards ? s->n_shards : 1, sizeof *v->d);
    if (!v || !v->d) {
        if (v) free(v->d);
        free(v);
        return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    }
    v->s = s;
    *out = v;
    return XTTS_OK;
}

/* The value of local key `local` in the view's cursor c (0 keys, 1 records, 2 lengths, 3 the
 * entry database) of shard dir. */
static int view_get(xtts_cache_source_view *v, size_t dir, int c, uint64_t local, MDB_val *val) {
    const source_shard *sh = &v->s->shards[dir];
    view_shard *d = &v->d[dir];
    int rc = d->txn ? 0 : mdb_txn_begin(sh->env, NULL, MDB_RDONLY, &d->txn);
    MDB_dbi dbi = c == 0 ? sh->keys : c == 1 ? sh->records : c == 2 ? sh->lengths : sh->own[d->entry - 1];
    if (!rc && !d->cur[c]) rc = mdb_cursor_open(d->txn, dbi, &d->cur[c]);
    if (rc) return rc;
    uint8_t want[8];
    xtts_put_be64(want, local);
    MDB_val k;
    if (d->placed[c] && d->at[c] == local && !mdb_cursor_get(d->cur[c], &k, val, MDB_GET_CURRENT)) return 0;
    if (d->placed[c] && d->at[c] + 1 == local && !mdb_cursor_get(d->cur[c], &k, val, MDB_NEXT) && k.mv_size == 8 &&
        !memcmp(k.mv_data, want, 8)) {
        d->at[c] = local;
        return 0;
    }
    k = (MDB_val){8, want};
    rc = mdb_cursor_get(d->cur[c], &k, val, MDB_SET_KEY);
    d->placed[c] = !rc;
    d->at[c] = local;
    return rc;
}

xtts_status xtts_cache_source_view_get(xtts_cache_source_view *v, size_t dir, uint64_t local,
                                       const uint8_t key[XTTS_CONTENT_KEY_BYTES], int with,
                                       xtts_cache_source_hit *hit, xtts_error *err) {
    memset(hit, 0, sizeof *hit);
    if (dir >= v->s->n_shards || v->s->shards[dir].empty) return XTTS_OK;
    const source_shard *sh = &v->s->shards[dir];
    MDB_val kv, rv;
    int rc = view_get(v, dir, 0, local, &kv);
    if (rc == MDB_NOTFOUND) return xtts_error_set(err, XTTS_ECORRUPT, "%s: a record without its content key", sh->path);
    if (!rc && (kv.mv_size < XTTS_CONTENT_KEY_BYTES || memcmp(kv.mv_data, key, XTTS_CONTENT_KEY_BYTES))) {
        *hit = (xtts_cache_source_hit){.found = 1, .dir = dir, .local = local};
        return XTTS_OK;
    }
    rv = (MDB_val){0, NULL};
    if (!rc && (with & XTTS_SOURCE_RECORD)) rc = view_get(v, dir, 1, local, &rv);
    if (rc) return xtts_error_set(err, rc == MDB_NOTFOUND ? XTTS_ECORRUPT : xtts_mdb_status(rc), "%s: record missing: %s",
                                  sh->path, mdb_strerror(rc));
    *hit = (xtts_cache_source_hit){.found = 1, .same = 1, .record = rv.mv_data, .len = rv.mv_size,
                                   .keys_value = kv.mv_data, .keys_len = kv.mv_size, .dir = dir, .local = local};
    MDB_val lv;
    if ((with & XTTS_SOURCE_LENGTHS) && sh->has_lengths && !view_get(v, dir, 2, local, &lv)) {
        hit->lengths = lv.mv_data; /* none (not found, or not read): the caller reads the record's header */
        hit->lengths_len = lv.mv_size;
    }
    return XTTS_OK;
}

/* The record at (dir, local) into hit as view_get gives it, with its entry in entry_db. */
static xtts_status view_found(xtts_cache_source_view *v, size_t dir, uint64_t local, const uint8_t *key,
                              const char *entry_db, xtts_cache_source_hit *hit, xtts_error *err) {
    const source_shard *sh = &v->s->shards[dir];
    view_shard *d = &v->d[dir];
    xtts_status st = xtts_cache_source_view_get(v, dir, local, key, XTTS_SOURCE_RECORD | XTTS_SOURCE_LENGTHS, hit, err);
    if (st || !hit->same || !entry_db) return st;
    for (size_t e = 0; !d->entry && e < sh->n_own; e++)
        if (!strcmp(sh->own_names[e], entry_db)) d->entry = (int)e + 1;
    if (!d->entry) d->entry = -1;
    MDB_val ev;
    int rc = d->entry > 0 ? view_get(v, dir, 3, local, &ev) : MDB_NOTFOUND;
    if (rc && rc != MDB_NOTFOUND) return xtts_error_set(err, xtts_mdb_status(rc), "%s: %s", sh->path, mdb_strerror(rc));
    if (!rc) hit->entries[hit->n_entries++] = (xtts_cache_entry){sh->own_names[d->entry - 1], ev.mv_data, ev.mv_size};
    return XTTS_OK;
}

/* The key after the last record found, when it holds this content key: the record of the id
 * it stands for (the key covers the id, and ids are unique), found without the id's lookup. */
static int view_guess(xtts_cache_source_view *v, const uint8_t *key, size_t *dir, uint64_t *local) {
    const xtts_cache_source *s = v->s;
    if (!v->has_last || s->shards[v->last_dir].empty || !referenced(s, v->last_dir, v->last_local + 1)) return 0;
    MDB_val kv;
    if (view_get(v, v->last_dir, 0, v->last_local + 1, &kv) || kv.mv_size < XTTS_CONTENT_KEY_BYTES ||
        memcmp(kv.mv_data, key, XTTS_CONTENT_KEY_BYTES))
        return 0;
    *dir = v->last_dir;
    *local = v->last_local + 1;
    return 1;
}

xtts_status xtts_cache_source_view_find(xtts_cache_source_view *v, const char *id,
                                        const uint8_t key[XTTS_CONTENT_KEY_BYTES], const char *entry_db,
                                        xtts_cache_source_hit *hit, xtts_error *err) {
    memset(hit, 0, sizeof *hit);
    const xtts_cache_source *s = v->s;
    size_t dir, n = strlen(id);
    uint64_t local;
    if (n == 0 || n > XTTS_LMDB_MAX_KEY) return XTTS_OK;
    if (view_guess(v, key, &dir, &local)) {
        v->last_local = local;
        return view_found(v, dir, local, key, entry_db, hit, err);
    }
    int found = 0;
    xtts_status st = locate_id(s, v, id, &dir, &local, &found, err);
    if (st || !found) return st;
    v->has_last = 1;
    v->last_dir = dir;
    v->last_local = local;
    return view_found(v, dir, local, key, entry_db, hit, err);
}

void xtts_cache_source_view_close(xtts_cache_source_view *v) {
    if (!v) return;
    for (size_t i = 0; i < v->s->n_shards; i++) {
        for (int c = 0; c < 4; c++)
            if (v->d[i].cur[c]) mdb_cursor_close(v->d[i].cur[c]);
        if (v->d[i].txn) mdb_txn_abort(v->d[i].txn);
    }
    free(v->d);
    free(v);
}

void xtts_cache_source_close(xtts_cache_source *s) {
    if (!s) return;
    for (size_t i = 0; i < s->n_shards; i++) {
        source_shard *sh = &s->shards[i];
        if (sh->txn) mdb_txn_abort(sh->txn);
        if (sh->env) mdb_env_close(sh->env);
        for (size_t d = 0; d < sh->n_own; d++) free(sh->own_names[d]);
    }
    free(s->shards);
    free(s->ranges);
    free(s);
}
