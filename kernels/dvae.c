/* dvae.c — the DiscreteVAE encoder of XTTS and its codebook search (dvae.h).
 *
 * Every convolution is one matrix product: the input is unfolded (im2col) into
 * (in*kernel, T_out) columns, and out = W (out, in*kernel) x columns + bias, computed by a
 * 6 x 16 register-blocked kernel of fused multiply-adds (AVX2 + FMA, chosen at run time; elsewhere
 * the same blocks with GCC's vector extension) over the columns packed in panels of 16, in passes of 256 over the inner
 * dimension; the threads share the packed panels and take blocks of output rows. The
 * codebook search is one more product, the transposed codebook (N, D) by the latent (D, T2),
 * with the entries' squared norms precomputed. float32 throughout, as Coqui runs it (fused
 * multiply-adds round once where Coqui's may round twice: the golden clip's latent is within
 * 1e-4 of Coqui's, the codes equal). Reference: tests/golden/make_dvae_golden.py and check_dvae_full.py run
 * Coqui's own DiscreteVAE on the same weights and mel. */
#include "kernels/dvae.h"

#include "common/xtts_common_internal.h"

#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define XTTS_DVAE_SEGMENTS 64 /* parts of one clip encoded side by side, at most */
#define XTTS_DVAE_HALO 7      /* codes each side of a cut that the cut disturbs (see encode_segments) */
#define XTTS_DVAE_MIN_PART 48 /* codes of a part, at least: the halos cost 2 x 7 codes each */

#define MR 6 /* output rows of the micro-kernel: 12 vector accumulators */
#if defined(__x86_64__) && defined(__GNUC__)
/* The fused multiply-add kernels are compiled for AVX2 + FMA whatever the build's baseline and
 * used where the CPU has them (chosen once), so a portable build (x86-64-v2) keeps them. */
#include <immintrin.h>
#define DVAE_FMA_TARGET __attribute__((target("avx2,fma")))
#define DVAE_HAVE_FMA_KERNEL 1
#endif
#define NR 16  /* output columns of the micro-kernel: two vectors of 8 */
#define KC 256 /* inner dimension per pass: MR rows of W (KC floats each) stay in L1 */

typedef float v8f __attribute__((vector_size(32)));

struct xtts_dvae {
    xtts_dvae_weights w;
    float *codebook_t; /* (N, D): entry j's D values together */
    float *code_norm;  /* (N): |e_j|^2 */
    float *buf[XTTS_DVAE_SEGMENTS];        /* per segment: the activations and the columns, grown */
    size_t buf_floats[XTTS_DVAE_SEGMENTS];
};

size_t xtts_dvae_codes_len(size_t frames) {
    size_t t1 = (frames + 1) / 2;
    return (t1 + 1) / 2;
}

#ifdef DVAE_HAVE_FMA_KERNEL
/* y[MR][NR] += W[MR][kc] x c[kc][NR]: rows w[0..5] of W, the packed panel c (NR floats per
 * step of the inner dimension), y with row stride ldy. Fused multiply-adds (AVX2 + FMA). */
