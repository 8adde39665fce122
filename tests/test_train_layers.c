/* test_train_layers.c — every layer's backward against central finite differences.
 *
 * Each layer's output is reduced to a scalar L = sum(out * r) with a fixed random r, so
 * the analytic gradient is the layer's backward with dout = r, and the numeric one is
 * (L(x + h) - L(x - h)) / 2h for every element of every input and parameter. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/model_internal.h"

static uint64_t rng_state = 12345;
static float frand(void) { /* uniform in [-1, 1) */
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (float)((rng_state >> 40) / (double)(1 << 24)) * 2.0f - 1.0f;
}
static float *rand_buf(size_t n, float scale) {
    float *p = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++) p[i] = frand() * scale;
    return p;
}

/* The layer under test: writes its scalar loss for the current buffers. */
typedef double (*loss_fn)(void *ctx);

/* Compare analytic grad[0..n) of buf with central differences of f. Returns the worst
 * error relative to the largest analytic gradient. */
static double check_grad(const char *name, loss_fn f, void *ctx, float *buf, const float *grad, size_t n) {
    const float h = 1e-2f;
    double maxerr = 0.0, maxg = 0.0;
    for (size_t i = 0; i < n; i++) {
        float keep = buf[i];
        buf[i] = keep + h;
        double lp = f(ctx);
        buf[i] = keep - h;
        double lm = f(ctx);
        buf[i] = keep;
        double num = (lp - lm) / (2.0 * h);
        maxerr = fmax(maxerr, fabs(num - grad[i]));
        maxg = fmax(maxg, fabs(grad[i]));
    }
    double rel = maxerr / fmax(maxg, 1e-12);
    printf("  %-10s n=%-5zu max|g| %.3e  rel err %.2e\n", name, n, maxg, rel);
    assert_true(maxg > 0.0);
    return rel;
}

static double dot(const float *a, const float *b, size_t n) {
    double s = 0.0;
    for (size_t i = 0; i < n; i++) s += (double)a[i] * b[i];
    return s;
}

/* float32 forward passes, h = 1e-2 central differences: errors are ~1e-5 of max gradient */
#define TOL 1e-3

/* ---- matmul ----------------------------------------------------------------------------- */
typedef struct { int B, T, C, OC; float *inp, *w, *b, *out, *r; } mm_ctx;
static double mm_loss(void *p) {
    mm_ctx *c = p;
    xtts_matmul_forward(c->out, c->inp, c->w, c->b, c->B, c->T, c->C, c->OC);
    return dot(c->out, c->r, (size_t)c->B * c->T * c->OC);
}
static void matmul_backward_matches_finite_differences(void **state) {
    (void)state;
    mm_ctx c = {2, 5, 40, 70, 0, 0, 0, 0, 0}; /* full 4x32 tiles and edges */
    size_t ni = c.B * c.T * c.C, no = c.B * c.T * c.OC;
    c.inp = rand_buf(ni, 1), c.w = rand_buf(c.OC * c.C, 1), c.b = rand_buf(c.OC, 1);
    c.out = malloc(no * 4), c.r = rand_buf(no, 1);
    float *di = calloc(ni, 4), *dw = calloc(c.OC * c.C, 4), *db = calloc(c.OC, 4);
    xtts_matmul_backward(di, dw, db, c.r, c.inp, c.w, c.B, c.T, c.C, c.OC);
    assert_true(check_grad("inp", mm_loss, &c, c.inp, di, ni) < TOL);
    assert_true(check_grad("weight", mm_loss, &c, c.w, dw, c.OC * c.C) < TOL);
    assert_true(check_grad("bias", mm_loss, &c, c.b, db, c.OC) < TOL);
    free(c.inp), free(c.w), free(c.b), free(c.out), free(c.r), free(di), free(dw), free(db);
}

