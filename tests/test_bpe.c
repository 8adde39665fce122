/* test_bpe.c — the BPE tokenizer (prep/text/tokenizer/bpe.c) against Hugging Face tokenizers' ids
 * (tests/golden/bpe_golden.tsv, written by tests/golden/make_bpe_golden.js), the XTTS
 * formatting of xtts_tokenizer_encode, and the refusal of broken vocabularies. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "prep/text/tokenizer/tokenizer.h"
#include "prep/text/tokenizer/tokenizer_internal.h"

#define GOLDEN_DIR "tests/golden/"

static char *unescape_line(const char *s) {
    char *out = malloc(strlen(s) + 1), *w = out;
    for (; *s; s++) {
        if (*s == '\\' && s[1]) {
            s++;
            *w++ = *s == 't' ? '\t' : *s == 'n' ? '\n' : *s == 'r' ? '\r' : *s;
        } else {
            *w++ = *s;
        }
    }
    *w = 0;
    return out;
}

static char **read_lines(const char *path, size_t *n) {
    char *buf;
    size_t len;
    xtts_error err;
    if (xtts_read_file(path, 1 << 24, &buf, &len, &err)) fail_msg("%s", err.msg);
    size_t cap = 64;
    char **lines = malloc(cap * sizeof *lines);
    *n = 0;
    char *p = buf;
    while (*p) {
        char *nl = strchr(p, '\n');
        if (nl) *nl = 0;
        if (*n == cap) lines = realloc(lines, (cap *= 2) * sizeof *lines);
        lines[(*n)++] = strdup(p);
        if (!nl) break;
        p = nl + 1;
    }
    free(buf);
    return lines;
}

static void free_lines(char **l, size_t n) {
    for (size_t i = 0; i < n; i++) free(l[i]);
    free(l);
}

static void check_golden(const char *vocab_name) {
    size_t n_lines, n_gold;
    char **lines = read_lines(GOLDEN_DIR "bpe_lines.txt", &n_lines);
    char **gold = read_lines(GOLDEN_DIR "bpe_golden.tsv", &n_gold);
    char path[256];
    snprintf(path, sizeof path, GOLDEN_DIR "%s", vocab_name);
    xtts_bpe *b;
    xtts_error err;
    if (xtts_bpe_open(path, &b, &err)) fail_msg("%s", err.msg);
    xtts_ids ids = {0};
    size_t checked = 0, bad = 0;
    for (size_t g = 0; g < n_gold; g++) {
        char *f1 = strchr(gold[g], '\t');
        if (!f1) continue;
        *f1 = 0;
        if (strcmp(gold[g], vocab_name)) { *f1 = '\t'; continue; }
        char *f2 = strchr(f1 + 1, '\t');
        assert_non_null(f2);
        size_t idx = strtoul(f1 + 1, NULL, 10);
        *f1 = '\t';
        assert_true(idx < n_lines);
        char *text = unescape_line(lines[idx]);
        ids.n = 0;
        assert_int_equal(xtts_bpe_encode(b, text, &ids, &err), XTTS_OK);
        char got[16384];
        size_t k = 0;
        got[0] = 0;
        for (size_t i = 0; i < ids.n && k + 16 < sizeof got; i++) k += (size_t)snprintf(got + k, sizeof got - k, i ? " %d" : "%d", ids.ids[i]);
        if (strcmp(got, f2 + 1)) {
            if (bad < 5) print_error("%s line %zu '%s'\n  got  %s\n  want %s\n", vocab_name, idx, lines[idx], got, f2 + 1);
            bad++;
        }
        free(text);
        checked++;
    }
    free(ids.ids);
    xtts_bpe_close(b);
    free_lines(lines, n_lines);
    free_lines(gold, n_gold);
    assert_true(checked >= 200);
    assert_int_equal(bad, 0);
}

static void test_whitespace_bpe_ids_equal_hf_tokenizers_on_every_golden_line(void **s) {
    (void)s;
    check_golden("bpe_xtts.json");
}

static void test_bytelevel_bpe_ids_equal_hf_tokenizers_on_every_golden_line(void **s) {
    (void)s;
    check_golden("bpe_bytelevel.json");
}

static void test_repeated_merges_bpe_ids_equal_hf_tokenizers_on_every_golden_line(void **s) {
    (void)s;
    check_golden("bpe_repeat.json");
}

/* A pair listed twice keeps the rank of its last listing. Hugging Face tokenizers (npm
 * tokenizers 0.23) gives [a, bc] = [0, 4] for "abc" with merges "a b", "b c", "a b", and
 * [ab, c] = [3, 2] without the third line. */
