/* plan.c — updates and reuse: the source, the plan of a shared update, the lookups that carry
 * records over (plan.h). */
#include "prep/melcache/plan.h"

#include <errno.h>
#include <omp.h>
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

/* A build that stores quality metrics takes only records that carry them (a source built
 * without them, by resuming a build begun before them, holds none). */
static int hit_complete(const xtts_melcache_plan *p, const xtts_cache_source_hit *h) {
    if (!p->measure && !p->dry_run) return 1;
    for (size_t i = 0; i < h->n_entries; i++)
        if (!strcmp(h->entries[i].db, XTTS_CACHE_DB_QUALITY)) return 1;
    return 0;
}

static int is_kept(const xtts_melcache_plan *p, uint64_t input) {
    return p->keep_bits && (p->keep_bits[(input - p->lo) / 8] >> ((input - p->lo) % 8) & 1);
}

xtts_status xtts_melcache_plan_keep_run(const xtts_melcache_plan *p, xtts_cache_source_view *v, uint64_t from,
                                        uint64_t to, xtts_melcache_stats *stats, xtts_error *err) {
    const xtts_cache_config *c = p->cfg;
    double sum[XTTS_RECORD_MAX_MELS], sumsq[XTTS_RECORD_MAX_MELS];
    for (uint64_t u = from; u < to; u++) {
        uint64_t at = p->kept_at[u - p->lo];
        const xtts_melcache_kept_fig *f = &p->kept_fig[u - p->lo];
        xtts_cache_source_hit h;
        xtts_status st = xtts_cache_source_view_get(v, (size_t)(at >> 40), at & ((1ull << 40) - 1),
                                                    p->plan_keys + (u - p->lo) * 32, 0, &h, err);
        if (st) return st;
        if (!h.same || xtts_keys_value_unpack(h.keys_value, h.keys_len, c->mel.n_mels, sum, sumsq))
            return xtts_error_set(err, XTTS_ECORRUPT, "%s: the record of input %llu changed since the update planned to keep it",
                                  p->target, (unsigned long long)u + 1);
        xtts_melcache_stats_add(stats, f->n_frames, f->n_tokens, f->n_samples, (int)f->split, sum, sumsq, c->mel.sample_rate);
    }
    return XTTS_OK;
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
        if (h.same && hit_complete(p, &h) && (p->dry_run || take_hit(p, s, &h))) {
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
    size_t n = xtts_cache_n_shards(c);
    for (size_t i = 0; i < n; i++) {
        xtts_cache_shard s, t;
        xtts_cache_shard_get(c, i, &s);
        int seen = 0; /* a shared directory is listed once a run of its records */
        for (size_t k = 0; k < i && !seen; k++) {
            xtts_cache_shard_get(c, k, &t);
            seen = !strcmp(s.name, t.name);
        }
        char *val;
        size_t len;
        if (seen || xtts_cache_reader_meta(rd, i, "state:" XTTS_MELCACHE_STAT_KEY, &val, &len, &e)) continue;
        (void)xtts_audio_hasher_load(h, val, len, &e); /* out of memory: the files are read */
        free(val);
    }
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

xtts_status xtts_melcache_plan_update(xtts_melcache_plan *p, xtts_melcache_options *o, xtts_error *err) {
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
    int resumed;
    if ((st = xtts_update_dir_prepare(p->target, p->stage, &resumed, err))) return st;
    p->staging = 1;
    o->out_dir = p->stage;
    o->force = 1; /* the stage is this update's own: whatever it holds that is not this build's goes */
    return XTTS_OK;
}

/* ---- a shared update (cache/share.h) ---------------------------------------------- */

/* 1 when the source's record carries the ids this build gives the input (the speaker and
 * language tables agree on it), so that its stored bytes are a fresh build's. */
static int same_ids(const xtts_melcache_slot *s, const xtts_cache_source_hit *h, xtts_record_header *hdr) {
    xtts_error e;
    return !xtts_record_parse_header(h->record, h->len, hdr, &e) && hdr->speaker_id == (uint32_t)s->rec.speaker_id &&
           hdr->lang_id == (uint32_t)s->rec.lang_id;
}

/* Where the stream holds the slot's input, which the build pass reads again. */
static xtts_status note_parse_at(xtts_melcache_plan *p, const xtts_melcache_slot *s, xtts_error *err) {
    if (p->n_parse_at == p->cap_parse_at) {
        size_t cap = p->cap_parse_at ? 2 * p->cap_parse_at : 1024;
        xtts_melcache_parse_at *a = realloc(p->parse_at, cap * sizeof *a);
        if (!a) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
        p->parse_at = a;
        p->cap_parse_at = cap;
    }
    p->parse_at[p->n_parse_at++] = (xtts_melcache_parse_at){s->input, s->pos};
    return XTTS_OK;
}

/* The reader of the build pass at input target, a later one than it stands at. */
static xtts_status skip_to(const xtts_melcache_plan *p, xtts_melcache_inputs *in, uint64_t target, xtts_error *err) {
    size_t a = 0, b = p->n_parse_at;
    while (a < b) {
        size_t mid = a + (b - a) / 2;
        if (p->parse_at[mid].input < target) a = mid + 1; else b = mid;
    }
    if (a < p->n_parse_at && p->parse_at[a].input == target && in->next < target)
        return xtts_melcache_inputs_jump(in, target, &p->parse_at[a].pos, err);
    return xtts_melcache_inputs_seek(in, target, err); /* read through (the plan's pass did not see it) */
}

xtts_status xtts_melcache_plan_fill(const xtts_melcache_plan *p, const xtts_melcache_buffers *bs, xtts_melcache_inputs *in,
                                    xtts_melcache_slot *buf, uint64_t *next, uint64_t end, size_t *m, xtts_error *err) {
    if (!p->keep_bits) return xtts_melcache_buffer_fill(in, buf, bs->chunk, next, end, m, err);
    xtts_status st = XTTS_OK;
    *m = 0;
    while (!st && *m < bs->chunk && *next < end) {
        xtts_melcache_slot *s = &buf[*m];
        if (is_kept(p, *next)) { /* the run of kept inputs from here, in one slot */
            uint64_t e = *next + 1;
            while (e < end && e - *next < XTTS_MELCACHE_RUN_MAX && is_kept(p, e)) e++;
            s->input = *next;
            s->run_end = e;
            s->reused = s->kept = 0;
            s->n_ent = 0;
            *next = e - 1;
        } else {
            if (in->next != *next) st = skip_to(p, in, *next, err);
            if (!st) st = xtts_melcache_slot_read(in, s, *next, err);
        }
        if (!st) (*next)++, (*m)++;
    }
    return st;
}

/* What the plan's pass learns of one input (on any thread): whether the source holds its id
 * (found, where), and whether it stays where the source stores it (keep: the same content
 * key, complete, and the ids this build gives it). */
typedef struct {
    int found, keep;
    size_t dir;
    uint64_t local;
    size_t len;
    xtts_melcache_kept_fig fig; /* with keep */
} plan_look;

#define PLAN_CHUNK 1024 /* inputs a step of the plan's pass reads, then keys and looks up in parallel */

static xtts_status look_one(const xtts_melcache_plan *p, xtts_cache_source_view *v, const xtts_melcache_slot *s,
                            plan_look *l, xtts_error *err) {
    const xtts_cache_config *c = p->cfg;
    const xtts_melcache_input *x = &s->rec;
    int storable = !x->reject && x->lang_id >= 0 && x->n_tokens > 0 && x->n_tokens <= (uint32_t)c->max_tokens;
    xtts_cache_source_hit h = {0};
    const char *need = p->measure || p->dry_run ? XTTS_CACHE_DB_QUALITY : NULL;
    xtts_status st = storable ? xtts_cache_source_view_find(v, x->id, s->key, need, &h, err) : XTTS_OK;
    xtts_record_header hdr;
    *l = (plan_look){.found = h.found, .keep = h.same && hit_complete(p, &h) && same_ids(s, &h, &hdr), .dir = h.dir,
                     .local = h.local, .len = h.len};
    if (l->keep) l->fig = (xtts_melcache_kept_fig){hdr.n_frames, hdr.n_tokens, hdr.n_samples, hdr.split};
    return st;
}

/* The plan's step for each input, in input order: kept where the source stores it, or taken
 * by the writer; the plan's keys and found_at collect the keys and the source records named. */
static xtts_status apply_one(xtts_melcache_plan *p, const xtts_melcache_slot *s, const plan_look *l, xtts_error *err) {
    uint64_t i = s->input - p->lo;
    memcpy(p->plan_keys + i * 32, s->key, 32);
    if (l->found) p->found_at[p->n_found++] = (uint64_t)l->dir << 40 | l->local;
    if (l->keep) {
        p->keep_bits[i / 8] |= (uint8_t)(1u << (i % 8));
        p->kept_at[i] = (uint64_t)l->dir << 40 | l->local;
        p->kept_fig[i] = l->fig;
        (void)xtts_share_plan_keep(p->plan, l->dir, l->local, l->len); /* past the bound: the plan says so */
        return XTTS_OK;
    }
    (void)xtts_share_plan_write(p->plan, s->input);
    return note_parse_at(p, s, err);
}

/* The first failure of a step of the plan's pass, in input order. */
typedef struct {
    xtts_status st;
    size_t at;
    xtts_error err;
} plan_fail;

/* The keys and lookups of buf[0..m), shared among the threads of the enclosing parallel
 * region (each with its view of the source), the first failure into f. */
static void look_all(const xtts_melcache_plan *p, const xtts_melcache_keys *k, const xtts_melcache_inputs *in,
                     xtts_cache_source_view **views, xtts_melcache_slot *buf, plan_look *looks, size_t m, plan_fail *f) {
#pragma omp for schedule(dynamic, 16) nowait
    for (size_t i = 0; i < m; i++) {
        xtts_error e;
        xtts_melcache_slot_key(k, in, &buf[i]);
        xtts_status st = look_one(p, views[omp_get_thread_num()], &buf[i], &looks[i], &e);
        if (st) {
#pragma omp critical(plan_look_error)
            if (i < f->at) *f = (plan_fail){st, i, e};
        }
    }
}

/* One step: the keys and lookups of the m inputs in buf, while one thread reads the next
 * inputs into nbuf (*nm of them). Returns the first failure in input order. */
static xtts_status plan_step(xtts_melcache_plan *p, xtts_melcache_inputs *in, const xtts_melcache_buffers *bs,
                             xtts_cache_source_view **views, int threads, xtts_melcache_slot *buf, size_t m,
                             plan_look *looks, xtts_melcache_slot *nbuf, size_t *nm, uint64_t *next, xtts_error *err) {
    plan_fail f = {XTTS_OK, m, {0}}, fill = {XTTS_OK, 0, {0}};
    int more = *next < in->hi;
    *nm = 0;
#pragma omp parallel num_threads(threads)
    {
#pragma omp single nowait
        if (more) fill.st = xtts_melcache_buffer_fill(in, nbuf, PLAN_CHUNK, next, in->hi, nm, &fill.err);
        look_all(p, &bs->keys, in, views, buf, looks, m, &f);
    }
    for (size_t i = 0; !f.st && i < m; i++) f.st = apply_one(p, &buf[i], &looks[i], &f.err);
    if (!f.st) f = fill;
    if (f.st && err) *err = f.err;
    return f.st;
}

/* The plan's pass over the part's inputs: PLAN_CHUNK at a time read, keyed and looked up in
 * parallel (the next ones read meanwhile), then planned in input order. */
static xtts_status plan_walk(xtts_melcache_plan *p, xtts_melcache_inputs *in, const xtts_melcache_buffers *bs,
                             xtts_error *err) {
    int threads = bs->keys.threads > 0 ? bs->keys.threads : 1;
    xtts_melcache_slot *buf = calloc(2 * PLAN_CHUNK, sizeof *buf);
    plan_look *looks = calloc(PLAN_CHUNK, sizeof *looks);
    xtts_cache_source_view **views = calloc((size_t)threads, sizeof *views);
    xtts_status st = buf && looks && views ? XTTS_OK : xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    for (int t = 0; !st && t < threads; t++) st = xtts_cache_source_view_open(p->src, &views[t], err);
    if (!st) st = xtts_melcache_inputs_seek(in, p->lo, err);
    uint64_t next = p->lo;
    size_t m = 0;
    if (!st) st = xtts_melcache_buffer_fill(in, buf, PLAN_CHUNK, &next, in->hi, &m, err);
    for (int b = 0; !st && m > 0; b ^= 1) {
        size_t nm;
        st = plan_step(p, in, bs, views, threads, buf + b * PLAN_CHUNK, m, looks, buf + (b ^ 1) * PLAN_CHUNK, &nm,
                       &next, err);
        m = nm;
    }
    for (int t = 0; views && t < threads; t++) xtts_cache_source_view_close(views[t]);
    for (size_t i = 0; buf && i < 2 * PLAN_CHUNK; i++) xtts_melcache_input_free(&buf[i].rec);
    free(views);
    free(looks);
    free(buf);
    return st;
}

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

/* The plan's pass over the inputs: their keys (kept for the build pass), and for each
 * whether it stays in the old shards. The stream and its running digest are left as the
 * resume left them. */
static xtts_status plan_pass(xtts_melcache_plan *p, const xtts_melcache_build *b, xtts_melcache_inputs *in,
                             xtts_melcache_buffers *bs, xtts_error *err) {
    xtts_sha256 saved = in->keys_ctx;
    xtts_status st = plan_walk(p, in, bs, err);
    if (!st) st = xtts_melcache_inputs_seek(in, b->start > p->lo ? b->start : p->lo, err);
    in->keys_ctx = saved;
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
                                     xtts_melcache_inputs *in, xtts_melcache_buffers *bs, xtts_error *err) {
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
    uint64_t n = in->hi - p->lo;
    p->plan_keys = malloc(n ? n * 32 : 1);
    p->keep_bits = calloc((n + 7) / 8 + 1, 1);
    p->found_at = malloc((n ? n : 1) * sizeof *p->found_at);
    p->kept_at = malloc((n ? n : 1) * sizeof *p->kept_at);
    p->kept_fig = malloc((n ? n : 1) * sizeof *p->kept_fig);
    if (!p->plan_keys || !p->keep_bits || !p->found_at || !p->kept_at || !p->kept_fig) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    xtts_status st = xtts_share_plan_new(p->src, &p->plan, err);
    if (!st) st = plan_pass(p, b, in, bs, err);
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
            if (is_kept(p, i)) n--;
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
    xtts_cache_source_close(p->src);
    if (p->lock_fd >= 0) xtts_update_dir_unlock(p->lock_fd);
    memset(p, 0, sizeof *p);
    p->lock_fd = -1;
}