/* ---- layernorm ---------------------------------------------------------------------------- */
typedef struct { int B, T, C; float *inp, *w, *b, *out, *mean, *rstd, *r; } ln_ctx;
static double ln_loss(void *p) {
    ln_ctx *c = p;
    xtts_layernorm_forward(c->out, c->mean, c->rstd, c->inp, c->w, c->b, c->B, c->T, c->C);
    return dot(c->out, c->r, (size_t)c->B * c->T * c->C);
}
static void layernorm_backward_matches_finite_differences(void **state) {
    (void)state;
    ln_ctx c = {2, 3, 8, 0, 0, 0, 0, 0, 0, 0};
    size_t n = c.B * c.T * c.C;
    c.inp = rand_buf(n, 2), c.w = rand_buf(c.C, 1), c.b = rand_buf(c.C, 1), c.out = malloc(n * 4);
    c.mean = malloc(c.B * c.T * 4), c.rstd = malloc(c.B * c.T * 4), c.r = rand_buf(n, 1);
    float *di = calloc(n, 4), *dw = calloc(c.C, 4), *db = calloc(c.C, 4);
    ln_loss(&c);
    xtts_layernorm_backward(di, dw, db, c.r, c.inp, c.w, c.mean, c.rstd, c.B, c.T, c.C);
    assert_true(check_grad("inp", ln_loss, &c, c.inp, di, n) < TOL);
    assert_true(check_grad("weight", ln_loss, &c, c.w, dw, c.C) < TOL);
    assert_true(check_grad("bias", ln_loss, &c, c.b, db, c.C) < TOL);
    free(c.inp), free(c.w), free(c.b), free(c.out), free(c.mean), free(c.rstd), free(c.r);
    free(di), free(dw), free(db);
}

/* ---- attention ---------------------------------------------------------------------------- */
typedef struct { int B, T, C, NH; float *inp, *att, *out, *r; } att_ctx;
static double att_loss(void *p) {
    att_ctx *c = p;
    xtts_attention_forward(c->out, c->att, c->inp, c->B, c->T, c->C, c->NH);
    return dot(c->out, c->r, (size_t)c->B * c->T * c->C);
}
static void attention_backward_matches_finite_differences(void **state) {
    (void)state;
    att_ctx c = {2, 9, 64, 2, 0, 0, 0, 0}; /* head size 32: full tiles */
    size_t ni = c.B * c.T * 3 * c.C, no = c.B * c.T * c.C;
    c.inp = rand_buf(ni, 1), c.att = malloc((size_t)c.B * c.NH * c.T * c.T * 4), c.out = malloc(no * 4);
    c.r = rand_buf(no, 1);
    float *di = calloc(ni, 4);
    att_loss(&c);
    xtts_attention_backward(di, c.r, c.inp, c.att, c.B, c.T, c.C, c.NH);
    assert_true(check_grad("qkv", att_loss, &c, c.inp, di, ni) < TOL);
    /* causality: the output at t = 0 does not depend on later positions */
    float before = c.out[0];
    c.inp[(size_t)(c.T - 1) * 3 * c.C] += 1.0f;
    att_loss(&c);
    assert_memory_equal(&before, &c.out[0], sizeof(float));
    free(c.inp), free(c.att), free(c.out), free(c.r), free(di);
}

/* ---- gelu ---------------------------------------------------------------------------- */
typedef struct { size_t n; float *inp, *out, *r; } gelu_ctx;
static double gelu_loss(void *p) {
    gelu_ctx *c = p;
    xtts_gelu_forward(c->out, c->inp, c->n);
    return dot(c->out, c->r, c->n);
}
static void gelu_backward_matches_finite_differences(void **state) {
    (void)state;
    gelu_ctx c = {40, rand_buf(40, 3), malloc(40 * 4), rand_buf(40, 1)};
    float *di = calloc(c.n, 4);
    xtts_gelu_backward(di, c.inp, c.r, c.n);
    assert_true(check_grad("inp", gelu_loss, &c, c.inp, di, c.n) < TOL);
    free(c.inp), free(c.out), free(c.r), free(di);
}

