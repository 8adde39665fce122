/* plan_walk.c — a shared update's two passes over the inputs (plan.h): the plan's pass, which
 * is the stream's first reading: it reads the inputs PLAN_CHUNK at a time while the other
 * threads key and look up the chunk before in the source (each through a view of its own),
 * and once the stream is read whole and its speakers numbered, plans them in input order;
 * and the build pass's side, which reads only the inputs to compute (the reader jumps to
 * where the plan's pass found them), a run of kept inputs standing in one slot whose
 * statistics the writer's thread reads. */
#include "prep/melcache/plan.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "cache/store/read/reader.h"
#include "formats/record.h"

/* The ids and figures the source's record was stored with: from its shard's "lengths" entry
 * (the record itself is not read), else its header. -1 when neither reads. */
static int stored_lengths(const xtts_cache_source_hit *h, xtts_lengths *l) {
    xtts_error e;
    xtts_record_header hdr;
    if (h->lengths) return xtts_lengths_unpack(h->lengths, h->lengths_len, l, &e) ? -1 : 0;
    if (xtts_record_parse_header(h->record, h->len, &hdr, &e)) return -1;
    xtts_lengths_from_header(&hdr, l);
    return 0;
}

/* Where the stream holds input `input`, which the build pass reads again. */
static xtts_status note_parse_at(xtts_melcache_plan *p, uint64_t input, const xtts_tokens_pos *pos, xtts_error *err) {
    if (p->n_parse_at == p->cap_parse_at) {
        size_t cap = p->cap_parse_at ? 2 * p->cap_parse_at : 1024;
        xtts_melcache_parse_at *a = realloc(p->parse_at, cap * sizeof *a);
        if (!a) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
        p->parse_at = a;
        p->cap_parse_at = cap;
    }
    p->parse_at[p->n_parse_at++] = (xtts_melcache_parse_at){input, *pos};
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
        if (xtts_melcache_plan_is_kept(p, *next)) { /* the run of kept inputs from here, in one slot */
            uint64_t e = *next + 1;
            while (e < end && e - *next < XTTS_MELCACHE_RUN_MAX && xtts_melcache_plan_is_kept(p, e)) e++;
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

#define PLAN_CHUNK 1024 /* inputs a step of the plan's pass reads, then keys and looks up in parallel */

/* Input s keyed and looked up in the source through v (on any thread): what the pass sees of
 * it into p's arrays at its index. */
static xtts_status look_one(const xtts_melcache_plan *p, const xtts_melcache_keys *k, xtts_cache_source_view *v,
                            xtts_melcache_slot *s, xtts_error *err) {
    const xtts_cache_config *c = p->cfg;
    const xtts_melcache_input *x = &s->rec;
    uint64_t i = s->input - p->lo;
    xtts_melcache_slot_key(k, s);
    memcpy(p->plan_keys + i * 32, s->key, 32);
    int storable = !x->reject && x->lang_id >= 0 && x->n_tokens > 0 && x->n_tokens <= (uint32_t)c->max_tokens;
    xtts_cache_source_hit h = {0};
    xtts_status st = storable ? xtts_cache_source_view_find(v, x->id, s->key, XTTS_CACHE_DB_QUALITY, &h, err) : XTTS_OK;
    xtts_melcache_plan_seen *w = &p->seen[i];
    *w = (xtts_melcache_plan_seen){.pos = s->pos, .len = h.len, .first_speaker = (uint32_t)x->speaker_id,
                                   .found = (uint8_t)h.found, .same = (uint8_t)h.same};
    p->kept_at[i] = (uint64_t)h.dir << 40 | h.local;
    xtts_lengths l;
    if (h.same && stored_lengths(&h, &l)) w->same = 0;
    if (!w->same) return st;
    w->has_quality = (uint8_t)xtts_melcache_hit_has_quality(&h);
    w->speaker_id = l.speaker_id;
    w->same_lang = l.lang_id == (uint32_t)x->lang_id;
    p->kept_fig[i] = (xtts_melcache_kept_fig){l.n_frames, l.n_tokens, l.n_samples, l.split};
    return st;
}

/* Room in the pass's arrays for n inputs. Errors: XTTS_ENOMEM. */
static xtts_status reserve_inputs(xtts_melcache_plan *p, size_t n, xtts_error *err) {
    if (n <= p->cap_inputs) return XTTS_OK;
    size_t cap = p->cap_inputs ? p->cap_inputs : 16 * PLAN_CHUNK;
    while (cap < n) cap *= 2;
    uint8_t *keys = realloc(p->plan_keys, cap * 32);
    if (keys) p->plan_keys = keys;
    uint64_t *at = realloc(p->kept_at, cap * sizeof *at);
    if (at) p->kept_at = at;
    xtts_melcache_kept_fig *fig = realloc(p->kept_fig, cap * sizeof *fig);
    if (fig) p->kept_fig = fig;
    xtts_melcache_plan_seen *seen = realloc(p->seen, cap * sizeof *seen);
    if (seen) p->seen = seen;
    if (!keys || !at || !fig || !seen) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    p->cap_inputs = cap;
    return XTTS_OK;
}

/* The first failure of a step of the plan's pass, in input order. */
typedef struct {
    xtts_status st;
    size_t at;
    xtts_error err;
} plan_fail;

/* Up to PLAN_CHUNK inputs of the stream's first reading into buf (*m of them). */
static void read_chunk(xtts_melcache_inputs *in, xtts_melcache_slot *buf, size_t *m, plan_fail *f) {
    *m = 0;
    while (*m < PLAN_CHUNK) {
        xtts_melcache_slot *s = &buf[*m];
        int rc = xtts_melcache_inputs_scan_next(in, &s->rec, &s->pos, &f->err);
        if (rc < 0) f->st = f->err.code ? f->err.code : XTTS_EINPUT;
        if (rc != 1) return;
        s->input = in->n - 1;
        (*m)++;
    }
}

/* The keys and lookups of buf[0..m), shared among the threads of the enclosing parallel
 * region (each with its view of the source), the first failure into f. */
static void look_all(const xtts_melcache_plan *p, const xtts_melcache_keys *k, xtts_cache_source_view **views,
                     xtts_melcache_slot *buf, size_t m, plan_fail *f) {
#pragma omp for schedule(dynamic, 16) nowait
    for (size_t i = 0; i < m; i++) {
        xtts_error e;
        xtts_status st = look_one(p, k, views[omp_get_thread_num()], &buf[i], &e);
        if (st) {
#pragma omp critical
            if (i < f->at) *f = (plan_fail){st, i, e};
        }
    }
}

/* One step: the keys and lookups of the m inputs in buf, while one thread reads the next
 * inputs into nbuf (*nm of them). Returns the first failure in input order. */
static xtts_status plan_step(xtts_melcache_plan *p, xtts_melcache_inputs *in, const xtts_melcache_buffers *bs,
                             xtts_cache_source_view **views, int threads, xtts_melcache_slot *buf, size_t m,
                             xtts_melcache_slot *nbuf, size_t *nm, xtts_error *err) {
    plan_fail f = {XTTS_OK, m, {0}}, fill = {XTTS_OK, 0, {0}};
    xtts_status st = reserve_inputs(p, in->n + PLAN_CHUNK, err); /* the arrays do not move while threads write them */
    if (st) return st;
#pragma omp parallel num_threads(threads)
    {
#pragma omp single nowait
        read_chunk(in, nbuf, nm, &fill);
        look_all(p, &bs->keys, views, buf, m, &f);
    }
    if (!f.st) f = fill;
    if (f.st && err) *err = f.err;
    return f.st;
}

xtts_status xtts_melcache_plan_walk(xtts_melcache_plan *p, xtts_melcache_inputs *in, const xtts_melcache_buffers *bs,
                                    xtts_error *err) {
    int threads = bs->keys.threads > 0 ? bs->keys.threads : 1;
    xtts_melcache_slot *buf = calloc(2 * PLAN_CHUNK, sizeof *buf);
    xtts_cache_source_view **views = calloc((size_t)threads, sizeof *views);
    xtts_status st = buf && views ? XTTS_OK : xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    for (int t = 0; !st && t < threads; t++) st = xtts_cache_source_view_open(p->src, &views[t], err);
    p->lo = 0;
    size_t m = 0;
    if (!st) {
        plan_fail fill = {XTTS_OK, 0, {0}};
        read_chunk(in, buf, &m, &fill);
        if ((st = fill.st) && err) *err = fill.err;
    }
    for (int b = 0; !st && m > 0; b ^= 1) {
        size_t nm = 0;
        st = plan_step(p, in, bs, views, threads, buf + b * PLAN_CHUNK, m, buf + (b ^ 1) * PLAN_CHUNK, &nm, err);
        m = nm;
    }
    if (!st) st = xtts_melcache_inputs_scan_end(in, &p->renumber, err);
    p->n_seen = in->n;
    for (int t = 0; views && t < threads; t++) xtts_cache_source_view_close(views[t]);
    for (size_t i = 0; buf && i < 2 * PLAN_CHUNK; i++) xtts_melcache_input_free(&buf[i].rec);
    free(views);
    free(buf);
    return st;
}

xtts_status xtts_melcache_plan_seen_apply(xtts_melcache_plan *p, xtts_error *err) {
    uint64_t n = p->n_seen;
    p->keep_bits = calloc((n + 7) / 8 + 1, 1);
    p->found_at = malloc((n ? n : 1) * sizeof *p->found_at);
    if (!p->keep_bits || !p->found_at) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    xtts_status st = XTTS_OK;
    for (uint64_t i = 0; !st && i < n; i++) {
        const xtts_melcache_plan_seen *w = &p->seen[i];
        const uint64_t at = p->kept_at[i];
        if (w->found) p->found_at[p->n_found++] = at;
        if (w->same && xtts_melcache_plan_complete(p, w->has_quality) && w->same_lang &&
            w->speaker_id == (uint32_t)p->renumber[w->first_speaker]) { /* its stored bytes are a fresh build's */
            p->keep_bits[i / 8] |= (uint8_t)(1u << (i % 8));
            (void)xtts_share_plan_keep(p->plan, (size_t)(at >> 40), at & ((1ull << 40) - 1), w->len); /* past the bound: the plan says so */
        } else {
            (void)xtts_share_plan_write(p->plan, p->lo + i);
            st = note_parse_at(p, p->lo + i, &w->pos, err);
        }
    }
    free(p->seen);
    p->seen = NULL;
    return st;
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
