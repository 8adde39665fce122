/* test_numbers_spoken.c — the spoken number words (prep/text/normalize/numbers.h: cardinals in
 * their three forms, ordinals, English years, digit strings) against
 * tests/golden/numbers_spoken_golden.tsv, which holds what they said before they were written
 * with the num2words code (tests/golden/make_numbers_spoken_golden.sh; the whole comparison is
 * scripts/dev/numbers-compare.sh). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/xtts_common.h"
#include "prep/text/normalize/numbers.h"

/* Calls what the line names; -2 for a name this test does not know. */
static int say(const char *what, int lang, const char *in, xtts_sb *b) {
    uint64_t v = strtoull(in, NULL, 10);
    if (!strcmp(what, "cardinal")) return xtts_num_cardinal(lang, v, XTTS_NUM_MASC, b);
    if (!strcmp(what, "cardinal_fem")) return xtts_num_cardinal(lang, v, XTTS_NUM_FEM, b);
    if (!strcmp(what, "cardinal_noun")) return xtts_num_cardinal(lang, v, XTTS_NUM_BEFORE_NOUN, b);
    if (!strcmp(what, "ordinal")) return xtts_num_ordinal(lang, v, 0, b);
    if (!strcmp(what, "ordinal_fem")) return xtts_num_ordinal(lang, v, 1, b);
    if (!strcmp(what, "year_en")) return xtts_num_year_en(v, b);
    if (!strcmp(what, "digits")) return xtts_num_digits(lang, in, strlen(in), b);
    return -2;
}

static void spoken_words_equal_the_golden_file(void **state) {
    (void)state;
    FILE *f = fopen("tests/golden/numbers_spoken_golden.tsv", "r");
    assert_non_null(f);
    char line[4096];
    int lines = 0, bad = 0;
    xtts_sb b = {0};
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        char *field[5];
        char *p = line;
        for (int i = 0; i < 5; i++) {
            field[i] = p;
            p = i < 4 ? strchr(p, '\t') : NULL;
            if (i < 4) {
                assert_non_null(p);
                *p++ = 0;
            }
        }
        int lang = xtts_lang_index(field[1]);
        assert_true(lang >= 0);
        xtts_sb_clear(&b);
        int rc = say(field[0], lang, field[2], &b);
        assert_int_not_equal(rc, -2);
        if (rc != atoi(field[3]) || b.len != strlen(field[4]) || (b.len && memcmp(b.s, field[4], b.len))) {
            print_error("%s %s %s: got %d '%.*s', want %s '%s'\n", field[0], field[1], field[2], rc, (int)b.len,
                        b.s ? b.s : "", field[3], field[4]);
            bad++;
        }
        lines++;
    }
    fclose(f);
    xtts_sb_free(&b);
    assert_true(lines > 2000);
    assert_int_equal(bad, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(spoken_words_equal_the_golden_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
