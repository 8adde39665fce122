/* test_melcache_device.c — `xtts-melcache --device auto`'s cost model (prep/melcache/device.h)
 * against the builds it was fitted to (H100, 16-core host; docs/xtts-melcache.md, "Device
 * choice"): where those builds found the CPU path faster the model must choose it, where they
 * found the CUDA path faster the model must choose that; and its overrides. No device is
 * touched. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "prep/melcache/device.h"

static int pays(int threads, double hours, char *why, size_t why_len) {
    xtts_melcache_device_model m;
    xtts_melcache_device_model_defaults(&m);
    return xtts_melcache_gpu_pays(&m, threads, hours, why, why_len);
}

static void test_sixteen_threads_keep_the_cpu_path_at_every_measured_size(void **state) {
    (void)state;
    char why[160];
    /* 100 h: cpu 11.4 s, cuda 13.2 s; 20 h resampled: 2.95 s, 3.98 s; 1 h fp32: 0.18 s, 1.07 s */
    double hours[] = {100, 20, 1, 10000};
    for (size_t i = 0; i < sizeof hours / sizeof *hours; i++) {
        assert_int_equal(pays(16, hours[i], why, sizeof why), 0);
        assert_string_equal(why, "16 threads beat the GPU path on this build");
    }
}

static void test_few_threads_take_the_gpu_path_for_a_large_build(void **state) {
    (void)state;
    char why[160];
    /* 100 h with cuda at -j 2/4/8: 22.7/16.0/12.9 s; the CPU path ~1.8 core-s/h: ~91/45/23 s */
    int threads[] = {1, 2, 4, 8};
    for (size_t i = 0; i < sizeof threads / sizeof *threads; i++) {
        assert_int_equal(pays(threads[i], 100, why, sizeof why), 1);
        assert_non_null(strstr(why, "~100.0 h of audio: the GPU path is faster"));
    }
    assert_string_equal(why, "8 threads, ~100.0 h of audio: the GPU path is faster");
    pays(1, 100, why, sizeof why);
    assert_string_equal(why, "1 thread, ~100.0 h of audio: the GPU path is faster");
}

static void test_a_small_build_stays_on_the_cpu_whatever_the_threads(void **state) {
    (void)state;
    char why[160];
    /* the 0.9 s start-up outweighs what the GPU saves on an hour at 8 threads (~0.23 s of CPU
     * work) and on a few minutes at 2 threads */
    assert_int_equal(pays(8, 1, why, sizeof why), 0);
    assert_string_equal(why, "~1.00 h of audio is too little to repay the GPU's start-up");
    assert_int_equal(pays(2, 0.5, why, sizeof why), 0);
    assert_int_equal(pays(1, 0, why, sizeof why), 0);
    assert_int_equal(pays(2, 2, why, sizeof why), 1);
}

static void test_the_crossover_is_at_fifteen_threads(void **state) {
    (void)state;
    /* 1.8 core-s/h over 15 threads is the GPU path's 0.12 s/h: from there no build repays the
     * GPU; at 14 threads only a very large one does (0.9 s over 0.0086 s/h: ~105 h) */
    assert_int_equal(pays(15, 1e6, NULL, 0), 0);
    assert_int_equal(pays(14, 100, NULL, 0), 0);
    assert_int_equal(pays(14, 1000, NULL, 0), 1);
    assert_int_equal(pays(64, 1e6, NULL, 0), 0);
}

static void test_threads_below_one_count_as_one(void **state) {
    (void)state;
    assert_int_equal(pays(0, 100, NULL, 0), pays(1, 100, NULL, 0));
    assert_int_equal(pays(-3, 0.1, NULL, 0), pays(1, 0.1, NULL, 0));
}

static void test_the_audio_is_estimated_from_the_record_count(void **state) {
    (void)state;
    xtts_melcache_device_model m;
    xtts_melcache_device_model_defaults(&m);
    /* the measured build: 60,000 records, 100 h */
    assert_float_equal(xtts_melcache_audio_hours_estimate(&m, 60000, 11.9), 100.0, 1e-9);
    assert_float_equal(xtts_melcache_audio_hours_estimate(&m, 60000, 0), 100.0, 1e-9);
    /* clips cannot be longer than the build stores */
    assert_float_equal(xtts_melcache_audio_hours_estimate(&m, 3600, 2.0), 2.0, 1e-9);
    assert_float_equal(xtts_melcache_audio_hours_estimate(&m, 0, 11.9), 0.0, 0);
}

