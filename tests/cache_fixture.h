/* cache_fixture.h — build small synthetic caches for reader tests, straight through LMDB
 * and the record codec as formats/cache.md lays them out (independent of the writer, so
 * tests can also lay out damage the writer would never produce).
 *
 * Record i of a fixture: id "utt-%05d", n_tokens 1 + (7i mod max_tokens-1), tokens
 * (5i + 3k) mod vocab, n_frames 1 + (13i mod max_frames), mel[c][t] =
 * 3 sin(0.37 i + 0.11 c + 0.05 t) - 4, speaker i mod 3, language i mod 2, split val when
 * i mod 5 == 0. fixture_mel_value() gives the same numbers to compare against.
 */
#ifndef XTTS_TEST_CACHE_FIXTURE_H
#define XTTS_TEST_CACHE_FIXTURE_H

#include <jansson.h>
#include <lmdb.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xtts_common.h"
#include "formats/manifest.h"
#include "formats/record.h"
#include "formats/record_internal.h"
#include "cache/store/writer.h"

typedef struct {
    int records;
    int per_shard;       /* records per shard (the last may hold fewer) */
    int dtype;           /* xtts_dtype */
    int shuffle;
    int n_mels, max_tokens, max_frames, vocab;
    int buckets;         /* 1: buckets max_frames/4, max_frames/2, max_frames */
    int nan_at;          /* record index whose mel gets a NaN (-1: none) */
    int n_fft;           /* changes the configuration hash */
    const char *id_prefix;
    int format;          /* cache format (record version): 2 (default) or 1 */
    int audio;           /* xtts_audio_store of format-2 records (waveform: fixture_wave_value) */
} fixture_options;

static inline void fixture_defaults(fixture_options *o) {
    memset(o, 0, sizeof *o);
    o->records = 40;
    o->per_shard = 15;
    o->dtype = XTTS_DTYPE_F32;
    o->n_mels = 16;
    o->max_tokens = 24;
    o->max_frames = 48;
    o->vocab = 100;
    o->buckets = 1;
    o->nan_at = -1;
    o->n_fft = 1024;
    o->id_prefix = "utt";
    o->format = 2;
    o->audio = XTTS_AUDIO_NONE;
}

static inline int16_t fixture_wave_value(int i, int k) { return (int16_t)((i * 131 + k * 37) % 20001 - 10000); }

static inline float fixture_mel_value(int i, int c, int t) {
    return 3.0f * sinf(0.37f * (float)i + 0.11f * (float)c + 0.05f * (float)t) - 4.0f;
}
static inline int fixture_n_tokens(const fixture_options *o, int i) { return 1 + (7 * i) % (o->max_tokens - 1); }
static inline int fixture_token(const fixture_options *o, int i, int k) { return (5 * i + 3 * k) % o->vocab; }
/* With a waveform (audio), records hold at least 3 frames: fixture_n_samples must make
 * exactly n_frames under the xtts preset's framing (centred, n_fft 1024, hop 256). */
static inline int fixture_n_frames(const fixture_options *o, int i) {
    return o->audio ? 3 + (13 * i) % (o->max_frames - 2) : 1 + (13 * i) % o->max_frames;
}
static inline size_t fixture_n_samples(const fixture_options *o, int i) {
    int nf = fixture_n_frames(o, i);
    return o->audio ? (size_t)(nf - 1) * 256 + 1 : (size_t)nf * 256;
}
#define FIXTURE_PAD_VALUE (-11.512925f) /* log(1e-5) */

