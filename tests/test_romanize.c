/* test_romanize.c — xtts_romanize (prep/text/romanize/romanize.h) against the reference libraries XTTS
 * calls: tests/golden/romanize_golden.tsv (and romanize_heldout.tsv, sentences written after
 * the implementation) hold what hangul_romanize (ko) and pypinyin (zh-cn) give, computed from
 * their fetched sources by tests/golden/make_romanize_golden.py; romanize_ja_golden.tsv and
 * romanize_ja_heldout.tsv what XTTS's japanese_cleaners give (cutlet over MeCab and Debian's
 * UniDic, lowercased; tests/golden/make_romanize_ja_golden.py). Also hangul_romanize's own
 * test cases, pypinyin's documented examples, and malformed input. The ja tests skip, saying
 * why, where no UniDic dictionary is installed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/xtts_common.h"
#include "prep/text/romanize/romanize.h"
#include "prep/text/normalize/xtts_text.h"

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

/* Japanese through the whole --normalize xtts path (romanized, lowercased), every line of one
 * golden file; returns the agreement. */
static void check_ja_file(const char *name, double min) {
    const char *why = xtts_romanize_ja_unavailable();
    if (why) {
        print_message("skipped: %s\n", why);
        skip();
    }
    char *buf;
    size_t len;
    xtts_error err;
    if (xtts_read_file(name, 1 << 24, &buf, &len, &err)) fail_msg("%s", err.msg);
    int n = 0, ok = 0;
    char *save = NULL;
    for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *want = strchr(line, '\t');
        assert_non_null(want);
        *want++ = 0;
        char *got = NULL;
        assert_int_equal(xtts_text_prepare(line, strlen(line), "ja", &got, &err), XTTS_OK);
        n++;
        if (!strcmp(got, want)) ok++;
        else print_message("%s: '%s': got '%s', want '%s'\n", name, line, got, want);
        free(got);
    }
    free(buf);
    print_message("%s: ja %d/%d agree\n", name, ok, n);
    assert_true(n >= 100);
    assert_true(ok >= min * n);
}

static void test_ja_golden(void **state) {
    (void)state;
    check_ja_file(GOLDEN_DIR "romanize_ja_golden.tsv", 0.99);
}

static void test_ja_heldout(void **state) {
    (void)state;
    check_ja_file(GOLDEN_DIR "romanize_ja_heldout.tsv", 0.95);
}

/* cutlet's own expectations (cutlet/test/test_basic.py) where Debian's UniDic 3.1.1 reads the
 * text as the UniDic 2.1.2 of cutlet's tests does, lowercased; and the failures the reference
 * has (a kana with no romaji) rejected with the reason. */
static void test_ja_reference_cases(void **state) {
    (void)state;
    const char *why = xtts_romanize_ja_unavailable();
    if (why) {
        print_message("skipped: %s\n", why);
        skip();
    }
    static const char *const cases[][2] = {
        {"新橋", "shinbashi"}, {"学校", "gakkou"}, {"カレー", "curry"}, {"繊維", "sen'i"},
        {"抹茶", "matcha"}, {"ポール", "paul"}, {"あっ", "a"},
        {"括弧は「こう」でなくちゃ", "kakko wa \"kou\" de nakucha"},
        {"本を読みました。", "hon wo yomimashita."},
        {"カツカレーは美味しい", "cutlet curry wa oishii"},
        {"東京タワーの高さは333mです", "tokyo tower no takasa wa 333m desu"},
        {"やっちゃった！", "yacchatta!"}, {"ｃｕｔｌｅｔ２３", "cutlet23"}, {"панда", "?????"},
        {"ﾎﾟｰﾙ", "paul"}, {"プラトーーーン", "puratoo--n"}, {"ずっーと", "zu--to"},
        {"McDonald's", "mcdonald's"}, {"[04:30.748]", "[04:30.748]"}, {"", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *got = NULL;
        xtts_error err;
        assert_int_equal(xtts_text_prepare(cases[i][0], strlen(cases[i][0]), "ja", &got, &err), XTTS_OK);
        if (strcmp(got, cases[i][1])) fail_msg("ja '%s': got '%s', want '%s'", cases[i][0], got, cases[i][1]);
        free(got);
    }
    /* not UTF-8: rejected, not guessed */
    char *got = NULL;
    xtts_error err;
    assert_int_equal(xtts_text_prepare("\xff\xfe", 2, "ja", &got, &err), XTTS_EINPUT);
    assert_non_null(strstr(err.msg, "UTF-8"));
    free(got);
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

/* --normalize xtts calls it after the cleaners for ko and zh (prep/text/normalize/xtts_text.c), and
 * instead of them for ja (reported as unsupported, with the reason, without a dictionary). */
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
    if (xtts_romanize_ja_unavailable()) {
        assert_int_equal(xtts_text_prepare("こんにちは", strlen("こんにちは"), "ja", &out, &err), XTTS_EUNSUPPORTED);
        assert_non_null(strstr(err.msg, "UniDic"));
    } else {
        assert_int_equal(xtts_text_prepare("こんにちは", strlen("こんにちは"), "ja", &out, &err), XTTS_OK);
        assert_string_equal(out, "konnichiha"); /* as cutlet reads it (kana ハ) */
    }
    free(out);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ko_reference_cases),
        cmocka_unit_test(test_zh_reference_cases),
        cmocka_unit_test(test_golden),
        cmocka_unit_test(test_heldout),
        cmocka_unit_test(test_ja_reference_cases),
        cmocka_unit_test(test_ja_golden),
        cmocka_unit_test(test_ja_heldout),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_normalize_xtts_romanizes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
