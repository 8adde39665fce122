/* inspect.c — cache summary, length histograms, .npy and PNG export (see inspect.h).
 *
 * Colormaps: viridis and magma as the sixth-degree polynomial fits of matplotlib's
 * tables (perceptually uniform; within about 1/100 of the tables), gray as a ramp.
 */
#include "cache/audit/inspect.h"

#include <sndfile.h>

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cache/audit/figure.h"
#include "cache/audit/png.h"
#include "formats/audio/sndfile_open.h"

/* ---- histograms --------------------------------------------------------------------------- */

void xtts_histogram_build(const uint32_t *v, size_t n, xtts_histogram *h) {
    memset(h, 0, sizeof *h);
    h->n = n;
    if (!n) return;
    h->min = h->max = v[0];
    for (size_t i = 0; i < n; i++) {
        if (v[i] < h->min) h->min = v[i];
        if (v[i] > h->max) h->max = v[i];
        h->sum += v[i];
    }
    uint64_t span = h->max - h->min + 1;
    uint64_t width = (span + XTTS_HIST_BINS - 1) / XTTS_HIST_BINS;
    if (width == 0) width = 1;
    h->bins = (int)((span + width - 1) / width);
    for (int b = 0; b < h->bins; b++) {
        h->lo[b] = h->min + (uint64_t)b * width;
        h->hi[b] = h->lo[b] + width - 1;
    }
    for (size_t i = 0; i < n; i++) h->count[(v[i] - h->min) / width]++;
}

void xtts_histogram_print(FILE *f, const char *title, const xtts_histogram *h) {
    fprintf(f, "%s:", title);
    if (!h->n) {
        fprintf(f, " none\n");
        return;
    }
    fprintf(f, " min %llu, mean %.1f, max %llu\n", (unsigned long long)h->min, (double)h->sum / (double)h->n,
            (unsigned long long)h->max);
    uint64_t peak = 1;
    for (int b = 0; b < h->bins; b++)
        if (h->count[b] > peak) peak = h->count[b];
    for (int b = 0; b < h->bins; b++) {
        int bar = (int)((h->count[b] * 40 + peak - 1) / peak);
        fprintf(f, "  %7llu-%-7llu %8llu |", (unsigned long long)h->lo[b], (unsigned long long)h->hi[b],
                (unsigned long long)h->count[b]);
        for (int i = 0; i < bar; i++) fputc('#', f);
        fputc('\n', f);
    }
}

static json_t *histogram_json(const xtts_histogram *h) {
    json_t *bins = json_array();
    for (int b = 0; b < h->bins; b++)
        json_array_append_new(bins, json_pack("{s:I, s:I, s:I}", "lo", (json_int_t)h->lo[b], "hi",
                                              (json_int_t)h->hi[b], "count", (json_int_t)h->count[b]));
    return json_pack("{s:I, s:I, s:I, s:f, s:o}", "n", (json_int_t)h->n, "min", (json_int_t)h->min, "max",
                     (json_int_t)h->max, "mean", h->n ? (double)h->sum / (double)h->n : 0.0, "bins", bins);
}

/* ---- summary ------------------------------------------------------------------------------ */

static json_t *copy_or_null(const json_t *m, const char *key) {
    json_t *v = json_object_get(m, key);
    return v ? json_deep_copy(v) : json_null();
}

/* Records of the shards that opened: what the cache holds, whatever its manifest claims
 * for a shard that did not (a forged count must not make the work or the arrays grow). */
static uint64_t readable_records(xtts_cache *c) {
    uint64_t n = 0;
    for (size_t i = 0; i < xtts_cache_n_shards(c); i++) {
        xtts_cache_shard sh;
        xtts_cache_shard_get(c, i, &sh);
        if (sh.status == XTTS_OK) n += sh.records;
    }
    return n;
}

/* Frame and token length histograms from every record's header, into the summary s. A
 * shard that did not open counts its records as unreadable at once, with its one error. */
