/* pipeline.c — the write pipeline: buffers filled, looked up and computed on the calling
 * thread, written in input order on the writer thread (pipeline.h). */
#include "prep/melcache/pipeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/store/keys.h"
#include "cache/store/quality_store.h"
#include "cache/store/writer.h"

static void report_reject(const xtts_melcache_options *o, const char *name, const xtts_melcache_input *x, uint64_t input,
                          const char *reason) {
    if (!o->quiet) fprintf(stderr, "xtts-melcache: %s: record %llu (%s): rejected: %s\n", name,
                           (unsigned long long)input + 1, x->id, reason);
    if (o->rejects) fprintf(o->rejects, "%s\t%s\n", x->id, reason);
}

/* One record into the writer: a carried-over one with its entries as the source held them;
 * a computed one with its content key and sums, and its quality metrics when the build
 * stores them. */
static xtts_status put_record(xtts_melcache_pipe *p, const xtts_melcache_slot *s, xtts_error *err) {
    const xtts_melcache_input *x = &s->rec;
    if (s->reused)
        return xtts_cache_writer_put_entries(p->build->w, s->input, x->id, s->bytes, s->len, x->audio_path, s->ent, s->n_ent,
                                             err);
    int nm = p->o->cfg.mel.n_mels;
    xtts_keys_value_pack(s->key, nm, s->sum, s->sumsq, p->keys_value);
    xtts_cache_entry v[2] = {{XTTS_KEYS_DB, p->keys_value, xtts_keys_value_bytes(nm)}};
    size_t n = 1;
    uint8_t q[XTTS_QUALITY_BYTES];
    if (p->build->measure) {
        xtts_quality_encode(&s->quality, q);
        v[n++] = (xtts_cache_entry){XTTS_CACHE_DB_QUALITY, q, sizeof q};
    }
    return xtts_cache_writer_put_entries(p->build->w, s->input, x->id, s->bytes, s->len, x->audio_path, v, n, err);
}

/* The digest of the inputs up to the slot's, and its id, for the commit that ends with it. */
static xtts_status save_inputs(xtts_melcache_pipe *p, const xtts_melcache_slot *s, xtts_error *err) {
    uint8_t digest[32];
    xtts_sha256 c = s->keys_upto;
    xtts_sha256_final(&c, digest);
    return xtts_melcache_inputs_save(p->build->w, digest, s->rec.id, err);
}

static xtts_status write_buffer(xtts_melcache_pipe *p, const xtts_melcache_slot *buf, size_t m, xtts_error *err) {
    const xtts_melcache_options *o = p->o;
    xtts_melcache_stats *stats = p->build->stats;
    xtts_status st = XTTS_OK;
    for (size_t k = 0; k < m && !st; k++) {
        const xtts_melcache_slot *s = &buf[k];
        const xtts_melcache_input *x = &s->rec;
        if (!p->speakers_noted) { /* joins the commit of this first input */
            if ((st = xtts_cache_writer_set_state(p->build->w, XTTS_MELCACHE_SPEAKERS_KEY, "sorted", 6, err))) break;
            p->speakers_noted = 1;
        }
        if (p->build->measure && !p->quality_noted) { /* joins the commit of this first input */
            /* the version its entries have; a resumed build keeps its note ("1": either) */
            static const char version[] = {'0' + XTTS_QUALITY_VERSION};
            if (!xtts_melcache_state_has(p->build->w, XTTS_MELCACHE_QUALITY_KEY) &&
                (st = xtts_cache_writer_set_state(p->build->w, XTTS_MELCACHE_QUALITY_KEY, version, 1, err)))
                break;
            p->quality_noted = 1;
        }
        if (s->run_end > s->input) { /* kept inputs: their sums read here, off the computing threads */
            if (!p->view) st = xtts_cache_source_view_open(p->plan->src, &p->view, err);
            if (!st) st = xtts_melcache_plan_keep_run(p->plan, p->view, s->input, s->run_end, stats, err);
            p->done_sel += s->run_end - s->input;
            continue;
        }
        if (s->ok) {
            xtts_melcache_stats_add(stats, s->n_frames, s->n_tokens, s->n_pcm, s->split, s->sum, s->sumsq,
                                    o->cfg.mel.sample_rate);
            /* a kept record is not written: its sums join the state saved with the next
             * input the writer takes, which a resume starts after */
            if (!s->kept) st = xtts_melcache_stats_save(p->build->w, stats, err);
            if (!st && !s->kept) st = save_inputs(p, s, err);
            if (!st && !s->kept) st = put_record(p, s, err);
        } else {
            report_reject(o, p->in->name, x, s->input, s->reason);
            st = xtts_melcache_stats_save(p->build->w, stats, err);
            if (!st) st = save_inputs(p, s, err);
            if (!st) st = xtts_cache_writer_reject(p->build->w, s->input, x->id, s->reason, err);
        }
        p->done_sel++;
    }
    char extra[128];
    double el = xtts_now_s() - p->t0;
    snprintf(extra, sizeof extra, "%.3f h audio, %.1f h/h", stats->audio_seconds / 3600.0,
             el > 0 ? (stats->audio_seconds - p->audio_at_start) / el : 0.0);
    xtts_progress_update(&p->prog, p->done_sel, p->res->selected, extra);
    return st;
}

