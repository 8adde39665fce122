/* model_internal.h — the model's layers one by one (forward/backward pairs), for the
 * finite-difference tests and the model itself (train/layers.c: each runs the chosen copy of
 * the CPU loops, whose layer files are in train/cpu/). Not installed by `make install`: these are
 * not part of the library's API, but they are global symbols of libxtts.a, so they carry its
 * xtts_ prefix like every other (`make layers` checks it).
 */
#ifndef XTTS_TRAIN_MODEL_INTERNAL_H
#define XTTS_TRAIN_MODEL_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "train/model.h"

#ifdef __cplusplus
extern "C" {
#endif

void xtts_encoder_forward(float *out, const xtts_model_batch *bt, const float *wte, const float *wpe_text,
                          const float *wpe_mel, const float *melin_w, const float *melin_b, const float *mel_start,
                          int C, int M);
void xtts_encoder_backward(float *dwte, float *dwpe_text, float *dwpe_mel, float *dmelin_w, float *dmelin_b,
                           float *dmel_start, const float *dout, const xtts_model_batch *bt, const float *mel_start,
                           const float *melin_w, int C, int M);
void xtts_layernorm_forward(float *out, float *mean, float *rstd, const float *inp, const float *weight,
                            const float *bias, int B, int T, int C);
void xtts_layernorm_backward(float *dinp, float *dweight, float *dbias, const float *dout, const float *inp,
                             const float *weight, const float *mean, const float *rstd, int B, int T, int C);
void xtts_matmul_forward(float *out, const float *inp, const float *weight, const float *bias, int B, int T,
                         int C, int OC);
void xtts_matmul_backward(float *dinp, float *dweight, float *dbias, const float *dout, const float *inp,
                          const float *weight, int B, int T, int C, int OC);
void xtts_attention_forward(float *out, float *att, const float *inp, int B, int T, int C, int NH);
void xtts_attention_backward(float *dinp, const float *dout, const float *inp, const float *att, int B, int T,
                             int C, int NH);
void xtts_gelu_forward(float *out, const float *inp, size_t N);
void xtts_gelu_backward(float *dinp, const float *inp, const float *dout, size_t N);
void xtts_residual_forward(float *out, const float *inp1, const float *inp2, size_t N);
/* Mel L1 + stop BCE over real frames; fills losses, and dhead (B,T,M+1) when non-NULL
 * with the gradient of (mel_loss + stop_loss). Returns the number of real frames. */
int xtts_mel_stop_loss_forward_backward(float *mel_loss, float *stop_loss, float *dhead, const float *head,
                                        const xtts_model_batch *bt, int M, float pos_weight);

/* The XTTS GPT's layer kinds (train/xtts_gpt_model.c): backward functions ADD into their gradient
 * outputs except where a comment says the output is written. */
/* ---- group norm (train/cpu/groupnorm.h) ----
 * inp, out are (B,T,C) time-major (PyTorch's GroupNorm on (B,C,T) transposed); G groups of C/G
 * consecutive channels, each normalized over its channels and all T; mean, rstd are (B,G);
 * weight, bias are (C); eps 1e-5 as nn.GroupNorm. */
void xtts_groupnorm_forward(float *out, float *mean, float *rstd, const float *inp, const float *weight,
                            const float *bias, int B, int T, int C, int G);
void xtts_groupnorm_backward(float *dinp, float *dweight, float *dbias, const float *dout, const float *inp,
                             const float *weight, const float *mean, const float *rstd, int B, int T, int C, int G);

/* ---- multi-head attention over strided views (train/cpu/mha.h) ----
 * Head h of batch row b reads q row i at q[b*q_b + i*q_t + h*q_h + 0..hs), k and v rows j likewise,
 * and writes its output row at out[b*o_b + i*o_t + h*o_h + 0..hs). Query i sees key j when
 * (causal == 0 or j <= i) and (key_mask == NULL or key_mask[b*Tk + j] != 0); every query must see
 * one key at least. att is (B,NH,Tq,Tk): the softmax probabilities (0 where unseen). The same
 * strides serve the gradients dq, dk, dv. scratch holds threads * xtts_mha_scratch_per_thread
 * floats (a head's k and v transposed, and their gradients); the loops run on `threads` threads. */
typedef struct {
    int B, NH, Tq, Tk, hs;
    size_t q_b, q_t, q_h, k_b, k_t, k_h, v_b, v_t, v_h, o_b, o_t, o_h;
    float scale;
    int causal;
    const uint8_t *key_mask;
    float *scratch;
    int threads;
} xtts_mha_shape;

/* floats of scratch one thread needs: k and v as rows and transposed, their gradients, a row */
static inline size_t xtts_mha_scratch_per_thread(const xtts_mha_shape *s) { return 6 * (size_t)s->hs * s->Tk + s->Tk; }

void xtts_mha_forward(const xtts_mha_shape *s, float *out, float *att, const float *q, const float *k,
                      const float *v);
void xtts_mha_backward(const xtts_mha_shape *s, float *dq, float *dk, float *dv, const float *dout,
                       const float *q, const float *k, const float *v, const float *att);

/* ---- cross-entropy (train/cpu/crossentropy.h) ----
 * logits (N,V), targets (N) with -1 for ignored rows (F.cross_entropy(ignore_index=-1), mean over
 * the rows kept). Returns the number of rows kept and sets *loss (0 when none). With dlogits
 * non-NULL, WRITES dlogits (N,V) = scale * d(loss)/d(logits) (0 on ignored rows). A target outside
 * [0, V) other than -1 is counted in *bad and ignored. */
int xtts_crossentropy_forward_backward(float *loss, float *dlogits, const float *logits, const int32_t *targets,
                                       int N, int V, float scale, int *bad);

/* ---- the perceiver resampler's pieces (train/cpu/perceiver.h) ----
 * GEGLU (perceiver_encoder.py): inp (N,2I) = [x ; gate], out (N,I) = gelu_erf(gate) * x. */
void xtts_geglu_forward(float *out, const float *inp, size_t N, int I);
void xtts_geglu_backward(float *dinp, const float *dout, const float *inp, size_t N, int I);

/* RMSNorm (perceiver_encoder.py): out = x / max(|x|, 1e-12) * sqrt(C) * gamma over rows of C;
 * inv (N) keeps 1 / max(|x|, 1e-12). */
void xtts_rmsnorm_forward(float *out, float *inv, const float *inp, const float *gamma, size_t N, int C);
void xtts_rmsnorm_backward(float *dinp, float *dgamma, const float *dout, const float *inp, const float *gamma,
                           const float *inv, size_t N, int C);

#ifdef __cplusplus
}
#endif
#endif
