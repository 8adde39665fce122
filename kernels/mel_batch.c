/* mel_batch.c — the two batch engines of kernels/mel_batch.h. */
#include "kernels/mel_batch.h"

#include <stdlib.h>

#include "kernels/mel_cuda.h"

struct xtts_mel_batch {
    xtts_mel *cpu;       /* the CPU engine's context, or NULL */
    xtts_mel_cuda *cuda; /* the CUDA engine's, or NULL */
};

xtts_status xtts_mel_batch_new_cpu(const xtts_mel_params *p, xtts_mel_batch **out, xtts_error *err) {
    *out = NULL;
    xtts_mel_batch *b = calloc(1, sizeof *b);
    if (!b) return xtts_error_set(err, XTTS_ENOMEM, "mel batch: out of memory");
    xtts_status st = xtts_mel_new(p, &b->cpu, err);
    if (st) { free(b); return st; }
    *out = b;
    return XTTS_OK;
}

xtts_status xtts_mel_batch_new_cuda(const xtts_mel_params *p, int ordinal, size_t max_clips, size_t max_batch_samples,
                                    xtts_mel_batch **out, xtts_error *err) {
    *out = NULL;
    xtts_mel_batch *b = calloc(1, sizeof *b);
    if (!b) return xtts_error_set(err, XTTS_ENOMEM, "mel batch: out of memory");
    xtts_status st = xtts_mel_cuda_new(p, ordinal, max_clips, max_batch_samples, &b->cuda, err);
    if (st) { free(b); return st; }
    *out = b;
    return XTTS_OK;
}

void xtts_mel_batch_delete(xtts_mel_batch *b) {
    if (!b) return;
    xtts_mel_delete(b->cpu);
    xtts_mel_cuda_delete(b->cuda);
    free(b);
}

const char *xtts_mel_batch_engine_name(const xtts_mel_batch *b) { return b->cuda ? "cuda" : "cpu"; }

xtts_status xtts_mel_batch_compute(xtts_mel_batch *b, size_t n_clips, const float *const *samples,
                                   const size_t *n_samples, float *const *out, const size_t *out_stride,
                                   size_t *n_frames, float *pad_values, xtts_error *err) {
    if (b->cuda)
        return xtts_mel_cuda_compute_batch(b->cuda, n_clips, samples, n_samples, out, out_stride, n_frames, pad_values,
                                           err);
    for (size_t k = 0; k < n_clips; k++) {
        xtts_error e;
        xtts_error_clear(&e);
        xtts_status st = xtts_mel_compute(b->cpu, samples[k], n_samples[k], out[k], out_stride[k], &n_frames[k],
                                          pad_values ? &pad_values[k] : NULL, &e);
        if (st) return xtts_error_set(err, st, "cpu mel batch: clip %zu: %.400s", k, e.msg);
    }
    return XTTS_OK;
}
