/* model.c — layers, forward and backward of the xtts-train transformer (see model.h).
 *
 * Written after llm.c's train_gpt2.c: plain loops, OpenMP only over independent outputs,
 * every reduction in a fixed order (see model.h, "Determinism").
 */
#include "train/model_internal.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "train/train_math.h"

/* Element-wise loops heavy in arithmetic (GELU, exp) vectorize at the full AVX-512 width,
 * which GCC does not choose by itself. */
#if defined(__AVX512F__) && defined(__GNUC__) && !defined(__clang__)
#define WIDE_VECTORS __attribute__((target("prefer-vector-width=512")))
#else
#define WIDE_VECTORS
#endif

/* GCC's portable vector extension (no intrinsics): 16 floats where the compiler targets
 * AVX-512, else 8. */
#if defined(__AVX512F__)
#define VW 16
#else
#define VW 8
#endif
typedef float vec __attribute__((vector_size(VW * sizeof(float))));

/* unaligned vector load and store (macros: passing vectors by value would tie the ABI to
 * the instruction set) */
#define LOADV(v, p) memcpy(&(v), (p), sizeof(vec))
#define STOREV(p, v) memcpy((p), &(v), sizeof(vec))

/* ---- sums in a fixed order ------------------------------------------------------------ */

/* Row sums that vectorize yet add in an order fixed by the length alone: lane l of a
 * vector accumulates elements l, l + VW, l + 2 VW, ..., the tail goes into the first
 * lanes, and the lanes are added pairwise at the end. */
static inline float lanes_total(const vec *acc) {
    float l[VW];
    memcpy(l, acc, sizeof l);
    for (int w = VW / 2; w > 0; w /= 2)
        for (int i = 0; i < w; i++) l[i] += l[i + w];
    return l[0];
}

/* sum of x[i] */
static float sum_fixed(const float *x, int n) {
    vec acc = {0};
    int i = 0;
    for (; i + VW <= n; i += VW) {
        vec v;
        LOADV(v, x + i);
        acc += v;
    }
    for (int l = 0; i + l < n; l++) acc[l] += x[i + l];
    return lanes_total(&acc);
}

/* sum of (x[i] - m)^2 */
static float sum_sq_dev_fixed(const float *x, float m, int n) {
    vec acc = {0};
    int i = 0;
    for (; i + VW <= n; i += VW) {
        vec v;
        LOADV(v, x + i);
        v -= m;
        acc += v * v;
    }
    for (int l = 0; i + l < n; l++) acc[l] += (x[i + l] - m) * (x[i + l] - m);
    return lanes_total(&acc);
}

/* sum of x[i] y[i] */
static float dot_fixed(const float *x, const float *y, int n) {
    vec acc = {0};
    int i = 0;
    for (; i + VW <= n; i += VW) {
        vec u, v;
        LOADV(u, x + i);
        LOADV(v, y + i);
        acc += u * v;
    }
    for (int l = 0; i + l < n; l++) acc[l] += x[i + l] * y[i + l];
    return lanes_total(&acc);
}

/* largest x[i] (exact, so any order gives it) */
static float max_of(const float *x, int n) {
    float mx[VW];
    for (int l = 0; l < VW; l++) mx[l] = -INFINITY;
    int i = 0;
    for (; i + VW <= n; i += VW)
        for (int l = 0; l < VW; l++) mx[l] = x[i + l] > mx[l] ? x[i + l] : mx[l];
    for (int l = 0; i + l < n; l++) mx[l] = x[i + l] > mx[l] ? x[i + l] : mx[l];
    for (int l = 1; l < VW; l++) mx[0] = mx[l] > mx[0] ? mx[l] : mx[0];
    return mx[0];
}

/* ---- encoder ----------------------------------------------------------------------- */

/* out is (B,T,C). Text positions: wte[token] + wpe_text[t]. Mel position j:
 * melin_w . frame(j-1) + melin_b + wpe_mel[j], frame(-1) = mel_start. Padding: 0. */
void xtts_encoder_forward(float *out, const xtts_model_batch *bt, const float *wte, const float *wpe_text,
                          const float *wpe_mel, const float *melin_w, const float *melin_b, const float *mel_start,
                          int C, int M) {
    int B = bt->B, T = bt->T;
    /* melin_w^T (M,C): a frame's projection then runs along contiguous channels, the same
     * sums in the same order as the dot products (without the memory: the dot products) */
    float *wt = malloc((size_t)M * C * sizeof(float));
    if (wt)
        for (int c = 0; c < C; c++)
            for (int k = 0; k < M; k++) wt[(size_t)k * C + c] = melin_w[(size_t)c * M + k];
#pragma omp parallel for collapse(2) schedule(static)
    for (int b = 0; b < B; b++) {
        for (int t = 0; t < T; t++) {
            float *o = out + ((size_t)b * T + t) * C;
            int nt = bt->n_text[b], nf = bt->n_frames[b];
            if (nf == 0) nt = 0; /* an empty row carries nothing */
            if (t < nt) {
                const float *e = wte + (size_t)bt->text[(size_t)b * bt->text_stride + t] * C;
                const float *p = wpe_text + (size_t)t * C;
                for (int i = 0; i < C; i++) o[i] = e[i] + p[i];
            } else if (t < nt + nf) {
                int j = t - nt;
                const float *x = j == 0 ? mel_start : bt->mel + ((size_t)b * bt->mel_stride + (j - 1)) * M;
                const float *p = wpe_mel + (size_t)j * C;
                if (wt) {
                    for (int c = 0; c < C; c++) o[c] = melin_b[c];
                    for (int k = 0; k < M; k++)
                        for (int c = 0; c < C; c++) o[c] += wt[(size_t)k * C + c] * x[k];
                    for (int c = 0; c < C; c++) o[c] += p[c];
                } else {
                    for (int c = 0; c < C; c++) {
                        const float *w = melin_w + (size_t)c * M;
                        float s = melin_b[c];
                        for (int k = 0; k < M; k++) s += w[k] * x[k];
                        o[c] = s + p[c];
                    }
                }
            } else {
                memset(o, 0, (size_t)C * sizeof(float));
            }
        }
    }
    free(wt);
}

