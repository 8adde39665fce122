/* attention_mha.c — multi-head softmax attention over strided views of q, k and v, with an
 * optional causal mask and key mask: the three attentions of XTTS's GPT — the conditioning
 * encoder's QKVAttention (heads' q, k, v interleaved per head, no mask), the perceiver's cross
 * attention (q from the latents, k and v from [latents ; context]) and GPT-2's causal attention
 * with the padding masks of HF's attention_mask. One (batch row, head) per thread: its outputs and
 * gradients are its own columns, so no two threads write the same value. */
#include <math.h>

#include "train/xtts_gpt_layers.h"

static inline int mha_sees(const xtts_mha_shape *s, int b, int i, int j) {
    if (s->causal && j > i) return 0;
    return !s->key_mask || s->key_mask[(size_t)b * s->Tk + j];
}

void xtts_mha_forward(const xtts_mha_shape *s, float *out, float *att, const float *q, const float *k,
                      const float *v) {
    int hs = s->hs, Tq = s->Tq, Tk = s->Tk;
#pragma omp parallel for schedule(static)
    for (int bh = 0; bh < s->B * s->NH; bh++) {
        int b = bh / s->NH, h = bh % s->NH;
        const float *qb = q + b * s->q_b + h * s->q_h, *kb = k + b * s->k_b + h * s->k_h;
        const float *vb = v + b * s->v_b + h * s->v_h;
        float *ob = out + b * s->o_b + h * s->o_h;
        for (int i = 0; i < Tq; i++) {
            float *a = att + ((size_t)bh * Tq + i) * Tk;
            const float *qi = qb + i * s->q_t;
            float mx = -INFINITY;
            for (int j = 0; j < Tk; j++) {
                if (!mha_sees(s, b, i, j)) {
                    a[j] = -INFINITY;
                    continue;
                }
                const float *kj = kb + j * s->k_t;
                float d = 0.0f;
                for (int c = 0; c < hs; c++) d += qi[c] * kj[c];
                a[j] = d * s->scale;
                mx = a[j] > mx ? a[j] : mx;
            }
            double sum = 0.0;
            for (int j = 0; j < Tk; j++) {
                a[j] = a[j] == -INFINITY ? 0.0f : expf(a[j] - mx);
                sum += a[j];
            }
            float inv = (float)(1.0 / sum);
            float *oi = ob + i * s->o_t;
            for (int c = 0; c < hs; c++) oi[c] = 0.0f;
            for (int j = 0; j < Tk; j++) {
                a[j] *= inv;
                if (a[j] == 0.0f) continue;
                const float *vj = vb + j * s->v_t;
                for (int c = 0; c < hs; c++) oi[c] += a[j] * vj[c];
            }
        }
    }
}

void xtts_mha_backward(const xtts_mha_shape *s, float *dq, float *dk, float *dv, const float *dout,
                       const float *q, const float *k, const float *v, const float *att) {
    int hs = s->hs, Tq = s->Tq, Tk = s->Tk;
#pragma omp parallel for schedule(static)
    for (int bh = 0; bh < s->B * s->NH; bh++) {
        int b = bh / s->NH, h = bh % s->NH;
        size_t qo = b * s->q_b + h * s->q_h, ko = b * s->k_b + h * s->k_h, vo = b * s->v_b + h * s->v_h;
        const float *db = dout + b * s->o_b + h * s->o_h;
        float ds[Tk]; /* dp_j of one query row (Tk is at most a few thousand) */
        for (int i = 0; i < Tq; i++) {
            const float *a = att + ((size_t)bh * Tq + i) * Tk, *di = db + i * s->o_t;
            double dot = 0.0; /* sum_j p_j dp_j */
            for (int j = 0; j < Tk; j++) {
                if (a[j] == 0.0f) {
                    ds[j] = 0.0f;
                    continue;
                }
                const float *vj = v + vo + j * s->v_t;
                float *dvj = dv + vo + j * s->v_t;
                float dp = 0.0f;
                for (int c = 0; c < hs; c++) {
                    dp += di[c] * vj[c];
                    dvj[c] += a[j] * di[c];
                }
                ds[j] = dp;
                dot += (double)a[j] * dp;
            }
            const float *qi = q + qo + i * s->q_t;
            float *dqi = dq + qo + i * s->q_t;
            for (int j = 0; j < Tk; j++) {
                if (a[j] == 0.0f) continue;
                float g = a[j] * (ds[j] - (float)dot) * s->scale;
                const float *kj = k + ko + j * s->k_t;
                float *dkj = dk + ko + j * s->k_t;
                for (int c = 0; c < hs; c++) {
                    dqi[c] += g * kj[c];
                    dkj[c] += g * qi[c];
                }
            }
        }
    }
}
