/* dvae.c — the DiscreteVAE encoder of XTTS and its codebook search (dvae.h).
 *
 * Every convolution is one matrix product: the input is unfolded (im2col) into
 * (in*kernel, T_out) columns, and out = W (out, in*kernel) x columns + bias, computed by a
 * 4 x 16 register-blocked kernel over packed panels of 16 columns, in passes of 256 over the
 * inner dimension (GCC's vector extension, no intrinsics); the threads share the panels. The
 * codebook search is one more product, the transposed codebook (N, D) by the latent (D, T2),
 * with the entries' squared norms precomputed. float32 throughout, as Coqui runs it, and each
 * sum in the order Coqui's CPU convolution takes at small sizes (the golden clip's latent is
 * equal bit for bit). Reference: tests/golden/make_dvae_golden.py and check_dvae_full.py run
 * Coqui's own DiscreteVAE on the same weights and mel. */
#include "kernels/dvae.h"

#include <stdlib.h>
#include <string.h>

#define MR 4   /* output rows of the micro-kernel */
#define NR 16  /* output columns of the micro-kernel: two vectors of 8 */
#define KC 256 /* inner dimension per pass: a packed (KC, NR) panel stays in L1 */

typedef float v8f __attribute__((vector_size(32)));

struct xtts_dvae {
    xtts_dvae_weights w;
    float *codebook_t; /* (N, D): entry j's D values together */
    float *code_norm;  /* (N): |e_j|^2 */
    float *buf;        /* scratch: the activations and the columns, grown to the longest clip */
    size_t buf_floats;
};

size_t xtts_dvae_codes_len(size_t frames) {
    size_t t1 = (frames + 1) / 2;
    return (t1 + 1) / 2;
}

/* y[MR][NR] += W[MR][kc] x c[kc][NR] (row strides ldw, ldc, ldy): 8 vector accumulators
 * held in registers over the whole inner dimension (the rows written out: GCC keeps an
 * array of vectors on the stack). */
static void micro_kernel(const float *w, size_t ldw, const float *c, size_t ldc, size_t kc, float *y, size_t ldy) {
    v8f a00, a01, a10, a11, a20, a21, a30, a31;
    memcpy(&a00, y, 32), memcpy(&a01, y + 8, 32);
    memcpy(&a10, y + ldy, 32), memcpy(&a11, y + ldy + 8, 32);
    memcpy(&a20, y + 2 * ldy, 32), memcpy(&a21, y + 2 * ldy + 8, 32);
    memcpy(&a30, y + 3 * ldy, 32), memcpy(&a31, y + 3 * ldy + 8, 32);
    const float *w0 = w, *w1 = w + ldw, *w2 = w + 2 * ldw, *w3 = w + 3 * ldw;
    for (size_t j = 0; j < kc; j++) {
        v8f c0, c1;
        memcpy(&c0, c + j * ldc, 32);
        memcpy(&c1, c + j * ldc + 8, 32);
        a00 += w0[j] * c0, a01 += w0[j] * c1;
        a10 += w1[j] * c0, a11 += w1[j] * c1;
        a20 += w2[j] * c0, a21 += w2[j] * c1;
        a30 += w3[j] * c0, a31 += w3[j] * c1;
    }
    memcpy(y, &a00, 32), memcpy(y + 8, &a01, 32);
    memcpy(y + ldy, &a10, 32), memcpy(y + ldy + 8, &a11, 32);
    memcpy(y + 2 * ldy, &a20, 32), memcpy(y + 2 * ldy + 8, &a21, 32);
    memcpy(y + 3 * ldy, &a30, 32), memcpy(y + 3 * ldy + 8, &a31, 32);
}

/* The same for a block at the edges: nr <= MR rows, nt <= NR columns. */
static void edge_kernel(const float *w, size_t ldw, const float *c, size_t ldc, size_t kc, float *y, size_t ldy, int nr,
                        size_t nt) {
    for (int r = 0; r < nr; r++)
        for (size_t j = 0; j < kc; j++) {
            float wr = w[(size_t)r * ldw + j];
            for (size_t t = 0; t < nt; t++) y[(size_t)r * ldy + t] += wr * c[j * ldc + t];
        }
}

/* Floats of the packed panel matmul_bias needs for tout columns. */
static size_t pack_floats(size_t tout) { return (size_t)KC * ((tout + NR - 1) / NR * NR); }

/* y (cout, tout) = W (cout, k_in) x cols (k_in, tout) + b (none when b is NULL). The
 * columns are cut into panels of NR, one panel per iteration of the threads' loop (no other
 * barrier: the machine is often shared); a panel goes through the inner dimension in passes
 * of KC, each pass's rows packed together (pack: pack_floats(tout)) so that the kernel reads
 * them in order from L1 for every block of MR output rows. */
