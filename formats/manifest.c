/* manifest.c — the cache configuration <-> JSON, its hash, and the manifest codec
 * (formats/cache.md, "Configuration" and "Manifest", version 1).
 *
 * Parsing is strict: every configuration key must be present with the right type and a
 * value in range, and unknown keys are refused, because a key this build does not know
 * may change stored bytes. Every message names the file (where) and the key.
 */
#include "formats/manifest.h"

#include <ctype.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/record.h"

#define MANIFEST_MAX_BYTES ((size_t)1 << 30)

const char *xtts_cache_format_name(int format_version) {
    return format_version == 1 ? "xtts-cache 1" : "xtts-cache 2";
}

void xtts_cache_config_defaults(xtts_cache_config *c) {
    memset(c, 0, sizeof *c);
    /* The xtts preset (DESIGN.md "Mel presets"); kernels/mel.c is its one definition. */
    xtts_mel_preset("xtts", &c->mel, NULL);

    snprintf(c->tokenizer, sizeof c->tokenizer, "bytes");
    c->vocab_hash[0] = '\0';
    c->vocab_size = 0;
    c->max_tokens = 512;
    c->pad_token = 0;
    c->max_frames = 1024;
    c->n_buckets = 0;
    c->dtype = XTTS_DTYPE_F16;
    c->shuffle = 0;
    c->zstd_level = 1; /* chosen from the measured sizes and speeds (docs/xtts-melcache.md) */
    snprintf(c->resampler, sizeof c->resampler, "soxr");
    snprintf(c->resample_quality, sizeof c->resample_quality, "hq");
    c->trim_db = 0.0;
    c->val_fraction = 0.0;
    c->algo_version = XTTS_ALGO_VERSION;
    c->audio = XTTS_AUDIO_NONE;
    c->format_version = XTTS_MANIFEST_VERSION;
}

/* ---- config -> JSON --------------------------------------------------------- */

static const char *mel_scale_name(int v) {
    return v == XTTS_MEL_SCALE_SLANEY ? "slaney" : v == XTTS_MEL_SCALE_LINEAR ? "linear" : "htk";
}
static const char *mel_norm_name(int v) { return v == XTTS_MEL_NORM_SLANEY ? "slaney" : "none"; }
static const char *log_name(int v) { return v == XTTS_LOG_LOG10 ? "log10" : v == XTTS_LOG_NONE ? "none" : "ln"; }

json_t *xtts_cache_config_to_json(const xtts_cache_config *c) {
    const xtts_mel_params *m = &c->mel;
    json_t *mel = json_pack("{s:s, s:i, s:i, s:i, s:i, s:i, s:f, s:f, s:s, s:s, s:i, s:i, s:i, s:f, s:s, s:f, s:i, s:i}",
                            "preset", m->preset, "sample_rate", m->sample_rate, "n_fft", m->n_fft, "hop_samples",
                            m->hop_samples, "win_samples", m->win_samples, "n_mels", m->n_mels, "fmin_hz",
                            m->fmin_hz, "fmax_hz", m->fmax_hz, "mel_scale", mel_scale_name(m->mel_scale),
                            "mel_norm", mel_norm_name(m->mel_norm), "center", m->center, "pad_samples",
                            m->pad_samples, "power", m->power, "mag_eps", m->mag_eps, "log",
                            log_name(m->log_kind), "log_floor", m->log_floor, "drop_last_frame",
                            m->drop_last_frame, "whisper_post", m->whisper_post);
    if (!mel) return NULL;
    json_t *buckets = json_array();
    if (!buckets) { json_decref(mel); return NULL; }
    for (int i = 0; i < c->n_buckets && i < XTTS_MAX_BUCKETS; i++) json_array_append_new(buckets, json_integer(c->buckets[i]));
    json_t *j = json_pack("{s:o, s:s, s:s, s:i, s:i, s:i, s:i, s:o, s:s, s:i, s:i, s:s, s:s, s:f, s:f, s:i}", "mel", mel,
                          "tokenizer", c->tokenizer, "vocab_hash", c->vocab_hash, "vocab_size", c->vocab_size,
                          "max_tokens", c->max_tokens, "pad_token", c->pad_token, "max_frames", c->max_frames,
                          "buckets", buckets, "dtype", xtts_dtype_name((xtts_dtype)c->dtype), "shuffle", c->shuffle,
                          "zstd_level", c->zstd_level, "resampler", c->resampler, "resample_quality",
                          c->resample_quality, "trim_db", c->trim_db, "val_fraction", c->val_fraction,
                          "algo_version", c->algo_version);
    if (j && c->format_version >= 2 && json_object_set_new(j, "audio", json_string(xtts_audio_store_name(c->audio)))) {
        json_decref(j);
        return NULL;
    }
    return j; /* "o" steals mel and buckets, also on failure */
}

/* ---- JSON -> config --------------------------------------------------------- */

typedef struct {
    const char *where;
    const char *prefix; /* "" or "mel." */
    xtts_error *err;
} ctx_t;

static xtts_status bad(ctx_t *x, const char *key, const char *what) {
    return xtts_error_set(x->err, XTTS_EINPUT, "%s: config key \"%s%s\": %s", x->where, x->prefix, key, what);
}

