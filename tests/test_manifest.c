/* test_manifest.c — the cache configuration <-> JSON (every field, types, ranges),
 * the configuration hash, padded frame counts, and the manifest loader's refusals. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <ftw.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "formats/manifest.h"
#include "formats/record.h"

/* A configuration where every field differs from the default. */
static void config_all_changed(xtts_cache_config *c) {
    memset(c, 0, sizeof *c);
    xtts_mel_params *m = &c->mel;
    snprintf(m->preset, sizeof m->preset, "whisper");
    m->sample_rate = 16000;
    m->n_fft = 400;
    m->hop_samples = 160;
    m->win_samples = 300;
    m->n_mels = 128;
    m->fmin_hz = 12.5;
    m->fmax_hz = 7999.25;
    m->mel_scale = XTTS_MEL_SCALE_SLANEY;
    m->mel_norm = XTTS_MEL_NORM_NONE;
    m->center = 0;
    m->pad_samples = 120;
    m->power = 1;
    m->mag_eps = 1e-9;
    m->log_kind = XTTS_LOG_LOG10;
    m->log_floor = 1e-10;
    m->drop_last_frame = 1;
    m->whisper_post = 1;
    snprintf(c->tokenizer, sizeof c->tokenizer, "bpe");
    memset(c->vocab_hash, 'a', 64);
    c->vocab_hash[64] = '\0';
    c->vocab_size = 6681;
    c->max_tokens = 400;
    c->pad_token = 1;
    c->max_frames = 2048;
    c->n_buckets = 3;
    c->buckets[0] = 256;
    c->buckets[1] = 512;
    c->buckets[2] = 2048;
    c->dtype = XTTS_DTYPE_F32;
    c->shuffle = 1;
    c->zstd_level = 19;
    snprintf(c->resampler, sizeof c->resampler, "libsamplerate");
    snprintf(c->resample_quality, sizeof c->resample_quality, "medium");
    c->trim_db = 40.5;
    c->val_fraction = 0.02;
    c->algo_version = 7;
    c->audio = XTTS_AUDIO_FLAC;
    c->format_version = 2;
}

static void assert_config_equal(const xtts_cache_config *a, const xtts_cache_config *b) {
    const xtts_mel_params *x = &a->mel, *y = &b->mel;
    assert_string_equal(x->preset, y->preset);
    assert_int_equal(x->sample_rate, y->sample_rate);
    assert_int_equal(x->n_fft, y->n_fft);
    assert_int_equal(x->hop_samples, y->hop_samples);
    assert_int_equal(x->win_samples, y->win_samples);
    assert_int_equal(x->n_mels, y->n_mels);
    assert_true(x->fmin_hz == y->fmin_hz);
    assert_true(x->fmax_hz == y->fmax_hz);
    assert_int_equal(x->mel_scale, y->mel_scale);
    assert_int_equal(x->mel_norm, y->mel_norm);
    assert_int_equal(x->center, y->center);
    assert_int_equal(x->pad_samples, y->pad_samples);
    assert_int_equal(x->power, y->power);
    assert_true(x->mag_eps == y->mag_eps);
    assert_int_equal(x->log_kind, y->log_kind);
    assert_true(x->log_floor == y->log_floor);
    assert_int_equal(x->drop_last_frame, y->drop_last_frame);
    assert_int_equal(x->whisper_post, y->whisper_post);
    assert_string_equal(a->tokenizer, b->tokenizer);
    assert_string_equal(a->vocab_hash, b->vocab_hash);
    assert_int_equal(a->vocab_size, b->vocab_size);
    assert_int_equal(a->max_tokens, b->max_tokens);
    assert_int_equal(a->pad_token, b->pad_token);
    assert_int_equal(a->max_frames, b->max_frames);
    assert_int_equal(a->n_buckets, b->n_buckets);
    for (int i = 0; i < a->n_buckets; i++) assert_int_equal(a->buckets[i], b->buckets[i]);
    assert_int_equal(a->dtype, b->dtype);
    assert_int_equal(a->shuffle, b->shuffle);
    assert_int_equal(a->zstd_level, b->zstd_level);
    assert_string_equal(a->resampler, b->resampler);
    assert_string_equal(a->resample_quality, b->resample_quality);
    assert_true(a->trim_db == b->trim_db);
    assert_true(a->val_fraction == b->val_fraction);
    assert_int_equal(a->algo_version, b->algo_version);
}

