/* optim.h — AdamW, the learning-rate schedule (linear warmup, cosine decay) and clipping
 * by global gradient norm. All sums run in a fixed order (see model.h, "Determinism"). */
#ifndef XTTS_TRAIN_OPTIM_H
#define XTTS_TRAIN_OPTIM_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    float lr;           /* peak learning rate */
    float min_lr_frac;  /* the cosine decays to lr * min_lr_frac at total_steps */
    long warmup_steps;  /* linear warmup from lr / warmup_steps to lr */
    long total_steps;
    float beta1, beta2, eps;
    float weight_decay; /* decoupled (AdamW) */
    float clip;         /* max global gradient norm; 0 = no clipping */
} xtts_optim_config;

/* Defaults: lr 3e-4, min_lr_frac 0.1, warmup 100, betas 0.9/0.95, eps 1e-8, wd 0.01, clip 1. */
void xtts_optim_config_defaults(xtts_optim_config *o);

/* Learning rate for step (0-based). */
float xtts_lr_at(const xtts_optim_config *o, long step);

/* Global L2 norm of grads[0..n). */
float xtts_grad_norm(const float *grads, size_t n);

/* Scale grads so that their global norm is at most max_norm; returns the norm before. */
float xtts_grad_clip(float *grads, size_t n, float max_norm);

/* One AdamW step. t is the 1-based step count used for bias correction. m and v have n
 * elements each. */
void xtts_adamw_step(float *params, const float *grads, float *m, float *v, size_t n, long t, float lr,
                     const xtts_optim_config *o);

#ifdef __cplusplus
}
#endif
#endif
