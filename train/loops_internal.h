/* loops_internal.h — the trainer's CPU loops: the layers (forward/backward pairs in the manner
 * of llm.c's train_gpt2.c, shapes in comments), the loss, and the optimizer's passes over the
 * parameters.
 *
 * Not a header of declarations: train/cpu_loops.c compiles this text once per instruction set
 * (x86-64-v4, x86-64-v3, the baseline; train/cpu_level.h), each time under its own
 * `#pragma GCC target` and with LOOPS_NAME naming that copy's functions, and the trainer runs
 * the widest copy the CPU has. Everything here is static and renamed per copy (the list below);
 * types, enums and constants shared by the copies are defined once.
 *
 * Every copy computes the same bits, so the instruction set changes the speed only:
 *  - no expression is contracted into a fused multiply-add (ISO C mode, -std=c17: gcc's
 *    default there is -ffp-contract=off), except the matrix product's terms, which are one
 *    fused multiply-add each in every copy: the FMA instruction where the copy has it, an exact
 *    emulation where it has not (fma_emulated);
 *  - sums run in an order fixed by the data's shape: SUM_LANES running sums whatever the
 *    register width, added pairwise;
 *  - the matrix product skips the zero terms of a triangular operand by blocks of TRI_ROWS rows,
 *    which every copy's tile height divides, so every copy adds the same terms.
 */
#ifndef XTTS_LOOPS_SHARED
#define XTTS_LOOPS_SHARED

/* Sums vectorize yet add in an order fixed by the length alone: lane l of SUM_LANES running
 * sums takes elements l, l + SUM_LANES, ..., the tail goes into the first lanes, and the lanes
 * are added pairwise at the end. 16 lanes: one AVX-512 register, two AVX2 ones, four SSE. */
#define SUM_LANES 16
typedef float lanes __attribute__((vector_size(SUM_LANES * sizeof(float))));

/* unaligned vector load and store (macros: passing vectors by value would tie the ABI to
 * the instruction set) */
#define LOADV(v, p) memcpy(&(v), (p), sizeof(v))
#define STOREV(p, v) memcpy((p), &(v), sizeof(v))

/* The matrix product's blocks (see gemm): p in blocks of KC, columns in blocks of NC; a
 * triangular a's zero terms are skipped by blocks of TRI_ROWS rows. */
#define KC 256
#define NC 1024
#define TRI_ROWS 12

/* The gradient norm's chunks and lanes (see grad_norm) */
#define NORM_CHUNK 65536
#define NORM_LANES 8

/* mode flags: a(r,p) = 0 for p > r (A_LOWER) or p < r (A_UPPER); C_LOWER: only c(r,j)
 * with j <= r is wanted (tiles wholly above the diagonal are skipped, the rest of the
 * upper triangle is left to the caller); SET: c = init + a . b, where init is a row of k
 * values repeated down c (zeros where NULL) and c's old contents are not read (not with
 * A_LOWER or A_UPPER). */
enum { GEMM_FULL = 0, GEMM_A_LOWER = 1, GEMM_A_UPPER = 2, GEMM_C_LOWER = 4, GEMM_SET = 8 };

#endif /* XTTS_LOOPS_SHARED */

/* This copy's vectors of the matrix product (GCC's vector extension, no intrinsics): VW
 * floats, one register of the copy's widest kind; its tile of c is MR x NR. */
#undef VW
#undef MR
#undef NR
#if defined(__AVX512F__)
#define VW 16
#define MR 12 /* 24 of the 32 registers hold the tile */
#elif defined(__AVX__)
#define VW 8
#define MR 6 /* 12 of the 16 */
#else
#define VW 4
#define MR 4
#endif
#define NR (2 * VW)
#if TRI_ROWS % MR != 0
#error "the tile height must divide TRI_ROWS"
#endif