/* Through JSON text and back. */
static void round_trip(const xtts_cache_config *c, xtts_cache_config *out) {
    json_t *j = xtts_cache_config_to_json(c);
    assert_non_null(j);
    char *text = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    json_error_t je;
    json_t *back = json_loads(text, 0, &je);
    free(text);
    assert_non_null(back);
    xtts_error err;
    xtts_status st = xtts_cache_config_from_json(back, out, "test.json", &err);
    if (st) fail_msg("%s", err.msg);
    json_decref(back);
}

static void config_default_is_the_xtts_preset(void **state) {
    (void)state;
    xtts_cache_config c;
    xtts_cache_config_defaults(&c);
    assert_string_equal(c.mel.preset, "xtts");
    assert_int_equal(c.mel.sample_rate, 22050);
    assert_int_equal(c.mel.n_fft, 1024);
    assert_int_equal(c.mel.hop_samples, 256);
    assert_int_equal(c.mel.win_samples, 1024);
    assert_int_equal(c.mel.n_mels, 80);
    assert_true(c.mel.fmin_hz == 0.0 && c.mel.fmax_hz == 8000.0);
    assert_int_equal(c.mel.mel_scale, XTTS_MEL_SCALE_HTK);
    assert_int_equal(c.mel.mel_norm, XTTS_MEL_NORM_SLANEY);
    assert_int_equal(c.mel.center, 1);
    assert_int_equal(c.mel.power, 2);
    assert_int_equal(c.mel.log_kind, XTTS_LOG_LN);
    assert_true(c.mel.log_floor == 1e-5);
    assert_string_equal(c.tokenizer, "bytes");
    assert_int_equal(c.max_tokens, 512);
    assert_int_equal(c.max_frames, 1024);
    assert_int_equal(c.n_buckets, 0);
    assert_int_equal(c.dtype, XTTS_DTYPE_F16);
    assert_int_equal(c.zstd_level, 1); /* default 1 since the mel holds only its true frames */
    assert_string_equal(c.resampler, "soxr");
    assert_string_equal(c.resample_quality, "hq");
    assert_true(c.trim_db == 0.0 && c.val_fraction == 0.0);
    assert_int_equal(c.algo_version, XTTS_ALGO_VERSION);
    xtts_mel_params p;
    assert_int_equal(xtts_mel_preset("xtts", &p, NULL), XTTS_OK);
    xtts_cache_config d = c;
    d.mel = p;
    assert_config_equal(&c, &d);
}

/* Every preset the mel kernel offers is a configuration the manifest accepts. */
static void config_round_trips_every_mel_preset(void **state) {
    (void)state;
    static const char *const presets[] = {"xtts", "hifigan", "vits", "tacotron2", "whisper"};
    for (int i = 0; i < 5; i++) {
        xtts_cache_config a, b;
        xtts_cache_config_defaults(&a);
        xtts_error err;
        assert_int_equal(xtts_mel_preset(presets[i], &a.mel, &err), XTTS_OK);
        round_trip(&a, &b);
        assert_config_equal(&a, &b);
    }
}

static void config_round_trips_every_field_through_json(void **state) {
    (void)state;
    xtts_cache_config a, b;
    xtts_cache_config_defaults(&a);
    round_trip(&a, &b);
    assert_config_equal(&a, &b);
    config_all_changed(&a);
    round_trip(&a, &b);
    assert_config_equal(&a, &b);
    char h1[65], h2[65];
    xtts_cache_config_hash(&a, h1);
    xtts_cache_config_hash(&b, h2);
    assert_string_equal(h1, h2);
}

static void config_json_uses_names_for_enum_fields(void **state) {
    (void)state;
    xtts_cache_config c;
    config_all_changed(&c);
    json_t *j = xtts_cache_config_to_json(&c);
    json_t *mel = json_object_get(j, "mel");
    assert_string_equal(json_string_value(json_object_get(mel, "mel_scale")), "slaney");
    assert_string_equal(json_string_value(json_object_get(mel, "mel_norm")), "none");
    assert_string_equal(json_string_value(json_object_get(mel, "log")), "log10");
    assert_string_equal(json_string_value(json_object_get(j, "dtype")), "fp32");
    assert_int_equal(json_array_size(json_object_get(j, "buckets")), 3);
    json_decref(j);
    xtts_cache_config_defaults(&c);
    j = xtts_cache_config_to_json(&c);
    assert_true(json_is_array(json_object_get(j, "buckets")));
    assert_int_equal(json_array_size(json_object_get(j, "buckets")), 0);
    json_decref(j);
}

