/* test_train_cuda.c — the CUDA step against the CPU path and the PyTorch golden file.
 * Skipped (not failed) where no CUDA device is usable. On a machine with one: the loss of the
 * golden batch matches PyTorch's within 1e-4 relative; the clipped gradients match the CPU
 * path's within 1e-4 of their norm (the device sums in another order); and the weights after
 * the AdamW step are the step the CPU takes from the device's own gradients, within rounding.
 *
 * Why not one bound on the weights after a step against the CPU's: at step 1 AdamW's bias
 * corrections cancel and the update is lr * g / (|g| + eps) (plus weight decay), whose slope
 * d/dg = lr * eps / (|g| + eps)^2 is lr / (4 eps) = 2.5e4 at |g| = eps = 1e-8. A gradient that
 * is zero but for rounding (terms that cancel) differs between two orders of summation by some
 * 1e-9, and that moves its weight by lr * 0.1 = 1e-4 or more: the 1.4e-4 a first device run
 * saw. The difference is the order of the sums, amplified by the optimizer, not an error of
 * either step, so the order of sums is checked on the gradients and the step on its own. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/mel_cuda.h"
#include "train/model.h"
#include "train/optim.h"
#include "train/train_cuda.h"

static int read_exact(FILE *f, void *p, size_t n) { return fread(p, 1, n, f) == n ? 0 : -1; }

/* The golden batch and weights (tests/golden/train_tiny.bin, made by PyTorch), the model
 * built from them, and the CPU's step from those weights (gradients clipped, then AdamW). */
typedef struct {
    int B, T, ts, ms, M;
    int *n_text, *n_frames;
    int32_t *text;
    float *mel, *params, losses[3], pos_weight;
    int64_t P;
    xtts_model *m;
    xtts_model_batch bt;
    xtts_optim_config o;
    float cpu_norm;
} golden;

static void golden_load(golden *G) {
    memset(G, 0, sizeof *G);
    FILE *f = fopen("tests/golden/train_tiny.bin", "rb");
    assert_non_null(f);
    char magic[4];
    int32_t version, d[11];
    assert_int_equal(read_exact(f, magic, 4) || read_exact(f, &version, 4) || read_exact(f, d, sizeof d) ||
                         read_exact(f, &G->pos_weight, 4),
                     0);
    G->B = d[7], G->T = d[8], G->ts = d[9], G->ms = d[10], G->M = d[3];
    G->n_text = calloc(G->B, 4), G->n_frames = calloc(G->B, 4);
    G->text = calloc((size_t)G->B * G->ts, 4);
    G->mel = calloc((size_t)G->B * G->ms * G->M, 4);
    assert_int_equal(read_exact(f, G->n_text, G->B * 4) || read_exact(f, G->n_frames, G->B * 4) ||
                         read_exact(f, G->text, (size_t)G->B * G->ts * 4) ||
                         read_exact(f, G->mel, (size_t)G->B * G->ms * G->M * 4) || read_exact(f, &G->P, 8),
                     0);
    G->params = malloc(G->P * 4);
    assert_int_equal(read_exact(f, G->params, G->P * 4) || read_exact(f, G->losses, 12), 0);
    fclose(f);
    xtts_model_config cfg = {d[0], d[1], d[2], d[3], d[4], d[5], d[6]};
    xtts_error err;
    assert_int_equal(xtts_model_new(&cfg, G->B, G->T, 1, &G->m, &err), XTTS_OK);
    assert_int_equal((size_t)G->P, G->m->num_parameters);
    memcpy(G->m->params_memory, G->params, G->P * 4);
    G->m->stop_pos_weight = G->pos_weight;
    G->bt = (xtts_model_batch){G->B, G->T, G->ts, G->ms, G->text, G->n_text, G->n_frames, G->mel};
    xtts_optim_config_defaults(&G->o);
    /* the CPU's clipped gradients from the golden weights (the step itself is taken per test) */
    xtts_model_zero_grad(G->m);
    xtts_model_forward(G->m, &G->bt);
    xtts_model_backward(G->m, &G->bt);
    G->cpu_norm = xtts_grad_clip(G->m->grads_memory, G->m->num_parameters, G->o.clip);
}