static inline void fixture_config(const fixture_options *o, xtts_cache_config *cfg) {
    xtts_cache_config_defaults(cfg);
    cfg->mel.n_mels = o->n_mels;
    cfg->mel.n_fft = o->n_fft;
    if (cfg->mel.win_samples > o->n_fft) cfg->mel.win_samples = o->n_fft;
    cfg->max_tokens = o->max_tokens;
    cfg->max_frames = o->max_frames;
    cfg->vocab_size = o->vocab;
    cfg->pad_token = 0;
    cfg->dtype = o->dtype;
    cfg->shuffle = o->shuffle;
    cfg->format_version = o->format;
    cfg->audio = o->format >= 2 ? o->audio : XTTS_AUDIO_NONE;
    if (o->buckets) {
        cfg->n_buckets = 3;
        cfg->buckets[0] = o->max_frames / 4;
        cfg->buckets[1] = o->max_frames / 2;
        cfg->buckets[2] = o->max_frames;
    }
}

static inline int fixture_fail(const char *what, const char *detail) {
    fprintf(stderr, "fixture: %s: %s\n", what, detail);
    return -1;
}

/* Encode fixture record i (the encoder's buffer; valid until its next call). */
static inline int fixture_encode(const fixture_options *o, const xtts_cache_config *cfg, xtts_record_encoder *enc, int i,
                                 const uint8_t **buf, size_t *len) {
    char id[64];
    snprintf(id, sizeof id, "%s-%05d", o->id_prefix, i);
    int nt = fixture_n_tokens(o, i), nf = fixture_n_frames(o, i);
    int fp = xtts_cache_config_padded_frames(cfg, nf);
    int32_t *tok = calloc((size_t)o->max_tokens, sizeof *tok);
    float *mel = calloc((size_t)o->n_mels * (size_t)fp, sizeof *mel);
    if (!tok || !mel) {
        free(tok);
        free(mel);
        return -1;
    }
    for (int k = 0; k < o->max_tokens; k++) tok[k] = k < nt ? fixture_token(o, i, k) : cfg->pad_token;
    for (int c = 0; c < o->n_mels; c++)
        for (int t = 0; t < fp; t++) mel[c * fp + t] = t < nf ? fixture_mel_value(i, c, t) : FIXTURE_PAD_VALUE;
    if (i == o->nan_at) mel[nf / 2] = NAN; /* channel 0, a real frame */
    size_t ns = fixture_n_samples(o, i);
    int16_t *wave = malloc(ns * sizeof *wave);
    if (!wave) {
        free(tok);
        free(mel);
        return -1;
    }
    for (size_t k = 0; k < ns; k++) wave[k] = fixture_wave_value(i, (int)k);
    char text[64], norm[64];
    snprintf(text, sizeof text, "Utterance %d.", i);
    snprintf(norm, sizeof norm, "utterance %d", i);
    xtts_record_input in = {.id = id, .split = (uint8_t)(i % 5 == 0), .speaker_id = (uint32_t)(i % 3),
                            .lang_id = (uint32_t)(i % 2), .n_samples = (uint32_t)ns,
                            .n_tokens = (uint32_t)nt, .tokens_padded = (uint32_t)o->max_tokens,
                            .n_frames = (uint32_t)nf, .frames_padded = (uint32_t)fp,
                            .n_mels = (uint16_t)o->n_mels, .pad_value = FIXTURE_PAD_VALUE, .tokens = tok, .mel = mel,
                            .pad_token = (uint32_t)cfg->pad_token, .trim_start = (uint32_t)i, .text = text,
                            .text_norm = norm, .wave = wave, .sample_rate = (uint32_t)cfg->mel.sample_rate};
    xtts_error e;
    xtts_record_encoder_set_audio(enc, (xtts_audio_store)cfg->audio);
    int rc = xtts_record_encoder_set_version(enc, cfg->format_version, &e) || xtts_record_encode(enc, &in, buf, len, &e)
                 ? -1
                 : 0;
    free(wave);
    if (rc) fprintf(stderr, "fixture: %s\n", e.msg);
    free(tok);
    free(mel);
    return rc;
}

/* What records [lo, hi) add to a manifest besides the writer's own keys: stats, speakers,
 * languages, splits, totals (x, over the arrays held here; fixture_extra_free frees them). */
typedef struct {
    xtts_manifest_extra x;
    double *sum, *sumsq, *mean, *std;
} fixture_extra_t;