DVAE_FMA_TARGET static void micro_kernel_fma(const float *const *w, const float *c, size_t kc, float *y, size_t ldy) {
    __m256 a00 = _mm256_loadu_ps(y), a01 = _mm256_loadu_ps(y + 8);
    __m256 a10 = _mm256_loadu_ps(y + ldy), a11 = _mm256_loadu_ps(y + ldy + 8);
    __m256 a20 = _mm256_loadu_ps(y + 2 * ldy), a21 = _mm256_loadu_ps(y + 2 * ldy + 8);
    __m256 a30 = _mm256_loadu_ps(y + 3 * ldy), a31 = _mm256_loadu_ps(y + 3 * ldy + 8);
    __m256 a40 = _mm256_loadu_ps(y + 4 * ldy), a41 = _mm256_loadu_ps(y + 4 * ldy + 8);
    __m256 a50 = _mm256_loadu_ps(y + 5 * ldy), a51 = _mm256_loadu_ps(y + 5 * ldy + 8);
    const float *w0 = w[0], *w1 = w[1], *w2 = w[2], *w3 = w[3], *w4 = w[4], *w5 = w[5];
    for (size_t j = 0; j < kc; j++) {
        __m256 c0 = _mm256_loadu_ps(c + j * NR), c1 = _mm256_loadu_ps(c + j * NR + 8), v;
        v = _mm256_broadcast_ss(w0 + j), a00 = _mm256_fmadd_ps(v, c0, a00), a01 = _mm256_fmadd_ps(v, c1, a01);
        v = _mm256_broadcast_ss(w1 + j), a10 = _mm256_fmadd_ps(v, c0, a10), a11 = _mm256_fmadd_ps(v, c1, a11);
        v = _mm256_broadcast_ss(w2 + j), a20 = _mm256_fmadd_ps(v, c0, a20), a21 = _mm256_fmadd_ps(v, c1, a21);
        v = _mm256_broadcast_ss(w3 + j), a30 = _mm256_fmadd_ps(v, c0, a30), a31 = _mm256_fmadd_ps(v, c1, a31);
        v = _mm256_broadcast_ss(w4 + j), a40 = _mm256_fmadd_ps(v, c0, a40), a41 = _mm256_fmadd_ps(v, c1, a41);
        v = _mm256_broadcast_ss(w5 + j), a50 = _mm256_fmadd_ps(v, c0, a50), a51 = _mm256_fmadd_ps(v, c1, a51);
    }
    _mm256_storeu_ps(y, a00), _mm256_storeu_ps(y + 8, a01);
    _mm256_storeu_ps(y + ldy, a10), _mm256_storeu_ps(y + ldy + 8, a11);
    _mm256_storeu_ps(y + 2 * ldy, a20), _mm256_storeu_ps(y + 2 * ldy + 8, a21);
    _mm256_storeu_ps(y + 3 * ldy, a30), _mm256_storeu_ps(y + 3 * ldy + 8, a31);
    _mm256_storeu_ps(y + 4 * ldy, a40), _mm256_storeu_ps(y + 4 * ldy + 8, a41);
    _mm256_storeu_ps(y + 5 * ldy, a50), _mm256_storeu_ps(y + 5 * ldy + 8, a51);
}

/* The left half of micro_kernel_fma, for a last panel of at most 8 columns (half the work). */
DVAE_FMA_TARGET static void micro_kernel8_fma(const float *const *w, const float *c, size_t kc, float *y, size_t ldy) {
    __m256 a0 = _mm256_loadu_ps(y), a1 = _mm256_loadu_ps(y + ldy), a2 = _mm256_loadu_ps(y + 2 * ldy);
    __m256 a3 = _mm256_loadu_ps(y + 3 * ldy), a4 = _mm256_loadu_ps(y + 4 * ldy), a5 = _mm256_loadu_ps(y + 5 * ldy);
    for (size_t j = 0; j < kc; j++) {
        __m256 c0 = _mm256_loadu_ps(c + j * NR);
        a0 = _mm256_fmadd_ps(_mm256_broadcast_ss(w[0] + j), c0, a0);
        a1 = _mm256_fmadd_ps(_mm256_broadcast_ss(w[1] + j), c0, a1);
        a2 = _mm256_fmadd_ps(_mm256_broadcast_ss(w[2] + j), c0, a2);
        a3 = _mm256_fmadd_ps(_mm256_broadcast_ss(w[3] + j), c0, a3);
        a4 = _mm256_fmadd_ps(_mm256_broadcast_ss(w[4] + j), c0, a4);
        a5 = _mm256_fmadd_ps(_mm256_broadcast_ss(w[5] + j), c0, a5);
    }
    _mm256_storeu_ps(y, a0), _mm256_storeu_ps(y + ldy, a1), _mm256_storeu_ps(y + 2 * ldy, a2);
    _mm256_storeu_ps(y + 3 * ldy, a3), _mm256_storeu_ps(y + 4 * ldy, a4), _mm256_storeu_ps(y + 5 * ldy, a5);
}
#endif

/* The same without FMA, with GCC's vector extension (a multiply, then an add: no contraction
 * under ISO C's rules): where the CPU lacks AVX2 + FMA, and off x86-64. */
