/* cpu/layernorm.h — the CPU loops of layer normalization (eps 1e-5, as PyTorch's default):
 * one forward/backward pair, shapes in the comments. A row's mean and variance, and the
 * backward's two means, are the fixed-order sums of train/cpu/sums.h; the weight and bias
 * gradients sum each channel over (b,t) in order, threads owning blocks of channels.
 *
 * Included once per instruction set by train/cpu/loops.h (LOOPS_NAME renames each copy).
 */
#define layernorm_forward LOOPS_NAME(layernorm_forward)
#define layernorm_backward LOOPS_NAME(layernorm_backward)

/* inp, out are (B,T,C); mean, rstd are (B,T); weight, bias are (C). */
static void layernorm_forward(float *out, float *mean, float *rstd, const float *inp, const float *weight,
                              const float *bias, int B, int T, int C) {
    const float eps = 1e-5f;
#pragma omp parallel for schedule(static)
    for (int bt = 0; bt < B * T; bt++) {
        const float *x = inp + (size_t)bt * C;
        float m = sum_fixed(x, C) / C;
        float v = sum_sq_dev_fixed(x, m, C) / C;
        float s = 1.0f / sqrtf(v + eps);
        float *o = out + (size_t)bt * C;
        for (int i = 0; i < C; i++) o[i] = (s * (x[i] - m)) * weight[i] + bias[i];
        mean[bt] = m;
        rstd[bt] = s;
    }
}

static void layernorm_backward(float *dinp, float *dweight, float *dbias, const float *dout, const float *inp,
                               const float *weight, const float *mean, const float *rstd, int B, int T, int C) {
    int N = B * T;
#pragma omp parallel for schedule(static)
    for (int bt = 0; bt < N; bt++) {
        const float *d = dout + (size_t)bt * C;
        const float *x = inp + (size_t)bt * C;
        float *di = dinp + (size_t)bt * C;
        float m = mean[bt], s = rstd[bt];
        /* the means of dnorm = weight * d and of dnorm * norm, norm = (x - m) * s, in lanes
         * as sum_fixed adds them */
        lanes acc = {0}, acc_n = {0};
        int i = 0;
        for (; i + SUM_LANES <= C; i += SUM_LANES) {
            lanes xv, wv, dv;
            LOADV(xv, x + i);
            LOADV(wv, weight + i);
            LOADV(dv, d + i);
            lanes norm = (xv - m) * s, dnorm = wv * dv;
            acc += dnorm;
            acc_n += dnorm * norm;
        }
        for (int l = 0; i + l < C; l++) {
            float norm = (x[i + l] - m) * s, dnorm = weight[i + l] * d[i + l];
            acc[l] += dnorm;
            acc_n[l] += dnorm * norm;
        }
        float dnorm_mean = lanes_total(&acc) / C, dnorm_norm_mean = lanes_total(&acc_n) / C;
        for (int i = 0; i < C; i++) {
            float norm = (x[i] - m) * s;
            float dnorm = weight[i] * d[i];
            di[i] += (dnorm - dnorm_mean - norm * dnorm_norm_mean) * s;
        }
    }
    /* weight and bias: each channel sums over (b,t) in order; threads own channel blocks */
    enum { COLS = 64 };
#pragma omp parallel for schedule(static)
    for (int i0 = 0; i0 < C; i0 += COLS) {
        int n = C - i0 < COLS ? C - i0 : COLS;
        float dw[COLS] = {0}, db[COLS] = {0};
        for (int bt = 0; bt < N; bt++) {
            const float *d = dout + (size_t)bt * C + i0, *x = inp + (size_t)bt * C + i0;
            float m = mean[bt], s = rstd[bt];
            for (int j = 0; j < n; j++) {
                dw[j] += (x[j] - m) * s * d[j];
                db[j] += d[j];
            }
        }
        for (int j = 0; j < n; j++) dweight[i0 + j] += dw[j], dbias[i0 + j] += db[j];
    }
}
