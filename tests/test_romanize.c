/* test_romanize.c — xtts_romanize (prep/text/romanize.h) against the reference libraries XTTS
 * calls: tests/golden/romanize_golden.tsv (and romanize_heldout.tsv, sentences written after
 * the implementation) hold what hangul_romanize (ko) and pypinyin (zh-cn) give, computed from
 * their fetched sources by tests/golden/make_romanize_golden.py. Also hangul_romanize's own
 * test cases, pypinyin's documented examples, and malformed input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/xtts_common.h"
#include "prep/text/romanize.h"
#include "prep/text/xtts_text.h"

#define GOLDEN_DIR "tests/golden/"

static char *rz(const char *s, size_t n, const char *lang, int *rc) {
    xtts_sb b = {0};
    *rc = xtts_romanize(s, n, lang, &b);
    assert_false(b.failed);
    if (!b.s) { b.s = malloc(1); b.s[0] = 0; }
    return b.s;
}

static void expect(const char *lang, const char *in, const char *want) {
    int rc;
    char *got = rz(in, strlen(in), lang, &rc);
    assert_int_equal(rc, 0);
    if (strcmp(got, want)) fail_msg("%s '%s': got '%s', want '%s'", lang, in, got, want);
    free(got);
}

/* Compares every row of one golden file; prints the agreement per language. */
static void check_file(const char *name, double min_ko, double min_zh) {
    char *buf;
    size_t len;
    xtts_error err;
    if (xtts_read_file(name, 1 << 24, &buf, &len, &err)) fail_msg("%s", err.msg);
    int n[2] = {0, 0}, ok[2] = {0, 0};
    char *save = NULL;
    for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *in = strchr(line, '\t');
        assert_non_null(in);
        *in++ = 0;
        char *want = strchr(in, '\t');
        assert_non_null(want);
        *want++ = 0;
        int k = !strcmp(line, "ko") ? 0 : 1, rc;
        char *got = rz(in, strlen(in), line, &rc);
        assert_int_equal(rc, 0);
        n[k]++;
        if (!strcmp(got, want)) ok[k]++;
        else print_message("%s: %s '%s': got '%s', want '%s'\n", name, line, in, got, want);
        free(got);
    }
    free(buf);
    print_message("%s: ko %d/%d, zh-cn %d/%d agree\n", name, ok[0], n[0], ok[1], n[1]);
    assert_true(n[0] >= 20 && n[1] >= 20);
    assert_true(ok[0] >= min_ko * n[0]);
    assert_true(ok[1] >= min_zh * n[1]);
}

static void test_golden(void **state) {
    (void)state;
    check_file(GOLDEN_DIR "romanize_golden.tsv", 0.99, 0.99);
}

static void test_heldout(void **state) {
    (void)state;
    check_file(GOLDEN_DIR "romanize_heldout.tsv", 0.95, 0.95);
}

/* hangul_romanize's tests/academic_test.py cases. */
static void test_ko_reference_cases(void **state) {
    (void)state;
    static const char *const cases[][2] = {
        {"", ""}, {"가", "ga"}, {"힣", "hih"}, {"밝", "balg"}, {"밯망희", "bahmanghui"},
        {"안녕하세요", "annyeonghase-yo"}, {"집", "jib"}, {"짚", "jip"}, {"밖", "bakk"},
        {"값", "gabs"}, {"붓꽃", "buskkoch"}, {"먹는", "meogneun"}, {"독립", "doglib"},
        {"문리", "munli"}, {"물엿", "mul-yeos"}, {"굳이", "gud-i"}, {"좋다", "johda"},
        {"가곡", "gagog"}, {"조랑말", "jolangmal"}, {"없었습니다", "eobs-eoss-seubnida"},
        {"띄고 문장부호! 있고!? @#())$#@()", "ttuigo munjangbuho! issgo!? @#())$#@()"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) expect("ko", cases[i][0], cases[i][1]);
}

/* pypinyin's documented examples (README / pinyin() docstring), in TONE3 with 5. */
static void test_zh_reference_cases(void **state) {
    (void)state;
    expect("zh-cn", "中心", "zhong1xin1");
    expect("zh-cn", "衣裳", "yi1shang5");
    expect("zh-cn", "", "");
    expect("zh-cn", "abc, 123!", "abc, 123!");
}

static void test_bad_input(void **state) {
    (void)state;
    static const char *const langs[] = {"ko", "zh-cn"};
    static const char bad[][8] = {"\xff", "\xe4\xbd", "\xed\xa0\x80", "\xc0\xaf", "\xf4\x90\x80\x80"};
    for (int l = 0; l < 2; l++)
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            int rc;
            char *got = rz(bad[i], strlen(bad[i]), langs[l], &rc);
            assert_int_equal(rc, 0);
            assert_string_equal(got, bad[i]); /* malformed bytes are copied through */
            free(got);
        }
    xtts_sb b = {0};
    assert_int_equal(xtts_romanize("x", 1, "fr", &b), -1);
    assert_int_equal(xtts_romanize("x", 1, NULL, &b), -1);
    assert_null(b.s);
    /* a length shorter than the string: only those bytes are read */
    int rc;
    char *got = rz("가나", 3, "ko", &rc);
    assert_string_equal(got, "ga");
    free(got);
}

/* --normalize xtts calls it after the cleaners for ko and zh (prep/text/xtts_text.c); ja is
 * reported as unsupported while it is not in the build. */
static void test_normalize_xtts_romanizes(void **state) {
    (void)state;
    static const char *const cases[][3] = {
        {"ko", "안녕하세요, 물엿!", "annyeonghase-yo, mul-yeos!"},
        /* Coqui's zh number normalizer, before pinyin, makes every punctuation mark ',' */
        {"zh", "银行行长来了。", "yin2hang2hang2zhang3lai2le5,"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *out = NULL;
        xtts_error err;
        assert_int_equal(xtts_text_prepare(cases[i][1], strlen(cases[i][1]), cases[i][0], &out, &err), XTTS_OK);
        assert_string_equal(out, cases[i][2]);
        free(out);
    }
    char *out = NULL;
    xtts_error err;
    assert_int_equal(xtts_text_prepare("こんにちは", strlen("こんにちは"), "ja", &out, &err), XTTS_EUNSUPPORTED);
    free(out);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ko_reference_cases),
        cmocka_unit_test(test_zh_reference_cases),
        cmocka_unit_test(test_golden),
        cmocka_unit_test(test_heldout),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_normalize_xtts_romanizes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
