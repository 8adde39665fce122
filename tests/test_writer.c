/* test_writer.c — the cache writer and merge: records stored exactly once and
 * byte-identical after resume and kill -9, locks, configuration mismatch, shard
 * rotation, LMDB map growth, disk-full errors, and merging parts. Records are real
 * ones made with the record codec; shards are read back with LMDB directly. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <ftw.h>
#include <jansson.h>
#include <lmdb.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cache/store/writer.h"
#include "formats/manifest.h"
#include "formats/record.h"
#include "tests/writer_fixture.h"

#define N_MELS 8

/* ---- fixtures ------------------------------------------------------------------- */

static int setup(void **state) { return fixture_setup(state, "test_writer", XTTS_DTYPE_F16, 3); }

static int teardown(void **state) { return fixture_teardown(state); }

static uint64_t rng_next(uint64_t *s) {
    *s ^= *s << 13; *s ^= *s >> 7; *s ^= *s << 17;
    return *s;
}

/* The test configuration: 8 mels, 16 tokens, frames in buckets of 8 up to 64. */
static void test_config(xtts_cache_config *c) {
    xtts_cache_config_defaults(c);
    c->mel.n_mels = N_MELS;
    c->max_tokens = 16;
    c->max_frames = 64;
    c->n_buckets = 7;
    for (int b = 0; b < 7; b++) c->buckets[b] = 16 + 8 * b;
}

/* The record for input i: deterministic, 300 to 1500 bytes (noise does not compress). */
static void make_record(xtts_record_encoder *enc, uint64_t i, const uint8_t **buf, size_t *len) {
    xtts_cache_config c;
    test_config(&c);
    char id[32];
    snprintf(id, sizeof id, "utt%06llu", (unsigned long long)i);
    uint64_t s = 0x9e3779b97f4a7c15ULL ^ (i * 0x100000001b3ULL + 1);
    uint32_t frames = 8 + (uint32_t)(rng_next(&s) % 56);
    uint32_t padded = (uint32_t)xtts_cache_config_padded_frames(&c, (int)frames);
    int32_t tokens[16];
    for (int k = 0; k < 16; k++) tokens[k] = k < 10 ? (int32_t)(rng_next(&s) % 300) : 0;
    float mel[N_MELS * 64];
    for (uint32_t ch = 0; ch < N_MELS; ch++)
        for (uint32_t t = 0; t < padded; t++)
            mel[ch * padded + t] = t < frames ? (float)(rng_next(&s) % 20000) / 1000.0f - 11.5f : -11.5f;
    xtts_record_input in = {.id = id, .split = (uint8_t)(i % 10 == 0), .speaker_id = (uint32_t)(i % 3), .lang_id = 0,
                            .n_samples = frames * 256, .n_tokens = 10, .tokens_padded = 16, .n_frames = frames,
                            .frames_padded = padded, .n_mels = N_MELS, .pad_value = -11.5f, .tokens = tokens, .mel = mel};
    xtts_error err;
    assert_int_equal(xtts_record_encode(enc, &in, buf, len, &err), XTTS_OK);
}

static xtts_cache_writer_options opts_for(const char *dir) {
    xtts_cache_writer_options o;
    xtts_cache_writer_options_defaults(&o, dir);
    return o;
}

static int is_rejected(uint64_t i) { return i % 7 == 3; }

/* Feed inputs [from, to) into w: every 7th is a reject; the running sum of the input
 * indices stored is the caller state "sum". */
static xtts_status feed(fixture *f, xtts_cache_writer *w, uint64_t from, uint64_t to, xtts_error *err) {
    uint64_t sum = 0;
    void *data;
    size_t len;
    if (xtts_cache_writer_get_state(w, "sum", &data, &len, NULL) == XTTS_OK) {
        assert_int_equal(len, 8);
        memcpy(&sum, data, 8);
        free(data);
    }
    for (uint64_t i = from; i < to; i++) {
        xtts_status st;
        if (is_rejected(i)) {
            char id[32];
            snprintf(id, sizeof id, "utt%06llu", (unsigned long long)i);
            st = xtts_cache_writer_reject(w, i, id, "audio file missing", err);
        } else {
            const uint8_t *buf;
            size_t blen;
            make_record(f->enc, i, &buf, &blen);
            char id[32];
            snprintf(id, sizeof id, "utt%06llu", (unsigned long long)i);
            sum += i; /* the state including input i, then input i (writer.h) */
            if ((st = xtts_cache_writer_set_state(w, "sum", &sum, 8, err))) return st;
            st = xtts_cache_writer_put(w, i, id, buf, blen, err);
        }
        if (st) return st;
    }
    return XTTS_OK;
}

/* Read every record the manifest lists, in global index order, straight from LMDB, and
 * check record g is the one made for the g-th accepted input of expect_inputs. */
static void check_cache(const char *dir, const char *manifest_name, const uint64_t *expect_inputs, size_t n_expect,
                        xtts_record_encoder *enc) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, manifest_name);
    json_t *m;
    xtts_error err;
    xtts_status st = xtts_manifest_load(path, &m, &err);
    if (st) fail_msg("%s", err.msg);
    assert_int_equal(json_integer_value(json_object_get(m, "records")), n_expect);
    json_t *shards = json_object_get(m, "shards");
    uint64_t g = 0;
    for (size_t s = 0; s < json_array_size(shards); s++) {
        json_t *sh = json_array_get(shards, s);
        assert_int_equal(json_integer_value(json_object_get(sh, "first_index")), g);
        snprintf(path, sizeof path, "%s/%s", dir, json_string_value(json_object_get(sh, "name")));
        MDB_env *env;
        MDB_txn *txn;
        MDB_dbi recs, ids, meta;
        assert_int_equal(mdb_env_create(&env), 0);
        mdb_env_set_maxdbs(env, 4);
        assert_int_equal(mdb_env_open(env, path, MDB_RDONLY | MDB_NOLOCK | MDB_NORDAHEAD, 0644), 0);
        assert_int_equal(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn), 0);
        assert_int_equal(mdb_dbi_open(txn, "records", 0, &recs), 0);
        assert_int_equal(mdb_dbi_open(txn, "ids", 0, &ids), 0);
        assert_int_equal(mdb_dbi_open(txn, "meta", 0, &meta), 0);
        MDB_stat ms;
        mdb_stat(txn, recs, &ms);
        uint64_t n = ms.ms_entries;
        assert_int_equal(n, json_integer_value(json_object_get(sh, "records")));
        mdb_stat(txn, ids, &ms);
        assert_int_equal(ms.ms_entries, n);
        uint64_t bytes = 0;
        for (uint64_t k = 0; k < n; k++, g++) {
            uint8_t key[8];
            xtts_put_be64(key, k);
            MDB_val kv = {8, key}, v;
            assert_int_equal(mdb_get(txn, recs, &kv, &v), 0);
            assert_true(g < n_expect);
            const uint8_t *want;
            size_t wlen;
            make_record(enc, expect_inputs[g], &want, &wlen);
            assert_int_equal(v.mv_size, wlen);
            assert_memory_equal(v.mv_data, want, wlen);
            bytes += v.mv_size;
            char id[32];
            snprintf(id, sizeof id, "utt%06llu", (unsigned long long)expect_inputs[g]);
            MDB_val ik = {strlen(id), id}, iv;
            assert_int_equal(mdb_get(txn, ids, &ik, &iv), 0);
            assert_int_equal(iv.mv_size, 8);
            assert_int_equal(xtts_get_be64(iv.mv_data), k);
        }
        assert_int_equal(bytes, json_integer_value(json_object_get(sh, "bytes")));
        MDB_val fk = {6, "format"}, fv;
        assert_int_equal(mdb_get(txn, meta, &fk, &fv), 0);
        assert_int_equal(fv.mv_size, strlen("xtts-cache 2")); /* format 2 since record version 2 */
        assert_memory_equal(fv.mv_data, "xtts-cache 2", fv.mv_size);
        mdb_txn_abort(txn);
        mdb_env_close(env);
    }
    assert_int_equal(g, n_expect);
    json_decref(m);
}

