/* test_tokenizers.c — the bytes tokenizer's fixed id table (formats/tokens.md) and the
 * phoneme tokenizer (espeak-ng IPA, in-process and through worker processes). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <omp.h>
#include <signal.h>
#include <sys/types.h>

#include "prep/text/tokenizer/tokenizer.h"
#include "prep/text/tokenizer/tokenizer_internal.h"

static void test_bytes_tokenizer_wraps_utf8_bytes_in_start_lang_stop(void **s) {
    (void)s;
    xtts_tokenizer *t;
    xtts_error err;
    assert_int_equal(xtts_tokenizer_open("bytes", NULL, &t, &err), XTTS_OK);
    xtts_ids ids = {0};
    assert_int_equal(xtts_tokenizer_encode(t, "h\xC3\xA9", xtts_lang_index("fr"), &ids, &err), XTTS_OK);
    int32_t want[] = {1, 4 + 2, 32 + 'h', 32 + 0xC3, 32 + 0xA9, 2};
    assert_int_equal(ids.n, 6);
    assert_memory_equal(ids.ids, want, sizeof want);
    assert_int_equal(xtts_tokenizer_encode(t, "x", xtts_lang_index("hi"), &ids, &err), XTTS_OK);
    assert_int_equal(ids.ids[1], 20); /* the last language token */
    assert_int_equal(xtts_tokenizer_encode(t, "x", 17, &ids, &err), XTTS_EINPUT);
    assert_true(xtts_tokenizer_wants_lowercase(t));
    xtts_tokens_header h;
    xtts_tokens_header_defaults(&h);
    assert_int_equal(xtts_tokenizer_fill_header(t, &h, &err), XTTS_OK);
    assert_string_equal(h.tokenizer, "bytes");
    assert_int_equal(h.vocab_size, 288);
    assert_int_equal(h.pad_id, 0);
    assert_string_equal(xtts_tokens_header_get(&h, "bos_id"), "1");
    assert_string_equal(xtts_tokens_header_get(&h, "eos_id"), "2");
    assert_string_equal(xtts_tokens_header_get(&h, "unk_id"), "3");
    /* the hash names the table version: SHA-256 of "xtts-bytes-tokenizer 1" */
    xtts_sha256 sh;
    uint8_t d[32];
    char hex[65];
    xtts_sha256_init(&sh);
    xtts_sha256_update(&sh, "xtts-bytes-tokenizer 1", 22);
    xtts_sha256_final(&sh, d);
    xtts_hex(d, 32, hex);
    assert_string_equal(h.vocab_hash + 7, hex);
    free(ids.ids);
    xtts_tokenizer_close(t);
}

static void test_phonemes_are_ipa_ids_between_start_lang_and_stop(void **s) {
    (void)s;
    xtts_phonemizer *p;
    xtts_error err;
    assert_int_equal(xtts_phonemizer_new(&p, &err), XTTS_OK);
    for (int l = 0; l < XTTS_N_LANGS; l++) assert_true(xtts_phonemizer_has_lang(p, l));
    char *ipa;
    assert_int_equal(xtts_phonemizer_ipa(p, "hello world", 0, &ipa, &err), XTTS_OK);
    assert_non_null(strstr(ipa, "h"));
    assert_non_null(strstr(ipa, "w"));
    assert_null(strchr(ipa, '('));
    free(ipa);
    xtts_ids ids = {0};
    assert_int_equal(xtts_phonemizer_encode(p, "hello world", 0, &ids, &err), XTTS_OK);
    assert_int_equal(ids.ids[0], 1);
    assert_int_equal(ids.ids[1], 4);
    assert_int_equal(ids.ids[ids.n - 1], 2);
    int spaces = 0;
    for (size_t i = 2; i + 1 < ids.n; i++) {
        assert_true(ids.ids[i] >= 21 && ids.ids[i] < xtts_phonemizer_vocab_size());
        spaces += ids.ids[i] == 21;
        const char *sym = xtts_phonemizer_symbol(ids.ids[i]);
        assert_non_null(sym);
    }
    assert_int_equal(spaces, 1);
    assert_string_equal(xtts_phonemizer_symbol(0), "[PAD]");
    assert_string_equal(xtts_phonemizer_symbol(4), "en");
    assert_null(xtts_phonemizer_symbol(xtts_phonemizer_vocab_size()));
    free(ids.ids);
    xtts_phonemizer_delete(p);
}

