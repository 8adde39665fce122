/* device.h — where a build computes its mels, and the start of the device that does.
 *
 * `xtts-melcache --device auto` takes the CPU path or the CUDA path, whichever a cost model
 * of the two says finishes the build sooner.
 *
 * The model (docs/xtts-melcache.md, "Device choice"; its figures were measured on an H100
 * with a 16-core host): the CPU path costs about cpu_core_s_per_hour core-seconds per hour
 * of audio, spread over the worker threads; the CUDA path costs gpu_start_s of device
 * start-up plus gpu_s_per_hour per hour of audio however many threads feed it. So the GPU
 * pays only where the host has few threads and the build is large enough to repay the
 * start-up. The amount of audio is not known before decoding: it is estimated from the
 * number of records to compute and a typical clip length. The model's functions are pure (no
 * device is touched), so that the rule is tested without a GPU.
 *
 * A run's device (xtts_melcache_device, at the end) holds the choice and the batch engine:
 * where the mels go through the batch pipeline (the CUDA path, or the CPU engine asked for
 * by XTTS_MELCACHE_BATCH), the engine is made at the start, a CUDA one on a thread of its
 * own so that the device's start-up overlaps the decoding of the first buffer.
 */
#ifndef XTTS_PREP_MELCACHE_DEVICE_H
#define XTTS_PREP_MELCACHE_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include "common/xtts_common.h"
#include "formats/manifest.h"
#include "kernels/mel_batch.h"

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

/* A run's device. */
typedef struct xtts_melcache_gpu_start xtts_melcache_gpu_start;
typedef struct {
    const char *asked;          /* --device: "auto", "cpu", "cuda", "cuda:N" (NULL: auto) */
    char name[64];              /* what computes the mels: "cpu" or "cuda:N" */
    xtts_melcache_device_model auto_model; /* --device auto's cost model */
    xtts_melcache_batch_options batch; /* XTTS_MELCACHE_BATCH's settings */
    int batched;                /* the mels go through the batch pipeline */
    xtts_mel_batch *engine;     /* with batched, once xtts_melcache_device_engine has it */
    xtts_melcache_gpu_start *starting; /* the CUDA engine being made on its own thread, or NULL */
} xtts_melcache_device;

/* --device cpu, cuda or cuda:N (asked), checked before anything is read: a device asked for
 * that is not usable stops the run. auto is decided once the build's size is known
 * (xtts_melcache_device_start); here its cost model is read, with XTTS_MELCACHE_AUTO's
 * overrides. Then XTTS_MELCACHE_BATCH's settings.
 * Errors: XTTS_EUSAGE (a bad spelling or setting), XTTS_EUNSUPPORTED (the CUDA device is not
 * usable). */
xtts_status xtts_melcache_device_choose(xtts_melcache_device *d, const char *asked, xtts_error *err);

/* The device for a build of n_records records to compute on `threads` threads (auto decided
 * now, one line on stderr says which and why), and the batch engine when the mels go through
 * the batch pipeline, for buffers of chunk records of the configuration c (kept by pointer
 * until the engine is made): a CUDA one begun on a thread of its own, on the CPU the CPU
 * batch engine when XTTS_MELCACHE_BATCH asks for it. Nothing is started when n_records is 0.
 * Errors: XTTS_ENOMEM, the CPU engine's (a CUDA engine's come from _engine). */
xtts_status xtts_melcache_device_start(xtts_melcache_device *d, const xtts_cache_config *c, int threads, size_t chunk,
                                       uint64_t n_records, xtts_error *err);

/* Wait for the CUDA engine begun by _start (at once when there is none); its error, if it
 * failed (err may be NULL). */
xtts_status xtts_melcache_device_engine(xtts_melcache_device *d, xtts_error *err);

/* The engine (waited for when it is still being made) deleted. */
void xtts_melcache_device_free(xtts_melcache_device *d);

#ifdef __cplusplus
}
#endif
#endif