/* Accepted inputs among [0, n). */
static size_t accepted(uint64_t n, uint64_t *out) {
    size_t k = 0;
    for (uint64_t i = 0; i < n; i++)
        if (!is_rejected(i)) out[k++] = i;
    return k;
}

static xtts_cache_writer *open_ok(const xtts_cache_writer_options *o, const xtts_cache_config *c) {
    xtts_cache_writer *w = NULL;
    xtts_error err;
    xtts_status st = xtts_cache_writer_open(o, c, &w, &err);
    if (st) fail_msg("open: %s", err.msg);
    return w;
}

static void finish_ok(xtts_cache_writer *w, const xtts_manifest_extra *extra) {
    xtts_error err;
    xtts_status st = xtts_cache_writer_finish(w, extra, &err);
    if (st) fail_msg("finish: %s", err.msg);
}

/* ---- tests ------------------------------------------------------------------------ */

static void writer_stores_records_in_input_order_with_ids_and_rejects(void **state) {
    fixture *f = *state;
    xtts_cache_config c;
    test_config(&c);
    xtts_cache_writer_options o = opts_for(f->dir);
    o.commit_every = 16;
    xtts_cache_writer *w = open_ok(&o, &c);
    assert_int_equal(xtts_cache_writer_next_input(w), 0);
    xtts_error err;
    assert_int_equal(feed(f, w, 0, 100, &err), XTTS_OK);
    uint64_t exp[100];
    size_t n = accepted(100, exp);
    assert_int_equal(xtts_cache_writer_count(w), n);
    assert_int_equal(xtts_cache_writer_rejected(w), 100 - n);
    finish_ok(w, NULL);
    check_cache(f->dir, "manifest.json", exp, n, f->enc);
    char path[1024];
    snprintf(path, sizeof path, "%s/manifest.json", f->dir);
    json_t *m;
    assert_int_equal(xtts_manifest_load(path, &m, &err), XTTS_OK);
    json_t *rej = json_object_get(m, "rejects");
    assert_int_equal(json_array_size(rej), 100 - n);
    assert_int_equal(json_integer_value(json_object_get(m, "rejected")), 100 - n);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(rej, 0), "input")), 3);
    assert_string_equal(json_string_value(json_object_get(json_array_get(rej, 0), "id")), "utt000003");
    assert_string_equal(json_string_value(json_object_get(json_array_get(rej, 0), "reason")), "audio file missing");
    assert_int_equal(json_array_size(json_object_get(m, "languages")), XTTS_N_LANGS);
    char hash[65];
    xtts_cache_config_hash(&c, hash);
    assert_string_equal(json_string_value(json_object_get(m, "config_hash")), hash);
    json_decref(m);
}

static void writer_state_is_visible_only_after_commit(void **state) {
    fixture *f = *state;
    xtts_cache_config c;
    test_config(&c);
    xtts_cache_writer_options o = opts_for(f->dir);
    xtts_cache_writer *w = open_ok(&o, &c);
    xtts_error err;
    void *data;
    size_t len;
    assert_int_equal(xtts_cache_writer_set_state(w, "stats", "abc", 3, &err), XTTS_OK);
    assert_int_equal(xtts_cache_writer_get_state(w, "stats", &data, &len, &err), XTTS_ENOTFOUND);
    assert_int_equal(xtts_cache_writer_commit(w, &err), XTTS_OK);
    assert_int_equal(xtts_cache_writer_get_state(w, "stats", &data, &len, &err), XTTS_OK);
    assert_int_equal(len, 3);
    assert_memory_equal(data, "abc", 3);
    free(data);
    assert_int_equal(xtts_cache_writer_set_state(w, "stats", "de", 2, &err), XTTS_OK);
    xtts_cache_writer_abort(w); /* "de" never committed */
    w = open_ok(&o, &c);
    assert_int_equal(xtts_cache_writer_get_state(w, "stats", &data, &len, &err), XTTS_OK);
    assert_int_equal(len, 3);
    assert_memory_equal(data, "abc", 3);
    free(data);
    xtts_cache_writer_abort(w);
}

/* The committed "sum" state is exactly the sum of the committed accepted inputs. */
static void assert_state_matches_records(xtts_cache_writer *w) {
    uint64_t next = xtts_cache_writer_next_input(w), want = 0, sum = 0;
    for (uint64_t i = 0; i < next; i++)
        if (!is_rejected(i)) want += i;
    void *data;
    size_t len;
    xtts_error err;
    if (xtts_cache_writer_get_state(w, "sum", &data, &len, &err) == XTTS_OK) {
        assert_int_equal(len, 8);
        memcpy(&sum, data, 8);
        free(data);
    }
    if (sum != want) fail_msg("state sum %llu, committed records sum %llu (next_input %llu)", (unsigned long long)sum,
                              (unsigned long long)want, (unsigned long long)next);
}

/* Stopping right after any commit (by commit_every, or the one before a rotation) leaves
 * state and records that agree. */
static void writer_commits_state_with_exactly_its_records(void **state) {
    fixture *f = *state;
    xtts_cache_config c;
    test_config(&c);
    static const struct { uint32_t every; uint64_t shard; } cases[] = {{5, 1 << 30}, {1000, 4096}, {3, 5000}, {1, 3000}};
    for (size_t k = 0; k < 4; k++) {
        for (uint64_t stop = 1; stop < 60; stop += 7) {
            char dir[700];
            snprintf(dir, sizeof dir, "%s/c%zu-%llu", f->dir, k, (unsigned long long)stop);
            xtts_cache_writer_options o = opts_for(dir);
            o.commit_every = cases[k].every;
            o.shard_bytes = cases[k].shard;
            xtts_cache_writer *w = open_ok(&o, &c);
            xtts_error err;
            assert_int_equal(feed(f, w, 0, stop, &err), XTTS_OK);
            xtts_cache_writer_abort(w); /* as if killed: only commits count */
            w = open_ok(&o, &c);
            assert_state_matches_records(w);
            uint64_t next = xtts_cache_writer_next_input(w);
            assert_int_equal(feed(f, w, next, 70, &err), XTTS_OK);
            xtts_cache_writer_abort(w);
            w = open_ok(&o, &c);
            assert_state_matches_records(w);
            xtts_cache_writer_abort(w);
        }
    }
}

