/* test_train_cpu.c — the copies of the trainer's CPU loops (train/cpu_loops.c) give the same
 * bits: the baseline copy's emulated fused multiply-add against the C library's fmaf (the FMA
 * instruction where the CPU has one, correctly rounded software where it has not) on sums
 * built to sit near the midpoints between floats, and every layer, the loss and the optimizer
 * of each copy this CPU runs against the baseline copy, bit for bit, on shapes with edge tiles
 * and triangular products. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/cpu_loops_internal.h"

static uint64_t rng_state = 2024;
static uint64_t next_u64(void) {
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return rng_state;
}
static float frand(void) { /* uniform in [-1, 1) */
    return (float)((next_u64() >> 40) / (double)(1 << 24)) * 2.0f - 1.0f;
}
static float *rand_buf(size_t n, float scale) {
    float *p = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++) p[i] = frand() * scale;
    return p;
}
static float *copy_buf(const float *p, size_t n) {
    float *q = malloc(n * sizeof(float));
    memcpy(q, p, n * sizeof(float));
    return q;
}

/* ---- the emulated FMA ----------------------------------------------------------------- */

enum { ROWS = 512 };

/* One column: out[n] = c + x[n] * b through the baseline copy's matrix product (a bias c, a
 * 1 x 1 weight b: one multiply-add per element), against fmaf. Returns the elements where
 * rounding the double sum to float would have been wrong, the cases the emulation exists for. */
static int check_column(const xtts_cpu_loops *base, const float *x, float b, float c) {
    float out[ROWS];
    base->matmul_forward(out, x, &b, &c, 1, ROWS, 1, 1);
    int hard = 0;
    for (int n = 0; n < ROWS; n++) {
        float want = fmaf(x[n], b, c);
        if (memcmp(&out[n], &want, sizeof want) != 0) {
            printf("  fma(%a, %a, %a): %a, want %a\n", x[n], b, c, out[n], want);
            fail();
        }
        hard += (float)((double)x[n] * b + c) != want;
    }
    return hard;
}

static float with_exponent(float m, int e) { return ldexpf(1.0f + fabsf(m), e) * (m < 0 ? -1.0f : 1.0f); }

static void emulated_fma_rounds_as_the_fma_instruction(void **state) {
    (void)state;
    const xtts_cpu_loops *base = xtts_cpu_loops_at(XTTS_CPU_BASELINE);
    float x[ROWS];
    int hard = 0, columns = 0;
    for (int round = 0; round < 3000; round++, columns++) {
        /* c of any sign and scale (subnormal results included), b random; x b is put near an
         * odd multiple of half of c's spacing (the midpoints) and moved by a few units of x */
        int e = round % 3 == 2 ? -140 + (int)(next_u64() % 20) : (int)(next_u64() % 60) - 30;
        float c = round % 7 == 0 ? 0.0f : with_exponent(frand(), e), b = with_exponent(frand(), (int)(next_u64() % 20) - 10);
        double half_spacing = ldexp(1.0, (c == 0.0f ? -149 : ilogbf(c) < -126 ? -126 : ilogbf(c)) - 24);
        for (int n = 0; n < ROWS; n++) {
            if (n % 4 == 3) { /* and plain random terms */
                x[n] = with_exponent(frand(), e - (int)(next_u64() % 30));
                continue;
            }
            double target = half_spacing * (double)(2 * (int)(next_u64() % 8) + 1) * (n % 2 ? 1 : -1);
            float x0 = (float)(target / b);
            x[n] = nextafterf(x0, (n / 2) % 2 ? INFINITY : -INFINITY);
            for (int k = (int)(next_u64() % 4); k > 0; k--) x[n] = nextafterf(x[n], x0);
        }
        hard += check_column(base, x, b, c);
    }
    printf("  %d columns of %d, %d sums that a plain double sum would round wrong\n", columns, ROWS, hard);
    assert_true(hard > 100);
}

/* ---- every copy against the baseline ---------------------------------------------------- */

