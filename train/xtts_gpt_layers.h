/* xtts_gpt_layers.h — the layer kinds XTTS's GPT (train/xtts_gpt.c) adds to those of
 * train/model_internal.h: group norm, multi-head attention over strided views with causal and
 * key masks, cross-entropy with ignored targets, and the perceiver resampler's GEGLU and RMS norm.
 * One file per kind (train/groupnorm.c, train/attention_mha.c, train/crossentropy.c,
 * train/perceiver_layers.c), forward/backward pairs side by side, same argument order.
 * Backward functions ADD into their gradient outputs (the caller zeroes them), except where a
 * comment says the output is written.
 *
 * Not installed: global symbols of libxtts.a for the model and its tests, prefixed xtts_.
 * Limits: CPU, float32 with float or double sums; the sums' order is fixed by the shapes.
 */
#ifndef XTTS_TRAIN_XTTS_GPT_LAYERS_H
#define XTTS_TRAIN_XTTS_GPT_LAYERS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- group norm (train/groupnorm.c) ----
 * inp, out are (B,T,C) time-major (PyTorch's GroupNorm on (B,C,T) transposed); G groups of C/G
 * consecutive channels, each normalized over its channels and all T; mean, rstd are (B,G);
 * weight, bias are (C); eps 1e-5 as nn.GroupNorm. */
void xtts_groupnorm_forward(float *out, float *mean, float *rstd, const float *inp, const float *weight,
                            const float *bias, int B, int T, int C, int G);
void xtts_groupnorm_backward(float *dinp, float *dweight, float *dbias, const float *dout, const float *inp,
                             const float *weight, const float *mean, const float *rstd, int B, int T, int C, int G);

/* ---- multi-head attention over strided views (train/attention_mha.c) ----
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

size_t xtts_mha_scratch_per_thread(const xtts_mha_shape *s);

void xtts_mha_forward(const xtts_mha_shape *s, float *out, float *att, const float *q, const float *k,
                      const float *v);
void xtts_mha_backward(const xtts_mha_shape *s, float *dq, float *dk, float *dv, const float *dout,
                       const float *q, const float *k, const float *v, const float *att);

/* ---- cross-entropy (train/crossentropy.c) ----
 * logits (N,V), targets (N) with -1 for ignored rows (F.cross_entropy(ignore_index=-1), mean over
 * the rows kept). Returns the number of rows kept and sets *loss (0 when none). With dlogits
 * non-NULL, WRITES dlogits (N,V) = scale * d(loss)/d(logits) (0 on ignored rows). A target outside
 * [0, V) other than -1 is counted in *bad and ignored. */
int xtts_crossentropy_forward_backward(float *loss, float *dlogits, const float *logits, const int32_t *targets,
                                       int N, int V, float scale, int *bad);

/* ---- the perceiver resampler's pieces (train/perceiver_layers.c) ----
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