/* This copy's names. */
#define vec LOOPS_NAME(vec)
#define vec_double LOOPS_NAME(vec_double)
#define vec_bits LOOPS_NAME(vec_bits)
#define lanes_total LOOPS_NAME(lanes_total)
#define sum_fixed LOOPS_NAME(sum_fixed)
#define sum_sq_dev_fixed LOOPS_NAME(sum_sq_dev_fixed)
#define dot_fixed LOOPS_NAME(dot_fixed)
#define max_of LOOPS_NAME(max_of)
#define encoder_forward LOOPS_NAME(encoder_forward)
#define encoder_backward LOOPS_NAME(encoder_backward)
#define layernorm_forward LOOPS_NAME(layernorm_forward)
#define layernorm_backward LOOPS_NAME(layernorm_backward)
#define fma_emulated LOOPS_NAME(fma_emulated)
#define madd1 LOOPS_NAME(madd1)
#define gemm_kernel LOOPS_NAME(gemm_kernel)
#define gemm_p_range LOOPS_NAME(gemm_p_range)
#define gemm_rows_unpacked LOOPS_NAME(gemm_rows_unpacked)
#define gemm_pack_b LOOPS_NAME(gemm_pack_b)
#define gemm_pack_a LOOPS_NAME(gemm_pack_a)
#define gemm LOOPS_NAME(gemm)
#define gemm_acc LOOPS_NAME(gemm_acc)
#define matmul_forward LOOPS_NAME(matmul_forward)
#define matmul_backward LOOPS_NAME(matmul_backward)
#define attention_forward LOOPS_NAME(attention_forward)
#define attention_backward LOOPS_NAME(attention_backward)
#define gelu_forward LOOPS_NAME(gelu_forward)
#define gelu_backward LOOPS_NAME(gelu_backward)
#define residual_forward LOOPS_NAME(residual_forward)
#define mel_stop_loss_forward_backward LOOPS_NAME(mel_stop_loss_forward_backward)
#define grad_norm LOOPS_NAME(grad_norm)
#define scale_values LOOPS_NAME(scale_values)
#define adamw_step LOOPS_NAME(adamw_step)
#define loops LOOPS_NAME(loops)

typedef float vec __attribute__((vector_size(VW * sizeof(float))));

/* The per-element math that the CUDA kernels share (train/train_math.h), compiled into this
 * copy too, under this copy's names: a function of another instruction set than its caller's
 * is not inlined, and these run once per element. */
#define xtts_exp LOOPS_NAME(xtts_exp)
#define xtts_tanh LOOPS_NAME(xtts_tanh)
#define xtts_gelu LOOPS_NAME(xtts_gelu)
#define xtts_gelu_grad LOOPS_NAME(xtts_gelu_grad)
#define xtts_softplus LOOPS_NAME(xtts_softplus)
#define xtts_sigmoid LOOPS_NAME(xtts_sigmoid)
#define xtts_bce_logits LOOPS_NAME(xtts_bce_logits)
#define xtts_bce_logits_grad LOOPS_NAME(xtts_bce_logits_grad)
#define xtts_adamw_update LOOPS_NAME(xtts_adamw_update)
#undef XTTS_TRAIN_MATH_H
#include "train/train_math.h"

/* ---- sums in a fixed order ------------------------------------------------------------ */

/* The SUM_LANES running sums added pairwise. */
static inline float lanes_total(const lanes *acc) {
    float l[SUM_LANES];
    memcpy(l, acc, sizeof l);
    for (int w = SUM_LANES / 2; w > 0; w /= 2)
        for (int i = 0; i < w; i++) l[i] += l[i + w];
    return l[0];
}

/* sum of x[i] */
static float sum_fixed(const float *x, int n) {
    lanes acc = {0};
    int i = 0;
    for (; i + SUM_LANES <= n; i += SUM_LANES) {
        lanes v;
        LOADV(v, x + i);
        acc += v;
    }
    for (int l = 0; i + l < n; l++) acc[l] += x[i + l];
    return lanes_total(&acc);
}

/* sum of (x[i] - m)^2 */
static float sum_sq_dev_fixed(const float *x, float m, int n) {
    lanes acc = {0};
    int i = 0;
    for (; i + SUM_LANES <= n; i += SUM_LANES) {
        lanes v;
        LOADV(v, x + i);
        v -= m;
        acc += v * v;
    }
    for (int l = 0; i + l < n; l++) acc[l] += (x[i + l] - m) * (x[i + l] - m);
    return lanes_total(&acc);
}