static const char *const fixture_speakers[] = {"alice", "bob", "carol"};
static const char *const fixture_languages[] = {"en", "es"};

static inline void fixture_extra_free(fixture_extra_t *fe) {
    free(fe->sum);
    free(fe->sumsq);
    free(fe->mean);
    free(fe->std);
}

static inline void fixture_extra(const fixture_options *o, int lo, int hi, fixture_extra_t *fe) {
    size_t nm = (size_t)o->n_mels;
    double *sum = fe->sum = calloc(nm, sizeof *sum), *sumsq = fe->sumsq = calloc(nm, sizeof *sumsq);
    fe->mean = calloc(nm, sizeof *fe->mean);
    fe->std = calloc(nm, sizeof *fe->std);
    uint64_t frames = 0, tokens = 0, train = 0, val = 0;
    for (int i = lo; i < hi; i++) {
        int nf = fixture_n_frames(o, i);
        for (int c = 0; c < o->n_mels; c++)
            for (int t = 0; t < nf; t++) {
                float v = fixture_mel_value(i, c, t);
                float q = o->dtype == XTTS_DTYPE_F16 ? xtts_f16_to_f32(xtts_f32_to_f16(v)) : v;
                sum[c] += q;
                sumsq[c] += (double)q * q;
            }
        frames += (uint64_t)nf;
        tokens += (uint64_t)fixture_n_tokens(o, i);
        if (i % 5 == 0) val++;
        else train++;
    }
    for (int c = 0; c < o->n_mels; c++) {
        double mu = frames ? sum[c] / (double)frames : 0, var = frames ? sumsq[c] / (double)frames - mu * mu : 0;
        fe->mean[c] = mu;
        fe->std[c] = sqrt(var > 0 ? var : 0);
    }
    fe->x = (xtts_manifest_extra){
        .has_splits = 1, .split_train = train, .split_val = val,
        .has_speakers = 1, .speakers = fixture_speakers, .n_speakers = 3,
        .languages = fixture_languages, .n_languages = 2,
        .has_totals = 1, .audio_seconds = (double)frames * 256 / 22050, .total_frames = frames, .total_tokens = tokens,
        .stats_frames = frames, .n_mels = nm, .mel_sum = sum, .mel_sumsq = sumsq, .mel_mean = fe->mean,
        .mel_std = fe->std};
}