/* ---- encoder ---------------------------------------------------------------------------- */
enum { ENC_V = 6, ENC_C = 8, ENC_M = 4, ENC_PT = 5, ENC_PM = 6, ENC_B = 3 };
typedef struct {
    xtts_model_batch bt;
    float *wte, *wpe_text, *wpe_mel, *melin_w, *melin_b, *mel_start, *out, *r;
} enc_ctx;
static double enc_loss(void *p) {
    enc_ctx *c = p;
    xtts_encoder_forward(c->out, &c->bt, c->wte, c->wpe_text, c->wpe_mel, c->melin_w, c->melin_b, c->mel_start, ENC_C,
                         ENC_M);
    return dot(c->out, c->r, (size_t)c->bt.B * c->bt.T * ENC_C);
}
static void encoder_backward_matches_finite_differences(void **state) {
    (void)state;
    static int n_text[ENC_B] = {3, 5, 2}, n_frames[ENC_B] = {6, 2, 0};
    static int32_t text[ENC_B * ENC_PT] = {6, 1, 2, 0, 0, 7, 3, 3, 5, 0, 8, 4, 0, 0, 0};
    enc_ctx c;
    int T = 9;
    float *mel = rand_buf(ENC_B * ENC_PM * ENC_M, 1);
    c.bt = (xtts_model_batch){ENC_B, T, ENC_PT, ENC_PM, text, n_text, n_frames, mel};
    size_t nwte = (ENC_V + XTTS_N_LANGS) * ENC_C, no = (size_t)ENC_B * T * ENC_C;
    c.wte = rand_buf(nwte, 1), c.wpe_text = rand_buf(ENC_PT * ENC_C, 1), c.wpe_mel = rand_buf(ENC_PM * ENC_C, 1);
    c.melin_w = rand_buf(ENC_C * ENC_M, 1), c.melin_b = rand_buf(ENC_C, 1), c.mel_start = rand_buf(ENC_M, 1);
    c.out = malloc(no * 4), c.r = rand_buf(no, 1);
    float *dwte = calloc(nwte, 4), *dwt = calloc(ENC_PT * ENC_C, 4), *dwm = calloc(ENC_PM * ENC_C, 4);
    float *dmw = calloc(ENC_C * ENC_M, 4), *dmb = calloc(ENC_C, 4), *dms = calloc(ENC_M, 4);
    xtts_encoder_backward(dwte, dwt, dwm, dmw, dmb, dms, c.r, &c.bt, c.mel_start, c.melin_w, ENC_C, ENC_M);
    /* only the rows the batch uses have gradients; check the tables whole anyway */
    double worst = 0.0;
    float *bufs[] = {c.wpe_text, c.melin_w, c.melin_b, c.mel_start};
    float *grads[] = {dwt, dmw, dmb, dms};
    size_t ns[] = {ENC_PT * ENC_C, ENC_C * ENC_M, ENC_C, ENC_M};
    const char *names[] = {"wpe_text", "melin_w", "melin_b", "mel_start"};
    for (int i = 0; i < 4; i++) worst = fmax(worst, check_grad(names[i], enc_loss, &c, bufs[i], grads[i], ns[i]));
    worst = fmax(worst, check_grad("wte", enc_loss, &c, c.wte, dwte, nwte));
    worst = fmax(worst, check_grad("wpe_mel", enc_loss, &c, c.wpe_mel, dwm, ENC_PM * ENC_C));
    assert_true(worst < TOL);
    /* the empty row (n_frames 0) is all zeros */
    enc_loss(&c);
    for (int i = 0; i < T * ENC_C; i++) assert_true(c.out[(size_t)2 * T * ENC_C + i] == 0.0f);
    free(mel), free(c.wte), free(c.wpe_text), free(c.wpe_mel), free(c.melin_w), free(c.melin_b);
    free(c.mel_start), free(c.out), free(c.r), free(dwte), free(dwt), free(dwm), free(dmw), free(dmb), free(dms);
}

/* ---- loss ---------------------------------------------------------------------------- */
typedef struct { xtts_model_batch bt; float *head; } loss_ctx;
static double loss_loss(void *p) {
    loss_ctx *c = p;
    float ml, sl;
    xtts_mel_stop_loss_forward_backward(&ml, &sl, NULL, c->head, &c->bt, ENC_M, 2.5f);
    return (double)ml + sl;
}
static void mel_and_stop_loss_backward_matches_finite_differences(void **state) {
    (void)state;
    static int n_text[2] = {2, 1}, n_frames[2] = {3, 4};
    static int32_t text[2 * 3] = {6, 1, 0, 7, 0, 0};
    int T = 5, M1 = ENC_M + 1;
    float *mel = rand_buf(2 * 4 * ENC_M, 1);
    loss_ctx c = {{2, T, 3, 4, text, n_text, n_frames, mel}, rand_buf((size_t)2 * T * M1, 2)};
    /* keep predictions away from the L1 kink so that h-sized steps stay on one side */
    for (int b = 0; b < 2; b++)
        for (int j = 0; j < n_frames[b]; j++)
            for (int k = 0; k < ENC_M; k++) {
                float *h = &c.head[((size_t)b * T + n_text[b] + j) * M1 + k];
                float y = mel[((size_t)b * 4 + j) * ENC_M + k];
                if (fabsf(*h - y) < 0.1f) *h = y + 0.5f;
            }
    float *dh = malloc((size_t)2 * T * M1 * 4), ml, sl;
    int frames = xtts_mel_stop_loss_forward_backward(&ml, &sl, dh, c.head, &c.bt, ENC_M, 2.5f);
    assert_int_equal(frames, 7);
    assert_true(check_grad("head", loss_loss, &c, c.head, dh, (size_t)2 * T * M1) < TOL);
    /* padding and text positions get no gradient */
    for (int k = 0; k < M1; k++) assert_true(dh[0 * M1 + k] == 0.0f && dh[((size_t)T + 0) * M1 + k] == 0.0f);
    free(mel), free(c.head), free(dh);
}

