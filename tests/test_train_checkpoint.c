/* test_train_checkpoint.c — checkpoint header codec, atomic save, load, and refusal of a
 * checkpoint that belongs to another model, cache or batch size; optimizer schedule and
 * clipping. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "train/checkpoint.h"
#include "train/optim.h"

static const char *HASH_A = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
static const char *HASH_B = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

typedef struct {
    char dir[256], path[300];
    xtts_model_config cfg;
    size_t P;
    float *p, *m, *v;
} fixture;

static int setup(void **state) {
    fixture *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/xtts-ckpt-XXXXXX");
    if (!mkdtemp(f->dir)) return -1;
    snprintf(f->path, sizeof f->path, "%s/train.ckpt", f->dir);
    f->cfg = (xtts_model_config){2, 16, 2, 8, 20, 9, 12};
    f->P = xtts_model_num_parameters(&f->cfg);
    f->p = malloc(f->P * 4), f->m = malloc(f->P * 4), f->v = malloc(f->P * 4);
    for (size_t i = 0; i < f->P; i++) f->p[i] = (float)i * 0.5f, f->m[i] = -(float)i, f->v[i] = (float)(i % 7);
    *state = f;
    return 0;
}

static int teardown(void **state) {
    fixture *f = *state;
    unlink(f->path);
    rmdir(f->dir);
    free(f->p), free(f->m), free(f->v);
    free(f);
    return 0;
}

static xtts_ckpt_header make_header(const fixture *f) {
    xtts_ckpt_header h;
    memset(&h, 0, sizeof h);
    h.model = f->cfg;
    h.batch_size = 4;
    h.num_parameters = f->P;
    h.step = 42;
    h.seed = 7;
    h.epoch = 3;
    h.batch_in_epoch = 5;
    h.payload_bytes = 12 * (uint64_t)f->P;
    snprintf(h.cache_config_hash, sizeof h.cache_config_hash, "%s", HASH_A);
    return h;
}

static void saved_checkpoint_loads_back_every_field_and_value(void **state) {
    fixture *f = *state;
    xtts_ckpt_header h = make_header(f), r;
    xtts_error err;
    assert_int_equal(xtts_ckpt_save(f->path, &h, f->p, f->m, f->v, &err), XTTS_OK);
    float *p = malloc(f->P * 4), *m = malloc(f->P * 4), *v = malloc(f->P * 4);
    assert_int_equal(xtts_ckpt_load(f->path, &r, p, m, v, f->P, &err), XTTS_OK);
    assert_int_equal(r.step, 42);
    assert_int_equal(r.seed, 7);
    assert_int_equal(r.epoch, 3);
    assert_int_equal(r.batch_in_epoch, 5);
    assert_int_equal(r.batch_size, 4);
    assert_memory_equal(&r.model, &f->cfg, sizeof f->cfg);
    assert_string_equal(r.cache_config_hash, HASH_A);
    assert_memory_equal(p, f->p, f->P * 4);
    assert_memory_equal(m, f->m, f->P * 4);
    assert_memory_equal(v, f->v, f->P * 4);
    assert_int_equal(xtts_ckpt_check(&r, f->path, &f->cfg, HASH_A, 4, &err), XTTS_OK);
    free(p), free(m), free(v);
}

static void checkpoint_of_another_model_size_is_refused(void **state) {
    fixture *f = *state;
    xtts_ckpt_header h = make_header(f);
    xtts_model_config other = f->cfg;
    other.channels = 32;
    xtts_error err;
    assert_int_equal(xtts_ckpt_check(&h, "x.ckpt", &other, HASH_A, 4, &err), XTTS_EMISMATCH);
    assert_non_null(strstr(err.msg, "another model size"));
    other = f->cfg;
    other.n_layer = 3;
    assert_int_equal(xtts_ckpt_check(&h, "x.ckpt", &other, HASH_A, 4, &err), XTTS_EMISMATCH);
}

static void checkpoint_of_another_cache_configuration_is_refused(void **state) {
    fixture *f = *state;
    xtts_ckpt_header h = make_header(f);
    xtts_error err;
    assert_int_equal(xtts_ckpt_check(&h, "x.ckpt", &f->cfg, HASH_B, 4, &err), XTTS_EMISMATCH);
    assert_non_null(strstr(err.msg, "another configuration"));
    xtts_model_config other = f->cfg;
    other.n_mels = 80;
    assert_int_equal(xtts_ckpt_check(&h, "x.ckpt", &other, HASH_A, 4, &err), XTTS_EMISMATCH);
    assert_non_null(strstr(err.msg, "another cache shape"));
    assert_int_equal(xtts_ckpt_check(&h, "x.ckpt", &f->cfg, HASH_A, 8, &err), XTTS_EMISMATCH);
    assert_non_null(strstr(err.msg, "batch-size"));
}

static void header_with_flipped_byte_fails_its_checksum(void **state) {
    fixture *f = *state;
    xtts_ckpt_header h = make_header(f), r;
    uint8_t buf[XTTS_CKPT_HEADER_BYTES];
    xtts_ckpt_encode_header(&h, buf);
    xtts_error err;
    assert_int_equal(xtts_ckpt_parse_header(buf, sizeof buf, "x", &r, &err), XTTS_OK);
    buf[60] ^= 1;
    assert_int_equal(xtts_ckpt_parse_header(buf, sizeof buf, "x", &r, &err), XTTS_ECORRUPT);
    assert_non_null(strstr(err.msg, "checksum"));
    assert_int_equal(xtts_ckpt_parse_header(buf, 100, "x", &r, &err), XTTS_EINPUT);
}

static void header_of_another_version_is_refused_with_the_versions(void **state) {
    fixture *f = *state;
    xtts_ckpt_header h = make_header(f), r;
    uint8_t buf[XTTS_CKPT_HEADER_BYTES];
    xtts_ckpt_encode_header(&h, buf);
    xtts_put_le32(buf + 8, 2);
    xtts_put_le32(buf + 252, xtts_crc32(0, buf, 252));
    xtts_error err;
    assert_int_equal(xtts_ckpt_parse_header(buf, sizeof buf, "x", &r, &err), XTTS_EMISMATCH);
    assert_non_null(strstr(err.msg, "version 2"));
}

static void truncated_or_altered_payload_is_corrupt(void **state) {
    fixture *f = *state;
    xtts_ckpt_header h = make_header(f), r;
    xtts_error err;
    assert_int_equal(xtts_ckpt_save(f->path, &h, f->p, f->m, f->v, &err), XTTS_OK);
    float *p = malloc(f->P * 4), *m = malloc(f->P * 4), *v = malloc(f->P * 4);
    /* flip one payload byte */
    FILE *fp = fopen(f->path, "r+b");
    fseek(fp, XTTS_CKPT_HEADER_BYTES + 100, SEEK_SET);
    int ch = fgetc(fp);
    fseek(fp, XTTS_CKPT_HEADER_BYTES + 100, SEEK_SET);
    fputc(ch ^ 0x10, fp);
    fclose(fp);
    assert_int_equal(xtts_ckpt_load(f->path, &r, p, m, v, f->P, &err), XTTS_ECORRUPT);
    assert_non_null(strstr(err.msg, "payload checksum"));
    /* cut the file short */
    assert_int_equal(truncate(f->path, XTTS_CKPT_HEADER_BYTES + 12 * f->P - 4), 0);
    assert_int_equal(xtts_ckpt_load(f->path, &r, p, m, v, f->P, &err), XTTS_ECORRUPT);
    assert_non_null(strstr(err.msg, "truncated"));
    free(p), free(m), free(v);
}