/* Each field, once changed, changes the hash. */
static void config_hash_covers_every_field(void **state) {
    (void)state;
    xtts_cache_config d, a;
    xtts_cache_config_defaults(&d);
    config_all_changed(&a);
    char base[65];
    xtts_cache_config_hash(&d, base);
    assert_int_equal(strlen(base), 64);
    json_t *jd = xtts_cache_config_to_json(&d), *ja = xtts_cache_config_to_json(&a);
    /* swap one key at a time from the all-changed config into the default one */
    const char *key;
    json_t *v;
    int n = 0;
    json_object_foreach(jd, key, v) {
        if (!strcmp(key, "mel")) continue;
        json_t *t = json_deep_copy(jd);
        json_object_set(t, key, json_object_get(ja, key));
        xtts_cache_config c;
        xtts_error err;
        if (!strcmp(key, "buckets")) json_object_set_new(t, "buckets", json_pack("[i,i]", 256, 1024));
        xtts_status st = xtts_cache_config_from_json(t, &c, "t", &err);
        if (st) fail_msg("%s: %s", key, err.msg);
        char h[65];
        xtts_cache_config_hash(&c, h);
        if (!strcmp(h, base)) fail_msg("hash unchanged by %s", key);
        json_decref(t);
        n++;
    }
    json_t *md = json_object_get(jd, "mel"), *ma = json_object_get(ja, "mel");
    json_object_foreach(md, key, v) {
        json_t *t = json_deep_copy(jd);
        json_object_set(json_object_get(t, "mel"), key, json_object_get(ma, key));
        if (!strcmp(key, "n_fft")) json_object_set_new(json_object_get(t, "mel"), key, json_integer(2048));
        xtts_cache_config c;
        xtts_error err;
        xtts_status st = xtts_cache_config_from_json(t, &c, "t", &err);
        if (st) fail_msg("mel.%s: %s", key, err.msg);
        char h[65];
        xtts_cache_config_hash(&c, h);
        if (!strcmp(h, base)) fail_msg("hash unchanged by mel.%s", key);
        json_decref(t);
        n++;
    }
    assert_int_equal(n, 16 + 18); /* 16 top-level keys with "audio" */
    json_decref(jd);
    json_decref(ja);
    /* and the hash is over the sorted JSON: stable across runs, a known value for the defaults */
    char again[65];
    xtts_cache_config_hash(&d, again);
    assert_string_equal(base, again);
}

static void config_hash_is_sha256_of_sorted_compact_json(void **state) {
    (void)state;
    xtts_cache_config c;
    xtts_cache_config_defaults(&c);
    json_t *j = xtts_cache_config_to_json(&c);
    char *s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(j);
    xtts_sha256 h;
    uint8_t d[32];
    char want[65], got[65];
    xtts_sha256_init(&h);
    xtts_sha256_update(&h, s, strlen(s));
    xtts_sha256_final(&h, d);
    xtts_hex(d, 32, want);
    free(s);
    xtts_cache_config_hash(&c, got);
    assert_string_equal(got, want);
}

/* A bad value for a key: the error names the file and the key. */
typedef struct {
    const char *key;  /* "mel.x" for mel keys */
    const char *json; /* replacement value, or NULL to delete the key */
} bad_case;

