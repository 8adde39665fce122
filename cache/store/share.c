/* share.c — an update sharing the old cache's shard directories (share.h). */
#include "cache/store/share.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache/store/writer_internal.h"
#include "formats/manifest.h"

typedef struct {
    int keep;          /* 1: a run of kept records; 0: a stretch of inputs the writer takes */
    size_t dir;        /* keep: the source directory */
    uint64_t a, n;     /* keep: first local key, records; write: first input, inputs */
    uint64_t bytes;    /* keep: value bytes */
} segment;

struct xtts_share_plan {
    const xtts_cache_source *src;
    segment *seg;
    size_t n_seg, cap_seg;
    uint64_t *dir_kept;  /* per source directory: value bytes kept */
    uint64_t runs, kept, kept_bytes, max_runs;
    int over;            /* past max_runs, or out of memory: the plan is useless */
};

xtts_status xtts_share_plan_new(const xtts_cache_source *src, xtts_share_plan **out, xtts_error *err) {
    xtts_share_plan *p = calloc(1, sizeof *p);
    size_t dirs = xtts_cache_source_dirs(src);
    if (p) p->dir_kept = calloc(dirs ? dirs : 1, sizeof *p->dir_kept);
    if (!p || !p->dir_kept) {
        free(p);
        *out = NULL;
        return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    }
    p->src = src;
    /* the bound of xtts_share_plan_worth with every directory of the source kept and as many
     * written: past it the plan cannot be worth it, so it stops growing */
    p->max_runs = XTTS_SHARE_RUNS_PER_DIR * 2 * (uint64_t)(dirs + 1) + XTTS_SHARE_RUNS_FIXED +
                  xtts_cache_source_records(src) / XTTS_SHARE_MIN_RUN;
    *out = p;
    return XTTS_OK;
}

void xtts_share_plan_free(xtts_share_plan *p) {
    if (!p) return;
    free(p->seg);
    free(p->dir_kept);
    free(p);
}

static segment *push(xtts_share_plan *p) {
    if (p->n_seg == p->cap_seg) {
        size_t cap = p->cap_seg ? 2 * p->cap_seg : 64;
        segment *s = realloc(p->seg, cap * sizeof *s);
        if (!s) {
            p->over = 1;
            return NULL;
        }
        p->seg = s;
        p->cap_seg = cap;
    }
    segment *s = &p->seg[p->n_seg++];
    memset(s, 0, sizeof *s);
    return s;
}

int xtts_share_plan_keep(xtts_share_plan *p, size_t dir, uint64_t local, uint64_t len) {
    if (p->over) return -1;
    segment *s = p->n_seg ? &p->seg[p->n_seg - 1] : NULL;
    if (!s || !s->keep || s->dir != dir || s->a + s->n != local) {
        if (p->runs + 1 > p->max_runs) {
            p->over = 1;
            return -1;
        }
        if (!(s = push(p))) return -1;
        *s = (segment){1, dir, local, 0, 0};
        p->runs++;
    }
    s->n++;
    s->bytes += len;
    p->kept++;
    p->kept_bytes += len;
    p->dir_kept[dir] += len;
    return 0;
}

int xtts_share_plan_write(xtts_share_plan *p, uint64_t input) {
    if (p->over) return -1;
    segment *s = p->n_seg ? &p->seg[p->n_seg - 1] : NULL;
    if (!s || s->keep || s->a + s->n != input) {
        if (!(s = push(p))) return -1;
        *s = (segment){0, 0, input, 0, 0};
    }
    s->n++;
    return 0;
}

void xtts_share_plan_figures(const xtts_share_plan *p, xtts_share_figures *f) {
    memset(f, 0, sizeof *f);
    f->kept = p->kept;
    f->kept_bytes = p->kept_bytes;
    f->runs = p->runs;
    for (size_t d = 0; d < xtts_cache_source_dirs(p->src); d++) {
        if (!p->dir_kept[d]) continue;
        f->dirs++;
        uint64_t all = xtts_cache_source_dir_bytes(p->src, d);
        f->garbage_bytes += all > p->dir_kept[d] ? all - p->dir_kept[d] : 0;
    }
}