static void writer_resumes_from_last_commit_after_abort(void **state) {
    fixture *f = *state;
    xtts_cache_config c;
    test_config(&c);
    xtts_cache_writer_options o = opts_for(f->dir);
    o.commit_every = 16;
    xtts_cache_writer *w = open_ok(&o, &c);
    xtts_error err;
    assert_int_equal(feed(f, w, 0, 50, &err), XTTS_OK);
    xtts_cache_writer_abort(w); /* 48 inputs committed (3 x 16 operations), 2 lost */
    w = open_ok(&o, &c);
    uint64_t next = xtts_cache_writer_next_input(w);
    assert_int_equal(next, 48);
    uint64_t exp[200];
    assert_int_equal(xtts_cache_writer_count(w), accepted(next, exp));
    assert_int_equal(xtts_cache_writer_rejected(w), next - accepted(next, exp));
    assert_int_equal(feed(f, w, next, 200, &err), XTTS_OK);
    finish_ok(w, NULL);
    size_t n = accepted(200, exp);
    check_cache(f->dir, "manifest.json", exp, n, f->enc);
    /* Re-opening a finished build resumes at its end and finishes again unchanged. */
    w = open_ok(&o, &c);
    assert_int_equal(xtts_cache_writer_next_input(w), 200);
    void *data;
    size_t len;
    assert_int_equal(xtts_cache_writer_get_state(w, "sum", &data, &len, &err), XTTS_OK);
    uint64_t sum = 0, want = 0;
    memcpy(&sum, data, 8);
    free(data);
    for (size_t i = 0; i < n; i++) want += exp[i];
    assert_int_equal(sum, want);
    finish_ok(w, NULL);
    check_cache(f->dir, "manifest.json", exp, n, f->enc);
}

static void writer_refuses_input_index_that_does_not_increase(void **state) {
    fixture *f = *state;
    xtts_cache_config c;
    test_config(&c);
    xtts_cache_writer_options o = opts_for(f->dir);
    xtts_cache_writer *w = open_ok(&o, &c);
    xtts_error err;
    const uint8_t *buf;
    size_t len;
    make_record(f->enc, 5, &buf, &len);
    assert_int_equal(xtts_cache_writer_put(w, 5, "utt000005", buf, len, &err), XTTS_OK);
    make_record(f->enc, 4, &buf, &len);
    assert_int_equal(xtts_cache_writer_put(w, 4, "utt000004", buf, len, &err), XTTS_EUSAGE);
    assert_non_null(strstr(err.msg, "utt000004"));
    assert_int_equal(xtts_cache_writer_reject(w, 5, "utt000005", "x", &err), XTTS_EUSAGE);
    assert_int_equal(xtts_cache_writer_count(w), 1);
    xtts_cache_writer_abort(w);
}

static void writer_refuses_duplicate_ids_pending_committed_and_in_earlier_shards(void **state) {
    fixture *f = *state;
    xtts_cache_config c;
    test_config(&c);
    xtts_cache_writer_options o = opts_for(f->dir);
    o.shard_bytes = 4096;
    o.commit_every = 4;
    xtts_cache_writer *w = open_ok(&o, &c);
    xtts_error err;
    assert_int_equal(feed(f, w, 0, 40, &err), XTTS_OK);
    const uint8_t *buf;
    size_t len;
    make_record(f->enc, 0, &buf, &len); /* id utt000000, stored in shard 0 */
    assert_int_equal(xtts_cache_writer_put(w, 100, "utt000000", buf, len, &err), XTTS_EINPUT);
    assert_non_null(strstr(err.msg, "duplicate id"));
    make_record(f->enc, 39, &buf, &len); /* pending (not yet committed) */
    assert_int_equal(xtts_cache_writer_put(w, 101, "utt000039", buf, len, &err), XTTS_EINPUT);
    /* the id passed must be the one inside the record */
    make_record(f->enc, 41, &buf, &len);
    assert_int_equal(xtts_cache_writer_put(w, 102, "other", buf, len, &err), XTTS_EINPUT);
    /* the writer is still usable after refusals */
    assert_int_equal(xtts_cache_writer_put(w, 103, "utt000041", buf, len, &err), XTTS_OK);
    xtts_cache_writer_abort(w);
    w = open_ok(&o, &c); /* the id filter is refilled from the shards on open */
    make_record(f->enc, 1, &buf, &len);
    assert_int_equal(xtts_cache_writer_put(w, 200, "utt000001", buf, len, &err), XTTS_EINPUT);
    xtts_cache_writer_abort(w);
}

static void writer_refuses_bad_ids_and_non_records(void **state) {
    fixture *f = *state;
    xtts_cache_config c;
    test_config(&c);
    xtts_cache_writer_options o = opts_for(f->dir);
    xtts_cache_writer *w = open_ok(&o, &c);
    xtts_error err;
    assert_int_equal(xtts_cache_writer_put(w, 0, "x", "not a record", 12, &err), XTTS_EINPUT);
    assert_non_null(strstr(err.msg, "not a valid record"));
    const uint8_t *buf;
    size_t len;
    make_record(f->enc, 0, &buf, &len);
    assert_int_equal(xtts_cache_writer_put(w, 0, "", buf, len, &err), XTTS_EINPUT);
    char long_id[600];
    memset(long_id, 'a', sizeof long_id - 1);
    long_id[sizeof long_id - 1] = '\0';
    assert_int_equal(xtts_cache_writer_put(w, 0, long_id, buf, len, &err), XTTS_ERANGE);
    /* a record of another shape than the configuration's */
    xtts_record_encoder *f32;
    xtts_record_encoder_new(XTTS_DTYPE_F32, 3, 0, &f32);
    make_record(f32, 0, &buf, &len);
    assert_int_equal(xtts_cache_writer_put(w, 0, "utt000000", buf, len, &err), XTTS_EINPUT);
    assert_non_null(strstr(err.msg, "does not match the cache configuration"));
    xtts_record_encoder_delete(f32);
    xtts_cache_config other;
    test_config(&other);
    xtts_cache_writer_abort(w);
    other.n_buckets = 0;
    w = open_ok(&o, &other); /* the same directory, nothing committed: no mismatch */
    make_record(f->enc, 0, &buf, &len); /* padded to a bucket, not to max_frames */
    assert_int_equal(xtts_cache_writer_put(w, 0, "utt000000", buf, len, &err), XTTS_EINPUT);
    assert_int_equal(xtts_cache_writer_count(w), 0);
    xtts_cache_writer_abort(w);
}