static void config_from_json_refuses_missing_wrong_type_and_out_of_range(void **state) {
    (void)state;
    static const bad_case cases[] = {
        {"tokenizer", NULL}, {"tokenizer", "3"}, {"tokenizer", "\"\""},
        {"tokenizer", "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\""},
        {"vocab_hash", "\"xyz\""}, {"vocab_hash", "5"}, {"vocab_size", "-1"}, {"vocab_size", "1.5"},
        {"max_tokens", "0"}, {"max_tokens", "70000"}, {"max_tokens", "\"512\""}, {"pad_token", "-3"},
        {"max_frames", "0"}, {"max_frames", "2000000"}, {"max_frames", NULL},
        {"buckets", "[512, 256]"}, {"buckets", "[0]"}, {"buckets", "[2048]"}, {"buckets", "{}"},
        {"buckets", "[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17]"}, {"buckets", "[1.5]"},
        {"dtype", "\"fp8\""}, {"dtype", "1"}, {"shuffle", "2"}, {"shuffle", "true"},
        {"zstd_level", "0"}, {"zstd_level", "23"}, {"resampler", "\"sox\""}, {"resample_quality", "7"},
        {"trim_db", "-1"}, {"trim_db", "\"x\""}, {"val_fraction", "1"}, {"val_fraction", "-0.1"},
        {"algo_version", "0"}, {"algo_version", NULL}, {"mel", NULL}, {"mel", "[]"}, {"surprise", "1"},
        {"mel.preset", "\"\""}, {"mel.sample_rate", "0"}, {"mel.sample_rate", "22050.5"},
        {"mel.n_fft", "1"}, {"mel.hop_samples", "0"}, {"mel.win_samples", "2048"},
        {"mel.n_mels", "0"}, {"mel.n_mels", "1025"}, {"mel.fmin_hz", "-1"}, {"mel.fmax_hz", "20000"},
        {"mel.fmax_hz", "0"}, {"mel.mel_scale", "\"bark\""}, {"mel.mel_norm", "\"l2\""},
        {"mel.center", "2"}, {"mel.pad_samples", "-1"}, {"mel.power", "3"}, {"mel.mag_eps", "-1"},
        {"mel.log", "\"log2\""}, {"mel.log_kind", "0"}, {"mel.log_floor", "0"}, {"mel.drop_last_frame", "5"},
        {"mel.whisper_post", "\"yes\""}, {"mel.n_mels", NULL}, {"mel.surprise", "0"},
    };
    xtts_cache_config d;
    xtts_cache_config_defaults(&d);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *j = xtts_cache_config_to_json(&d);
        const char *key = cases[i].key;
        json_t *obj = j;
        if (!strncmp(key, "mel.", 4)) { obj = json_object_get(j, "mel"); key += 4; }
        if (cases[i].json) {
            json_error_t je;
            json_t *v = json_loads(cases[i].json, JSON_DECODE_ANY, &je);
            assert_non_null(v);
            json_object_set_new(obj, key, v);
        } else {
            json_object_del(obj, key);
        }
        xtts_cache_config c;
        xtts_error err;
        xtts_status st = xtts_cache_config_from_json(j, &c, "cache/manifest.json", &err);
        if (st == XTTS_OK) fail_msg("accepted %s = %s", cases[i].key, cases[i].json ? cases[i].json : "(missing)");
        assert_int_equal(st, XTTS_EINPUT);
        assert_non_null(strstr(err.msg, "cache/manifest.json"));
        char quoted[64];
        snprintf(quoted, sizeof quoted, "\"%s\"", cases[i].key);
        if (!strstr(err.msg, quoted)) fail_msg("message for %s does not name it: %s", cases[i].key, err.msg);
        json_decref(j);
    }
    xtts_cache_config c;
    xtts_error err;
    assert_int_equal(xtts_cache_config_from_json(json_object_get(NULL, "x"), &c, "f.json", &err), XTTS_EINPUT);
}

static void padded_frames_picks_smallest_bucket_or_max_frames(void **state) {
    (void)state;
    xtts_cache_config c;
    xtts_cache_config_defaults(&c);
    assert_int_equal(xtts_cache_config_padded_frames(&c, 1), 1024);
    assert_int_equal(xtts_cache_config_padded_frames(&c, 1024), 1024);
    assert_int_equal(xtts_cache_config_padded_frames(&c, 1025), 0);
    c.n_buckets = 3;
    c.buckets[0] = 256;
    c.buckets[1] = 512;
    c.buckets[2] = 1024;
    assert_int_equal(xtts_cache_config_padded_frames(&c, 0), 256);
    assert_int_equal(xtts_cache_config_padded_frames(&c, 256), 256);
    assert_int_equal(xtts_cache_config_padded_frames(&c, 257), 512);
    assert_int_equal(xtts_cache_config_padded_frames(&c, 1000), 1024);
    assert_int_equal(xtts_cache_config_padded_frames(&c, 1025), 0);
    assert_int_equal(xtts_cache_config_padded_frames(&c, -4), 0);
}

/* ---- manifest ------------------------------------------------------------------- */

static json_t *valid_manifest(void) {
    xtts_cache_config c;
    xtts_cache_config_defaults(&c);
    char hash[65];
    xtts_cache_config_hash(&c, hash);
    json_t *m = json_pack("{s:i, s:s, s:i, s:o, s:s, s:[{s:s, s:i, s:i, s:i}, {s:s, s:i, s:i, s:i}], s:{s:i}, s:i, s:[]}",
                          "format_version", XTTS_MANIFEST_VERSION, "tool_version", "0.1.0", "records", 7, "config",
                          xtts_cache_config_to_json(&c), "config_hash", hash, "shards", "name", "shard-00000", "records",
                          5, "bytes", 5000, "first_index", 0, "name", "shard-00001", "records", 2, "bytes", 1900,
                          "first_index", 5, "stats", "frames", 0, "rejected", 0, "rejects");
    assert_non_null(m);
    return m;
}

