/* test_tokens.c — token stream codec (formats/tokens.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "formats/tokens.h"

#define HASH "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define HEADER "#xtts-tokens 1\ttokenizer=bytes\tvocab_hash=" HASH "\tvocab_size=288\tlang=en\tmax_tokens=512\tpad_id=0\n"

static void make_header(xtts_tokens_header *h) {
    xtts_tokens_header_defaults(h);
    strcpy(h->tokenizer, "bytes");
    strcpy(h->vocab_hash, HASH);
    h->vocab_size = 288;
    strcpy(h->lang_mode, "en");
}

/* Open a reader on an in-memory copy of text. */
static xtts_tokens_reader *open_text(const char *text, FILE **fp, xtts_error *err, xtts_status *st) {
    *fp = fmemopen((void *)text, strlen(text), "r");
    assert_non_null(*fp);
    xtts_tokens_reader *r = NULL;
    *st = xtts_tokens_reader_open(*fp, "t.tsv", &r, err);
    return r;
}

/* A reader returns to a line where tell saw it, behind it or ahead, inside the block it read
 * ahead or outside it (a stream of a few hundred KB: several blocks): the records read from
 * there and the line numbers of messages are those of a reading from the start. */
static void test_tell_and_seek_return_to_a_line(void **state) {
    (void)state;
    enum { N = 4000 };
    size_t cap = strlen(HEADER) + (size_t)N * 128, len = strlen(HEADER);
    char *text = malloc(cap);
    assert_non_null(text);
    memcpy(text, HEADER, len);
    for (int i = 0; i < N; i++)
        len += (size_t)snprintf(text + len, cap - len, "u%d\ts%d\ten\t/a/%d.wav\t%d %d\tline %d of the stream%s\n", i,
                                i % 7, i, 10 + i % 200, 11 + i % 100, i, i % 9 ? "" : " with some more words in it");
    text[len] = 0;
    FILE *f;
    xtts_error err;
    xtts_status st;
    xtts_tokens_reader *r = open_text(text, &f, &err, &st);
    assert_int_equal(st, XTTS_OK);
    static xtts_tokens_pos pos[N];
    xtts_tokens_record rec;
    for (int i = 0; i < N; i++) {
        xtts_tokens_reader_tell(r, &pos[i]);
        assert_int_equal(xtts_tokens_reader_next(r, &rec, &err), 1);
    }
    assert_int_equal(xtts_tokens_reader_next(r, &rec, &err), 0);
    static const int visit[] = {17, 18, 3000, 2999, 0, 1, 1200, 3999, 5, 2500, 2501, 2600, 40};
    for (size_t k = 0; k < sizeof visit / sizeof visit[0]; k++) {
        int i = visit[k];
        assert_int_equal(xtts_tokens_reader_seek(r, &pos[i], &err), XTTS_OK);
        for (int j = i; j < i + 3 && j < N; j++) {
            char want[32];
            snprintf(want, sizeof want, "u%d", j);
            assert_int_equal(xtts_tokens_reader_next(r, &rec, &err), 1);
            assert_string_equal(rec.id, want);
            assert_int_equal(rec.tokens[0], 10 + j % 200);
            assert_int_equal(xtts_tokens_reader_line(r), (size_t)j + 2); /* the header is line 1 */
        }
    }
    xtts_tokens_reader_close(r);
    fclose(f);
    free(text);
}

