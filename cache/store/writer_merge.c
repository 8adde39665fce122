/* writer_merge.c — join the partial manifests of a build in parts into manifest.json
 * (formats/cache.md, "Builds in parts").
 *
 * Shards are not moved or copied: the merged manifest lists every part's shards in
 * (part, number) order and gives each its first global index. The partial manifests
 * stay, so one part can be rebuilt and the merge run again.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/store/writer.h"
#include "cache/store/writer_internal.h"

/* Add the numbers of src into dst (both objects): numeric values are summed key by key;
 * keys only in src are copied. */
static void sum_numeric(json_t *dst, const json_t *src) {
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)src, key, v) {
        if (!json_is_number(v)) continue;
        json_t *d = json_object_get(dst, key);
        if (!d) {
            json_object_set(dst, key, v);
        } else if (json_is_integer(d) && json_is_integer(v)) {
            json_object_set_new(dst, key, json_integer(json_integer_value(d) + json_integer_value(v)));
        } else if (json_is_number(d)) {
            json_object_set_new(dst, key, json_real(json_number_value(d) + json_number_value(v)));
        }
    }
}

/* Elementwise sum of a stats array into acc (created on first use). */
static int sum_array(double **acc, size_t n, const json_t *a) {
    if (!json_is_array(a) || json_array_size(a) != n) return -1;
    if (!*acc && !(*acc = calloc(n ? n : 1, sizeof **acc))) return -1;
    for (size_t i = 0; i < n; i++) (*acc)[i] += json_number_value(json_array_get(a, i));
    return 0;
}

static json_t *doubles_json(const double *v, size_t n) {
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++) json_array_append_new(a, json_real(v[i]));
    return a;
}

/* An id that two parts both stored (each part checks its own ids only; a whole build refuses
 * such a stream) is found by reading every shard's "ids" database together in key order
 * (xtts_id_merge): memory independent of the number of records. */
typedef struct {
    char **paths;
    int *part, *shard;
    size_t n, cap;
} id_sources;

static void id_sources_free(id_sources *c) {
    for (size_t i = 0; i < c->n; i++) free(c->paths[i]);
    free(c->paths);
    free(c->part);
    free(c->shard);
    memset(c, 0, sizeof *c);
}

static xtts_status id_sources_add(id_sources *c, const char *path, int part, int shard, xtts_error *err) {
    if (c->n == c->cap) {
        size_t nc = c->cap ? c->cap * 2 : 16;
        char **np = realloc(c->paths, nc * sizeof *np);
        if (np) c->paths = np;
        int *a = np ? realloc(c->part, nc * sizeof *a) : NULL;
        if (a) c->part = a;
        int *b = a ? realloc(c->shard, nc * sizeof *b) : NULL;
        if (!b) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
        c->shard = b;
        c->cap = nc;
    }
    if (!(c->paths[c->n] = strdup(path))) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    c->part[c->n] = part;
    c->shard[c->n] = shard;
    c->n++;
    return XTTS_OK;
}

static xtts_status find_duplicate_ids(const id_sources *c, const char *dir, xtts_error *err) {
    xtts_id_merge *m;
    xtts_status st = xtts_id_merge_open((const char *const *)c->paths, c->n, &m, err);
    if (st) return st;
    char last[XTTS_LMDB_MAX_KEY + 1] = "";
    size_t last_len = 0, last_src = 0;
    int have = 0, got;
    const void *id;
    size_t len, src;
    uint64_t local;
    while (!(st = xtts_id_merge_next(m, &got, &id, &len, &src, &local, err)) && got) {
        if (have && len == last_len && !memcmp(id, last, len)) {
            char a[32], b[32];
            xtts_shard_name(a, c->part[last_src], c->shard[last_src]);
            xtts_shard_name(b, c->part[src], c->shard[src]);
            st = xtts_error_set(err, XTTS_EINPUT, "%s: id '%.200s' is stored by part %d (%s) and part %d (%s): "
                                "the input holds it twice; fix the input and rebuild",
                                dir, last, c->part[last_src], a, c->part[src], b);
            break;
        }
        last_len = len < sizeof last - 1 ? len : sizeof last - 1;
        memcpy(last, id, last_len);
        last[last_len] = 0;
        last_src = src;
        have = 1;
    }
    xtts_id_merge_close(m);
    return st;
}

/* Every partial manifest, loaded into parts[] and checked against part 0: its name, its
 * part count, its configuration and its speaker and language tables; then every part
 * 0..n_parts-1 present (the manifest check keeps part < n_parts). */
