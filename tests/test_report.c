/* test_report.c — what the quality report stands on: per-record values written with their
 * records (across shard rotations) and read back as metrics, a cache without them reading as
 * "no metrics", bad per-record database names refused, and the --exclude lists (a report's
 * TSV with a flag mask, a plain list, bad lines named). Real writer, reader and codecs. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache/store/exclude.h"
#include "cache/store/quality_store.h"
#include "cache/store/read/reader.h"
#include "cache/store/read/reader_api.h"
#include "cache/store/writer.h"
#include "formats/record.h"
#include "kernels/quality.h"
#include "tests/writer_fixture.h"

#define N_MELS 8

static int setup(void **state) { return fixture_setup(state, "test_report", XTTS_DTYPE_F16, 3); }

static int teardown(void **state) { return fixture_teardown(state); }

static void test_config(xtts_cache_config *c) {
    xtts_cache_config_defaults(c);
    c->mel.n_mels = N_MELS;
    c->max_tokens = 16;
    c->max_frames = 64;
}

static void make_record(xtts_record_encoder *enc, int i, const uint8_t **buf, size_t *len) {
    char id[32];
    snprintf(id, sizeof id, "utt%04d", i);
    int32_t tokens[16] = {0};
    for (int k = 0; k < 10; k++) tokens[k] = (i * 7 + k) % 300;
    uint32_t frames = 8 + (uint32_t)(i * 13 % 56);
    float mel[N_MELS * 64];
    for (int c = 0; c < N_MELS; c++)
        for (int t = 0; t < 64; t++) mel[c * 64 + t] = (float)((i * 31 + c * 7 + t * 3) % 997) / 100.0f - 5.0f;
    xtts_record_input in = {.id = id, .speaker_id = (uint32_t)(i % 2), .n_samples = frames * 256, .n_tokens = 10,
                            .tokens_padded = 16, .n_frames = frames, .frames_padded = 64, .n_mels = N_MELS,
                            .pad_value = -11.5f, .tokens = tokens, .mel = mel};
    xtts_error err;
    assert_int_equal(xtts_record_encode(enc, &in, buf, len, &err), XTTS_OK);
}

/* Metrics that tell record i apart. */
static void make_metrics(int i, xtts_quality_metrics *m) {
    memset(m, 0, sizeof *m);
    m->status = XTTS_QUALITY_MEASURED;
    m->sample_rate = 22050;
    m->native_rate = 16000;
    m->n_chars = (uint32_t)(100 + i);
    m->n_tokens = 10;
    m->duration_s = 1.0f + (float)i / 8;
    m->snr_db = 20.0f + (float)i;
    m->peak_dbfs = -1.0f;
    m->audio_hash[0] = 0x1234u + (uint64_t)i;
}

/* Write n records (metrics with each when with_metrics) into f->dir in small shards; return
 * the shard count. */
static size_t write_cache(fixture *f, int n, int with_metrics) {
    xtts_cache_config c;
    test_config(&c);
    xtts_cache_writer_options o;
    xtts_cache_writer_options_defaults(&o, f->dir);
    o.shard_bytes = 2000; /* a few records a shard */
    o.commit_every = 3;
    xtts_cache_writer *w;
    xtts_error err;
    assert_int_equal(xtts_cache_writer_open(&o, &c, &w, &err), XTTS_OK);
    for (int i = 0; i < n; i++) {
        const uint8_t *buf;
        size_t len;
        make_record(f->enc, i, &buf, &len);
        char id[32];
        snprintf(id, sizeof id, "utt%04d", i);
        xtts_quality_metrics m;
        make_metrics(i, &m);
        uint8_t q[XTTS_QUALITY_BYTES];
        xtts_quality_encode(&m, q);
        xtts_cache_entry v = {XTTS_CACHE_DB_QUALITY, q, sizeof q};
        xtts_status st = xtts_cache_writer_put_entries(w, (uint64_t)i, id, buf, len, NULL, &v, with_metrics ? 1 : 0, &err);
        if (st) fail_msg("%s", err.msg);
    }
    assert_int_equal(xtts_cache_writer_finish(w, NULL, &err), XTTS_OK);
    xtts_cache *cache;
    assert_int_equal(xtts_cache_open(f->dir, &cache, &err), XTTS_OK);
    size_t shards = xtts_cache_n_shards(cache);
    xtts_cache_close(cache);
    return shards;
}

