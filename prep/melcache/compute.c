/* compute.c — a buffer of records through the workers, on the CPU path or the batch
 * pipeline with its engine thread (compute.h). */
#include "prep/melcache/compute.h"

#include <omp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/mel_batch.h"
#include "prep/melcache/record.h"

/* The mels of the slots [lo, hi) of a buffer (at most 1024) that loaded and are not carried
 * over: one batch of the engine. */
static xtts_status mel_range(xtts_mel_batch *engine, xtts_melcache_slot *slots, size_t lo, size_t hi, xtts_error *err) {
    const float *samples[1024];
    size_t n_samples[1024], stride[1024], frames[1024];
    float *outs[1024];
    float pads[1024];
    size_t idx[1024], n = 0;
    for (size_t k = lo; k < hi && n < 1024; k++) {
        if (!slots[k].ok || slots[k].reused) continue;
        samples[n] = slots[k].src; n_samples[n] = slots[k].n_pcm;
        outs[n] = slots[k].b->mel; stride[n] = (size_t)slots[k].padded;
        idx[n++] = k;
    }
    if (n == 0) return XTTS_OK;
    xtts_status st = xtts_mel_batch_compute(engine, n, samples, n_samples, outs, stride, frames, pads, err);
    if (st) return st;
    for (size_t i = 0; i < n; i++) {
        slots[idx[i]].n_frames = frames[i];
        slots[idx[i]].pad_value = pads[i];
    }
    return XTTS_OK;
}

/* One sub-batch's mels, computed on the engine's thread while the workers load and finish
 * other slots. */
typedef struct {
    xtts_mel_batch *engine;
    xtts_melcache_slot *slots;
    size_t lo, hi;
    int done;
    xtts_status st;
    xtts_error err;
} mel_job;

static void mel_job_run(mel_job *j) {
    xtts_error_clear(&j->err);
    j->st = mel_range(j->engine, j->slots, j->lo, j->hi, &j->err);
}

/* The engine's thread, made once a run: it computes the job posted to it, one at a time,
 * so that every call into the engine (CUDA's included) comes from one thread, which stays
 * on its core. Without it (the thread could not be made) a job is computed when waited for. */
struct xtts_melcache_engine_thread {
    pthread_t thread;
    int running;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    mel_job *job;        /* posted, not done */
    int quit;
};
typedef xtts_melcache_engine_thread engine_thread;

static void *engine_thread_main(void *arg) {
    engine_thread *e = arg;
    pthread_mutex_lock(&e->mu);
    for (;;) {
        while (!(e->job && !e->job->done) && !e->quit) pthread_cond_wait(&e->cv, &e->mu);
        if (!e->job || e->job->done) break;
        mel_job *j = e->job;
        pthread_mutex_unlock(&e->mu);
        mel_job_run(j);
        pthread_mutex_lock(&e->mu);
        j->done = 1;
        pthread_cond_broadcast(&e->cv);
    }
    pthread_mutex_unlock(&e->mu);
    return NULL;
}

static void engine_thread_start(engine_thread *e) {
    memset(e, 0, sizeof *e);
    pthread_mutex_init(&e->mu, NULL);
    pthread_cond_init(&e->cv, NULL);
    e->running = pthread_create(&e->thread, NULL, engine_thread_main, e) == 0;
}

/* NULL or never started are allowed. */
static void engine_thread_stop(engine_thread *e) {
    if (!e || !e->running) return;
    pthread_mutex_lock(&e->mu);
    e->quit = 1;
    pthread_cond_broadcast(&e->cv);
    pthread_mutex_unlock(&e->mu);
    pthread_join(e->thread, NULL);
    pthread_mutex_destroy(&e->mu);
    pthread_cond_destroy(&e->cv);
    e->running = 0;
}

static void mel_job_post(engine_thread *e, mel_job *j) {
    if (!e->running) return;
    pthread_mutex_lock(&e->mu);
    j->done = 0;
    e->job = j;
    pthread_cond_broadcast(&e->cv);
    pthread_mutex_unlock(&e->mu);
}

static xtts_status mel_job_wait(engine_thread *e, mel_job *j, xtts_error *err) {
    if (e->running) {
        pthread_mutex_lock(&e->mu);
        while (!j->done) pthread_cond_wait(&e->cv, &e->mu);
        e->job = NULL;
        pthread_mutex_unlock(&e->mu);
    } else {
        mel_job_run(j);
    }
    if (j->st && err) *err = j->err;
    return j->st;
}

xtts_status xtts_melcache_compute_init(xtts_melcache_compute *c, const xtts_cache_config *cfg, int threads_asked,
                                       const xtts_melcache_batch_options *batch, xtts_error *err) {
    memset(c, 0, sizeof *c);
    c->cfg = cfg;
    c->threads = threads_asked > 0 ? threads_asked : omp_get_max_threads();
    c->chunk = (size_t)c->threads * 16;
    if (c->chunk < 32) c->chunk = 32;
    if (c->chunk > 1024) c->chunk = 1024; /* the CUDA batch's bound */
    if (batch->buffer_records > 0) c->chunk = (size_t)batch->buffer_records;
    c->wk = calloc((size_t)c->threads, sizeof *c->wk);
    c->wbufs = calloc((size_t)c->threads, sizeof *c->wbufs);
    c->own = calloc(c->chunk, sizeof *c->own);
    if (!c->wk || !c->wbufs || !c->own) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    for (int t = 0; t < c->threads; t++) {
        xtts_status st = xtts_record_builder_init(&c->wk[t], cfg, 1, err);
        if (st) return st;
    }
    return XTTS_OK;
}