int xtts_share_plan_worth(const xtts_share_plan *p, char *why, size_t cap) {
    xtts_share_figures f;
    xtts_share_plan_figures(p, &f);
    if (p->over) {
        snprintf(why, cap, "more than %llu runs of unchanged records", (unsigned long long)p->max_runs);
        return 0;
    }
    if (f.kept == 0) {
        snprintf(why, cap, "no record is kept");
        return 0;
    }
    /* the new cache's directories: the kept ones and at least one the writer fills */
    uint64_t bound = XTTS_SHARE_RUNS_PER_DIR * (f.dirs + 1) + XTTS_SHARE_RUNS_FIXED + f.kept / XTTS_SHARE_MIN_RUN;
    if (f.runs > bound) {
        snprintf(why, cap, "%llu runs of unchanged records, more than %llu", (unsigned long long)f.runs,
                 (unsigned long long)bound);
        return 0;
    }
    double total = (double)f.garbage_bytes + (double)f.kept_bytes;
    if (total > 0 && (double)f.garbage_bytes > XTTS_SHARE_GARBAGE_MAX * total) {
        snprintf(why, cap, "%.0f%% of the kept shards' bytes would belong to no record (more than %.0f%%)",
                 100.0 * (double)f.garbage_bytes / total, 100.0 * XTTS_SHARE_GARBAGE_MAX);
        return 0;
    }
    return 1;
}

xtts_status xtts_share_probe(const xtts_cache_source *src, const char *stage, xtts_error *err) {
    if (!xtts_cache_source_dirs(src)) return xtts_error_set(err, XTTS_EUNSUPPORTED, "the cache has no shard");
    char from[4200], to[4200];
    xtts_path_join(from, sizeof from, xtts_cache_source_dir_path(src, 0), "data.mdb");
    xtts_path_join(to, sizeof to, stage, ".xtts-link-probe");
    (void)unlink(to);
    if (link(from, to) != 0)
        return xtts_error_set(err, XTTS_EUNSUPPORTED, "%s: cannot be hard-linked into %s: %s", from, stage, strerror(errno));
    (void)unlink(to);
    return XTTS_OK;
}

/* ---- finishing ------------------------------------------------------------------------ */

/* A writer's shard open for reading its records' sizes (the one a finish reads last). */
typedef struct {
    char path[4200];
    MDB_env *env;
    MDB_txn *txn;
    MDB_cursor *cur;
} range_shard;

static void range_shard_close(range_shard *r) {
    if (r->cur) mdb_cursor_close(r->cur);
    if (r->txn) mdb_txn_abort(r->txn);
    if (r->env) mdb_env_close(r->env);
    memset(r, 0, sizeof *r);
}

/* r open on the shard at path (kept open when it already is); an LMDB code. */
static int range_shard_open(range_shard *r, const char *path) {
    if (r->env && !strcmp(r->path, path)) return 0;
    range_shard_close(r);
    snprintf(r->path, sizeof r->path, "%s", path);
    MDB_dbi dbi;
    int rc = xtts_lmdb_env_open(&r->env, path, XTTS_LMDB_SHARD_READ, 0);
    if (!rc) rc = mdb_txn_begin(r->env, NULL, MDB_RDONLY, &r->txn);
    if (!rc) rc = mdb_dbi_open(r->txn, "records", 0, &dbi);
    if (!rc) rc = mdb_cursor_open(r->txn, dbi, &r->cur);
    if (rc) range_shard_close(r);
    return rc;
}