/* ---- the XTTS GPT's kinds ------------------------------------------------------------------- */
typedef struct { int B, T, C, G; float *inp, *w, *b, *out, *mean, *rstd, *r; } gn_ctx;
static double gn_loss(void *p) {
    gn_ctx *c = p;
    xtts_groupnorm_forward(c->out, c->mean, c->rstd, c->inp, c->w, c->b, c->B, c->T, c->C, c->G);
    return dot(c->out, c->r, (size_t)c->B * c->T * c->C);
}
static void groupnorm_backward_matches_finite_differences(void **state) {
    (void)state;
    gn_ctx c = {2, 5, 8, 4, 0, 0, 0, 0, 0, 0, 0};
    size_t n = (size_t)c.B * c.T * c.C;
    c.inp = rand_buf(n, 2), c.w = rand_buf(c.C, 1), c.b = rand_buf(c.C, 1), c.out = malloc(n * 4);
    c.mean = malloc(c.B * c.G * 4), c.rstd = malloc(c.B * c.G * 4), c.r = rand_buf(n, 1);
    float *di = calloc(n, 4), *dw = calloc(c.C, 4), *db = calloc(c.C, 4);
    gn_loss(&c);
    xtts_groupnorm_backward(di, dw, db, c.r, c.inp, c.w, c.mean, c.rstd, c.B, c.T, c.C, c.G);
    assert_true(check_grad("inp", gn_loss, &c, c.inp, di, n) < TOL);
    assert_true(check_grad("weight", gn_loss, &c, c.w, dw, c.C) < TOL);
    assert_true(check_grad("bias", gn_loss, &c, c.b, db, c.C) < TOL);
    free(c.inp), free(c.w), free(c.b), free(c.out), free(c.mean), free(c.rstd), free(c.r);
    free(di), free(dw), free(db);
}

/* a cross attention (q of 4 rows; k and v of 7 in one buffer, [k | v]) and a causal self
 * attention ([q | k | v]) with a key mask */
typedef struct { xtts_mha_shape s; const float *q, *k, *v; float *att, *out, *r; } mha_ctx;
static double mha_loss(void *p) {
    mha_ctx *c = p;
    xtts_mha_forward(&c->s, c->out, c->att, c->q, c->k, c->v);
    return dot(c->out, c->r, (size_t)c->s.B * c->s.Tq * c->s.NH * c->s.hs);
}
static void mha_case(int causal) {
    int B = 2, NH = 2, hs = 6, Tq = causal ? 7 : 4, Tk = 7, D = NH * hs, W = causal ? 3 * D : 2 * D;
    static const uint8_t mask[2 * 7] = {1, 1, 0, 1, 1, 0, 1, 1, 1, 1, 0, 0, 1, 1};
    mha_ctx c = {{.B = B, .NH = NH, .Tq = Tq, .Tk = Tk, .hs = hs, .q_b = (size_t)Tq * (causal ? W : D),
                  .q_t = (size_t)(causal ? W : D), .q_h = (size_t)hs, .k_b = (size_t)Tk * W, .k_t = (size_t)W,
                  .k_h = (size_t)hs, .o_b = (size_t)Tq * D, .o_t = (size_t)D, .o_h = (size_t)hs, .scale = 0.4f,
                  .causal = causal, .key_mask = causal ? mask : NULL, .threads = 1}, 0, 0, 0, 0, 0, 0};
    c.s.v_b = c.s.k_b, c.s.v_t = c.s.k_t, c.s.v_h = c.s.k_h;
    c.s.scratch = malloc(xtts_mha_scratch_per_thread(&c.s) * 4);
    size_t nq = (size_t)B * Tq * D, nkv = (size_t)B * Tk * W;
    float *q = causal ? NULL : rand_buf(nq, 1), *kv = rand_buf(nkv, 1);
    float *dq = calloc(causal ? 1 : nq, 4), *dkv = calloc(nkv, 4);
    size_t ko = causal ? (size_t)D : 0, vo = ko + (size_t)D;
    c.q = causal ? kv : q, c.k = kv + ko, c.v = kv + vo;
    c.att = malloc((size_t)B * NH * Tq * Tk * 4), c.out = malloc(nq * 4), c.r = rand_buf(nq, 1);
    mha_loss(&c);
    xtts_mha_backward(&c.s, causal ? dkv : dq, dkv + ko, dkv + vo, c.r, c.q, c.k, c.v, c.att);
    if (!causal) assert_true(check_grad("q", mha_loss, &c, q, dq, nq) < TOL);
    assert_true(check_grad(causal ? "qkv masked" : "kv", mha_loss, &c, kv, dkv, nkv) < TOL);
    free(q), free(kv), free(dq), free(dkv), free(c.att), free(c.out), free(c.r), free(c.s.scratch);
}
static void mha_backward_matches_finite_differences(void **state) {
    (void)state;
    mha_case(0);
    mha_case(1);
}