static void test_header_written_then_read_keeps_every_field(void **state) {
    (void)state;
    xtts_tokens_header h;
    make_header(&h);
    h.max_tokens = 300;
    h.pad_id = 7;
    xtts_error err;
    assert_int_equal(xtts_tokens_header_set(&h, "normalize", "nfc,lower,expand", &err), XTTS_OK);
    assert_int_equal(xtts_tokens_header_set(&h, "bos_id", "1", &err), XTTS_OK);
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    assert_int_equal(xtts_tokens_write_header(f, &h, &err), XTTS_OK);
    fclose(f);
    assert_string_equal(buf, "#xtts-tokens 1\ttokenizer=bytes\tvocab_hash=" HASH
                             "\tvocab_size=288\tlang=en\tmax_tokens=300\tpad_id=7\tnormalize=nfc,lower,expand\tbos_id=1\n");
    FILE *in;
    xtts_status st;
    xtts_tokens_reader *r = open_text(buf, &in, &err, &st);
    assert_int_equal(st, XTTS_OK);
    const xtts_tokens_header *g = xtts_tokens_reader_header(r);
    assert_string_equal(g->tokenizer, "bytes");
    assert_string_equal(g->vocab_hash, HASH);
    assert_int_equal(g->vocab_size, 288);
    assert_string_equal(g->lang_mode, "en");
    assert_int_equal(g->max_tokens, 300);
    assert_int_equal(g->pad_id, 7);
    assert_int_equal(g->n_extra, 2);
    assert_string_equal(xtts_tokens_header_get(g, "normalize"), "nfc,lower,expand");
    assert_string_equal(xtts_tokens_header_get(g, "bos_id"), "1");
    assert_null(xtts_tokens_header_get(g, "nothing"));
    xtts_tokens_record rec;
    assert_int_equal(xtts_tokens_reader_next(r, &rec, &err), 0);
    xtts_tokens_reader_close(r);
    fclose(in);
    free(buf);
}

/* The extra fields a header declares (fields=split,text) come after the six, in that order,
 * on every line; each kind of stream reads back what was written. */
static void test_split_and_original_text_fields_round_trip(void **state) {
    (void)state;
    const char *decl[3] = {"split", "text", "split,text"};
    for (int d = 0; d < 3; d++) {
        xtts_tokens_header h;
        make_header(&h);
        xtts_error err;
        assert_int_equal(xtts_tokens_header_set(&h, "fields", decl[d], &err), XTTS_OK);
        int has_split = d != 1, has_text = d != 0;
        int32_t ids[3] = {1, 40, 2};
        xtts_tokens_record rec = {.id = "a1", .speaker = "s", .lang = "en", .audio_path = "/a.wav", .text = "two",
                                  .tokens = ids, .n_tokens = 3, .split = has_split ? "val" : NULL,
                                  .orig_text = has_text ? "Two,\tsaid\n" : NULL};
        char *buf = NULL, *line = NULL;
        size_t size = 0, cap = 0, len = 0;
        FILE *f = open_memstream(&buf, &size);
        assert_int_equal(xtts_tokens_write_header(f, &h, &err), XTTS_OK);
        assert_int_equal(xtts_tokens_format_record(&rec, &line, &cap, &len, &err), XTTS_OK);
        fwrite(line, 1, len, f);
        fclose(f);
        FILE *in;
        xtts_status st;
        xtts_tokens_reader *r = open_text(buf, &in, &err, &st);
        assert_int_equal(st, XTTS_OK);
        xtts_tokens_record got;
        assert_int_equal(xtts_tokens_reader_next(r, &got, &err), 1);
        if (has_split) assert_string_equal(got.split, "val");
        else assert_null(got.split);
        if (has_text) assert_string_equal(got.orig_text, "Two,\tsaid\n");
        else assert_null(got.orig_text);
        assert_string_equal(got.text, "two");
        xtts_tokens_reader_close(r);
        fclose(in);
        free(buf);
        free(line);
    }
}

