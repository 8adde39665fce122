/* mel.h — the log-mel spectrogram on the CPU, over the parameters and presets of
 * common/mel_params.h (included here; kept apart so that what stores the parameters needs
 * no FFT library).
 *
 * The per-element math (window, reflect index, magnitude, log, filter weights) lives in
 * kernels/mel_math.h, compiled by gcc for this CPU path and by nvcc for the CUDA path.
 * Presets reproduce their reference implementations (DESIGN.md "Mel presets").
 */
#ifndef XTTS_MEL_H
#define XTTS_MEL_H

#include <stddef.h>
#include <stdint.h>

#include "common/mel_params.h"
#include "common/xtts_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The value a padded (silent) frame takes for presets without whisper_post: the log
 * floor (log(log_floor) or log10(log_floor)). Whisper's floor depends on the clip's
 * maximum, so xtts_mel_compute reports the pad value per clip. */
float xtts_mel_pad_value(const xtts_mel_params *p);

/* A reusable per-thread mel context (FFTW plan, window, sparse filterbank, scratch). */
typedef struct xtts_mel xtts_mel;

/* A context for p (checked; copied) in *out, NULL on failure.
 * Errors: XTTS_EUSAGE (p fails xtts_mel_params_check), XTTS_ENOMEM (out of memory, or FFTW
 * cannot plan the transform). */
xtts_status xtts_mel_new(const xtts_mel_params *p, xtts_mel **out, xtts_error *err);
/* NULL is allowed. */
void xtts_mel_delete(xtts_mel *m);

/* Compute the log-mel of mono float samples (at p->sample_rate) into
 * out[n_mels][out_stride] (channel-major, frame t of channel c at out[c*out_stride + t]);
 * out_stride >= n_frames. Returns the frame count in *n_frames and, in *pad_value (may be
 * NULL), the value silent padding takes for this clip (for whisper: the clip's floor after
 * post-processing, what whisper's own zero padding of the audio would give).
 * Errors: XTTS_EINPUT (too few samples for one frame), XTTS_ERANGE (out_stride below the frame
 * count, or n_samples past LONG_MAX). */
xtts_status xtts_mel_compute(xtts_mel *m, const float *samples, size_t n_samples, float *out,
                             size_t out_stride, size_t *n_frames, float *pad_value, xtts_error *err);

#ifdef __cplusplus
}
#endif
#endif
