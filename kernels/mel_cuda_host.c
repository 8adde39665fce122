/* mel_cuda_host.c — CUDA device detection, and the kernels/mel_cuda.h API for builds
 * without CUDA (every call says so and returns XTTS_EUNSUPPORTED), so callers need no #ifdef.
 * With CUDA the batch functions live in kernels/mel.cu.
 */
#include "kernels/mel_cuda.h"

#include <stdio.h>

#ifdef XTTS_HAVE_CUDA
#include <cuda_runtime_api.h>

int xtts_mel_cuda_kernels_fit(char *why, size_t why_len); /* kernels/mel.cu */

int xtts_cuda_device_usable(int ordinal, char *why, size_t why_len) {
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
        if (why) snprintf(why, why_len, "no CUDA device or driver (%s)", cudaGetErrorString(e));
        return 0;
    }
    if (ordinal < 0 || ordinal >= count) {
        if (why) snprintf(why, why_len, "device %d does not exist (%d CUDA device%s found)", ordinal, count,
                          count == 1 ? "" : "s");
        return 0;
    }
    e = cudaSetDevice(ordinal);
    if (e != cudaSuccess) {
        if (why) snprintf(why, why_len, "cannot use device %d (%s)", ordinal, cudaGetErrorString(e));
        return 0;
    }
    return xtts_mel_cuda_kernels_fit(why, why_len);
}

#else

int xtts_cuda_device_usable(int ordinal, char *why, size_t why_len) {
    (void)ordinal;
    if (why) snprintf(why, why_len, "this build has no CUDA support (built without nvcc, or with CUDA=0)");
    return 0;
}

xtts_mel_cuda *xtts_mel_cuda_new(const xtts_mel_params *p, int ordinal, size_t max_clips, size_t max_batch_samples,
                                 xtts_error *err) {
    (void)p; (void)max_clips; (void)max_batch_samples;
    xtts_error_set(err, XTTS_EUNSUPPORTED, "cuda:%d is not usable: this build has no CUDA support", ordinal);
    return NULL;
}

void xtts_mel_cuda_delete(xtts_mel_cuda *m) { (void)m; }

xtts_status xtts_mel_cuda_compute_batch(xtts_mel_cuda *m, size_t n_clips, const float *const *samples,
                                        const size_t *n_samples, float *const *out, const size_t *out_stride,
                                        size_t *n_frames, float *pad_values, xtts_error *err) {
    (void)m; (void)n_clips; (void)samples; (void)n_samples; (void)out; (void)out_stride; (void)n_frames;
    (void)pad_values;
    return xtts_error_set(err, XTTS_EUNSUPPORTED, "cuda mel: this build has no CUDA support");
}

#endif