static xtts_status add_lengths(xtts_cache *c, json_t *s, xtts_error *err) {
    uint64_t n = readable_records(c);
    uint32_t *frames = malloc((n ? n : 1) * sizeof *frames), *tokens = malloc((n ? n : 1) * sizeof *tokens);
    xtts_cache_reader *r = NULL;
    if (!frames || !tokens || xtts_cache_reader_new(c, &r, err)) {
        free(frames);
        free(tokens);
        return xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", xtts_cache_dir(c));
    }
    size_t k = 0;
    uint64_t unreadable = 0, done = 0;
    json_t *errors = json_array();
    xtts_progress p;
    xtts_progress_init(&p, "headers", 0);
    for (size_t si = 0; si < xtts_cache_n_shards(c); si++) {
        xtts_cache_shard sh;
        xtts_cache_shard_get(c, si, &sh);
        if (sh.status != XTTS_OK) {
            unreadable += sh.records;
            if (json_array_size(errors) < 20) json_array_append_new(errors, json_string(sh.error));
            continue;
        }
        for (uint64_t i = sh.first_index; i < sh.first_index + sh.records; i++, done++) {
            xtts_record_header h;
            xtts_error e;
            if (xtts_cache_reader_header(r, i, &h, &e)) {
                unreadable++;
                if (json_array_size(errors) < 20) json_array_append_new(errors, json_string(e.msg));
                continue;
            }
            frames[k] = h.n_frames;
            tokens[k++] = h.n_tokens;
            if ((done & 1023) == 0) xtts_progress_update(&p, done, n, NULL);
        }
    }
    xtts_progress_finish(&p, n, n, NULL);
    xtts_histogram hf, ht;
    xtts_histogram_build(frames, k, &hf);
    xtts_histogram_build(tokens, k, &ht);
    json_object_set_new(s, "frames_histogram", histogram_json(&hf));
    json_object_set_new(s, "tokens_histogram", histogram_json(&ht));
    json_object_set_new(s, "unreadable", json_integer((json_int_t)unreadable));
    json_object_set_new(s, "errors", errors);
    xtts_cache_reader_delete(r);
    free(frames);
    free(tokens);
    return XTTS_OK;
}

/* The summary as JSON (a new reference in *out), what both forms print. */
static xtts_status summary_json(xtts_cache *c, unsigned flags, json_t **out, xtts_error *err) {
    *out = NULL;
    /* The summary reprints parts of the manifest as they are: read it again as JSON (the
     * reader keeps only its values). */
    char path[4200];
    xtts_path_join(path, sizeof path, xtts_cache_dir(c), "manifest.json");
    json_t *m = NULL;
    xtts_status st = xtts_manifest_load(path, &m, err);
    if (st) return st;
    json_t *s = json_object();
    if (!s) {
        json_decref(m);
        return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    }
    json_object_set_new(s, "dir", json_string(xtts_cache_dir(c)));
    json_object_set_new(s, "records", json_integer((json_int_t)xtts_cache_count(c)));
    json_object_set_new(s, "config_hash", json_string(xtts_cache_config_hash_hex(c)));
    json_object_set_new(s, "config", copy_or_null(m, "config"));
    json_object_set_new(s, "totals", copy_or_null(m, "totals"));
    json_object_set_new(s, "splits", copy_or_null(m, "splits"));
    json_object_set_new(s, "speakers", copy_or_null(m, "speakers"));
    json_object_set_new(s, "languages", copy_or_null(m, "languages"));
    json_object_set_new(s, "tool_version", copy_or_null(m, "tool_version"));
    if (flags & XTTS_INSPECT_STATS) json_object_set(s, "stats", json_object_get(m, "stats"));
    json_t *rejects = json_object_get(m, "rejects");
    json_t *rejected = json_object_get(m, "rejected");
    json_object_set_new(s, "rejected", json_integer(json_is_integer(rejected) ? json_integer_value(rejected)
                                                    : json_is_array(rejects) ? (json_int_t)json_array_size(rejects)
                                                                             : 0));
    json_object_set_new(s, "rejects", json_is_array(rejects) ? json_deep_copy(rejects) : json_array());
    json_decref(m);
    json_t *shards = json_array();
    for (size_t i = 0; i < xtts_cache_n_shards(c); i++) {
        xtts_cache_shard sh;
        xtts_cache_shard_get(c, i, &sh);
        json_t *o = json_pack("{s:s, s:I, s:I, s:I}", "name", sh.name, "records", (json_int_t)sh.records, "bytes",
                              (json_int_t)sh.bytes, "first_index", (json_int_t)sh.first_index);
        if (o && sh.status) json_object_set_new(o, "error", json_string(sh.error));
        json_array_append_new(shards, o);
    }
    json_object_set_new(s, "shards", shards);
    if ((flags & XTTS_INSPECT_LENGTHS) && (st = add_lengths(c, s, err))) {
        json_decref(s);
        return st;
    }
    *out = s;
    return XTTS_OK;
}

