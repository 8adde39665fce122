/* plan.c — updates and reuse: the source, the plan of a shared update, the lookups that carry
 * records over (plan.h). */
#include "prep/melcache/plan.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/store/read/reader.h"
#include "cache/store/update_dir.h"
#include "formats/record.h"
#include "formats/record_ids.h"

/* Take the source's record for the slot, when it holds one with the slot's key: its bytes
 * with this build's speaker and language ids, its sums, its entries. 0 when it cannot be
 * taken (then it is computed). */
static int take_hit(xtts_melcache_plan *p, xtts_melcache_slot *s, const xtts_cache_source_hit *h) {
    const xtts_cache_config *c = p->cfg;
    uint8_t *copy = realloc(s->bytes, h->len);
    if (!copy) return 0;
    s->bytes = copy;
    memcpy(copy, h->record, h->len);
    xtts_record_header hdr;
    xtts_error e;
    if (xtts_record_set_ids(copy, h->len, (uint32_t)s->rec.speaker_id, (uint32_t)s->rec.lang_id, &e) ||
        xtts_record_parse_header(copy, h->len, &hdr, &e) ||
        xtts_keys_value_unpack(h->keys_value, h->keys_len, c->mel.n_mels, s->sum, s->sumsq))
        return 0;
    s->len = h->len;
    s->n_frames = hdr.n_frames;
    s->n_pcm = hdr.n_samples;
    s->n_tokens = hdr.n_tokens;
    s->split = hdr.split;
    memcpy(s->ent, h->entries, h->n_entries * sizeof *h->entries);
    s->n_ent = h->n_entries;
    s->reused = 1;
    s->ok = 1;
    return 1;
}

/* Look every slot of the buffer up in the source, in input order (one thread: the source's
 * transactions are not shared); with dry_run only count. */
xtts_status xtts_melcache_plan_buffer(xtts_melcache_plan *p, xtts_melcache_slot *buf, size_t m, xtts_error *err) {
    const xtts_cache_config *c = p->cfg;
    for (size_t k = 0; k < m; k++) {
        xtts_melcache_slot *s = &buf[k];
        const xtts_melcache_input *x = &s->rec;
        if (s->run_end > s->input) { /* kept: the writer's thread reads their sums (plan_keep_run) */
            p->res->reused += s->run_end - s->input;
            p->res->shared += s->run_end - s->input;
            s->reused = s->kept = s->ok = 1;
            continue;
        }
        s->reused = s->kept = 0;
        /* what the build would reject is computed (and rejected) again */
        int storable = !x->reject && x->lang_id >= 0 && x->n_tokens > 0 && x->n_tokens <= (uint32_t)c->max_tokens;
        xtts_cache_source_hit h = {0};
        if (p->src && storable) {
            xtts_status st = xtts_cache_source_find(p->src, x->id, s->key, &h, err);
            if (st) return st;
        }
        int complete = h.same && xtts_melcache_plan_complete(p, xtts_melcache_hit_has_quality(&h));
        if (complete && (p->dry_run || take_hit(p, s, &h))) {
            s->reused = 1;
            p->res->reused++;
            continue;
        }
        p->res->computed++;
        if (h.found) p->res->replaced++;
    }
    return XTTS_OK;
}


/* The stat records saved in the shards of the finished cache dir, into h: every shard's (a
 * build saves them with its last commit, so an update's shards shared with the old cache hold
 * the old build's, as good as the new ones while their files' stat matches), each directory
 * once. A cache that does not open gives none: the files are read. */
static void load_stat_records(const char *dir, xtts_audio_hasher *h) {
    xtts_cache *c;
    xtts_cache_reader *rd;
    xtts_error e;
    if (xtts_cache_open(dir, &c, &e)) return;
    if (xtts_cache_reader_new(c, &rd, &e)) {
        xtts_cache_close(c);
        return;
    }
    size_t n = xtts_cache_n_shards(c), n_dirs = 0;
    const char **dirs = malloc((n ? n : 1) * sizeof *dirs); /* the directories read: a few, however many runs */
    for (size_t i = 0; dirs && i < n; i++) {
        xtts_cache_shard s;
        xtts_cache_shard_get(c, i, &s);
        int seen = 0; /* a shared directory is listed once a run of its records */
        for (size_t k = 0; k < n_dirs && !seen; k++) seen = !strcmp(s.name, dirs[k]);
        if (!seen) dirs[n_dirs++] = s.name;
        char *val;
        size_t len;
        if (seen || xtts_cache_reader_meta(rd, i, "state:" XTTS_MELCACHE_STAT_KEY, &val, &len, &e)) continue;
        (void)xtts_audio_hasher_load(h, val, len, &e); /* out of memory: the files are read */
        free(val);
    }
    free(dirs);
    xtts_cache_reader_delete(rd);
    xtts_cache_close(c);
}

