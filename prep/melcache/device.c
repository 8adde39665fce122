/* device.c — the cost model behind `xtts-melcache --device auto`, and a run's device: its
 * choice and its batch engine's start (see device.h). */
#include "prep/melcache/device.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/mel_cuda.h"

/* Fitted to builds on an H100 with a 16-core host (docs/xtts-melcache.md, "Device choice"):
 * the CPU path's 11.4 s for 100 h at -j 16 is 1.8 core-seconds an hour; the CUDA path's
 * 12.9 s and 13.2 s for the same 100 h at -j 8 and -j 16, less its 0.9 s of start-up (a 1-h
 * build: 1.07 s), leave 0.12 s an hour that more threads do not lower; 100 h in 60,000
 * records is 6 s a clip. */
void xtts_melcache_device_model_defaults(xtts_melcache_device_model *m) {
    m->cpu_core_s_per_hour = 1.8;
    m->gpu_s_per_hour = 0.12;
    m->gpu_start_s = 0.9;
    m->clip_seconds = 6.0;
}

/* The next item of a comma-separated "key=value,..." setting: copies it into item (cap bytes)
 * and moves *p past it; *val points at its value, or is NULL when the item has no '='. */
static xtts_status next_item(const char **p, const char *env, char *item, size_t cap, char **val, xtts_error *err) {
    size_t n = strcspn(*p, ",");
    if (n >= cap) return xtts_error_set(err, XTTS_EUSAGE, "%s: '%.40s...' is too long", env, *p);
    memcpy(item, *p, n);
    item[n] = '\0';
    *p += n;
    if (**p == ',') (*p)++;
    char *eq = strchr(item, '=');
    if (eq) *eq = '\0';
    *val = eq ? eq + 1 : NULL;
    return XTTS_OK;
}

xtts_status xtts_melcache_device_model_parse(xtts_melcache_device_model *m, const char *spec, xtts_error *err) {
    if (!spec || !*spec) return XTTS_OK;
    xtts_melcache_device_model t = *m;
    const char *p = spec;
    while (*p) {
        char item[128], *val;
        double v;
        xtts_status st = next_item(&p, XTTS_MELCACHE_AUTO_ENV, item, sizeof item, &val, err);
        if (st) return st;
        if (!val || xtts_parse_double(val, 0.0, 1e9, &v) != 0)
            return xtts_error_set(err, XTTS_EUSAGE, "%s: '%s%s%s': expected key=number (keys: cpu, gpu, start, clip)",
                                  XTTS_MELCACHE_AUTO_ENV, item, val ? "=" : "", val ? val : "");
        if (!strcmp(item, "cpu")) t.cpu_core_s_per_hour = v;
        else if (!strcmp(item, "gpu")) t.gpu_s_per_hour = v;
        else if (!strcmp(item, "start")) t.gpu_start_s = v;
        else if (!strcmp(item, "clip") && v > 0) t.clip_seconds = v;
        else
            return xtts_error_set(err, XTTS_EUSAGE, "%s: '%s=%s': expected cpu, gpu, start or clip (clip above 0)",
                                  XTTS_MELCACHE_AUTO_ENV, item, val);
    }
    *m = t;
    return XTTS_OK;
}

double xtts_melcache_audio_hours_estimate(const xtts_melcache_device_model *m, uint64_t n_records,
                                          double max_clip_seconds) {
    double clip = m->clip_seconds;
    if (max_clip_seconds > 0 && max_clip_seconds < clip) clip = max_clip_seconds;
    return (double)n_records * clip / 3600.0;
}

int xtts_melcache_gpu_pays(const xtts_melcache_device_model *m, int threads, double audio_hours, char *why,
                           size_t why_len) {
    if (threads < 1) threads = 1;
    if (audio_hours < 0) audio_hours = 0;
    double cpu_per_hour = m->cpu_core_s_per_hour / threads;
    double cpu_s = cpu_per_hour * audio_hours;
    double gpu_s = m->gpu_start_s + m->gpu_s_per_hour * audio_hours;
    if (cpu_per_hour <= m->gpu_s_per_hour) {
        /* no build is large enough: the GPU path is no faster an hour than the threads are */
        if (why) snprintf(why, why_len, "%d threads beat the GPU path on this build", threads);
        return 0;
    }
    if (cpu_s <= gpu_s) {
        if (why) snprintf(why, why_len, "~%.2f h of audio is too little to repay the GPU's start-up", audio_hours);
        return 0;
    }
    if (why) snprintf(why, why_len, "%d thread%s, ~%.1f h of audio: the GPU path is faster", threads,
                      threads == 1 ? "" : "s", audio_hours);
    return 1;
}