static void print_hist_json(FILE *f, const char *title, const json_t *j) {
    xtts_histogram h;
    memset(&h, 0, sizeof h);
    h.n = (uint64_t)json_integer_value(json_object_get(j, "n"));
    h.min = (uint64_t)json_integer_value(json_object_get(j, "min"));
    h.max = (uint64_t)json_integer_value(json_object_get(j, "max"));
    h.sum = (uint64_t)llround(json_number_value(json_object_get(j, "mean")) * (double)h.n);
    json_t *bins = json_object_get(j, "bins");
    for (size_t b = 0; b < json_array_size(bins) && b < XTTS_HIST_BINS; b++) {
        json_t *o = json_array_get(bins, b);
        h.lo[b] = (uint64_t)json_integer_value(json_object_get(o, "lo"));
        h.hi[b] = (uint64_t)json_integer_value(json_object_get(o, "hi"));
        h.count[b] = (uint64_t)json_integer_value(json_object_get(o, "count"));
        h.bins = (int)b + 1;
    }
    xtts_histogram_print(f, title, &h);
}

static void print_summary_text(FILE *f, const json_t *s) {
    const json_t *cfg = json_object_get(s, "config");
    const json_t *mel = json_object_get(cfg, "mel");
    const json_t *totals = json_object_get(s, "totals");
    fprintf(f, "cache: %s\n", json_string_value(json_object_get(s, "dir")));
    fprintf(f, "records: %lld\n", json_integer_value(json_object_get(s, "records")));
    if (json_is_object(totals))
        fprintf(f, "audio: %.3f hours, %lld frames, %lld tokens\n",
                json_number_value(json_object_get(totals, "hours")),
                json_integer_value(json_object_get(totals, "frames")),
                json_integer_value(json_object_get(totals, "tokens")));
    const json_t *splits = json_object_get(s, "splits");
    if (json_is_object(splits))
        fprintf(f, "splits: train %lld, val %lld\n", json_integer_value(json_object_get(splits, "train")),
                json_integer_value(json_object_get(splits, "val")));
    fprintf(f, "config_hash: %s\n", json_string_value(json_object_get(s, "config_hash")));
    if (json_is_object(mel))
        fprintf(f, "mel: preset %s, %lld Hz, n_fft %lld, hop %lld, win %lld, %lld mels, %g-%g Hz\n",
                json_string_value(json_object_get(mel, "preset")),
                json_integer_value(json_object_get(mel, "sample_rate")),
                json_integer_value(json_object_get(mel, "n_fft")),
                json_integer_value(json_object_get(mel, "hop_samples")),
                json_integer_value(json_object_get(mel, "win_samples")),
                json_integer_value(json_object_get(mel, "n_mels")), json_number_value(json_object_get(mel, "fmin_hz")),
                json_number_value(json_object_get(mel, "fmax_hz")));
    if (json_is_object(cfg)) {
        fprintf(f, "tokens: %s tokenizer, vocabulary %lld, max_tokens %lld, pad %lld\n",
                json_string_value(json_object_get(cfg, "tokenizer")),
                json_integer_value(json_object_get(cfg, "vocab_size")),
                json_integer_value(json_object_get(cfg, "max_tokens")),
                json_integer_value(json_object_get(cfg, "pad_token")));
        fprintf(f, "frames: max_frames %lld, buckets", json_integer_value(json_object_get(cfg, "max_frames")));
        const json_t *b = json_object_get(cfg, "buckets");
        if (!json_array_size(b)) fprintf(f, " none");
        for (size_t i = 0; i < json_array_size(b); i++)
            fprintf(f, "%s%lld", i ? "," : " ", json_integer_value(json_array_get(b, i)));
        const json_t *dt = json_object_get(cfg, "dtype");
        fprintf(f, ", dtype %s\n", json_is_string(dt) ? json_string_value(dt) : "?");
    }
    const json_t *sp = json_object_get(s, "speakers"), *la = json_object_get(s, "languages");
    if (json_is_array(sp)) fprintf(f, "speakers: %zu\n", json_array_size(sp));
    if (json_is_array(la)) {
        fprintf(f, "languages:");
        for (size_t i = 0; i < json_array_size(la); i++) fprintf(f, " %s", json_string_value(json_array_get(la, i)));
        fputc('\n', f);
    }
    const json_t *shards = json_object_get(s, "shards");
    fprintf(f, "shards: %zu\n", json_array_size(shards));
    for (size_t i = 0; i < json_array_size(shards); i++) {
        const json_t *o = json_array_get(shards, i);
        const json_t *e = json_object_get(o, "error");
        fprintf(f, "  %s  first %lld  records %lld  bytes %lld%s%s\n", json_string_value(json_object_get(o, "name")),
                json_integer_value(json_object_get(o, "first_index")), json_integer_value(json_object_get(o, "records")),
                json_integer_value(json_object_get(o, "bytes")), e ? "  ERROR: " : "", e ? json_string_value(e) : "");
    }
    const json_t *rejects = json_object_get(s, "rejects");
    fprintf(f, "rejected: %lld\n", json_integer_value(json_object_get(s, "rejected")));
    for (size_t i = 0; i < json_array_size(rejects) && i < 20; i++) {
        const json_t *o = json_array_get(rejects, i);
        fprintf(f, "  record %lld (%s): %s\n", json_integer_value(json_object_get(o, "input")) + 1,
                json_string_value(json_object_get(o, "id")), json_string_value(json_object_get(o, "reason")));
    }
    if (json_array_size(rejects) > 20) fprintf(f, "  ... %zu more\n", json_array_size(rejects) - 20);
    if (json_object_get(s, "frames_histogram")) {
        print_hist_json(f, "frames per record", json_object_get(s, "frames_histogram"));
        print_hist_json(f, "tokens per record", json_object_get(s, "tokens_histogram"));
        long long bad = json_integer_value(json_object_get(s, "unreadable"));
        if (bad) {
            fprintf(f, "unreadable records: %lld\n", bad);
            const json_t *errs = json_object_get(s, "errors");
            for (size_t i = 0; i < json_array_size(errs); i++)
                fprintf(f, "  %s\n", json_string_value(json_array_get(errs, i)));
        }
    }
}

