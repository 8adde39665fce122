/* cpu/groupnorm.h — group norm over time-major activations (B,T,C), as nn.GroupNorm computes it
 * on (B,C,T): the XTTS GPT conditioning encoder's AttentionBlock norm (latent_encoder.py's
 * GroupNorm32). Statistics and the backward's sums in double, each in the order of its loop
 * (t, then the group's channels), the same in every copy; eps 1e-5.
 *
 * Included once per instruction set by train/cpu/loops.h (LOOPS_NAME renames each copy).
 */
#define groupnorm_forward LOOPS_NAME(groupnorm_forward)
#define groupnorm_backward LOOPS_NAME(groupnorm_backward)

/* inp, out are (B,T,C); G groups of C/G consecutive channels; mean, rstd are (B,G); weight,
 * bias are (C) */
static void groupnorm_forward(float *out, float *mean, float *rstd, const float *inp, const float *weight,
                            const float *bias, int B, int T, int C, int G) {
    int cg = C / G;
#pragma omp parallel for collapse(2) schedule(static)
    for (int b = 0; b < B; b++)
        for (int g = 0; g < G; g++) {
            const float *x = inp + (size_t)b * T * C + (size_t)g * cg;
            double s = 0.0, ss = 0.0;
            for (int t = 0; t < T; t++)
                for (int i = 0; i < cg; i++) s += x[(size_t)t * C + i];
            double m = s / ((double)T * cg);
            for (int t = 0; t < T; t++)
                for (int i = 0; i < cg; i++) {
                    double d = x[(size_t)t * C + i] - m;
                    ss += d * d;
                }
            float r = (float)(1.0 / sqrt(ss / ((double)T * cg) + 1e-5));
            float mf = (float)m;
            float *o = out + (size_t)b * T * C + (size_t)g * cg;
            for (int t = 0; t < T; t++)
                for (int i = 0; i < cg; i++) {
                    int c = g * cg + i;
                    o[(size_t)t * C + i] = (x[(size_t)t * C + i] - mf) * r * weight[c] + bias[c];
                }
            mean[b * G + g] = mf;
            rstd[b * G + g] = r;
        }
}

static void groupnorm_backward(float *dinp, float *dweight, float *dbias, const float *dout, const float *inp,
                             const float *weight, const float *mean, const float *rstd, int B, int T, int C, int G) {
    int cg = C / G;
    double n = (double)T * cg;
#pragma omp parallel for collapse(2) schedule(static)
    for (int b = 0; b < B; b++)
        for (int g = 0; g < G; g++) {
            size_t base = (size_t)b * T * C + (size_t)g * cg;
            float m = mean[b * G + g], r = rstd[b * G + g];
            double sd = 0.0, sdn = 0.0; /* sums of dnorm and dnorm * norm */
            for (int t = 0; t < T; t++)
                for (int i = 0; i < cg; i++) {
                    size_t at = base + (size_t)t * C + i;
                    double norm = (inp[at] - m) * r, dn = (double)dout[at] * weight[g * cg + i];
                    sd += dn;
                    sdn += dn * norm;
                }
            float md = (float)(sd / n), mdn = (float)(sdn / n);
            for (int t = 0; t < T; t++)
                for (int i = 0; i < cg; i++) {
                    size_t at = base + (size_t)t * C + i;
                    float norm = (inp[at] - m) * r, dn = dout[at] * weight[g * cg + i];
                    dinp[at] += (dn - md - norm * mdn) * r;
                }
        }
    /* weight and bias: each channel sums over (b,t) in order */
#pragma omp parallel for schedule(static)
    for (int c = 0; c < C; c++) {
        int g = c / cg;
        double dw = 0.0, db = 0.0;
        for (int b = 0; b < B; b++) {
            float m = mean[b * G + g], r = rstd[b * G + g];
            for (int t = 0; t < T; t++) {
                size_t at = ((size_t)b * T + t) * C + c;
                dw += (double)dout[at] * ((inp[at] - m) * r);
                db += dout[at];
            }
        }
        dweight[c] += (float)dw;
        dbias[c] += (float)db;
    }
}
