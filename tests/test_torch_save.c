/* test_torch_save.c — formats/model/torch_save.h: a state dict written as torch.save writes it
 * reads back through the restricted reader (torch_pth.h) with every name, shape and value, in
 * float32, float16 and bfloat16, under a top key and without one. (torch.load of such a file:
 * tests/e2e/train_xtts_gpt.sh.) */
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

#include "formats/model/torch_pth.h"
#include "formats/model/torch_save.h"

static void round_trip(const char *top_key) {
    float a[6] = {1.5f, -2.25f, 3.0f, 0.1f, 1e-3f, -7.0f}, b[3] = {0.1f, 0.2f, 0.3f}, s = 42.0f;
    xtts_pth_out_tensor t[4] = {
        {.name = "gpt.h.0.attn.c_attn.weight", .ndim = 2, .shape = {2, 3}, .data = a},
        {.name = "gpt.ln_f.bias", .ndim = 1, .shape = {3}, .data = b, .dtype = "float16"},
        {.name = "gpt.text_head.bias", .ndim = 1, .shape = {3}, .data = b, .dtype = "bfloat16"},
        {.name = "scalar", .ndim = 0, .data = &s},
    };
    char path[] = "/tmp/test_torch_save_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    xtts_error err = {0};
    assert_int_equal(xtts_pth_save(path, top_key, t, 4, &err), XTTS_OK);
    xtts_pth *f = NULL;
    assert_int_equal(xtts_pth_open(path, &f, &err), XTTS_OK);
    assert_int_equal(xtts_pth_count(f), 4);
    for (int i = 0; i < 4; i++) {
        char key[128];
        snprintf(key, sizeof key, "%s%s%s", top_key ? top_key : "", top_key ? "." : "", t[i].name);
        const xtts_pth_tensor *r = xtts_pth_find(f, key);
        if (!r) fail_msg("%s: no %s", path, key);
        assert_int_equal(r->ndim, t[i].ndim);
        assert_string_equal(r->stored_dtype, t[i].dtype ? t[i].dtype : "float32");
        size_t n = 1;
        for (int d = 0; d < r->ndim; d++) assert_int_equal(r->shape[d], t[i].shape[d]), n *= (size_t)r->shape[d];
        double tol = !t[i].dtype ? 0.0 : !strcmp(t[i].dtype, "float16") ? 1e-3 : 4e-3;
        for (size_t j = 0; j < n; j++) assert_true(fabs(r->data[j] - t[i].data[j]) <= tol * fabs(t[i].data[j]));
    }
    xtts_pth_close(f);
    remove(path);
}

static void test_state_dict_under_model_reads_back(void **state) {
    (void)state;
    round_trip("model");
}

static void test_bare_state_dict_reads_back(void **state) {
    (void)state;
    round_trip(NULL);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_state_dict_under_model_reads_back),
        cmocka_unit_test(test_bare_state_dict_reads_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