static xtts_status load_parts(const char *dir, const xtts_dir_listing *l, json_t **parts, xtts_error *err) {
    long long n_parts = -1;
    const char *hash0 = NULL;
    char path[4096];
    xtts_status st;
    for (size_t i = 0; i < l->n_parts; i++) {
        char name[40];
        xtts_manifest_name(name, l->parts[i]);
        xtts_path_join(path, sizeof path, dir, name);
        if ((st = xtts_manifest_load(path, &parts[i], err))) return st;
        json_t *m = parts[i];
        json_t *jp = json_object_get(m, "part"), *jn = json_object_get(m, "n_parts");
        if (!jp || !jn) {
            return xtts_error_set(err, XTTS_EINPUT, "%s: not a partial manifest (no \"part\" and \"n_parts\")", path);
        }
        if (json_integer_value(jp) != l->parts[i]) {
            return xtts_error_set(err, XTTS_EINPUT, "%s: says it is part %lld", path, (long long)json_integer_value(jp));
        }
        if (i == 0) {
            n_parts = json_integer_value(jn);
            hash0 = json_string_value(json_object_get(m, "config_hash"));
            continue;
        }
        char name0[40];
        xtts_manifest_name(name0, l->parts[0]);
        if (json_integer_value(jn) != n_parts) {
            return xtts_error_set(err, XTTS_EMISMATCH, "%s: n_parts %lld, %s says %lld", path,
                                (long long)json_integer_value(jn), name0, n_parts);
        }
        if (strcmp(json_string_value(json_object_get(m, "config_hash")), hash0)) {
            return xtts_error_set(err, XTTS_EMISMATCH, "%s: built with another configuration than %s (config_hash %.12s... vs %.12s...)",
                                path, name0, json_string_value(json_object_get(m, "config_hash")), hash0);
        }
        static const char *const tables[] = {"speakers", "languages"};
        for (int t = 0; t < 2; t++) {
            json_t *a = json_object_get(m, tables[t]), *b = json_object_get(parts[0], tables[t]);
            if ((a || b) && !json_equal(a, b)) {
                return xtts_error_set(err, XTTS_EMISMATCH, "%s: its \"%s\" table differs from %s's (every part must build it from the whole input)",
                                    path, tables[t], name0);
            }
        }
    }
    /* Every part 0..n_parts-1 present (the manifest check keeps part < n_parts). */
    if ((long long)l->n_parts != n_parts) {
        long long missing = 0;
        for (size_t i = 0; i < l->n_parts && l->parts[i] == (int)missing; i++) missing++;
        return xtts_error_set(err, XTTS_ENOTFOUND, "%s: manifest.part-%05lld.json is missing: %zu of %lld parts are finished", dir,
                            missing, l->n_parts, n_parts);
    }

    return XTTS_OK;
}

/* The parts tile the input in order: part i starts where part i-1 ended. */
static xtts_status check_tiling(const char *dir, const xtts_dir_listing *l, json_t **parts, xtts_error *err) {
    char path[4096];
    json_int_t next_first = 0;
    for (size_t i = 0; i < l->n_parts; i++) {
        char name[40];
        xtts_manifest_name(name, l->parts[i]);
        xtts_path_join(path, sizeof path, dir, name);
        json_t *pin = json_object_get(parts[i], "part_inputs");
        if (!json_is_array(pin) || json_array_size(pin) != 2 || !json_is_integer(json_array_get(pin, 0)) ||
            !json_is_integer(json_array_get(pin, 1))) {
            return xtts_error_set(err, XTTS_EMISMATCH,
                                "%s: no \"part_inputs\": built by an older xtts-melcache that took every N-th input; "
                                "rebuild the parts with this version", path);
        }
        json_int_t pfirst = json_integer_value(json_array_get(pin, 0)), pend = json_integer_value(json_array_get(pin, 1));
        if (pfirst != next_first) {
            return xtts_error_set(err, XTTS_EMISMATCH,
                                "%s: takes records %lld..%lld but the part before ends at record %lld: the parts were built "
                                "from streams of different lengths", path, (long long)pfirst + 1, (long long)pend,
                                (long long)next_first);
        }
        next_first = pend;
    }

    return XTTS_OK;
}

/* The merged "stats": frames, and with the parts' sums the mean and std over every real
 * frame of every part (std = sqrt(E[x^2] - E[x]^2)). NULL when out of memory. */