xtts_status xtts_melcache_plan_source(xtts_melcache_plan *p, const char *dir, int update, xtts_error *err) {
    char cfg_hash[65];
    xtts_cache_config_hash(p->cfg, cfg_hash);
    xtts_status st = xtts_cache_source_open(dir, cfg_hash, &p->src, err);
    if (st == XTTS_EUNSUPPORTED && err) {
        char m[XTTS_ERRMSG_MAX];
        snprintf(m, sizeof m, "%s", err->msg);
        xtts_error_set(err, XTTS_EUNSUPPORTED, "%.600s: records cannot be carried over from it; %s", m,
                       update ? "run --update --force once to rebuild it whole (later updates carry records over)"
                              : "rebuild it with this version first");
    }
    if (!st) p->res->has_source = 1;
    if (!st && p->hasher) load_stat_records(dir, p->hasher);
    return st;
}

xtts_status xtts_melcache_plan_update(xtts_melcache_plan *p, const xtts_melcache_options *o, xtts_error *err) {
    xtts_cache_dir_state ds;
    xtts_status st = xtts_cache_dir_probe(o->out_dir, &ds, err);
    if (st || ds == XTTS_DIR_EMPTY) return st;
    if (ds == XTTS_DIR_UNFINISHED && !o->force)
        return xtts_error_set(err, XTTS_EINPUT, "%s: an unfinished build, not a cache to update: finish it first (the same "
                              "command without --update), or use --force to rebuild it", o->out_dir);
    if (ds == XTTS_DIR_UNFINISHED) return XTTS_OK;
    if (!o->dry_run && (st = xtts_update_dir_lock(o->out_dir, o->part < 0, &p->lock_fd, err))) return st; /* a dry run writes nothing */
    st = xtts_melcache_plan_source(p, o->out_dir, 1, err);
    if (st == XTTS_EMISMATCH && o->force) { /* rebuilt in place, as without --update: its writer locks it */
        xtts_update_dir_unlock(p->lock_fd);
        p->lock_fd = -1;
        return XTTS_OK;
    }
    if (st == XTTS_EUNSUPPORTED && o->force) st = XTTS_OK;
    if (st || o->dry_run) return st;
    /* absolute, so that "--out ." or "--out cache/" has a sibling to be exchanged with */
    errno = 0;
    if (!realpath(o->out_dir, p->target) || !strcmp(p->target, "/"))
        return xtts_error_set(err, XTTS_EIO, "%s: cannot update the cache here: %s", o->out_dir,
                              errno ? strerror(errno) : "the root directory");
    if ((st = xtts_update_dir_path(p->target, p->stage, sizeof p->stage, err))) return st;
    p->staging = 1;
    return XTTS_OK;
}

xtts_status xtts_melcache_plan_stage(xtts_melcache_plan *p, xtts_error *err) {
    int resumed;
    return p->staging ? xtts_update_dir_prepare(p->target, p->stage, &resumed, err) : XTTS_OK;
}

/* ---- a shared update (cache/store/share.h) ---------------------------------------------- */

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Whether the plan is taken: not when the stream names one source record twice (the
 * writer would reject the repeat, which it cannot see among kept records), nor when it is
 * not worth it. */
static int plan_taken(xtts_melcache_plan *p) {
    qsort(p->found_at, p->n_found, sizeof *p->found_at, cmp_u64);
    for (size_t i = 1; i < p->n_found; i++)
        if (p->found_at[i] == p->found_at[i - 1]) {
            snprintf(p->res->compact_why, sizeof p->res->compact_why, "the stream repeats an id the cache holds");
            return 0;
        }
    return xtts_share_plan_worth(p->plan, p->res->compact_why, sizeof p->res->compact_why);
}

/* The mode an update began in (a re-run continues in it): 1 sharing, 0 copying, -1 not begun. */
static int share_mode_saved(const xtts_melcache_plan *p, const xtts_melcache_build *b) {
    if (b->start <= p->lo) return -1;
    void *data = NULL;
    size_t len = 0;
    xtts_error e;
    if (xtts_cache_writer_get_state(b->w, XTTS_MELCACHE_SHARE_KEY, &data, &len, &e)) return 0; /* begun before sharing: copies */
    int on = len == 1 && *(char *)data == '1';
    free(data);
    return on;
}

/* The part's inputs from its first (p->lo), a buffer at a time with their content keys,
 * through the plan's step (plan_slots) or the dry run's lookups (xtts_melcache_plan_buffer). */
static xtts_status walk_keyed(xtts_melcache_plan *p, xtts_melcache_inputs *in, xtts_melcache_buffers *bs,
                              xtts_error *err) {
    xtts_status st = xtts_melcache_inputs_seek(in, p->lo, err);
    uint64_t next = p->lo;
    while (!st && next < in->hi) {
        size_t m;
        st = xtts_melcache_buffer_fill(in, bs->slots, bs->chunk, &next, in->hi, &m, err);
        if (!st) xtts_melcache_buffer_keys(bs, in, bs->slots, m);
        if (!st) st = xtts_melcache_plan_buffer(p, bs->slots, m, err);
    }
    return st;
}

