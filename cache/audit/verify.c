/* verify.c — the checks of xtts-cache-verify, as a library (see verify.h).
 *
 * Per shard, a pass over "ids" maps local indices to ids (so a record whose header is
 * damaged is still named by its id), then a pass over "records" in key order decodes
 * every record, checks it against the manifest's configuration and the id index, and
 * feeds the content digest. Ids are kept in one
 * hash table over the whole cache, so a duplicate in two shards is found too.
 */
#include "cache/audit/verify.h"

#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cache/store/codes_store.h"
#include "cache/store/quality_store.h"
#include "cache/store/read/reader.h"
#include "cache/store/writer_internal.h"
#include "common/mel_params.h"

void xtts_verify_options_defaults(xtts_verify_options *o) {
    memset(o, 0, sizeof *o);
    o->seed = 1;
}

/* ---- digest ------------------------------------------------------------------------------ */

void xtts_digest_record(xtts_sha256 *s, const xtts_record_header *h, const int32_t *tokens, const float *mel,
                        size_t stride) {
    uint8_t b[4 * 7 + 1];
    xtts_put_le32(b + 0, h->id_len);
    xtts_sha256_update(s, b, 4);
    xtts_sha256_update(s, h->id, h->id_len);
    xtts_put_le32(b + 0, h->n_tokens);
    xtts_put_le32(b + 4, h->n_frames);
    xtts_put_le32(b + 8, h->n_mels);
    xtts_put_le32(b + 12, h->n_samples);
    xtts_put_le32(b + 16, h->speaker_id);
    xtts_put_le32(b + 20, h->lang_id);
    b[24] = h->split;
    xtts_sha256_update(s, b, 25);
    uint8_t buf[4096];
    size_t used = 0;
    for (uint32_t i = 0; i < h->n_tokens; i++) {
        xtts_put_le32(buf + used, (uint32_t)tokens[i]);
        if ((used += 4) == sizeof buf) xtts_sha256_update(s, buf, used), used = 0;
    }
    for (size_t c = 0; c < h->n_mels; c++)
        for (size_t t = 0; t < h->n_frames; t++) {
            uint32_t u;
            memcpy(&u, &mel[c * stride + t], 4);
            xtts_put_le32(buf + used, u);
            if ((used += 4) == sizeof buf) xtts_sha256_update(s, buf, used), used = 0;
        }
    if (used) xtts_sha256_update(s, buf, used);
}

/* ---- the run ------------------------------------------------------------------------------ */

typedef struct {
    const xtts_verify_options *opt;
    xtts_verify_report *rep;
    xtts_cache *cache;
    const xtts_cache_config *cfg;
    xtts_cache_reader *reader;
    xtts_cache_reader *lookup; /* a second reader for id look-ups during the walk */
    uint8_t *ids_walked; /* per shard: its "ids" were walked without a fault (check_duplicate_ids) */
    xtts_record_decoder *dec;
    xtts_sha256 digest;
    int digest_broken;
    size_t n_speakers, n_langs;
    int has_speakers;
    /* current shard */
    const char *shard;
    uint64_t first, expect_local, bytes, seen, records;
    uint64_t in_shards; /* records the shards hold by the manifest, summed */
    char **by_local; /* this shard's "ids": local index -> id (NULL when none) */
    xtts_lengths *lens; /* format 2: this shard's "lengths" entries by local index */
    uint8_t *lens_have;
    /* scratch */
    int32_t *tokens;
    size_t tokens_cap;
    float *mel;
    size_t mel_cap;
    /* deep statistics over real frames */
    double *mel_sum, *mel_sumsq;
    int oom;
    int has_metrics;       /* the cache stores quality metrics: every record must have them */
    uint64_t metrics_next; /* the "quality" walk: the next local index expected */
    uint8_t *metrics_bad;  /* this shard's records whose metrics are missing or damaged */
    unsigned metrics_version; /* the version its metrics must have (0: either) */
    xtts_progress progress;
} run_t;