static void writer_refuses_invalid_options_and_configuration(void **state) {
    fixture *f = *state;
    xtts_cache_config c;
    test_config(&c);
    c.mel.n_mels = 0;
    xtts_cache_writer_options o = opts_for(f->dir);
    xtts_cache_writer *w = NULL;
    xtts_error err;
    assert_int_equal(xtts_cache_writer_open(&o, &c, &w, &err), XTTS_EUSAGE);
    assert_null(w);
    assert_non_null(strstr(err.msg, "mel.n_mels"));
    test_config(&c);
    o.part = 2;
    o.n_parts = 2;
    assert_int_equal(xtts_cache_writer_open(&o, &c, &w, &err), XTTS_EUSAGE);
    o.part = -1;
    o.dir = "";
    assert_int_equal(xtts_cache_writer_open(&o, &c, &w, &err), XTTS_EUSAGE);
    assert_null(w);
}

static void writer_second_writer_on_same_dir_or_part_is_busy(void **state) {
    fixture *f = *state;
    xtts_cache_config c;
    test_config(&c);
    xtts_cache_writer_options o = opts_for(f->dir);
    xtts_cache_writer *w = open_ok(&o, &c), *w2 = NULL;
    xtts_error err;
    assert_int_equal(xtts_cache_writer_open(&o, &c, &w2, &err), XTTS_EBUSY);
    assert_null(w2);
    assert_non_null(strstr(err.msg, ".xtts-lock"));
    assert_non_null(strstr(err.msg, f->dir));
    assert_int_equal(xtts_cache_merge(f->dir, &err), XTTS_EBUSY);
    xtts_cache_writer_abort(w);

    /* parts: two different parts run side by side, the same part twice does not */
    char dir2[600];
    snprintf(dir2, sizeof dir2, "%s/parts", f->dir);
    xtts_cache_writer_options p0 = opts_for(dir2), p1 = opts_for(dir2);
    p0.part = 0; p0.n_parts = 2;
    p1.part = 1; p1.n_parts = 2;
    xtts_cache_writer *a = open_ok(&p0, &c), *b = open_ok(&p1, &c);
    assert_int_equal(xtts_cache_writer_open(&p0, &c, &w2, &err), XTTS_EBUSY);
    assert_non_null(strstr(err.msg, "part 0"));
    xtts_cache_writer_options whole = opts_for(dir2);
    assert_int_equal(xtts_cache_writer_open(&whole, &c, &w2, &err), XTTS_EBUSY);
    assert_int_equal(xtts_cache_merge(dir2, &err), XTTS_EBUSY);
    xtts_cache_writer_abort(a);
    xtts_cache_writer_abort(b);
    /* released: a writer opens again */
    a = open_ok(&p0, &c);
    xtts_cache_writer_abort(a);
}

static void writer_lock_is_held_against_another_process(void **state) {
    fixture *f = *state;
    xtts_cache_config c;
    test_config(&c);
    xtts_cache_writer_options o = opts_for(f->dir);
    xtts_cache_writer *w = open_ok(&o, &c);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        xtts_cache_writer *w2 = NULL;
        xtts_error err;
        xtts_status st = xtts_cache_writer_open(&o, &c, &w2, &err);
        int ok = st == XTTS_EBUSY && strstr(err.msg, "pid ") != NULL;
        _exit(ok ? 0 : 1);
    }
    int status;
    waitpid(pid, &status, 0);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    xtts_cache_writer_abort(w);
}

static void writer_refuses_other_config_unless_force(void **state) {
    fixture *f = *state;
    xtts_cache_config c, c2;
    test_config(&c);
    test_config(&c2);
    c2.zstd_level = 5;
    xtts_cache_writer_options o = opts_for(f->dir);
    xtts_cache_writer *w = open_ok(&o, &c);
    xtts_error err;
    assert_int_equal(feed(f, w, 0, 30, &err), XTTS_OK);
    finish_ok(w, NULL);
    w = NULL;
    assert_int_equal(xtts_cache_writer_open(&o, &c2, &w, &err), XTTS_EMISMATCH);
    assert_null(w);
    assert_non_null(strstr(err.msg, "--force"));
    assert_non_null(strstr(err.msg, "config_hash"));
    assert_non_null(strstr(err.msg, "zstd_level 1 -> 5")); /* the field that differs (default level 1) */
    /* a crashed build (shards, no manifest) is refused the same way */
    char path[700];
    snprintf(path, sizeof path, "%s/manifest.json", f->dir);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(xtts_cache_writer_open(&o, &c2, &w, &err), XTTS_EMISMATCH);
    assert_non_null(strstr(err.msg, "shard-00000"));
    o.force = 1;
    w = open_ok(&o, &c2);
    assert_int_equal(xtts_cache_writer_next_input(w), 0);
    assert_int_equal(xtts_cache_writer_count(w), 0);
    assert_int_equal(feed(f, w, 0, 10, &err), XTTS_OK);
    finish_ok(w, NULL);
    json_t *m;
    assert_int_equal(xtts_manifest_load(path, &m, &err), XTTS_OK);
    char hash[65];
    xtts_cache_config_hash(&c2, hash);
    assert_string_equal(json_string_value(json_object_get(m, "config_hash")), hash);
    json_decref(m);
    uint64_t exp[10];
    check_cache(f->dir, "manifest.json", exp, accepted(10, exp), f->enc);
}

static void writer_refuses_a_whole_build_over_parts_and_parts_over_a_whole_build(void **state) {
    fixture *f = *state;
    xtts_cache_config c;
    test_config(&c);
    xtts_cache_writer_options o = opts_for(f->dir);
    xtts_cache_writer *w = open_ok(&o, &c);
    xtts_error err;
    assert_int_equal(feed(f, w, 0, 5, &err), XTTS_OK);
    finish_ok(w, NULL);
    xtts_cache_writer_options p = opts_for(f->dir);
    p.part = 0;
    p.n_parts = 2;
    w = NULL;
    assert_int_equal(xtts_cache_writer_open(&p, &c, &w, &err), XTTS_EMISMATCH);
    assert_non_null(strstr(err.msg, "whole build"));
    p.force = 1;
    w = open_ok(&p, &c);
    assert_int_equal(feed(f, w, 0, 5, &err), XTTS_OK);
    finish_ok(w, NULL);
    w = NULL;
    assert_int_equal(xtts_cache_writer_open(&o, &c, &w, &err), XTTS_EMISMATCH);
    assert_non_null(strstr(err.msg, "parts"));
    p.force = 0;
    assert_int_equal(xtts_cache_writer_open(&p, &c, &w, &err), XTTS_OK); /* the part itself resumes */
    xtts_cache_writer_abort(w);
}