static void test_the_environment_overrides_named_fields_only(void **state) {
    (void)state;
    xtts_melcache_device_model m;
    xtts_melcache_device_model_defaults(&m);
    xtts_error err;
    xtts_error_clear(&err);
    assert_int_equal(xtts_melcache_device_model_parse(&m, "start=0.2,gpu=0.05", &err), XTTS_OK);
    assert_float_equal(m.gpu_start_s, 0.2, 0);
    assert_float_equal(m.gpu_s_per_hour, 0.05, 0);
    assert_float_equal(m.cpu_core_s_per_hour, 1.8, 0);
    assert_float_equal(m.clip_seconds, 6.0, 0);
    /* a faster device changes the answer at 16 threads */
    assert_int_equal(xtts_melcache_gpu_pays(&m, 16, 100, NULL, 0), 1);
    assert_int_equal(xtts_melcache_device_model_parse(&m, "cpu=3,clip=10", &err), XTTS_OK);
    assert_float_equal(m.cpu_core_s_per_hour, 3.0, 0);
    assert_float_equal(m.clip_seconds, 10.0, 0);
    assert_int_equal(xtts_melcache_device_model_parse(&m, NULL, &err), XTTS_OK);
    assert_int_equal(xtts_melcache_device_model_parse(&m, "", &err), XTTS_OK);
    assert_float_equal(m.cpu_core_s_per_hour, 3.0, 0);
}

static void test_a_bad_override_is_a_usage_error_that_changes_nothing(void **state) {
    (void)state;
    const char *bad[] = {"speed=2", "start", "start=", "start=fast", "gpu=-1", "clip=0", "cpu=1,start=x"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        xtts_melcache_device_model m, d;
        xtts_melcache_device_model_defaults(&m);
        d = m;
        xtts_error err;
        xtts_error_clear(&err);
        assert_int_equal(xtts_melcache_device_model_parse(&m, bad[i], &err), XTTS_EUSAGE);
        assert_non_null(strstr(err.msg, XTTS_MELCACHE_AUTO_ENV));
        assert_memory_equal(&m, &d, sizeof m);
    }
}

static void test_the_batch_settings_default_to_the_cpu_path_in_four_sub_batches(void **state) {
    (void)state;
    xtts_melcache_batch_options b;
    xtts_melcache_batch_options_defaults(&b);
    assert_int_equal(b.cpu_engine, 0);
    assert_int_equal(b.sub_batches, 4);
    assert_int_equal(b.buffer_records, 0);
    xtts_error err;
    xtts_error_clear(&err);
    assert_int_equal(xtts_melcache_batch_options_parse(&b, NULL, &err), XTTS_OK);
    assert_int_equal(xtts_melcache_batch_options_parse(&b, "", &err), XTTS_OK);
    assert_int_equal(b.cpu_engine, 0);
    assert_int_equal(xtts_melcache_batch_options_parse(&b, "engine=cpu,sub=3,buffer=7", &err), XTTS_OK);
    assert_int_equal(b.cpu_engine, 1);
    assert_int_equal(b.sub_batches, 3);
    assert_int_equal(b.buffer_records, 7);
    assert_int_equal(xtts_melcache_batch_options_parse(&b, "sub=64", &err), XTTS_OK);
    assert_int_equal(b.sub_batches, 64);
    assert_int_equal(b.buffer_records, 7); /* fields not named keep their values */
}

static void test_a_bad_batch_setting_is_a_usage_error_that_changes_nothing(void **state) {
    (void)state;
    const char *bad[] = {"engine=cuda", "engine", "cpu", "sub=0", "sub=65", "buffer=0", "buffer=1025", "sub=2,x=1",
                         "buffer=4k"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        xtts_melcache_batch_options b, d;
        xtts_melcache_batch_options_defaults(&b);
        d = b;
        xtts_error err;
        xtts_error_clear(&err);
        assert_int_equal(xtts_melcache_batch_options_parse(&b, bad[i], &err), XTTS_EUSAGE);
        assert_non_null(strstr(err.msg, XTTS_MELCACHE_BATCH_ENV));
        assert_memory_equal(&b, &d, sizeof b);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sixteen_threads_keep_the_cpu_path_at_every_measured_size),
        cmocka_unit_test(test_few_threads_take_the_gpu_path_for_a_large_build),
        cmocka_unit_test(test_a_small_build_stays_on_the_cpu_whatever_the_threads),
        cmocka_unit_test(test_the_crossover_is_at_fifteen_threads),
        cmocka_unit_test(test_threads_below_one_count_as_one),
        cmocka_unit_test(test_the_audio_is_estimated_from_the_record_count),
        cmocka_unit_test(test_the_environment_overrides_named_fields_only),
        cmocka_unit_test(test_a_bad_override_is_a_usage_error_that_changes_nothing),
        cmocka_unit_test(test_the_batch_settings_default_to_the_cpu_path_in_four_sub_batches),
        cmocka_unit_test(test_a_bad_batch_setting_is_a_usage_error_that_changes_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