static void save_leaves_no_temporary_file_behind(void **state) {
    fixture *f = *state;
    xtts_ckpt_header h = make_header(f);
    xtts_error err;
    assert_int_equal(xtts_ckpt_save(f->path, &h, f->p, f->m, f->v, &err), XTTS_OK);
    assert_int_equal(xtts_ckpt_save(f->path, &h, f->p, f->m, f->v, &err), XTTS_OK);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "test $(ls -A %s | wc -l) -eq 1", f->dir);
    assert_int_equal(system(cmd), 0);
}

static void schedule_warms_up_linearly_then_decays_by_cosine_to_the_floor(void **state) {
    (void)state;
    xtts_optim_config o;
    xtts_optim_config_defaults(&o);
    o.lr = 1.0f, o.warmup_steps = 10, o.total_steps = 110, o.min_lr_frac = 0.1f;
    assert_true(fabsf(xtts_lr_at(&o, 0) - 0.1f) < 1e-7f);
    assert_true(fabsf(xtts_lr_at(&o, 9) - 1.0f) < 1e-7f);
    assert_true(fabsf(xtts_lr_at(&o, 10) - 1.0f) < 1e-6f);
    assert_true(fabsf(xtts_lr_at(&o, 60) - 0.55f) < 1e-6f); /* halfway: (1 + 0.1) / 2 */
    assert_true(fabsf(xtts_lr_at(&o, 110) - 0.1f) < 1e-6f);
    assert_true(fabsf(xtts_lr_at(&o, 500) - 0.1f) < 1e-6f);
}

static void clipping_scales_gradients_to_the_max_norm(void **state) {
    (void)state;
    float g[4] = {3.0f, 0.0f, 4.0f, 0.0f};
    float norm = xtts_grad_clip(g, 4, 1.0f);
    assert_true(fabsf(norm - 5.0f) < 1e-6f);
    assert_true(fabsf(xtts_grad_norm(g, 4) - 1.0f) < 1e-5f);
    float h[2] = {0.3f, 0.4f};
    xtts_grad_clip(h, 2, 1.0f);
    assert_true(h[0] == 0.3f && h[1] == 0.4f);
}

static void adamw_first_step_moves_each_weight_by_lr_against_its_gradient_sign(void **state) {
    (void)state;
    xtts_optim_config o;
    xtts_optim_config_defaults(&o);
    o.weight_decay = 0.0f;
    float p[3] = {1.0f, 1.0f, 1.0f}, g[3] = {0.5f, -2.0f, 1e-3f}, m[3] = {0}, v[3] = {0};
    xtts_adamw_step(p, g, m, v, 3, 1, 0.01f, &o);
    /* bias-corrected first step: m_hat / sqrt(v_hat) = sign(g) */
    assert_true(fabsf(p[0] - 0.99f) < 1e-6f);
    assert_true(fabsf(p[1] - 1.01f) < 1e-6f);
    assert_true(fabsf(p[2] - 0.99f) < 1e-4f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(saved_checkpoint_loads_back_every_field_and_value, setup, teardown),
        cmocka_unit_test_setup_teardown(checkpoint_of_another_model_size_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(checkpoint_of_another_cache_configuration_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(header_with_flipped_byte_fails_its_checksum, setup, teardown),
        cmocka_unit_test_setup_teardown(header_of_another_version_is_refused_with_the_versions, setup, teardown),
        cmocka_unit_test_setup_teardown(truncated_or_altered_payload_is_corrupt, setup, teardown),
        cmocka_unit_test_setup_teardown(save_leaves_no_temporary_file_behind, setup, teardown),
        cmocka_unit_test(schedule_warms_up_linearly_then_decays_by_cosine_to_the_floor),
        cmocka_unit_test(clipping_scales_gradients_to_the_max_norm),
        cmocka_unit_test(adamw_first_step_moves_each_weight_by_lr_against_its_gradient_sign),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
