/* test_train_model.c — the whole tiny model against PyTorch: loss and every gradient
 * from tests/golden/train_tiny.bin (written by tests/golden/make_train_golden.py from
 * the same weights and batch), in the manner of llm.c's test_gpt2.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/model.h"

typedef struct {
    int L, C, NH, M, V, Pt, Pm, B, T, text_stride, mel_stride;
    float pos_weight;
    int *n_text, *n_frames;
    int32_t *text;
    float *mel;
    int64_t num_params;
    float *params, *grads;
    float loss, mel_loss, stop_loss;
} golden;

static int read_exact(FILE *f, void *p, size_t n) { return fread(p, 1, n, f) == n ? 0 : -1; }

static int load_golden(const char *path, golden *g) {
    memset(g, 0, sizeof *g);
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    char magic[4];
    int32_t version, dims[11];
    int rc = -1;
    if (read_exact(f, magic, 4) || memcmp(magic, "XTTG", 4) || read_exact(f, &version, 4) || version != 1 ||
        read_exact(f, dims, sizeof dims))
        goto done;
    g->L = dims[0], g->C = dims[1], g->NH = dims[2], g->M = dims[3], g->V = dims[4], g->Pt = dims[5];
    g->Pm = dims[6], g->B = dims[7], g->T = dims[8], g->text_stride = dims[9], g->mel_stride = dims[10];
    g->n_text = calloc(g->B, sizeof(int));
    g->n_frames = calloc(g->B, sizeof(int));
    g->text = calloc((size_t)g->B * g->text_stride, sizeof(int32_t));
    g->mel = calloc((size_t)g->B * g->mel_stride * g->M, sizeof(float));
    if (read_exact(f, &g->pos_weight, 4) || read_exact(f, g->n_text, g->B * 4) ||
        read_exact(f, g->n_frames, g->B * 4) || read_exact(f, g->text, (size_t)g->B * g->text_stride * 4) ||
        read_exact(f, g->mel, (size_t)g->B * g->mel_stride * g->M * 4) || read_exact(f, &g->num_params, 8))
        goto done;
    g->params = malloc(g->num_params * sizeof(float));
    g->grads = malloc(g->num_params * sizeof(float));
    float losses[3];
    if (read_exact(f, g->params, g->num_params * 4) || read_exact(f, losses, sizeof losses) ||
        read_exact(f, g->grads, g->num_params * 4))
        goto done;
    g->loss = losses[0], g->mel_loss = losses[1], g->stop_loss = losses[2];
    rc = 0;
done:
    fclose(f);
    return rc;
}

static void free_golden(golden *g) {
    free(g->n_text);
    free(g->n_frames);
    free(g->text);
    free(g->mel);
    free(g->params);
    free(g->grads);
}

static xtts_model *model_from_golden(const golden *g, xtts_model_batch *bt) {
    xtts_model_config cfg = {g->L, g->C, g->NH, g->M, g->V, g->Pt, g->Pm};
    xtts_model *m = NULL;
    xtts_error err;
    assert_int_equal(xtts_model_new(&cfg, g->B, g->T, 1, &m, &err), XTTS_OK);
    assert_int_equal((int64_t)m->num_parameters, g->num_params);
    memcpy(m->params_memory, g->params, m->num_parameters * sizeof(float));
    m->stop_pos_weight = g->pos_weight;
    *bt = (xtts_model_batch){g->B, g->T, g->text_stride, g->mel_stride, g->text, g->n_text, g->n_frames, g->mel};
    assert_int_equal(xtts_model_check_batch(m, bt, &err), XTTS_OK);
    return m;
}

static void tiny_model_loss_and_every_gradient_match_pytorch(void **state) {
    (void)state;
    golden g;
    assert_int_equal(load_golden("tests/golden/train_tiny.bin", &g), 0);
    xtts_model_batch bt;
    xtts_model *m = model_from_golden(&g, &bt);
    xtts_model_zero_grad(m);
    xtts_model_forward(m, &bt);
    xtts_model_backward(m, &bt);

    printf("loss %.7f (PyTorch %.7f), mel %.7f (%.7f), stop %.7f (%.7f)\n", m->loss, g.loss, m->mel_loss,
           g.mel_loss, m->stop_loss, g.stop_loss);
    assert_true(fabsf(m->loss - g.loss) <= 1e-4f * fabsf(g.loss));
    assert_true(fabsf(m->mel_loss - g.mel_loss) <= 1e-4f * fabsf(g.mel_loss));
    assert_true(fabsf(m->stop_loss - g.stop_loss) <= 1e-4f * fabsf(g.stop_loss));

    /* every tensor: max abs difference within 1e-3 of the tensor's largest gradient */
    int bad = 0;
    for (int i = 0; i < XTTS_NUM_PARAM_TENSORS; i++) {
        const float *mine = xtts_param_tensor(m, m->grads_memory, i);
        size_t off = (size_t)(xtts_param_tensor(m, m->params_memory, i) - m->params_memory);
        const float *ref = g.grads + off;
        float maxdiff = 0.0f, maxref = 0.0f;
        for (size_t k = 0; k < m->param_sizes[i]; k++) {
            maxdiff = fmaxf(maxdiff, fabsf(mine[k] - ref[k]));
            maxref = fmaxf(maxref, fabsf(ref[k]));
        }
        int ok = maxdiff <= 1e-3f * fmaxf(maxref, 1e-6f);
        printf("  %-9s %6zu  max|g| %.3e  max diff %.3e  %s\n", xtts_param_name(i), m->param_sizes[i], maxref,
               maxdiff, ok ? "ok" : "MISMATCH");
        if (!ok) bad++;
        /* every tensor this batch reaches has a nonzero gradient (no silently dead path) */
        if (strcmp(xtts_param_name(i), "wte") != 0 && strcmp(xtts_param_name(i), "wpe_text") != 0 &&
            strcmp(xtts_param_name(i), "wpe_mel") != 0)
            assert_true(maxref > 0.0f);
    }
    assert_int_equal(bad, 0);
    xtts_model_delete(m);
    free_golden(&g);
}

