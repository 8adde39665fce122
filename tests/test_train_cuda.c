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

static void cuda_step_matches_the_cpu_step_and_pytorch_loss(void **state) {
    (void)state;
    char why[256];
    if (!xtts_cuda_device_usable(0, why, sizeof why)) {
        printf("  skipped: %s\n", why);
        skip();
    }
    FILE *f = fopen("tests/golden/train_tiny.bin", "rb");
    assert_non_null(f);
    char magic[4];
    int32_t version, d[11];
    float pos_weight;
    assert_int_equal(read_exact(f, magic, 4) || read_exact(f, &version, 4) || read_exact(f, d, sizeof d) ||
                         read_exact(f, &pos_weight, 4),
                     0);
    int B = d[7], T = d[8], ts = d[9], ms = d[10], M = d[3];
    int *n_text = calloc(B, 4), *n_frames = calloc(B, 4);
    int32_t *text = calloc((size_t)B * ts, 4);
    float *mel = calloc((size_t)B * ms * M, 4);
    int64_t P;
    assert_int_equal(read_exact(f, n_text, B * 4) || read_exact(f, n_frames, B * 4) ||
                         read_exact(f, text, (size_t)B * ts * 4) || read_exact(f, mel, (size_t)B * ms * M * 4) ||
                         read_exact(f, &P, 8),
                     0);
    float *params = malloc(P * 4), losses[3];
    assert_int_equal(read_exact(f, params, P * 4) || read_exact(f, losses, 12), 0);
    fclose(f);

    xtts_model_config cfg = {d[0], d[1], d[2], d[3], d[4], d[5], d[6]};
    xtts_model *m;
    xtts_error err;
    assert_int_equal(xtts_model_new(&cfg, B, T, 1, &m, &err), XTTS_OK);
    memcpy(m->params_memory, params, P * 4);
    m->stop_pos_weight = pos_weight;
    xtts_model_batch bt = {B, T, ts, ms, text, n_text, n_frames, mel};
    xtts_cuda_trainer *gpu;
    assert_int_equal(xtts_cuda_trainer_new(m, 0, &gpu, &err), XTTS_OK);
    xtts_optim_config o;
    xtts_optim_config_defaults(&o);
    float loss, ml, sl, norm;
    assert_int_equal(xtts_cuda_trainer_stage(gpu, &bt, &err), XTTS_OK);
    assert_int_equal(xtts_cuda_trainer_step(gpu, 1, 1e-3f, &o, &loss, &ml, &sl, &norm, &err), XTTS_OK);
    assert_true(fabsf(loss - losses[0]) <= 1e-4f * losses[0]);

    /* the CPU step from the same weights */
    float *am = calloc(P, 4), *av = calloc(P, 4), *gp = malloc(P * 4), *gm = malloc(P * 4), *gv = malloc(P * 4);
    xtts_model_zero_grad(m);
    xtts_model_forward(m, &bt);
    xtts_model_backward(m, &bt);
    float cpu_norm = xtts_grad_clip(m->grads_memory, m->num_parameters, o.clip);
    xtts_adamw_step(m->params_memory, m->grads_memory, am, av, m->num_parameters, 1, 1e-3f, &o);
    assert_true(fabsf(norm - cpu_norm) <= 1e-4f * cpu_norm);
    assert_int_equal(xtts_cuda_trainer_download(gpu, gp, gm, gv, &err), XTTS_OK);
    float worst = 0.0f;
    for (int64_t i = 0; i < P; i++) worst = fmaxf(worst, fabsf(gp[i] - m->params_memory[i]));
    /* the device's clipped gradients, from its first moment (m = (1 - beta1) g at step 1),
     * against the CPU's, relative to their norm */
    size_t np = (size_t)m->num_parameters;
    float *g_dev = malloc(np * 4), *w_dev = malloc(np * 4), *m0 = calloc(np, 4), *v0 = calloc(np, 4);
    double d2 = 0, n2 = 0;
    for (int64_t i = 0; i < P; i++) {
        g_dev[i] = gm[i] / (1.0f - o.beta1);
        double d = (double)g_dev[i] - m->grads_memory[i];
        d2 += d * d;
        n2 += (double)m->grads_memory[i] * m->grads_memory[i];
    }
    double grad_rel = sqrt(d2 / (n2 > 0 ? n2 : 1));
    /* the step from the device's own gradients, taken by the CPU */
    memcpy(w_dev, params, P * 4);
    xtts_adamw_step(w_dev, g_dev, m0, v0, m->num_parameters, 1, 1e-3f, &o);
    float step_worst = 0.0f;
    for (int64_t i = 0; i < P; i++) step_worst = fmaxf(step_worst, fabsf(gp[i] - w_dev[i]) / (1.0f + fabsf(w_dev[i])));
    printf("  loss %.7f (PyTorch %.7f); gradients differ by %.3e of their norm; the device's step differs from "
           "the CPU's step on the device's gradients by %.3e; weights after a step differ by at most %.3e "
           "(the optimizer's amplification of summation order, see the top of this file)\n",
           loss, losses[0], grad_rel, step_worst, worst);
    assert_true(grad_rel <= 1e-4);
    assert_true(step_worst <= 1e-6f);
    free(g_dev), free(w_dev), free(m0), free(v0);
    xtts_cuda_trainer_delete(gpu);
    xtts_model_delete(m);
    free(n_text), free(n_frames), free(text), free(mel), free(params), free(am), free(av), free(gp), free(gm), free(gv);
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
    assert_int_not_equal(xtts_cuda_trainer_new(m, 0, &gpu, &err), XTTS_OK);
    xtts_cuda_trainer_delete(gpu);
    assert_true(strlen(err.msg) > 0);
    xtts_model_delete(m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cuda_step_matches_the_cpu_step_and_pytorch_loss),
        cmocka_unit_test(cuda_trainer_without_a_device_says_why),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