static void test_a_merge_listed_twice_keeps_its_last_rank(void **s) {
    (void)s;
    const char *with = "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1, \"c\": 2, \"ab\": 3, \"bc\": 4},"
                       " \"merges\": [\"a b\", \"b c\", \"a b\"]}}";
    const char *without = "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1, \"c\": 2, \"ab\": 3, \"bc\": 4},"
                          " \"merges\": [\"a b\", \"b c\"]}}";
    const char *json[2] = {with, without};
    const int32_t want[2][2] = {{0, 4}, {3, 2}};
    for (int k = 0; k < 2; k++) {
        xtts_bpe *b;
        xtts_error err;
        assert_int_equal(xtts_bpe_open_buffer(json[k], strlen(json[k]), "v", &b, &err), XTTS_OK);
        xtts_ids ids = {0};
        assert_int_equal(xtts_bpe_encode(b, "abc", &ids, &err), XTTS_OK);
        assert_int_equal(ids.n, 2);
        assert_int_equal(ids.ids[0], want[k][0]);
        assert_int_equal(ids.ids[1], want[k][1]);
        /* long words take the heap path: the same answer on "abc" repeated */
        ids.n = 0;
        char longw[3 * 40 + 1];
        for (int i = 0; i < 40; i++) memcpy(longw + 3 * i, "abc", 3);
        longw[120] = 0;
        assert_int_equal(xtts_bpe_encode(b, longw, &ids, &err), XTTS_OK);
        assert_int_equal(ids.n, 80);
        for (size_t i = 0; i < ids.n; i++) assert_int_equal(ids.ids[i], want[k][i % 2]);
        free(ids.ids);
        xtts_bpe_close(b);
    }
}

/* XTTS's real vocabulary (coqui-ai/TTS tests/inputs/xtts_vocab.json, not committed): at
 * $XTTS_VOCAB or tests/golden/xtts_vocab.json; skipped with a message when absent. */