void xtts_encoder_backward(float *dwte, float *dwpe_text, float *dwpe_mel, float *dmelin_w, float *dmelin_b,
                           float *dmel_start, const float *dout, const xtts_model_batch *bt, const float *mel_start,
                           const float *melin_w, int C, int M) {
    int B = bt->B, T = bt->T;
    /* Embedding tables: rows are shared between positions, so sum serially in (b,t) order. */
    for (int b = 0; b < B; b++) {
        int nt = bt->n_text[b], nf = bt->n_frames[b];
        if (nf == 0) continue;
        for (int t = 0; t < nt + nf; t++) {
            const float *d = dout + ((size_t)b * T + t) * C;
            float *e = t < nt ? dwte + (size_t)bt->text[(size_t)b * bt->text_stride + t] * C : NULL;
            float *p = t < nt ? dwpe_text + (size_t)t * C : dwpe_mel + (size_t)(t - nt) * C;
            for (int i = 0; i < C; i++) {
                if (e) e[i] += d[i];
                p[i] += d[i];
            }
        }
    }
    /* The frame projection: each c owns its row of melin_w. */
#pragma omp parallel for schedule(static)
    for (int c = 0; c < C; c++) {
        float *dw = dmelin_w + (size_t)c * M;
        for (int b = 0; b < B; b++) {
            int nt = bt->n_text[b], nf = bt->n_frames[b];
            if (nf == 0) continue;
            for (int j = 0; j < nf; j++) {
                float d = dout[((size_t)b * T + nt + j) * C + c];
                const float *x = j == 0 ? mel_start : bt->mel + ((size_t)b * bt->mel_stride + (j - 1)) * M;
                for (int k = 0; k < M; k++) dw[k] += d * x[k];
                dmelin_b[c] += d;
            }
        }
    }
    /* mel_start: only mel position 0 of each row reads it. */
    for (int b = 0; b < B; b++) {
        int nt = bt->n_text[b], nf = bt->n_frames[b];
        if (nf == 0) continue;
        const float *d = dout + ((size_t)b * T + nt) * C;
        for (int c = 0; c < C; c++) {
            const float *w = melin_w + (size_t)c * M;
            for (int k = 0; k < M; k++) dmel_start[k] += d[c] * w[k];
        }
    }
}

/* ---- layernorm ------------------------------------------------------------------------ */