static void gradients_do_not_depend_on_thread_count(void **state) {
    (void)state;
    golden g;
    assert_int_equal(load_golden("tests/golden/train_tiny.bin", &g), 0);
    xtts_model_batch bt;
    xtts_model *m = model_from_golden(&g, &bt);
    float *first = malloc(m->num_parameters * sizeof(float));
    float loss1 = 0.0f;
    int threads[2] = {1, 3};
    for (int r = 0; r < 2; r++) {
        omp_set_num_threads(threads[r]);
        xtts_model_zero_grad(m);
        xtts_model_forward(m, &bt);
        xtts_model_backward(m, &bt);
        if (r == 0) {
            memcpy(first, m->grads_memory, m->num_parameters * sizeof(float));
            loss1 = m->loss;
        }
    }
    assert_memory_equal(&loss1, &m->loss, sizeof(float));
    assert_memory_equal(first, m->grads_memory, m->num_parameters * sizeof(float));
    free(first);
    xtts_model_delete(m);
    free_golden(&g);
}

static void same_seed_gives_same_weights_and_other_seed_does_not(void **state) {
    (void)state;
    xtts_model_config cfg = {2, 16, 2, 8, 20, 8, 12};
    xtts_model *a, *b, *c;
    xtts_error err;
    assert_int_equal(xtts_model_new(&cfg, 1, 4, 7, &a, &err), XTTS_OK);
    assert_int_equal(xtts_model_new(&cfg, 1, 4, 7, &b, &err), XTTS_OK);
    assert_int_equal(xtts_model_new(&cfg, 1, 4, 8, &c, &err), XTTS_OK);
    assert_memory_equal(a->params_memory, b->params_memory, a->num_parameters * sizeof(float));
    assert_true(memcmp(a->params_memory, c->params_memory, a->num_parameters * sizeof(float)) != 0);
    xtts_model_delete(a);
    xtts_model_delete(b);
    xtts_model_delete(c);
}

static void batch_with_token_outside_vocabulary_is_refused(void **state) {
    (void)state;
    golden g;
    assert_int_equal(load_golden("tests/golden/train_tiny.bin", &g), 0);
    xtts_model_batch bt;
    xtts_model *m = model_from_golden(&g, &bt);
    g.text[1] = g.V + 17; /* past the language tokens */
    xtts_error err;
    assert_int_equal(xtts_model_check_batch(m, &bt, &err), XTTS_ERANGE);
    assert_non_null(strstr(err.msg, "vocabulary"));
    xtts_model_delete(m);
    free_golden(&g);
}

static void model_with_heads_not_dividing_width_is_refused(void **state) {
    (void)state;
    xtts_model_config cfg = {2, 18, 4, 8, 20, 8, 12};
    xtts_model *m = NULL;
    xtts_error err;
    assert_int_equal(xtts_model_new(&cfg, 1, 4, 1, &m, &err), XTTS_EUSAGE);
    assert_null(m);
    assert_non_null(strstr(err.msg, "heads"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tiny_model_loss_and_every_gradient_match_pytorch),
        cmocka_unit_test(gradients_do_not_depend_on_thread_count),
        cmocka_unit_test(same_seed_gives_same_weights_and_other_seed_does_not),
        cmocka_unit_test(batch_with_token_outside_vocabulary_is_refused),
        cmocka_unit_test(model_with_heads_not_dividing_width_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