static void test_real_xtts_vocabulary_ids_equal_hf_tokenizers(void **s) {
    (void)s;
    const char *path = getenv("XTTS_VOCAB");
    if (!path || !*path) path = GOLDEN_DIR "xtts_vocab.json";
    FILE *f = fopen(path, "rb");
    if (!f) {
        print_message("SKIPPED: XTTS's vocabulary is not at %s (set XTTS_VOCAB; see tests/golden/make_xtts_vocab_golden.js)\n", path);
        skip();
    }
    fclose(f);
    size_t n;
    char **gold = read_lines(GOLDEN_DIR "xtts_vocab_golden.tsv", &n);
    assert_true(n > 1 && !strncmp(gold[0], "#vocab\t", 7));
    char hex[72];
    xtts_error err;
    assert_int_equal(xtts_sha256_file(path, hex, &err), XTTS_OK);
    if (strncmp(gold[0] + 7, "sha256:", 7) || strcmp(gold[0] + 14, hex)) {
        print_message("SKIPPED: %s is not the vocabulary of the golden file (%s)\n", path, gold[0] + 7);
        free_lines(gold, n);
        skip();
    }
    xtts_tokenizer *t, *strict;
    assert_int_equal(xtts_tokenizer_open("bpe", path, &t, &err), XTTS_OK);
    assert_int_equal(xtts_tokenizer_open("bpe", path, &strict, &err), XTTS_OK);
    assert_true(xtts_tokenizer_is_xtts(t));
    xtts_tokenizer_set_allow_unk(t, 1);
    xtts_bpe *b;
    assert_int_equal(xtts_bpe_open(path, &b, &err), XTTS_OK);
    int unk = xtts_bpe_unk_id(b);
    xtts_bpe_close(b);
    assert_true(unk >= 0);
    xtts_ids ids = {0};
    size_t bad = 0, with_unk = 0, langs = 0;
    char last_lang[16] = "";
    for (size_t i = 1; i < n; i++) {
        char *lang = gold[i], *text = strchr(lang, '\t');
        assert_non_null(text);
        *text++ = 0;
        char *want = strchr(text, '\t');
        assert_non_null(want);
        *want++ = 0;
        if (strcmp(lang, last_lang)) { langs++; snprintf(last_lang, sizeof last_lang, "%s", lang); }
        int l = xtts_lang_index(lang);
        assert_true(l >= 0);
        assert_int_equal(xtts_tokenizer_encode(t, text, l, &ids, &err), XTTS_OK);
        char got[16384];
        size_t k = 0;
        got[0] = 0;
        int has_unk = 0;
        for (size_t j = 0; j < ids.n && k + 16 < sizeof got; j++) {
            k += (size_t)snprintf(got + k, sizeof got - k, j ? " %d" : "%d", ids.ids[j]);
            has_unk |= ids.ids[j] == unk;
        }
        if (strcmp(got, want)) {
            if (bad < 5) print_error("%s '%s'\n  got  %s\n  want %s\n", lang, text, got, want);
            bad++;
        }
        /* without --allow-unk a sentence holding [UNK] is refused, naming its characters */
        xtts_status st = xtts_tokenizer_encode(strict, text, l, &ids, &err);
        if (has_unk) {
            with_unk++;
            assert_int_equal(st, XTTS_EINPUT);
            if (!strstr(err.msg, "characters not in the vocabulary: '")) fail_msg("%s: %s", text, err.msg);
        } else {
            assert_int_equal(st, XTTS_OK);
        }
    }
    print_message("XTTS vocabulary: %zu sentences in %zu languages, %zu with [UNK], %zu differ\n", n - 1, langs, with_unk, bad);
    free(ids.ids);
    xtts_tokenizer_close(t);
    xtts_tokenizer_close(strict);
    free_lines(gold, n);
    assert_true(n - 1 >= 500);
    assert_true(langs >= 14);
    assert_int_equal(bad, 0);
}

static void test_xtts_vocabulary_refuses_unk_naming_the_characters(void **s) {
    (void)s;
    xtts_tokenizer *t;
    xtts_error err;
    assert_int_equal(xtts_tokenizer_open("bpe", GOLDEN_DIR "bpe_xtts.json", &t, &err), XTTS_OK);
    assert_true(xtts_tokenizer_is_xtts(t));
    xtts_ids ids = {0};
    int en = xtts_lang_index("en");
    assert_int_equal(xtts_tokenizer_encode(t, "the \xE2\x98\x83 dog \xE2\x98\x83\xE2\x98\x82", en, &ids, &err), XTTS_EINPUT);
    assert_string_equal(err.msg, "characters not in the vocabulary: '\xE2\x98\x83' U+2603, '\xE2\x98\x82' U+2602 "
                                 "(--allow-unk keeps such records)");
    /* more than 8 distinct characters: the first 8, then "..." */
    assert_int_equal(xtts_tokenizer_encode(t, "\xE2\x91\xA0\xE2\x91\xA1\xE2\x91\xA2\xE2\x91\xA3\xE2\x91\xA4"
                                              "\xE2\x91\xA5\xE2\x91\xA6\xE2\x91\xA7\xE2\x91\xA8", en, &ids, &err), XTTS_EINPUT);
    assert_non_null(strstr(err.msg, "U+2467, ... (--allow-unk"));
    assert_null(strstr(err.msg, "U+2468"));
    assert_int_equal(xtts_tokenizer_encode(t, "the lazy dog", en, &ids, &err), XTTS_OK);
    xtts_tokenizer_set_allow_unk(t, 1);
    assert_int_equal(xtts_tokenizer_encode(t, "the \xE2\x98\x83 dog", en, &ids, &err), XTTS_OK);
    int unk_seen = 0;
    for (size_t i = 0; i < ids.n; i++) unk_seen |= ids.ids[i] == 1; /* [UNK] is id 1 in bpe_xtts.json */
    assert_true(unk_seen);
    free(ids.ids);
    xtts_tokenizer_close(t);
}