/* inp, out are (B,T,C); mean, rstd are (B,T); weight, bias are (C). */
void xtts_layernorm_forward(float *out, float *mean, float *rstd, const float *inp, const float *weight,
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

void xtts_layernorm_backward(float *dinp, float *dweight, float *dbias, const float *dout, const float *inp,
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
        vec acc = {0}, acc_n = {0};
        int i = 0;
        for (; i + VW <= C; i += VW) {
            vec xv, wv, dv;
            LOADV(xv, x + i);
            LOADV(wv, weight + i);
            LOADV(dv, d + i);
            vec norm = (xv - m) * s, dnorm = wv * dv;
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

/* ---- matmul --------------------------------------------------------------------------- */

/* c (n x k, row stride ldc) += a (n x m) . b (m x k), where a's element (r, p) is
 * a[r * ars + p * aps] and b's element (p, j) is b[p * bps + j * bjs], so that transposed
 * operands need no copy.
 *
 * The loops of GotoBLAS / BLIS: p runs in blocks of KC and columns in blocks of NC; a block
 * of b (KC x NC) is packed into NR-wide panels that stay in L2, and for each panel of MR
 * rows of a (MR x KC, in L1) a micro-kernel runs over the column panels, holding an
 * MR x NR tile of c in registers (the vector type above: 24 of the 32 AVX-512 registers).
 * Packing makes the micro-kernel's vector loads contiguous whatever b's strides.
 *
 * Determinism: threads own disjoint row or column panels; every element of c sums
 * a(r,p) b(p,j) over p in increasing order, one fused multiply-add after another, whatever
 * the blocking and the thread count. Zero terms of a triangular a (mode) are skipped;
 * adding them would change nothing but the sign of a zero. */
#if defined(__AVX512F__)
#define MR 12
#else
#define MR 6
#endif
#define NR (2 * VW)
enum { KC = 256, NC = 1024 };

/* mode flags: a(r,p) = 0 for p > r (A_LOWER) or p < r (A_UPPER); C_LOWER: only c(r,j)
 * with j <= r is wanted (tiles wholly above the diagonal are skipped, the rest of the
 * upper triangle is left to the caller); SET: c = init + a . b, where init is a row of k
 * values repeated down c (zeros where NULL) and c's old contents are not read (not with
 * A_LOWER or A_UPPER). */
enum { GEMM_FULL = 0, GEMM_A_LOWER = 1, GEMM_A_UPPER = 2, GEMM_C_LOWER = 4, GEMM_SET = 8 };

#if defined(__GNUC__) && !defined(__clang__)
#define GEMM_FMA __attribute__((optimize("fp-contract=fast"))) /* fused multiply-add where the CPU has it */
#else
#define GEMM_FMA
#endif

/* c (MR x NR, row stride ldc) += a (MR x kc, element (r, p) at a[r * ars + p * aps]) .
 * bp (kc x NR, packed); with init (NR values), c = init in every row + the product. */
GEMM_FMA static void gemm_kernel(int kc, const float *restrict a, size_t ars, size_t aps, const float *restrict bp,
                                 float *restrict c, size_t ldc, const float *init) {
    vec s0[MR], s1[MR];
#pragma GCC unroll 16
    for (int r = 0; r < MR; r++) {
        if (init) {
            LOADV(s0[r], init);
            LOADV(s1[r], init + VW);
        } else {
            LOADV(s0[r], c + r * ldc);
            LOADV(s1[r], c + r * ldc + VW);
        }
    }
    for (int p = 0; p < kc; p++) {
        vec b0, b1;
        LOADV(b0, bp + (size_t)p * NR);
        LOADV(b1, bp + (size_t)p * NR + VW);
        const float *x = a + (size_t)p * aps;
#pragma GCC unroll 16
        for (int r = 0; r < MR; r++) {
            s0[r] += x[r * ars] * b0;
            s1[r] += x[r * ars] * b1;
        }
    }
#pragma GCC unroll 16
    for (int r = 0; r < MR; r++) {
        STOREV(c + r * ldc, s0[r]);
        STOREV(c + r * ldc + VW, s1[r]);
    }
}

/* The p range [lo, hi) that row panel [i0, i0 + MR) needs. */
static void gemm_p_range(int mode, int i0, int m, int *lo, int *hi) {
    *lo = mode & GEMM_A_UPPER ? (i0 < m ? i0 : m) : 0;
    *hi = mode & GEMM_A_LOWER ? (i0 + MR < m ? i0 + MR : m) : m;
}

/* Without memory for the packed block: the same sums in the same order, one row at a time,
 * over rows [r_begin, r_end) and columns [j_begin, j_end). */
GEMM_FMA static void gemm_rows_unpacked(int r_begin, int r_end, int j_begin, int j_end, int m, const float *a,
                                        size_t ars, size_t aps, const float *b, size_t bps, size_t bjs, float *c,
                                        size_t ldc, int mode, const float *init) {
    for (int r = r_begin; r < r_end; r++) {
        int lo, hi;
        gemm_p_range(mode, r / MR * MR, m, &lo, &hi);
        float *cr = c + (size_t)r * ldc;
        if (mode & GEMM_SET)
            for (int j = j_begin; j < j_end; j++) cr[j] = init ? init[j] : 0.0f;
        for (int p = lo; p < hi; p++) {
            float x = a[(size_t)r * ars + (size_t)p * aps];
            for (int j = j_begin; j < j_end; j++) cr[j] += x * b[(size_t)p * bps + (size_t)j * bjs];
        }
    }
}

/* b's block [p0, p0 + kc) x [j0, j0 + nc) into panels of NR columns (kc x NR each, the
 * columns past k zero). */
static void gemm_pack_b(float *restrict dst, const float *b, size_t bps, size_t bjs, int p0, int kc, int j0, int nc,
                        int k) {
    for (int jp = 0; jp < nc; jp += NR) {
        float *d = dst + (size_t)jp * kc;
        int cn = k - (j0 + jp) < NR ? k - (j0 + jp) : NR;
        if (bjs == 1) {
            for (int p = 0; p < kc; p++) {
                const float *s = b + (size_t)(p0 + p) * bps + j0 + jp;
                if (cn == NR) {
                    vec v0, v1;
                    LOADV(v0, s);
                    LOADV(v1, s + VW);
                    STOREV(d + (size_t)p * NR, v0);
                    STOREV(d + (size_t)p * NR + VW, v1);
                } else {
                    for (int j = 0; j < NR; j++) d[(size_t)p * NR + j] = j < cn ? s[j] : 0.0f;
                }
            }
        } else {
            for (int j = 0; j < NR; j++) {
                const float *s = b + (size_t)(j0 + jp + j) * bjs + (size_t)p0 * bps;
                if (j < cn)
                    for (int p = 0; p < kc; p++) d[(size_t)p * NR + j] = s[(size_t)p * bps];
                else
                    for (int p = 0; p < kc; p++) d[(size_t)p * NR + j] = 0.0f;
            }
        }
    }
}

/* a's rows [i0, i0 + rn) x [p0, p0 + kc) as kc x MR (the rows past rn zero). */
static void gemm_pack_a(float *restrict dst, const float *a, size_t ars, size_t aps, int i0, int rn, int p0, int kc) {
    if (aps == 1) {
        for (int r = 0; r < MR; r++) {
            const float *s = a + (size_t)(i0 + r) * ars + p0;
            if (r < rn)
                for (int p = 0; p < kc; p++) dst[(size_t)p * MR + r] = s[p];
            else
                for (int p = 0; p < kc; p++) dst[(size_t)p * MR + r] = 0.0f;
        }
    } else {
        for (int p = 0; p < kc; p++) {
            const float *s = a + (size_t)(p0 + p) * aps + (size_t)i0 * ars;
            if (ars == 1 && rn == MR) {
                memcpy(dst + (size_t)p * MR, s, MR * sizeof(float));
            } else {
                for (int r = 0; r < rn; r++) dst[(size_t)p * MR + r] = s[(size_t)r * ars];
                for (int r = rn; r < MR; r++) dst[(size_t)p * MR + r] = 0.0f;
            }
        }
    }
}

static void gemm(int n, int m, int k, const float *a, size_t ars, size_t aps, const float *b, size_t bps,
                 size_t bjs, float *c, size_t ldc, int mode, const float *init) {
    static const float zeros[NR];
    if (n <= 0 || m <= 0 || k <= 0) return;
    int n_rp = (n + MR - 1) / MR, n_cp = (k + NR - 1) / NR;
    /* inside a parallel region (attention's heads) the product runs on the calling thread */
#pragma omp parallel if (!omp_in_parallel())
    {
        /* Threads split the column panels where there are enough of them to go round evenly
         * (each then packs only its part of b), else the row panels. */
        int nth = omp_get_num_threads(), id = omp_get_thread_num();
        int by_cols = n_cp % nth == 0 || n_cp >= 4 * nth;
        int n_split = by_cols ? n_cp : n_rp;
        int begin = (int)((long long)n_split * id / nth), end = (int)((long long)n_split * (id + 1) / nth);
        int rp_begin = by_cols ? 0 : begin, rp_end = by_cols ? n_rp : end;
        int j_begin = by_cols ? begin * NR : 0, j_end = by_cols ? (end * NR < k ? end * NR : k) : k;
        int kc_max = m < KC ? m : KC, nc_max = j_end - j_begin < NC ? j_end - j_begin : NC;
        nc_max = (nc_max + NR - 1) / NR * NR;
        /* cache-line aligned, so that no vector load of the micro-kernel straddles two lines */
        float *bpack = begin < end ? aligned_alloc(64, (size_t)kc_max * nc_max * sizeof(float)) : NULL;
        float apack[MR * KC] __attribute__((aligned(64)));
        float tile[MR * NR] __attribute__((aligned(64)));
        if (begin < end && !bpack) {
            int r_end = rp_end * MR < n ? rp_end * MR : n;
            gemm_rows_unpacked(rp_begin * MR, r_end, j_begin, j_end, m, a, ars, aps, b, bps, bjs, c, ldc, mode, init);
        }
        for (int p0 = 0; bpack && p0 < m; p0 += KC) {
            int kc = m - p0 < KC ? m - p0 : KC;
            for (int j0 = j_begin; j0 < j_end; j0 += NC) {
                int nc = j_end - j0 < NC ? j_end - j0 : NC;
                gemm_pack_b(bpack, b, bps, bjs, p0, kc, j0, nc, k);
                for (int rp = rp_begin; rp < rp_end; rp++) {
                    int i0 = rp * MR, rn = n - i0 < MR ? n - i0 : MR, lo, hi;
                    gemm_p_range(mode, i0, m, &lo, &hi);
                    if (lo < p0) lo = p0;
                    if (hi > p0 + kc) hi = p0 + kc;
                    if (lo >= hi) continue;
                    int set = (mode & GEMM_SET) && p0 == 0;
                    /* a row-major row panel is read in place (each element once per column
                     * panel, as a packed copy would be); a transposed one (its steps in p
                     * a row of a apart, which alias in L1) is packed where more than one
                     * column panel reads it, and so is the last, partial one (with zero
                     * rows) */
                    const float *ap = a + (size_t)i0 * ars + (size_t)lo * aps;
                    size_t ap_rs = ars, ap_ps = aps;
                    if (rn < MR || (aps != 1 && nc > NR)) {
                        gemm_pack_a(apack, a, ars, aps, i0, rn, lo, hi - lo);
                        ap = apack, ap_rs = 1, ap_ps = MR;
                    }
                    for (int jp = 0; jp < nc; jp += NR) {
                        int j = j0 + jp, cn = k - j < NR ? k - j : NR;
                        if ((mode & GEMM_C_LOWER) && j > i0 + rn - 1) break;
                        const float *bp = bpack + (size_t)jp * kc + (size_t)(lo - p0) * NR;
                        float *ct = c + (size_t)i0 * ldc + j;
                        if (rn == MR && cn == NR) {
                            gemm_kernel(hi - lo, ap, ap_rs, ap_ps, bp, ct, ldc, set ? init ? init + j : zeros : NULL);
                        } else { /* an edge tile: through a full-size copy */
                            for (int r = 0; r < MR; r++)
                                for (int jj = 0; jj < NR; jj++)
                                    tile[r * NR + jj] = r >= rn || jj >= cn ? 0.0f
                                                        : !set                ? ct[(size_t)r * ldc + jj]
                                                        : init                ? init[j + jj]
                                                                              : 0.0f;
                            gemm_kernel(hi - lo, ap, ap_rs, ap_ps, bp, tile, NR, NULL);
                            for (int r = 0; r < rn; r++)
                                for (int jj = 0; jj < cn; jj++) ct[(size_t)r * ldc + jj] = tile[r * NR + jj];
                        }
                    }
                }
            }
        }
        free(bpack);
    }
}

static void gemm_acc(int n, int m, int k, const float *a, size_t ars, size_t aps, const float *b, size_t bps,
                     size_t bjs, float *c, size_t ldc, int mode) {
    gemm(n, m, k, a, ars, aps, b, bps, bjs, c, ldc, mode, NULL);
}

/* inp is (B,T,C), weight is (OC,C), bias is (OC) or NULL, out is (B,T,OC). */
void xtts_matmul_forward(float *out, const float *inp, const float *weight, const float *bias, int B, int T,
                         int C, int OC) {
    /* out (N,OC) = bias + inp (N,C) . weight^T (C,OC) */
    gemm(B * T, C, OC, inp, (size_t)C, 1, weight, 1, (size_t)C, out, (size_t)OC, GEMM_SET, bias);
}

void xtts_matmul_backward(float *dinp, float *dweight, float *dbias, const float *dout, const float *inp,
                          const float *weight, int B, int T, int C, int OC) {
    int N = B * T;
    /* dinp (N,C) += dout (N,OC) . weight (OC,C) */
    gemm_acc(N, OC, C, dout, (size_t)OC, 1, weight, (size_t)C, 1, dinp, (size_t)C, GEMM_FULL);
    /* dweight (OC,C) += dout^T (OC,N) . inp (N,C) */
    gemm_acc(OC, N, C, dout, 1, (size_t)OC, inp, (size_t)C, 1, dweight, (size_t)C, GEMM_FULL);
    if (dbias) {
        /* column sums over rows in order; threads own column blocks, rows stream through */
        enum { COLS = 64 };
#pragma omp parallel for schedule(static)
        for (int oc0 = 0; oc0 < OC; oc0 += COLS) {
            int n = OC - oc0 < COLS ? OC - oc0 : COLS;
            float db[COLS] = {0};
            for (int bt = 0; bt < N; bt++) {
                const float *d = dout + (size_t)bt * OC + oc0;
                for (int j = 0; j < n; j++) db[j] += d[j];
            }
            for (int j = 0; j < n; j++) dbias[oc0 + j] += db[j];
        }
    }
}

/* ---- causal self-attention --------------------------------------------------------------- */

/* inp is (B,T,3C) holding q,k,v; att is (B,NH,T,T); out is (B,T,C).
 * Per (b,h): S = q k^T (the tiles on or below the diagonal, then masked), P = softmax of
 * the causal part of each row (zeros above the diagonal), out = P v over that part. */
void xtts_attention_forward(float *out, float *att, const float *inp, int B, int T, int C, int NH) {
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
void xtts_attention_backward(float *dinp, const float *dout, const float *inp, const float *att, int B, int T,
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

/* ---- pointwise ---------------------------------------------------------------------- */

WIDE_VECTORS void xtts_gelu_forward(float *out, const float *inp, size_t N) {
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < N; i++) out[i] = xtts_gelu(inp[i]);
}

WIDE_VECTORS void xtts_gelu_backward(float *dinp, const float *inp, const float *dout, size_t N) {
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < N; i++) dinp[i] += xtts_gelu_grad(inp[i]) * dout[i];
}

void xtts_residual_forward(float *out, const float *inp1, const float *inp2, size_t N) {
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < N; i++) out[i] = inp1[i] + inp2[i];
}

/* ---- loss ------------------------------------------------------------------------------ */

/* head is (B,T,M+1): M mel predictions and a stop logit per position. */
int xtts_mel_stop_loss_forward_backward(float *mel_loss, float *stop_loss, float *dhead, const float *head,
                                        const xtts_model_batch *bt, int M, float pos_weight) {
    int B = bt->B, T = bt->T, M1 = M + 1;
    int frames = 0;
    for (int b = 0; b < B; b++) frames += bt->n_frames[b];
    if (dhead) memset(dhead, 0, (size_t)B * T * M1 * sizeof(float));
    if (frames == 0) {
        *mel_loss = 0.0f;
        *stop_loss = 0.0f;
        return 0;
    }
    double l1 = 0.0, bce = 0.0;
    float mel_scale = 1.0f / ((float)frames * M), stop_scale = 1.0f / (float)frames;
    for (int b = 0; b < B; b++) {
        int nt = bt->n_text[b], nf = bt->n_frames[b];
        for (int j = 0; j < nf; j++) {
            const float *h = head + ((size_t)b * T + nt + j) * M1;
            const float *y = bt->mel + ((size_t)b * bt->mel_stride + j) * M;
            float *dh = dhead ? dhead + ((size_t)b * T + nt + j) * M1 : NULL;
            for (int k = 0; k < M; k++) {
                float diff = h[k] - y[k];
                l1 += fabsf(diff);
                if (dh) dh[k] = (diff > 0.0f ? 1.0f : diff < 0.0f ? -1.0f : 0.0f) * mel_scale;
            }
            float target = j == nf - 1 ? 1.0f : 0.0f;
            bce += xtts_bce_logits(h[M], target, pos_weight);
            if (dh) dh[M] = xtts_bce_logits_grad(h[M], target, pos_weight) * stop_scale;
        }
    }
    *mel_loss = (float)(l1 / ((double)frames * M));
    *stop_loss = (float)(bce / frames);
    return frames;
}

/* ---- the model ------------------------------------------------------------------------- */

static const char *const param_names[XTTS_NUM_PARAM_TENSORS] = {
    "wte",  "wpe_text", "wpe_mel", "melin_w",  "melin_b",  "mel_start", "ln1w",    "ln1b",
    "qkvw", "qkvb",     "attprojw", "attprojb", "ln2w",    "ln2b",      "fcw",     "fcb",
    "fcprojw", "fcprojb", "lnfw",  "lnfb",     "headw",    "headb"};

const char *xtts_param_name(int i) { return i >= 0 && i < XTTS_NUM_PARAM_TENSORS ? param_names[i] : "?"; }

int xtts_model_size_preset(const char *name, int *n_layer, int *channels, int *n_head) {
    static const struct { const char *name; int L, C, NH; } sizes[] = {
        {"tiny", 2, 128, 4}, {"small", 6, 384, 6}, {"base", 12, 768, 12}};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        if (strcmp(name, sizes[i].name) == 0) {
            *n_layer = sizes[i].L;
            *channels = sizes[i].C;
            *n_head = sizes[i].NH;
            return 0;
        }
    }
    return -1;
}

xtts_status xtts_model_config_check(const xtts_model_config *c, xtts_error *err) {
    if (c->n_layer < 1 || c->n_layer > 256)
        return xtts_error_set(err, XTTS_EUSAGE, "model: layers %d not in 1..256", c->n_layer);
    if (c->channels < 1 || c->channels > 16384)
        return xtts_error_set(err, XTTS_EUSAGE, "model: width %d not in 1..16384", c->channels);
    if (c->n_head < 1 || c->channels % c->n_head != 0)
        return xtts_error_set(err, XTTS_EUSAGE, "model: %d heads do not divide width %d", c->n_head, c->channels);
    if (c->n_mels < 1 || c->n_mels > 1024)
        return xtts_error_set(err, XTTS_EUSAGE, "model: n_mels %d not in 1..1024", c->n_mels);
    if (c->vocab_size < 1 || c->vocab_size > 1 << 20)
        return xtts_error_set(err, XTTS_EUSAGE, "model: vocabulary size %d not in 1..1048576", c->vocab_size);
    if (c->max_text_pos < 1 || c->max_text_pos > 1 << 20 || c->max_mel_pos < 1 || c->max_mel_pos > 1 << 20)
        return xtts_error_set(err, XTTS_EUSAGE, "model: position tables %d/%d out of range", c->max_text_pos,
                              c->max_mel_pos);
    return XTTS_OK;
}

static void fill_param_sizes(const xtts_model_config *cfg, size_t *s) {
    size_t L = cfg->n_layer, C = cfg->channels, M = cfg->n_mels;
    s[0] = (size_t)(cfg->vocab_size + XTTS_N_LANGS) * C;
    s[1] = (size_t)cfg->max_text_pos * C;
    s[2] = (size_t)cfg->max_mel_pos * C;
    s[3] = C * M;
    s[4] = C;
    s[5] = M;
    s[6] = L * C;
    s[7] = L * C;
    s[8] = L * 3 * C * C;
    s[9] = L * 3 * C;
    s[10] = L * C * C;
    s[11] = L * C;
    s[12] = L * C;
    s[13] = L * C;
    s[14] = L * 4 * C * C;
    s[15] = L * 4 * C;
    s[16] = L * C * 4 * C;
    s[17] = L * C;
    s[18] = C;
    s[19] = C;
    s[20] = (M + 1) * C;
    s[21] = M + 1;
}

size_t xtts_model_num_parameters(const xtts_model_config *cfg) {
    size_t s[XTTS_NUM_PARAM_TENSORS], n = 0;
    fill_param_sizes(cfg, s);
    for (int i = 0; i < XTTS_NUM_PARAM_TENSORS; i++) n += s[i];
    return n;
}

static void point_params(xtts_param_tensors *p, const size_t *sizes, float *mem) {
    float **ptrs[XTTS_NUM_PARAM_TENSORS] = {
        &p->wte,  &p->wpe_text, &p->wpe_mel,  &p->melin_w,  &p->melin_b, &p->mel_start, &p->ln1w, &p->ln1b,
        &p->qkvw, &p->qkvb,     &p->attprojw, &p->attprojb, &p->ln2w,    &p->ln2b,      &p->fcw,  &p->fcb,
        &p->fcprojw, &p->fcprojb, &p->lnfw,   &p->lnfb,     &p->headw,   &p->headb};
    for (int i = 0; i < XTTS_NUM_PARAM_TENSORS; i++) {
        *ptrs[i] = mem;
        mem += sizes[i];
    }
}

float *xtts_param_tensor(const xtts_model *m, float *memory, int i) {
    for (int k = 0; k < i; k++) memory += m->param_sizes[k];
    return memory;
}

/* splitmix64 and Box-Muller: a small, portable generator so that a seed gives the same
 * initial weights on every machine. */
static float normal01(uint64_t *s) {
    double u1 = ((xtts_splitmix64(s) >> 11) + 1.0) * (1.0 / 9007199254740993.0);
    double u2 = (xtts_splitmix64(s) >> 11) * (1.0 / 9007199254740992.0);
    return (float)(sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
}

static void init_params(xtts_model *m, uint64_t seed) {
    uint64_t s = seed ^ 0x5854545354524e31ULL; /* "XTTSTRN1" */
    float proj_std = 0.02f / sqrtf(2.0f * m->config.n_layer);
    for (int i = 0; i < XTTS_NUM_PARAM_TENSORS; i++) {
        float *p = xtts_param_tensor(m, m->params_memory, i);
        size_t n = m->param_sizes[i];
        const char *name = param_names[i];
        int is_ln_weight = !strcmp(name, "ln1w") || !strcmp(name, "ln2w") || !strcmp(name, "lnfw");
        int is_bias = !strcmp(name, "melin_b") || !strcmp(name, "qkvb") || !strcmp(name, "attprojb") ||
                      !strcmp(name, "ln1b") || !strcmp(name, "ln2b") || !strcmp(name, "lnfb") ||
                      !strcmp(name, "fcb") || !strcmp(name, "fcprojb") || !strcmp(name, "headb");
        float std = (!strcmp(name, "attprojw") || !strcmp(name, "fcprojw")) ? proj_std : 0.02f;
        for (size_t k = 0; k < n; k++) p[k] = is_ln_weight ? 1.0f : is_bias ? 0.0f : std * normal01(&s);
    }
}

static size_t acts_floats(const xtts_model_config *c, size_t B, size_t T) {
    size_t L = c->n_layer, C = c->channels, NH = c->n_head, M1 = c->n_mels + 1;
    return B * T * C                       /* encoded */
           + L * B * T * C + 2 * L * B * T /* ln1 */
           + L * B * T * 3 * C             /* qkv */
           + L * B * T * C                 /* atty */
           + L * B * NH * T * T            /* att */
           + L * B * T * C                 /* residual2 */
           + L * B * T * C + 2 * L * B * T /* ln2 */
           + 2 * L * B * T * 4 * C         /* fch, fch_gelu */
           + L * B * T * C                 /* residual3 */
           + B * T * C + 2 * B * T         /* lnf */
           + B * T * M1;                   /* head */
}

/* Point the activation tensors for the current (B,T): tensors are laid out densely for
 * this shape inside the allocation made for (B_max, T_max). */
static void point_acts(xtts_model *m, int B, int T) {
    size_t L = m->config.n_layer, C = m->config.channels, NH = m->config.n_head, M1 = m->config.n_mels + 1;
    size_t BT = (size_t)B * T;
    float *p = m->acts_memory;
    xtts_activations *a = &m->acts;
#define TAKE(field, n) do { a->field = p; p += (n); } while (0)
    TAKE(encoded, BT * C);
    TAKE(ln1, L * BT * C);
    TAKE(ln1_mean, L * BT);
    TAKE(ln1_rstd, L * BT);
    TAKE(qkv, L * BT * 3 * C);
    TAKE(atty, L * BT * C);
    TAKE(att, L * B * NH * (size_t)T * T);
    TAKE(residual2, L * BT * C);
    TAKE(ln2, L * BT * C);
    TAKE(ln2_mean, L * BT);
    TAKE(ln2_rstd, L * BT);
    TAKE(fch, L * BT * 4 * C);
    TAKE(fch_gelu, L * BT * 4 * C);
    TAKE(residual3, L * BT * C);
    TAKE(lnf, BT * C);
    TAKE(lnf_mean, BT);
    TAKE(lnf_rstd, BT);
    TAKE(head, BT * M1);
#undef TAKE
    xtts_grad_scratch *g = &m->scratch;
    p = m->scratch_memory;
#define TAKE(field, n) do { g->field = p; p += (n); } while (0)
    TAKE(dresidual, BT * C);
    TAKE(dhead, BT * M1);
    TAKE(dln, BT * C);
    TAKE(datty, BT * C);
    TAKE(dqkv, BT * 3 * C);
    TAKE(dfch, BT * 4 * C);
    TAKE(dfch_gelu, BT * 4 * C);
#undef TAKE
}

xtts_status xtts_model_new(const xtts_model_config *cfg, int B_max, int T_max, uint64_t seed, xtts_model **out,
                           xtts_error *err) {
    *out = NULL;
    xtts_status st = xtts_model_config_check(cfg, err);
    if (st) return st;
    if (B_max < 1 || T_max < 1)
        return xtts_error_set(err, XTTS_EUSAGE, "model: batch shape %d x %d is empty", B_max, T_max);
    xtts_model *m = calloc(1, sizeof *m);
    if (!m) return xtts_error_set(err, XTTS_ENOMEM, "model: out of memory");
    m->config = *cfg;
    m->B_max = B_max;
    m->T_max = T_max;
    m->stop_pos_weight = 1.0f;
    fill_param_sizes(cfg, m->param_sizes);
    for (int i = 0; i < XTTS_NUM_PARAM_TENSORS; i++) m->num_parameters += m->param_sizes[i];
    size_t C = cfg->channels, M1 = cfg->n_mels + 1, BT = (size_t)B_max * T_max;
    size_t n_acts = acts_floats(cfg, B_max, T_max);
    size_t n_scratch = BT * (C + M1 + C + C + 3 * C + 8 * C);
    m->params_memory = malloc(m->num_parameters * sizeof(float));
    m->grads_memory = calloc(m->num_parameters, sizeof(float));
    m->acts_memory = malloc(n_acts * sizeof(float));
    m->scratch_memory = malloc(n_scratch * sizeof(float));
    if (!m->params_memory || !m->grads_memory || !m->acts_memory || !m->scratch_memory) {
        size_t n_params = m->num_parameters;
        xtts_model_delete(m);
        return xtts_error_set(err, XTTS_ENOMEM,
                              "model: out of memory for %zu parameters and %.1f MB of activations (batch %d x %d)",
                              n_params, (double)(n_acts + n_scratch) * 4 / 1e6, B_max, T_max);
    }
    point_params(&m->params, m->param_sizes, m->params_memory);
    point_params(&m->grads, m->param_sizes, m->grads_memory);
    init_params(m, seed);
    *out = m;
    return XTTS_OK;
}

void xtts_model_delete(xtts_model *m) {
    if (!m) return;
    free(m->params_memory);
    free(m->grads_memory);
    free(m->acts_memory);
    free(m->scratch_memory);
    free(m);
}

xtts_status xtts_model_check_batch(const xtts_model *m, const xtts_model_batch *bt, xtts_error *err) {
    const xtts_model_config *c = &m->config;
    if (bt->B < 1 || bt->B > m->B_max || bt->T < 1 || bt->T > m->T_max)
        return xtts_error_set(err, XTTS_ERANGE, "batch %d x %d exceeds the model's %d x %d", bt->B, bt->T,
                              m->B_max, m->T_max);
    int n_tokens = c->vocab_size + XTTS_N_LANGS;
    for (int b = 0; b < bt->B; b++) {
        int nt = bt->n_text[b], nf = bt->n_frames[b];
        if (nf == 0) continue;
        if (nt < 0 || nf < 0 || nt > c->max_text_pos || nt > bt->text_stride || nf > c->max_mel_pos ||
            nf > bt->mel_stride || nt + nf > bt->T)
            return xtts_error_set(err, XTTS_ERANGE,
                                  "batch row %d: %d text positions and %d frames do not fit the model "
                                  "(%d text, %d mel positions, T %d)",
                                  b, nt, nf, c->max_text_pos, c->max_mel_pos, bt->T);
        for (int t = 0; t < nt; t++) {
            int32_t id = bt->text[(size_t)b * bt->text_stride + t];
            if (id < 0 || id >= n_tokens)
                return xtts_error_set(err, XTTS_ERANGE, "batch row %d: token %d at %d outside the vocabulary (%d)",
                                      b, (int)id, t, n_tokens);
        }
    }
    return XTTS_OK;
}

void xtts_model_forward(xtts_model *m, const xtts_model_batch *bt) {
    int B = bt->B, T = bt->T;
    int L = m->config.n_layer, C = m->config.channels, NH = m->config.n_head, M = m->config.n_mels;
    size_t BT = (size_t)B * T;
    point_acts(m, B, T);
    xtts_param_tensors *p = &m->params;
    xtts_activations *a = &m->acts;

    xtts_encoder_forward(a->encoded, bt, p->wte, p->wpe_text, p->wpe_mel, p->melin_w, p->melin_b, p->mel_start, C, M);
    for (int l = 0; l < L; l++) {
        const float *residual = l == 0 ? a->encoded : a->residual3 + (size_t)(l - 1) * BT * C;
        float *l_ln1 = a->ln1 + l * BT * C, *l_ln1_mean = a->ln1_mean + l * BT, *l_ln1_rstd = a->ln1_rstd + l * BT;
        float *l_qkv = a->qkv + l * BT * 3 * C, *l_atty = a->atty + l * BT * C;
        float *l_att = a->att + (size_t)l * B * NH * T * T;
        float *l_residual2 = a->residual2 + l * BT * C;
        float *l_ln2 = a->ln2 + l * BT * C, *l_ln2_mean = a->ln2_mean + l * BT, *l_ln2_rstd = a->ln2_rstd + l * BT;
        float *l_fch = a->fch + l * BT * 4 * C, *l_fch_gelu = a->fch_gelu + l * BT * 4 * C;
        float *l_residual3 = a->residual3 + l * BT * C;
        /* attention output projection and MLP output go into scratch before the residual add */
        float *tmp = m->scratch.dln; /* (B,T,C), free during forward */

        xtts_layernorm_forward(l_ln1, l_ln1_mean, l_ln1_rstd, residual, p->ln1w + l * C, p->ln1b + l * C, B, T, C);
        xtts_matmul_forward(l_qkv, l_ln1, p->qkvw + (size_t)l * 3 * C * C, p->qkvb + l * 3 * C, B, T, C, 3 * C);
        xtts_attention_forward(l_atty, l_att, l_qkv, B, T, C, NH);
        xtts_matmul_forward(tmp, l_atty, p->attprojw + (size_t)l * C * C, p->attprojb + l * C, B, T, C, C);
        xtts_residual_forward(l_residual2, residual, tmp, BT * C);
        xtts_layernorm_forward(l_ln2, l_ln2_mean, l_ln2_rstd, l_residual2, p->ln2w + l * C, p->ln2b + l * C, B, T, C);
        xtts_matmul_forward(l_fch, l_ln2, p->fcw + (size_t)l * 4 * C * C, p->fcb + l * 4 * C, B, T, C, 4 * C);
        xtts_gelu_forward(l_fch_gelu, l_fch, BT * 4 * C);
        xtts_matmul_forward(tmp, l_fch_gelu, p->fcprojw + (size_t)l * C * 4 * C, p->fcprojb + l * C, B, T, 4 * C, C);
        xtts_residual_forward(l_residual3, l_residual2, tmp, BT * C);
    }
    const float *last = a->residual3 + (size_t)(L - 1) * BT * C;
    xtts_layernorm_forward(a->lnf, a->lnf_mean, a->lnf_rstd, last, p->lnfw, p->lnfb, B, T, C);
    xtts_matmul_forward(a->head, a->lnf, p->headw, p->headb, B, T, C, M + 1);
    m->n_frames_total = xtts_mel_stop_loss_forward_backward(&m->mel_loss, &m->stop_loss, NULL, a->head, bt, M,
                                                            m->stop_pos_weight);
    m->loss = m->mel_loss + m->stop_loss;
}

void xtts_model_zero_grad(xtts_model *m) { memset(m->grads_memory, 0, m->num_parameters * sizeof(float)); }

void xtts_model_backward(xtts_model *m, const xtts_model_batch *bt) {
    int B = bt->B, T = bt->T;
    int L = m->config.n_layer, C = m->config.channels, NH = m->config.n_head, M = m->config.n_mels;
    size_t BT = (size_t)B * T;
    xtts_param_tensors *p = &m->params, *g = &m->grads;
    xtts_activations *a = &m->acts;
    xtts_grad_scratch *s = &m->scratch;
    float ml, sl;
    xtts_mel_stop_loss_forward_backward(&ml, &sl, s->dhead, a->head, bt, M, m->stop_pos_weight);

    memset(s->dln, 0, BT * C * sizeof(float));
    xtts_matmul_backward(s->dln, g->headw, g->headb, s->dhead, a->lnf, p->headw, B, T, C, M + 1);
    memset(s->dresidual, 0, BT * C * sizeof(float));
    xtts_layernorm_backward(s->dresidual, g->lnfw, g->lnfb, s->dln, a->residual3 + (size_t)(L - 1) * BT * C, p->lnfw,
                            a->lnf_mean, a->lnf_rstd, B, T, C);
    for (int l = L - 1; l >= 0; l--) {
        const float *residual = l == 0 ? a->encoded : a->residual3 + (size_t)(l - 1) * BT * C;
        const float *l_ln1 = a->ln1 + l * BT * C, *l_ln1_mean = a->ln1_mean + l * BT,
                    *l_ln1_rstd = a->ln1_rstd + l * BT;
        const float *l_qkv = a->qkv + l * BT * 3 * C, *l_atty = a->atty + l * BT * C;
        const float *l_att = a->att + (size_t)l * B * NH * T * T;
        const float *l_residual2 = a->residual2 + l * BT * C;
        const float *l_ln2 = a->ln2 + l * BT * C, *l_ln2_mean = a->ln2_mean + l * BT,
                    *l_ln2_rstd = a->ln2_rstd + l * BT;
        const float *l_fch = a->fch + l * BT * 4 * C, *l_fch_gelu = a->fch_gelu + l * BT * 4 * C;

        /* residual3 = residual2 + fcproj: dresidual flows to both */
        memset(s->dfch_gelu, 0, BT * 4 * C * sizeof(float));
        xtts_matmul_backward(s->dfch_gelu, g->fcprojw + (size_t)l * C * 4 * C, g->fcprojb + l * C, s->dresidual,
                             l_fch_gelu, p->fcprojw + (size_t)l * C * 4 * C, B, T, 4 * C, C);
        memset(s->dfch, 0, BT * 4 * C * sizeof(float));
        xtts_gelu_backward(s->dfch, l_fch, s->dfch_gelu, BT * 4 * C);
        memset(s->dln, 0, BT * C * sizeof(float));
        xtts_matmul_backward(s->dln, g->fcw + (size_t)l * 4 * C * C, g->fcb + l * 4 * C, s->dfch, l_ln2,
                             p->fcw + (size_t)l * 4 * C * C, B, T, C, 4 * C);
        xtts_layernorm_backward(s->dresidual, g->ln2w + l * C, g->ln2b + l * C, s->dln, l_residual2, p->ln2w + l * C,
                                l_ln2_mean, l_ln2_rstd, B, T, C);
        /* residual2 = residual + attproj */
        memset(s->datty, 0, BT * C * sizeof(float));
        xtts_matmul_backward(s->datty, g->attprojw + (size_t)l * C * C, g->attprojb + l * C, s->dresidual, l_atty,
                             p->attprojw + (size_t)l * C * C, B, T, C, C);
        memset(s->dqkv, 0, BT * 3 * C * sizeof(float));
        xtts_attention_backward(s->dqkv, s->datty, l_qkv, l_att, B, T, C, NH);
        memset(s->dln, 0, BT * C * sizeof(float));
        xtts_matmul_backward(s->dln, g->qkvw + (size_t)l * 3 * C * C, g->qkvb + l * 3 * C, s->dqkv, l_ln1,
                             p->qkvw + (size_t)l * 3 * C * C, B, T, C, 3 * C);
        xtts_layernorm_backward(s->dresidual, g->ln1w + l * C, g->ln1b + l * C, s->dln, residual, p->ln1w + l * C,
                                l_ln1_mean, l_ln1_rstd, B, T, C);
    }
    xtts_encoder_backward(g->wte, g->wpe_text, g->wpe_mel, g->melin_w, g->melin_b, g->mel_start, s->dresidual, bt,
                          p->mel_start, p->melin_w, C, M);
}