static void micro_kernel_generic(const float *const *w, const float *c, size_t kc, float *y, size_t ldy) {
    v8f a[MR][2];
    for (int r = 0; r < MR; r++) memcpy(&a[r][0], y + (size_t)r * ldy, 32), memcpy(&a[r][1], y + (size_t)r * ldy + 8, 32);
    for (size_t j = 0; j < kc; j++) {
        v8f c0, c1;
        memcpy(&c0, c + j * NR, 32);
        memcpy(&c1, c + j * NR + 8, 32);
        for (int r = 0; r < MR; r++) a[r][0] += w[r][j] * c0, a[r][1] += w[r][j] * c1;
    }
    for (int r = 0; r < MR; r++) memcpy(y + (size_t)r * ldy, &a[r][0], 32), memcpy(y + (size_t)r * ldy + 8, &a[r][1], 32);
}

typedef void (*dvae_kernel_fn)(const float *const *w, const float *c, size_t kc, float *y, size_t ldy);

/* The kernels for this CPU: for full panels, and for panels of at most 8 columns. */
typedef struct {
    dvae_kernel_fn full, half;
} dvae_kernels;

/* The kernels of this CPU, the CPU read once (a product asks at its start). */
static dvae_kernels dvae_kernels_for_cpu(void) {
    static int have = -1; /* a benign race: every thread computes the same answer */
    int h = __atomic_load_n(&have, __ATOMIC_RELAXED);
    if (h < 0) {
        /* XTTS_DVAE_KERNEL=generic: the kernel without FMA on any CPU (its test runs it so) */
        const char *force = getenv("XTTS_DVAE_KERNEL");
        h = force && !strcmp(force, "generic") ? 0 : xtts_cpu_has_avx2_fma();
        __atomic_store_n(&have, h, __ATOMIC_RELAXED);
    }
    dvae_kernels k = {micro_kernel_generic, micro_kernel_generic};
#ifdef DVAE_HAVE_FMA_KERNEL
    if (h) k.full = micro_kernel_fma, k.half = micro_kernel8_fma;
#endif
    return k;
}

/* A block of nr <= MR rows and nt <= NR columns: the kernel on a copy (the missing rows of W
 * repeat the last one and are dropped; the packed panel's missing columns are zeros). */
static void block_kernel(const dvae_kernels *k, const float *w, size_t ldw, const float *c, size_t kc, float *y,
                         size_t ldy, int nr, size_t nt) {
    const float *rows[MR];
    for (int r = 0; r < MR; r++) rows[r] = w + (size_t)(r < nr ? r : nr - 1) * ldw;
    if (nr == MR && nt == NR) {
        k->full(rows, c, kc, y, ldy);
        return;
    }
    float tmp[MR * NR] = {0};
    for (int r = 0; r < nr; r++) memcpy(tmp + r * NR, y + (size_t)r * ldy, nt * sizeof(float));
    (nt <= 8 ? k->half : k->full)(rows, c, kc, tmp, NR);
    for (int r = 0; r < nr; r++) memcpy(y + (size_t)r * ldy, tmp + r * NR, nt * sizeof(float));
}

/* Floats of the packed columns matmul_bias needs for k_in rows and tout columns. */
static size_t pack_floats(size_t k_in, size_t tout) { return k_in * ((tout + NR - 1) / NR * NR); }

/* Packs cols (k_in, tout) into panels of NR columns, panel p's rows together (k_in x NR,
 * zero-padded past tout), for every panel at once. */
static void pack_panels(const float *cols, size_t k_in, size_t tout, float *pack) {
    size_t panels = (tout + NR - 1) / NR;
    for (size_t p = 0; p < panels; p++) {
        size_t t0 = p * NR, nt = tout - t0 < NR ? tout - t0 : NR;
        float *pk = pack + p * k_in * NR;
        for (size_t j = 0; j < k_in; j++) {
            memcpy(pk + j * NR, cols + j * tout + t0, nt * sizeof(float));
            for (size_t t = nt; t < NR; t++) pk[j * NR + t] = 0.0f;
        }
    }
}

/* y (cout, tout) = W (cout, k_in) x cols (k_in, tout) + b (none when b is NULL), on the
 * calling thread. The columns are packed once into panels of NR; then each block of MR
 * output rows goes, pass by pass of KC over the inner dimension, over every panel, so that
 * the MR x KC block of W is read from memory once and stays in L1 while the panels' KC rows
 * (KC x tout floats) stay in L2. */
