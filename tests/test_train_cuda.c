/* test_train_cuda.c — the CUDA step against the CPU path and the PyTorch golden file.
 * Skipped (not failed) where no CUDA device is usable; on a machine with one, the loss of
 * the golden batch must match PyTorch's within 1e-4 relative, and the weights after one
 * AdamW step must match the CPU path's within 1e-4 (the device sums in another order). */
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
    printf("  loss %.7f (PyTorch %.7f), max weight difference after a step %.3e\n", loss, losses[0], worst);
    assert_true(worst <= 1e-4f);
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
