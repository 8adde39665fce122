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
 *
 * The writer's steps, each in a file of its own: this spine (options, open, finish, abort),
 * writer_resume.c (the directory taken: locks, resume or replace), writer_commit.c (put,
 * reject, state, commit), writer_core.c (what they share, writer_core.h).
 */
#include "cache/store/writer.h"
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

#define DEFAULT_SHARD_BYTES ((uint64_t)1 << 30)
#define DEFAULT_COMMIT_EVERY 256u

void xtts_cache_writer_options_defaults(xtts_cache_writer_options *opt, const char *dir) {
    memset(opt, 0, sizeof *opt);
    opt->dir = dir;
    opt->part = -1;
    opt->shard_bytes = DEFAULT_SHARD_BYTES;
    opt->commit_every = DEFAULT_COMMIT_EVERY;
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

xtts_status xtts_cache_writer_open(const xtts_cache_writer_options *opt, const xtts_cache_config *cfg,
                                   xtts_cache_writer **out, xtts_error *err) {
    *out = NULL;
    xtts_status st = check_open_options(opt, cfg, err);
    if (st) return st;
    if ((st = xtts_dir_check_cache_or_empty(opt->dir, err))) return st;
    xtts_cache_writer *w = NULL;
    st = writer_new(opt, cfg, &w, err);
    if (!st) st = xtts_writer_lock(w, err);
    if (!st) st = xtts_writer_take_dir(w, opt, err);
    if (st) {
        xtts_writer_free(w);
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
    if (st) { xtts_writer_free(w); return st; }
    const xtts_manifest_extra none = {0};
    json_t *m = build_manifest(w, extra ? extra : &none);
    if (!m) {
        xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory building the manifest", w->dir);
        xtts_writer_free(w);
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
    xtts_writer_free(w);
    return st;
}

void xtts_cache_writer_abort(xtts_cache_writer *w) { xtts_writer_free(w); }