static void golden_free(golden *G) {
    xtts_model_delete(G->m);
    free(G->n_text), free(G->n_frames), free(G->text), free(G->mel), free(G->params);
}

/* One device step from the golden weights at a precision. Returns its loss, gradient norm,
 * the device's clipped gradients' distance from the CPU's relative to their norm (the device
 * gradients recovered from the first moment: m = (1 - beta1) g at step 1), and how far the
 * device's weights are from the step the CPU takes from the device's own gradients. */
typedef struct {
    float loss, norm, step_worst, weight_worst;
    double grad_rel;
} device_step;

static device_step run_device_step(golden *G, xtts_precision precision) {
    device_step r;
    xtts_error err;
    xtts_cuda_trainer *gpu;
    assert_int_equal(xtts_cuda_trainer_new(G->m, 0, precision, &gpu, &err), XTTS_OK);
    float ml, sl;
    assert_int_equal(xtts_cuda_trainer_stage(gpu, &G->bt, &err), XTTS_OK);
    assert_int_equal(xtts_cuda_trainer_step(gpu, 1, 1e-3f, &G->o, &r.loss, &ml, &sl, &r.norm, &err), XTTS_OK);
    size_t np = (size_t)G->P;
    float *gp = malloc(np * 4), *gm = malloc(np * 4), *gv = malloc(np * 4);
    assert_int_equal(xtts_cuda_trainer_download(gpu, gp, gm, gv, &err), XTTS_OK);
    xtts_cuda_trainer_delete(gpu);
    float *g_dev = malloc(np * 4), *w_dev = malloc(np * 4), *w_cpu = malloc(np * 4), *m0 = calloc(np, 4),
          *v0 = calloc(np, 4);
    double d2 = 0, n2 = 0;
    const float *g_cpu = G->m->grads_memory;
    for (size_t i = 0; i < np; i++) {
        g_dev[i] = gm[i] / (1.0f - G->o.beta1);
        double d = (double)g_dev[i] - g_cpu[i];
        d2 += d * d;
        n2 += (double)g_cpu[i] * g_cpu[i];
    }
    r.grad_rel = sqrt(d2 / (n2 > 0 ? n2 : 1));
    /* the step from the device's own gradients, taken by the CPU; and the CPU's own step */
    memcpy(w_dev, G->params, np * 4);
    xtts_adamw_step(w_dev, g_dev, m0, v0, np, 1, 1e-3f, &G->o);
    memset(m0, 0, np * 4), memset(v0, 0, np * 4);
    memcpy(w_cpu, G->params, np * 4);
    xtts_adamw_step(w_cpu, g_cpu, m0, v0, np, 1, 1e-3f, &G->o);
    r.step_worst = r.weight_worst = 0.0f;
    for (size_t i = 0; i < np; i++) {
        r.step_worst = fmaxf(r.step_worst, fabsf(gp[i] - w_dev[i]) / (1.0f + fabsf(w_dev[i])));
        r.weight_worst = fmaxf(r.weight_worst, fabsf(gp[i] - w_cpu[i]));
    }
    free(gp), free(gm), free(gv), free(g_dev), free(w_dev), free(w_cpu), free(m0), free(v0);
    return r;
}

static void print_step(const char *name, const golden *G, const device_step *r) {
    printf("  %s: loss %.7f (PyTorch fp32 %.7f, relative %.3e); gradient norm %.6f (CPU %.6f); gradients differ "
           "by %.3e of their norm; the device's step differs from the CPU's step on the device's gradients by "
           "%.3e; weights after a step differ by at most %.3e (the optimizer's amplification of summation "
           "order, see the top of this file)\n",
           name, r->loss, G->losses[0], fabs(r->loss - G->losses[0]) / G->losses[0], r->norm, G->cpu_norm,
           r->grad_rel, r->step_worst, r->weight_worst);
}