static void test_record_with_tabs_newlines_and_backslashes_round_trips(void **state) {
    (void)state;
    int32_t ids[600];
    for (int i = 0; i < 600; i++) ids[i] = (i * 37) % 288;
    xtts_tokens_record rec = {.id = "LJ001-0001", .speaker = "spk\t1", .lang = "zh-cn",
                              .audio_path = "/data/a b\\c.wav", .text = "line one\nline\ttwo \\ r\r end ü 日本",
                              .tokens = ids, .n_tokens = 600};
    char *line = NULL;
    size_t cap = 0, len = 0;
    xtts_error err;
    assert_int_equal(xtts_tokens_format_record(&rec, &line, &cap, &len, &err), XTTS_OK);
    assert_int_equal(len, strlen(line));
    assert_int_equal(line[len - 1], '\n');
    assert_null(memchr(line, '\n', len - 1));
    /* exactly five raw tabs separate six fields */
    int tabs = 0;
    for (size_t i = 0; i < len; i++) tabs += line[i] == '\t';
    assert_int_equal(tabs, 5);

    xtts_tokens_header h;
    make_header(&h);
    h.max_tokens = 600;
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    assert_int_equal(xtts_tokens_write_header(f, &h, &err), XTTS_OK);
    fwrite(line, 1, len, f);
    fwrite(line, 1, len, f);
    fclose(f);

    FILE *in;
    xtts_status st;
    xtts_tokens_reader *r = open_text(text, &in, &err, &st);
    assert_int_equal(st, XTTS_OK);
    for (int k = 0; k < 2; k++) {
        xtts_tokens_record got;
        assert_int_equal(xtts_tokens_reader_next(r, &got, &err), 1);
        assert_int_equal(xtts_tokens_reader_line(r), (size_t)(2 + k));
        assert_string_equal(got.id, rec.id);
        assert_string_equal(got.speaker, rec.speaker);
        assert_string_equal(got.lang, rec.lang);
        assert_string_equal(got.audio_path, rec.audio_path);
        assert_string_equal(got.text, rec.text);
        assert_int_equal(got.n_tokens, 600);
        assert_memory_equal(got.tokens, ids, sizeof ids);
    }
    xtts_tokens_record got;
    assert_int_equal(xtts_tokens_reader_next(r, &got, &err), 0);
    xtts_tokens_reader_close(r);
    fclose(in);
    free(text);
    free(line);
}

static void test_crlf_lines_and_bom_are_accepted(void **state) {
    (void)state;
    const char *text = "\xEF\xBB\xBF#xtts-tokens 1\ttokenizer=bytes\tvocab_hash=" HASH
                       "\tvocab_size=288\tlang=auto\tmax_tokens=4\tpad_id=0\r\n"
                       "a\t\tfr\t/x.wav\t1 2 3\tbonjour\r\n";
    FILE *in;
    xtts_error err;
    xtts_status st;
    xtts_tokens_reader *r = open_text(text, &in, &err, &st);
    assert_int_equal(st, XTTS_OK);
    assert_string_equal(xtts_tokens_reader_header(r)->lang_mode, "auto");
    xtts_tokens_record rec;
    assert_int_equal(xtts_tokens_reader_next(r, &rec, &err), 1);
    assert_string_equal(rec.speaker, "");
    assert_string_equal(rec.text, "bonjour");
    assert_int_equal(rec.n_tokens, 3);
    assert_int_equal(rec.tokens[2], 3);
    xtts_tokens_reader_close(r);
    fclose(in);
}

static void expect_open_fails(const char *text, xtts_status code, const char *needle) {
    FILE *in;
    xtts_error err;
    xtts_status st;
    xtts_tokens_reader *r = open_text(text, &in, &err, &st);
    assert_null(r);
    assert_int_equal(st, code);
    if (!strstr(err.msg, needle)) fail_msg("message '%s' lacks '%s'", err.msg, needle);
    assert_non_null(strstr(err.msg, "t.tsv"));
    fclose(in);
}