static void writer_rotates_shards_at_shard_bytes(void **state) {
    fixture *f = *state;
    xtts_cache_config c;
    test_config(&c);
    xtts_cache_writer_options o = opts_for(f->dir);
    o.shard_bytes = 16384;
    o.commit_every = 8;
    xtts_cache_writer *w = open_ok(&o, &c);
    xtts_error err;
    assert_int_equal(feed(f, w, 0, 300, &err), XTTS_OK);
    finish_ok(w, NULL);
    uint64_t exp[300];
    size_t n = accepted(300, exp);
    check_cache(f->dir, "manifest.json", exp, n, f->enc);
    char path[700];
    snprintf(path, sizeof path, "%s/manifest.json", f->dir);
    json_t *m;
    assert_int_equal(xtts_manifest_load(path, &m, &err), XTTS_OK);
    json_t *shards = json_object_get(m, "shards");
    assert_true(json_array_size(shards) >= 5);
    for (size_t i = 0; i < json_array_size(shards); i++) {
        json_t *s = json_array_get(shards, i);
        char name[32];
        snprintf(name, sizeof name, "shard-%05zu", i);
        assert_string_equal(json_string_value(json_object_get(s, "name")), name);
        assert_true(json_integer_value(json_object_get(s, "bytes")) <= 16384);
        assert_true(json_integer_value(json_object_get(s, "records")) > 0);
    }
    json_decref(m);
}

static void writer_grows_a_tiny_lmdb_map_instead_of_failing(void **state) {
    fixture *f = *state;
    xtts_cache_config c;
    test_config(&c);
    xtts_cache_writer_options o = opts_for(f->dir);
    o.map_bytes = 32768; /* 8 pages: full after a few records */
    o.commit_every = 64;
    xtts_cache_writer *w = open_ok(&o, &c);
    xtts_error err;
    assert_int_equal(feed(f, w, 0, 700, &err), XTTS_OK);
    finish_ok(w, NULL);
    uint64_t exp[700];
    size_t n = accepted(700, exp);
    check_cache(f->dir, "manifest.json", exp, n, f->enc);
    /* and resuming with the tiny initial map again keeps working */
    w = open_ok(&o, &c);
    assert_int_equal(feed(f, w, 700, 900, &err), XTTS_OK);
    finish_ok(w, NULL);
    uint64_t exp2[900];
    check_cache(f->dir, "manifest.json", exp2, accepted(900, exp2), f->enc);
}

/* A build killed with SIGKILL at random moments, resumed each time, ends with every
 * record exactly once and the same shards as a build never interrupted. */
static void writer_survives_kill9_at_random_points(void **state) {
    fixture *f = *state;
    enum { N = 1500 };
    xtts_cache_config c;
    test_config(&c);
    char ref[700], dir[700];
    snprintf(ref, sizeof ref, "%s/reference", f->dir);
    snprintf(dir, sizeof dir, "%s/killed", f->dir);
    xtts_cache_writer_options o = opts_for(ref);
    o.shard_bytes = 65536;
    o.commit_every = 8;
    o.map_bytes = 65536;
    xtts_error err;
    double t0 = xtts_now_s();
    xtts_cache_writer *w = open_ok(&o, &c);
    assert_int_equal(feed(f, w, 0, N, &err), XTTS_OK);
    finish_ok(w, NULL);
    /* kill within about the time a whole build takes, so kills land all along it */
    uint64_t span_us = (uint64_t)((xtts_now_s() - t0) * 1e6) + 2000;

    o.dir = dir;
    uint64_t seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 20);
    const char *env_seed = getenv("XTTS_TEST_SEED");
    if (env_seed) seed = strtoull(env_seed, NULL, 10);
    print_message("kill -9 test seed %llu\n", (unsigned long long)seed);
    int kills = 0, finished = 0;
    for (int round = 0; round < 60 && !finished; round++) {
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            xtts_cache_writer *cw = NULL;
            xtts_error cerr;
            if (xtts_cache_writer_open(&o, &c, &cw, &cerr)) _exit(3);
            if (feed(f, cw, xtts_cache_writer_next_input(cw), N, &cerr)) _exit(4);
            if (xtts_cache_writer_finish(cw, NULL, &cerr)) _exit(5);
            _exit(0);
        }
        useconds_t delay = (useconds_t)(rng_next(&seed) % (span_us / 3 + 1));
        usleep(delay);
        int killed = kill(pid, SIGKILL) == 0;
        int status;
        waitpid(pid, &status, 0);
        if (WIFEXITED(status)) {
            if (WEXITSTATUS(status) != 0) fail_msg("writer child failed with status %d (seed %llu)", WEXITSTATUS(status), (unsigned long long)seed);
            finished = 1;
        } else {
            assert_true(killed && WIFSIGNALED(status));
            kills++;
        }
    }
    if (!finished) { /* finish in this process */
        w = open_ok(&o, &c);
        assert_int_equal(feed(f, w, xtts_cache_writer_next_input(w), N, &err), XTTS_OK);
        finish_ok(w, NULL);
    }
    print_message("kill -9 test: %d kills\n", kills);
    assert_true(kills > 0);
    uint64_t exp[N];
    size_t n = accepted(N, exp);
    check_cache(dir, "manifest.json", exp, n, f->enc);
    /* The same shards, counts, bytes, rejects and state as the uninterrupted build. */
    char p1[800], p2[800];
    snprintf(p1, sizeof p1, "%s/manifest.json", ref);
    snprintf(p2, sizeof p2, "%s/manifest.json", dir);
    json_t *m1, *m2;
    assert_int_equal(xtts_manifest_load(p1, &m1, &err), XTTS_OK);
    assert_int_equal(xtts_manifest_load(p2, &m2, &err), XTTS_OK);
    assert_true(json_equal(json_object_get(m1, "shards"), json_object_get(m2, "shards")));
    assert_true(json_equal(json_object_get(m1, "rejects"), json_object_get(m2, "rejects")));
    assert_true(json_equal(m1, m2));
    json_decref(m1);
    json_decref(m2);
    o.dir = dir;
    w = open_ok(&o, &c);
    void *d1;
    size_t l1;
    assert_int_equal(xtts_cache_writer_get_state(w, "sum", &d1, &l1, &err), XTTS_OK);
    uint64_t sum = 0, want = 0;
    memcpy(&sum, d1, 8);
    free(d1);
    for (size_t i = 0; i < n; i++) want += exp[i];
    assert_int_equal(sum, want);
    xtts_cache_writer_abort(w);
}

