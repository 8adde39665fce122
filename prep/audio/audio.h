/* audio.h — the audio front end: decode any format libsndfile reads (chosen by content, not
 * by file name), downmix to mono by channel mean, resample to a target rate with libsoxr
 * (default) or libsamplerate, reject unusable audio with a reason, optionally trim leading
 * and trailing silence.
 *
 * One xtts_audio context per thread; it owns the buffers it returns, reused from call to
 * call. Nothing here is shared between contexts.
 */
#ifndef XTTS_AUDIO_H
#define XTTS_AUDIO_H

#include <stddef.h>
#include <stdint.h>

#include "common/xtts_common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int target_rate;    /* Hz, 1000..384000 */
    char resampler[16]; /* "soxr" (default when empty) or "libsamplerate" */
    char quality[16];   /* soxr: quick low mq hq vhq (default hq); libsamplerate: sinc_fastest
                           sinc_medium sinc_best linear zoh (default sinc_medium); "" = default */
    double trim_db;     /* > 0: trim leading/trailing 10 ms frames whose RMS is more than
                           trim_db below the loudest frame's; 0 = off */
    double max_seconds; /* > 0: reject audio longer than this while decoding, before any
                           resampling (bounds the work a long or hostile file costs); 0 = off */
} xtts_audio_options;

typedef struct {
    int source_rate;          /* Hz, as decoded */
    int channels;             /* before the downmix */
    int64_t source_frames;    /* samples per channel, as decoded */
    char format[32];          /* container/encoding, e.g. "wav/pcm_16", "flac/pcm_24", "ogg/vorbis" */
    size_t trimmed_head;      /* samples removed at the start by --trim-db (target rate) */
    size_t trimmed_tail;      /* samples removed at the end */
} xtts_audio_info;

typedef struct xtts_audio xtts_audio;

/* Check options: rate range, resampler and quality names, trim_db in 0..200.
 * XTTS_EUSAGE with the offending value named.
 * Errors: XTTS_EUSAGE only. */
xtts_status xtts_audio_options_check(const xtts_audio_options *opt, xtts_error *err);

/* A context for opt (checked; copied) in *out, NULL on failure.
 * Errors: XTTS_EUSAGE (as xtts_audio_options_check), XTTS_ENOMEM. */
xtts_status xtts_audio_new(const xtts_audio_options *opt, xtts_audio **out, xtts_error *err);
/* NULL is allowed. */
void xtts_audio_delete(xtts_audio *a);

/* Decode path, downmix, resample to opt->target_rate, trim. On XTTS_OK *samples points to
 * *n mono float samples owned by the context and valid until its next call; info (may be
 * NULL) describes the source. Errors, with the path in the message:
 *   XTTS_ENOTFOUND  the file (or a directory on its path) does not exist
 *   XTTS_EIO        it exists but cannot be read (permissions, a directory, a fifo)
 *   XTTS_EINPUT     empty file, not audio libsndfile can decode, no samples, a sample of
 *                   any channel that is NaN, infinite or beyond ±1024 (60 dB over full
 *                   scale: float and double files; integer formats decode to [-1, 1]),
 *                   a decode error part way, an unusable channel count or rate,
 *                   longer than max_seconds (or the sample limit), the resampler fails
 *   XTTS_ENOMEM     the decoded or resampled audio does not fit in memory
 * Silent audio is not an error. */
xtts_status xtts_audio_load(xtts_audio *a, const char *path, const float **samples, size_t *n,
                            xtts_audio_info *info, xtts_error *err);

/* As xtts_audio_load, from encoded bytes in memory (name is used in messages only).
 * Errors: XTTS_EINPUT, XTTS_ENOMEM (as xtts_audio_load; no XTTS_ENOTFOUND or XTTS_EIO). */
xtts_status xtts_audio_load_memory(xtts_audio *a, const void *data, size_t len, const char *name,
                                   const float **samples, size_t *n, xtts_audio_info *info, xtts_error *err);

/* Resample mono in[n_in] from in_rate to the context's target rate with its resampler;
 * on XTTS_OK *out points to *n_out samples owned by the context (valid until its next call),
 * or, when the rates are equal, *out is in itself (nothing to do, nothing copied). Used by
 * xtts_audio_load and by benchmarks.
 * Errors: XTTS_EINPUT (in_rate not usable, a ratio past libsamplerate's 256x, the resampler
 * reports an error), XTTS_ENOMEM. */
xtts_status xtts_audio_resample(xtts_audio *a, const float *in, size_t n_in, int in_rate, const float **out,
                                size_t *n_out, xtts_error *err);

#ifdef __cplusplus
}
#endif
#endif