static xtts_status parse_json(const json_t *m, xtts_error *err) {
    char *s = json_dumps(m, JSON_COMPACT);
    json_t *out = NULL;
    xtts_status st = xtts_manifest_parse(s, strlen(s), "dir/manifest.json", &out, err);
    free(s);
    if (!st) assert_non_null(out);
    else assert_null(out);
    json_decref(out);
    return st;
}

static void manifest_valid_one_parses(void **state) {
    (void)state;
    json_t *m = valid_manifest();
    xtts_error err;
    xtts_status st = parse_json(m, &err);
    if (st) fail_msg("%s", err.msg);
    json_decref(m);
}

static void manifest_truncated_at_every_length_is_refused(void **state) {
    (void)state;
    json_t *m = valid_manifest();
    char *s = json_dumps(m, JSON_INDENT(2));
    json_decref(m);
    size_t n = strlen(s);
    for (size_t len = 0; len < n; len++) {
        json_t *out = NULL;
        xtts_error err;
        xtts_status st = xtts_manifest_parse(s, len, "dir/manifest.json", &out, &err);
        if (st == XTTS_OK) {
            /* only trailing whitespace may be cut */
            for (size_t k = len; k < n; k++) assert_true(s[k] == ' ' || s[k] == '\n');
            json_decref(out);
            continue;
        }
        assert_null(out);
        assert_non_null(strstr(err.msg, "dir/manifest.json"));
    }
    /* a syntax error reports line and column */
    json_t *out;
    xtts_error err;
    assert_int_equal(xtts_manifest_parse("{\n  \"records\": ,\n}", 18, "m.json", &out, &err), XTTS_EINPUT);
    assert_non_null(strstr(err.msg, "m.json:2:"));
    free(s);
}

static void manifest_missing_or_mistyped_keys_are_refused_by_name(void **state) {
    (void)state;
    static const char *const required[] = {"format_version", "records", "config", "config_hash", "shards", "stats"};
    for (size_t i = 0; i < 6; i++) {
        json_t *m = valid_manifest();
        json_object_del(m, required[i]);
        xtts_error err;
        assert_int_not_equal(parse_json(m, &err), XTTS_OK);
        char q[40];
        snprintf(q, sizeof q, "\"%s\"", required[i]);
        if (!strstr(err.msg, q) && !strstr(err.msg, "config")) fail_msg("%s: %s", required[i], err.msg);
        assert_non_null(strstr(err.msg, "dir/manifest.json"));
        json_decref(m);
    }
    static const struct { const char *key, *json; } wrong[] = {
        {"format_version", "\"1\""}, {"records", "-1"}, {"records", "7.0"}, {"config", "[]"},
        {"config_hash", "12"}, {"config_hash", "\"abc\""}, {"shards", "{}"}, {"stats", "[]"},
        {"rejects", "{}"}, {"rejected", "-2"}, {"speakers", "[1]"}, {"languages", "\"en\""},
        {"records", "8"}, {"part", "0"}, {"shards", "[{\"name\":\"shard-0\",\"records\":7,\"bytes\":1,\"first_index\":0}]"},
        {"shards", "[{\"name\":\"shard-00000\",\"records\":7,\"bytes\":1,\"first_index\":1}]"},
        {"shards", "[{\"name\":\"shard-00000\",\"records\":7,\"bytes\":-1,\"first_index\":0}]"},
        {"shards", "[{\"name\":\"shard-00000\",\"records\":3,\"bytes\":1,\"first_index\":0},"
                   "{\"name\":\"shard-00000\",\"records\":4,\"bytes\":1,\"first_index\":3}]"},
        {"shards", "[7]"}, {"stats", "{\"frames\": \"x\"}"}, {"stats", "{\"mel_mean\": [1, 2]}"},
    };
    for (size_t i = 0; i < sizeof wrong / sizeof wrong[0]; i++) {
        json_t *m = valid_manifest();
        json_error_t je;
        json_object_set_new(m, wrong[i].key, json_loads(wrong[i].json, JSON_DECODE_ANY, &je));
        xtts_error err;
        xtts_status st = parse_json(m, &err);
        if (st == XTTS_OK) fail_msg("accepted %s = %s", wrong[i].key, wrong[i].json);
        assert_non_null(strstr(err.msg, "dir/manifest.json"));
        json_decref(m);
    }
}