/* shapes: B rows of T positions, C channels (no multiple of 16), NH heads, M mel channels */
enum { B = 2, T = 37, C = 40, NH = 2, M = 9, V = 11, PT = 8, PM = 40 };

#define SAME(a, b, n) assert_memory_equal((a), (b), (n) * sizeof(float))

static void check_matmul_and_pointwise(const xtts_cpu_loops *base, const xtts_cpu_loops *k) {
    size_t N = (size_t)B * T;
    int OC = 3 * C + 5;
    float *inp = rand_buf(N * C, 1), *w = rand_buf((size_t)OC * C, 1), *bias = rand_buf(OC, 1);
    float *o1 = malloc(N * OC * 4), *o2 = malloc(N * OC * 4);
    base->matmul_forward(o1, inp, w, bias, B, T, C, OC);
    k->matmul_forward(o2, inp, w, bias, B, T, C, OC);
    SAME(o1, o2, N * OC);
    float *dout = rand_buf(N * OC, 1), *di1 = rand_buf(N * C, 1), *dw1 = rand_buf((size_t)OC * C, 1),
          *db1 = rand_buf(OC, 1);
    float *di2 = copy_buf(di1, N * C), *dw2 = copy_buf(dw1, (size_t)OC * C), *db2 = copy_buf(db1, OC);
    base->matmul_backward(di1, dw1, db1, dout, inp, w, B, T, C, OC);
    k->matmul_backward(di2, dw2, db2, dout, inp, w, B, T, C, OC);
    SAME(di1, di2, N * C);
    SAME(dw1, dw2, (size_t)OC * C);
    SAME(db1, db2, OC);
    base->gelu_forward(o1, dout, N * OC);
    k->gelu_forward(o2, dout, N * OC);
    SAME(o1, o2, N * OC);
    memset(o1, 0, N * OC * 4), memset(o2, 0, N * OC * 4);
    base->gelu_backward(o1, inp, dout, N * C);
    k->gelu_backward(o2, inp, dout, N * C);
    SAME(o1, o2, N * C);
    base->residual_forward(o1, inp, di1, N * C);
    k->residual_forward(o2, inp, di1, N * C);
    SAME(o1, o2, N * C);
    free(inp), free(w), free(bias), free(o1), free(o2), free(dout);
    free(di1), free(dw1), free(db1), free(di2), free(dw2), free(db2);
}

static void check_layernorm_and_attention(const xtts_cpu_loops *base, const xtts_cpu_loops *k) {
    size_t N = (size_t)B * T, natt = (size_t)B * NH * T * T;
    float *inp = rand_buf(N * C, 2), *w = rand_buf(C, 1), *bias = rand_buf(C, 1), *dout = rand_buf(N * C, 1);
    float *o1 = malloc(N * C * 4), *o2 = malloc(N * C * 4), *stat1 = malloc(2 * N * 4), *stat2 = malloc(2 * N * 4);
    base->layernorm_forward(o1, stat1, stat1 + N, inp, w, bias, B, T, C);
    k->layernorm_forward(o2, stat2, stat2 + N, inp, w, bias, B, T, C);
    SAME(o1, o2, N * C);
    SAME(stat1, stat2, 2 * N);
    float *di1 = calloc(N * C, 4), *di2 = calloc(N * C, 4), *dwb1 = calloc(2 * C, 4), *dwb2 = calloc(2 * C, 4);
    base->layernorm_backward(di1, dwb1, dwb1 + C, dout, inp, w, stat1, stat1 + N, B, T, C);
    k->layernorm_backward(di2, dwb2, dwb2 + C, dout, inp, w, stat1, stat1 + N, B, T, C);
    SAME(di1, di2, N * C);
    SAME(dwb1, dwb2, 2 * C);
    float *qkv = rand_buf(N * 3 * C, 1), *att1 = malloc(natt * 4), *att2 = malloc(natt * 4);
    base->attention_forward(o1, att1, qkv, B, T, C, NH);
    k->attention_forward(o2, att2, qkv, B, T, C, NH);
    SAME(o1, o2, N * C);
    SAME(att1, att2, natt);
    float *dq1 = calloc(N * 3 * C, 4), *dq2 = calloc(N * 3 * C, 4);
    base->attention_backward(dq1, dout, qkv, att1, B, T, C, NH);
    k->attention_backward(dq2, dout, qkv, att1, B, T, C, NH);
    SAME(dq1, dq2, N * 3 * C);
    free(inp), free(w), free(bias), free(dout), free(o1), free(o2), free(stat1), free(stat2);
    free(di1), free(di2), free(dwb1), free(dwb2), free(qkv), free(att1), free(att2), free(dq1), free(dq2);
}

