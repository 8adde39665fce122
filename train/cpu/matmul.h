/* cpu/matmul.h — the CPU loops of the matrix products: `gemm`, a blocked product in the manner
 * of GotoBLAS / BLIS (packed panels, an MR x NR register tile, GCC's vector extension, no
 * intrinsics) that every product of the trainer runs on, and the linear layer's
 * forward/backward pair over it (bias included). Attention (train/cpu/attention.h) calls gemm
 * too, with the triangular modes below.
 *
 * Determinism (train/cpu/loops.h): each element of c is one chain of fused multiply-adds in
 * increasing p, the same in every copy (the FMA instruction, or its exact emulation where the
 * copy has none), whatever the blocking, the tile and the thread count.
 *
 * Included once per instruction set by train/cpu/loops.h: the part under the guard is shared by
 * the copies, the rest is the copy's own (its vector width and tile) and renamed (LOOPS_NAME).
 */
#ifndef XTTS_CPU_MATMUL_SHARED
#define XTTS_CPU_MATMUL_SHARED

/* The matrix product's blocks (see gemm): p in blocks of KC, columns in blocks of NC; a
 * triangular a's zero terms are skipped by blocks of TRI_ROWS rows. */
#define KC 256
#define NC 1024
#define TRI_ROWS 12

/* mode flags: a(r,p) = 0 for p > r (A_LOWER) or p < r (A_UPPER); C_LOWER: only c(r,j)
 * with j <= r is wanted (tiles wholly above the diagonal are skipped, the rest of the
 * upper triangle is left to the caller); SET: c = init + a . b, where init is a row of k
 * values repeated down c (zeros where NULL) and c's old contents are not read (not with
 * A_LOWER or A_UPPER). */
enum { GEMM_FULL = 0, GEMM_A_LOWER = 1, GEMM_A_UPPER = 2, GEMM_C_LOWER = 4, GEMM_SET = 8 };

#endif /* XTTS_CPU_MATMUL_SHARED */

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

#define vec LOOPS_NAME(vec)
#define vec_double LOOPS_NAME(vec_double)
#define vec_bits LOOPS_NAME(vec_bits)
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

typedef float vec __attribute__((vector_size(VW * sizeof(float))));

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
#if defined(__FMA__)
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
#if defined(__FMA__)
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