static xtts_status get_int(ctx_t *x, const json_t *o, const char *key, long long lo, long long hi, int *out) {
    json_t *v = json_object_get(o, key);
    if (!v) return bad(x, key, "missing");
    if (!json_is_integer(v)) return bad(x, key, "must be an integer");
    long long n = json_integer_value(v);
    if (n < lo || n > hi) {
        char msg[128];
        snprintf(msg, sizeof msg, "%lld out of range [%lld, %lld]", n, lo, hi);
        return bad(x, key, msg);
    }
    *out = (int)n;
    return XTTS_OK;
}

static xtts_status get_double(ctx_t *x, const json_t *o, const char *key, double lo, double hi, double *out) {
    json_t *v = json_object_get(o, key);
    if (!v) return bad(x, key, "missing");
    if (!json_is_number(v)) return bad(x, key, "must be a number");
    double d = json_number_value(v);
    if (!isfinite(d) || d < lo || d > hi) {
        char msg[128];
        snprintf(msg, sizeof msg, "%g out of range [%g, %g]", d, lo, hi);
        return bad(x, key, msg);
    }
    *out = d;
    return XTTS_OK;
}

static xtts_status get_str(ctx_t *x, const json_t *o, const char *key, char *out, size_t cap, int allow_empty) {
    json_t *v = json_object_get(o, key);
    if (!v) return bad(x, key, "missing");
    if (!json_is_string(v)) return bad(x, key, "must be a string");
    const char *s = json_string_value(v);
    size_t n = json_string_length(v);
    if (n >= cap || strlen(s) != n) {
        char msg[96];
        snprintf(msg, sizeof msg, "must be a string of at most %zu bytes without NUL", cap - 1);
        return bad(x, key, msg);
    }
    if (!allow_empty && n == 0) return bad(x, key, "must not be empty");
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20) return bad(x, key, "contains a control character");
    memcpy(out, s, n + 1);
    return XTTS_OK;
}

/* A string key whose value is one of names[]; *out is its index. */
static xtts_status get_enum(ctx_t *x, const json_t *o, const char *key, const char *const *names, const int *values,
                            int n, int *out) {
    json_t *v = json_object_get(o, key);
    if (!v) return bad(x, key, "missing");
    if (!json_is_string(v)) return bad(x, key, "must be a string");
    for (int i = 0; i < n; i++)
        if (!strcmp(json_string_value(v), names[i])) { *out = values[i]; return XTTS_OK; }
    char msg[160];
    size_t k = (size_t)snprintf(msg, sizeof msg, "\"%.40s\" is not one of", json_string_value(v));
    for (int i = 0; i < n && k < sizeof msg; i++)
        k += (size_t)snprintf(msg + k, sizeof msg - k, "%s \"%s\"", i ? "," : "", names[i]);
    return bad(x, key, msg);
}

static xtts_status check_known(ctx_t *x, const json_t *o, const char *const *keys, size_t n) {
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)o, key, v) {
        size_t i = 0;
        while (i < n && strcmp(key, keys[i])) i++;
        if (i == n) return bad(x, key, "unknown key");
    }
    return XTTS_OK;
}

static const char *const MEL_KEYS[] = {"preset", "sample_rate", "n_fft", "hop_samples", "win_samples", "n_mels",
                                       "fmin_hz", "fmax_hz", "mel_scale", "mel_norm", "center", "pad_samples",
                                       "power", "mag_eps", "log", "log_floor", "drop_last_frame", "whisper_post"};
static const char *const TOP_KEYS[] = {"mel", "tokenizer", "vocab_hash", "vocab_size", "max_tokens", "pad_token",
                                       "max_frames", "buckets", "dtype", "shuffle", "zstd_level", "resampler",
                                       "resample_quality", "trim_db", "val_fraction", "algo_version", "audio"};
#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