static void manifest_hash_mismatch_and_future_version_are_refused(void **state) {
    (void)state;
    json_t *m = valid_manifest();
    json_object_set_new(json_object_get(m, "config"), "max_tokens", json_integer(300));
    xtts_error err;
    assert_int_equal(parse_json(m, &err), XTTS_ECORRUPT);
    assert_non_null(strstr(err.msg, "config_hash"));
    json_decref(m);
    m = valid_manifest();
    json_object_set_new(m, "format_version", json_integer(4)); /* 3 is read since shared shards */
    assert_int_equal(parse_json(m, &err), XTTS_EMISMATCH);
    assert_non_null(strstr(err.msg, "format_version 4"));
    json_decref(m);
    /* not an object at all, duplicate keys */
    json_t *out;
    assert_int_equal(xtts_manifest_parse("[1,2]", 5, "x.json", &out, &err), XTTS_EINPUT);
    const char *dup = "{\"records\": 1, \"records\": 2}";
    assert_int_equal(xtts_manifest_parse(dup, strlen(dup), "x.json", &out, &err), XTTS_EINPUT);
}

/* shards[i] of m as {name, records, first_index, local_first}; local_first < 0: none */
static void set_entry(json_t *m, size_t i, const char *name, int records, int first, int local_first) {
    json_t *s = json_array_get(json_object_get(m, "shards"), i);
    json_object_set_new(s, "name", json_string(name));
    json_object_set_new(s, "records", json_integer(records));
    json_object_set_new(s, "first_index", json_integer(first));
    if (local_first >= 0) json_object_set_new(s, "local_first", json_integer(local_first));
}

/* format_version 3 (an update sharing shards): entries are ranges of directories; one
 * directory may be listed again for keys no other entry takes; base-NNNNN names. Neither
 * "local_first", a repeated name nor base-NNNNN is accepted in format_version 2, so that a
 * reader that ignores ranges never reads such a manifest. */
static void manifest_shared_ranges(void **state) {
    (void)state;
    xtts_error err;
    json_t *m = valid_manifest();
    json_object_set_new(m, "format_version", json_integer(XTTS_MANIFEST_VERSION_SHARED));
    set_entry(m, 0, "base-00000", 5, 0, 10);
    set_entry(m, 1, "base-00000", 2, 5, 0);
    assert_int_equal(parse_json(m, &err), XTTS_OK);
    char path[] = "/tmp/test_manifest_shared.XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(xtts_manifest_write(path, m, &err), XTTS_OK);
    xtts_manifest_info info;
    assert_int_equal(xtts_manifest_info_init(&info, path, &err), XTTS_OK);
    assert_int_equal(info.format_version, 3);
    assert_int_equal(info.shards[0].local_first, 10);
    assert_int_equal(info.shards[1].local_first, 0);
    assert_int_equal(info.config.format_version, 2); /* the records' and shards' format */
    xtts_manifest_info_free(&info);
    unlink(path);
    set_entry(m, 1, "base-00000", 2, 5, 13); /* keys 13, 14: the first entry's 10..14 */
    assert_int_equal(parse_json(m, &err), XTTS_EINPUT);
    assert_non_null(strstr(err.msg, "listed twice"));
    set_entry(m, 1, "base-0000x", 2, 5, 0);
    assert_int_equal(parse_json(m, &err), XTTS_EINPUT);
    json_decref(m);
    m = valid_manifest(); /* format_version 2 */
    set_entry(m, 0, "shard-00000", 5, 0, 0);
    assert_int_equal(parse_json(m, &err), XTTS_EINPUT);
    assert_non_null(strstr(err.msg, "local_first"));
    json_decref(m);
    m = valid_manifest();
    set_entry(m, 1, "shard-00000", 2, 5, -1);
    assert_int_equal(parse_json(m, &err), XTTS_EINPUT);
    assert_non_null(strstr(err.msg, "listed twice"));
    set_entry(m, 1, "base-00001", 2, 5, -1);
    assert_int_equal(parse_json(m, &err), XTTS_EINPUT);
    json_decref(m);
}

/* A shared cache after many updates lists thousands of ranges: all checked (not pair by
 * pair), and a range listed twice is still named by the first entry that repeats it, before
 * a bad entry after it. */