/* A shard left by a rotation that was killed before its first commit is dropped. */
static void writer_drops_an_uncommitted_trailing_shard(void **state) {
    fixture *f = *state;
    xtts_cache_config c;
    test_config(&c);
    xtts_cache_writer_options o = opts_for(f->dir);
    xtts_cache_writer *w = open_ok(&o, &c);
    xtts_error err;
    assert_int_equal(feed(f, w, 0, 20, &err), XTTS_OK);
    assert_int_equal(xtts_cache_writer_commit(w, &err), XTTS_OK);
    xtts_cache_writer_abort(w);
    /* an empty LMDB environment where the next shard would go */
    char path[700];
    snprintf(path, sizeof path, "%s/shard-00001", f->dir);
    assert_int_equal(mkdir(path, 0755), 0);
    MDB_env *env;
    assert_int_equal(mdb_env_create(&env), 0);
    assert_int_equal(mdb_env_open(env, path, 0, 0644), 0);
    mdb_env_close(env);
    w = open_ok(&o, &c);
    assert_int_equal(xtts_cache_writer_next_input(w), 20);
    struct stat sb;
    assert_int_equal(stat(path, &sb), -1);
    assert_int_equal(feed(f, w, 20, 40, &err), XTTS_OK);
    finish_ok(w, NULL);
    uint64_t exp[40];
    check_cache(f->dir, "manifest.json", exp, accepted(40, exp), f->enc);
}

/* A gap in the shard numbers is refused as damage; --force replaces the build. */
static void writer_refuses_a_shard_gap_unless_force(void **state) {
    fixture *f = *state;
    xtts_cache_config c;
    test_config(&c);
    xtts_cache_writer_options o = opts_for(f->dir);
    o.shard_bytes = 4096;
    xtts_cache_writer *w = open_ok(&o, &c);
    xtts_error err;
    assert_int_equal(feed(f, w, 0, 60, &err), XTTS_OK);
    finish_ok(w, NULL);
    char path[700];
    snprintf(path, sizeof path, "%s/shard-00001", f->dir);
    rm_rf(path);
    w = NULL;
    assert_int_equal(xtts_cache_writer_open(&o, &c, &w, &err), XTTS_ECORRUPT);
    assert_non_null(strstr(err.msg, "shard-00001"));
    assert_non_null(strstr(err.msg, "missing"));
    o.force = 1;
    w = open_ok(&o, &c);
    assert_int_equal(xtts_cache_writer_next_input(w), 0);
    assert_int_equal(feed(f, w, 0, 30, &err), XTTS_OK);
    finish_ok(w, NULL);
    uint64_t exp[30];
    check_cache(f->dir, "manifest.json", exp, accepted(30, exp), f->enc);
}

/* Disk full (here: the file size limit, EFBIG) is a status with a message, and what was
 * committed before stays readable and resumable. */
static void writer_reports_disk_full_and_keeps_committed_data(void **state) {
    fixture *f = *state;
    xtts_cache_config c;
    test_config(&c);
    xtts_cache_writer_options o = opts_for(f->dir);
    o.commit_every = 8;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit rl = {256 * 1024, 256 * 1024};
        setrlimit(RLIMIT_FSIZE, &rl);
        xtts_cache_writer *cw = NULL;
        xtts_error cerr;
        xtts_cache_writer_options co = o;
        co.map_bytes = 1 << 20;
        if (xtts_cache_writer_open(&co, &c, &cw, &cerr)) _exit(3);
        xtts_status st = feed(f, cw, 0, 2000, &cerr);
        if (st == XTTS_OK) _exit(4);
        /* later calls report the same failure */
        xtts_error again;
        xtts_status st2 = xtts_cache_writer_commit(cw, &again);
        int n = snprintf(NULL, 0, "%d %d %s", (int)st, (int)st2, cerr.msg);
        char *msg = malloc((size_t)n + 1);
        snprintf(msg, (size_t)n + 1, "%d %d %s", (int)st, (int)st2, cerr.msg);
        if (write(fds[1], msg, (size_t)n) < 0) _exit(6);
        xtts_cache_writer_abort(cw);
        free(msg);
        _exit(0);
    }
    close(fds[1]);
    char msg[1024] = "";
    ssize_t got = 0, r;
    while ((r = read(fds[0], msg + got, sizeof msg - 1 - (size_t)got)) > 0) got += r;
    msg[got] = '\0';
    close(fds[0]);
    int status;
    waitpid(pid, &status, 0);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    print_message("disk full message: %s\n", msg);
    int st = -1, st2 = -1;
    sscanf(msg, "%d %d", &st, &st2);
    assert_int_equal(st, XTTS_EIO);
    assert_int_equal(st2, XTTS_EIO);
    assert_non_null(strstr(msg, "shard-00000"));
    assert_non_null(strstr(msg, "file size limit"));
    assert_non_null(strstr(msg, "re-run to resume"));
    /* committed data intact; the build completes once space is back */
    xtts_cache_writer *w = open_ok(&o, &c);
    uint64_t next = xtts_cache_writer_next_input(w);
    assert_true(next > 0 && next < 2000);
    xtts_error err;
    assert_int_equal(feed(f, w, next, 2000, &err), XTTS_OK);
    finish_ok(w, NULL);
    static uint64_t exp[2000];
    check_cache(f->dir, "manifest.json", exp, accepted(2000, exp), f->enc);
}

/* A real full disk: a 2 MiB tmpfs in a private mount namespace (needs root; skipped
 * otherwise). The commit that finds no space fails with ENOSPC and a message; once space
 * is freed, the build resumes and completes. */
static void writer_reports_enospc_on_a_full_filesystem_and_resumes(void **state) {
    fixture *f = *state;
    enum { N = 700 };
    char mnt[700], out[700];
    snprintf(mnt, sizeof mnt, "%s/mnt", f->dir);
    snprintf(out, sizeof out, "%s/out", f->dir);
    assert_int_equal(mkdir(mnt, 0755), 0);
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
            mount("tmpfs", mnt, "tmpfs", 0, "size=2m") != 0)
            _exit(77);
        char filler[800], dir[800];
        snprintf(filler, sizeof filler, "%s/filler", mnt);
        snprintf(dir, sizeof dir, "%s/cache", mnt);
        FILE *fp = fopen(filler, "w");
        static char block[4096];
        for (int i = 0; fp && i < 384; i++) fwrite(block, 1, sizeof block, fp); /* 1.5 MiB */
        if (!fp || fclose(fp)) _exit(3);
        xtts_cache_config c;
        test_config(&c);
        xtts_cache_writer_options o = opts_for(dir);
        o.commit_every = 16;
        o.map_bytes = 1 << 20;
        xtts_cache_writer *w = NULL;
        xtts_error err;
        if (xtts_cache_writer_open(&o, &c, &w, &err)) _exit(4);
        xtts_status st = feed(f, w, 0, N, &err);
        if (write(fds[1], err.msg, strlen(err.msg)) < 0) _exit(5);
        close(fds[1]);
        xtts_cache_writer_abort(w);
        if (st != XTTS_EIO) _exit(6);
        unlink(filler); /* space again */
        if (xtts_cache_writer_open(&o, &c, &w, &err)) _exit(7);
        uint64_t next = xtts_cache_writer_next_input(w);
        if (next == 0 || next >= N) _exit(8);
        if (feed(f, w, next, N, &err) || xtts_cache_writer_finish(w, NULL, &err)) _exit(9);
        char cmd[2000];
        snprintf(cmd, sizeof cmd, "cp -a '%s' '%s'", dir, out);
        _exit(system(cmd) == 0 ? 0 : 10);
    }
    close(fds[1]);
    char msg[1024] = "";
    ssize_t got = 0, r;
    while ((r = read(fds[0], msg + got, sizeof msg - 1 - (size_t)got)) > 0) got += r;
    msg[got] = '\0';
    close(fds[0]);
    int status;
    waitpid(pid, &status, 0);
    assert_true(WIFEXITED(status));
    if (WEXITSTATUS(status) == 77) {
        print_message("no private tmpfs here (not root?): skipped\n");
        skip();
    }
    print_message("ENOSPC message: %s\n", msg);
    if (WEXITSTATUS(status) != 0) fail_msg("child step %d failed; message: %s", WEXITSTATUS(status), msg);
    assert_non_null(strstr(msg, "disk full"));
    assert_non_null(strstr(msg, "re-run to resume"));
    uint64_t exp[N];
    check_cache(out, "manifest.json", exp, accepted(N, exp), f->enc);
}