void xtts_melcache_batch_options_defaults(xtts_melcache_batch_options *b) {
    b->cpu_engine = 0;
    b->sub_batches = 4;
    b->buffer_records = 0;
}

xtts_status xtts_melcache_batch_options_parse(xtts_melcache_batch_options *b, const char *spec, xtts_error *err) {
    if (!spec || !*spec) return XTTS_OK;
    xtts_melcache_batch_options t = *b;
    const char *p = spec;
    while (*p) {
        char item[128], *val;
        long v = 0;
        xtts_status st = next_item(&p, XTTS_MELCACHE_BATCH_ENV, item, sizeof item, &val, err);
        if (st) return st;
        if (val && !strcmp(item, "engine") && !strcmp(val, "cpu")) t.cpu_engine = 1;
        else if (val && !strcmp(item, "sub") && xtts_parse_long(val, 1, 64, &v) == 0) t.sub_batches = (int)v;
        else if (val && !strcmp(item, "buffer") && xtts_parse_long(val, 1, 1024, &v) == 0) t.buffer_records = (int)v;
        else
            return xtts_error_set(err, XTTS_EUSAGE, "%s: '%s%s%s': expected engine=cpu, sub=1..64 or buffer=1..1024",
                                  XTTS_MELCACHE_BATCH_ENV, item, val ? "=" : "", val ? val : "");
    }
    *b = t;
    return XTTS_OK;
}

/* ---- a run's device -------------------------------------------------------------- */

static int device_is_auto(const xtts_melcache_device *d) { return !d->asked || !strcmp(d->asked, "auto"); }

xtts_status xtts_melcache_device_choose(xtts_melcache_device *d, const char *asked, xtts_error *err) {
    d->asked = asked;
    xtts_melcache_device_model_defaults(&d->auto_model);
    xtts_status st;
    if (device_is_auto(d)) {
        st = xtts_melcache_device_model_parse(&d->auto_model, getenv(XTTS_MELCACHE_AUTO_ENV), err);
    } else {
        int ordinal;
        st = xtts_device_choose(asked, "xtts-melcache", &ordinal, err);
        if (!st && ordinal < 0) snprintf(d->name, sizeof d->name, "cpu");
        else if (!st) snprintf(d->name, sizeof d->name, "cuda:%d", ordinal);
    }
    if (st) return st;
    xtts_melcache_batch_options_defaults(&d->batch);
    return xtts_melcache_batch_options_parse(&d->batch, getenv(XTTS_MELCACHE_BATCH_ENV), err);
}

/* --device auto for a build of n_records records on `threads` threads: cuda:0 only where the
 * cost model says the GPU path is faster and the device is usable; one line on stderr says
 * which and why. The device is not looked for when the CPU path wins anyway, so a build that
 * stays on the CPU pays nothing for the GPU's presence. */
static void choose_auto(xtts_melcache_device *d, const xtts_cache_config *c, int threads, uint64_t n_records) {
    double max_clip_s = (double)xtts_cache_config_max_padded_frames(c) * c->mel.hop_samples / c->mel.sample_rate;
    double hours = xtts_melcache_audio_hours_estimate(&d->auto_model, n_records, max_clip_s);
    char why[160], cuda_why[256] = "";
    snprintf(d->name, sizeof d->name, "cpu");
    if (!xtts_melcache_gpu_pays(&d->auto_model, threads, hours, why, sizeof why)) {
        fprintf(stderr, "xtts-melcache: device: cpu (auto: %s; --device cuda to force)\n", why);
        return;
    }
    if (!xtts_cuda_device_usable(0, cuda_why, sizeof cuda_why)) {
        fprintf(stderr, "xtts-melcache: device: cpu (CUDA not used: %s)\n", cuda_why);
        return;
    }
    snprintf(d->name, sizeof d->name, "cuda:0");
    fprintf(stderr, "xtts-melcache: device: cuda:0 (auto: %s; --device cpu to force)\n", why);
}

