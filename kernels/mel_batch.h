/* mel_batch.h — the log-mels of a batch of clips, computed by one of two engines behind one
 * interface: the CUDA engine (kernels/mel_cuda.h: one xtts_mel_cuda_compute_batch call) and
 * the CPU engine (one xtts_mel context, xtts_mel_compute clip after clip: the function the
 * CPU path of every program calls, so its results are the CPU path's, bit for bit).
 *
 * A caller that hands batches to a device and overlaps that with other work (xtts-melcache's
 * batch pipeline) is written once against this interface; with the CPU engine the same
 * caller runs, and is tested, on machines without a GPU. The CPU engine is not a fast path:
 * it computes on the one thread that calls it.
 */
#ifndef XTTS_MEL_BATCH_H
#define XTTS_MEL_BATCH_H

#include <stddef.h>

#include "common/xtts_common.h"
#include "kernels/mel.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct xtts_mel_batch xtts_mel_batch;

/* A CPU engine for p (checked; copied) in *out, NULL on failure.
 * Errors: those of xtts_mel_new (XTTS_EUSAGE, XTTS_ENOMEM). */
xtts_status xtts_mel_batch_new_cpu(const xtts_mel_params *p, xtts_mel_batch **out, xtts_error *err);

/* A CUDA engine on device `ordinal` for batches of up to max_clips clips and max_batch_samples
 * samples together (xtts_mel_cuda_new's bounds and errors), in *out, NULL on failure. */
xtts_status xtts_mel_batch_new_cuda(const xtts_mel_params *p, int ordinal, size_t max_clips, size_t max_batch_samples,
                                    xtts_mel_batch **out, xtts_error *err);

/* NULL is allowed. */
void xtts_mel_batch_delete(xtts_mel_batch *b);

/* "cpu" or "cuda": what computes. */
const char *xtts_mel_batch_engine_name(const xtts_mel_batch *b);

/* The log-mel of n_clips clips, with the arguments and results of xtts_mel_cuda_compute_batch
 * (kernels/mel_cuda.h): clip k is samples[k][0 .. n_samples[k]), its mel goes to out[k] as
 * [n_mels][out_stride[k]], its frame count to n_frames[k], its pad value to pad_values[k]
 * (may be NULL). Blocks until the results are in out. Not for two threads at once on one
 * engine; one thread after another is fine.
 * Errors: XTTS_EINPUT (a clip shorter than one frame, its index named), XTTS_ERANGE (an
 * out_stride below a clip's frame count; with CUDA also a batch over the engine's bounds),
 * and the CUDA engine's XTTS_ENOMEM, XTTS_EIO, XTTS_EUNSUPPORTED. */
xtts_status xtts_mel_batch_compute(xtts_mel_batch *b, size_t n_clips, const float *const *samples,
                                   const size_t *n_samples, float *const *out, const size_t *out_stride,
                                   size_t *n_frames, float *pad_values, xtts_error *err);

#ifdef __cplusplus
}
#endif
#endif
