/* cpu_loops_internal.h — the trainer's CPU loops as a table of functions, one table per
 * instruction set (train/cpu_level.h), for the layers of train/model.c, the optimizer of
 * train/optim.c and the tests that compare the copies. Not installed.
 *
 * The functions are those of train/model_internal.h and train/optim.h, same arguments and
 * meaning (AdamW takes its bias corrections ready made).
 */
#ifndef XTTS_TRAIN_CPU_LOOPS_INTERNAL_H
#define XTTS_TRAIN_CPU_LOOPS_INTERNAL_H

#include <stddef.h>

#include "train/cpu_level.h"
#include "train/model.h"
#include "train/model_internal.h"
#include "train/optim.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    void (*encoder_forward)(float *out, const xtts_model_batch *bt, const float *wte, const float *wpe_text,
                            const float *wpe_mel, const float *melin_w, const float *melin_b, const float *mel_start,
                            int C, int M);
    void (*encoder_backward)(float *dwte, float *dwpe_text, float *dwpe_mel, float *dmelin_w, float *dmelin_b,
                             float *dmel_start, const float *dout, const xtts_model_batch *bt,
                             const float *mel_start, const float *melin_w, int C, int M);
    void (*layernorm_forward)(float *out, float *mean, float *rstd, const float *inp, const float *weight,
                              const float *bias, int B, int T, int C);
    void (*layernorm_backward)(float *dinp, float *dweight, float *dbias, const float *dout, const float *inp,
                               const float *weight, const float *mean, const float *rstd, int B, int T, int C);
    void (*matmul_forward)(float *out, const float *inp, const float *weight, const float *bias, int B, int T,
                           int C, int OC);
    void (*matmul_backward)(float *dinp, float *dweight, float *dbias, const float *dout, const float *inp,
                            const float *weight, int B, int T, int C, int OC);
    void (*attention_forward)(float *out, float *att, const float *inp, int B, int T, int C, int NH);
    void (*attention_backward)(float *dinp, const float *dout, const float *inp, const float *att, int B, int T,
                               int C, int NH);
    void (*gelu_forward)(float *out, const float *inp, size_t N);
    void (*gelu_backward)(float *dinp, const float *inp, const float *dout, size_t N);
    void (*residual_forward)(float *out, const float *inp1, const float *inp2, size_t N);
    int (*mel_stop_loss_forward_backward)(float *mel_loss, float *stop_loss, float *dhead, const float *head,
                                          const xtts_model_batch *bt, int M, float pos_weight);
    float (*grad_norm)(const float *grads, size_t n);
    void (*scale)(float *x, size_t n, float s); /* x *= s */
    void (*adamw_step)(float *params, const float *grads, float *m, float *v, size_t n, float lr,
                       const xtts_optim_config *o, float beta1_correction, float beta2_correction);
    /* the XTTS GPT's kinds */
    void (*groupnorm_forward)(float *out, float *mean, float *rstd, const float *inp, const float *weight,
                              const float *bias, int B, int T, int C, int G);
    void (*groupnorm_backward)(float *dinp, float *dweight, float *dbias, const float *dout, const float *inp,
                               const float *weight, const float *mean, const float *rstd, int B, int T, int C, int G);
    void (*mha_forward)(const xtts_mha_shape *s, float *out, float *att, const float *q, const float *k,
                        const float *v);
    void (*mha_backward)(const xtts_mha_shape *s, float *dq, float *dk, float *dv, const float *dout, const float *q,
                         const float *k, const float *v, const float *att);
    int (*crossentropy_forward_backward)(float *loss, float *dlogits, const float *logits, const int32_t *targets,
                                         int N, int V, float scale, int *bad);
    void (*geglu_forward)(float *out, const float *inp, size_t N, int I);
    void (*geglu_backward)(float *dinp, const float *dout, const float *inp, size_t N, int I);
    void (*rmsnorm_forward)(float *out, float *inv, const float *inp, const float *gamma, size_t N, int C);
    void (*rmsnorm_backward)(float *dinp, float *dgamma, const float *dout, const float *inp, const float *gamma,
                             const float *inv, size_t N, int C);
} xtts_cpu_loops;

/* The copy for a level, or for the widest the CPU runs below it (never NULL). */
const xtts_cpu_loops *xtts_cpu_loops_at(xtts_cpu_level level);

/* The copy of xtts_cpu_level_current(). */
const xtts_cpu_loops *xtts_cpu_loops_current(void);

#ifdef __cplusplus
}
#endif
#endif