xtts_status xtts_inspect_print_summary(FILE *f, xtts_cache *c, unsigned flags, uint64_t *unreadable,
                                       xtts_error *err) {
    if (unreadable) *unreadable = 0;
    json_t *s = NULL;
    xtts_status st = summary_json(c, flags, &s, err);
    if (st) return st;
    if (flags & XTTS_INSPECT_JSON) {
        json_dumpf(s, f, JSON_INDENT(2) | JSON_SORT_KEYS);
        fputc('\n', f);
    } else {
        print_summary_text(f, s);
    }
    if (unreadable) *unreadable = (uint64_t)json_integer_value(json_object_get(s, "unreadable"));
    json_decref(s);
    return XTTS_OK;
}

void xtts_inspect_print_stats(FILE *f, const xtts_cache *c) {
    const xtts_manifest_info *m = xtts_cache_manifest(c);
    if (!m->mel_mean || !m->mel_std) {
        fprintf(f, "stats: none in the manifest\n");
        return;
    }
    fprintf(f, "mel statistics over %lld frames\nchannel        mean         std\n", (long long)m->stats_frames);
    for (size_t ch = 0; ch < (size_t)m->config.mel.n_mels; ch++)
        fprintf(f, "%7zu %11.5f %11.5f\n", ch, m->mel_mean[ch], m->mel_std[ch]);
}