/* sum of x[i] y[i] */
static float dot_fixed(const float *x, const float *y, int n) {
    lanes acc = {0};
    int i = 0;
    for (; i + SUM_LANES <= n; i += SUM_LANES) {
        lanes u, v;
        LOADV(u, x + i);
        LOADV(v, y + i);
        acc += u * v;
    }
    for (int l = 0; i + l < n; l++) acc[l] += x[i + l] * y[i + l];
    return lanes_total(&acc);
}

/* largest x[i] (exact, so any order gives it) */
static float max_of(const float *x, int n) {
    float mx[SUM_LANES];
    for (int l = 0; l < SUM_LANES; l++) mx[l] = -INFINITY;
    int i = 0;
    for (; i + SUM_LANES <= n; i += SUM_LANES)
        for (int l = 0; l < SUM_LANES; l++) mx[l] = x[i + l] > mx[l] ? x[i + l] : mx[l];
    for (int l = 0; i + l < n; l++) mx[l] = x[i + l] > mx[l] ? x[i + l] : mx[l];
    for (int l = 1; l < SUM_LANES; l++) mx[0] = mx[l] > mx[0] ? mx[l] : mx[0];
    return mx[0];
}

/* ---- encoder ----------------------------------------------------------------------- */

/* out is (B,T,C). Text positions: wte[token] + wpe_text[t]. Mel position j:
 * melin_w . frame(j-1) + melin_b + wpe_mel[j], frame(-1) = mel_start. Padding: 0. */
static void encoder_forward(float *out, const xtts_model_batch *bt, const float *wte, const float *wpe_text,
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

static void encoder_backward(float *dwte, float *dwpe_text, float *dwpe_mel, float *dmelin_w, float *dmelin_b,
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

/* ---- matmul --------------------------------------------------------------------------- */

/* c (n x k, row stride ldc) += a (n x m) . b (m x k), where a's element (r, p) is
 * a[r * ars + p * aps] and b's element (p, j) is b[p * bps + j * bjs], so that transposed
 * operands need no copy.
 *
 * The loops of GotoBLAS / BLIS: p runs in blocks of KC and columns in blocks of NC; a block
 * of b (KC x NC) is packed into NR-wide panels that stay in L2, and for each panel of MR
 * rows of a (MR x KC, in L1) a micro-kernel runs over the column panels, holding an
 * MR x NR tile of c in registers. Packing makes the micro-kernel's vector loads contiguous
 * whatever b's strides.
 *
 * Determinism: threads own disjoint row or column panels; every element of c sums
 * a(r,p) b(p,j) over p in increasing order, one fused multiply-add after another, whatever
 * the blocking, the tile and the thread count. The zero terms of a triangular a (mode) are
 * skipped by blocks of TRI_ROWS rows: each row adds the same terms in every copy (adding a
 * zero term would change nothing but the sign of a zero). */

#undef GEMM_FMA
#undef MADD
#if defined(__FMA__) || defined(__ARM_FEATURE_FMA) /* (every aarch64 CPU has the FMA instruction) */
/* s + x b rounded once: the FMA instruction, which gcc makes of this expression in the
 * functions that ask for contraction (GEMM_FMA; clang contracts within an expression by
 * default) */
#if defined(__clang__)
#define GEMM_FMA
#else
#define GEMM_FMA __attribute__((optimize("fp-contract=fast", "expensive-optimizations")))
#endif
#define MADD(s, x, b) ((s) + (x) * (b))
#else
#define GEMM_FMA
#define MADD(s, x, b) fma_emulated(s, x, b)
typedef double vec_double __attribute__((vector_size(VW * sizeof(double))));
typedef int64_t vec_bits __attribute__((vector_size(VW * sizeof(int64_t))));

/* s + x b rounded once, as the FMA instruction rounds it, on a CPU without one. x b is exact
 * in double (24 + 24 bits), and so is the sum where it fits in double's 53 bits. Rounding the
 * double sum to float can then differ from rounding the exact sum only where the double sum
 * sits on a midpoint between two floats that the exact sum is not on; a midpoint has no bits
 * in the lowest 28 of double's 52, so only such sums (a few in 2^28, and the sums that are
 * floats) take the slow path: the double sum's rounding error recovered exactly (Knuth's
 * TwoSum) and the sum rounded to odd (toward zero, then the last bit set where anything was
 * lost), which the rounding to float turns into the correctly rounded s + x b since double
 * has at least 2 x 24 + 2 bits (S. Boldo, G. Melquiond, "Emulation of FMA and correctly
 * rounded sums: proved algorithms using rounding to odd", IEEE Trans. Computers 57(4), 2008).
 * An infinite or NaN sum has a NaN error and is left as it is. */
static inline vec fma_emulated(vec s, float x, vec b) {
    vec_double c = __builtin_convertvector(s, vec_double), p = __builtin_convertvector(b, vec_double) * (double)x;
    vec_double sum = c + p;
    vec_bits bits;
    memcpy(&bits, &sum, sizeof bits);
    vec_bits on_grid = (bits & 0xfffffff) == 0;
    int slow = 0;
    for (int l = 0; l < VW; l++) slow |= on_grid[l] != 0;
    if (__builtin_expect(slow, 0)) {
        vec_double pv = sum - c, err = (c - (sum - pv)) + (p - pv); /* sum + err == c + p */
        vec_bits err_bits;
        memcpy(&err_bits, &err, sizeof err_bits);
        vec_bits inexact = (err < 0) | (err > 0);
        vec_bits away = (bits ^ err_bits) < 0; /* rounded away from zero: the error has the other sign */
        bits = (bits + (inexact & away)) | (inexact & 1);
        memcpy(&sum, &bits, sizeof sum);
    }
    return __builtin_convertvector(sum, vec);
}
#endif

/* s + x b rounded once, for one element */
static inline float madd1(float s, float x, float b) {
#if defined(__FMA__) || defined(__ARM_FEATURE_FMA)
    return __builtin_fmaf(x, b, s);
#else
    vec sv = {s}, bv = {b};
    return fma_emulated(sv, x, bv)[0];
#endif
}

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
            s0[r] = MADD(s0[r], x[r * ars], b0);
            s1[r] = MADD(s1[r], x[r * ars], b1);
        }
    }