static xtts_status mel_from_json(ctx_t *x, const json_t *o, xtts_mel_params *m) {
    static const char *const scales[] = {"htk", "slaney", "linear"};
    static const int scale_v[] = {XTTS_MEL_SCALE_HTK, XTTS_MEL_SCALE_SLANEY, XTTS_MEL_SCALE_LINEAR};
    static const char *const norms[] = {"slaney", "none"};
    static const int norm_v[] = {XTTS_MEL_NORM_SLANEY, XTTS_MEL_NORM_NONE};
    static const char *const logs[] = {"ln", "log10", "none"};
    static const int log_v[] = {XTTS_LOG_LN, XTTS_LOG_LOG10, XTTS_LOG_NONE};
    xtts_status st;
    if ((st = check_known(x, o, MEL_KEYS, N_OF(MEL_KEYS)))) return st;
    if ((st = get_str(x, o, "preset", m->preset, sizeof m->preset, 0))) return st;
    if ((st = get_int(x, o, "sample_rate", 1000, 768000, &m->sample_rate))) return st;
    if ((st = get_int(x, o, "n_fft", 2, 1 << 20, &m->n_fft))) return st;
    if ((st = get_int(x, o, "hop_samples", 1, 1 << 20, &m->hop_samples))) return st;
    if ((st = get_int(x, o, "win_samples", 1, m->n_fft, &m->win_samples))) return st;
    if ((st = get_int(x, o, "n_mels", 1, XTTS_RECORD_MAX_MELS, &m->n_mels))) return st;
    double nyquist = m->sample_rate / 2.0;
    if ((st = get_double(x, o, "fmin_hz", 0, nyquist, &m->fmin_hz))) return st;
    if ((st = get_double(x, o, "fmax_hz", 0, nyquist, &m->fmax_hz))) return st;
    if (m->fmax_hz <= m->fmin_hz) return bad(x, "fmax_hz", "must be greater than fmin_hz");
    if ((st = get_enum(x, o, "mel_scale", scales, scale_v, 3, &m->mel_scale))) return st;
    if ((st = get_enum(x, o, "mel_norm", norms, norm_v, 2, &m->mel_norm))) return st;
    if ((st = get_int(x, o, "center", 0, 1, &m->center))) return st;
    if ((st = get_int(x, o, "pad_samples", 0, m->n_fft, &m->pad_samples))) return st;
    if ((st = get_int(x, o, "power", 1, 2, &m->power))) return st;
    if ((st = get_double(x, o, "mag_eps", 0, 1, &m->mag_eps))) return st;
    if ((st = get_enum(x, o, "log", logs, log_v, 3, &m->log_kind))) return st;
    if ((st = get_double(x, o, "log_floor", 1e-30, 1, &m->log_floor))) return st;
    if (m->log_floor <= 0) return bad(x, "log_floor", "must be positive");
    if ((st = get_int(x, o, "drop_last_frame", 0, 1, &m->drop_last_frame))) return st;
    if ((st = get_int(x, o, "whisper_post", 0, 1, &m->whisper_post))) return st;
    return XTTS_OK;
}

static int is_hex64(const char *s) {
    if (strlen(s) != 64) return 0;
    for (int i = 0; i < 64; i++)
        if (!isxdigit((unsigned char)s[i]) || isupper((unsigned char)s[i])) return 0;
    return 1;
}

xtts_status xtts_cache_config_from_json(const json_t *j, xtts_cache_config *out, const char *where, xtts_error *err) {
    static const char *const dtypes[] = {"fp16", "fp32"};
    static const int dtype_v[] = {XTTS_DTYPE_F16, XTTS_DTYPE_F32};
    static const char *const resamplers[] = {"soxr", "libsamplerate"};
    static const int resampler_v[] = {0, 1};
    ctx_t x = {where ? where : "config", "", err};
    if (!json_is_object(j)) return xtts_error_set(err, XTTS_EINPUT, "%s: \"config\" must be an object", x.where);
    xtts_cache_config c;
    memset(&c, 0, sizeof c);
    xtts_status st;
    if ((st = check_known(&x, j, TOP_KEYS, N_OF(TOP_KEYS)))) return st;
    json_t *mel = json_object_get(j, "mel");
    if (!mel) return bad(&x, "mel", "missing");
    if (!json_is_object(mel)) return bad(&x, "mel", "must be an object");
    x.prefix = "mel.";
    if ((st = mel_from_json(&x, mel, &c.mel))) return st;
    x.prefix = "";
    if ((st = get_str(&x, j, "tokenizer", c.tokenizer, sizeof c.tokenizer, 0))) return st;
    if ((st = get_str(&x, j, "vocab_hash", c.vocab_hash, sizeof c.vocab_hash, 1))) return st;
    /* the token stream writes "sha256:<hex>"; a bare hex digest is accepted too */
    const char *vh = strncmp(c.vocab_hash, "sha256:", 7) == 0 ? c.vocab_hash + 7 : c.vocab_hash;
    if (c.vocab_hash[0] && !is_hex64(vh))
        return bad(&x, "vocab_hash", "must be empty, 64 lower-case hex digits or sha256:<64 hex digits>");
    if ((st = get_int(&x, j, "vocab_size", 0, INT32_MAX, &c.vocab_size))) return st;
    if ((st = get_int(&x, j, "max_tokens", 1, XTTS_RECORD_MAX_TOKENS, &c.max_tokens))) return st;
    if ((st = get_int(&x, j, "pad_token", 0, INT32_MAX, &c.pad_token))) return st;
    if ((st = get_int(&x, j, "max_frames", 1, XTTS_RECORD_MAX_FRAMES, &c.max_frames))) return st;
    json_t *b = json_object_get(j, "buckets");
    if (!b) return bad(&x, "buckets", "missing");
    if (!json_is_array(b)) return bad(&x, "buckets", "must be an array of integers");
    if (json_array_size(b) > XTTS_MAX_BUCKETS) {
        char msg[64];
        snprintf(msg, sizeof msg, "more than %d buckets", XTTS_MAX_BUCKETS);
        return bad(&x, "buckets", msg);
    }
    for (size_t i = 0; i < json_array_size(b); i++) {
        json_t *v = json_array_get(b, i);
        if (!json_is_integer(v)) return bad(&x, "buckets", "must be an array of integers");
        long long n = json_integer_value(v);
        if (n < 1 || n > c.max_frames) return bad(&x, "buckets", "each bucket must be in [1, max_frames]");
        if (i > 0 && n <= c.buckets[i - 1]) return bad(&x, "buckets", "must be strictly increasing");
        c.buckets[i] = (int)n;
    }
    c.n_buckets = (int)json_array_size(b);
    if ((st = get_enum(&x, j, "dtype", dtypes, dtype_v, 2, &c.dtype))) return st;
    if ((st = get_int(&x, j, "shuffle", 0, 1, &c.shuffle))) return st;
    if ((st = get_int(&x, j, "zstd_level", 1, 22, &c.zstd_level))) return st;
    int rs;
    if ((st = get_enum(&x, j, "resampler", resamplers, resampler_v, 2, &rs))) return st;
    snprintf(c.resampler, sizeof c.resampler, "%s", resamplers[rs]);
    if ((st = get_str(&x, j, "resample_quality", c.resample_quality, sizeof c.resample_quality, 1))) return st;
    if ((st = get_double(&x, j, "trim_db", 0, 200, &c.trim_db))) return st;
    if ((st = get_double(&x, j, "val_fraction", 0, 1, &c.val_fraction))) return st;
    if (c.val_fraction >= 1) return bad(&x, "val_fraction", "must be below 1");
    if ((st = get_int(&x, j, "algo_version", 1, INT32_MAX, &c.algo_version))) return st;
    c.format_version = 1;
    c.audio = XTTS_AUDIO_NONE;
    if (json_object_get(j, "audio")) {
        static const char *const audios[] = {"none", "int16", "flac"};
        static const int audio_v[] = {XTTS_AUDIO_NONE, XTTS_AUDIO_INT16, XTTS_AUDIO_FLAC};
        if ((st = get_enum(&x, j, "audio", audios, audio_v, 3, &c.audio))) return st;
        c.format_version = 2;
    }
    if (c.mel.mel_scale == XTTS_MEL_SCALE_LINEAR && c.mel.n_mels != c.mel.n_fft / 2 + 1)
        return bad(&x, "mel", "a linear spectrogram has n_fft/2+1 bins (n_mels)");
    *out = c;
    return XTTS_OK;
}