static void test_bad_headers_are_refused_with_the_reason(void **state) {
    (void)state;
    expect_open_fails("", XTTS_EINPUT, "empty token stream");
    expect_open_fails("id\tspeaker\n", XTTS_EINPUT, "not a token stream");
    expect_open_fails("#xtts-tokens 2\ttokenizer=bytes\n", XTTS_EMISMATCH, "version 2 is not supported");
    expect_open_fails("#xtts-tokens 1\ttokenizer=bytes\tvocab_hash=" HASH "\tvocab_size=288\tlang=en\tmax_tokens=512\n",
                      XTTS_EINPUT, "pad_id");
    expect_open_fails("#xtts-tokens 1\ttokenizer=bytes\tvocab_hash=md5:00\tvocab_size=288\tlang=en\tmax_tokens=5\tpad_id=0\n",
                      XTTS_EINPUT, "vocab_hash");
    expect_open_fails("#xtts-tokens 1\ttokenizer=bytes\tvocab_hash=" HASH "\tvocab_size=288\tlang=xx\tmax_tokens=5\tpad_id=0\n",
                      XTTS_EINPUT, "lang");
    expect_open_fails("#xtts-tokens 1\ttokenizer=bytes\tvocab_hash=" HASH "\tvocab_size=288\tlang=en\tmax_tokens=5\tpad_id=288\n",
                      XTTS_EINPUT, "pad_id");
    expect_open_fails("#xtts-tokens 1\ttokenizer=bytes\tvocab_hash=" HASH "\tvocab_size=-3\tlang=en\tmax_tokens=5\tpad_id=0\n",
                      XTTS_EINPUT, "vocab_size");
    expect_open_fails("#xtts-tokens 1\ttokenizer=bytes\ttokenizer=bpe\tvocab_hash=" HASH
                      "\tvocab_size=3\tlang=en\tmax_tokens=5\tpad_id=0\n",
                      XTTS_EINPUT, "twice");
    expect_open_fails("#xtts-tokens 1\ttokenizer=bytes\tnokey\n", XTTS_EINPUT, "key=value");
}

/* A record line read before a good one: with needle, -1 with "t.tsv:2:" and the reason;
 * without, its text is want_text. The next good line reads either way. */
static void expect_record(const char *rec_line, const char *needle, const char *want_text) {
    char text[4096];
    snprintf(text, sizeof text, "%s%s\nok\t\ten\t/a.wav\t5\tfine\n", HEADER, rec_line);
    FILE *in;
    xtts_error err;
    xtts_status st;
    xtts_tokens_reader *r = open_text(text, &in, &err, &st);
    assert_int_equal(st, XTTS_OK);
    xtts_tokens_record rec;
    if (needle) {
        assert_int_equal(xtts_tokens_reader_next(r, &rec, &err), -1);
        if (!strstr(err.msg, needle)) fail_msg("message '%s' lacks '%s'", err.msg, needle);
        assert_non_null(strstr(err.msg, "t.tsv:2:"));
    } else {
        assert_int_equal(xtts_tokens_reader_next(r, &rec, &err), 1);
        assert_string_equal(rec.text, want_text);
    }
    assert_int_equal(xtts_tokens_reader_next(r, &rec, &err), 1);
    assert_string_equal(rec.id, "ok");
    assert_int_equal(xtts_tokens_reader_line(r), 3);
    xtts_tokens_reader_close(r);
    fclose(in);
}

/* Each bad record line gives -1 with "t.tsv:2:" and the reason; the next good line
 * still reads. */
static void expect_bad_record(const char *rec_line, const char *needle) { expect_record(rec_line, needle, NULL); }