typedef struct { size_t N; int I; float *inp, *out, *r; } geglu_ctx;
static double geglu_loss(void *p) {
    geglu_ctx *c = p;
    xtts_geglu_forward(c->out, c->inp, c->N, c->I);
    return dot(c->out, c->r, c->N * c->I);
}
typedef struct { size_t N; int C; float *inp, *g, *out, *inv, *r; } rms_ctx;
static double rms_loss(void *p) {
    rms_ctx *c = p;
    xtts_rmsnorm_forward(c->out, c->inv, c->inp, c->g, c->N, c->C);
    return dot(c->out, c->r, c->N * c->C);
}
static void geglu_and_rmsnorm_backward_match_finite_differences(void **state) {
    (void)state;
    geglu_ctx a = {6, 5, rand_buf(60, 2), malloc(30 * 4), rand_buf(30, 1)};
    float *da = calloc(60, 4);
    xtts_geglu_backward(da, a.r, a.inp, a.N, a.I);
    assert_true(check_grad("geglu", geglu_loss, &a, a.inp, da, 60) < TOL);
    rms_ctx b = {4, 9, rand_buf(36, 2), rand_buf(9, 1), malloc(36 * 4), malloc(4 * 4), rand_buf(36, 1)};
    float *db = calloc(36, 4), *dg = calloc(9, 4);
    rms_loss(&b);
    xtts_rmsnorm_backward(db, dg, b.r, b.inp, b.g, b.inv, b.N, b.C);
    assert_true(check_grad("rms inp", rms_loss, &b, b.inp, db, 36) < TOL);
    assert_true(check_grad("rms gamma", rms_loss, &b, b.g, dg, 9) < TOL);
    free(a.inp), free(a.out), free(a.r), free(da), free(b.inp), free(b.g), free(b.out), free(b.inv), free(b.r);
    free(db), free(dg);
}

typedef struct { int N, V; float *lg; int32_t *tg; } ce_ctx;
static double ce_loss(void *p) {
    ce_ctx *c = p;
    float l;
    xtts_crossentropy_forward_backward(&l, NULL, c->lg, c->tg, c->N, c->V, 1.0f, NULL);
    return 0.7 * l;
}
static void crossentropy_backward_matches_finite_differences(void **state) {
    (void)state;
    int32_t tg[6] = {3, -1, 0, 6, -1, 2};
    ce_ctx c = {6, 7, rand_buf(42, 3), tg};
    float *d = malloc(42 * 4), l;
    int bad = 9;
    assert_int_equal(xtts_crossentropy_forward_backward(&l, d, c.lg, tg, 6, 7, 0.7f, &bad), 4);
    assert_int_equal(bad, 0);
    for (int j = 0; j < 7; j++) assert_true(d[7 + j] == 0.0f && d[28 + j] == 0.0f); /* ignored rows */
    assert_true(check_grad("logits", ce_loss, &c, c.lg, d, 42) < TOL);
    free(c.lg), free(d);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(matmul_backward_matches_finite_differences),
        cmocka_unit_test(layernorm_backward_matches_finite_differences),
        cmocka_unit_test(attention_backward_matches_finite_differences),
        cmocka_unit_test(gelu_backward_matches_finite_differences),
        cmocka_unit_test(encoder_backward_matches_finite_differences),
        cmocka_unit_test(mel_and_stop_loss_backward_matches_finite_differences),
        cmocka_unit_test(groupnorm_backward_matches_finite_differences),
        cmocka_unit_test(mha_backward_matches_finite_differences),
        cmocka_unit_test(geglu_and_rmsnorm_backward_match_finite_differences),
        cmocka_unit_test(crossentropy_backward_matches_finite_differences),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