void xtts_cache_config_hash(const xtts_cache_config *c, char out_hex[65]) {
    json_t *j = xtts_cache_config_to_json(c);
    char *s = j ? json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(j);
    uint8_t d[32];
    xtts_sha256 h;
    xtts_sha256_init(&h);
    if (s) xtts_sha256_update(&h, s, strlen(s));
    xtts_sha256_final(&h, d);
    free(s);
    xtts_hex(d, 32, out_hex);
}

int xtts_cache_config_padded_frames(const xtts_cache_config *c, int n_frames) {
    if (n_frames < 0) return 0;
    if (c->n_buckets > 0) {
        for (int i = 0; i < c->n_buckets && i < XTTS_MAX_BUCKETS; i++)
            if (c->buckets[i] >= n_frames) return c->buckets[i];
        return 0;
    }
    return n_frames <= c->max_frames ? c->max_frames : 0;
}

int xtts_cache_config_max_padded_frames(const xtts_cache_config *c) {
    int m = c->max_frames;
    for (int i = 0; i < c->n_buckets && i < XTTS_MAX_BUCKETS; i++)
        if (c->buckets[i] > 0 && c->buckets[i] <= XTTS_RECORD_MAX_FRAMES && c->buckets[i] > m) m = c->buckets[i];
    return m;
}

/* ---- manifest ----------------------------------------------------------------- */

static xtts_status mbad(xtts_error *err, const char *name, const char *key, const char *what) {
    return xtts_error_set(err, XTTS_EINPUT, "%s: manifest key \"%s\": %s", name, key, what);
}

static int is_count(const json_t *v) { return json_is_integer(v) && json_integer_value(v) >= 0; }

/* "shard-NNNNN" or "shard-KKKKK-NNNNN"; with shared, also "base-NNNNN". */
static int is_shard_name(const char *s, int shared) {
    if (shared && !strncmp(s, "base-", 5)) {
        for (int i = 5; i < 10; i++)
            if (!isdigit((unsigned char)s[i])) return 0;
        return s[10] == '\0';
    }
    if (strncmp(s, "shard-", 6)) return 0;
    s += 6;
    for (int group = 0; group < 2; group++) {
        for (int i = 0; i < 5; i++)
            if (!isdigit((unsigned char)s[i])) return 0;
        s += 5;
        if (*s == '\0') return 1;
        if (*s != '-' || group == 1) return 0;
        s++;
    }
    return 0;
}

static xtts_status check_number_array(const json_t *a, size_t n, const char *name, const char *key, xtts_error *err) {
    if (!json_is_array(a)) return mbad(err, name, key, "must be an array of numbers");
    if (json_array_size(a) != n) {
        char msg[96];
        snprintf(msg, sizeof msg, "has %zu values, config says %zu mel channels", json_array_size(a), n);
        return mbad(err, name, key, msg);
    }
    for (size_t i = 0; i < n; i++)
        if (!json_is_number(json_array_get(a, i))) return mbad(err, name, key, "must be an array of numbers");
    return XTTS_OK;
}