static int device_or_skip(void) {
    char why[256];
    if (xtts_cuda_device_usable(0, why, sizeof why)) return 1;
    printf("  skipped: %s\n", why);
    return 0;
}

static void cuda_step_matches_the_cpu_step_and_pytorch_loss(void **state) {
    (void)state;
    if (!device_or_skip()) skip();
    golden G;
    golden_load(&G);
    device_step r = run_device_step(&G, XTTS_PRECISION_FP32);
    print_step("fp32", &G, &r);
    assert_true(fabsf(r.loss - G.losses[0]) <= 1e-4f * G.losses[0]);
    assert_true(fabsf(r.norm - G.cpu_norm) <= 1e-4f * G.cpu_norm);
    assert_true(r.grad_rel <= 1e-4);
    assert_true(r.step_worst <= 1e-6f);
    golden_free(&G);
}

/* TF32 and bf16 round each operand of a matrix product to a shorter mantissa, unit roundoff
 * u = 2^-11 (TF32: 10 stored bits and the implicit one) or 2^-8 (bf16: 7 and the implicit
 * one); a product of two rounded operands carries at most 2u relative error per term. The loss passes through about five
 * products in sequence (q k^T, P v, the projections, the MLP, the head, for each of the tiny
 * model's two layers the first order errors add), the gradients through about ten (forward
 * and backward); so the bounds are 10u on the loss and 20u on the gradients relative to
 * their norm, first-order worst cases (rounding errors of random sign add more like a square
 * root, so the measured figures are expected well inside). The step from the device's own
 * gradients stays exact: the optimizer is fp32 in every mode. */
static void reduced_precision_step(xtts_precision precision, const char *name, double u) {
    if (!device_or_skip()) skip();
    golden G;
    golden_load(&G);
    device_step r = run_device_step(&G, precision);
    print_step(name, &G, &r);
    assert_true(fabs(r.loss - G.losses[0]) <= 10 * u * G.losses[0]);
    assert_true(r.grad_rel <= 20 * u);
    assert_true(r.step_worst <= 1e-6f);
    golden_free(&G);
}

static void cuda_tf32_step_is_within_its_rounding_of_fp32(void **state) {
    (void)state;
    reduced_precision_step(XTTS_PRECISION_TF32, "tf32", ldexp(1.0, -11));
}

static void cuda_bf16_step_is_within_its_rounding_of_fp32(void **state) {
    (void)state;
    reduced_precision_step(XTTS_PRECISION_BF16, "bf16", ldexp(1.0, -8));
}

/* Shapes the golden batch does not reach: rows and heads wider than a warp (C 64, head size
 * 32, T 40: every warp-per-row loop takes a second pass), a batch smaller than the buffers
 * (B 3 of 4, T 40 of 48, so the dense layout of a smaller batch is used), an empty row, and
 * two steps (moments, bias corrections, gradients zeroed again, a batch staged after a
 * step; in bf16 the rounded copy of the weights made again). Against the CPU path alone: at each step the device's
 * clipped gradients, recovered from its moments, are compared tensor by tensor with the
 * CPU's gradients at the same weights (the device's own, downloaded), and the validation
 * forward's loss with the CPU's. In bf16, the bounds of reduced_precision_step below on the
 * loss and on all the gradients together instead. */
static float tensor_err(const xtts_model *m, const float *a, const float *b, int i, double *norm) {
    size_t off = 0;
    for (int k = 0; k < i; k++) off += m->param_sizes[k];
    double d2 = 0, n2 = 0;
    for (size_t j = off; j < off + m->param_sizes[i]; j++) {
        double d = (double)a[j] - b[j];
        d2 += d * d;
        n2 += (double)b[j] * b[j];
    }
    *norm = sqrt(n2);
    return (float)sqrt(d2);
}