/* The sum of the value sizes of "records" keys lo..lo+n-1 of the shard at path, read through r. */
static xtts_status range_bytes(range_shard *r, const char *path, uint64_t lo, uint64_t n, uint64_t *bytes,
                               xtts_error *err) {
    *bytes = 0;
    int rc = range_shard_open(r, path);
    uint8_t kb[8];
    xtts_put_be64(kb, lo);
    MDB_val k = {8, kb}, v;
    uint64_t got = 0;
    if (!rc) rc = n ? mdb_cursor_get(r->cur, &k, &v, MDB_SET_KEY) : MDB_NOTFOUND;
    while (!rc && got < n) {
        if (k.mv_size != 8 || xtts_get_be64(k.mv_data) != lo + got) break;
        *bytes += v.mv_size;
        if (++got < n) rc = mdb_cursor_get(r->cur, &k, &v, MDB_NEXT);
    }
    if (got != n)
        return xtts_error_set(err, XTTS_ECORRUPT, "%s: records %llu..%llu: %s", path, (unsigned long long)lo,
                              (unsigned long long)(lo + n - 1), rc ? mdb_strerror(rc) : "keys missing");
    return XTTS_OK;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The writer's manifest: its shards, and its rejected inputs sorted. */
typedef struct {
    json_t *m;
    const json_t *shards;
    uint64_t *rejected;
    size_t n_rejected;
    size_t ws;   /* the writer shard the next stored record is in */
    uint64_t wo; /* and its local key */
    json_t *out; /* the new "shards" */
    uint64_t total;
    const char *stage;
    range_shard rs; /* the writer's shard take_written reads */
} finish_ctx;

/* How many of the sorted rejected inputs are below v. */
static size_t rejected_below(const finish_ctx *x, uint64_t v) {
    size_t a = 0, b = x->n_rejected;
    while (a < b) {
        size_t mid = a + (b - a) / 2;
        if (x->rejected[mid] < v) a = mid + 1; else b = mid;
    }
    return a;
}

static uint64_t rejected_in(const finish_ctx *x, uint64_t a, uint64_t n) {
    return rejected_below(x, a + n) - rejected_below(x, a);
}

static int add_entry(finish_ctx *x, const char *name, uint64_t local_first, uint64_t records, uint64_t bytes) {
    json_t *e = json_pack("{s:s, s:I, s:I, s:I, s:I}", "name", name, "records", (json_int_t)records, "bytes",
                          (json_int_t)bytes, "first_index", (json_int_t)x->total, "local_first", (json_int_t)local_first);
    x->total += records;
    return !e || json_array_append_new(x->out, e);
}

/* The next `stored` records of the writer's shards, as entries. */
static xtts_status take_written(finish_ctx *x, uint64_t stored, xtts_error *err) {
    while (stored) {
        const json_t *s = json_array_get(x->shards, x->ws);
        if (!s) return xtts_error_set(err, XTTS_ECORRUPT, "%s: the update's shards hold fewer records than it wrote", x->stage);
        uint64_t have = (uint64_t)json_integer_value(json_object_get(s, "records"));
        if (x->wo >= have) {
            x->ws++;
            x->wo = 0;
            continue;
        }
        uint64_t t = have - x->wo < stored ? have - x->wo : stored, bytes;
        const char *name = json_string_value(json_object_get(s, "name"));
        char path[4200];
        xtts_path_join(path, sizeof path, x->stage, name);
        xtts_status st = range_bytes(&x->rs, path, x->wo, t, &bytes, err);
        if (st) return st;
        if (add_entry(x, name, x->wo, t, bytes)) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
        x->wo += t;
        stored -= t;
    }
    return XTTS_OK;
}

/* The writer's shards after the last record taken: empty ones are listed, records left over
 * are a fault. */
static xtts_status writer_rest(finish_ctx *x, xtts_error *err) {
    for (size_t k = x->ws; k < json_array_size(x->shards); k++) {
        const json_t *s = json_array_get(x->shards, k);
        uint64_t have = (uint64_t)json_integer_value(json_object_get(s, "records"));
        uint64_t from = k == x->ws ? x->wo : 0;
        if (have > from)
            return xtts_error_set(err, XTTS_ECORRUPT, "%s: the update's shards hold more records than it wrote", x->stage);
        if (from == 0 && add_entry(x, json_string_value(json_object_get(s, "name")), 0, 0, 0))
            return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    }
    return XTTS_OK;
}

static xtts_status load_writer_manifest(finish_ctx *x, xtts_error *err) {
    char path[4200];
    xtts_path_join(path, sizeof path, x->stage, "manifest.json");
    xtts_status st = xtts_manifest_load(path, &x->m, err);
    if (st) return st;
    x->shards = json_object_get(x->m, "shards");
    const json_t *rj = json_object_get(x->m, "rejects");
    size_t n = json_is_array(rj) ? json_array_size(rj) : 0;
    x->rejected = calloc(n ? n : 1, sizeof *x->rejected);
    x->out = json_array();
    if (!x->rejected || !x->out) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        const json_t *in = json_object_get(json_array_get(rj, i), "input");
        if (json_is_integer(in)) x->rejected[x->n_rejected++] = (uint64_t)json_integer_value(in);
    }
    qsort(x->rejected, x->n_rejected, sizeof *x->rejected, cmp_u64);
    return XTTS_OK;
}