static void test_phoneme_worker_processes_give_the_in_process_ids(void **s) {
    (void)s;
    static const char *const texts[] = {"the quick brown fox", "bonjour tout le monde", "guten morgen",
                                        "buongiorno", "bom dia", "dzień dobry", "доброе утро", "こんにちは"};
    static const char *const langs[] = {"en", "fr", "de", "it", "pt", "pl", "ru", "ja"};
    enum { N = sizeof texts / sizeof texts[0] };
    xtts_phonemizer *local, *pool;
    xtts_error err;
    assert_int_equal(xtts_phonemizer_new(&local, &err), XTTS_OK);
    assert_int_equal(xtts_phonemizer_new(&pool, &err), XTTS_OK);
    assert_int_equal(xtts_phonemizer_start_workers(pool, 3, &err), XTTS_OK);
    assert_int_equal(xtts_phonemizer_workers(pool), 3);
    char *want[N], *got[N];
    int fails = 0;
    for (int i = 0; i < N; i++) assert_int_equal(xtts_phonemizer_ipa(local, texts[i], xtts_lang_index(langs[i]), &want[i], &err), XTTS_OK);
    #pragma omp parallel for num_threads(3) reduction(+ : fails)
    for (int i = 0; i < N; i++) {
        xtts_error e;
        fails += xtts_phonemizer_ipa(pool, texts[i], xtts_lang_index(langs[i]), &got[i], &e) != XTTS_OK;
    }
    assert_int_equal(fails, 0);
    for (int i = 0; i < N; i++) {
        assert_string_equal(got[i], want[i]);
        free(got[i]);
        free(want[i]);
    }
    /* a language without a voice is refused, and the workers go on serving */
    char *ipa = NULL;
    assert_int_equal(xtts_phonemizer_ipa(pool, "x", 99, &ipa, &err), XTTS_EINPUT);
    assert_int_equal(xtts_phonemizer_ipa(pool, "hello", 0, &ipa, &err), XTTS_OK);
    free(ipa);
    xtts_phonemizer_delete(pool);
    xtts_phonemizer_delete(local);
}

/* A worker killed (as espeak-ng's crash on some inputs kills it) is replaced and the text
 * tried again: the caller gets the same IPA as from the in-process phonemizer. */
static void test_a_dead_phoneme_worker_is_replaced_and_the_text_retried(void **s) {
    (void)s;
    xtts_phonemizer *local, *pool;
    xtts_error err;
    assert_int_equal(xtts_phonemizer_new(&local, &err), XTTS_OK);
    assert_int_equal(xtts_phonemizer_new(&pool, &err), XTTS_OK);
    assert_int_equal(xtts_phonemizer_start_workers(pool, 1, &err), XTTS_OK); /* one worker also with -j 1 */
    assert_int_equal(xtts_phonemizer_workers(pool), 1);
    char *want = NULL, *got = NULL;
    assert_int_equal(xtts_phonemizer_ipa(local, "the quick brown fox", 0, &want, &err), XTTS_OK);
    for (int round = 0; round < 3; round++) {
        int pid = xtts_phonemizer_worker_pid(pool, 0);
        assert_true(pid > 0);
        assert_int_equal(kill((pid_t)pid, SIGKILL), 0);
        assert_int_equal(xtts_phonemizer_ipa(pool, "the quick brown fox", 0, &got, &err), XTTS_OK);
        assert_string_equal(got, want);
        free(got);
        int pid2 = xtts_phonemizer_worker_pid(pool, 0);
        assert_true(pid2 > 0);
        assert_int_not_equal(pid2, pid);
    }
    free(want);
    xtts_phonemizer_delete(pool);
    xtts_phonemizer_delete(local);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bytes_tokenizer_wraps_utf8_bytes_in_start_lang_stop),
        cmocka_unit_test(test_phonemes_are_ipa_ids_between_start_lang_and_stop),
        cmocka_unit_test(test_phoneme_worker_processes_give_the_in_process_ids),
        cmocka_unit_test(test_a_dead_phoneme_worker_is_replaced_and_the_text_retried),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
