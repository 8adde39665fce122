/* test_zh_numbers.c — Chinese numbers of --normalize xtts (prep/text/normalize/zh_numbers.h) against
 * Coqui XTTS's own code: tests/golden/zh_numbers_golden.tsv holds, for each input, the output
 * of TextNorm() from TTS/tts/layers/xtts/zh_num2words.py (v0.22.0) and of
 * VoiceBpeTokenizer.preprocess_text(text, "zh") (cleaners, TextNorm, pypinyin), written by
 * tests/golden/make_zh_numbers_golden.py. Every row must be equal, in both columns. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/xtts_common.h"
#include "prep/text/normalize/xtts_text.h"
#include "prep/text/normalize/zh_numbers.h"

#define GOLDEN "tests/golden/zh_numbers_golden.tsv"

static char *norm(const char *in, size_t n, xtts_status *st, xtts_error *err) {
    xtts_sb o = {0};
    *st = xtts_zh_numbers_normalize(in, n, &o, err);
    return xtts_sb_cstr(&o);
}

static void test_golden_rows_equal_coqui(void **s) {
    (void)s;
    char *buf;
    size_t len;
    xtts_error err;
    if (xtts_read_file(GOLDEN, 1 << 22, &buf, &len, &err)) fail_msg("%s", err.msg);
    int rows = 0, bad_norm = 0, bad_xtts = 0;
    char *save = NULL;
    for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (!strncmp(line, "# input\t", 8)) continue; /* the header ("#1" is an input) */
        char *f[3] = {line, NULL, NULL};
        for (int i = 1; i < 3; i++) {
            char *t = strchr(f[i - 1], '\t');
            assert_non_null(t);
            *t = 0;
            f[i] = t + 1;
        }
        rows++;
        xtts_status st;
        char *got = norm(f[0], strlen(f[0]), &st, &err);
        if (st != XTTS_OK || strcmp(got, f[1])) {
            print_error("TextNorm '%s'\n   got '%s'\n  want '%s'\n", f[0], st ? err.msg : got, f[1]);
            bad_norm++;
        }
        free(got);
        char *out = NULL;
        st = xtts_text_prepare(f[0], strlen(f[0]), "zh-cn", &out, &err);
        if (st != XTTS_OK || strcmp(out, f[2])) {
            print_error("preprocess_text '%s'\n   got '%s'\n  want '%s'\n", f[0], st ? err.msg : out, f[2]);
            bad_xtts++;
        }
        free(out);
    }
    free(buf);
    printf("%s: TextNorm %d/%d rows equal to Coqui's, preprocess_text (zh) %d/%d\n", GOLDEN, rows - bad_norm, rows,
           rows - bad_xtts, rows);
    assert_true(rows >= 300);
    assert_int_equal(bad_norm, 0);
    assert_int_equal(bad_xtts, 0);
}

static void expect(const char *in, const char *want) {
    xtts_error err;
    xtts_status st;
    char *got = norm(in, strlen(in), &st, &err);
    assert_int_equal(st, XTTS_OK);
    if (strcmp(got, want)) print_error("'%s'\n   got '%s'\n  want '%s'\n", in, got, want);
    assert_string_equal(got, want);
    free(got);
}