/* Two entries of one directory (format_version 3) whose local key ranges overlap. */
static int ranges_overlap(const json_t *a, const json_t *b) {
    json_t *la = json_object_get(a, "local_first"), *lb = json_object_get(b, "local_first");
    long long fa = la ? json_integer_value(la) : 0, fb = lb ? json_integer_value(lb) : 0;
    long long na = json_integer_value(json_object_get(a, "records")), nb = json_integer_value(json_object_get(b, "records"));
    return na > 0 && nb > 0 && fa < fb + nb && fb < fa + na;
}

/* One entry of "shards": its keys, and its first_index against the records before it. */
static xtts_status check_shard_entry(const json_t *s, int shared, const char *name, const char *key, long long next,
                                     xtts_error *err) {
    if (!json_is_object(s)) return mbad(err, name, key, "must be an object");
    json_t *sn = json_object_get(s, "name");
    if (!json_is_string(sn) || !is_shard_name(json_string_value(sn), shared))
        return mbad(err, name, key, shared ? "\"name\" must be shard-NNNNN, shard-KKKKK-NNNNN or base-NNNNN"
                                           : "\"name\" must be shard-NNNNN or shard-KKKKK-NNNNN");
    json_t *sr = json_object_get(s, "records"), *sb = json_object_get(s, "bytes"), *sf = json_object_get(s, "first_index");
    if (!is_count(sr) || !is_count(sb) || !is_count(sf))
        return mbad(err, name, key, "\"records\", \"bytes\" and \"first_index\" must be non-negative integers");
    json_t *lf = json_object_get(s, "local_first");
    if (lf && !shared) return mbad(err, name, key, "\"local_first\" belongs to format_version 3");
    if (lf && (!is_count(lf) || json_integer_value(lf) > INT64_MAX / 4))
        return mbad(err, name, key, "\"local_first\" must be a non-negative integer");
    if (json_integer_value(sf) != next) {
        char msg[128];
        snprintf(msg, sizeof msg, "first_index %lld, the shards before it hold %lld records", (long long)json_integer_value(sf),
                 next);
        return mbad(err, name, key, msg);
    }
    if (json_integer_value(sr) > INT64_MAX / 4 - next) return mbad(err, name, key, "\"records\" too large");
    return XTTS_OK;
}

/* "shards": each entry's keys; names unique, or (format_version 3) a directory listed
 * again only for a range of its keys no other entry takes. *next: the records they hold. */
/* An entry of "shards" by its name and range, for the check that no two of the first n list
 * the same shard (a shared cache: the same keys of one shard). */
typedef struct {
    const char *name;
    long long first, n;
} shard_ref;

static int cmp_shard_ref(const void *a, const void *b) {
    const shard_ref *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->first > y->first) - (x->first < y->first);
}

/* Sorted by name and first key, a shard listed twice has equal neighbours, and of one
 * directory's ranges in order of their first key, one overlaps an earlier one only if it
 * starts before the farthest end of those before it. */
int xtts_manifest_shards_conflict(const json_t *shards, size_t n, int shared) {
    shard_ref *r = malloc((n ? n : 1) * sizeof *r);
    if (!r) return 1;
    for (size_t i = 0; i < n; i++) {
        const json_t *s = json_array_get(shards, i), *lf = json_object_get(s, "local_first");
        r[i] = (shard_ref){json_string_value(json_object_get(s, "name")), lf ? json_integer_value(lf) : 0,
                           json_integer_value(json_object_get(s, "records"))};
    }
    qsort(r, n, sizeof *r, cmp_shard_ref);
    int bad = 0;
    long long end = 0;
    for (size_t i = 1; i < n && !bad; i++) {
        if (strcmp(r[i].name, r[i - 1].name)) { /* another directory: its ranges start afresh */
            end = 0;
            continue;
        }
        if (r[i - 1].n > 0 && r[i - 1].first + r[i - 1].n > end) end = r[i - 1].first + r[i - 1].n;
        bad = !shared || (r[i].n > 0 && r[i].first < end);
    }
    free(r);
    return bad;
}

static xtts_status check_shards(const json_t *shards, int shared, const char *name, long long *next, xtts_error *err) {
    if (!json_is_array(shards)) return mbad(err, name, "shards", "must be an array");
    size_t n = json_array_size(shards), valid = n;
    xtts_error bad_entry;
    xtts_status entry_st = XTTS_OK;
    for (size_t i = 0; i < n && !entry_st; i++) {
        json_t *s = json_array_get(shards, i);
        char key[48];
        snprintf(key, sizeof key, "shards[%zu]", i);
        entry_st = check_shard_entry(s, shared, name, key, *next, &bad_entry);
        if (entry_st) valid = i;
        else *next += json_integer_value(json_object_get(s, "records"));
    }
    /* a conflict among the valid entries before the first bad one is named first, pair by
     * pair (the rare case: thousands of entries are checked by sorting) */
    int conflict = valid > 1 && xtts_manifest_shards_conflict(shards, valid, shared);
    for (size_t i = 1; conflict && i < valid; i++) {
        const json_t *s = json_array_get(shards, i);
        const char *sn = json_string_value(json_object_get(s, "name"));
        char key[48];
        snprintf(key, sizeof key, "shards[%zu]", i);
        for (size_t k = 0; k < i; k++) {
            const json_t *o = json_array_get(shards, k);
            if (strcmp(json_string_value(json_object_get(o, "name")), sn)) continue;
            if (!shared) return mbad(err, name, key, "shard listed twice");
            if (ranges_overlap(o, s)) return mbad(err, name, key, "a range of keys listed twice");
        }
    }
    if (entry_st && err) *err = bad_entry;
    return entry_st;
}

