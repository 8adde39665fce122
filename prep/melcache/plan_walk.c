/* plan_walk.c — a shared update's two passes over the inputs (plan.h): the plan's pass, which
 * reads the inputs PLAN_CHUNK at a time, keys and looks them up in the source on every thread
 * (each through a view of its own) and plans them in input order; and the build pass's side,
 * which reads only the inputs to compute (the reader jumps to where the plan's pass found
 * them), a run of kept inputs standing in one slot whose statistics the writer's thread reads. */
#include "prep/melcache/plan.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "cache/store/read/reader.h"
#include "formats/record.h"

/* 1 when the source's record carries the ids this build gives the input (the speaker and
 * language tables agree on it), so that its stored bytes are a fresh build's. */
static int same_ids(const xtts_melcache_slot *s, const xtts_cache_source_hit *h, xtts_lengths *l) {
    xtts_error e;
    xtts_record_header hdr;
    if (h->lengths) { /* the shard's "lengths" entry: the record itself is not read */
        if (xtts_lengths_unpack(h->lengths, h->lengths_len, l, &e)) return 0;
    } else if (!xtts_record_parse_header(h->record, h->len, &hdr, &e))
        xtts_lengths_from_header(&hdr, l);
    else
        return 0;
    return l->speaker_id == (uint32_t)s->rec.speaker_id && l->lang_id == (uint32_t)s->rec.lang_id;
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
    xtts_lengths f;
    *l = (plan_look){.found = h.found, .keep = h.same && xtts_melcache_plan_complete(p, &h) && same_ids(s, &h, &f),
                     .dir = h.dir, .local = h.local, .len = h.len};
    if (l->keep) l->fig = (xtts_melcache_kept_fig){f.n_frames, f.n_tokens, f.n_samples, f.split};
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
#pragma omp critical
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

xtts_status xtts_melcache_plan_walk(xtts_melcache_plan *p, xtts_melcache_inputs *in, const xtts_melcache_buffers *bs,
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