static json_t *merged_stats(long long frames, const double *mel_sum, const double *mel_sumsq, size_t n_mels) {
    json_t *stats = json_object();
    if (!stats) return NULL;
    json_object_set_new(stats, "frames", json_integer(frames));
    if (!mel_sum) return stats;
    double *mean = calloc(n_mels ? n_mels : 1, sizeof *mean), *sd = calloc(n_mels ? n_mels : 1, sizeof *sd);
    if (!mean || !sd) {
        free(mean);
        free(sd);
        json_decref(stats);
        return NULL;
    }
    for (size_t c = 0; c < n_mels && frames > 0; c++) {
        mean[c] = mel_sum[c] / (double)frames;
        double var = mel_sumsq[c] / (double)frames - mean[c] * mean[c];
        sd[c] = sqrt(var > 0 ? var : 0);
    }
    json_object_set_new(stats, "mel_sum", doubles_json(mel_sum, n_mels));
    json_object_set_new(stats, "mel_sumsq", doubles_json(mel_sumsq, n_mels));
    json_object_set_new(stats, "mel_mean", doubles_json(mean, n_mels));
    json_object_set_new(stats, "mel_std", doubles_json(sd, n_mels));
    free(mean);
    free(sd);
    return stats;
}

/* what the merge gathers from the parts */
typedef struct {
    const char *dir;
    xtts_dir_listing l;
    json_t **parts;
    json_t *out, *shards, *rejects, *splits, *totals;
    id_sources all_ids;
    long long records, rejected, frames;
    size_t n_mels;
    int have_sums;
    double *mel_sum, *mel_sumsq;
} merge_t;

/* the merged manifest starts as part 0's, without the part keys, with empty lists */
static xtts_status merge_start(merge_t *M, xtts_error *err) {
    M->out = json_deep_copy(M->parts[0]);
    M->shards = json_array();
    M->rejects = json_array();
    M->splits = json_object();
    M->totals = json_object();
    if (!M->out || !M->shards || !M->rejects || !M->splits || !M->totals)
        return xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", M->dir);
    json_object_set(M->out, "shards", M->shards);
    json_object_set(M->out, "rejects", M->rejects);
    json_object_del(M->out, "part");
    json_object_del(M->out, "n_parts");
    json_object_del(M->out, "part_inputs");
    json_object_set_new(M->out, "tool_version", json_string(XTTS_VERSION));
    M->have_sums = 1;
    xtts_cache_config cfg;
    xtts_status st = xtts_cache_config_from_json(json_object_get(M->out, "config"), &cfg, "manifest.part-00000.json", err);
    if (!st) M->n_mels = (size_t)cfg.mel.n_mels;
    return st;
}

/* part i: its shards (each holding the records its manifest says) listed with their global
 * first index, its ids' cursor, its rejects, splits, totals and statistics added */
static xtts_status merge_part(merge_t *M, size_t i, xtts_error *err) {
    json_t *m = M->parts[i];
    int part = M->l.parts[i];
    char name[40], path[4096];
    xtts_manifest_name(name, part);
    json_t *ps = json_object_get(m, "shards");
    for (size_t k = 0; k < json_array_size(ps); k++) {
        json_t *s = json_array_get(ps, k);
        const char *sname = json_string_value(json_object_get(s, "name"));
        char prefix[16];
        snprintf(prefix, sizeof prefix, "shard-%05d-", part);
        if (strncmp(sname, prefix, strlen(prefix))) {
            xtts_path_join(path, sizeof path, M->dir, name);
            return xtts_error_set(err, XTTS_EINPUT, "%s: lists shard %s, which is not one of part %d's", path, sname, part);
        }
        xtts_path_join(path, sizeof path, M->dir, sname);
        uint64_t have;
        xtts_status st = xtts_shard_count_records(path, &have, err);
        if (st) return st;
        long long want = json_integer_value(json_object_get(s, "records"));
        if ((long long)have != want)
            return xtts_error_set(err, XTTS_ECORRUPT, "%s: holds %llu records, %s says %lld", path, (unsigned long long)have,
                                  name, want);
        if ((st = id_sources_add(&M->all_ids, path, part, (int)k, err))) return st;
        json_t *c = json_deep_copy(s);
        if (!c) return xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", M->dir);
        json_object_set_new(c, "first_index", json_integer(M->records));
        json_array_append_new(M->shards, c);
        M->records += want;
    }
    json_t *pr = json_object_get(m, "rejects");
    if (pr) json_array_extend(M->rejects, pr);
    json_t *prj = json_object_get(m, "rejected");
    M->rejected += prj ? json_integer_value(prj) : (long long)json_array_size(pr);
    if (json_is_object(json_object_get(m, "splits"))) sum_numeric(M->splits, json_object_get(m, "splits"));
    if (json_is_object(json_object_get(m, "totals"))) sum_numeric(M->totals, json_object_get(m, "totals"));
    json_t *stats = json_object_get(m, "stats");
    json_t *f = json_object_get(stats, "frames");
    M->frames += f ? json_integer_value(f) : 0;
    json_t *a = json_object_get(stats, "mel_sum"), *b = json_object_get(stats, "mel_sumsq");
    if (!a || !b || sum_array(&M->mel_sum, M->n_mels, a) || sum_array(&M->mel_sumsq, M->n_mels, b)) M->have_sums = 0;
    return XTTS_OK;
}