static xtts_status check_manifest(const json_t *m, const char *name, xtts_error *err) {
    static const char *const required[] = {"format_version", "records", "config", "config_hash", "shards", "stats"};
    if (!json_is_object(m)) return xtts_error_set(err, XTTS_EINPUT, "%s: manifest is not a JSON object", name);
    for (size_t i = 0; i < N_OF(required); i++)
        if (!json_object_get(m, required[i])) return mbad(err, name, required[i], "missing");
    json_t *fv = json_object_get(m, "format_version");
    if (!json_is_integer(fv)) return mbad(err, name, "format_version", "must be an integer");
    if (json_integer_value(fv) < XTTS_MANIFEST_VERSION_MIN || json_integer_value(fv) > XTTS_MANIFEST_VERSION_SHARED)
        return xtts_error_set(err, XTTS_EMISMATCH, "%s: manifest format_version %lld, this build reads %d..%d", name,
                              (long long)json_integer_value(fv), XTTS_MANIFEST_VERSION_MIN, XTTS_MANIFEST_VERSION_SHARED);
    int shared = json_integer_value(fv) == XTTS_MANIFEST_VERSION_SHARED;
    json_t *records = json_object_get(m, "records");
    if (!is_count(records)) return mbad(err, name, "records", "must be a non-negative integer");
    xtts_cache_config cfg;
    char where[600];
    snprintf(where, sizeof where, "%s", name);
    xtts_status st = xtts_cache_config_from_json(json_object_get(m, "config"), &cfg, where, err);
    if (st) return st;
    if (cfg.format_version != (shared ? 2 : json_integer_value(fv)))
        return mbad(err, name, "config", cfg.format_version == 2 ? "has the \"audio\" key of format_version 2"
                                                                 : "lacks the \"audio\" key of format_version 2");
    json_t *hash = json_object_get(m, "config_hash");
    if (!json_is_string(hash) || !is_hex64(json_string_value(hash)))
        return mbad(err, name, "config_hash", "must be 64 lower-case hex digits");
    char want[65];
    xtts_cache_config_hash(&cfg, want);
    if (strcmp(want, json_string_value(hash)))
        return xtts_error_set(err, XTTS_ECORRUPT, "%s: config_hash %.12s... does not match the config (hashes to %.12s...)",
                              name, json_string_value(hash), want);
    json_t *shards = json_object_get(m, "shards");
    long long next = 0;
    if ((st = check_shards(shards, shared, name, &next, err))) return st;
    if (next != json_integer_value(records)) {
        char msg[128];
        snprintf(msg, sizeof msg, "%lld, the shards hold %lld", (long long)json_integer_value(records), next);
        return mbad(err, name, "records", msg);
    }
    json_t *stats = json_object_get(m, "stats");
    if (!json_is_object(stats)) return mbad(err, name, "stats", "must be an object");
    json_t *frames = json_object_get(stats, "frames");
    if (frames && !is_count(frames)) return mbad(err, name, "stats.frames", "must be a non-negative integer");
    static const char *const arrays[] = {"mel_sum", "mel_sumsq", "mel_mean", "mel_std"};
    for (size_t i = 0; i < N_OF(arrays); i++) {
        json_t *a = json_object_get(stats, arrays[i]);
        char key[32];
        snprintf(key, sizeof key, "stats.%s", arrays[i]);
        if (a && (st = check_number_array(a, (size_t)cfg.mel.n_mels, name, key, err))) return st;
    }
    json_t *part = json_object_get(m, "part"), *n_parts = json_object_get(m, "n_parts");
    if ((part != NULL) != (n_parts != NULL)) return mbad(err, name, part ? "n_parts" : "part", "missing (a partial manifest has both \"part\" and \"n_parts\")");
    if (part) {
        if (!is_count(n_parts) || json_integer_value(n_parts) < 1 || json_integer_value(n_parts) > 99999)
            return mbad(err, name, "n_parts", "must be an integer in [1, 99999]");
        if (!is_count(part) || json_integer_value(part) >= json_integer_value(n_parts))
            return mbad(err, name, "part", "must be an integer in [0, n_parts)");
    }
    json_t *pin = json_object_get(m, "part_inputs");
    if (pin) {
        if (!part) return mbad(err, name, "part_inputs", "only a partial manifest (with \"part\") has it");
        if (!json_is_array(pin) || json_array_size(pin) != 2 || !is_count(json_array_get(pin, 0)) ||
            !is_count(json_array_get(pin, 1)) ||
            json_integer_value(json_array_get(pin, 0)) > json_integer_value(json_array_get(pin, 1)))
            return mbad(err, name, "part_inputs", "must be [first, end] with 0 <= first <= end");
    }
    json_t *rej = json_object_get(m, "rejects");
    if (rej && !json_is_array(rej)) return mbad(err, name, "rejects", "must be an array");
    json_t *rejected = json_object_get(m, "rejected");
    if (rejected && !is_count(rejected)) return mbad(err, name, "rejected", "must be a non-negative integer");
    static const char *const tables[] = {"speakers", "languages"};
    for (size_t i = 0; i < N_OF(tables); i++) {
        json_t *t = json_object_get(m, tables[i]);
        if (!t) continue;
        if (!json_is_array(t)) return mbad(err, name, tables[i], "must be an array of strings");
        for (size_t k = 0; k < json_array_size(t); k++)
            if (!json_is_string(json_array_get(t, k))) return mbad(err, name, tables[i], "must be an array of strings");
    }
    return XTTS_OK;
}

