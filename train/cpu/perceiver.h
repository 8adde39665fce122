/* cpu/perceiver.h — the pieces of the XTTS GPT's PerceiverResampler (perceiver_encoder.py) that
 * no other kind has: the feed-forward's GEGLU (exact, erf GELU as F.gelu; libm's erf and exp,
 * computed in double) and the final RMSNorm (F.normalize times sqrt(dim) times gamma; norms and
 * the backward's sums in double, in row or channel order). Its attention is cpu/mha.h's, its
 * linear maps cpu/matmul.h's.
 *
 * Included once per instruction set by train/cpu/loops.h (LOOPS_NAME renames each copy).
 */
#define geglu_forward LOOPS_NAME(geglu_forward)
#define geglu_backward LOOPS_NAME(geglu_backward)
#define rmsnorm_forward LOOPS_NAME(rmsnorm_forward)
#define rmsnorm_backward LOOPS_NAME(rmsnorm_backward)

#ifndef XTTS_CPU_PERCEIVER_SHARED
#define XTTS_CPU_PERCEIVER_SHARED
#define INV_SQRT2 0.70710678118654752440
#define INV_SQRT2PI 0.39894228040143267794
#endif

static void geglu_forward(float *out, const float *inp, size_t N, int I) {
#pragma omp parallel for schedule(static)
    for (size_t n = 0; n < N; n++) {
        const float *x = inp + n * 2 * (size_t)I, *gate = x + I;
        float *o = out + n * (size_t)I;
        for (int i = 0; i < I; i++) {
            double g = gate[i];
            o[i] = (float)(0.5 * g * (1.0 + erf(g * INV_SQRT2)) * x[i]);
        }
    }
}

static void geglu_backward(float *dinp, const float *dout, const float *inp, size_t N, int I) {
#pragma omp parallel for schedule(static)
    for (size_t n = 0; n < N; n++) {
        const float *x = inp + n * 2 * (size_t)I, *gate = x + I, *d = dout + n * (size_t)I;
        float *dx = dinp + n * 2 * (size_t)I, *dgate = dx + I;
        for (int i = 0; i < I; i++) {
            double g = gate[i], cdf = 0.5 * (1.0 + erf(g * INV_SQRT2));
            double pdf = INV_SQRT2PI * exp(-0.5 * g * g);
            dx[i] += (float)(g * cdf * d[i]);
            dgate[i] += (float)((cdf + g * pdf) * x[i] * d[i]);
        }
    }
}

static void rmsnorm_forward(float *out, float *inv, const float *inp, const float *gamma, size_t N, int C) {
    float sc = sqrtf((float)C);
#pragma omp parallel for schedule(static)
    for (size_t n = 0; n < N; n++) {
        const float *x = inp + n * C;
        double ss = 0.0;
        for (int i = 0; i < C; i++) ss += (double)x[i] * x[i];
        double norm = sqrt(ss);
        float r = (float)(1.0 / (norm > 1e-12 ? norm : 1e-12));
        float *o = out + n * C;
        for (int i = 0; i < C; i++) o[i] = x[i] * r * sc * gamma[i];
        inv[n] = r;
    }
}

static void rmsnorm_backward(float *dinp, float *dgamma, const float *dout, const float *inp, const float *gamma,
                           const float *inv, size_t N, int C) {
    float sc = sqrtf((float)C);
#pragma omp parallel for schedule(static)
    for (size_t n = 0; n < N; n++) {
        const float *x = inp + n * C, *d = dout + n * C;
        float r = inv[n];
        double dot = 0.0; /* y . dy, y = x r, dy = d sc gamma */
        for (int i = 0; i < C; i++) dot += (double)(x[i] * r) * (d[i] * sc * gamma[i]);
        /* below the 1e-12 floor the norm is a constant and only the scaling remains */
        float keep = 1.0f / r > 1e-12f ? 1.0f : 0.0f;
        float *dx = dinp + n * C;
        for (int i = 0; i < C; i++) dx[i] += r * (d[i] * sc * gamma[i] - keep * (float)(x[i] * r * dot));
    }
    /* gamma: each channel sums over rows in order */
#pragma omp parallel for schedule(static)
    for (int i = 0; i < C; i++) {
        double s = 0.0;
        for (size_t n = 0; n < N; n++) s += (double)dout[n * C + i] * inp[n * C + i] * inv[n];
        dgamma[i] += (float)(s * sc);
    }
}
