/* dvae.c — the DiscreteVAE encoder of XTTS and its codebook search (dvae.h).
 *
 * Every convolution is one matrix product: the input is unfolded (im2col) into
 * (in*kernel, T_out) columns, and out = W (out, in*kernel) x columns + bias, computed in
 * blocks of 4 output rows by 256 columns so that a column row is reused from cache four
 * times. The codebook search is a product of the latent (T2, D) with the transposed codebook
 * (N, D), with the entries' squared norms precomputed. float32 throughout, as Coqui runs it;
 * OpenMP over output rows and over codes. Reference: tests/golden/make_dvae_golden.py runs
 * Coqui's own DiscreteVAE on the same weights and mel. */
#include "kernels/dvae.h"

#include <stdlib.h>
#include <string.h>

#define ROWS 4   /* output rows per block of the product */
#define COLS 256 /* output columns per block */

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

/* y (cout, tout) = W (cout, k_in) x cols (k_in, tout) + b: blocks of ROWS x COLS outputs. */
static void matmul_bias(const float *w, const float *b, const float *cols, size_t k_in, int cout, size_t tout, float *y) {
    int row_blocks = (cout + ROWS - 1) / ROWS;
#pragma omp parallel for schedule(static)
    for (int rb = 0; rb < row_blocks; rb++) {
        int o0 = rb * ROWS, nr = cout - o0 < ROWS ? cout - o0 : ROWS;
        for (size_t t0 = 0; t0 < tout; t0 += COLS) {
            size_t nt = tout - t0 < COLS ? tout - t0 : COLS;
            float acc[ROWS][COLS];
            for (int r = 0; r < nr; r++)
                for (size_t t = 0; t < nt; t++) acc[r][t] = b[o0 + r];
            for (size_t j = 0; j < k_in; j++) {
                const float *c = cols + j * tout + t0;
                for (int r = 0; r < nr; r++) {
                    float wr = w[(size_t)(o0 + r) * k_in + j];
                    for (size_t t = 0; t < nt; t++) acc[r][t] += wr * c[t];
                }
            }
            for (int r = 0; r < nr; r++) memcpy(y + (size_t)(o0 + r) * tout + t0, acc[r], nt * sizeof(float));
        }
    }
}

/* Conv1d, zero padding: x is (cin, tin), w (cout, cin, k), y (cout, tout). cols is scratch
 * of cin*k*tout floats (unused for a kernel-1, stride-1 conv). */
static void conv1d(const float *x, int cin, size_t tin, const float *w, const float *b, int cout, int k, int stride,
                   size_t tout, float *cols, float *y) {
    if (k == 1 && stride == 1) {
        matmul_bias(w, b, x, (size_t)cin, cout, tout, y);
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
    matmul_bias(w, b, cols, (size_t)cin * (size_t)k, cout, tout, y);
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

/* The nearest entry for each of the t2 columns of latent (D, t2); lt is (t2, D) scratch. */
static void nearest_codes(const xtts_dvae *d, const float *latent, size_t t2, float *lt, uint16_t *codes) {
    size_t dim = (size_t)d->w.cfg.codebook_dim, n = (size_t)d->w.cfg.num_tokens;
    for (size_t i = 0; i < dim; i++)
        for (size_t t = 0; t < t2; t++) lt[t * dim + i] = latent[i * t2 + t];
#pragma omp parallel for schedule(static)
    for (size_t t = 0; t < t2; t++) {
        const float *z = lt + t * dim;
        size_t best = 0;
        float best_dist = 0.0f;
        for (size_t j = 0; j < n; j++) {
            const float *e = d->codebook_t + j * dim;
            float dot = 0.0f;
            for (size_t i = 0; i < dim; i++) dot += z[i] * e[i];
            float dist = d->code_norm[j] - 2.0f * dot; /* |z|^2 is the same for every j */
            if (j == 0 || dist < best_dist) best = j, best_dist = dist;
        }
        codes[t] = (uint16_t)best;
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
    /* h1 (hid, t1) | x (inner, t2) | a, b (inner, t2) | z (dim, t2) | cols */
    size_t cols = ch * 3 * t1;
    if (hid * 3 * t2 > cols) cols = hid * 3 * t2;
    if (inner * 3 * t2 > cols) cols = inner * 3 * t2;
    if (dim * t2 > cols) cols = dim * t2; /* reused for the transposed latent */
    size_t need = hid * t1 + 3 * inner * t2 + dim * t2 + cols;
    if (need > d->buf_floats) {
        float *buf = realloc(d->buf, need * sizeof(float));
        if (!buf) return xtts_error_set(err, XTTS_ENOMEM, "dvae: out of memory for a clip of %zu frames", frames);
        d->buf = buf;
        d->buf_floats = need;
    }
    float *h1 = d->buf, *x = h1 + hid * t1, *a = x + inner * t2, *b = a + inner * t2, *z = b + inner * t2, *col = z + dim * t2;
    conv1d(mel, (int)ch, frames, w->conv0_w, w->conv0_b, (int)hid, 3, 2, t1, col, h1);
    relu(h1, hid * t1);
    conv1d(h1, (int)hid, t1, w->conv1_w, w->conv1_b, (int)inner, 3, 2, t2, col, x);
    relu(x, inner * t2);
    for (int r = 0; r < XTTS_DVAE_RES_BLOCKS; r++) {
        conv1d(x, (int)inner, t2, w->res_w[r][0], w->res_b[r][0], (int)inner, 3, 1, t2, col, a);
        relu(a, inner * t2);
        conv1d(a, (int)inner, t2, w->res_w[r][1], w->res_b[r][1], (int)inner, 3, 1, t2, col, b);
        relu(b, inner * t2);
        conv1d(b, (int)inner, t2, w->res_w[r][2], w->res_b[r][2], (int)inner, 1, 1, t2, col, a);
        for (size_t i = 0; i < inner * t2; i++) x[i] += a[i];
    }
    conv1d(x, (int)inner, t2, w->proj_w, w->proj_b, (int)dim, 1, 1, t2, col, z);
    if (latent) memcpy(latent, z, dim * t2 * sizeof(float));
    nearest_codes(d, z, t2, col, codes);
    return XTTS_OK;
}

void xtts_dvae_delete(xtts_dvae *d) {
    if (!d) return;
    free(d->codebook_t);
    free(d->code_norm);
    free(d->buf);
    free(d);
}