xtts_status xtts_manifest_parse(const char *text, size_t len, const char *name, json_t **out, xtts_error *err) {
    *out = NULL;
    if (!name) name = "manifest";
    json_error_t je;
    json_t *m = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    if (!m)
        return xtts_error_set(err, XTTS_EINPUT, "%s:%d:%d: invalid JSON: %s", name, je.line, je.column, je.text);
    xtts_status st = check_manifest(m, name, err);
    if (st) { json_decref(m); return st; }
    *out = m;
    return XTTS_OK;
}

xtts_status xtts_manifest_load(const char *path, json_t **out, xtts_error *err) {
    *out = NULL;
    char *text = NULL;
    size_t len = 0;
    xtts_status st = xtts_read_file(path, MANIFEST_MAX_BYTES, &text, &len, err);
    if (st) return st;
    st = xtts_manifest_parse(text, len, path, out, err);
    free(text);
    return st;
}

xtts_status xtts_manifest_write(const char *path, const json_t *manifest, xtts_error *err) {
    char *s = json_dumps(manifest, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
    if (!s) return xtts_error_set(err, XTTS_ENOMEM, "%s: cannot serialize the manifest", path);
    size_t n = strlen(s);
    char *t = realloc(s, n + 2);
    if (!t) { free(s); return xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", path); }
    t[n] = '\n';
    t[n + 1] = '\0';
    xtts_status st = xtts_write_file_atomic(path, t, n + 1, err);
    free(t);
    return st;
}

/* ---- what a build adds ------------------------------------------------------------ */

static json_t *strings_json(const char *const *v, size_t n) {
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++) json_array_append_new(a, json_string(v[i]));
    return a;
}

/* "stats": "frames" and the arrays the build has. */
static json_t *stats_json(const xtts_manifest_extra *x) {
    static const char *const names[] = {"mel_sum", "mel_sumsq", "mel_mean", "mel_std"};
    const double *arrays[] = {x->mel_sum, x->mel_sumsq, x->mel_mean, x->mel_std};
    json_t *st = json_object();
    if (!st || json_object_set_new(st, "frames", json_integer((json_int_t)x->stats_frames))) {
        json_decref(st);
        return NULL;
    }
    for (size_t k = 0; k < N_OF(names); k++) {
        if (!arrays[k]) continue;
        json_t *a = json_array();
        for (size_t i = 0; a && i < x->n_mels; i++) json_array_append_new(a, json_real(arrays[k][i]));
        if (json_object_set_new(st, names[k], a)) {
            json_decref(st);
            return NULL;
        }
    }
    return st;
}

json_t *xtts_manifest_extra_to_json(const xtts_manifest_extra *x) {
    json_t *m = json_object();
    json_t *langs = x->languages ? strings_json(x->languages, x->n_languages)
                                 : strings_json(xtts_lang_codes, XTTS_N_LANGS);
    const xtts_tokens_header *h = x->token_stream;
    if (json_object_set_new(m, "languages", langs) || json_object_set_new(m, "stats", stats_json(x)) ||
        (x->has_speakers && json_object_set_new(m, "speakers", strings_json(x->speakers, x->n_speakers))) ||
        (x->has_splits && json_object_set_new(m, "splits", json_pack("{s:I,s:I}", "train", (json_int_t)x->split_train,
                                                                       "val", (json_int_t)x->split_val))) ||
        (h && json_object_set_new(m, "token_stream",
                                  json_pack("{s:s,s:s,s:i,s:s}", "tokenizer", h->tokenizer, "vocab_hash",
                                            h->vocab_hash, "vocab_size", h->vocab_size, "lang", h->lang_mode)))) {
        json_decref(m);
        return NULL;
    }
    /* a sum that is not finite leaves "totals" out */
    if (x->has_totals)
        json_object_set_new(m, "totals",
                            json_pack("{s:f,s:f,s:I,s:I}", "audio_seconds", x->audio_seconds, "hours",
                                      x->audio_seconds / 3600.0, "frames", (json_int_t)x->total_frames, "tokens",
                                      (json_int_t)x->total_tokens));
    return m;
}

/* ---- the manifest as plain values ---------------------------------------------- */

/* A copy of an array of strings (checked by check_manifest); *n 0 and NULL when absent. */
static int copy_strings(const json_t *a, size_t *n, char ***out) {
    *n = json_array_size(a);
    *out = NULL;
    if (!json_is_array(a)) return 0;
    if (!(*out = calloc(*n ? *n : 1, sizeof **out))) return -1;
    for (size_t i = 0; i < *n; i++)
        if (!((*out)[i] = strdup(json_string_value(json_array_get(a, i))))) return -1;
    return 0;
}

static int copy_numbers(const json_t *a, size_t n, double **out) {
    *out = NULL;
    if (!json_is_array(a)) return 0;
    if (!(*out = malloc((n ? n : 1) * sizeof **out))) return -1;
    for (size_t i = 0; i < n; i++) (*out)[i] = json_number_value(json_array_get(a, i));
    return 0;
}

/* An integer member of o: 1 with its value, 0 when absent or not an integer. */
static int int_member(const json_t *o, const char *key, int64_t *v) {
    json_t *j = json_object_get(o, key);
    *v = json_is_integer(j) ? json_integer_value(j) : 0;
    return json_is_integer(j);
}

/* Everything of a manifest that passed check_manifest, typed. Fails only for memory. */
static int info_from_json(const json_t *m, xtts_manifest_info *info) {
    info->format_version = (int)json_integer_value(json_object_get(m, "format_version"));
    info->records = (uint64_t)json_integer_value(json_object_get(m, "records"));
    snprintf(info->config_hash, sizeof info->config_hash, "%s", json_string_value(json_object_get(m, "config_hash")));
    const json_t *shards = json_object_get(m, "shards");
    info->n_shards = json_array_size(shards);
    if (!(info->shards = calloc(info->n_shards ? info->n_shards : 1, sizeof *info->shards))) return -1;
    for (size_t i = 0; i < info->n_shards; i++) {
        const json_t *o = json_array_get(shards, i);
        xtts_manifest_shard *s = &info->shards[i];
        snprintf(s->name, sizeof s->name, "%s", json_string_value(json_object_get(o, "name")));
        s->records = (uint64_t)json_integer_value(json_object_get(o, "records"));
        s->bytes = (uint64_t)json_integer_value(json_object_get(o, "bytes"));
        s->first_index = (uint64_t)json_integer_value(json_object_get(o, "first_index"));
        s->local_first = (uint64_t)json_integer_value(json_object_get(o, "local_first")); /* 0 when absent */
    }
    const json_t *languages = json_object_get(m, "languages");
    info->has_languages = languages != NULL;
    info->has_speakers = json_object_get(m, "speakers") != NULL;
    if (copy_strings(json_object_get(m, "speakers"), &info->n_speakers, &info->speakers) ||
        copy_strings(languages, &info->n_languages, &info->languages))
        return -1;
    const json_t *splits = json_object_get(m, "splits"), *totals = json_object_get(m, "totals");
    info->has_split_train = int_member(splits, "train", &info->split_train);
    info->has_split_val = int_member(splits, "val", &info->split_val);
    info->has_total_frames = int_member(totals, "frames", &info->total_frames);
    info->has_total_tokens = int_member(totals, "tokens", &info->total_tokens);
    int64_t v;
    info->has_rejected = int_member(m, "rejected", &v);
    info->rejected = (uint64_t)v;
    const json_t *rejects = json_object_get(m, "rejects");
    info->has_rejects = json_is_array(rejects);
    info->n_rejects = json_array_size(rejects);
    const json_t *stats = json_object_get(m, "stats");
    int_member(stats, "frames", &v);
    info->stats_frames = (uint64_t)v;
    size_t n_mels = (size_t)info->config.mel.n_mels;
    if (copy_numbers(json_object_get(stats, "mel_mean"), n_mels, &info->mel_mean) ||
        copy_numbers(json_object_get(stats, "mel_std"), n_mels, &info->mel_std))
        return -1;
    return 0;
}

xtts_status xtts_manifest_info_init(xtts_manifest_info *info, const char *path, xtts_error *err) {
    memset(info, 0, sizeof *info);
    json_t *m = NULL;
    xtts_status st = xtts_manifest_load(path, &m, err);
    if (!st) st = xtts_cache_config_from_json(json_object_get(m, "config"), &info->config, path, err);
    if (!st && info_from_json(m, info)) st = xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", path);
    json_decref(m);
    return st;
}

void xtts_manifest_info_free(xtts_manifest_info *info) {
    if (!info) return;
    for (size_t i = 0; info->speakers && i < info->n_speakers; i++) free(info->speakers[i]);
    for (size_t i = 0; info->languages && i < info->n_languages; i++) free(info->languages[i]);
    free(info->speakers);
    free(info->languages);
    free(info->shards);
    free(info->mel_mean);
    free(info->mel_std);
    memset(info, 0, sizeof *info);
}

int xtts_manifest_part_count(const char *path) {
    json_error_t je;
    json_t *j = json_load_file(path, 0, &je);
    json_t *n = j ? json_object_get(j, "n_parts") : NULL;
    int parts = json_is_integer(n) && json_integer_value(n) > 0 && json_integer_value(n) < 1000000
                    ? (int)json_integer_value(n)
                    : 0;
    json_decref(j);
    return parts;
}
