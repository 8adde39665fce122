/* train_math.h — per-element math of the trainer, written once for the CPU path (gcc)
 * and the CUDA kernels (nvcc): GELU (tanh form), the stop head's weighted BCE, AdamW.
 */
#ifndef XTTS_TRAIN_MATH_H
#define XTTS_TRAIN_MATH_H

#include <math.h>
#include <string.h>

#ifdef __CUDACC__
#define XTTS_HD __host__ __device__ static inline
#else
#define XTTS_HD static inline
#endif

#define XTTS_GELU_SCALE 0.7978845608028654f /* sqrt(2 / pi) */

/* e^x in plain float arithmetic, so that the CPU loops calling it vectorize (libm's expf is
 * a call per element): Cephes' expf, e^x = 2^n e^r with x = n ln2 + r, |r| <= ln2/2, and a
 * degree-6 polynomial for e^r; relative error about 1e-7. x is clamped to where e^x is a
 * normal float. No fused operations are asked for, so a vector lane and a scalar loop
 * remainder give the same bits. */
XTTS_HD float xtts_exp(float x) {
    x = x < -87.0f ? -87.0f : x > 88.0f ? 88.0f : x;
    float n = (x * 1.44269504f + 12582912.0f) - 12582912.0f; /* nearest integer: 1.5 * 2^23 */
    float r = x - n * 0.693359375f;                          /* ln2 in two parts */
    r = r + n * 2.12194440e-4f;
    float q = 1.9875691500e-4f;
    q = q * r + 1.3981999507e-3f;
    q = q * r + 8.3334519073e-3f;
    q = q * r + 4.1665795894e-2f;
    q = q * r + 1.6666665459e-1f;
    q = q * r + 5.0000001201e-1f;
    q = q * r * r + r + 1.0f;
    int bits = ((int)n + 127) << 23; /* 2^n */
#ifdef __CUDA_ARCH__
    float scale = __int_as_float(bits);
#else
    float scale;
    memcpy(&scale, &bits, sizeof scale);
#endif
    return q * scale;
}

/* tanh through one exponential (absolute error ~1e-7, which is what GELU needs). */
XTTS_HD float xtts_tanh(float u) { return 1.0f - 2.0f / (1.0f + xtts_exp(2.0f * u)); }

/* GELU, tanh approximation (PyTorch's gelu(approximate='tanh')). */
XTTS_HD float xtts_gelu(float x) {
    float cube = 0.044715f * x * x * x;
    return 0.5f * x * (1.0f + xtts_tanh(XTTS_GELU_SCALE * (x + cube)));
}

XTTS_HD float xtts_gelu_grad(float x) {
    float cube = 0.044715f * x * x * x;
    float tanh_arg = XTTS_GELU_SCALE * (x + cube);
    float tanh_out = xtts_tanh(tanh_arg);
    float sech2 = 1.0f - tanh_out * tanh_out; /* sech^2 = 1 - tanh^2 */
    return 0.5f * (1.0f + tanh_out) + x * 0.5f * sech2 * XTTS_GELU_SCALE * (1.0f + 3.0f * 0.044715f * x * x);
}

/* log(1 + exp(x)) without overflow. */
XTTS_HD float xtts_softplus(float x) { return x > 0.0f ? x + log1pf(expf(-x)) : log1pf(expf(x)); }

XTTS_HD float xtts_sigmoid(float x) {
    if (x >= 0.0f) return 1.0f / (1.0f + expf(-x));
    float e = expf(x);
    return e / (1.0f + e);
}

/* BCE with logits and positive weight w (PyTorch BCEWithLogitsLoss(pos_weight=w)):
 * -(w*y*log(sigmoid(z)) + (1-y)*log(1-sigmoid(z))). */
XTTS_HD float xtts_bce_logits(float z, float y, float w) {
    return w * y * xtts_softplus(-z) + (1.0f - y) * xtts_softplus(z);
}

XTTS_HD float xtts_bce_logits_grad(float z, float y, float w) {
    float s = xtts_sigmoid(z);
    return -w * y * (1.0f - s) + (1.0f - y) * s;
}

/* One AdamW update of one parameter (decoupled weight decay, bias-corrected moments). */
XTTS_HD float xtts_adamw_update(float param, float grad, float *m, float *v, float lr, float beta1, float beta2,
                                float eps, float weight_decay, float beta1_correction, float beta2_correction) {
    float mm = beta1 * *m + (1.0f - beta1) * grad;
    float vv = beta2 * *v + (1.0f - beta2) * grad * grad;
    *m = mm;
    *v = vv;
    float m_hat = mm / beta1_correction;
    float v_hat = vv / beta2_correction;
    return param - lr * (m_hat / (sqrtf(v_hat) + eps) + weight_decay * param);
}

#endif