static void check_encoder_and_loss(const xtts_cpu_loops *base, const xtts_cpu_loops *k) {
    static const int n_text[B] = {5, 3}, n_frames[B] = {29, 34};
    int32_t text[B * PT];
    for (int i = 0; i < B * PT; i++) text[i] = (int32_t)(next_u64() % (V + XTTS_N_LANGS));
    float *mel = rand_buf((size_t)B * PM * M, 1);
    xtts_model_batch bt = {B, T, PT, PM, text, n_text, n_frames, mel};
    size_t N = (size_t)B * T, nwte = (size_t)(V + XTTS_N_LANGS) * C;
    float *wte = rand_buf(nwte, 1), *wpt = rand_buf((size_t)PT * C, 1), *wpm = rand_buf((size_t)PM * C, 1);
    float *mw = rand_buf((size_t)C * M, 1), *mb = rand_buf(C, 1), *ms = rand_buf(M, 1);
    float *o1 = malloc(N * C * 4), *o2 = malloc(N * C * 4);
    base->encoder_forward(o1, &bt, wte, wpt, wpm, mw, mb, ms, C, M);
    k->encoder_forward(o2, &bt, wte, wpt, wpm, mw, mb, ms, C, M);
    SAME(o1, o2, N * C);
    size_t ng = nwte + (size_t)(PT + PM) * C + (size_t)C * M + C + M;
    float *g1 = calloc(ng, 4), *g2 = calloc(ng, 4), *dout = rand_buf(N * C, 1);
#define GRADS(g) g, g + nwte, g + nwte + PT * C, g + nwte + (PT + PM) * C, g + nwte + (PT + PM + M) * C, \
                 g + nwte + (PT + PM + M + 1) * C
    base->encoder_backward(GRADS(g1), dout, &bt, ms, mw, C, M);
    k->encoder_backward(GRADS(g2), dout, &bt, ms, mw, C, M);
#undef GRADS
    SAME(g1, g2, ng);
    float *head = rand_buf(N * (M + 1), 3), *dh1 = malloc(N * (M + 1) * 4), *dh2 = malloc(N * (M + 1) * 4);
    float l1[2], l2[2];
    assert_int_equal(base->mel_stop_loss_forward_backward(&l1[0], &l1[1], dh1, head, &bt, M, 5.0f), 63);
    assert_int_equal(k->mel_stop_loss_forward_backward(&l2[0], &l2[1], dh2, head, &bt, M, 5.0f), 63);
    SAME(l1, l2, 2);
    SAME(dh1, dh2, N * (M + 1));
    free(mel), free(wte), free(wpt), free(wpm), free(mw), free(mb), free(ms), free(o1), free(o2);
    free(g1), free(g2), free(dout), free(head), free(dh1), free(dh2);
}

