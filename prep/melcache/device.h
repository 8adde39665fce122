/* device.h — where `xtts-melcache --device auto` computes the mels: the CPU path or the
 * CUDA path, whichever a cost model of the two says finishes the build sooner.
 *
 * The model (docs/xtts-melcache.md, "Device choice"; its figures were measured on an H100
 * with a 16-core host): the CPU path costs about cpu_core_s_per_hour core-seconds per hour
 * of audio, spread over the worker threads; the CUDA path costs gpu_start_s of device
 * start-up plus gpu_s_per_hour per hour of audio however many threads feed it. So the GPU
 * pays only where the host has few threads and the build is large enough to repay the
 * start-up. The amount of audio is not known before decoding: it is estimated from the
 * number of records to compute and a typical clip length. Pure functions (no device is
 * touched), so that the rule is tested without a GPU.
 */
#ifndef XTTS_PREP_MELCACHE_DEVICE_H
#define XTTS_PREP_MELCACHE_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include "common/xtts_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The environment variable whose "key=value,..." list overrides fields of the model
 * (xtts_melcache_device_model_parse). */
#define XTTS_MELCACHE_AUTO_ENV "XTTS_MELCACHE_AUTO"

typedef struct {
    double cpu_core_s_per_hour; /* CPU path: core-seconds per hour of audio (1.8) */
    double gpu_s_per_hour;      /* CUDA path: seconds per hour of audio, its floor whatever the threads (0.12) */
    double gpu_start_s;         /* CUDA path: device start-up, paid once a run (0.9) */
    double clip_seconds;        /* the typical clip, to estimate the audio from a record count (6) */
} xtts_melcache_device_model;

/* The model fitted to the measured figures (the values in the comments above). */
void xtts_melcache_device_model_defaults(xtts_melcache_device_model *m);

/* Overrides from spec, a comma-separated list of key=value with keys cpu (cpu_core_s_per_hour),
 * gpu (gpu_s_per_hour), start (gpu_start_s) and clip (clip_seconds), each a number >= 0
 * (clip > 0); NULL or "" changes nothing. Fields not named keep their values. On an error m
 * is unchanged.
 * Errors: XTTS_EUSAGE for an unknown key or a bad value (the message names both). */
xtts_status xtts_melcache_device_model_parse(xtts_melcache_device_model *m, const char *spec, xtts_error *err);

/* The hours of audio n_records records of up to max_clip_seconds each (the longest clip the
 * build stores; <= 0: no bound) are estimated to hold: n_records * min(clip, max). */
double xtts_melcache_audio_hours_estimate(const xtts_melcache_device_model *m, uint64_t n_records,
                                          double max_clip_seconds);

/* 1 when the CUDA path is estimated to finish audio_hours of audio sooner than the CPU path
 * on `threads` worker threads (threads < 1 counts as 1), else 0. why (may be NULL) gets the
 * reason in a few words, e.g. "16 threads beat the GPU path on this build" or "4 threads,
 * ~100.0 h of audio: the GPU path is faster". Whether a device is there is the caller's
 * question, asked only when this says 1. */
int xtts_melcache_gpu_pays(const xtts_melcache_device_model *m, int threads, double audio_hours, char *why,
                           size_t why_len);

/* The environment variable whose "key=value,..." list sets the batch pipeline, the path
 * the mels take when a device computes them a batch at a time (docs/xtts-melcache.md,
 * "The batch pipeline"): a testing and diagnostic setting (xtts_melcache_batch_options_parse). */
#define XTTS_MELCACHE_BATCH_ENV "XTTS_MELCACHE_BATCH"

typedef struct {
    int cpu_engine;     /* 1: a build on the CPU goes through the batch pipeline too, its mels
                           computed by the CPU batch engine (kernels/mel_batch.h) */
    int sub_batches;    /* the parts a buffer is cut into: the device computes one while the
                           workers decode the next and encode the one before (4) */
    int buffer_records; /* records a buffer holds; 0: the build's own (16 a thread, 32..1024) */
} xtts_melcache_batch_options;

/* The defaults: the CPU path as it is, 4 sub-batches, the build's buffers. */
void xtts_melcache_batch_options_defaults(xtts_melcache_batch_options *b);

/* Settings from spec, a comma-separated list of engine=cpu (cpu_engine), sub=N (sub_batches,
 * 1..64) and buffer=N (buffer_records, 1..1024); NULL or "" changes nothing. On an error b is
 * unchanged.
 * Errors: XTTS_EUSAGE for an unknown key or a bad value (the message names both). */
xtts_status xtts_melcache_batch_options_parse(xtts_melcache_batch_options *b, const char *spec, xtts_error *err);

#ifdef __cplusplus
}
#endif
#endif