/* The plan taken: its figures; or dropped: every record copied. */
static xtts_status plan_settle(xtts_melcache_plan *p, const xtts_melcache_build *b, int saved, xtts_error *err) {
    xtts_melcache_result *res = p->res;
    int take = plan_taken(p) || saved == 1;
    if (take) {
        xtts_share_figures f;
        xtts_share_plan_figures(p->plan, &f);
        res->shared_runs = f.runs;
        res->garbage_bytes = f.garbage_bytes;
        return saved < 0 ? xtts_cache_writer_set_state(b->w, XTTS_MELCACHE_SHARE_KEY, "1", 1, err) : XTTS_OK;
    }
    res->compacted = 1;
    xtts_share_plan_free(p->plan);
    p->plan = NULL;
    free(p->keep_bits);
    p->keep_bits = NULL;
    free(p->kept_at);
    p->kept_at = NULL;
    free(p->kept_fig);
    p->kept_fig = NULL;
    return xtts_cache_writer_set_state(b->w, XTTS_MELCACHE_SHARE_KEY, "0", 1, err);
}

xtts_status xtts_melcache_plan_share(xtts_melcache_plan *p, const xtts_melcache_build *b, int compact,
                                     xtts_melcache_buffers *bs, xtts_error *err) {
    xtts_melcache_result *res = p->res;
    int saved = share_mode_saved(p, b);
    xtts_error pe;
    if (saved == 0 || (saved < 0 && compact)) {
        res->compacted = 1;
        snprintf(res->compact_why, sizeof res->compact_why, saved == 0 ? "the update began copying" : "--compact");
    } else if (xtts_share_probe(p->src, p->stage, &pe)) {
        res->compacted = 1;
        snprintf(res->compact_why, sizeof res->compact_why, "%.150s", pe.msg);
    }
    if (res->compacted) return saved < 0 ? xtts_cache_writer_set_state(b->w, XTTS_MELCACHE_SHARE_KEY, "0", 1, err) : XTTS_OK;
    xtts_status st = xtts_share_plan_new(p->src, &p->plan, err);
    if (!st) st = xtts_melcache_plan_seen_apply(p, err);
    bs->keys.planned = p->plan_keys; /* the build pass takes the keys from here */
    bs->keys.planned_from = p->lo;
    if (st) return st;
    return plan_settle(p, b, saved, err);
}

/* The records the source held that the new cache does not (ids gone or replaced). */
static void count_dropped(xtts_melcache_plan *p) {
    uint64_t kept = p->res->reused + p->res->replaced, had = xtts_cache_source_records(p->src);
    p->res->has_dropped = 1;
    p->res->dropped = had > kept ? had - kept : 0;
}

xtts_status xtts_melcache_plan_dry(xtts_melcache_plan *p, int whole, xtts_melcache_inputs *in,
                                   xtts_melcache_buffers *bs, xtts_error *err) {
    p->res->selected = in->hi - p->lo;
    xtts_status st = walk_keyed(p, in, bs, err);
    if (p->src && whole) count_dropped(p);
    return st;
}

uint64_t xtts_melcache_plan_to_compute(const xtts_melcache_plan *p, uint64_t from, uint64_t hi) {
    uint64_t n = hi > from ? hi - from : 0;
    if (p->keep_bits)
        for (uint64_t i = from; i < hi; i++)
            if (xtts_melcache_plan_is_kept(p, i)) n--;
    return n;
}

xtts_status xtts_melcache_plan_finish(xtts_melcache_plan *p, int whole, xtts_status st, xtts_error *err) {
    xtts_melcache_result *res = p->res;
    if (p->src && whole && res->resumed_from == 0) count_dropped(p);
    if (!st && p->plan) st = xtts_share_finish(p->plan, p->stage, &res->stored, err);
    if (!st && p->staging && (whole || res->merged)) {
        xtts_share_plan_free(p->plan);
        p->plan = NULL;
        xtts_cache_source_close(p->src); /* its shards are about to be removed */
        p->src = NULL;
        st = xtts_update_dir_switch(p->target, p->stage, err);
        res->switched = !st;
    }
    return st;
}

void xtts_melcache_plan_init(xtts_melcache_plan *p, const xtts_cache_config *cfg, xtts_melcache_result *res,
                             int dry_run) {
    memset(p, 0, sizeof *p);
    p->cfg = cfg;
    p->res = res;
    p->dry_run = dry_run;
    p->lock_fd = -1;
}

void xtts_melcache_plan_free(xtts_melcache_plan *p) {
    xtts_share_plan_free(p->plan);
    free(p->plan_keys);
    free(p->keep_bits);
    free(p->found_at);
    free(p->kept_at);
    free(p->kept_fig);
    free(p->parse_at);
    free(p->seen);
    free(p->renumber);
    xtts_cache_source_close(p->src);
    if (p->lock_fd >= 0) xtts_update_dir_unlock(p->lock_fd);
    memset(p, 0, sizeof *p);
    p->lock_fd = -1;
}