static void check_optimizer(const xtts_cpu_loops *base, const xtts_cpu_loops *k) {
    size_t n = 3 * 65536 + 77; /* chunks of the norm and a tail */
    float *g = rand_buf(n, 0.1f), *p1 = rand_buf(n, 1), *m1 = rand_buf(n, 0.01f), *v1 = rand_buf(n, 0.01f);
    for (size_t i = 0; i < n; i++) v1[i] = fabsf(v1[i]);
    float *p2 = copy_buf(p1, n), *m2 = copy_buf(m1, n), *v2 = copy_buf(v1, n), *g2 = copy_buf(g, n);
    float norm1 = base->grad_norm(g, n), norm2 = k->grad_norm(g, n);
    SAME(&norm1, &norm2, 1);
    base->scale(g, n, 0.37f);
    k->scale(g2, n, 0.37f);
    SAME(g, g2, n);
    xtts_optim_config o;
    xtts_optim_config_defaults(&o);
    base->adamw_step(p1, g, m1, v1, n, 3e-4f, &o, 0.271f, 0.1426f);
    k->adamw_step(p2, g, m2, v2, n, 3e-4f, &o, 0.271f, 0.1426f);
    SAME(p1, p2, n);
    SAME(m1, m2, n);
    SAME(v1, v2, n);
    free(g), free(p1), free(m1), free(v1), free(p2), free(m2), free(v2), free(g2);
}

/* the XTTS GPT's kinds: group norm, strided attention with causal and key masks, cross-entropy
 * with ignored rows, GEGLU and RMS norm */
static void check_gpt_kinds(const xtts_cpu_loops *base, const xtts_cpu_loops *k) {
    int G = 4, I = 24, V2 = 37;
    size_t N = (size_t)B * T;
    float *inp = rand_buf(N * C, 2), *w = rand_buf(C, 1), *bias = rand_buf(C, 1), *dout = rand_buf(N * C, 1);
    float *o1 = malloc(N * C * 4), *o2 = malloc(N * C * 4), *st1 = malloc(4 * B * G), *st2 = malloc(4 * B * G);
    float *st1r = malloc(4 * B * G), *st2r = malloc(4 * B * G);
    base->groupnorm_forward(o1, st1, st1r, inp, w, bias, B, T, C, G);
    k->groupnorm_forward(o2, st2, st2r, inp, w, bias, B, T, C, G);
    SAME(o1, o2, N * C);
    float *d1 = calloc(N * C + 2 * C, 4), *d2 = calloc(N * C + 2 * C, 4);
    base->groupnorm_backward(d1, d1 + N * C, d1 + N * C + C, dout, inp, w, st1, st1r, B, T, C, G);
    k->groupnorm_backward(d2, d2 + N * C, d2 + N * C + C, dout, inp, w, st1, st1r, B, T, C, G);
    SAME(d1, d2, N * C + 2 * C);
    uint8_t mask[B * T];
    for (int i = 0; i < B * T; i++) mask[i] = i % T < 3 || next_u64() % 4 != 0;
    xtts_mha_shape s = {.B = B, .NH = NH, .Tq = T, .Tk = T, .hs = C / NH, .q_b = (size_t)T * 3 * C,
                        .q_t = 3 * (size_t)C, .q_h = (size_t)C / NH, .o_b = (size_t)T * C, .o_t = (size_t)C,
                        .o_h = (size_t)C / NH, .scale = 0.3f, .causal = 1, .key_mask = mask, .threads = 2};
    s.k_b = s.v_b = s.q_b, s.k_t = s.v_t = s.q_t, s.k_h = s.v_h = s.q_h;
    float *scratch = malloc(2 * xtts_mha_scratch_per_thread(&s) * 4);
    s.scratch = scratch;
    float *qkv = rand_buf(N * 3 * C, 1), *a1 = malloc((size_t)B * NH * T * T * 4), *a2 = malloc((size_t)B * NH * T * T * 4);
    base->mha_forward(&s, o1, a1, qkv, qkv + C, qkv + 2 * C);
    k->mha_forward(&s, o2, a2, qkv, qkv + C, qkv + 2 * C);
    SAME(o1, o2, N * C);
    float *dq1 = calloc(N * 3 * C, 4), *dq2 = calloc(N * 3 * C, 4);
    base->mha_backward(&s, dq1, dq1 + C, dq1 + 2 * C, dout, qkv, qkv + C, qkv + 2 * C, a1);
    k->mha_backward(&s, dq2, dq2 + C, dq2 + 2 * C, dout, qkv, qkv + C, qkv + 2 * C, a1);
    SAME(dq1, dq2, N * 3 * C);
    int32_t tg[B * T];
    for (int i = 0; i < B * T; i++) tg[i] = i % 5 == 0 ? -1 : (int32_t)(next_u64() % (uint64_t)V2);
    float *lg = rand_buf(N * V2, 3), *dl1 = malloc(N * V2 * 4), *dl2 = malloc(N * V2 * 4), l1, l2;
    assert_int_equal(base->crossentropy_forward_backward(&l1, dl1, lg, tg, B * T, V2, 0.7f, NULL),
                     k->crossentropy_forward_backward(&l2, dl2, lg, tg, B * T, V2, 0.7f, NULL));
    SAME(&l1, &l2, 1);
    SAME(dl1, dl2, N * V2);
    float *h = rand_buf(N * 2 * I, 2), *g1 = malloc(N * I * 4), *g2 = malloc(N * I * 4);
    base->geglu_forward(g1, h, N, I);
    k->geglu_forward(g2, h, N, I);
    SAME(g1, g2, N * I);
    float *dh1 = calloc(N * 2 * I, 4), *dh2 = calloc(N * 2 * I, 4);
    base->geglu_backward(dh1, g1, h, N, I);
    k->geglu_backward(dh2, g1, h, N, I);
    SAME(dh1, dh2, N * 2 * I);
    base->rmsnorm_forward(o1, st1, inp, w, (size_t)G, C);
    k->rmsnorm_forward(o2, st2, inp, w, (size_t)G, C);
    SAME(o1, o2, (size_t)G * C);
    memset(d1, 0, (N * C + 2 * C) * 4), memset(d2, 0, (N * C + 2 * C) * 4);
    base->rmsnorm_backward(d1, d1 + N * C, dout, inp, w, st1, (size_t)G, C);
    k->rmsnorm_backward(d2, d2 + N * C, dout, inp, w, st1, (size_t)G, C);
    SAME(d1, d2, N * C + C);
    free(inp), free(w), free(bias), free(dout), free(o1), free(o2), free(st1), free(st2), free(st1r), free(st2r);
    free(d1), free(d2), free(scratch), free(qkv), free(a1), free(a2), free(dq1), free(dq2), free(lg), free(dl1);
    free(dl2), free(h), free(g1), free(g2), free(dh1), free(dh2);
}