/* One case per step, and the quirks that come from replacing first occurrences. */
static void test_each_step(void **s) {
    (void)s;
    expect("2024\xe5\xb9\xb4" "5\xe6\x9c\x88" "3\xe6\x97\xa5", /* 2024年5月3日 */
           "\xe4\xba\x8c\xe9\x9b\xb6\xe4\xba\x8c\xe5\x9b\x9b\xe5\xb9\xb4\xe4\xba\x94\xe6\x9c\x88\xe4\xb8\x89\xe6\x97\xa5");
    expect("3\xe5\x85\x83" "5\xe8\xa7\x92", "\xe4\xb8\x89\xe5\x85\x83\xe4\xba\x94\xe8\xa7\x92"); /* 3元5角 三元五角 */
    expect("3/4", "\xe5\x9b\x9b\xe5\x88\x86\xe4\xb9\x8b\xe4\xb8\x89");                        /* 四分之三 */
    expect("14%", "\xe7\x99\xbe\xe5\x88\x86\xe4\xb9\x8b\xe5\x8d\x81\xe5\x9b\x9b");           /* 百分之十四 */
    expect("2000\xe4\xb8\xaa", "\xe4\xb8\xa4\xe5\x8d\x83\xe4\xb8\xaa");                     /* 2000个 两千个 */
    expect("1234", "\xe4\xb8\x80\xe4\xba\x8c\xe4\xb8\x89\xe5\x9b\x9b");                     /* 一二三四 */
    expect("10.5", "\xe5\x8d\x81\xe7\x82\xb9\xe4\xba\x94");                                 /* 十点五 */
    expect("00.5", "\xe9\x9b\xb6\xe7\x82\xb9\xe4\xba\x94");                                 /* 零点五 */
    expect("p2p", "p2p");
    /* "3" found before 个 replaces the first "3" of the text, the one of 13 */
    expect("\xe7\xac\xac" "13\xe5\x8f\xb7\xe6\x9c\x89" "3\xe4\xb8\xaa", /* 第13号有3个 */
           "\xe7\xac\xac\xe4\xb8\x80\xe4\xb8\x89\xe5\x8f\xb7\xe6\x9c\x89\xe4\xb8\x89\xe4\xb8\xaa");
    /* punctuation becomes ','; the frame's '^' and '$' take the text's own with them */
    expect("\xe4\xbd\xa0\xe5\xa5\xbd\xef\xbc\x8c\"a\"\xe3\x80\x82", "\xe4\xbd\xa0\xe5\xa5\xbd,,a,,");
    expect("^^a$b$$", "a,b");
    expect("", "");
    /* zeros alone read as nothing (a fuzz finding: an empty replacement) */
    expect("a000b", "ab");
    expect("00\xe4\xb8\xaa", "\xe4\xb8\xaa"); /* 00个 -> 个 */
}

static void test_limits_and_bad_bytes(void **s) {
    (void)s;
    xtts_error err;
    xtts_status st;
    /* a number read with units beyond XTTS_ZH_MAX_DIGITS is refused in one line */
    size_t n = XTTS_ZH_MAX_DIGITS + 1;
    char *big = malloc(n + 4);
    assert_non_null(big);
    memset(big, '7', n);
    memcpy(big + n, "\xe4\xb8\xaa", 3); /* 个 */
    char *got = norm(big, n + 3, &st, &err);
    assert_int_equal(st, XTTS_EINPUT);
    assert_non_null(strstr(err.msg, "digits"));
    assert_null(strchr(err.msg, '\n'));
    free(got);
    char *out = NULL;
    assert_int_equal(xtts_text_prepare(big, n + 3, "zh-cn", &out, &err), XTTS_EINPUT);
    assert_null(out);
    /* as many digits without a measure word are read one by one: no limit */
    got = norm(big, n, &st, &err);
    assert_int_equal(st, XTTS_OK);
    free(got);
    /* the longest accepted reads with units: 载 (10^44) appears */
    memset(big, '1', XTTS_ZH_MAX_DIGITS);
    memcpy(big + XTTS_ZH_MAX_DIGITS, "\xe4\xb8\xaa", 3);
    got = norm(big, XTTS_ZH_MAX_DIGITS + 3, &st, &err);
    assert_int_equal(st, XTTS_OK);
    assert_non_null(strstr(got, "\xe8\xbd\xbd"));
    free(got);
    free(big);
    /* bytes that are not UTF-8 pass through, NULs too */
    const char bad[] = "\xff" "12\xe4\xb8\xaa\xc3\x00" "3";
    got = norm(bad, sizeof bad - 1, &st, &err);
    assert_int_equal(st, XTTS_OK);
    assert_memory_equal(got, "\xff\xe5\x8d\x81\xe4\xba\x8c\xe4\xb8\xaa\xc3\x00\xe4\xb8\x89", 15);
    free(got);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_rows_equal_coqui),
        cmocka_unit_test(test_each_step),
        cmocka_unit_test(test_limits_and_bad_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
