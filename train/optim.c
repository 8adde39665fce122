/* optim.c — AdamW, schedule and clipping (see optim.h). */
#include "train/optim.h"

#include <math.h>

#include "train/train_math.h"

void xtts_optim_config_defaults(xtts_optim_config *o) {
    o->lr = 3e-4f;
    o->min_lr_frac = 0.1f;
    o->warmup_steps = 100;
    o->total_steps = 1000;
    o->beta1 = 0.9f;
    o->beta2 = 0.95f;
    o->eps = 1e-8f;
    o->weight_decay = 0.01f;
    o->clip = 1.0f;
}

float xtts_lr_at(const xtts_optim_config *o, long step) {
    if (o->warmup_steps > 0 && step < o->warmup_steps) return o->lr * (float)(step + 1) / (float)o->warmup_steps;
    long decay = o->total_steps - o->warmup_steps;
    if (decay <= 0) return o->lr;
    double ratio = (double)(step - o->warmup_steps) / (double)decay;
    if (ratio > 1.0) ratio = 1.0;
    double coeff = 0.5 * (1.0 + cos(M_PI * ratio)); /* 1 -> 0 */
    double min_lr = (double)o->lr * o->min_lr_frac;
    return (float)(min_lr + coeff * ((double)o->lr - min_lr));
}

/* Sums of squares over fixed chunks (independent of the thread count), added in order.
 * Within a chunk, NORM_LANES running sums take every NORM_LANES-th element (a loop the
 * compiler vectorizes, in an order fixed by the chunk alone) and are added pairwise. */
#define NORM_CHUNK 65536
#define NORM_LANES 8
float xtts_grad_norm(const float *grads, size_t n) {
    size_t n_chunks = (n + NORM_CHUNK - 1) / NORM_CHUNK;
    double total = 0.0;
#pragma omp parallel for ordered schedule(static)
    for (size_t c = 0; c < n_chunks; c++) {
        size_t lo = c * NORM_CHUNK, hi = lo + NORM_CHUNK < n ? lo + NORM_CHUNK : n;
        double s[NORM_LANES] = {0};
        size_t i = lo;
        for (; i + NORM_LANES <= hi; i += NORM_LANES)
            for (int l = 0; l < NORM_LANES; l++) s[l] += (double)grads[i + l] * grads[i + l];
        for (int l = 0; i + l < hi; l++) s[l] += (double)grads[i + l] * grads[i + l];
        for (int w = NORM_LANES / 2; w > 0; w /= 2)
            for (int l = 0; l < w; l++) s[l] += s[l + w];
#pragma omp ordered
        total += s[0];
    }
    return (float)sqrt(total);
}

float xtts_grad_clip(float *grads, size_t n, float max_norm) {
    float norm = xtts_grad_norm(grads, n);
    if (max_norm > 0.0f && norm > max_norm && isfinite(norm)) {
        float scale = max_norm / (norm + 1e-6f);
#pragma omp parallel for schedule(static)
        for (size_t i = 0; i < n; i++) grads[i] *= scale;
    }
    return norm;
}

void xtts_adamw_step(float *params, const float *grads, float *m, float *v, size_t n, long t, float lr,
                     const xtts_optim_config *o) {
    float b1c = 1.0f - powf(o->beta1, (float)t);
    float b2c = 1.0f - powf(o->beta2, (float)t);
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++)
        params[i] = xtts_adamw_update(params[i], grads[i], &m[i], &v[i], lr, o->beta1, o->beta2, o->eps,
                                      o->weight_decay, b1c, b2c);
}
