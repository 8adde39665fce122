/* model_internal.h — the model's layers one by one (forward/backward pairs), for the
 * finite-difference tests and the model itself (train/layers.c: each runs the chosen copy of
 * the CPU loops, whose layer files are in train/cpu/). Not installed by `make install`: these are
 * not part of the library's API, but they are global symbols of libxtts.a, so they carry its
 * xtts_ prefix like every other (`make layers` checks it).
 */
#ifndef XTTS_TRAIN_MODEL_INTERNAL_H
#define XTTS_TRAIN_MODEL_INTERNAL_H

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

#ifdef __cplusplus
}
#endif
#endif