static void manifest_many_ranges(void **state) {
    (void)state;
    enum { N = 3000 };
    xtts_error err;
    json_t *m = valid_manifest();
    json_object_set_new(m, "format_version", json_integer(XTTS_MANIFEST_VERSION_SHARED));
    json_object_set_new(m, "records", json_integer(N));
    json_t *a = json_array();
    for (int i = 0; i < N; i++)
        json_array_append_new(a, json_pack("{s:s, s:i, s:i, s:i, s:i}", "name", i % 2 ? "base-00001" : "base-00000",
                                           "records", 1, "bytes", 100, "first_index", i, "local_first", 7 + i / 2));
    json_object_set_new(m, "shards", a);
    assert_int_equal(parse_json(m, &err), XTTS_OK);
    set_entry(m, 2000, "base-00000", 1, 2000, 7 + 10 / 2); /* the keys of entry 10 again */
    assert_int_equal(parse_json(m, &err), XTTS_EINPUT);
    assert_non_null(strstr(err.msg, "shards[2000]"));
    assert_non_null(strstr(err.msg, "listed twice"));
    set_entry(m, 2500, "base-0000x", 1, 2500, 9999);
    assert_int_equal(parse_json(m, &err), XTTS_EINPUT);
    assert_non_null(strstr(err.msg, "shards[2000]"));
    set_entry(m, 2000, "base-00000", 1, 2000, 7 + 2000 / 2);
    assert_int_equal(parse_json(m, &err), XTTS_EINPUT);
    assert_non_null(strstr(err.msg, "shards[2500]"));
    json_decref(m);
}

/* The sorted check alone (what spares the check of every pair): each directory's ranges are
 * compared only with that directory's, so one whose first range starts before another
 * directory's last end is no conflict; a real overlap, a shard listed twice, are. */
static void manifest_shards_conflict_by_directory(void **state) {
    (void)state;
    json_t *a = json_array();
    const struct { const char *name; int first, n; } e[] = {
        {"base-00000", 0, 10}, {"base-00001", 0, 5}, {"base-00000", 10, 10}, {"base-00001", 5, 5}, {"shard-00000", 0, 3}};
    for (size_t i = 0; i < sizeof e / sizeof e[0]; i++)
        json_array_append_new(a, json_pack("{s:s, s:i, s:i}", "name", e[i].name, "local_first", e[i].first, "records", e[i].n));
    assert_int_equal(xtts_manifest_shards_conflict(a, 5, 1), 0);
    json_object_set_new(json_array_get(a, 3), "local_first", json_integer(4)); /* base-00001 [4, 9) over [0, 5) */
    assert_int_equal(xtts_manifest_shards_conflict(a, 5, 1), 1);
    json_object_set_new(json_array_get(a, 3), "local_first", json_integer(5));
    assert_int_equal(xtts_manifest_shards_conflict(a, 5, 0), 1); /* not shared: a name twice is a conflict */
    json_decref(a);
}

static void manifest_partial_needs_part_and_n_parts(void **state) {
    (void)state;
    json_t *m = valid_manifest();
    json_object_set_new(m, "part", json_integer(2));
    json_object_set_new(m, "n_parts", json_integer(3));
    xtts_error err;
    assert_int_equal(parse_json(m, &err), XTTS_OK);
    json_object_set_new(m, "part", json_integer(3));
    assert_int_equal(parse_json(m, &err), XTTS_EINPUT);
    assert_non_null(strstr(err.msg, "\"part\""));
    json_object_del(m, "part");
    assert_int_equal(parse_json(m, &err), XTTS_EINPUT);
    json_decref(m);
}

static int rm_entry(const char *p, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb; (void)flag; (void)ftw;
    return remove(p);
}

