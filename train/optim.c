/* optim.c — AdamW, schedule and clipping (see optim.h). */
#include "train/optim.h"

#include <math.h>

#include "train/cpu_loops_internal.h"

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

/* The passes over the parameters run the chosen copy of the loops (train/cpu_level.h); the
 * norm's sums are in double, in an order fixed by n alone (train/cpu/adamw.h). */
float xtts_grad_norm(const float *grads, size_t n) { return xtts_cpu_loops_current()->grad_norm(grads, n); }

float xtts_grad_clip(float *grads, size_t n, float max_norm) {
    float norm = xtts_grad_norm(grads, n);
    if (max_norm > 0.0f && norm > max_norm && isfinite(norm))
        xtts_cpu_loops_current()->scale(grads, n, max_norm / (norm + 1e-6f));
    return norm;
}

void xtts_adamw_step(float *params, const float *grads, float *m, float *v, size_t n, long t, float lr,
                     const xtts_optim_config *o) {
    float b1c = 1.0f - powf(o->beta1, (float)t);
    float b2c = 1.0f - powf(o->beta2, (float)t);
    xtts_cpu_loops_current()->adamw_step(params, grads, m, v, n, lr, o, b1c, b2c);
}