#pragma GCC unroll 16
    for (int r = 0; r < MR; r++) {
        STOREV(c + r * ldc, s0[r]);
        STOREV(c + r * ldc + VW, s1[r]);
    }
}

/* The p range [lo, hi) that row r needs, and the rows of its block of TRI_ROWS (so that of
 * every tile of MR rows that holds it). */
static void gemm_p_range(int mode, int r, int m, int *lo, int *hi) {
    int r0 = r / TRI_ROWS * TRI_ROWS, r1 = r0 + TRI_ROWS;
    *lo = mode & GEMM_A_UPPER ? (r0 < m ? r0 : m) : 0;
    *hi = mode & GEMM_A_LOWER ? (r1 < m ? r1 : m) : m;
}

/* Without memory for the packed block: the same sums in the same order, one row at a time,
 * over rows [r_begin, r_end) and columns [j_begin, j_end). */
static void gemm_rows_unpacked(int r_begin, int r_end, int j_begin, int j_end, int m, const float *a, size_t ars,
                               size_t aps, const float *b, size_t bps, size_t bjs, float *c, size_t ldc, int mode,
                               const float *init) {
    for (int r = r_begin; r < r_end; r++) {
        int lo, hi;
        gemm_p_range(mode, r, m, &lo, &hi);
        float *cr = c + (size_t)r * ldc;
        if (mode & GEMM_SET)
            for (int j = j_begin; j < j_end; j++) cr[j] = init ? init[j] : 0.0f;
        for (int p = lo; p < hi; p++) {
            float x = a[(size_t)r * ars + (size_t)p * aps];
            for (int j = j_begin; j < j_end; j++) cr[j] = madd1(cr[j], x, b[(size_t)p * bps + (size_t)j * bjs]);
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
        /* cache-line aligned, so that no vector load of the micro-kernel straddles two lines
         * (aligned_alloc wants a size that is a multiple of the alignment) */
        size_t bpack_bytes = ((size_t)kc_max * nc_max * sizeof(float) + 63) / 64 * 64;
        float *bpack = begin < end ? aligned_alloc(64, bpack_bytes) : NULL;
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
static void matmul_forward(float *out, const float *inp, const float *weight, const float *bias, int B, int T,
                           int C, int OC) {
    /* out (N,OC) = bias + inp (N,C) . weight^T (C,OC) */
    gemm(B * T, C, OC, inp, (size_t)C, 1, weight, 1, (size_t)C, out, (size_t)OC, GEMM_SET, bias);
}

static void matmul_backward(float *dinp, float *dweight, float *dbias, const float *dout, const float *inp,
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

/* ---- pointwise ---------------------------------------------------------------------- */

static void gelu_forward(float *out, const float *inp, size_t N) {
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < N; i++) out[i] = xtts_gelu(inp[i]);
}

static void gelu_backward(float *dinp, const float *inp, const float *dout, size_t N) {
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < N; i++) dinp[i] += xtts_gelu_grad(inp[i]) * dout[i];
}

static void residual_forward(float *out, const float *inp1, const float *inp2, size_t N) {
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < N; i++) out[i] = inp1[i] + inp2[i];
}

/* ---- loss ------------------------------------------------------------------------------ */

/* head is (B,T,M+1): M mel predictions and a stop logit per position. */
static int mel_stop_loss_forward_backward(float *mel_loss, float *stop_loss, float *dhead, const float *head,
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

/* ---- optimizer ------------------------------------------------------------------------- */

/* Global L2 norm of grads[0..n): sums of squares in double over chunks of NORM_CHUNK
 * (independent of the thread count), added in order. Within a chunk, NORM_LANES running sums
 * take every NORM_LANES-th element (a loop the compiler vectorizes, in an order fixed by the
 * chunk alone) and are added pairwise. */
static float grad_norm(const float *grads, size_t n) {
    size_t n_chunks = (n + NORM_CHUNK - 1) / NORM_CHUNK;
    double total = 0.0;
#pragma omp parallel for ordered schedule(static)
    for (size_t c = 0; c < n_chunks; c++) {
        size_t lo = c * NORM_CHUNK, hi = lo + NORM_CHUNK < n ? lo + NORM_CHUNK : n;
        double s[NORM_LANES] = {0};
        size_t i = lo;
        for (; i + NORM_LANES <= hi; i += NORM_LANES)
            for (int l = 0; l < NORM_LANES; l++) s[l] += (double)grads[i + l] * grads[i + l];
        for (int l = 0; i + l < hi; l++) s[l] += (double)grads[i + l] * grads[i + l];
        for (int w = NORM_LANES / 2; w > 0; w /= 2)
            for (int l = 0; l < w; l++) s[l] += s[l + w];
#pragma omp ordered
        total += s[0];
    }
    return (float)sqrt(total);
}

/* x[0..n) *= s */
static void scale_values(float *x, size_t n, float s) {
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++) x[i] *= s;
}

/* One AdamW step over params, m, v [n] with the bias corrections b1c = 1 - beta1^t,
 * b2c = 1 - beta2^t. */
static void adamw_step(float *params, const float *grads, float *m, float *v, size_t n, float lr,
                       const xtts_optim_config *o, float b1c, float b2c) {
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++)
        params[i] = xtts_adamw_update(params[i], grads[i], &m[i], &v[i], lr, o->beta1, o->beta2, o->eps,
                                      o->weight_decay, b1c, b2c);
}

/* ---- this copy's table ------------------------------------------------------------------ */

static const xtts_cpu_loops loops = {
    encoder_forward,  encoder_backward,  layernorm_forward, layernorm_backward,
    matmul_forward,   matmul_backward,   attention_forward, attention_backward,
    gelu_forward,     gelu_backward,     residual_forward,  mel_stop_loss_forward_backward,
    grad_norm,        scale_values,      adamw_step,
};