/* ---- .npy ---------------------------------------------------------------------------------- */

xtts_status xtts_npy_write_f32(const char *path, const float *data, size_t rows, size_t cols, size_t stride,
                               xtts_error *err) {
    char head[128];
    int n = snprintf(head, sizeof head, "{'descr': '<f4', 'fortran_order': False, 'shape': (%zu, %zu), }", rows,
                     cols);
    /* magic(6) + version(2) + len(2) + header, padded with spaces to a multiple of 64, '\n' last */
    size_t total = 10 + (size_t)n + 1;
    size_t padded = (total + 63) / 64 * 64;
    uint8_t pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0, 0};
    xtts_put_le16(pre + 8, (uint16_t)(padded - 10));
    FILE *f = xtts_out_open(path, err);
    if (!f) return XTTS_EIO;
    fwrite(pre, 1, 10, f);
    fwrite(head, 1, (size_t)n, f);
    for (size_t i = total; i < padded; i++) fputc(' ', f);
    fputc('\n', f);
    for (size_t r = 0; r < rows; r++) fwrite(data + r * stride, sizeof(float), cols, f); /* little-endian host */
    return xtts_out_close(f, path, err);
}

/* ---- .wav --------------------------------------------------------------------------------- */

static SNDFILE *open_wav_out(void *ctx, SF_INFO *si) {
    const char *path = ctx;
    return !strcmp(path, "-") ? sf_open_fd(1, SFM_WRITE, si, 0) : sf_open(path, SFM_WRITE, si);
}

xtts_status xtts_wav_write_i16(const char *path, const int16_t *x, size_t n, int rate, xtts_error *err) {
    SF_INFO si;
    memset(&si, 0, sizeof si);
    si.samplerate = rate;
    si.channels = 1;
    si.format = SF_FORMAT_WAV | SF_FORMAT_PCM_16;
    char why[256] = "";
    SNDFILE *sf = xtts_sf_open(open_wav_out, (void *)path, &si, why, sizeof why);
    if (!sf) return xtts_error_set(err, XTTS_EIO, "%s: cannot write: %s", path, why);
    sf_count_t done = n ? sf_write_short(sf, x, (sf_count_t)n) : 0;
    int cerr = sf_close(sf);
    if (done != (sf_count_t)n || cerr) return xtts_error_set(err, XTTS_EIO, "%s: short write", path);
    return XTTS_OK;
}

/* ---- one record ------------------------------------------------------------------------ */

/* Entry i of a table of the manifest (speakers, languages), or NULL past its end. */
static const char *table_name(char *const *names, size_t n, uint32_t i) { return i < n ? names[i] : NULL; }

static json_t *record_json(const xtts_cache *c, const xtts_inspect_record *r) {
    const xtts_record_header *h = r->h;
    const xtts_manifest_info *m = xtts_cache_manifest(c);
    json_t *toks = json_array();
    for (uint32_t i = 0; toks && i < h->n_tokens; i++) json_array_append_new(toks, json_integer(r->tokens[i]));
    json_t *j = json_pack("{s:I, s:s, s:s?, s:s?, s:I, s:I, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:s, s:f, s:o}",
                          "index", (json_int_t)r->index, "id", h->id, "speaker",
                          table_name(m->speakers, m->n_speakers, h->speaker_id), "lang",
                          table_name(m->languages, m->n_languages, h->lang_id), "speaker_id", (json_int_t)h->speaker_id,
                          "lang_id", (json_int_t)h->lang_id, "split", h->split ? "val" : "train", "n_tokens",
                          (json_int_t)h->n_tokens, "tokens_padded", (json_int_t)h->tokens_padded, "n_frames",
                          (json_int_t)h->n_frames, "frames_padded", (json_int_t)h->frames_padded, "n_mels",
                          (json_int_t)h->n_mels, "n_samples", (json_int_t)h->n_samples, "dtype",
                          xtts_dtype_name((xtts_dtype)h->dtype), "pad_value", (double)h->pad_value, "tokens", toks);
    if (!j) return NULL;
    json_object_set_new(j, "shard", json_string(xtts_cache_shard_of(c, r->index)));
    json_object_set_new(j, "record_version", json_integer(h->version));
    if (h->version >= 2) {
        json_object_set_new(j, "text", json_string(r->text ? r->text : ""));
        json_object_set_new(j, "normalized_text", json_string(r->norm ? r->norm : ""));
        json_object_set_new(j, "audio", json_string(xtts_audio_store_name(h->audio)));
        json_object_set_new(j, "trim_start", json_integer(h->trim_start));
    }
    return j;
}

