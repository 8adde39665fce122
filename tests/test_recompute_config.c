/* test_recompute_config.c — xtts-cache-verify --recompute builds its decoder and mel from
 * the configuration a cache's manifest holds; the checks it passes through are those of
 * xtts-melcache's options, whose failures are usage errors (exit 1). Read from a file, the
 * same failure is an input error (exit 2): XTTS_EINPUT, naming the configuration. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "formats/manifest.h"
#include "prep/melcache/recompute.h"

static void test_a_configuration_the_option_checks_refuse_is_an_input_error(void **state) {
    (void)state;
    xtts_cache_config cfg;
    xtts_cache_config_defaults(&cfg);
    snprintf(cfg.resampler, sizeof cfg.resampler, "bogus");
    xtts_record_header h;
    memset(&h, 0, sizeof h);
    float mel[4] = {0};
    double max_abs = -1;
    xtts_error err;
    xtts_error_clear(&err);
    xtts_status st = xtts_recompute_record(&cfg, "/nonexistent.wav", &h, mel, 1, NULL, &max_abs, NULL, &err);
    assert_int_equal(st, XTTS_EINPUT);
    assert_int_equal(xtts_exit_code(st), 2);
    assert_non_null(strstr(err.msg, "the cache's configuration: "));
    assert_non_null(strstr(err.msg, "bogus"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_configuration_the_option_checks_refuse_is_an_input_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