static void test_bad_records_name_the_line_and_the_fault(void **state) {
    (void)state;
    expect_bad_record("a\tb\ten\t/a.wav\t1 2", "expected 6");
    expect_bad_record("a\tb\ten\t/a.wav\t1\tx\ty\tz", "more than 6"); /* extra fields need the header's fields= */
    expect_bad_record("a\tb\txx\t/a.wav\t1\tx", "unknown language");
    expect_bad_record("a\tb\tEN\t/a.wav\t1\tx", "unknown language");
    expect_bad_record("\tb\ten\t/a.wav\t1\tx", "empty id");
    expect_bad_record("a\tb\ten\t\t1\tx", "empty audio_path");
    expect_bad_record("a\tb\ten\t/a.wav\t1\t", "empty text");
    expect_bad_record("a\tb\ten\t/a.wav\t\tx", "no token ids");
    expect_bad_record("a\tb\ten\t/a.wav\t1  2\tx", "single spaces");
    expect_bad_record("a\tb\ten\t/a.wav\t1 -2\tx", "single spaces");
    expect_bad_record("a\tb\ten\t/a.wav\t1 288\tx", "out of range");
    expect_bad_record("a\tb\ten\t/a.wav\t99999999999999999999\tx", "out of range");
    expect_bad_record("a\\q\tb\ten\t/a.wav\t1\tx", "bad escape");
    expect_bad_record("a\tb\ten\t/a.wav\t1\tx\x01", "control character");
    expect_bad_record("a\xC3\tb\ten\t/a.wav\t1\tx", "invalid UTF-8");
    expect_bad_record("", "empty line");
}

/* Every byte value at every place of a 19-byte text (the reader checks fields eight bytes at a
 * time, then byte by byte): printable ASCII reads back as it is; a backslash before a digit is
 * a bad escape; a control character or DEL, and a lone byte above 0x7f, are refused with their
 * reason; a two-byte UTF-8 character reads back anywhere. */
static void test_every_byte_at_every_place_of_a_field(void **state) {
    (void)state;
    const char base[] = "0123456789012345678";
    for (size_t k = 0; k < sizeof base - 1; k++)
        for (int b = 1; b < 256 + 1; b++) {
            char field[32], line[128];
            memcpy(field, base, sizeof base);
            if (b == 256) { /* é: two bytes in place of the one */
                memmove(field + k + 2, field + k + 1, sizeof base - k - 1);
                field[k] = (char)0xC3, field[k + 1] = (char)0xA9;
            } else if (b == '\t' || b == '\n' || b == '\r') {
                continue; /* a field's or a line's end */
            } else {
                field[k] = (char)b;
            }
            snprintf(line, sizeof line, "a\tb\ten\t/a.wav\t1\t%s", field);
            if (b == 256 || (b >= 0x20 && b < 0x7f && b != '\\')) expect_record(line, NULL, field);
            else expect_bad_record(line, b == '\\' ? "bad escape" : b < 0x80 ? "control character" : "invalid UTF-8");
        }
}

static void test_more_than_max_tokens_is_an_error(void **state) {
    (void)state;
    const char *text = "#xtts-tokens 1\ttokenizer=bytes\tvocab_hash=" HASH
                       "\tvocab_size=288\tlang=en\tmax_tokens=3\tpad_id=0\n"
                       "a\t\ten\t/a.wav\t1 2 3\tx\n"
                       "b\t\ten\t/a.wav\t1 2 3 4\tx\n";
    FILE *in;
    xtts_error err;
    xtts_status st;
    xtts_tokens_reader *r = open_text(text, &in, &err, &st);
    assert_int_equal(st, XTTS_OK);
    xtts_tokens_record rec;
    assert_int_equal(xtts_tokens_reader_next(r, &rec, &err), 1);
    assert_int_equal(xtts_tokens_reader_next(r, &rec, &err), -1);
    assert_non_null(strstr(err.msg, "t.tsv:3: more than max_tokens=3"));
    assert_int_equal(xtts_tokens_reader_next(r, &rec, &err), 0);
    xtts_tokens_reader_close(r);
    fclose(in);
}

/* Lenient mode (xtts-melcache): records the cache cannot hold come back with a reason and
 * no token ids, and the records after them read as usual; a NUL byte is still an error. */