/* The writer thread: the buffers in turn, as they are handed over, until stopped. */
static void *write_loop(void *arg) {
    xtts_melcache_pipe *p = arg;
    for (int b = 0;; b ^= 1) {
        pthread_mutex_lock(&p->mu);
        while (!p->ready[b] && !p->stop) pthread_cond_wait(&p->cv, &p->mu);
        if (!p->ready[b]) { pthread_mutex_unlock(&p->mu); break; }
        int failed = p->st != XTTS_OK;
        pthread_mutex_unlock(&p->mu);
        xtts_error e;
        xtts_status st = failed ? XTTS_OK : write_buffer(p, p->bs->slots + (size_t)b * p->bs->chunk, p->m[b], &e);
        pthread_mutex_lock(&p->mu);
        if (st && !p->st) { p->st = st; p->err = e; }
        p->ready[b] = 0;
        pthread_cond_broadcast(&p->cv);
        pthread_mutex_unlock(&p->mu);
    }
    xtts_cache_source_view_close(p->view); /* its transactions are this thread's */
    p->view = NULL;
    return NULL;
}

/* Start the writer thread over the two buffers; its progress line counts the records of the
 * part stored before this run as done. */
static xtts_status pipe_start(xtts_melcache_pipe *p, xtts_error *err) {
    const xtts_melcache_build *b = p->build;
    uint64_t lo = p->in->lo, hi = p->in->hi;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    p->ready[0] = p->ready[1] = p->stop = 0;
    p->st = XTTS_OK;
    p->audio_at_start = b->stats->audio_seconds;
    p->res->metrics = b->measure;
    p->done_sel = b->start > lo ? (b->start < hi ? b->start - lo : hi - lo) : 0;
    xtts_progress_init(&p->prog, "xtts-melcache", p->o->progress);
    if (!(p->keys_value = malloc(xtts_keys_value_bytes(p->o->cfg.mel.n_mels))) ||
        pthread_create(&p->thread, NULL, write_loop, p) != 0) {
        pthread_mutex_destroy(&p->mu); pthread_cond_destroy(&p->cv);
        return xtts_error_set(err, XTTS_ENOMEM, p->keys_value ? "cannot start the writer thread" : "out of memory");
    }
    return XTTS_OK;
}

/* Wait until the writer is done with buffer b; 1 when it has failed (nothing more is computed). */
static int pipe_wait_free(xtts_melcache_pipe *p, int b) {
    pthread_mutex_lock(&p->mu);
    while (p->ready[b] && !p->st) pthread_cond_wait(&p->cv, &p->mu);
    int failed = p->st != XTTS_OK;
    pthread_mutex_unlock(&p->mu);
    return failed;
}

static void pipe_hand_over(xtts_melcache_pipe *p, int b, size_t m) {
    pthread_mutex_lock(&p->mu);
    p->m[b] = m;
    p->ready[b] = 1;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

/* No more buffers: the writer writes what it was handed, then ends; its error is the run's
 * unless the run already has one. */
static xtts_status pipe_stop(xtts_melcache_pipe *p, xtts_status st, xtts_error *err) {
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    pthread_join(p->thread, NULL);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    free(p->keys_value);
    p->keys_value = NULL;
    if (!st && p->st) {
        st = p->st;
        if (err) *err = p->err;
    }
    return st;
}

/* A buffer's records: their content keys, their lookups in the source, then the computing of
 * those not carried over. */
static xtts_status prepare_buffer(xtts_melcache_pipe *p, xtts_melcache_slot *buf, size_t m, xtts_error *err) {
    xtts_melcache_buffer_keys(p->bs, p->in, buf, m);
    xtts_status st = xtts_melcache_plan_buffer(p->plan, buf, m, err);
    if (!st) st = xtts_melcache_compute_buffer(p->compute, buf, m, err);
    return st;
}

xtts_status xtts_melcache_pipeline_run(xtts_melcache_pipe *p, xtts_error *err) {
    xtts_status st = pipe_start(p, err);
    if (st) return st;
    xtts_melcache_slot *bufs[2] = {p->bs->slots, p->bs->slots + p->bs->chunk};
    uint64_t lo = p->in->lo, start = p->build->start;
    uint64_t next = start > lo ? start : lo; /* the resume left the stream there */
    for (int b = 0; !st && next < p->in->hi; b ^= 1) {
        if (pipe_wait_free(p, b)) break;
        size_t m;
        st = xtts_melcache_plan_fill(p->plan, p->bs, p->in, bufs[b], &next, p->in->hi, &m, err);
        if (st || m == 0) break;
        st = prepare_buffer(p, bufs[b], m, err);
        if (st) break;
        pipe_hand_over(p, b, m);
    }
    return pipe_stop(p, st, err);
}