/* Build dir (created) with o's records straight through LMDB. Returns 0 on success. */
static inline int fixture_build(const char *dir, const fixture_options *o) {
    xtts_cache_config cfg;
    fixture_config(o, &cfg);
    char hash[65];
    xtts_cache_config_hash(&cfg, hash);
    xtts_error e;
    if (xtts_mkdir_p(dir, &e)) return fixture_fail(dir, e.msg);
    xtts_record_encoder *enc;
    xtts_record_encoder_new((xtts_dtype)o->dtype, 3, o->shuffle ? XTTS_RECORD_SHUFFLED : 0, &enc);
    json_t *shards = json_array();
    int rc = 0;
    for (int s0 = 0, shard = 0; s0 < o->records || (o->records == 0 && shard == 0); s0 += o->per_shard, shard++) {
        int s1 = s0 + o->per_shard < o->records ? s0 + o->per_shard : o->records;
        char name[32], path[4096];
        snprintf(name, sizeof name, "shard-%05d", shard);
        snprintf(path, sizeof path, "%s/%s", dir, name);
        if (xtts_mkdir_p(path, &e)) return fixture_fail(path, e.msg);
        MDB_env *env;
        MDB_txn *txn;
        MDB_dbi rdb, idb, mdb, ldb = 0;
        mdb_env_create(&env);
        mdb_env_set_maxdbs(env, 4);
        mdb_env_set_mapsize(env, (size_t)64 << 20);
        if (mdb_env_open(env, path, 0, 0644)) return fixture_fail(path, "mdb_env_open");
        mdb_txn_begin(env, NULL, 0, &txn);
        mdb_dbi_open(txn, "records", MDB_CREATE, &rdb);
        mdb_dbi_open(txn, "ids", MDB_CREATE, &idb);
        mdb_dbi_open(txn, "meta", MDB_CREATE, &mdb);
        if (o->format >= 2) mdb_dbi_open(txn, "lengths", MDB_CREATE, &ldb);
        uint64_t bytes = 0;
        for (int i = s0; i < s1; i++) {
            char id[64];
            snprintf(id, sizeof id, "%s-%05d", o->id_prefix, i);
            const uint8_t *buf;
            size_t len;
            if (fixture_encode(o, &cfg, enc, i, &buf, &len)) return fixture_fail(id, "encode");
            uint8_t kb[8];
            xtts_put_be64(kb, (uint64_t)(i - s0));
            MDB_val k = {8, kb}, v = {len, (void *)buf};
            if (mdb_put(txn, rdb, &k, &v, 0)) rc = -1;
            MDB_val ik = {strlen(id), id}, iv = {8, kb};
            if (mdb_put(txn, idb, &ik, &iv, 0)) rc = -1;
            if (o->format >= 2) {
                xtts_record_header h;
                uint8_t lb[XTTS_LENGTHS_BYTES];
                if (xtts_record_parse_header(buf, len, &h, &e)) return fixture_fail(id, e.msg);
                xtts_lengths_pack(&h, lb);
                MDB_val lv = {sizeof lb, lb};
                if (mdb_put(txn, ldb, &k, &lv, 0)) rc = -1;
            }
            bytes += len;
        }
        uint8_t nb[8];
        xtts_put_be64(nb, (uint64_t)s1);
        MDB_val hk = {11, "config_hash"}, hv = {64, hash}, fk = {6, "format"}, fv = {12, (void *)xtts_cache_format_name(o->format)},
                nk = {10, "next_input"}, nv = {8, nb};
        mdb_put(txn, mdb, &hk, &hv, 0);
        mdb_put(txn, mdb, &fk, &fv, 0);
        mdb_put(txn, mdb, &nk, &nv, 0);
        if (mdb_txn_commit(txn)) rc = -1;
        mdb_env_close(env);
        json_array_append_new(shards, json_pack("{s:s, s:i, s:I, s:i}", "name", name, "records", s1 - s0, "bytes",
                                                (json_int_t)bytes, "first_index", s0));
        if (o->records == 0) break;
    }
    fixture_extra_t fe;
    fixture_extra(o, 0, o->records, &fe);
    json_t *m = xtts_manifest_extra_to_json(&fe.x);
    fixture_extra_free(&fe);
    json_t *base = json_pack("{s:i, s:s, s:i, s:o, s:s, s:o, s:i, s:[]}", "format_version", o->format, "tool_version",
                             "0.1.0", "records", o->records, "config", xtts_cache_config_to_json(&cfg), "config_hash",
                             hash, "shards", shards, "rejected", 0, "rejects");
    if (m && base) json_object_update(m, base);
    json_decref(base);
    char mpath[4096];
    snprintf(mpath, sizeof mpath, "%s/manifest.json", dir);
    if (!m) rc = fixture_fail(mpath, "json_pack");
    else if (xtts_manifest_write(mpath, m, &e)) rc = fixture_fail(mpath, e.msg);
    json_decref(m);
    xtts_record_encoder_delete(enc);
    return rc;
}

/* Build dir through the cache writer (cache/store/writer.h): a whole build with shards of
 * about shard_bytes, or, with parts > 1, that many partial builds over contiguous
 * ranges of records joined by xtts_cache_merge. Input index i of record i; inputs in
 * `rejects` (a -1-terminated list, may be NULL) are rejected instead. */