static void test_lenient_reader_returns_unusable_records_with_a_reason(void **state) {
    (void)state;
    char longid[600];
    memset(longid, 'i', 506);
    longid[506] = 0;
    char text[2048];
    snprintf(text, sizeof text,
             "#xtts-tokens 1\ttokenizer=bytes\tvocab_hash=" HASH "\tvocab_size=288\tlang=en\tmax_tokens=3\tpad_id=0\n"
             "a\t\ten\t/a.wav\t1 2 3\tx\n"
             "b\t\ten\t/a.wav\t1 2 3 4\tx\n"
             "c\t\txx\t/a.wav\t1\tx\n"
             "%s\t\ten\t/a.wav\t1\tx\n"
             "e\t\ten\t/a.wav\t5 6\tx\n", longid);
    FILE *in;
    xtts_error err;
    xtts_status st;
    xtts_tokens_reader *r = open_text(text, &in, &err, &st);
    assert_int_equal(st, XTTS_OK);
    xtts_tokens_reader_lenient(r, 1);
    xtts_tokens_record rec;
    assert_int_equal(xtts_tokens_reader_next(r, &rec, &err), 1);
    assert_null(rec.reject);
    assert_int_equal(rec.n_tokens, 3);
    assert_int_equal(xtts_tokens_reader_next(r, &rec, &err), 1);
    assert_string_equal(rec.id, "b");
    assert_string_equal(rec.reject, "4 tokens, more than max_tokens=3");
    assert_int_equal(rec.n_tokens, 0);
    assert_int_equal(xtts_tokens_reader_next(r, &rec, &err), 1);
    assert_string_equal(rec.reject, "unknown language 'xx'");
    assert_int_equal(xtts_tokens_reader_next(r, &rec, &err), 1);
    assert_string_equal(rec.reject, "id of 506 bytes, longer than 505");
    assert_int_equal(xtts_tokens_reader_next(r, &rec, &err), 1);
    assert_string_equal(rec.id, "e");
    assert_null(rec.reject);
    assert_int_equal(rec.n_tokens, 2);
    assert_int_equal(xtts_tokens_reader_next(r, &rec, &err), 0);
    xtts_tokens_reader_close(r);
    fclose(in);
}

static void test_format_record_refuses_what_the_reader_would_refuse(void **state) {
    (void)state;
    int32_t ids[2] = {1, 2}, neg[2] = {1, -1};
    xtts_tokens_record ok = {.id = "a", .speaker = "", .lang = "en", .audio_path = "/a.wav", .text = "hi",
                             .tokens = ids, .n_tokens = 2};
    char *buf = NULL;
    size_t cap = 0, len;
    xtts_error err;
    assert_int_equal(xtts_tokens_format_record(&ok, &buf, &cap, &len, &err), XTTS_OK);
    assert_string_equal(buf, "a\t\ten\t/a.wav\t1 2\thi\n");
    xtts_tokens_record r;
    r = ok; r.id = "";
    assert_int_equal(xtts_tokens_format_record(&r, &buf, &cap, &len, &err), XTTS_EINPUT);
    r = ok; r.lang = "klingon";
    assert_int_equal(xtts_tokens_format_record(&r, &buf, &cap, &len, &err), XTTS_EINPUT);
    assert_non_null(strstr(err.msg, "record a: unknown language"));
    r = ok; r.text = "";
    assert_int_equal(xtts_tokens_format_record(&r, &buf, &cap, &len, &err), XTTS_EINPUT);
    r = ok; r.text = "bell\a";
    assert_int_equal(xtts_tokens_format_record(&r, &buf, &cap, &len, &err), XTTS_EINPUT);
    r = ok; r.speaker = "\xFF";
    assert_int_equal(xtts_tokens_format_record(&r, &buf, &cap, &len, &err), XTTS_EINPUT);
    r = ok; r.n_tokens = 0;
    assert_int_equal(xtts_tokens_format_record(&r, &buf, &cap, &len, &err), XTTS_EINPUT);
    r = ok; r.tokens = neg;
    assert_int_equal(xtts_tokens_format_record(&r, &buf, &cap, &len, &err), XTTS_EINPUT);
    r = ok; r.audio_path = "";
    assert_int_equal(xtts_tokens_format_record(&r, &buf, &cap, &len, &err), XTTS_EINPUT);
    free(buf);
}