static void metrics_are_stored_with_their_records_across_shards(void **state) {
    fixture *f = *state;
    size_t shards = write_cache(f, 40, 1);
    assert_true(shards >= 3); /* the values follow their records into every new shard */
    xtts_cache *c;
    xtts_cache_reader *r;
    xtts_error err;
    assert_int_equal(xtts_cache_open(f->dir, &c, &err), XTTS_OK);
    assert_int_equal(xtts_cache_reader_new(c, &r, &err), XTTS_OK);
    assert_int_equal(xtts_cache_has_metrics(c), 1);
    assert_int_equal(xtts_cache_shards_with_db(c, XTTS_CACHE_DB_QUALITY), shards);
    for (int i = 0; i < 40; i++) {
        xtts_quality_metrics m, want;
        make_metrics(i, &want);
        if (xtts_cache_reader_metrics(r, (uint64_t)i, &m, &err)) fail_msg("%s", err.msg);
        assert_int_equal(m.n_chars, want.n_chars);
        assert_true(m.snr_db == want.snr_db);
        assert_true(m.audio_hash[0] == want.audio_hash[0]);
    }
    xtts_cache_reader_delete(r);
    xtts_cache_close(c);
}

/* The stable C interface gives the stored bytes, which decode to what was written. */
static void reader_api_gives_the_stored_metrics(void **state) {
    fixture *f = *state;
    write_cache(f, 12, 1);
    xtts_api_cache *a = xtts_api_open(f->dir);
    assert_non_null(a);
    uint8_t buf[256];
    size_t len = 0;
    assert_int_equal(xtts_api_quality(a, 7, buf, sizeof buf, &len), 0);
    assert_int_equal(len, XTTS_QUALITY_BYTES);
    xtts_quality_metrics m, want;
    xtts_error err;
    assert_int_equal(xtts_quality_decode(buf, &m, &err), XTTS_OK);
    make_metrics(7, &want);
    assert_int_equal(m.n_chars, want.n_chars);
    assert_int_equal(xtts_api_quality(a, 7, buf, 10, &len), XTTS_ERANGE);
    assert_int_equal(xtts_api_quality(a, 12, buf, sizeof buf, &len), XTTS_ERANGE);
    xtts_api_close(a);
}

static void a_cache_without_metrics_reads_as_none_and_says_how_to_add_them(void **state) {
    fixture *f = *state;
    write_cache(f, 10, 0);
    xtts_cache *c;
    xtts_cache_reader *r;
    xtts_error err;
    assert_int_equal(xtts_cache_open(f->dir, &c, &err), XTTS_OK);
    assert_int_equal(xtts_cache_reader_new(c, &r, &err), XTTS_OK);
    assert_int_equal(xtts_cache_has_metrics(c), 0);
    xtts_quality_metrics m;
    assert_int_equal(xtts_cache_reader_metrics(r, 3, &m, &err), XTTS_ENOTFOUND);
    assert_non_null(strstr(err.msg, "--force"));
    const void *buf;
    size_t len;
    assert_int_equal(xtts_cache_reader_value(r, 3, XTTS_CACHE_DB_QUALITY, &buf, &len, &err), XTTS_ENOTFOUND);
    assert_int_equal(xtts_cache_reader_value(r, 3, "records", &buf, &len, &err), XTTS_EUSAGE);
    xtts_cache_reader_delete(r);
    xtts_cache_close(c);
    xtts_api_cache *a = xtts_api_open(f->dir);
    assert_non_null(a);
    uint8_t q[XTTS_QUALITY_BYTES];
    assert_int_equal(xtts_api_quality(a, 3, q, sizeof q, &len), XTTS_ENOTFOUND);
    assert_non_null(strstr(xtts_api_last_error(), "no quality metrics"));
    xtts_api_close(a);
}

static void writer_refuses_reserved_and_unusable_database_names(void **state) {
    fixture *f = *state;
    xtts_cache_config c;
    test_config(&c);
    xtts_cache_writer_options o;
    xtts_cache_writer_options_defaults(&o, f->dir);
    xtts_cache_writer *w;
    xtts_error err;
    assert_int_equal(xtts_cache_writer_open(&o, &c, &w, &err), XTTS_OK);
    const uint8_t *buf;
    size_t len;
    make_record(f->enc, 0, &buf, &len);
    uint8_t q[4] = {1, 2, 3, 4};
    char too_long[XTTS_CACHE_DB_NAME_MAX + 2];
    memset(too_long, 'q', sizeof too_long - 1);
    too_long[sizeof too_long - 1] = '\0';
    const char *bad[] = {"records", "ids", "meta", "lengths", "", too_long};
    for (size_t b = 0; b < sizeof bad / sizeof *bad; b++) {
        xtts_cache_entry v = {bad[b], q, sizeof q};
        assert_int_equal(xtts_cache_writer_put_entries(w, 0, "utt0000", buf, len, NULL, &v, 1, &err), XTTS_EUSAGE);
    }
    assert_true(xtts_cache_db_reserved("lengths") && !xtts_cache_db_reserved("quality"));
    xtts_cache_entry two[2] = {{"quality", q, 4}, {"keys", q, 4}};
    assert_int_equal(xtts_cache_writer_count(w), 0); /* a refused put changes nothing */
    assert_int_equal(xtts_cache_writer_put_entries(w, 0, "utt0000", buf, len, NULL, two, 1, &err), XTTS_OK);
    assert_int_equal(xtts_cache_writer_count(w), 1);
    xtts_cache_writer_abort(w);
}