static void two_steps_at_wider_shapes(xtts_precision precision, double u) {
    if (!device_or_skip()) skip();
    xtts_model_config cfg = {2, 64, 2, 80, 50, 16, 48};
    enum { BMAX = 4, TMAX = 48, B = 3, TS = 16, MS = 40 };
    xtts_model *m;
    xtts_error err;
    assert_int_equal(xtts_model_new(&cfg, BMAX, TMAX, 7, &m, &err), XTTS_OK);
    m->stop_pos_weight = 5.0f;
    int n_text[B] = {9, 5, 3}, n_frames[B] = {31, 0, 36};
    int32_t text[B * TS] = {0};
    float *mel = calloc((size_t)B * MS * cfg.n_mels, 4);
    uint32_t r = 12345;
    for (int b = 0; b < B; b++) {
        text[b * TS] = cfg.vocab_size + b; /* the language token */
        for (int t = 1; t < n_text[b]; t++) text[b * TS + t] = (int32_t)((r = r * 1664525u + 1013904223u) >> 8) % 50;
    }
    for (size_t i = 0; i < (size_t)B * MS * cfg.n_mels; i++)
        mel[i] = (float)((int)((r = r * 1664525u + 1013904223u) >> 9) % 2001 - 1000) / 500.0f;
    int T = 0;
    for (int b = 0; b < B; b++) T = n_text[b] + n_frames[b] > T ? n_text[b] + n_frames[b] : T;
    xtts_model_batch bt = {B, T, TS, MS, text, n_text, n_frames, mel};
    assert_int_equal(xtts_model_check_batch(m, &bt, &err), XTTS_OK);
    xtts_optim_config o;
    xtts_optim_config_defaults(&o);
    size_t np = m->num_parameters;
    float *w = malloc(np * 4), *mom = malloc(np * 4), *vel = malloc(np * 4), *m_prev = calloc(np, 4),
          *g_dev = malloc(np * 4);
    memcpy(w, m->params_memory, np * 4);
    xtts_cuda_trainer *gpu;
    assert_int_equal(xtts_cuda_trainer_new(m, 0, precision, &gpu, &err), XTTS_OK);
    /* fp32: the loss within 1e-5, each tensor's gradients within 1e-4 of its norm (plus 1e-6 of
     * all); bf16: the loss within 10u, all gradients within 20u of their norm */
    double loss_tol = u > 0 ? 10 * u : 1e-5, grad_tol = u > 0 ? 20 * u : 0;
    for (int step = 1; step <= 2; step++) {
        float loss, ml, sl, norm;
        assert_int_equal(xtts_cuda_trainer_stage(gpu, &bt, &err), XTTS_OK);
        assert_int_equal(xtts_cuda_trainer_step(gpu, step, 1e-3f, &o, &loss, &ml, &sl, &norm, &err), XTTS_OK);
        /* the CPU at the weights this step started from (w) */
        memcpy(m->params_memory, w, np * 4);
        xtts_model_zero_grad(m);
        xtts_model_forward(m, &bt);
        xtts_model_backward(m, &bt);
        float cpu_norm = xtts_grad_clip(m->grads_memory, np, o.clip);
        printf("  step %d: loss %.7f (CPU %.7f), gradient norm %.6f (CPU %.6f)\n", step, loss, m->loss, norm, cpu_norm);
        assert_true(fabs(loss - m->loss) <= loss_tol * m->loss);
        assert_true(fabsf(norm - cpu_norm) <= (u > 0 ? grad_tol : 1e-4) * cpu_norm);
        assert_int_equal(xtts_cuda_trainer_download(gpu, w, mom, vel, &err), XTTS_OK);
        /* m_t = beta1 m_(t-1) + (1 - beta1) g_t */
        for (size_t i = 0; i < np; i++) g_dev[i] = (mom[i] - o.beta1 * m_prev[i]) / (1.0f - o.beta1);
        double total = 0, d2 = 0;
        for (size_t i = 0; i < np; i++) {
            total += (double)m->grads_memory[i] * m->grads_memory[i];
            d2 += ((double)g_dev[i] - m->grads_memory[i]) * ((double)g_dev[i] - m->grads_memory[i]);
        }
        total = sqrt(total);
        printf("  step %d: gradients differ by %.3e of their norm\n", step, sqrt(d2) / total);
        if (u > 0) assert_true(sqrt(d2) <= grad_tol * total);
        for (int i = 0; i < XTTS_NUM_PARAM_TENSORS && u == 0; i++) {
            double tn;
            float e = tensor_err(m, g_dev, m->grads_memory, i, &tn);
            if (e > 1e-4 * tn + 1e-6 * total)
                printf("  step %d: %s: gradients differ by %.3e (norm %.3e, all %.3e)\n", step, xtts_param_name(i), e,
                       tn, total);
            assert_true(e <= 1e-4 * tn + 1e-6 * total);
        }
        memcpy(m_prev, mom, np * 4);
    }
    /* the validation forward at the weights after two steps */
    float loss, ml, sl;
    int frames;
    assert_int_equal(xtts_cuda_trainer_stage(gpu, &bt, &err), XTTS_OK);
    assert_int_equal(xtts_cuda_trainer_forward(gpu, &loss, &ml, &sl, &frames, &err), XTTS_OK);
    memcpy(m->params_memory, w, np * 4);
    xtts_model_forward(m, &bt);
    printf("  forward after two steps: loss %.7f (CPU %.7f), %d frames\n", loss, m->loss, frames);
    assert_int_equal(frames, n_frames[0] + n_frames[1] + n_frames[2]);
    assert_true(fabs(loss - m->loss) <= loss_tol * m->loss);
    assert_true(fabs(ml - m->mel_loss) <= loss_tol * m->mel_loss);
    xtts_cuda_trainer_delete(gpu);
    xtts_model_delete(m);
    free(mel), free(w), free(mom), free(vel), free(m_prev), free(g_dev);
}