static void matmul_bias(const float *w, const float *b, const float *cols, size_t k_in, int cout, size_t tout, float *y,
                        float *pack) {
    size_t panels = (tout + NR - 1) / NR;
    const dvae_kernels kern = dvae_kernels_for_cpu();
    pack_panels(cols, k_in, tout, pack);
    for (int o0 = 0; o0 < cout; o0 += MR) {
        int nr = cout - o0 < MR ? cout - o0 : MR;
        for (int r = 0; r < nr; r++)
            for (size_t t = 0; t < tout; t++) y[(size_t)(o0 + r) * tout + t] = b ? b[o0 + r] : 0.0f;
        for (size_t k0 = 0; k0 < k_in; k0 += KC) {
            size_t kc = k_in - k0 < KC ? k_in - k0 : KC;
            for (size_t p = 0; p < panels; p++) {
                size_t t0 = p * NR, nt = tout - t0 < NR ? tout - t0 : NR;
                block_kernel(&kern, w + (size_t)o0 * k_in + k0, k_in, pack + p * k_in * NR + k0 * NR, kc,
                             y + (size_t)o0 * tout + t0, tout, nr, nt);
            }
        }
    }
}

/* Conv1d, zero padding: x is (cin, tin), w (cout, cin, k), y (cout, tout). cols is scratch
 * of cin*k*tout floats (unused for a kernel-1, stride-1 conv), pack of pack_floats(cin*k, tout). */
static void conv1d(const float *x, int cin, size_t tin, const float *w, const float *b, int cout, int k, int stride,
                   size_t tout, float *cols, float *pack, float *y) {
    if (k == 1 && stride == 1) {
        matmul_bias(w, b, x, (size_t)cin, cout, tout, y, pack);
        return;
    }
    int pad = (k - 1) / 2;
    for (int i = 0; i < cin; i++)
        for (int kk = 0; kk < k; kk++) {
            float *c = cols + ((size_t)i * (size_t)k + (size_t)kk) * tout;
            const float *xi = x + (size_t)i * tin;
            for (size_t t = 0; t < tout; t++) {
                long src = (long)(t * (size_t)stride) + kk - pad;
                c[t] = src >= 0 && (size_t)src < tin ? xi[src] : 0.0f;
            }
        }
    matmul_bias(w, b, cols, (size_t)cin * (size_t)k, cout, tout, y, pack);
}