static void test_xtts_vocabulary_gets_language_prefix_and_space_tokens(void **s) {
    (void)s;
    xtts_tokenizer *t;
    xtts_error err;
    assert_int_equal(xtts_tokenizer_open("bpe", GOLDEN_DIR "bpe_xtts.json", &t, &err), XTTS_OK);
    xtts_bpe *b;
    assert_int_equal(xtts_bpe_open(GOLDEN_DIR "bpe_xtts.json", &b, &err), XTTS_OK);
    xtts_ids a = {0}, want = {0};
    assert_int_equal(xtts_tokenizer_encode(t, "the lazy dog", 0, &a, &err), XTTS_OK);
    assert_int_equal(xtts_bpe_encode(b, "[en]the[SPACE]lazy[SPACE]dog", &want, &err), XTTS_OK);
    assert_int_equal(a.n, want.n);
    assert_memory_equal(a.ids, want.ids, a.n * sizeof *a.ids);
    assert_int_equal(a.ids[0], xtts_bpe_token_id(b, "[en]"));
    /* the vocabulary has no [hi]: such records cannot be encoded */
    assert_false(xtts_tokenizer_has_lang(t, xtts_lang_index("hi")));
    assert_int_equal(xtts_tokenizer_encode(t, "नमस्ते", xtts_lang_index("hi"), &a, &err), XTTS_EINPUT);
    assert_non_null(strstr(err.msg, "no token for language hi"));
    assert_true(xtts_tokenizer_wants_lowercase(t));
    xtts_tokens_header h;
    xtts_tokens_header_defaults(&h);
    assert_int_equal(xtts_tokenizer_fill_header(t, &h, &err), XTTS_OK);
    assert_string_equal(h.tokenizer, "bpe");
    assert_int_equal(h.pad_id, xtts_bpe_token_id(b, "[STOP]"));
    assert_int_equal(h.vocab_size, xtts_bpe_vocab_size(b));
    char hex[65];
    assert_int_equal(xtts_sha256_file(GOLDEN_DIR "bpe_xtts.json", hex, &err), XTTS_OK);
    assert_string_equal(h.vocab_hash + 7, hex);
    free(a.ids);
    free(want.ids);
    xtts_bpe_close(b);
    xtts_tokenizer_close(t);
}

static void expect_bad_vocab(const char *json, const char *needle) {
    xtts_bpe *b = (xtts_bpe *)1;
    xtts_error err;
    assert_int_equal(xtts_bpe_open_buffer(json, strlen(json), "v.json", &b, &err), XTTS_EINPUT);
    if (!strstr(err.msg, needle)) fail_msg("message '%s' lacks '%s'", err.msg, needle);
    assert_non_null(strstr(err.msg, "v.json"));
}