static void matmul_bias(const float *w, const float *b, const float *cols, size_t k_in, int cout, size_t tout, float *y,
                        float *pack) {
    size_t panels = (tout + NR - 1) / NR;
#pragma omp parallel for schedule(static)
    for (size_t p = 0; p < panels; p++) {
        size_t t0 = p * NR, nt = tout - t0 < NR ? tout - t0 : NR;
        float *pk = pack + p * KC * NR;
        for (int o = 0; o < cout; o++)
            for (size_t t = 0; t < nt; t++) y[(size_t)o * tout + t0 + t] = b ? b[o] : 0.0f;
        for (size_t k0 = 0; k0 < k_in; k0 += KC) {
            size_t kc = k_in - k0 < KC ? k_in - k0 : KC;
            for (size_t j = 0; j < kc; j++) {
                memcpy(pk + j * NR, cols + (k0 + j) * tout + t0, nt * sizeof(float));
                for (size_t t = nt; t < NR; t++) pk[j * NR + t] = 0.0f;
            }
            for (int o0 = 0; o0 < cout; o0 += MR) {
                int nr = cout - o0 < MR ? cout - o0 : MR;
                const float *wb = w + (size_t)o0 * k_in + k0;
                float *yb = y + (size_t)o0 * tout + t0;
                if (nr == MR && nt == NR) micro_kernel(wb, k_in, pk, NR, kc, yb, tout);
                else edge_kernel(wb, k_in, pk, NR, kc, yb, tout, nr, nt);
            }
        }
    }
}

/* Conv1d, zero padding: x is (cin, tin), w (cout, cin, k), y (cout, tout). cols is scratch
 * of cin*k*tout floats (unused for a kernel-1, stride-1 conv), pack of pack_floats(tout). */
static void conv1d(const float *x, int cin, size_t tin, const float *w, const float *b, int cout, int k, int stride,
                   size_t tout, float *cols, float *pack, float *y) {
    if (k == 1 && stride == 1) {
        matmul_bias(w, b, x, (size_t)cin, cout, tout, y, pack);
        return;
    }
    int pad = (k - 1) / 2;
#pragma omp parallel for schedule(static)
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

xtts_status xtts_dvae_encode(xtts_dvae *d, const float *mel, size_t frames, uint16_t *codes, float *latent,
                             xtts_error *err) {
    if (frames == 0) return xtts_error_set(err, XTTS_EUSAGE, "dvae: a clip of 0 frames has no codes");
    if (frames > XTTS_DVAE_MAX_FRAMES)
        return xtts_error_set(err, XTTS_EUSAGE, "dvae: a clip of %zu frames (at most %d)", frames, XTTS_DVAE_MAX_FRAMES);
    const xtts_dvae_weights *w = &d->w;
    size_t ch = (size_t)w->cfg.channels, hid = (size_t)w->cfg.hidden, inner = 2 * hid, dim = (size_t)w->cfg.codebook_dim;
    size_t t1 = (frames + 1) / 2, t2 = xtts_dvae_codes_len(frames);
    /* h1 (hid, t1) | x (inner, t2) | a, b (inner, t2) | z (dim, t2) | cols | pack */
    size_t cols = ch * 3 * t1;
    if (hid * 3 * t2 > cols) cols = hid * 3 * t2;
    if (inner * 3 * t2 > cols) cols = inner * 3 * t2;
    size_t n = (size_t)w->cfg.num_tokens;
    if ((n + 1) * t2 > cols) cols = (n + 1) * t2; /* reused for the codebook products */
    size_t need = hid * t1 + 3 * inner * t2 + dim * t2 + cols + pack_floats(t1);
    if (need > d->buf_floats) {
        float *buf = realloc(d->buf, need * sizeof(float));
        if (!buf) return xtts_error_set(err, XTTS_ENOMEM, "dvae: out of memory for a clip of %zu frames", frames);
        d->buf = buf;
        d->buf_floats = need;
    }
    float *h1 = d->buf, *x = h1 + hid * t1, *a = x + inner * t2, *b = a + inner * t2, *z = b + inner * t2, *col = z + dim * t2;
    float *pack = col + cols;
    conv1d(mel, (int)ch, frames, w->conv0_w, w->conv0_b, (int)hid, 3, 2, t1, col, pack, h1);
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
    if (latent) memcpy(latent, z, dim * t2 * sizeof(float));
    nearest_codes(d, z, t2, col, pack, col + n * t2, codes);
    return XTTS_OK;
}

void xtts_dvae_delete(xtts_dvae *d) {
    if (!d) return;
    free(d->codebook_t);
    free(d->code_norm);
    free(d->buf);
    free(d);
}