static void relu(float *x, size_t n) {
    for (size_t i = 0; i < n; i++) x[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

xtts_status xtts_dvae_new(const xtts_dvae_weights *w, xtts_dvae **out, xtts_error *err) {
    *out = NULL;
    const xtts_dvae_config *c = &w->cfg;
    if (c->channels < 1 || c->hidden < 1 || c->codebook_dim < 1 || c->num_tokens < 1 || c->num_tokens > 65536)
        return xtts_error_set(err, XTTS_EUSAGE, "dvae: sizes channels %d, hidden %d, codebook %d x %d are not usable",
                              c->channels, c->hidden, c->codebook_dim, c->num_tokens);
    int missing = !w->conv0_w || !w->conv0_b || !w->conv1_w || !w->conv1_b || !w->proj_w || !w->proj_b || !w->codebook;
    for (int b = 0; b < XTTS_DVAE_RES_BLOCKS; b++)
        for (int k = 0; k < 3; k++) missing |= !w->res_w[b][k] || !w->res_b[b][k];
    if (missing) return xtts_error_set(err, XTTS_EUSAGE, "dvae: a weight array is missing");
    xtts_dvae *d = calloc(1, sizeof *d);
    size_t n = (size_t)c->num_tokens, dim = (size_t)c->codebook_dim;
    if (d) {
        d->codebook_t = malloc(n * dim * sizeof(float));
        d->code_norm = malloc(n * sizeof(float));
    }
    if (!d || !d->codebook_t || !d->code_norm) {
        xtts_dvae_delete(d);
        return xtts_error_set(err, XTTS_ENOMEM, "dvae: out of memory for a codebook of %zu x %zu", dim, n);
    }
    d->w = *w;
    for (size_t j = 0; j < n; j++) {
        float s = 0.0f;
        for (size_t i = 0; i < dim; i++) {
            float e = w->codebook[i * n + j];
            d->codebook_t[j * dim + i] = e;
            s += e * e;
        }
        d->code_norm[j] = s;
    }
    *out = d;
    return XTTS_OK;
}

/* The nearest entry for each of the t2 columns of latent (D, t2): the products with every
 * entry, prod (N, t2) = codebook_t (N, D) x latent, by the same kernel as the convolutions,
 * then per column the lowest |e|^2 - 2 e.z (|z|^2 is the same for every entry), the first
 * entry on a tie. best is t2 floats of scratch. */
static void nearest_codes(const xtts_dvae *d, const float *latent, size_t t2, float *prod, float *pack, float *best,
                          uint16_t *codes) {
    size_t dim = (size_t)d->w.cfg.codebook_dim, n = (size_t)d->w.cfg.num_tokens;
    matmul_bias(d->codebook_t, NULL, latent, dim, (int)n, t2, prod, pack);
    for (size_t t = 0; t < t2; t++) best[t] = d->code_norm[0] - 2.0f * prod[t], codes[t] = 0;
    for (size_t j = 1; j < n; j++) {
        const float *pj = prod + j * t2;
        for (size_t t = 0; t < t2; t++) {
            float dist = d->code_norm[j] - 2.0f * pj[t];
            if (dist < best[t]) best[t] = dist, codes[t] = (uint16_t)j;
        }
    }
}

/* The encoder on frames (ch, n) of a clip (row stride ldm) alone, on the calling thread with
 * scratch slot slot: the codes [skip, skip + count) of its t2 into codes and, when latent is
 * not NULL, their latent columns into latent (dim rows of stride ldl). */
static xtts_status encode_alone(xtts_dvae *d, int slot, const float *mel, size_t ldm, size_t n, size_t skip,
                                size_t count, uint16_t *codes, float *latent, size_t ldl, xtts_error *err) {
    const xtts_dvae_weights *w = &d->w;
    size_t ch = (size_t)w->cfg.channels, hid = (size_t)w->cfg.hidden, inner = 2 * hid, dim = (size_t)w->cfg.codebook_dim;
    size_t t1 = (n + 1) / 2, t2 = xtts_dvae_codes_len(n), nt = (size_t)w->cfg.num_tokens;
    /* m (ch, n) | h1 (hid, t1) | x (inner, t2) | a, b (inner, t2) | z, zc (dim, t2) | cols | pack */
    size_t cols = ch * 3 * t1;
    if (hid * 3 * t2 > cols) cols = hid * 3 * t2;
    if (inner * 3 * t2 > cols) cols = inner * 3 * t2;
    if ((nt + 1) * t2 > cols) cols = (nt + 1) * t2; /* reused for the codebook products */
    size_t packs = pack_floats(inner * 3, t2);
    if (pack_floats(ch * 3, t1) > packs) packs = pack_floats(ch * 3, t1);
    if (pack_floats(dim, t2) > packs) packs = pack_floats(dim, t2);
    size_t need = ch * n + hid * t1 + 3 * inner * t2 + 2 * dim * t2 + cols + packs;
    if (need > d->buf_floats[slot]) {
        float *buf = realloc(d->buf[slot], need * sizeof(float));
        if (!buf) return xtts_error_set(err, XTTS_ENOMEM, "dvae: out of memory for a clip of %zu frames", n);
        d->buf[slot] = buf;
        d->buf_floats[slot] = need;
    }
    float *m = d->buf[slot], *h1 = m + ch * n, *x = h1 + hid * t1, *a = x + inner * t2, *b = a + inner * t2;
    float *z = b + inner * t2, *zc = z + dim * t2, *col = zc + dim * t2, *pack = col + cols;
    for (size_t c = 0; c < ch; c++) memcpy(m + c * n, mel + c * ldm, n * sizeof(float));
    conv1d(m, (int)ch, n, w->conv0_w, w->conv0_b, (int)hid, 3, 2, t1, col, pack, h1);
    relu(h1, hid * t1);
    conv1d(h1, (int)hid, t1, w->conv1_w, w->conv1_b, (int)inner, 3, 2, t2, col, pack, x);
    relu(x, inner * t2);
    for (int r = 0; r < XTTS_DVAE_RES_BLOCKS; r++) {
        conv1d(x, (int)inner, t2, w->res_w[r][0], w->res_b[r][0], (int)inner, 3, 1, t2, col, pack, a);
        relu(a, inner * t2);
        conv1d(a, (int)inner, t2, w->res_w[r][1], w->res_b[r][1], (int)inner, 3, 1, t2, col, pack, b);
        relu(b, inner * t2);
        conv1d(b, (int)inner, t2, w->res_w[r][2], w->res_b[r][2], (int)inner, 1, 1, t2, col, pack, a);
        for (size_t i = 0; i < inner * t2; i++) x[i] += a[i];
    }
    conv1d(x, (int)inner, t2, w->proj_w, w->proj_b, (int)dim, 1, 1, t2, col, pack, z);
    for (size_t r = 0; r < dim; r++) {
        memcpy(zc + r * count, z + r * t2 + skip, count * sizeof(float));
        if (latent) memcpy(latent + r * ldl, zc + r * count, count * sizeof(float));
    }
    nearest_codes(d, zc, count, col, pack, col + nt * count, codes);
    return XTTS_OK;
}

/* The clip cut into parts codes [a, b) encoded side by side, one thread each, with no
 * barrier between the layers (the machine is often shared: a thread that waits spins). Part
 * [a, b) is encoded alone from the frames [4(a - 7), 4(b + 7)) within the clip: a cut's zero
 * padding disturbs the first t1 and t2 columns of its side, and each of the six kernel-3
 * convolutions after conv1 one column more, 7 in all; the codes past them are those of the
 * whole clip, bit for bit (a column's sums do not depend on the other columns, and the cuts
 * fall on multiples of 4 frames, so every stride keeps its phase). */
static xtts_status encode_segments(xtts_dvae *d, const float *mel, size_t frames, size_t parts, uint16_t *codes,
                                   float *latent, xtts_error *err) {
    size_t t2 = xtts_dvae_codes_len(frames);
    xtts_status st_all = XTTS_OK;
#pragma omp parallel for num_threads((int)parts) schedule(static, 1)
    for (size_t k = 0; k < parts; k++) {
        size_t a = t2 * k / parts, b = t2 * (k + 1) / parts;
        size_t f0 = a > XTTS_DVAE_HALO ? 4 * (a - XTTS_DVAE_HALO) : 0;
        size_t f1 = 4 * (b + XTTS_DVAE_HALO) < frames ? 4 * (b + XTTS_DVAE_HALO) : frames;
        xtts_error e;
        xtts_status st = encode_alone(d, (int)k, mel + f0, frames, f1 - f0, a - f0 / 4, b - a, codes + a,
                                      latent ? latent + a : NULL, t2, &e);
        if (st) {
#pragma omp critical
            if (!st_all) st_all = st, *err = e;
        }
    }
    return st_all;
}

xtts_status xtts_dvae_encode(xtts_dvae *d, const float *mel, size_t frames, uint16_t *codes, float *latent,
                             xtts_error *err) {
    if (frames == 0) return xtts_error_set(err, XTTS_EUSAGE, "dvae: a clip of 0 frames has no codes");
    if (frames > XTTS_DVAE_MAX_FRAMES)
        return xtts_error_set(err, XTTS_EUSAGE, "dvae: a clip of %zu frames (at most %d)", frames, XTTS_DVAE_MAX_FRAMES);
    size_t t2 = xtts_dvae_codes_len(frames), parts = t2 / XTTS_DVAE_MIN_PART;
#ifdef _OPENMP
    size_t threads = (size_t)omp_get_max_threads();
#else
    size_t threads = 1;
#endif
    if (parts > threads) parts = threads;
    if (parts > XTTS_DVAE_SEGMENTS) parts = XTTS_DVAE_SEGMENTS;
    if (parts <= 1) return encode_alone(d, 0, mel, frames, frames, 0, t2, codes, latent, t2, err);
    return encode_segments(d, mel, frames, parts, codes, latent, err);
}

void xtts_dvae_delete(xtts_dvae *d) {
    if (!d) return;
    free(d->codebook_t);
    free(d->code_norm);
    for (int k = 0; k < XTTS_DVAE_SEGMENTS; k++) free(d->buf[k]);
    free(d);
}