static inline int fixture_build_writer(const char *dir, const fixture_options *o, uint64_t shard_bytes, int parts,
                                       const int *rejects) {
    xtts_cache_config cfg;
    fixture_config(o, &cfg);
    xtts_record_encoder *enc;
    xtts_record_encoder_new((xtts_dtype)o->dtype, 3, o->shuffle ? XTTS_RECORD_SHUFFLED : 0, &enc);
    xtts_error e;
    int n_parts = parts > 1 ? parts : 1;
    for (int p = 0; p < n_parts; p++) {
        int lo = o->records * p / n_parts, hi = o->records * (p + 1) / n_parts;
        xtts_cache_writer_options wo = {.dir = dir, .part = parts > 1 ? p : -1, .force = 0,
                                        .shard_bytes = shard_bytes, .commit_every = 4,
                                        .n_parts = parts > 1 ? parts : 0, .map_bytes = (uint64_t)8 << 20};
        xtts_cache_writer *w;
        if (xtts_cache_writer_open(&wo, &cfg, &w, &e)) return fixture_fail(dir, e.msg);
        for (int i = lo; i < hi; i++) {
            char id[64];
            snprintf(id, sizeof id, "%s-%05d", o->id_prefix, i);
            int rejected = 0;
            for (const int *r = rejects; r && *r >= 0; r++) rejected |= *r == i;
            const uint8_t *buf;
            size_t len;
            xtts_status st = rejected ? xtts_cache_writer_reject(w, (uint64_t)i, id, "rejected by the fixture", &e)
                                      : fixture_encode(o, &cfg, enc, i, &buf, &len)
                                          ? XTTS_EINPUT
                                          : xtts_cache_writer_put(w, (uint64_t)i, id, buf, len, &e);
            if (st) {
                xtts_cache_writer_abort(w);
                return fixture_fail(id, e.msg);
            }
        }
        fixture_extra_t fe;
        fixture_extra(o, lo, hi, &fe);
        xtts_status st = xtts_cache_writer_finish(w, &fe.x, &e);
        fixture_extra_free(&fe);
        if (st) return fixture_fail(dir, e.msg);
    }
    xtts_record_encoder_delete(enc);
    if (parts > 1 && xtts_cache_merge(dir, &e)) return fixture_fail(dir, e.msg);
    return 0;
}

/* Replace the stored value of (shard, local) with val; also used to lay out damage. */
static inline int fixture_put_record(const char *shard_path, uint64_t local, const void *val, size_t len) {
    MDB_env *env;
    MDB_txn *txn;
    MDB_dbi dbi;
    mdb_env_create(&env);
    mdb_env_set_maxdbs(env, 4);
    int rc = mdb_env_open(env, shard_path, 0, 0644);
    if (!rc) rc = mdb_txn_begin(env, NULL, 0, &txn);
    if (!rc) rc = mdb_dbi_open(txn, "records", 0, &dbi);
    uint8_t kb[8];
    xtts_put_be64(kb, local);
    MDB_val k = {8, kb}, v = {len, (void *)val};
    if (!rc) rc = mdb_put(txn, dbi, &k, &v, 0);
    if (!rc) rc = mdb_txn_commit(txn);
    mdb_env_close(env);
    return rc;
}

/* Put (key -> val) into one of a shard's databases; val NULL deletes key. */
static inline int fixture_put(const char *shard_path, const char *db, const void *key, size_t klen, const void *val,
                              size_t vlen) {
    MDB_env *env;
    MDB_txn *txn;
    MDB_dbi dbi;
    mdb_env_create(&env);
    mdb_env_set_maxdbs(env, 4);
    int rc = mdb_env_open(env, shard_path, 0, 0644);
    if (!rc) rc = mdb_txn_begin(env, NULL, 0, &txn);
    if (!rc) rc = mdb_dbi_open(txn, db, 0, &dbi);
    MDB_val k = {klen, (void *)key}, v = {vlen, (void *)val};
    if (!rc) rc = val ? mdb_put(txn, dbi, &k, &v, 0) : mdb_del(txn, dbi, &k, NULL);
    if (!rc) rc = mdb_txn_commit(txn);
    mdb_env_close(env);
    return rc;
}

#endif
