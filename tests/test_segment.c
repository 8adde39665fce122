/* test_segment.c — prep/segment/: the sentence splitter (abbreviations, quotes, decimals,
 * CJK marks, paragraphs, hard-wrapped lines, a text with no sentence end), the text checks,
 * the pairs list, and the DTW against alignments known by construction. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "prep/segment/segment.h"

static xtts_sentences split(const char *text) {
    xtts_sentences s;
    xtts_error err;
    assert_int_equal(xtts_sentences_split(text, strlen(text), &s, &err), XTTS_OK);
    return s;
}

static void expect_sentences(const char *text, int n, ...) {
    xtts_sentences s = split(text);
    va_list ap;
    va_start(ap, n);
    assert_int_equal((int)s.n, n);
    for (int k = 0; k < n; k++) assert_string_equal(s.s[k].text, va_arg(ap, const char *));
    va_end(ap);
    xtts_sentences_free(&s);
}

static void sentences_end_at_marks_not_at_abbreviations_or_decimals(void **state) {
    (void)state;
    expect_sentences("Mr. Smith paid 3.50 dollars. Dr. J. R. Jones did not! Why?", 3,
                     "Mr. Smith paid 3.50 dollars.", "Dr. J. R. Jones did not!", "Why?");
    expect_sentences("It was cheap, i.e. free. We took it, e.g. all of it.", 2, "It was cheap, i.e. free.",
                     "We took it, e.g. all of it.");
}

static void closing_quotes_stay_with_their_sentence(void **state) {
    (void)state;
    expect_sentences("He said \"Go home.\" Then he left. \xe2\x80\x9cReally?\xe2\x80\x9d she asked.", 3,
                     "He said \"Go home.\"", "Then he left.", "\xe2\x80\x9cReally?\xe2\x80\x9d she asked.");
}

static void an_ellipsis_before_a_lower_case_word_does_not_end_a_sentence(void **state) {
    (void)state;
    expect_sentences("Wait... then go. Stop\xe2\x80\xa6 Now.", 3, "Wait... then go.", "Stop\xe2\x80\xa6", "Now.");
}

static void cjk_marks_end_sentences_without_spaces(void **state) {
    (void)state;
    expect_sentences("\xe4\xbd\xa0\xe5\xa5\xbd\xe3\x80\x82\xe6\x88\x91\xe5\xbe\x88\xe5\xa5\xbd\xef\xbc\x81\xe5\x86\x8d\xe8\xa7\x81", 3,
                     "\xe4\xbd\xa0\xe5\xa5\xbd\xe3\x80\x82", "\xe6\x88\x91\xe5\xbe\x88\xe5\xa5\xbd\xef\xbc\x81",
                     "\xe5\x86\x8d\xe8\xa7\x81");
}

static void wrapped_lines_join_and_paragraphs_end_sentences(void **state) {
    (void)state;
    xtts_sentences s = split("The first line\nwraps here and a forty-\ntwo line Bible.\n\nA heading\n\nNext one.\n");
    assert_int_equal((int)s.n, 3);
    assert_string_equal(s.s[0].text, "The first line wraps here and a forty-two line Bible.");
    assert_string_equal(s.s[1].text, "A heading");
    assert_string_equal(s.s[2].text, "Next one.");
    assert_int_equal(s.s[0].line, 1);
    assert_int_equal(s.s[1].line, 5);
    assert_int_equal(s.s[2].line, 7);
    assert_int_equal(s.no_sentence_end, 0);
    xtts_sentences_free(&s);
}

static void a_text_without_sentence_ends_is_split_at_its_lines(void **state) {
    (void)state;
    xtts_sentences s = split("one line of words\nanother line\n");
    assert_int_equal(s.no_sentence_end, 1);
    assert_int_equal((int)s.n, 2);
    assert_string_equal(s.s[1].text, "another line");
    xtts_sentences_free(&s);
}

static void text_check_refuses_other_encodings_and_empty_text(void **state) {
    (void)state;
    xtts_error err;
    size_t skip;
    const char latin1[] = "caf\xe9 au lait.\n";
    assert_int_equal(xtts_segment_text_check(latin1, strlen(latin1), "t.txt", &skip, &err), XTTS_EINPUT);
    assert_non_null(strstr(err.msg, "not UTF-8"));
    const char utf16[] = "\xff\xfeh\0i\0";
    assert_int_equal(xtts_segment_text_check(utf16, 6, "t.txt", &skip, &err), XTTS_EINPUT);
    assert_non_null(strstr(err.msg, "UTF-16"));
    assert_int_equal(xtts_segment_text_check(" \n\n ...\n", 8, "t.txt", &skip, &err), XTTS_EINPUT);
    assert_non_null(strstr(err.msg, "no text"));
    assert_int_equal(xtts_segment_text_check("\xef\xbb\xbfHi.", 6, "t.txt", &skip, &err), XTTS_OK);
    assert_int_equal((int)skip, 3);
}

static void pairs_list_reads_two_or_three_fields_and_names_bad_lines(void **state) {
    (void)state;
    xtts_segment_pair *p;
    size_t n;
    xtts_error err;
    const char ok[] = "# a comment\na.wav\ta.txt\n\nb.flac\tb.txt\tDE\r\n";
    assert_int_equal(xtts_segment_pairs_parse(ok, strlen(ok), "l.tsv", &p, &n, &err), XTTS_OK);
    assert_int_equal((int)n, 2);
    assert_string_equal(p[1].audio, "b.flac");
    assert_string_equal(p[1].lang, "de");
    assert_int_equal(p[1].line, 4);
    xtts_segment_pairs_free(p, n);
    const char bad[] = "a.wav\ta.txt\nb.wav\n";
    assert_int_equal(xtts_segment_pairs_parse(bad, strlen(bad), "l.tsv", &p, &n, &err), XTTS_EINPUT);
    assert_non_null(strstr(err.msg, "l.tsv:2:"));
    assert_int_equal(xtts_segment_pairs_parse("", 0, "l.tsv", &p, &n, &err), XTTS_EINPUT);
}

/* A random sequence of dim-3 "speech" frames. */
static float *random_frames(size_t n, uint64_t seed) {
    float *x = malloc(n * 3 * sizeof *x);
    for (size_t i = 0; i < n * 3; i++) x[i] = (float)((xtts_splitmix64(&seed) >> 40) / (double)(1 << 24) * 4 - 2);
    return x;
}