xtts_status xtts_melcache_compute_measure(xtts_melcache_compute *c, int measure, xtts_error *err) {
    if (!measure) return XTTS_OK;
    if (!(c->qs = calloc((size_t)c->threads, sizeof *c->qs))) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    for (int t = 0; t < c->threads; t++) {
        xtts_status st = xtts_quality_state_new(&c->qs[t], err);
        if (st) return st;
    }
    return XTTS_OK;
}

void xtts_melcache_compute_engine(xtts_melcache_compute *c, xtts_melcache_device *dev) {
    c->dev = dev;
    if (!dev->batched) return;
    if (!(c->thr = calloc(1, sizeof *c->thr))) return; /* without it, a job is computed when waited for */
    engine_thread_start(c->thr);
}

/* On the worker threads, in one loop: load the slots [l0, l1) and finish the slots [f0, f1)
 * of a buffer (either range may be empty). The k-th slot of the buffer loads into the
 * pipeline's k-th buffers (c->own), and a thread takes one slot at a time with its own
 * worker state. */
static void load_and_finish(xtts_melcache_compute *c, xtts_melcache_slot *buf, size_t l0, size_t l1, size_t f0,
                            size_t f1) {
    size_t nl = l1 - l0, n = nl + (f1 - f0);
    if (n == 0) return;
#pragma omp parallel for num_threads(c->threads) schedule(dynamic, 1)
    for (size_t i = 0; i < n; i++) {
        int t = omp_get_thread_num();
        xtts_melcache_slot *s = i < nl ? &buf[l0 + i] : &buf[f0 + (i - nl)];
        if (s->reused) continue;
        if (i < nl) xtts_melcache_record_load(c->cfg, &c->wk[t], c->qs ? c->qs[t] : NULL, s, &c->own[l0 + i], 1);
        else xtts_melcache_record_finish(c->cfg, &c->wk[t], s);
    }
}

/* The batch pipeline over a buffer of m slots cut into n_sub sub-batches: while the engine
 * computes the mels of sub-batch s on a thread of its own, the workers load sub-batch s+1 and
 * finish (check, pad, encode) sub-batch s-1. The three touch disjoint slots, and each step
 * ends with the engine's thread joined, so a slot's load, mel and finish follow one another. */
static xtts_status compute_batched(xtts_melcache_compute *c, xtts_melcache_slot *buf, size_t m, xtts_error *err) {
    size_t n_sub = (size_t)c->dev->batch.sub_batches < m ? (size_t)c->dev->batch.sub_batches : m;
#define SUB_AT(i) ((i) >= n_sub ? m : m * (i) / n_sub) /* sub-batch i is [SUB_AT(i), SUB_AT(i+1)) */
    load_and_finish(c, buf, 0, SUB_AT(1), 0, 0);
    xtts_error ge;
    xtts_status gs = xtts_melcache_device_engine(c->dev, &ge); /* the first buffer's loading overlapped the CUDA start-up */
    engine_thread none = {0};
    engine_thread *thr = c->thr ? c->thr : &none;
    for (size_t sb = 0; !gs && sb < n_sub; sb++) {
        mel_job j = {.engine = c->dev->engine, .slots = buf, .lo = SUB_AT(sb), .hi = SUB_AT(sb + 1)};
        mel_job_post(thr, &j);
        load_and_finish(c, buf, SUB_AT(sb + 1), SUB_AT(sb + 2), sb ? SUB_AT(sb - 1) : 0, sb ? SUB_AT(sb) : 0);
        gs = mel_job_wait(thr, &j, &ge);
    }
    if (!gs) load_and_finish(c, buf, m, m, SUB_AT(n_sub - 1), m);
#undef SUB_AT
    if (gs && err) *err = ge;
    return gs;
}

xtts_status xtts_melcache_compute_buffer(xtts_melcache_compute *c, xtts_melcache_slot *buf, size_t m, xtts_error *err) {
    size_t todo = 0;
    for (size_t k = 0; k < m; k++) todo += !buf[k].reused;
    if (todo == 0) return XTTS_OK; /* an update's buffer of carried records: no worker woken */
    if (c->dev && c->dev->batched) return compute_batched(c, buf, m, err);
    /* one record (an update's usual buffer) on this thread: woken, the workers would spin
     * for a while after it, taking a core from the update's own thread */
#pragma omp parallel for num_threads(c->threads) schedule(dynamic, 1) if (todo > 1)
    for (size_t k = 0; k < m; k++) {
        if (buf[k].reused) continue;
        int t = omp_get_thread_num();
        xtts_melcache_record_load(c->cfg, &c->wk[t], c->qs ? c->qs[t] : NULL, &buf[k], &c->wbufs[t], 0);
        xtts_melcache_record_mel(&c->wk[t], &buf[k]);
        xtts_melcache_record_finish(c->cfg, &c->wk[t], &buf[k]);
    }
    return XTTS_OK;
}

void xtts_melcache_compute_free(xtts_melcache_compute *c) {
    engine_thread_stop(c->thr);
    free(c->thr);
    if (c->wk)
        for (int t = 0; t < c->threads; t++) xtts_record_builder_free(&c->wk[t]);
    if (c->wbufs)
        for (int t = 0; t < c->threads; t++) xtts_melcache_slot_bufs_free(&c->wbufs[t]);
    if (c->own)
        for (size_t k = 0; k < c->chunk; k++) xtts_melcache_slot_bufs_free(&c->own[k]);
    if (c->qs)
        for (int t = 0; t < c->threads; t++) xtts_quality_state_delete(c->qs[t]);
    free(c->wk);
    free(c->wbufs);
    free(c->own);
    free(c->qs);
    memset(c, 0, sizeof *c);
}