/* The device context, made on a thread of its own: the device's start-up (context, pinned and
 * device buffers, cuFFT plans) overlaps the decoding of the first buffer instead of preceding
 * it. Nothing else touches CUDA until xtts_melcache_device_engine has joined the thread. */
struct xtts_melcache_gpu_start {
    pthread_t thread;
    const xtts_mel_params *mel;
    int ordinal;
    size_t max_clips, max_samples;
    xtts_mel_batch *engine;
    xtts_status st;
    xtts_error err;
};

static void *gpu_start_main(void *arg) {
    xtts_melcache_gpu_start *g = arg;
    xtts_error_clear(&g->err);
    g->st = xtts_mel_batch_new_cuda(g->mel, g->ordinal, g->max_clips, g->max_samples, &g->engine, &g->err);
    return NULL;
}

/* The line on stderr that says a build goes through the batch pipeline as XTTS_MELCACHE_BATCH
 * set it. */
static void batch_note(const xtts_melcache_device *d, size_t chunk, const char *engine) {
    const char *env = getenv(XTTS_MELCACHE_BATCH_ENV);
    if (env && *env)
        fprintf(stderr, "xtts-melcache: batch pipeline: %s engine, buffers of %zu records in %d sub-batches (%s)\n",
                engine, chunk, d->batch.sub_batches, XTTS_MELCACHE_BATCH_ENV);
}

/* The engine g made (or failed to make) into d; g is freed. */
static xtts_status gpu_take(xtts_melcache_device *d, xtts_melcache_gpu_start *g, xtts_error *err) {
    d->engine = g->engine;
    xtts_status st = g->st;
    if (st && err) *err = g->err;
    free(g);
    return st;
}

/* Begin the CUDA engine of the device on a thread of its own (xtts_melcache_device_engine
 * waits for it), or make it here when no thread can be made. */
static xtts_status gpu_begin(xtts_melcache_device *d, const xtts_cache_config *cfg, size_t chunk, xtts_error *err) {
    xtts_melcache_gpu_start *g = calloc(1, sizeof *g);
    if (!g) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    g->mel = &cfg->mel;
    g->ordinal = atoi(d->name + 5);
    g->max_clips = chunk;
    g->max_samples = chunk * ((size_t)xtts_cache_config_max_padded_frames(cfg) + 2) * (size_t)cfg->mel.hop_samples +
                     chunk * (size_t)cfg->mel.n_fft;
    if (pthread_create(&g->thread, NULL, gpu_start_main, g) == 0) {
        d->starting = g;
        return XTTS_OK;
    }
    gpu_start_main(g);
    return gpu_take(d, g, err);
}

xtts_status xtts_melcache_device_start(xtts_melcache_device *d, const xtts_cache_config *c, int threads, size_t chunk,
                                       uint64_t n_records, xtts_error *err) {
    if (device_is_auto(d)) choose_auto(d, c, threads, n_records);
    /* with nothing left to compute (a finished build resumed), no device start-up */
    if (n_records == 0) return XTTS_OK;
    int cuda = !strncmp(d->name, "cuda:", 5);
    if (!cuda && !d->batch.cpu_engine) return XTTS_OK;
    batch_note(d, chunk, cuda ? "cuda" : "cpu");
    xtts_status st = cuda ? gpu_begin(d, c, chunk, err) : xtts_mel_batch_new_cpu(&c->mel, &d->engine, err);
    if (st) return st;
    d->batched = 1;
    return XTTS_OK;
}

xtts_status xtts_melcache_device_engine(xtts_melcache_device *d, xtts_error *err) {
    xtts_melcache_gpu_start *g = d->starting;
    if (!g) return XTTS_OK;
    pthread_join(g->thread, NULL);
    d->starting = NULL;
    return gpu_take(d, g, err);
}

void xtts_melcache_device_free(xtts_melcache_device *d) {
    xtts_melcache_device_engine(d, NULL); /* an engine still being made is waited for, then deleted */
    xtts_mel_batch_delete(d->engine);
    d->engine = NULL;
}