void xtts_inspect_print_record_json(FILE *f, const xtts_cache *c, const xtts_inspect_record *r) {
    json_t *j = record_json(c, r);
    if (j) json_dumpf(j, f, JSON_INDENT(2) | JSON_SORT_KEYS);
    fputc('\n', f);
    json_decref(j);
}

void xtts_inspect_print_record(FILE *f, const xtts_cache *c, const xtts_inspect_record *r) {
    const xtts_record_header *h = r->h;
    const xtts_manifest_info *m = xtts_cache_manifest(c);
    const char *spk = table_name(m->speakers, m->n_speakers, h->speaker_id);
    const char *lang = table_name(m->languages, m->n_languages, h->lang_id);
    fprintf(f, "index: %llu (%s)\nid: %s\nspeaker: %u (%s)\nlanguage: %u (%s)\nsplit: %s\n",
            (unsigned long long)r->index, xtts_cache_shard_of(c, r->index), h->id, h->speaker_id, spk ? spk : "?",
            h->lang_id, lang ? lang : "?", h->split ? "val" : "train");
    fprintf(f, "tokens: %u (padded to %u)\nframes: %u (padded to %u)\nn_mels: %u\nsamples: %u\n", h->n_tokens,
            h->tokens_padded, h->n_frames, h->frames_padded, h->n_mels, h->n_samples);
    fprintf(f, "dtype: %s, pad value %g\n", xtts_dtype_name((xtts_dtype)h->dtype), (double)h->pad_value);
    if (h->version >= 2)
        fprintf(f, "waveform: %s (trim start %u)\ntext: %s\nnormalized text: %s\n", xtts_audio_store_name(h->audio),
                h->trim_start, r->text ? r->text : "", r->norm ? r->norm : "");
    fprintf(f, "token ids:");
    for (uint32_t i = 0; i < h->n_tokens; i++) fprintf(f, " %d", r->tokens[i]);
    fputc('\n', f);
}

xtts_status xtts_inspect_write_png(const char *path, const xtts_cache *c, const xtts_inspect_record *r,
                                   const float *mel, size_t stride, const xtts_png_options *o, xtts_error *err) {
    const xtts_record_header *h = r->h;
    if (o->bare) return xtts_png_write_mel(path, mel, h->n_mels, h->n_frames, stride, o, err);
    const xtts_manifest_info *m = xtts_cache_manifest(c);
    const xtts_mel_params *mp = &xtts_cache_get_config(c)->mel;
    const char *spk = table_name(m->speakers, m->n_speakers, h->speaker_id);
    const char *lang = table_name(m->languages, m->n_languages, h->lang_id);
    char title[700];
    snprintf(title, sizeof title, "%.300s | speaker %.200s | %.40s | %u frames, %.2f s | %s | %.16s %d Hz", h->id,
             spk ? spk : "?", lang ? lang : "?", h->n_frames,
             mp->sample_rate > 0 ? (double)h->n_frames * mp->hop_samples / mp->sample_rate : 0.0,
             h->split ? "val" : "train", mp->preset, mp->sample_rate);
    xtts_png_labels l = {title, mp};
    return xtts_png_write_figure(path, mel, h->n_mels, h->n_frames, stride, &l, o, err);
}
