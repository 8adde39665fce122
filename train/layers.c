/* layers.c — the model's layers one by one (train/model_internal.h), each a call into the copy
 * of the CPU loops chosen for this process (train/cpu_level.h): the loops themselves are the
 * layer files of train/cpu/, compiled once per instruction set by train/cpu_loops.c. The
 * model's spine (train/model.c) and the finite-difference tests call these.
 */
#include "train/model_internal.h"

#include "train/cpu_loops_internal.h"

void xtts_encoder_forward(float *out, const xtts_model_batch *bt, const float *wte, const float *wpe_text,
                          const float *wpe_mel, const float *melin_w, const float *melin_b, const float *mel_start,
                          int C, int M) {
    xtts_cpu_loops_current()->encoder_forward(out, bt, wte, wpe_text, wpe_mel, melin_w, melin_b, mel_start, C, M);
}

void xtts_encoder_backward(float *dwte, float *dwpe_text, float *dwpe_mel, float *dmelin_w, float *dmelin_b,
                           float *dmel_start, const float *dout, const xtts_model_batch *bt, const float *mel_start,
                           const float *melin_w, int C, int M) {
    xtts_cpu_loops_current()->encoder_backward(dwte, dwpe_text, dwpe_mel, dmelin_w, dmelin_b, dmel_start, dout, bt,
                                               mel_start, melin_w, C, M);
}

void xtts_layernorm_forward(float *out, float *mean, float *rstd, const float *inp, const float *weight,
                            const float *bias, int B, int T, int C) {
    xtts_cpu_loops_current()->layernorm_forward(out, mean, rstd, inp, weight, bias, B, T, C);
}

void xtts_layernorm_backward(float *dinp, float *dweight, float *dbias, const float *dout, const float *inp,
                             const float *weight, const float *mean, const float *rstd, int B, int T, int C) {
    xtts_cpu_loops_current()->layernorm_backward(dinp, dweight, dbias, dout, inp, weight, mean, rstd, B, T, C);
}

void xtts_matmul_forward(float *out, const float *inp, const float *weight, const float *bias, int B, int T,
                         int C, int OC) {
    xtts_cpu_loops_current()->matmul_forward(out, inp, weight, bias, B, T, C, OC);
}

void xtts_matmul_backward(float *dinp, float *dweight, float *dbias, const float *dout, const float *inp,
                          const float *weight, int B, int T, int C, int OC) {
    xtts_cpu_loops_current()->matmul_backward(dinp, dweight, dbias, dout, inp, weight, B, T, C, OC);
}

void xtts_attention_forward(float *out, float *att, const float *inp, int B, int T, int C, int NH) {
    xtts_cpu_loops_current()->attention_forward(out, att, inp, B, T, C, NH);
}

void xtts_attention_backward(float *dinp, const float *dout, const float *inp, const float *att, int B, int T,
                             int C, int NH) {
    xtts_cpu_loops_current()->attention_backward(dinp, dout, inp, att, B, T, C, NH);
}

void xtts_gelu_forward(float *out, const float *inp, size_t N) { xtts_cpu_loops_current()->gelu_forward(out, inp, N); }

void xtts_gelu_backward(float *dinp, const float *inp, const float *dout, size_t N) {
    xtts_cpu_loops_current()->gelu_backward(dinp, inp, dout, N);
}

void xtts_residual_forward(float *out, const float *inp1, const float *inp2, size_t N) {
    xtts_cpu_loops_current()->residual_forward(out, inp1, inp2, N);
}

int xtts_mel_stop_loss_forward_backward(float *mel_loss, float *stop_loss, float *dhead, const float *head,
                                        const xtts_model_batch *bt, int M, float pos_weight) {
    return xtts_cpu_loops_current()->mel_stop_loss_forward_backward(mel_loss, stop_loss, dhead, head, bt, M,
                                                                    pos_weight);
}


/* ---- the XTTS GPT's kinds ---- */

void xtts_groupnorm_forward(float *out, float *mean, float *rstd, const float *inp, const float *weight,
                            const float *bias, int B, int T, int C, int G) {
    xtts_cpu_loops_current()->groupnorm_forward(out, mean, rstd, inp, weight, bias, B, T, C, G);
}

void xtts_groupnorm_backward(float *dinp, float *dweight, float *dbias, const float *dout, const float *inp,
                             const float *weight, const float *mean, const float *rstd, int B, int T, int C, int G) {
    xtts_cpu_loops_current()->groupnorm_backward(dinp, dweight, dbias, dout, inp, weight, mean, rstd, B, T, C, G);
}

void xtts_mha_forward(const xtts_mha_shape *s, float *out, float *att, const float *q, const float *k,
                      const float *v) {
    xtts_cpu_loops_current()->mha_forward(s, out, att, q, k, v);
}

void xtts_mha_backward(const xtts_mha_shape *s, float *dq, float *dk, float *dv, const float *dout,
                       const float *q, const float *k, const float *v, const float *att) {
    xtts_cpu_loops_current()->mha_backward(s, dq, dk, dv, dout, q, k, v, att);
}

int xtts_crossentropy_forward_backward(float *loss, float *dlogits, const float *logits, const int32_t *targets,
                                       int N, int V, float scale, int *bad) {
    return xtts_cpu_loops_current()->crossentropy_forward_backward(loss, dlogits, logits, targets, N, V, scale, bad);
}

void xtts_geglu_forward(float *out, const float *inp, size_t N, int I) {
    xtts_cpu_loops_current()->geglu_forward(out, inp, N, I);
}

void xtts_geglu_backward(float *dinp, const float *dout, const float *inp, size_t N, int I) {
    xtts_cpu_loops_current()->geglu_backward(dinp, dout, inp, N, I);
}

void xtts_rmsnorm_forward(float *out, float *inv, const float *inp, const float *gamma, size_t N, int C) {
    xtts_cpu_loops_current()->rmsnorm_forward(out, inv, inp, gamma, N, C);
}

void xtts_rmsnorm_backward(float *dinp, float *dgamma, const float *dout, const float *inp, const float *gamma,
                           const float *inv, size_t N, int C) {
    xtts_cpu_loops_current()->rmsnorm_backward(dinp, dgamma, dout, inp, gamma, inv, N, C);
}