static void writer_finish_writes_extra_beside_its_own_keys(void **state) {
    fixture *f = *state;
    xtts_cache_config c;
    test_config(&c);
    xtts_cache_writer_options o = opts_for(f->dir);
    xtts_cache_writer *w = open_ok(&o, &c);
    xtts_error err;
    assert_int_equal(feed(f, w, 0, 10, &err), XTTS_OK);
    static const char *const speakers[] = {"alice", "bob"};
    xtts_manifest_extra extra = {.has_speakers = 1, .speakers = speakers, .n_speakers = 2, .has_splits = 1,
                                 .split_train = 8, .split_val = 1, .has_totals = 1, .audio_seconds = 3.5};
    finish_ok(w, &extra);
    char path[700];
    snprintf(path, sizeof path, "%s/manifest.json", f->dir);
    json_t *m;
    assert_int_equal(xtts_manifest_load(path, &m, &err), XTTS_OK);
    uint64_t exp[10];
    assert_int_equal(json_integer_value(json_object_get(m, "records")), accepted(10, exp));
    assert_string_equal(json_string_value(json_array_get(json_object_get(m, "speakers"), 1)), "bob");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(m, "splits"), "train")), 8);
    json_decref(m);

    /* extra with malformed stats (a frame count JSON holds as negative): no manifest is written */
    assert_int_equal(unlink(path), 0);
    w = open_ok(&o, &c);
    extra = (xtts_manifest_extra){.stats_frames = UINT64_MAX};
    assert_int_equal(xtts_cache_writer_finish(w, &extra, &err), XTTS_EINPUT);
    assert_non_null(strstr(err.msg, "stats.frames"));
    struct stat sb;
    assert_int_equal(stat(path, &sb), -1);
}

/* ---- merge ----------------------------------------------------------------------- */

/* Part K of 3 takes inputs with i % 3 == K; stats are per-part sums of fake values. */
static void build_part(fixture *f, const char *dir, int part, int n_parts, const xtts_cache_config *c,
                       const char *speakers_last) {
    xtts_cache_writer_options o = opts_for(dir);
    o.part = part;
    o.n_parts = n_parts;
    o.shard_bytes = 8192;
    o.commit_every = 5;
    xtts_cache_writer *w = open_ok(&o, c);
    xtts_error err;
    long long frames = 0;
    double sum[N_MELS] = {0}, sumsq[N_MELS] = {0};
    for (uint64_t i = (uint64_t)part; i < 120; i += (uint64_t)n_parts) {
        char id[32];
        snprintf(id, sizeof id, "utt%06llu", (unsigned long long)i);
        if (is_rejected(i)) {
            assert_int_equal(xtts_cache_writer_reject(w, i, id, "too long", &err), XTTS_OK);
            continue;
        }
        const uint8_t *buf;
        size_t len;
        make_record(f->enc, i, &buf, &len);
        assert_int_equal(xtts_cache_writer_put(w, i, id, buf, len, &err), XTTS_OK);
        frames += 2;
        for (int k = 0; k < N_MELS; k++) {
            double v1 = (double)(i % 11) + k, v2 = -(double)k;
            sum[k] += v1 + v2;
            sumsq[k] += v1 * v1 + v2 * v2;
        }
    }
    const char *speakers[] = {"alice", speakers_last};
    xtts_manifest_extra extra = {.stats_frames = (uint64_t)frames, .n_mels = N_MELS, .mel_sum = sum, .mel_sumsq = sumsq,
                                 .has_speakers = 1, .speakers = speakers, .n_speakers = 2, .has_totals = 1,
                                 .audio_seconds = 1800.0, .total_frames = (uint64_t)frames};
    finish_ok(w, &extra);
}

static void merge_joins_three_parts_in_part_order(void **state) {
    fixture *f = *state;
    xtts_cache_config c;
    test_config(&c);
    for (int k = 2; k >= 0; k--) build_part(f, f->dir, k, 3, &c, "bob");
    xtts_error err;
    xtts_status st = xtts_cache_merge(f->dir, &err);
    if (st) fail_msg("merge: %s", err.msg);
    uint64_t exp[120];
    size_t n = 0;
    for (int k = 0; k < 3; k++)
        for (uint64_t i = (uint64_t)k; i < 120; i += 3)
            if (!is_rejected(i)) exp[n++] = i;
    check_cache(f->dir, "manifest.json", exp, n, f->enc);
    char path[700];
    snprintf(path, sizeof path, "%s/manifest.json", f->dir);
    json_t *m;
    assert_int_equal(xtts_manifest_load(path, &m, &err), XTTS_OK);
    assert_null(json_object_get(m, "part"));
    assert_null(json_object_get(m, "n_parts"));
    assert_int_equal(json_integer_value(json_object_get(m, "rejected")), 120 - n);
    assert_int_equal(json_array_size(json_object_get(m, "rejects")), 120 - n);
    json_t *shards = json_object_get(m, "shards");
    assert_string_equal(json_string_value(json_object_get(json_array_get(shards, 0), "name")), "shard-00000-00000");
    const char *last = json_string_value(json_object_get(json_array_get(shards, json_array_size(shards) - 1), "name"));
    assert_int_equal(strncmp(last, "shard-00002-", 12), 0);
    assert_true(json_array_size(shards) > 3);
    json_t *totals = json_object_get(m, "totals");
    assert_true(fabs(json_number_value(json_object_get(totals, "audio_seconds")) - 5400.0) < 1e-9);
    assert_true(fabs(json_number_value(json_object_get(totals, "hours")) - 1.5) < 1e-9);
    /* stats: recompute mean/std from every record's fake values directly */
    json_t *stats = json_object_get(m, "stats");
    assert_int_equal(json_integer_value(json_object_get(stats, "frames")), 2 * n);
    for (int k = 0; k < N_MELS; k++) {
        double s = 0, q = 0;
        for (size_t r = 0; r < n; r++) {
            double v1 = (double)(exp[r] % 11) + k, v2 = -(double)k;
            s += v1 + v2;
            q += v1 * v1 + v2 * v2;
        }
        double mean = s / (2.0 * n), sd = sqrt(q / (2.0 * n) - mean * mean);
        assert_true(fabs(json_number_value(json_array_get(json_object_get(stats, "mel_mean"), k)) - mean) < 1e-9);
        assert_true(fabs(json_number_value(json_array_get(json_object_get(stats, "mel_std"), k)) - sd) < 1e-9);
    }
    json_decref(m);
}