/* counts, splits, totals and statistics into the merged manifest, which is parsed back (the
 * reader's checks) before it is written */
static xtts_status merge_finish(merge_t *M, xtts_error *err) {
    json_t *out = M->out;
    json_object_set_new(out, "records", json_integer(M->records));
    json_object_set_new(out, "rejected", json_integer(M->rejected));
    if (json_object_get(M->parts[0], "splits")) json_object_set(out, "splits", M->splits);
    if (json_object_get(M->parts[0], "totals")) {
        json_t *secs = json_object_get(M->totals, "audio_seconds");
        if (json_is_number(secs)) json_object_set_new(M->totals, "hours", json_real(json_number_value(secs) / 3600.0));
        json_object_set(out, "totals", M->totals);
    }
    json_t *stats = merged_stats(M->frames, M->have_sums ? M->mel_sum : NULL, M->mel_sumsq, M->n_mels);
    if (!stats) return xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", M->dir);
    json_object_set_new(out, "stats", stats);
    char path[4096];
    xtts_path_join(path, sizeof path, M->dir, "manifest.json");
    char *text = json_dumps(out, JSON_COMPACT);
    json_t *check = NULL;
    xtts_status st = text ? xtts_manifest_parse(text, strlen(text), path, &check, err)
                          : xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", path);
    free(text);
    json_decref(check);
    if (!st) st = xtts_manifest_write(path, out, err);
    return st;
}

xtts_status xtts_cache_merge(const char *dir, xtts_error *err) {
    merge_t M;
    memset(&M, 0, sizeof M);
    M.dir = dir;
    int lock_fd = -1;
    xtts_status st = xtts_lock(dir, XTTS_LOCK_NAME, 1, &lock_fd,
                               "a build (or one of its parts) or another merge is running in this directory", err);
    if (st) return st;
    xtts_remove_manifest_temps(dir, -1);
    if ((st = xtts_dir_list(dir, &M.l, err))) { xtts_unlock(lock_fd); return st; }
    if (!M.l.n_parts)
        st = xtts_error_set(err, XTTS_ENOTFOUND, "%s: no partial manifests (manifest.part-KKKKK.json) to merge", dir);
    for (size_t i = 0; !st && i < M.l.n_shards; i++)
        if (M.l.shards[i].part < 0)
            st = xtts_error_set(err, XTTS_EMISMATCH, "%s: holds shards of a whole build (shard-%05d) beside the parts; "
                                "rebuild with --force", dir, M.l.shards[i].number);
    if (!st && !(M.parts = calloc(M.l.n_parts, sizeof *M.parts))) st = xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", dir);
    if (!st) st = load_parts(dir, &M.l, M.parts, err);
    if (!st) st = check_tiling(dir, &M.l, M.parts, err);
    if (!st) st = merge_start(&M, err);
    for (size_t i = 0; !st && i < M.l.n_parts; i++) st = merge_part(&M, i, err);
    /* an id stored by two parts: refused before any manifest is written */
    if (!st) st = find_duplicate_ids(&M.all_ids, dir, err);
    if (!st) st = merge_finish(&M, err);
    id_sources_free(&M.all_ids);
    json_decref(M.shards);
    json_decref(M.rejects);
    json_decref(M.splits);
    json_decref(M.totals);
    free(M.mel_sum);
    free(M.mel_sumsq);
    json_decref(M.out);
    for (size_t i = 0; M.parts && i < M.l.n_parts; i++) json_decref(M.parts[i]);
    free(M.parts);
    xtts_dir_listing_free(&M.l);
    xtts_unlock(lock_fd);
    return st;
}