static void fsync_path(const char *path) {
    int fd = open(path, O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
}

/* Source directory d as stage/name: a new directory holding a hard link of its data.mdb. */
static xtts_status link_dir(const xtts_share_plan *p, size_t d, const char *stage, const char *name, xtts_error *err) {
    char to[4200], from[4200], file[4300];
    xtts_path_join(to, sizeof to, stage, name);
    struct stat sb;
    xtts_status st;
    if (stat(to, &sb) == 0 && (st = xtts_remove_shard_dir(to, err))) return st; /* left by an earlier try */
    if (mkdir(to, 0755) != 0) return xtts_error_set(err, XTTS_EIO, "%s: cannot create: %s", to, strerror(errno));
    xtts_path_join(from, sizeof from, xtts_cache_source_dir_path(p->src, d), "data.mdb");
    xtts_path_join(file, sizeof file, to, "data.mdb");
    if (link(from, file) != 0) return xtts_error_set(err, XTTS_EIO, "%s: cannot link %s: %s", file, from, strerror(errno));
    fsync_path(to);
    return XTTS_OK;
}

static xtts_status finish_entries(const xtts_share_plan *p, finish_ctx *x, int *base_no, xtts_error *err) {
    int next_base = 0;
    xtts_status st = XTTS_OK;
    for (size_t i = 0; !st && i < p->n_seg; i++) {
        const segment *s = &p->seg[i];
        if (!s->keep) {
            st = take_written(x, s->n - rejected_in(x, s->a, s->n), err);
            continue;
        }
        char name[24];
        if (base_no[s->dir] < 0) {
            base_no[s->dir] = next_base++;
            snprintf(name, sizeof name, "base-%05d", base_no[s->dir]);
            if ((st = link_dir(p, s->dir, x->stage, name, err))) break;
        }
        snprintf(name, sizeof name, "base-%05d", base_no[s->dir]);
        if (add_entry(x, name, s->a, s->n, s->bytes)) st = xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    }
    if (!st) st = writer_rest(x, err);
    return st;
}

xtts_status xtts_share_finish(const xtts_share_plan *p, const char *stage, uint64_t *records, xtts_error *err) {
    finish_ctx x = {.stage = stage};
    size_t dirs = xtts_cache_source_dirs(p->src);
    int *base_no = malloc((dirs ? dirs : 1) * sizeof *base_no);
    xtts_status st = base_no ? load_writer_manifest(&x, err) : xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    for (size_t d = 0; base_no && d < dirs; d++) base_no[d] = -1;
    if (!st) st = finish_entries(p, &x, base_no, err);
    range_shard_close(&x.rs);
    if (!st) fsync_path(stage);
    if (!st && (json_object_set(x.m, "shards", x.out) || json_object_set_new(x.m, "records", json_integer((json_int_t)x.total)) ||
                json_object_set_new(x.m, "format_version", json_integer(XTTS_MANIFEST_VERSION_SHARED))))
        st = xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    char path[4200];
    xtts_path_join(path, sizeof path, stage, "manifest.json");
    if (!st) st = xtts_manifest_write(path, x.m, err);
    *records = x.total;
    json_decref(x.m);
    json_decref(x.out);
    free(x.rejected);
    free(base_no);
    return st;
}