static void every_copy_gives_the_baseline_bits(void **state) {
    (void)state;
    const xtts_cpu_loops *base = xtts_cpu_loops_at(XTTS_CPU_BASELINE);
    xtts_cpu_level top = xtts_cpu_level_supported();
    printf("  this CPU runs: %s\n", xtts_cpu_level_name(top));
    for (int level = XTTS_CPU_BASELINE; level <= (int)top; level++) {
        const xtts_cpu_loops *k = xtts_cpu_loops_at((xtts_cpu_level)level);
        printf("  %s against baseline\n", xtts_cpu_level_name((xtts_cpu_level)level));
        check_matmul_and_pointwise(base, k);
        check_layernorm_and_attention(base, k);
        check_encoder_and_loss(base, k);
        check_optimizer(base, k);
        check_gpt_kinds(base, k);
    }
}

static void a_level_above_the_cpu_gives_the_widest_it_runs(void **state) {
    (void)state;
    xtts_cpu_level top = xtts_cpu_level_supported();
    assert_ptr_equal(xtts_cpu_loops_at(XTTS_CPU_AVX512), xtts_cpu_loops_at(top));
    assert_string_equal(xtts_cpu_level_name(XTTS_CPU_AVX2), "avx2");
    assert_string_equal(xtts_cpu_level_name((xtts_cpu_level)7), "?");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(emulated_fma_rounds_as_the_fma_instruction),
        cmocka_unit_test(every_copy_gives_the_baseline_bits),
        cmocka_unit_test(a_level_above_the_cpu_gives_the_widest_it_runs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