static void test_broken_vocabularies_are_refused_with_the_reason(void **s) {
    (void)s;
    expect_bad_vocab("{\"model\": {", "not valid JSON");
    expect_bad_vocab("[1,2]", "no \"model\"");
    expect_bad_vocab("{\"model\": {\"type\": \"WordPiece\", \"vocab\": {}}}", "not BPE");
    expect_bad_vocab("{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": -1}, \"merges\": []}}", "negative");
    expect_bad_vocab("{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 0}, \"merges\": []}}", "two tokens");
    expect_bad_vocab("{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"a\": 1}, \"merges\": []}}", "not valid JSON");
    expect_bad_vocab("{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1}, \"merges\": [\"a c\"]}}", "not in the vocabulary");
    expect_bad_vocab("{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1}, \"merges\": [\"a b\"]}}", "makes \"ab\"");
    expect_bad_vocab("{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1}, \"merges\": [\"ab\"]}}", "two tokens");
    expect_bad_vocab("{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": [], \"unk_token\": \"<u>\"}}", "unk_token");
    expect_bad_vocab("{\"pre_tokenizer\": {\"type\": \"Metaspace\"}, \"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": []}}",
                     "Metaspace is not supported");
    expect_bad_vocab("{\"added_tokens\": [{\"id\": 0, \"content\": \"[X]\"}], \"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": []}}",
                     "reuses id 0");
    expect_bad_vocab("{\"model\": {\"type\": \"BPE\", \"vocab\": {}, \"merges\": []}}", "empty vocabulary");
}

static void test_missing_vocabulary_is_an_environment_error_and_bad_names_usage_errors(void **s) {
    (void)s;
    xtts_tokenizer *t;
    xtts_error err;
    xtts_status st = xtts_tokenizer_open("bpe", "/nonexistent/tokenizer.json", &t, &err);
    assert_true(st == XTTS_EIO || st == XTTS_ENOTFOUND);
    assert_int_equal(xtts_exit_code(st), 2);
    assert_non_null(strstr(err.msg, "/nonexistent/tokenizer.json"));
    assert_int_equal(xtts_tokenizer_open("bpe", NULL, &t, &err), XTTS_EUSAGE);
    assert_int_equal(xtts_tokenizer_open("wordpiece", NULL, &t, &err), XTTS_EUSAGE);
}

static void test_merges_apply_by_rank_not_by_position(void **s) {
    (void)s;
    /* "abc": merge (b,c) has rank 0, (a,b) rank 1: HF gives [a, bc] */
    const char *json = "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1, \"c\": 2, \"bc\": 3, \"ab\": 4},"
                       " \"merges\": [\"b c\", \"a b\"]}}";
    xtts_bpe *b;
    xtts_error err;
    assert_int_equal(xtts_bpe_open_buffer(json, strlen(json), "v", &b, &err), XTTS_OK);
    xtts_ids ids = {0};
    assert_int_equal(xtts_bpe_encode(b, "abc", &ids, &err), XTTS_OK);
    assert_int_equal(ids.n, 2);
    assert_int_equal(ids.ids[0], 0);
    assert_int_equal(ids.ids[1], 3);
    free(ids.ids);
    xtts_bpe_close(b);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_whitespace_bpe_ids_equal_hf_tokenizers_on_every_golden_line),
        cmocka_unit_test(test_bytelevel_bpe_ids_equal_hf_tokenizers_on_every_golden_line),
        cmocka_unit_test(test_repeated_merges_bpe_ids_equal_hf_tokenizers_on_every_golden_line),
        cmocka_unit_test(test_a_merge_listed_twice_keeps_its_last_rank),
        cmocka_unit_test(test_real_xtts_vocabulary_ids_equal_hf_tokenizers),
        cmocka_unit_test(test_xtts_vocabulary_refuses_unk_naming_the_characters),
        cmocka_unit_test(test_xtts_vocabulary_gets_language_prefix_and_space_tokens),
        cmocka_unit_test(test_broken_vocabularies_are_refused_with_the_reason),
        cmocka_unit_test(test_missing_vocabulary_is_an_environment_error_and_bad_names_usage_errors),
        cmocka_unit_test(test_merges_apply_by_rank_not_by_position),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
