/* mel_cuda.h — the log-mel on a CUDA device: batches of clips, cuFFT R2C over all their frames
 * at once, and thin kernels that call the per-element functions of kernels/mel_math.h (the
 * ones the CPU path and its golden tests run). Same parameters, presets and output layout as
 * kernels/mel.h; results agree with the CPU path within the golden tolerance (1e-3 in the
 * log domain), not bit for bit (the FFTs differ).
 *
 * A build without nvcc gets the same functions from kernels/mel_cuda_host.c: device
 * detection says "built without CUDA" and everything else returns XTTS_EUNSUPPORTED.
 */
#ifndef XTTS_MEL_CUDA_H
#define XTTS_MEL_CUDA_H

#include <stddef.h>

#include "common/xtts_common.h"
#include "kernels/mel.h"
#include "kernels/cuda_plugin.h" /* the plugin's names, inside the plugin */

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when CUDA device `ordinal` can run this build's kernels (the runtime loads, a driver is
 * present, cudaGetDeviceCount finds the device and a kernel image fits it); otherwise 0 with
 * the reason in why (one line, may be NULL). Makes `ordinal` the calling thread's device. */
int xtts_cuda_device_usable(int ordinal, char *why, size_t why_len);

/* The --device option of every program: "auto" (or NULL), "cpu", "cuda" or "cuda:N".
 * (xtts-melcache decides its "auto" itself, by speed: prep/melcache/device.h.)
 * *ordinal = -1 for the CPU, else the CUDA device. auto takes cuda:0 when it is usable and
 * says which it chose on stderr in one line ("PROG: device: cuda:0", or "PROG: device: cpu
 * (CUDA not used: why)"). XTTS_EUSAGE for another spelling, XTTS_EUNSUPPORTED when the
 * device asked for is not usable (the message says why).
 * Errors: XTTS_EUSAGE, XTTS_EUNSUPPORTED (as above; "auto" never fails). */
xtts_status xtts_device_choose(const char *spec, const char *prog, int *ordinal, xtts_error *err);

typedef struct xtts_mel_cuda xtts_mel_cuda;

/* A context on device `ordinal` for batches of up to max_clips clips holding up to
 * max_batch_samples samples together, in *out (NULL on failure). Allocates once: batch-sized
 * device buffers and pinned staging memory for samples in and mels out, and two streams with
 * a cuFFT plan each.
 * Errors: XTTS_EUNSUPPORTED when no usable device (or no CUDA in this build), XTTS_EUSAGE
 * for bad parameters, XTTS_ENOMEM/XTTS_EIO for CUDA failures. */
xtts_status xtts_mel_cuda_new(const xtts_mel_params *p, int ordinal, size_t max_clips, size_t max_batch_samples,
                              xtts_mel_cuda **out, xtts_error *err);
/* NULL is allowed. */
void xtts_mel_cuda_delete(xtts_mel_cuda *m);

/* The log-mel of n_clips clips: clip k is samples[k][0 .. n_samples[k]) at p->sample_rate;
 * its output goes to out[k] as [n_mels][out_stride[k]] (frame t of channel c at
 * out[k][c*out_stride[k] + t]), its frame count to n_frames[k] and its pad value to
 * pad_values[k] (may be NULL), exactly as xtts_mel_compute reports them. A clip shorter than
 * one frame fails the batch with XTTS_EINPUT naming its index; more clips or samples than the
 * context holds is XTTS_ERANGE. The batch runs as groups of whole clips alternating between
 * the two streams, so that one group's copies overlap another's compute. Blocks until the
 * results are in out. Not for two threads at once on one context.
 * Errors: XTTS_ERANGE, XTTS_EINPUT (as above; XTTS_ERANGE also for an out_stride below a clip's
 * frame count), XTTS_ENOMEM (host or device allocation), XTTS_EIO (another CUDA or cuFFT
 * failure), XTTS_EUNSUPPORTED (a build without CUDA, or the plugin lacks the function). */
xtts_status xtts_mel_cuda_compute_batch(xtts_mel_cuda *m, size_t n_clips, const float *const *samples,
                                        const size_t *n_samples, float *const *out, const size_t *out_stride,
                                        size_t *n_frames, float *pad_values, xtts_error *err);

#ifdef __cplusplus
}
#endif
#endif