static void manifest_write_then_load_round_trips_and_leaves_no_temp_file(void **state) {
    (void)state;
    char dir[512];
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/test_manifest.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    assert_non_null(mkdtemp(dir));
    char path[600];
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    json_t *m = valid_manifest();
    json_t *stats = json_object_get(m, "stats");
    json_t *mean = json_array();
    for (int i = 0; i < 80; i++) json_array_append_new(mean, json_real(-11.512925464970229 + i * 0.1));
    json_object_set_new(stats, "mel_mean", mean);
    xtts_error err;
    assert_int_equal(xtts_manifest_write(path, m, &err), XTTS_OK);
    json_t *back;
    xtts_status st = xtts_manifest_load(path, &back, &err);
    if (st) fail_msg("%s", err.msg);
    assert_true(json_equal(m, back)); /* doubles survive exactly */
    json_decref(back);
    json_decref(m);
    int entries = 0;
    struct stat sb;
    char tmpf[700];
    snprintf(tmpf, sizeof tmpf, "%s.tmp.%ld", path, (long)getpid());
    assert_int_equal(stat(tmpf, &sb), -1);
    (void)entries;
    /* a missing file names itself */
    snprintf(path, sizeof path, "%s/nope.json", dir);
    assert_int_equal(xtts_manifest_load(path, &back, &err), XTTS_ENOTFOUND);
    assert_non_null(strstr(err.msg, "nope.json"));
    nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

/* A zeroed extra adds the keys every manifest has ("languages": XTTS's 17, "stats" with
 * "frames" 0) and nothing else; a full one adds each of its keys with the values given, and
 * "hours" from audio_seconds. */
static void manifest_extra_writes_what_it_is_given_and_defaults_the_rest(void **state) {
    (void)state;
    xtts_manifest_extra none = {0};
    json_t *j = xtts_manifest_extra_to_json(&none);
    assert_non_null(j);
    assert_int_equal(json_object_size(j), 2);
    assert_int_equal(json_array_size(json_object_get(j, "languages")), XTTS_N_LANGS);
    assert_string_equal(json_string_value(json_array_get(json_object_get(j, "languages"), 0)), xtts_lang_codes[0]);
    json_t *stats = json_object_get(j, "stats");
    assert_int_equal(json_object_size(stats), 1);
    assert_true(json_is_integer(json_object_get(stats, "frames")));
    assert_int_equal(json_integer_value(json_object_get(stats, "frames")), 0);
    json_decref(j);

    static const char *const speakers[] = {"alice", "bob"}, *const langs[] = {"en"};
    const double sum[2] = {1.5, -2.0}, sq[2] = {3.0, 4.0}, mean[2] = {0.25, -0.5}, sd[2] = {1.0, 2.0};
    xtts_tokens_header h;
    xtts_tokens_header_defaults(&h);
    snprintf(h.tokenizer, sizeof h.tokenizer, "bytes");
    snprintf(h.vocab_hash, sizeof h.vocab_hash, "sha256:00");
    h.vocab_size = 288;
    snprintf(h.lang_mode, sizeof h.lang_mode, "auto");
    xtts_manifest_extra x = {.has_speakers = 1, .speakers = speakers, .n_speakers = 2, .languages = langs,
                             .n_languages = 1, .has_splits = 1, .split_train = 7, .split_val = 2, .has_totals = 1,
                             .audio_seconds = 5400.0, .total_frames = 100, .total_tokens = 40, .stats_frames = 100,
                             .n_mels = 2, .mel_sum = sum, .mel_sumsq = sq, .mel_mean = mean, .mel_std = sd,
                             .token_stream = &h};
    j = xtts_manifest_extra_to_json(&x);
    assert_non_null(j);
    char *text = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
    assert_string_equal(text, "{\"languages\":[\"en\"],\"speakers\":[\"alice\",\"bob\"],"
                              "\"splits\":{\"train\":7,\"val\":2},"
                              "\"stats\":{\"frames\":100,\"mel_mean\":[0.25,-0.5],\"mel_std\":[1.0,2.0],"
                              "\"mel_sum\":[1.5,-2.0],\"mel_sumsq\":[3.0,4.0]},"
                              "\"token_stream\":{\"lang\":\"auto\",\"tokenizer\":\"bytes\",\"vocab_hash\":\"sha256:00\","
                              "\"vocab_size\":288},"
                              "\"totals\":{\"audio_seconds\":5400.0,\"frames\":100,\"hours\":1.5,\"tokens\":40}}");
    free(text);
    json_decref(j);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(config_default_is_the_xtts_preset),
        cmocka_unit_test(config_round_trips_every_field_through_json),
        cmocka_unit_test(config_round_trips_every_mel_preset),
        cmocka_unit_test(config_json_uses_names_for_enum_fields),
        cmocka_unit_test(config_hash_covers_every_field),
        cmocka_unit_test(config_hash_is_sha256_of_sorted_compact_json),
        cmocka_unit_test(config_from_json_refuses_missing_wrong_type_and_out_of_range),
        cmocka_unit_test(padded_frames_picks_smallest_bucket_or_max_frames),
        cmocka_unit_test(manifest_valid_one_parses),
        cmocka_unit_test(manifest_truncated_at_every_length_is_refused),
        cmocka_unit_test(manifest_missing_or_mistyped_keys_are_refused_by_name),
        cmocka_unit_test(manifest_hash_mismatch_and_future_version_are_refused),
        cmocka_unit_test(manifest_shared_ranges),
        cmocka_unit_test(manifest_many_ranges),
        cmocka_unit_test(manifest_shards_conflict_by_directory),
        cmocka_unit_test(manifest_partial_needs_part_and_n_parts),
        cmocka_unit_test(manifest_write_then_load_round_trips_and_leaves_no_temp_file),
        cmocka_unit_test(manifest_extra_writes_what_it_is_given_and_defaults_the_rest),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