/* The recording is the reference with every frame said twice, an unrelated stretch inserted
 * at frame 100 (speech not in the text), and reference frames 200..259 never said. */
static void dtw_maps_a_stretched_copy_and_goes_round_what_is_not_in_both(void **state) {
    (void)state;
    const size_t nr = 400, extra = 80;
    float *ref = random_frames(nr, 1), *noise = random_frames(extra, 2);
    size_t nc = 0;
    float *rec = malloc((2 * nr + extra) * 3 * sizeof *rec);
    size_t *where = malloc(nr * sizeof *where);
    for (size_t i = 0; i < nr; i++) {
        if (i == 100)
            for (size_t k = 0; k < extra; k++, nc++) memcpy(rec + nc * 3, noise + k * 3, 3 * sizeof *rec);
        where[i] = nc;
        if (i >= 200 && i < 260) continue;
        for (int r = 0; r < 2; r++, nc++) memcpy(rec + nc * 3, ref + i * 3, 3 * sizeof *rec);
    }
    uint8_t *zero = calloc(2 * nr + extra, 1);
    xtts_dtw_params p;
    xtts_dtw_params_default(&p, 3);
    p.window_ref = 128; /* several windows */
    p.gap_cost = 0.8;
    xtts_dtw_seq a = {ref, zero, nr, NULL, NULL}, b = {rec, zero, nc, NULL, NULL};
    int32_t *map = malloc(nr * sizeof *map);
    float *dist = malloc(nr * sizeof *dist);
    xtts_error err;
    assert_int_equal(xtts_dtw_align(&p, &a, &b, map, dist, &err), XTTS_OK);
    size_t right = 0, gaps = 0;
    for (size_t i = 0; i < nr; i++) {
        int unsaid = i >= 200 && i < 260;
        if (unsaid) gaps += dist[i] >= (float)p.gap_cost;
        else right += map[i] == (int32_t)where[i] && dist[i] < 1e-6f;
        if (i) assert_true(map[i] >= map[i - 1]); /* monotone */
    }
    assert_true(right >= nr - 60 - 4); /* a frame or two at each edge of a gap may differ */
    assert_true(gaps >= 56);
    free(ref), free(noise), free(rec), free(where), free(zero), free(map), free(dist);
}

static void span_cost_prefers_the_order_of_the_sounds(void **state) {
    (void)state;
    float *x = random_frames(50, 3);
    uint8_t zero[50] = {0};
    xtts_dtw_params p;
    xtts_dtw_params_default(&p, 3);
    xtts_dtw_seq s = {x, zero, 50, NULL, NULL};
    double fwd = xtts_dtw_span_cost(&p, &s, 0, 50, &s, 0, 50, 0);
    double rev = xtts_dtw_span_cost(&p, &s, 0, 50, &s, 0, 50, 1);
    assert_true(fwd < 1e-9);
    assert_true(rev > 0.5);
    assert_true(isinf(xtts_dtw_span_cost(&p, &s, 0, 50, &s, 0, 10, 0))); /* five times shorter: no path */
    free(x);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sentences_end_at_marks_not_at_abbreviations_or_decimals),
        cmocka_unit_test(closing_quotes_stay_with_their_sentence),
        cmocka_unit_test(an_ellipsis_before_a_lower_case_word_does_not_end_a_sentence),
        cmocka_unit_test(cjk_marks_end_sentences_without_spaces),
        cmocka_unit_test(wrapped_lines_join_and_paragraphs_end_sentences),
        cmocka_unit_test(a_text_without_sentence_ends_is_split_at_its_lines),
        cmocka_unit_test(text_check_refuses_other_encodings_and_empty_text),
        cmocka_unit_test(pairs_list_reads_two_or_three_fields_and_names_bad_lines),
        cmocka_unit_test(dtw_maps_a_stretched_copy_and_goes_round_what_is_not_in_both),
        cmocka_unit_test(span_cost_prefers_the_order_of_the_sounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