static void cuda_two_steps_at_wider_shapes_match_the_cpu_per_tensor(void **state) {
    (void)state;
    two_steps_at_wider_shapes(XTTS_PRECISION_FP32, 0);
}

static void cuda_bf16_two_steps_at_wider_shapes_stay_within_their_rounding(void **state) {
    (void)state;
    two_steps_at_wider_shapes(XTTS_PRECISION_BF16, ldexp(1.0, -8));
}

static void cuda_trainer_without_a_device_says_why(void **state) {
    (void)state;
    char why[256];
    if (xtts_cuda_device_usable(0, why, sizeof why)) skip();
    xtts_model_config cfg = {1, 8, 2, 4, 10, 4, 4};
    xtts_model *m;
    xtts_error err;
    assert_int_equal(xtts_model_new(&cfg, 1, 4, 1, &m, &err), XTTS_OK);
    xtts_cuda_trainer *gpu = NULL;
    assert_int_not_equal(xtts_cuda_trainer_new(m, 0, XTTS_PRECISION_FP32, &gpu, &err), XTTS_OK);
    xtts_cuda_trainer_delete(gpu);
    assert_true(strlen(err.msg) > 0);
    xtts_model_delete(m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cuda_step_matches_the_cpu_step_and_pytorch_loss),
        cmocka_unit_test(cuda_tf32_step_is_within_its_rounding_of_fp32),
        cmocka_unit_test(cuda_bf16_step_is_within_its_rounding_of_fp32),
        cmocka_unit_test(cuda_two_steps_at_wider_shapes_match_the_cpu_per_tensor),
        cmocka_unit_test(cuda_bf16_two_steps_at_wider_shapes_stay_within_their_rounding),
        cmocka_unit_test(cuda_trainer_without_a_device_says_why),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