static void write_text(const char *path, const char *text) {
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
}

static void exclude_reads_a_report_tsv_with_a_flag_mask_and_plain_lists(void **state) {
    fixture *f = *state;
    char path[600];
    snprintf(path, sizeof path, "%s/r.tsv", f->dir);
    write_text(path, "id\tflags\tdup_of\tspeaker\n"
                     "a\t-\t-\ts\n"
                     "b\tclipped\t-\ts\n"
                     "c\tlow_snr,dup_audio\ta\ts\n"
                     "d\tlead_silence\t-\ts\n");
    xtts_exclude *x;
    xtts_error err;
    assert_int_equal(xtts_exclude_load(path, XTTS_EXCLUDE_ALL_FLAGS, &x, &err), XTTS_OK);
    assert_int_equal(xtts_exclude_count(x), 3);
    assert_false(xtts_exclude_has(x, "a"));
    assert_true(xtts_exclude_has(x, "b") && xtts_exclude_has(x, "c") && xtts_exclude_has(x, "d"));
    xtts_exclude_free(x);
    uint32_t mask;
    assert_int_equal(xtts_exclude_parse_flags("dup_audio,clipped", &mask, &err), XTTS_OK);
    assert_int_equal(xtts_exclude_load(path, mask, &x, &err), XTTS_OK);
    assert_int_equal(xtts_exclude_count(x), 2);
    assert_true(xtts_exclude_has(x, "b") && xtts_exclude_has(x, "c"));
    assert_false(xtts_exclude_has(x, "d"));
    xtts_exclude_free(x);
    assert_int_equal(xtts_exclude_parse_flags("clipped,loud", &mask, &err), XTTS_EUSAGE);
    assert_non_null(strstr(err.msg, "'loud'"));
    assert_int_equal(xtts_exclude_parse_flags("clipped,", &mask, &err), XTTS_EUSAGE);
    /* a plain list: every line an id, blank lines ignored, a tab is part of no format */
    write_text(path, "x1\n\nx2\r\nx1\n");
    assert_int_equal(xtts_exclude_load(path, XTTS_EXCLUDE_ALL_FLAGS, &x, &err), XTTS_OK);
    assert_int_equal(xtts_exclude_count(x), 2);
    assert_true(xtts_exclude_has(x, "x2"));
    assert_false(xtts_exclude_has(x, "x"));
    xtts_exclude_free(x);
    /* a TSV line with a flag outside the vocabulary is named with its line */
    write_text(path, "id\tflags\tdup_of\na\t-\t-\nb\tloud\t-\n");
    assert_int_equal(xtts_exclude_load(path, XTTS_EXCLUDE_ALL_FLAGS, &x, &err), XTTS_EINPUT);
    assert_non_null(strstr(err.msg, "r.tsv:3"));
    assert_null(x);
    snprintf(path, sizeof path, "%s/none.tsv", f->dir);
    assert_int_equal(xtts_exclude_load(path, XTTS_EXCLUDE_ALL_FLAGS, &x, &err), XTTS_ENOTFOUND);
    assert_false(xtts_exclude_has(NULL, "a"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(metrics_are_stored_with_their_records_across_shards, setup, teardown),
        cmocka_unit_test_setup_teardown(reader_api_gives_the_stored_metrics, setup, teardown),
        cmocka_unit_test_setup_teardown(a_cache_without_metrics_reads_as_none_and_says_how_to_add_them, setup, teardown),
        cmocka_unit_test_setup_teardown(writer_refuses_reserved_and_unusable_database_names, setup, teardown),
        cmocka_unit_test_setup_teardown(exclude_reads_a_report_tsv_with_a_flag_mask_and_plain_lists, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