__attribute__((format(printf, 5, 6))) static void fault(run_t *r, const char *shard, int64_t index, const char *id,
                                                        const char *fmt, ...) {
    char msg[XTTS_ERRMSG_MAX + 64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    r->rep->faults++;
    /* a reader's message may already start with the shard's name: name it once */
    const char *text = msg;
    size_t sl = shard ? strlen(shard) : 0;
    if (sl && strncmp(text, shard, sl) == 0 && text[sl] == ':' && text[sl + 1] == ' ') text += sl + 2;
    if (r->opt->on_fault) {
        xtts_verify_fault f = {shard ? shard : "", index, id ? id : "", text};
        r->opt->on_fault(r->opt->ctx, &f);
    }
}

/* A codec message starts "record '<id>': " when it knows the id; the fault names the id
 * already. */
static const char *strip_record_prefix(const char *msg, const char *id) {
    size_t n = strlen(id);
    if (!strncmp(msg, "record '", 8) && !strncmp(msg + 8, id, n) && !strncmp(msg + 8 + n, "': ", 3))
        return msg + 8 + n + 3;
    return msg;
}

static int grow_scratch(run_t *r, size_t tokens, size_t mel) {
    if (tokens > r->tokens_cap) {
        int32_t *p = realloc(r->tokens, tokens * sizeof *p);
        if (!p) return -1;
        r->tokens = p;
        r->tokens_cap = tokens;
    }
    if (mel > r->mel_cap) {
        float *p = realloc(r->mel, mel * sizeof *p);
        if (!p) return -1;
        r->mel = p;
        r->mel_cap = mel;
    }
    return 0;
}

/* parse and decode one record (into r->tokens, r->mel) and check its sections; 0, or -1
 * after a fault (the digest cannot cover it) */
static int decode_record(run_t *r, uint64_t local, const void *val, size_t len, xtts_record_header *hp) {
    uint64_t index = r->first + local;
    int64_t gi = (int64_t)index;
    xtts_error e;
    xtts_error_clear(&e);
    r->bytes += len;
    const char *known = local < r->records && r->by_local[local] ? r->by_local[local] : "";
    xtts_status st = xtts_record_parse_header(val, len, hp, &e);
    if (st) {
        /* The header is not to be trusted; the id index names the record. */
        fault(r, r->shard, gi, known, "%s", strip_record_prefix(e.msg, known));
        r->digest_broken = 1;
        return -1;
    }
    if (grow_scratch(r, hp->tokens_padded ? hp->tokens_padded : 1, (size_t)hp->n_mels * (hp->frames_padded ? hp->frames_padded : 1))) {
        r->oom = 1;
        fault(r, r->shard, gi, hp->id, "out of memory decoding the record");
        r->digest_broken = 1;
        return -1;
    }
    st = xtts_record_decode(r->dec, val, len, hp, r->tokens, r->tokens_cap, r->mel, XTTS_DTYPE_F32, hp->n_mels,
                            hp->frames_padded, &e);
    r->rep->records_checked++;
    if (st) {
        fault(r, r->shard, gi, hp->id, "%s", strip_record_prefix(e.msg, hp->id));
        r->digest_broken = 1;
        return -1;
    }
    if (hp->version >= 2 && (st = xtts_record_check(r->dec, val, len, &e))) { /* text, waveform */
        fault(r, r->shard, gi, hp->id, "%s", strip_record_prefix(e.msg, hp->id));
        r->digest_broken = 1;
        return -1;
    }
    return 0;
}

/* version 2: the waveform and text sections agree with the configuration and the
 * "lengths" index */
static void check_v2(run_t *r, uint64_t local, int64_t gi, const xtts_record_header *hp) {
    const xtts_cache_config *cfg = r->cfg;
    const xtts_record_header h = *hp;
    if (h.audio != (cfg->audio))
        fault(r, r->shard, gi, h.id, "waveform stored as %s, the configuration says %s",
              xtts_audio_store_name(h.audio), xtts_audio_store_name(cfg->audio));
    if (h.pad_token != (uint32_t)cfg->pad_token)
        fault(r, r->shard, gi, h.id, "pad token %u, the configuration's is %d", h.pad_token, cfg->pad_token);
    if (h.audio != XTTS_AUDIO_NONE && xtts_mel_n_frames(&cfg->mel, h.n_samples) != h.n_frames)
        fault(r, r->shard, gi, h.id, "%u waveform samples make %zu frames, the record has %u", h.n_samples,
              xtts_mel_n_frames(&cfg->mel, h.n_samples), h.n_frames);
    xtts_lengths want, *got = local < r->records && r->lens_have && r->lens_have[local] ? &r->lens[local] : NULL;
    xtts_lengths_from_header(&h, &want);
    if (!got)
        fault(r, r->shard, gi, h.id, "no \"lengths\" entry for this record");
    else if (memcmp(&want, got, sizeof want))
        fault(r, r->shard, gi, h.id, "the \"lengths\" entry (%u frames, %u tokens, %u samples) differs from the record (%u, %u, %u)",
              got->n_frames, got->n_tokens, got->n_samples, want.n_frames, want.n_tokens, want.n_samples);
}

/* id (the one the "ids" database names; unique: check_duplicate_ids) and shape against the
 * configuration */
static void check_id_and_shape(run_t *r, uint64_t index, const char *known, const xtts_record_header *hp) {
    const xtts_cache_config *cfg = r->cfg;
    const xtts_record_header h = *hp;
    int64_t gi = (int64_t)index;
    if (h.id_len == 0) fault(r, r->shard, gi, h.id, "empty id");
    /* a record that carries another record's id (its own "ids" entry names something else,
     * and the record that id's entry names carries it too) */
    uint64_t other;
    xtts_error e;
    xtts_record_header oh;
    if (h.id_len && strcmp(known, h.id) && xtts_cache_reader_find(r->lookup, h.id, &other, &e) == XTTS_OK &&
        other != index && xtts_cache_reader_header(r->lookup, other, &oh, &e) == XTTS_OK && !strcmp(oh.id, h.id))
        fault(r, r->shard, gi, h.id, "duplicate id (also at index %llu)", (unsigned long long)other);
    if (!known[0]) fault(r, r->shard, gi, h.id, "no \"ids\" entry points at this record");
    else if (strcmp(known, h.id))
        fault(r, r->shard, gi, h.id, "the \"ids\" entry for this index is '%s'", known);
    if (h.n_mels != (unsigned)cfg->mel.n_mels)
        fault(r, r->shard, gi, h.id, "%u mel channels, the configuration has %d", h.n_mels, cfg->mel.n_mels);
    if (h.tokens_padded != (unsigned)cfg->max_tokens)
        fault(r, r->shard, gi, h.id, "tokens padded to %u, the configuration's max_tokens is %d", h.tokens_padded,
              cfg->max_tokens);
    int want_frames = xtts_cache_config_padded_frames(cfg, (int)(h.n_frames > INT32_MAX ? INT32_MAX : h.n_frames));
    if (want_frames <= 0 || h.frames_padded != (unsigned)want_frames)
        fault(r, r->shard, gi, h.id, "%u frames padded to %u, the configuration pads them to %d", h.n_frames,
              h.frames_padded, want_frames);
    if (h.dtype != cfg->dtype)
        fault(r, r->shard, gi, h.id, "stored as %s, the configuration says %s", xtts_dtype_name((xtts_dtype)h.dtype),
              xtts_dtype_name((xtts_dtype)cfg->dtype));
    if (!!(h.flags & XTTS_RECORD_SHUFFLED) != !!cfg->shuffle)
        fault(r, r->shard, gi, h.id, "byte-shuffle flag differs from the configuration");
    if (h.n_frames == 0) fault(r, r->shard, gi, h.id, "no frames");
    /* a table the manifest has, even an empty one, must hold every id a record carries */
    if (r->has_speakers && h.speaker_id >= r->n_speakers)
        fault(r, r->shard, gi, h.id, "speaker id %u outside the manifest's %zu speakers", h.speaker_id, r->n_speakers);
    if (h.lang_id >= r->n_langs)
        fault(r, r->shard, gi, h.id, "language id %u outside the manifest's %zu languages", h.lang_id, r->n_langs);
}

/* every mel value finite */
static void check_finite(run_t *r, int64_t gi, const xtts_record_header *hp) {
    const xtts_record_header h = *hp;
    size_t T = h.frames_padded, C = h.n_mels;
    size_t bad = 0, first_bad = 0;
    for (size_t i = 0; i < C * T; i++)
        if (!isfinite(r->mel[i]) && bad++ == 0) first_bad = i;
    if (bad)
        fault(r, r->shard, gi, h.id, "%zu mel values are NaN or Inf (first at channel %zu, frame %zu)", bad,
              first_bad / T, first_bad % T);
}

/* --deep: tokens inside the vocabulary, padding as configured; mel sums for the statistics */
static void check_deep(run_t *r, int64_t gi, const xtts_record_header *hp) {
    const xtts_cache_config *cfg = r->cfg;
    const xtts_record_header h = *hp;
    size_t T = h.frames_padded, C = h.n_mels;
    if (cfg->vocab_size > 0)
        for (uint32_t i = 0; i < h.n_tokens; i++)
            if (r->tokens[i] < 0 || r->tokens[i] >= cfg->vocab_size) {
                fault(r, r->shard, gi, h.id, "token %u is %d, outside the vocabulary of %d", i, r->tokens[i],
                      cfg->vocab_size);
                break;
            }
    for (uint32_t i = h.n_tokens; i < h.tokens_padded; i++)
        if (r->tokens[i] != cfg->pad_token) {
            fault(r, r->shard, gi, h.id, "padding token %u is %d, not the pad token %d", i, r->tokens[i],
                  cfg->pad_token);
            break;
        }
    float pad = h.dtype == XTTS_DTYPE_F16 ? xtts_f16_to_f32(xtts_f32_to_f16(h.pad_value)) : h.pad_value;
    for (size_t c = 0; c < C; c++) {
        size_t t = h.n_frames;
        while (t < T && r->mel[c * T + t] == pad) t++;
        if (t < T) {
            fault(r, r->shard, gi, h.id, "padding frame %zu of channel %zu is %g, not the pad value %g", t, c,
                  (double)r->mel[c * T + t], (double)pad);
            break;
        }
    }
    if (r->mel_sum && C == (size_t)cfg->mel.n_mels)
        for (size_t c = 0; c < C; c++) {
            double s = 0, s2 = 0;
            for (size_t t = 0; t < h.n_frames; t++) {
                double v = r->mel[c * T + t];
                s += v;
                s2 += v * v;
            }
            r->mel_sum[c] += s;
            r->mel_sumsq[c] += s2;
        }
}

static void check_record(run_t *r, uint64_t local, const void *val, size_t len) {
    uint64_t index = r->first + local;
    int64_t gi = (int64_t)index;
    xtts_record_header h;
    if (decode_record(r, local, val, len, &h)) return;
    uint64_t faults0 = r->rep->faults;
    const xtts_cache_config *cfg = r->cfg;
    if (h.version != (unsigned)cfg->format_version)
        fault(r, r->shard, gi, h.id, "record version %u in a cache of format %d", h.version, cfg->format_version);
    if (h.version >= 2) check_v2(r, local, gi, &h);
    const char *known = local < r->records && r->by_local[local] ? r->by_local[local] : "";
    check_id_and_shape(r, index, known, &h);
    check_finite(r, gi, &h);
    if (r->opt->deep) check_deep(r, gi, &h);
    size_t T = h.frames_padded;
    if (h.split == XTTS_SPLIT_VAL) r->rep->val++;
    else r->rep->train++;
    r->rep->frames += h.n_frames;
    r->rep->tokens += h.n_tokens;
    r->rep->samples += h.n_samples;
    xtts_digest_record(&r->digest, &h, r->tokens, r->mel, T);
    if (r->rep->faults == faults0 && !(r->metrics_bad && local < r->records && r->metrics_bad[local])) r->rep->records_ok++;
}

static int on_record(void *ctx, const void *key, size_t klen, const void *val, size_t vlen) {
    run_t *r = ctx;
    r->seen++;
    if (klen != 8) {
        fault(r, r->shard, -1, "", "\"records\" key of %zu bytes (expected 8)", klen);
        r->digest_broken = 1;
        return 0;
    }
    uint64_t local = xtts_get_be64(key);
    if (local != r->expect_local) {
        if (local > r->expect_local)
            fault(r, r->shard, (int64_t)(r->first + r->expect_local), "", "records %llu..%llu (local) missing",
                  (unsigned long long)r->expect_local, (unsigned long long)local - 1);
        else
            fault(r, r->shard, -1, "", "\"records\" key %llu out of order", (unsigned long long)local);
        r->digest_broken = 1;
    }
    r->expect_local = local + 1;
    check_record(r, local, val, vlen);
    if ((r->rep->records_checked & 255) == 0)
        xtts_progress_update(&r->progress, r->rep->records_checked, r->rep->manifest_records, NULL);
    return r->oom;
}

typedef struct {
    run_t *r;
    uint64_t n;
} ids_ctx;

static int on_id(void *vctx, const void *key, size_t klen, const void *val, size_t vlen) {
    ids_ctx *x = vctx;
    run_t *r = x->r;
    x->n++;
    char id[XTTS_RECORD_MAX_ID + 1];
    size_t n = klen > XTTS_RECORD_MAX_ID ? XTTS_RECORD_MAX_ID : klen;
    memcpy(id, key, n);
    id[n] = '\0';
    if (klen == 0 || klen > XTTS_RECORD_MAX_ID || memchr(key, 0, klen)) {
        fault(r, r->shard, -1, id, "\"ids\" key of %zu bytes is not a valid id", klen);
        return 0;
    }
    if (vlen != 8) {
        fault(r, r->shard, -1, id, "\"ids\" value of %zu bytes (expected an 8-byte index)", vlen);
        return 0;
    }
    uint64_t local = xtts_get_be64(val);
    if (local >= r->records) {
        fault(r, r->shard, -1, id, "\"ids\" points at local index %llu, the shard holds %llu records",
              (unsigned long long)local, (unsigned long long)r->records);
        return 0;
    }
    if (r->by_local[local]) {
        fault(r, r->shard, (int64_t)(r->first + local), id, "\"ids\" points here for '%s' too",
              r->by_local[local]);
        return 0;
    }
    if (!(r->by_local[local] = malloc(klen + 1))) {
        r->oom = 1;
        return 1;
    }
    memcpy(r->by_local[local], id, klen + 1);
    return 0;
}

static int on_length(void *vctx, const void *key, size_t klen, const void *val, size_t vlen) {
    run_t *r = vctx;
    uint64_t local = klen == 8 ? xtts_get_be64(key) : UINT64_MAX;
    if (local >= r->records) {
        fault(r, r->shard, -1, "", "\"lengths\" key of %zu bytes is not a local index of the shard", klen);
        return 0;
    }
    xtts_error e;
    if (xtts_lengths_unpack(val, vlen, &r->lens[local], &e)) {
        fault(r, r->shard, (int64_t)(r->first + local), "", "\"lengths\": %s", e.msg);
        return 0;
    }
    r->lens_have[local] = 1;
    return 0;
}

/* ---- quality metrics (cache/store/quality_store.h) ---------------------------------------------- */

static const char *local_id(const run_t *r, uint64_t local) {
    return r->by_local && local < r->records && r->by_local[local] ? r->by_local[local] : "";
}

static void metrics_missing(run_t *r, uint64_t from, uint64_t to) {
    for (uint64_t l = from; l < to && l < r->records; l++) {
        fault(r, r->shard, (int64_t)(r->first + l), local_id(r, l), "quality metrics missing");
        r->metrics_bad[l] = 1;
    }
}

static int on_metrics(void *vctx, const void *key, size_t klen, const void *val, size_t vlen) {
    run_t *r = vctx;
    uint64_t local = klen == 8 ? xtts_get_be64(key) : UINT64_MAX;
    if (local >= r->records) {
        fault(r, r->shard, -1, "", "\"quality\" key of %zu bytes is not a local index of the shard", klen);
        return 0;
    }
    if (local > r->metrics_next) metrics_missing(r, r->metrics_next, local);
    r->metrics_next = local + 1;
    xtts_quality_metrics m;
    xtts_error e;
    if (vlen != XTTS_QUALITY_BYTES)
        fault(r, r->shard, (int64_t)(r->first + local), local_id(r, local), "quality metrics of %zu bytes, expected %d",
              vlen, XTTS_QUALITY_BYTES);
    else if (xtts_quality_decode(val, &m, &e))
        fault(r, r->shard, (int64_t)(r->first + local), local_id(r, local), "quality metrics damaged (%s)", e.msg);
    else if (r->metrics_version && m.version != r->metrics_version)
        fault(r, r->shard, (int64_t)(r->first + local), local_id(r, local),
              "quality metrics damaged (version %u in a shard whose build wrote version %u)", m.version, r->metrics_version);
    else
        return 0;
    r->metrics_bad[local] = 1;
    return 0;
}

/* A cache that stores metrics has them for every record of every shard: walked after the
 * shard's "ids" (which name the records) and before its records (which count as without fault
 * only when their metrics are sound too). */
static void check_metrics(run_t *r, size_t i, const xtts_cache_shard *s) {
    xtts_error e;
    r->metrics_next = 0;
    if (xtts_cache_metrics_version(r->reader, i, &r->metrics_version, &e)) fault(r, s->name, -1, "", "%s", e.msg);
    if (!(r->metrics_bad = calloc(s->records ? s->records : 1, 1))) {
        r->oom = 1;
        return;
    }
    xtts_status st = xtts_cache_reader_foreach(r->reader, i, XTTS_CACHE_DB_QUALITY, on_metrics, r, &e);
    if (st == XTTS_ENOTFOUND) {
        if (s->records)
            fault(r, s->name, (int64_t)r->first, local_id(r, 0),
                  "no \"quality\" database: quality metrics missing for the shard's %llu records (the other shards have them)",
                  (unsigned long long)s->records);
        memset(r->metrics_bad, 1, s->records);
        return;
    }
    if (st) {
        fault(r, s->name, -1, "", "%s", e.msg);
        return;
    }
    metrics_missing(r, r->metrics_next, r->records);
}

static void free_by_local(run_t *r) {
    if (r->by_local)
        for (uint64_t i = 0; i < r->records; i++) free(r->by_local[i]);
    free(r->by_local);
    r->by_local = NULL;
}

/* Shard directories on disk that the manifest does not list. */
static void check_unlisted(run_t *r, const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *de;
    size_t ns = xtts_cache_n_shards(r->cache);
    while ((de = readdir(d))) {
        int part_, number_;
        if (!xtts_shard_name_parse(de->d_name, &part_, &number_)) continue; /* not a cache file */
        int listed = 0;
        for (size_t i = 0; i < ns && !listed; i++) {
            xtts_cache_shard s;
            xtts_cache_shard_get(r->cache, i, &s);
            listed = !strcmp(s.name, de->d_name);
        }
        if (!listed) fault(r, de->d_name, -1, "", "shard directory not listed in manifest.json");
    }
    closedir(d);
}

/* ---- audio codes (cache/store/codes_store.h, read through cache/store/read/codes_read.h) ---- */

static int cmp_code_keys(const void *a, const void *b) { return memcmp(a, b, XTTS_CODES_KEY_BYTES); }
/* How many different keys keys[0..n) holds (sorted here). */
static uint64_t distinct_keys(uint8_t *keys, uint64_t n) {
    if (n) qsort(keys, n, XTTS_CODES_KEY_BYTES, cmp_code_keys);
    uint64_t d = 0;
    for (uint64_t i = 0; i < n; i++)
        d += !i || memcmp(keys + (i - 1) * XTTS_CODES_KEY_BYTES, keys + i * XTTS_CODES_KEY_BYTES, XTTS_CODES_KEY_BYTES);
    return d;
}

/* Every record's codes in the codes directory at path: an entry under its content key, of the
 * length its waveform gives, whole (checksum), every code within the codebook. */
static void check_codes_dir(run_t *r, const char *name, const char *path) {
    xtts_codes_reader *cs = NULL;
    xtts_error e;
    if (xtts_codes_reader_open(path, &cs, &e)) { /* under the fault guard: a damaged file is a fault, not a signal */
        fault(r, name, -1, "", "%s", e.msg);
        return;
    }
    uint64_t n = xtts_cache_count(r->cache), missing = 0, bad = 0, n_found = 0;
    uint16_t *codes = NULL;
    size_t cap = 0;
    uint8_t *found = malloc((n ? n : 1) * XTTS_CODES_KEY_BYTES); /* the keys with codes: entries beyond are stale */
    if (!found) r->oom = 1;
    for (uint64_t i = 0; i < n && !r->oom; i++) {
        const void *kv;
        size_t klen, got, want;
        xtts_record_header h;
        if (xtts_cache_reader_value(r->reader, i, XTTS_CACHE_DB_KEYS, &kv, &klen, &e) || klen < XTTS_CODES_KEY_BYTES ||
            xtts_cache_reader_header(r->reader, i, &h, &e))
            continue; /* the record's own fault, reported by the walk */
        want = xtts_codes_expected(h.n_samples);
        if (want + 1 > cap) {
            uint16_t *g = realloc(codes, (want + 1) * sizeof *g);
            if (!g) {
                r->oom = 1;
                break;
            }
            codes = g, cap = want + 1;
        }
        xtts_status st = xtts_codes_reader_get(cs, kv, codes, cap, &got, &e);
        if (!st && got != want) st = XTTS_ECORRUPT, snprintf(e.msg, sizeof e.msg, "%zu codes, its %u samples make %zu",
                                                             got, h.n_samples, want);
        if (!st) r->rep->codes_records++, memcpy(found + n_found++ * XTTS_CODES_KEY_BYTES, kv, XTTS_CODES_KEY_BYTES);
        else if (st == XTTS_ENOTFOUND && ++missing <= 10) fault(r, name, (int64_t)i, h.id, "no audio codes for this record");
        else if (st != XTTS_ENOTFOUND && ++bad <= 10) fault(r, name, (int64_t)i, h.id, "%s", e.msg);
    }
    if (missing > 10 || bad > 10) /* one line for the rest: a directory of a wrong kind fails every record */
        fault(r, name, -1, "", "%llu records without audio codes and %llu with damaged ones in all", (unsigned long long)missing,
              (unsigned long long)bad);
    uint64_t entries = xtts_codes_reader_count(cs), distinct = distinct_keys(found, n_found);
    r->rep->codes_entries += entries;
    r->rep->codes_stale += entries > distinct ? entries - distinct : 0;
    r->rep->codes_dirs++;
    free(found);
    free(codes);
    xtts_codes_reader_close(cs);
}

static void check_codes(run_t *r, const char *dir) {
    char **names, path[4096];
    size_t n;
    xtts_error e;
    if (xtts_codes_dirs(dir, &names, &n, &e)) {
        fault(r, "", -1, "", "%s", e.msg);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        xtts_path_join(path, sizeof path, dir, names[i]);
        check_codes_dir(r, names[i], path);
    }
    xtts_codes_dirs_free(names, n);
}

static void check_manifest_counts(run_t *r) {
    const xtts_manifest_info *m = xtts_cache_manifest(r->cache);
    xtts_verify_report *rep = r->rep;
    if (!r->digest_broken) {
        if (m->has_split_train && (uint64_t)m->split_train != rep->train)
            fault(r, "", -1, "", "manifest splits.train is %lld, the records hold %llu", (long long)m->split_train,
                  (unsigned long long)rep->train);
        if (m->has_split_val && (uint64_t)m->split_val != rep->val)
            fault(r, "", -1, "", "manifest splits.val is %lld, the records hold %llu", (long long)m->split_val,
                  (unsigned long long)rep->val);
    }
    if (m->has_rejected && m->has_rejects && m->rejected < m->n_rejects)
        fault(r, "", -1, "", "manifest lists %zu rejects but \"rejected\" is %lld", m->n_rejects,
              (long long)m->rejected);
    if (!r->opt->deep || r->digest_broken) return;
    if (m->has_total_frames && (uint64_t)m->total_frames != rep->frames)
        fault(r, "", -1, "", "manifest totals.frames is %lld, the records hold %llu", (long long)m->total_frames,
              (unsigned long long)rep->frames);
    if (m->has_total_tokens && (uint64_t)m->total_tokens != rep->tokens)
        fault(r, "", -1, "", "manifest totals.tokens is %lld, the records hold %llu", (long long)m->total_tokens,
              (unsigned long long)rep->tokens);
    /* the means and deviations hold one value per channel when present (formats/manifest.c) */
    size_t C = (size_t)r->cfg->mel.n_mels;
    if (!r->mel_sum || !m->mel_mean || !m->mel_std) return;
    if (rep->frames == 0) return;
    /* Stored values may be fp16; the manifest's figures come from the full-precision mel. */
    double tol = r->cfg->dtype == XTTS_DTYPE_F16 ? 2e-2 : 1e-3;
    for (size_t c = 0; c < C; c++) {
        double mu = r->mel_sum[c] / (double)rep->frames;
        double var = r->mel_sumsq[c] / (double)rep->frames - mu * mu;
        double s = sqrt(var > 0 ? var : 0);
        double m0 = m->mel_mean[c], s0 = m->mel_std[c];
        if (fabs(mu - m0) > tol * (1 + fabs(m0)) || fabs(s - s0) > tol * (1 + fabs(s0))) {
            fault(r, "", -1, "", "manifest stats channel %zu: mean %g std %g, the records give %g and %g", c, m0, s0,
                  mu, s);
            return;
        }
    }
}

/* The source audio path of record id: meta "audio:<id>" of its shard, or as a writer
 * state blob "state:audio:<id>"; other shards are searched too, since a writer keeps its
 * state in the last shard it wrote. */
static xtts_status find_audio_path(run_t *r, uint64_t index, const char *id, char **path) {
    size_t own = xtts_cache_shard_index_of(r->cache, index), ns = xtts_cache_n_shards(r->cache);
    char key[XTTS_RECORD_MAX_ID + 16];
    for (size_t k = 0; k <= ns; k++) {
        size_t si = k == 0 ? own : k - 1;
        if (k > 0 && si == own) continue;
        for (int form = 0; form < 2; form++) {
            snprintf(key, sizeof key, "%saudio:%s", form ? "state:" : "", id);
            xtts_error e;
            if (xtts_cache_reader_meta(r->reader, si, key, path, NULL, &e) == XTTS_OK) return XTTS_OK;
        }
    }
    return XTTS_ENOTFOUND;
}

static void run_recompute(run_t *r) {
    uint64_t n = xtts_cache_count(r->cache);
    if (!n || !r->opt->recompute_fn) return; /* recompute_available stays 0 */
    uint64_t seed = r->opt->seed;
    double tol = r->opt->recompute_tol > 0 ? r->opt->recompute_tol : (r->cfg->dtype == XTTS_DTYPE_F16 ? 2e-2 : 1e-3);
    r->rep->recompute_available = 1;
    int all = r->opt->recompute >= n; /* then each record once, in order */
    for (uint64_t k = 0; k < (all ? n : r->opt->recompute); k++) {
        uint64_t index = all ? k : xtts_splitmix64(&seed) % n;
        const char *shard = xtts_cache_shard_of(r->cache, index);
        xtts_record_header h;
        xtts_error e;
        size_t T = xtts_cache_max_frames(r->cache), C = (size_t)r->cfg->mel.n_mels;
        if (grow_scratch(r, (size_t)r->cfg->max_tokens, C * T)) {
            r->oom = 1;
            return;
        }
        xtts_status st = xtts_cache_reader_get(r->reader, index, &h, r->tokens, r->tokens_cap, r->mel, XTTS_DTYPE_F32,
                                               C, T, &e);
        if (st) continue; /* already reported by the walk */
        char key[XTTS_RECORD_MAX_ID + 16], *path = NULL;
        st = find_audio_path(r, index, h.id, &path);
        snprintf(key, sizeof key, "audio:%s", h.id);
        if (st) {
            r->rep->recompute_failed++;
            fault(r, shard, (int64_t)index, h.id, "cannot recompute: no source audio path (meta \"%s\")", key);
            continue;
        }
        double max_abs = 0;
        size_t wave_diff = 0;
        int16_t *wave = NULL;
        if (h.audio != XTTS_AUDIO_NONE) {
            wave = malloc((h.n_samples ? h.n_samples : 1) * sizeof *wave);
            if (!wave) {
                r->oom = 1;
                free(path);
                return;
            }
            if (xtts_cache_reader_wave(r->reader, index, wave, 0, h.n_samples, &e)) {
                free(wave);
                free(path);
                continue; /* reported by the walk */
            }
        }
        st = r->opt->recompute_fn(r->cfg, path, &h, r->mel, T, wave, &max_abs, &wave_diff, &e);
        free(wave);
        free(path);
        if (!st && wave_diff) {
            r->rep->recompute_failed++;
            fault(r, shard, (int64_t)index, h.id, "recomputed waveform differs from the stored one in %zu of %u samples",
                  wave_diff, h.n_samples);
        }
        if (st == XTTS_EUNSUPPORTED) {
            r->rep->recompute_available = 0;
            fault(r, "", -1, "", "--recompute: %s", e.msg);
            return;
        }
        r->rep->recomputed++;
        if (max_abs > r->rep->recompute_max_abs) r->rep->recompute_max_abs = max_abs;
        if (st) {
            r->rep->recompute_failed++;
            fault(r, shard, (int64_t)index, h.id, "recompute: %s", e.msg);
        } else if (max_abs > tol) {
            r->rep->recompute_failed++;
            fault(r, shard, (int64_t)index, h.id, "recomputed mel differs by %g (tolerance %g)", max_abs, tol);
        }
    }
}

/* An id stored twice in the cache. Each shard's "ids" keys are unique and check_id_and_shape
 * ties every record to its entry, so the shards' "ids" read together in key order find every
 * repeated record id, in memory that does not grow with the records. The first holder is the
 * lowest index; each later one is the fault. */
static void check_duplicate_ids(run_t *r) {
    size_t n = xtts_cache_n_shards(r->cache), k = 0;
    const char **paths = calloc(n ? n : 1, sizeof *paths);
    size_t *shard = calloc(n ? n : 1, sizeof *shard);
    uint64_t *lo = calloc(n ? n : 1, sizeof *lo), *count = calloc(n ? n : 1, sizeof *count);
    if (!paths || !shard || !lo || !count) {
        free(paths);
        free(shard);
        free(lo);
        free(count);
        r->oom = 1;
        return;
    }
    for (size_t i = 0; i < n; i++) {
        xtts_cache_shard s;
        xtts_cache_shard_get(r->cache, i, &s);
        /* Only shards whose "ids" the guarded walk read whole: LMDB follows damaged page
         * numbers without checks, and this second walk is not guarded; over the same pages
         * it reads what the first read. A shard left out is a fault already. */
        if (s.status == XTTS_OK && r->ids_walked[i]) {
            lo[k] = s.local_first; /* a range of a shared directory: only its ids */
            count[k] = s.ranged ? s.records : UINT64_MAX;
            paths[k] = s.path;
            shard[k++] = i;
        }
    }
    xtts_id_merge *m = NULL;
    xtts_error e;
    xtts_status st = xtts_id_merge_open_ranges(paths, lo, count, k, &m, &e);
    char last[XTTS_RECORD_MAX_ID + 1] = "";
    size_t last_len = 0;
    int64_t first_at = -1;
    int have = 0, got;
    const void *idp;
    size_t len, src;
    uint64_t local;
    while (!st && !(st = xtts_id_merge_next(m, &got, &idp, &len, &src, &local, &e)) && got) {
        xtts_cache_shard s;
        xtts_cache_shard_get(r->cache, shard[src], &s);
        int64_t at = local < s.records ? (int64_t)(s.first_index + local) : -1;
        if (len > XTTS_RECORD_MAX_ID) continue; /* not a valid id: a fault of the shard walk */
        if (have && len == last_len && !memcmp(idp, last, len)) {
            fault(r, s.name, at, last, "duplicate id (also at index %lld)", (long long)first_at);
            continue;
        }
        memcpy(last, idp, len);
        last[len] = '\0';
        last_len = len;
        first_at = at;
        have = 1;
    }
    if (st) fault(r, "", -1, "", "duplicate-id check: %s", e.msg);
    xtts_id_merge_close(m);
    free(paths);
    free(shard);
    free(lo);
    free(count);
}

/* ---- the steps of a run -------------------------------------------------------------------- */

/* The readers, the decoder, the manifest's figures and (deep) the per-channel sums. */
static xtts_status run_begin(run_t *r, const char *dir, xtts_error *err) {
    if (xtts_record_decoder_new(&r->dec) != XTTS_OK || xtts_cache_reader_new(r->cache, &r->reader, err) != XTTS_OK ||
        xtts_cache_reader_new(r->cache, &r->lookup, err) != XTTS_OK)
        return xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", dir);
    r->cfg = xtts_cache_get_config(r->cache);
    const xtts_manifest_info *m = xtts_cache_manifest(r->cache);
    r->rep->manifest_records = m->records;
    r->n_speakers = m->n_speakers;
    r->has_speakers = m->has_speakers;
    r->n_langs = m->has_languages ? m->n_languages : XTTS_N_LANGS;
    r->has_metrics = xtts_cache_has_metrics(r->cache);
    if (r->opt->deep) {
        r->mel_sum = calloc((size_t)r->cfg->mel.n_mels, sizeof(double));
        r->mel_sumsq = calloc((size_t)r->cfg->mel.n_mels, sizeof(double));
        if (!r->mel_sum || !r->mel_sumsq) return xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", dir);
    }
    return XTTS_OK;
}

/* Shard i's "ids": its local index -> id table, checked against its record count. */
static void walk_ids(run_t *r, size_t i, const xtts_cache_shard *s) {
    xtts_error e;
    ids_ctx x = {r, 0};
    xtts_status st = xtts_cache_reader_foreach(r->reader, i, "ids", on_id, &x, &e);
    r->ids_walked[i] = st == XTTS_OK;
    if (st) fault(r, s->name, -1, "", "%s", e.msg);
    else if (x.n != s->records)
        fault(r, s->name, -1, "", "\"ids\" has %llu entries for %llu records", (unsigned long long)x.n,
              (unsigned long long)s->records);
    r->rep->ids += x.n;
}

/* Format 2: shard i's "lengths" entries by local index, for the records walk to compare.
 * -1 when out of memory. */
static int walk_lengths(run_t *r, size_t i, const xtts_cache_shard *s) {
    xtts_error e;
    r->lens = calloc(s->records ? s->records : 1, sizeof *r->lens);
    r->lens_have = calloc(s->records ? s->records : 1, 1);
    if (!r->lens || !r->lens_have) {
        r->oom = 1;
        return -1;
    }
    if (xtts_cache_reader_foreach(r->reader, i, "lengths", on_length, r, &e)) fault(r, s->name, -1, "", "%s", e.msg);
    return 0;
}

/* Shard i's records as counted by the walk, against the manifest's counts; its "next_input". */
static void check_shard_counts(run_t *r, size_t i, const xtts_cache_shard *s) {
    xtts_error e;
    if (r->seen != s->records) {
        fault(r, s->name, -1, "", "%llu records read, the manifest says %llu", (unsigned long long)r->seen,
              (unsigned long long)s->records);
        r->digest_broken = 1;
    } else if (r->bytes != s->bytes) {
        fault(r, s->name, -1, "", "records hold %llu bytes, the manifest says %llu", (unsigned long long)r->bytes,
              (unsigned long long)s->bytes);
    }
    char *next = NULL;
    size_t nlen = 0;
    if (xtts_cache_reader_meta(r->reader, i, "next_input", &next, &nlen, &e) == XTTS_OK && nlen != 8)
        fault(r, s->name, -1, "", "meta \"next_input\" is %zu bytes, expected 8", nlen);
    free(next);
}

/* Shard i: its place in the manifest, then its "ids", "lengths" and "records" walks. */
static void verify_shard(run_t *r, size_t i) {
    xtts_cache_shard s;
    xtts_cache_shard_get(r->cache, i, &s);
    r->in_shards += s.records;
    r->shard = s.name;
    r->first = s.first_index;
    r->expect_local = 0;
    r->bytes = 0;
    r->seen = 0;
    if (s.manifest_first != s.first_index)
        fault(r, s.name, -1, "", "manifest first_index %llu, the shards before it hold %llu records",
              (unsigned long long)s.manifest_first, (unsigned long long)s.first_index);
    if (s.status != XTTS_OK) {
        fault(r, s.name, -1, "", "%s", s.error);
        r->digest_broken = 1;
        return;
    }
    r->records = s.records;
    if (!(r->by_local = calloc(s.records ? s.records : 1, sizeof *r->by_local))) {
        r->oom = 1;
        return;
    }
    walk_ids(r, i, &s);
    if (r->has_metrics && !r->oom) check_metrics(r, i, &s);
    int lengths_ok = r->cfg->format_version < 2 || walk_lengths(r, i, &s) == 0;
    xtts_error e;
    xtts_status st = lengths_ok ? xtts_cache_reader_foreach(r->reader, i, "records", on_record, r, &e) : XTTS_OK;
    free_by_local(r);
    free(r->metrics_bad);
    r->metrics_bad = NULL;
    free(r->lens);
    free(r->lens_have);
    r->lens = NULL;
    r->lens_have = NULL;
    if (st) {
        fault(r, s.name, -1, "", "%s", e.msg);
        r->digest_broken = 1;
    }
    if (r->oom) return;
    check_shard_counts(r, i, &s);
    r->rep->shards_ok++;
}

/* Every shard, then the ids across them. */
static xtts_status walk_shards(run_t *r, const char *dir, xtts_error *err) {
    r->rep->shards = xtts_cache_n_shards(r->cache);
    if (!(r->ids_walked = calloc(r->rep->shards ? r->rep->shards : 1, 1)))
        return xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", dir);
    for (size_t i = 0; i < r->rep->shards && !r->oom; i++) verify_shard(r, i);
    if (!r->oom) check_duplicate_ids(r);
    if (r->oom) {
        xtts_status st = xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory during verification", dir);
        fault(r, "", -1, "", "%s", err->msg);
        return st;
    }
    return XTTS_OK;
}

/* What the whole cache holds against the manifest; then the records to rebuild. */
static void check_totals(run_t *r) {
    xtts_verify_report *rep = r->rep;
    if (r->in_shards != rep->manifest_records) {
        fault(r, "", -1, "", "manifest \"records\" is %llu, its shards list %llu", (unsigned long long)rep->manifest_records,
              (unsigned long long)r->in_shards);
        r->digest_broken = 1;
    }
    if (rep->records_checked != rep->manifest_records) r->digest_broken = 1;
    if (rep->manifest_records == 0 && r->in_shards == 0)
        fault(r, "", -1, "", "the cache holds no record (every record of its build was rejected)");
    check_manifest_counts(r);
    xtts_progress_finish(&r->progress, rep->records_checked, rep->manifest_records, NULL);
    if (r->opt->recompute) run_recompute(r);
}

/* The digest into the report, and everything the run holds freed. */
static void run_end(run_t *r, xtts_status st) {
    uint8_t d[32];
    xtts_sha256_final(&r->digest, d);
    xtts_hex(d, 32, r->rep->digest);
    r->rep->digest_complete = !r->digest_broken && st == XTTS_OK;
    free(r->tokens);
    free(r->mel);
    free(r->mel_sum);
    free(r->mel_sumsq);
    xtts_record_decoder_delete(r->dec);
    xtts_cache_reader_delete(r->reader);
    xtts_cache_reader_delete(r->lookup);
    free(r->ids_walked);
    xtts_cache_close(r->cache);
}

xtts_status xtts_verify_cache(const char *dir, const xtts_verify_options *opt, xtts_verify_report *rep,
                              xtts_error *err) {
    xtts_verify_options dflt;
    if (!opt) xtts_verify_options_defaults(&dflt), opt = &dflt;
    memset(rep, 0, sizeof *rep);
    run_t r;
    memset(&r, 0, sizeof r);
    r.opt = opt;
    r.rep = rep;
    xtts_sha256_init(&r.digest);
    xtts_status st = xtts_cache_open_ex(dir, XTTS_CACHE_OPEN_TOLERANT, &r.cache, err);
    if (st) {
        fault(&r, "", -1, "", "%s", err->msg);
        return st;
    }
    st = run_begin(&r, dir, err);
    if (!st) {
        xtts_progress_init(&r.progress, "verify", opt->progress);
        check_unlisted(&r, dir);
        st = walk_shards(&r, dir, err);
    }
    if (!st) check_totals(&r);
    if (!st) check_codes(&r, dir);
    run_end(&r, st);
    return st;
}