static void test_header_setters_refuse_bad_pairs(void **state) {
    (void)state;
    xtts_tokens_header h;
    make_header(&h);
    xtts_error err;
    assert_int_equal(xtts_tokens_header_set(&h, "pad_id", "3", &err), XTTS_EINPUT);
    assert_int_equal(xtts_tokens_header_set(&h, "Bad Key", "3", &err), XTTS_EINPUT);
    assert_int_equal(xtts_tokens_header_set(&h, "k", "a\tb", &err), XTTS_EINPUT);
    assert_int_equal(xtts_tokens_header_set(&h, "k", "", &err), XTTS_EINPUT);
    assert_int_equal(xtts_tokens_header_set(&h, "k", "1", &err), XTTS_OK);
    assert_int_equal(xtts_tokens_header_set(&h, "k", "2", &err), XTTS_OK);
    assert_int_equal(h.n_extra, 1);
    assert_string_equal(xtts_tokens_header_get(&h, "k"), "2");
    for (int i = 0; i < XTTS_TOKENS_MAX_EXTRA - 1; i++) {
        char k[16];
        snprintf(k, sizeof k, "k%d", i);
        assert_int_equal(xtts_tokens_header_set(&h, k, "v", &err), XTTS_OK);
    }
    assert_int_equal(xtts_tokens_header_set(&h, "one-more", "v", &err), XTTS_ERANGE);
    h.pad_id = 288;
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    assert_int_equal(xtts_tokens_write_header(f, &h, &err), XTTS_EINPUT);
    fclose(f);
    assert_int_equal(size, 0);
    free(buf);
}

static void test_utf8_validator_rejects_overlongs_and_surrogates(void **state) {
    (void)state;
    assert_true(xtts_utf8_valid("abc", 3));
    assert_true(xtts_utf8_valid("\xC3\xA9\xE6\x97\xA5\xF0\x9F\x98\x80", 9));
    assert_false(xtts_utf8_valid("\xC0\xAF", 2));         /* overlong '/' */
    assert_false(xtts_utf8_valid("\xE0\x80\xAF", 3));     /* overlong */
    assert_false(xtts_utf8_valid("\xED\xA0\x80", 3));     /* surrogate */
    assert_false(xtts_utf8_valid("\xF4\x90\x80\x80", 4)); /* > U+10FFFF */
    assert_false(xtts_utf8_valid("\xE6\x97", 2));         /* truncated */
    assert_false(xtts_utf8_valid("\x80", 1));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_header_written_then_read_keeps_every_field),
        cmocka_unit_test(test_split_and_original_text_fields_round_trip),
        cmocka_unit_test(test_record_with_tabs_newlines_and_backslashes_round_trips),
        cmocka_unit_test(test_crlf_lines_and_bom_are_accepted),
        cmocka_unit_test(test_bad_headers_are_refused_with_the_reason),
        cmocka_unit_test(test_bad_records_name_the_line_and_the_fault),
        cmocka_unit_test(test_every_byte_at_every_place_of_a_field),
        cmocka_unit_test(test_more_than_max_tokens_is_an_error),
        cmocka_unit_test(test_lenient_reader_returns_unusable_records_with_a_reason),
        cmocka_unit_test(test_format_record_refuses_what_the_reader_would_refuse),
        cmocka_unit_test(test_header_setters_refuse_bad_pairs),
        cmocka_unit_test(test_utf8_validator_rejects_overlongs_and_surrogates),
        cmocka_unit_test(test_tell_and_seek_return_to_a_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