static void merge_refuses_missing_part(void **state) {
    fixture *f = *state;
    xtts_cache_config c;
    test_config(&c);
    build_part(f, f->dir, 0, 3, &c, "bob");
    build_part(f, f->dir, 2, 3, &c, "bob");
    xtts_error err;
    assert_int_equal(xtts_cache_merge(f->dir, &err), XTTS_ENOTFOUND);
    assert_non_null(strstr(err.msg, "manifest.part-00001.json"));
    char path[700];
    snprintf(path, sizeof path, "%s/manifest.json", f->dir);
    struct stat sb;
    assert_int_equal(stat(path, &sb), -1);
}

static void merge_refuses_parts_with_another_config(void **state) {
    fixture *f = *state;
    xtts_cache_config c, c2;
    test_config(&c);
    test_config(&c2);
    c2.zstd_level = 9;
    build_part(f, f->dir, 0, 2, &c, "bob");
    build_part(f, f->dir, 1, 2, &c2, "bob");
    xtts_error err;
    assert_int_equal(xtts_cache_merge(f->dir, &err), XTTS_EMISMATCH);
    assert_non_null(strstr(err.msg, "manifest.part-00001.json"));
    assert_non_null(strstr(err.msg, "configuration"));
}

static void merge_refuses_parts_with_different_speaker_tables(void **state) {
    fixture *f = *state;
    xtts_cache_config c;
    test_config(&c);
    build_part(f, f->dir, 0, 2, &c, "bob");
    build_part(f, f->dir, 1, 2, &c, "carol");
    xtts_error err;
    assert_int_equal(xtts_cache_merge(f->dir, &err), XTTS_EMISMATCH);
    assert_non_null(strstr(err.msg, "speakers"));
}

static void merge_refuses_a_dir_without_parts_and_a_shard_count_mismatch(void **state) {
    fixture *f = *state;
    xtts_error err;
    assert_int_equal(xtts_cache_merge(f->dir, &err), XTTS_ENOTFOUND);
    assert_non_null(strstr(err.msg, "no partial manifests"));
    xtts_cache_config c;
    test_config(&c);
    build_part(f, f->dir, 0, 1, &c, "bob");
    /* a shard the partial manifest lists is gone */
    char path[700];
    snprintf(path, sizeof path, "%s/shard-00000-00001", f->dir);
    rm_rf(path);
    assert_int_not_equal(xtts_cache_merge(f->dir, &err), XTTS_OK);
    assert_non_null(strstr(err.msg, "shard-00000-00001"));
}

/* The id limit is derived from the linked liblmdb's key limit: an id of exactly the limit
 * is stored (its "audio:" meta key included) and one byte more is refused by the writer. */
static void id_limit_is_lmdb_key_limit_minus_the_audio_prefix(void **state) {
    (void)state;
    MDB_env *env;
    assert_int_equal(mdb_env_create(&env), 0);
    assert_int_equal(mdb_env_get_maxkeysize(env), XTTS_ID_MAX_BYTES + (int)strlen("audio:"));
    mdb_env_close(env);
    char num[16];
    snprintf(num, sizeof num, "%d", XTTS_ID_MAX_BYTES);
    assert_string_equal(num, XTTS_ID_MAX_BYTES_STR);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(id_limit_is_lmdb_key_limit_minus_the_audio_prefix),
        cmocka_unit_test_setup_teardown(writer_stores_records_in_input_order_with_ids_and_rejects, setup, teardown),
        cmocka_unit_test_setup_teardown(writer_state_is_visible_only_after_commit, setup, teardown),
        cmocka_unit_test_setup_teardown(writer_commits_state_with_exactly_its_records, setup, teardown),
        cmocka_unit_test_setup_teardown(writer_resumes_from_last_commit_after_abort, setup, teardown),
        cmocka_unit_test_setup_teardown(writer_refuses_input_index_that_does_not_increase, setup, teardown),
        cmocka_unit_test_setup_teardown(writer_refuses_duplicate_ids_pending_committed_and_in_earlier_shards, setup, teardown),
        cmocka_unit_test_setup_teardown(writer_refuses_bad_ids_and_non_records, setup, teardown),
        cmocka_unit_test_setup_teardown(writer_refuses_invalid_options_and_configuration, setup, teardown),
        cmocka_unit_test_setup_teardown(writer_second_writer_on_same_dir_or_part_is_busy, setup, teardown),
        cmocka_unit_test_setup_teardown(writer_lock_is_held_against_another_process, setup, teardown),
        cmocka_unit_test_setup_teardown(writer_refuses_other_config_unless_force, setup, teardown),
        cmocka_unit_test_setup_teardown(writer_refuses_a_whole_build_over_parts_and_parts_over_a_whole_build, setup, teardown),
        cmocka_unit_test_setup_teardown(writer_rotates_shards_at_shard_bytes, setup, teardown),
        cmocka_unit_test_setup_teardown(writer_grows_a_tiny_lmdb_map_instead_of_failing, setup, teardown),
        cmocka_unit_test_setup_teardown(writer_survives_kill9_at_random_points, setup, teardown),
        cmocka_unit_test_setup_teardown(writer_drops_an_uncommitted_trailing_shard, setup, teardown),
        cmocka_unit_test_setup_teardown(writer_refuses_a_shard_gap_unless_force, setup, teardown),
        cmocka_unit_test_setup_teardown(writer_reports_disk_full_and_keeps_committed_data, setup, teardown),
        cmocka_unit_test_setup_teardown(writer_reports_enospc_on_a_full_filesystem_and_resumes, setup, teardown),
        cmocka_unit_test_setup_teardown(writer_finish_writes_extra_beside_its_own_keys, setup, teardown),
        cmocka_unit_test_setup_teardown(merge_joins_three_parts_in_part_order, setup, teardown),
        cmocka_unit_test_setup_teardown(merge_refuses_missing_part, setup, teardown),
        cmocka_unit_test_setup_teardown(merge_refuses_parts_with_another_config, setup, teardown),
        cmocka_unit_test_setup_teardown(merge_refuses_parts_with_different_speaker_tables, setup, teardown),
        cmocka_unit_test_setup_teardown(merge_refuses_a_dir_without_parts_and_a_shard_count_mismatch, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
