/* cpu/attention.h — the CPU loops of causal multi-head self-attention: one forward/backward
 * pair over a (B,T,3C) buffer of q, k, v, shapes in the comments. The products are those of
 * train/cpu/matmul.h (gemm_acc, skipping the zero tiles of the causal triangle); the softmax
 * runs on xtts_exp (train/train_math.h) and the fixed-order sums of train/cpu/sums.h.
 * The (B,NH,T,T) probabilities are kept for the backward pass (memory grows with T^2: no
 * recompute, no flash attention).
 *
 * Included once per instruction set by train/cpu/loops.h (LOOPS_NAME renames each copy).
 */
#define attention_forward LOOPS_NAME(attention_forward)
#define attention_backward LOOPS_NAME(attention_backward)

/* inp is (B,T,3C) holding q,k,v; att is (B,NH,T,T); out is (B,T,C).
 * Per (b,h): S = q k^T (the tiles on or below the diagonal, then masked), P = softmax of
 * the causal part of each row (zeros above the diagonal), out = P v over that part. */
static void attention_forward(float *out, float *att, const float *inp, int B, int T, int C, int NH) {
    size_t C3 = 3 * (size_t)C;
    int hs = C / NH;
    float scale = 1.0f / sqrtf((float)hs);
    /* one (b,h) per thread at a time; the products inside run on that thread alone */
#pragma omp parallel for schedule(static)
    for (int bh = 0; bh < B * NH; bh++) {
        int b = bh / NH, h = bh % NH;
        const float *q = inp + (size_t)b * T * C3 + h * hs, *k = q + C, *v = q + 2 * C;
        float *a = att + (size_t)bh * T * T;
        float *o = out + (size_t)b * T * C + h * hs;
        /* S (T,T) = q (T,hs) . k^T (hs,T) */
        gemm_acc(T, hs, T, q, C3, 1, k, 1, C3, a, (size_t)T, GEMM_C_LOWER | GEMM_SET);
        for (int t = 0; t < T; t++) {
            float *row = a + (size_t)t * T;
            for (int t2 = 0; t2 <= t; t2++) row[t2] *= scale;
            float maxval = max_of(row, t + 1);
            for (int t2 = 0; t2 <= t; t2++) row[t2] = xtts_exp(row[t2] - maxval);
            float inv = 1.0f / sum_fixed(row, t + 1);
            for (int t2 = 0; t2 <= t; t2++) row[t2] *= inv;
            for (int t2 = t + 1; t2 < T; t2++) row[t2] = 0.0f;
            for (int i = 0; i < hs; i++) o[(size_t)t * C + i] = 0.0f;
        }
        /* out (T,hs) = P (T,T) . v (T,hs), P lower triangular */
        gemm_acc(T, T, hs, a, (size_t)T, 1, v, C3, 1, o, (size_t)C, GEMM_A_LOWER);
    }
}

/* dinp is (B,T,3C); each (b,h) adds into its own q,k,v columns. */
static void attention_backward(float *dinp, const float *dout, const float *inp, const float *att, int B, int T,
                               int C, int NH) {
    size_t C3 = 3 * (size_t)C;
    int hs = C / NH;
    float scale = 1.0f / sqrtf((float)hs);
#pragma omp parallel
    {
        float *ds = malloc((size_t)T * T * sizeof(float)); /* (T,T) dP, then dS */
#pragma omp for schedule(static)
        for (int bh = 0; bh < B * NH; bh++) {
            if (!ds) continue; /* out of memory: gradients stay zero and the run shows it */
            int b = bh / NH, h = bh % NH;
            const float *q = inp + (size_t)b * T * C3 + h * hs, *k = q + C, *v = q + 2 * C;
            float *dq = dinp + (size_t)b * T * C3 + h * hs, *dk = dq + C, *dv = dq + 2 * C;
            const float *a = att + (size_t)bh * T * T;
            const float *d = dout + (size_t)b * T * C + h * hs;
            /* dP (T,T) = dout (T,hs) . v^T (hs,T), causal part */
            gemm_acc(T, hs, T, d, (size_t)C, 1, v, 1, C3, ds, (size_t)T, GEMM_C_LOWER | GEMM_SET);
            /* dv (T,hs) += P^T (T,T) . dout (T,hs), P^T upper triangular */
            gemm_acc(T, T, hs, a, 1, (size_t)T, d, (size_t)C, 1, dv, C3, GEMM_A_UPPER);
            /* dS = P * (dP - sum(P * dP)) * scale, causal part only */
            for (int t = 0; t < T; t++) {
                const float *p = a + (size_t)t * T;
                float *g = ds + (size_t)t * T;
                float dot = dot_fixed(p, g, t + 1);
                for (int t2 = 0; t2 <= t; t2++) g[t2] = p[t2] * (g[t2] - dot) * scale;
                for (int t2 = t + 1; t2 < T; t2++) g[t2] = 0.0f;
            }
            /* dq (T,hs) += dS (T,T) . k (T,hs); dk (T,hs) += dS^T (T,T) . q (T,hs) */
            gemm_acc(T, T, hs, ds, (size_t)T, 1, k, C3, 1, dq, C3, GEMM_A_LOWER);
            gemm_acc(T, T, hs, ds, 1, (size_t)T, q, C3, 1, dk, C3, GEMM_A_UPPER);
        }
        free(ds);
    }
}
