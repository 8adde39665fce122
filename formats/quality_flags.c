/* quality_flags.c — the quality report's decisions over all records: the flag vocabulary,
 * thresholds (defaults and the `key = value` file), duplicates by audio hash, speaking-rate
 * outliers against each speaker's median, and the stored byte form of the metrics.
 * The measurement of one clip is kernels/quality.c's. Over stored metrics only (no signal
 * processing), so the reader library carries it (xtts_api_quality_flags).
 */
#include "formats/quality_flags.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const flag_names[XTTS_QUALITY_N_FLAGS] = {
    "lead_silence", "trail_silence", "cut_start", "cut_end", "clipped",   "low_snr",
    "upsampled",    "too_quiet",     "dup_audio", "rate_outlier", "too_short", "dc_offset",
};

const char *xtts_quality_flag_name(int flag) {
    return flag >= 0 && flag < XTTS_QUALITY_N_FLAGS ? flag_names[flag] : NULL;
}

int xtts_quality_flag_parse(const char *name) {
    if (!name) return -1;
    for (int f = 0; f < XTTS_QUALITY_N_FLAGS; f++)
        if (strcmp(name, flag_names[f]) == 0) return f;
    return -1;
}

size_t xtts_quality_flags_format(uint32_t mask, char *out, size_t cap) {
    char buf[256]; /* every name once, with commas: under 160 bytes */
    size_t len = 0;
    for (int f = 0; f < XTTS_QUALITY_N_FLAGS; f++) {
        if (!(mask & (1u << f))) continue;
        if (len) buf[len++] = ',';
        size_t k = strlen(flag_names[f]);
        memcpy(buf + len, flag_names[f], k);
        len += k;
    }
    if (!len) buf[len++] = '-';
    if (cap) {
        size_t k = len < cap ? len : cap - 1;
        memcpy(out, buf, k);
        out[k] = '\0';
    }
    return len;
}

/* ---- TSV ------------------------------------------------------------------------------- */

const char *xtts_quality_tsv_header(void) {
    return "status\tduration_s\tlead_silence_s\ttrail_silence_s\tspeech_s\tstart_edge_db\tend_edge_db\tpeak_dbfs"
           "\trms_dbfs\tactive_dbfs\tnoise_dbfs\tclip_fraction\tsnr_db\tbandwidth_hz\tchars_per_s\ttokens_per_s"
           "\tdc_offset\tcut_start\tcut_end\tsample_rate\tnative_rate\tn_chars\tn_tokens\taudio_hash";
}

size_t xtts_quality_tsv_fields(const xtts_quality_metrics *m, char *out, size_t cap) {
    static const char *const status[] = {"unmeasured", "measured", "too_short"};
    int n = snprintf(out, cap,
                     "%s\t%.3f\t%.3f\t%.3f\t%.3f\t%.1f\t%.1f\t%.2f\t%.2f\t%.2f\t%.2f\t%.6f\t%.1f\t%.0f\t%.2f\t%.2f"
                     "\t%.4f\t%u\t%u\t%u\t%u\t%u\t%u\t%016llx%016llx",
                     status[m->status <= XTTS_QUALITY_TOO_SHORT ? m->status : 0], m->duration_s, m->lead_silence_s,
                     m->trail_silence_s, m->speech_s, m->start_edge_db, m->end_edge_db, m->peak_dbfs, m->rms_dbfs,
                     m->active_dbfs, m->noise_dbfs, m->clip_fraction, m->snr_db, m->bandwidth_hz, m->chars_per_s,
                     m->tokens_per_s, m->dc_offset, m->cut_start, m->cut_end, m->sample_rate, m->native_rate, m->n_chars,
                     m->n_tokens, (unsigned long long)m->audio_hash[0], (unsigned long long)m->audio_hash[1]);
    return n < 0 ? 0 : (size_t)n;
}

/* ---- thresholds ------------------------------------------------------------------------ */

void xtts_quality_thresholds_defaults(xtts_quality_thresholds *t) {
    t->lead_silence_s = 1.0f;
    t->trail_silence_s = 1.0f;
    t->cut_edge_db = -15.0f;
    t->clip_fraction = 0.001f;
    t->snr_db = 15.0f;
    t->bandwidth_fraction = 0.8f;
    t->too_quiet_dbfs = -40.0f;
    t->dc_offset = 0.02f;
    t->rate_k = 4.0f;
    t->rate_min_spread = 0.08f;
    t->rate_min_speech_s = 0.5f;
    t->rate_min_records = 8;
}

typedef struct {
    const char *key;
    size_t offset;
    int is_int;
    double lo, hi; /* the accepted range, both ends included */
} threshold_key;

#define TK(f, is_int, lo, hi) {#f, offsetof(xtts_quality_thresholds, f), is_int, lo, hi}
static const threshold_key threshold_keys[] = {
    TK(lead_silence_s, 0, 0, 3600),  TK(trail_silence_s, 0, 0, 3600),   TK(cut_edge_db, 0, -120, 20),
    TK(clip_fraction, 0, 0, 1),      TK(snr_db, 0, -100, 100),          TK(bandwidth_fraction, 0, 0, 1),
    TK(too_quiet_dbfs, 0, -120, 0),  TK(dc_offset, 0, 0, 1),            TK(rate_k, 0, 0.1, 1000),
    TK(rate_min_spread, 0, 0, 10),   TK(rate_min_speech_s, 0, 0, 3600), TK(rate_min_records, 1, 1, 1e9),
};
#undef TK
#define N_THRESHOLD_KEYS (sizeof threshold_keys / sizeof threshold_keys[0])

static char *trim(char *s) {
    while (*s == ' ' || *s == '\t') s++;
    char *e = s + strlen(s);
    while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r')) *--e = '\0';
    return s;
}

/* One line (NUL-terminated, comment stripped) applied to *t; seen[] marks keys given. */
static xtts_status threshold_line(char *line, const char *name, size_t lineno, xtts_quality_thresholds *t,
                                  unsigned char *seen, xtts_error *err) {
    char *hash = strchr(line, '#');
    if (hash) *hash = '\0';
    char *s = trim(line);
    if (!*s) return XTTS_OK;
    char *eq = strchr(s, '=');
    if (!eq) return xtts_error_set(err, XTTS_EUSAGE, "%s:%zu: expected 'key = value', got '%.80s'", name, lineno, s);
    *eq = '\0';
    char *key = trim(s), *val = trim(eq + 1);
    size_t k = 0;
    while (k < N_THRESHOLD_KEYS && strcmp(threshold_keys[k].key, key) != 0) k++;
    if (k == N_THRESHOLD_KEYS)
        return xtts_error_set(err, XTTS_EUSAGE, "%s:%zu: unknown key '%.80s'", name, lineno, key);
    const threshold_key *tk = &threshold_keys[k];
    if (seen[k]) return xtts_error_set(err, XTTS_EUSAGE, "%s:%zu: '%s' given twice", name, lineno, tk->key);
    seen[k] = 1;
    char *end = NULL;
    errno = 0;
    double v = *val ? strtod(val, &end) : 0;
    if (!*val || *end || errno || !isfinite(v) || (tk->is_int && v != floor(v)))
        return xtts_error_set(err, XTTS_EUSAGE, "%s:%zu: '%s': '%.80s' is not %s", name, lineno, tk->key, val,
                              tk->is_int ? "a whole number" : "a number");
    if (v < tk->lo || v > tk->hi)
        return xtts_error_set(err, XTTS_EUSAGE, "%s:%zu: '%s': %g is outside [%g, %g]", name, lineno, tk->key, v,
                              tk->lo, tk->hi);
    char *field = (char *)t + tk->offset;
    if (tk->is_int) {
        int iv = (int)v;
        memcpy(field, &iv, sizeof iv);
    } else {
        float fv = (float)v;
        memcpy(field, &fv, sizeof fv);
    }
    return XTTS_OK;
}

xtts_status xtts_quality_thresholds_parse(const char *text, size_t len, const char *name,
                                          xtts_quality_thresholds *t, xtts_error *err) {
    if (!t || (!text && len)) return xtts_error_set(err, XTTS_EUSAGE, "quality thresholds: no text or no output");
    if (!name) name = "thresholds";
    xtts_quality_thresholds work = *t;
    unsigned char seen[N_THRESHOLD_KEYS] = {0};
    char line[1024];
    size_t lineno = 0, pos = 0;
    if (len >= 3 && !memcmp(text, "\xEF\xBB\xBF", 3)) pos = 3; /* a UTF-8 byte-order mark some editors write */
    while (pos < len) {
        lineno++;
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - text) : len, n = end - pos;
        if (n >= sizeof line) return xtts_error_set(err, XTTS_EUSAGE, "%s:%zu: line longer than %zu bytes", name, lineno, sizeof line - 1);
        if (memchr(text + pos, '\0', n))
            return xtts_error_set(err, XTTS_EUSAGE, "%s:%zu: NUL byte in the line", name, lineno);
        memcpy(line, text + pos, n);
        line[n] = '\0';
        xtts_status st = threshold_line(line, name, lineno, &work, seen, err);
        if (st) return st;
        pos = end + 1;
    }
    *t = work;
    return XTTS_OK;
}

xtts_status xtts_quality_thresholds_load(const char *path, xtts_quality_thresholds *t, xtts_error *err) {
    char *text = NULL;
    size_t len = 0;
    xtts_status st = xtts_read_file(path, (size_t)1 << 20, &text, &len, err);
    if (st) return st;
    st = xtts_quality_thresholds_parse(text, len, path, t, err);
    free(text);
    return st;
}

/* ---- flagging -------------------------------------------------------------------------- */

static uint32_t clip_flags(const xtts_quality_metrics *m, const xtts_quality_thresholds *t) {
    if (m->status == XTTS_QUALITY_UNMEASURED) return 0;
    /* the mean of a few milliseconds of speech is no DC offset, nor its level a verdict */
    if (m->status == XTTS_QUALITY_TOO_SHORT) return 1u << XTTS_QFLAG_TOO_SHORT;
    uint32_t f = 0;
    if (m->clip_fraction > t->clip_fraction) f |= 1u << XTTS_QFLAG_CLIPPED;
    if (fabsf(m->dc_offset) > t->dc_offset) f |= 1u << XTTS_QFLAG_DC_OFFSET;
    if (m->lead_silence_s > t->lead_silence_s) f |= 1u << XTTS_QFLAG_LEAD_SILENCE;
    if (m->trail_silence_s > t->trail_silence_s) f |= 1u << XTTS_QFLAG_TRAIL_SILENCE;
    if (m->cut_start && m->start_edge_db >= t->cut_edge_db) f |= 1u << XTTS_QFLAG_CUT_START;
    if (m->cut_end && m->end_edge_db >= t->cut_edge_db) f |= 1u << XTTS_QFLAG_CUT_END;
    if (m->speech_s > 0 && m->snr_db < t->snr_db) f |= 1u << XTTS_QFLAG_LOW_SNR;
    /* in a clip too quiet to use, 16-bit rounding hides the high band: no bandwidth verdict */
    if (m->active_dbfs < t->too_quiet_dbfs) f |= 1u << XTTS_QFLAG_TOO_QUIET;
    else if (m->speech_s > 0 && m->bandwidth_hz < t->bandwidth_fraction * 0.5f * (float)m->sample_rate)
        f |= 1u << XTTS_QFLAG_UPSAMPLED;
    return f;
}

typedef struct {
    uint64_t h0, h1;
    int64_t index;
} hash_entry;

static int hash_entry_cmp(const void *a, const void *b) {
    const hash_entry *x = a, *y = b;
    if (x->h0 != y->h0) return x->h0 < y->h0 ? -1 : 1;
    if (x->h1 != y->h1) return x->h1 < y->h1 ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

/* dup_audio: sorted by (hash, index), each later record of a run names the run's first. */
static xtts_status flag_duplicates(const xtts_quality_metrics *m, size_t n, uint32_t *flags, int64_t *dup_of,
                                   xtts_error *err) {
    hash_entry *e = malloc((n ? n : 1) * sizeof *e);
    if (!e) return xtts_error_set(err, XTTS_ENOMEM, "quality flags: out of memory (%zu records)", n);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (m[i].status != XTTS_QUALITY_UNMEASURED) e[k++] = (hash_entry){m[i].audio_hash[0], m[i].audio_hash[1], (int64_t)i};
    qsort(e, k, sizeof *e, hash_entry_cmp);
    for (size_t a = 0; a < k;) {
        size_t b = a + 1;
        while (b < k && e[b].h0 == e[a].h0 && e[b].h1 == e[a].h1) {
            flags[e[b].index] |= 1u << XTTS_QFLAG_DUP_AUDIO;
            dup_of[e[b].index] = e[a].index;
            b++;
        }
        a = b;
    }
    free(e);
    return XTTS_OK;
}

typedef struct {
    uint32_t speaker;
    float value; /* ln(chars_per_s), then |value - median| */
    int64_t index;
} rate_entry;

static int rate_entry_cmp(const void *a, const void *b) {
    const rate_entry *x = a, *y = b;
    if (x->speaker != y->speaker) return x->speaker < y->speaker ? -1 : 1;
    if (x->value != y->value) return x->value < y->value ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

static int float_cmp(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static float median_sorted(const float *v, size_t n) {
    return n % 2 ? v[n / 2] : 0.5f * (v[n / 2 - 1] + v[n / 2]);
}

/* One speaker's run e[0..k) sorted by value: flag those further than rate_k spreads. */
static void flag_rate_run(rate_entry *e, size_t k, float *scratch, const xtts_quality_thresholds *t, uint32_t *flags) {
    if (k < (size_t)t->rate_min_records) return;
    for (size_t i = 0; i < k; i++) scratch[i] = e[i].value;
    float med = median_sorted(scratch, k);
    for (size_t i = 0; i < k; i++) scratch[i] = fabsf(e[i].value - med);
    qsort(scratch, k, sizeof *scratch, float_cmp);
    float spread = 1.4826f * median_sorted(scratch, k);
    if (spread < t->rate_min_spread) spread = t->rate_min_spread;
    for (size_t i = 0; i < k; i++)
        if (fabsf(e[i].value - med) > t->rate_k * spread) flags[e[i].index] |= 1u << XTTS_QFLAG_RATE_OUTLIER;
}

/* Flags under which the speech span, and so the rate, cannot be trusted: such a record is
 * neither judged on its rate nor counted in its speaker's median. */
#define RATE_UNTRUSTED                                                                            \
    ((1u << XTTS_QFLAG_CUT_START) | (1u << XTTS_QFLAG_CUT_END) | (1u << XTTS_QFLAG_LOW_SNR) | \
     (1u << XTTS_QFLAG_TOO_QUIET) | (1u << XTTS_QFLAG_TOO_SHORT))

static xtts_status flag_rates(const xtts_quality_metrics *m, const uint32_t *speaker, size_t n,
                              const xtts_quality_thresholds *t, uint32_t *flags, xtts_error *err) {
    rate_entry *e = malloc((n ? n : 1) * sizeof *e);
    float *scratch = malloc((n ? n : 1) * sizeof *scratch);
    if (!e || !scratch) {
        free(e);
        free(scratch);
        return xtts_error_set(err, XTTS_ENOMEM, "quality flags: out of memory (%zu records)", n);
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const xtts_quality_metrics *r = &m[i];
        if (r->status != XTTS_QUALITY_MEASURED || r->n_chars == 0 || r->speech_s < t->rate_min_speech_s ||
            !(r->chars_per_s > 0) || (flags[i] & RATE_UNTRUSTED))
            continue;
        e[k++] = (rate_entry){speaker ? speaker[i] : 0, logf(r->chars_per_s), (int64_t)i};
    }
    qsort(e, k, sizeof *e, rate_entry_cmp);
    for (size_t a = 0; a < k;) {
        size_t b = a;
        while (b < k && e[b].speaker == e[a].speaker) b++;
        flag_rate_run(e + a, b - a, scratch, t, flags);
        a = b;
    }
    free(e);
    free(scratch);
    return XTTS_OK;
}

xtts_status xtts_quality_flag_all(const xtts_quality_metrics *m, const uint32_t *speaker, size_t n,
                                  const xtts_quality_thresholds *t, uint32_t *flags_out, int64_t *dup_of_out,
                                  xtts_error *err) {
    if (n > 0 && (!m || !flags_out || !dup_of_out))
        return xtts_error_set(err, XTTS_EUSAGE, "quality flags: NULL metrics or output arrays");
    if (!t) return xtts_error_set(err, XTTS_EUSAGE, "quality flags: no thresholds");
    for (size_t i = 0; i < n; i++) {
        flags_out[i] = clip_flags(&m[i], t);
        dup_of_out[i] = -1;
    }
    xtts_status st = flag_duplicates(m, n, flags_out, dup_of_out, err);
    if (!st) st = flag_rates(m, speaker, n, t, flags_out, err);
    return st;
}

/* ---- stored form ----------------------------------------------------------------------- */

/* The floats in struct (and stored) order. */
#define N_FLOATS 16
static void float_fields(xtts_quality_metrics *m, float **f) {
    float *p[N_FLOATS] = {&m->duration_s,  &m->lead_silence_s, &m->trail_silence_s, &m->speech_s,
                          &m->start_edge_db, &m->end_edge_db, &m->peak_dbfs,      &m->rms_dbfs,
                          &m->active_dbfs, &m->noise_dbfs,     &m->clip_fraction,   &m->snr_db,
                          &m->bandwidth_hz, &m->chars_per_s,   &m->tokens_per_s,    &m->dc_offset};
    memcpy(f, p, sizeof p);
}

void xtts_quality_encode(const xtts_quality_metrics *m, uint8_t out[XTTS_QUALITY_BYTES]) {
    xtts_quality_metrics c = *m;
    float *f[N_FLOATS];
    float_fields(&c, f);
    out[0] = c.version == 1 ? 1 : XTTS_QUALITY_VERSION;
    out[1] = c.status;
    out[2] = c.cut_start;
    out[3] = c.cut_end;
    xtts_put_le32(out + 4, c.sample_rate);
    xtts_put_le32(out + 8, c.native_rate);
    xtts_put_le32(out + 12, c.n_chars);
    xtts_put_le32(out + 16, c.n_tokens);
    for (int i = 0; i < N_FLOATS; i++) {
        uint32_t bits;
        memcpy(&bits, f[i], 4);
        xtts_put_le32(out + 20 + 4 * i, bits);
    }
    for (int h = 0; h < 2; h++) {
        xtts_put_le32(out + 84 + 8 * h, (uint32_t)c.audio_hash[h]);
        xtts_put_le32(out + 88 + 8 * h, (uint32_t)(c.audio_hash[h] >> 32));
    }
    xtts_put_le32(out + 100, xtts_crc32(0, out, 100));
}

xtts_status xtts_quality_decode(const uint8_t in[XTTS_QUALITY_BYTES], xtts_quality_metrics *m, xtts_error *err) {
    memset(m, 0, sizeof *m);
    if (xtts_get_le32(in + 100) != xtts_crc32(0, in, 100))
        return xtts_error_set(err, XTTS_ECORRUPT, "quality metrics: checksum mismatch");
    if (in[0] != 1 && in[0] != XTTS_QUALITY_VERSION)
        return xtts_error_set(err, XTTS_ECORRUPT, "quality metrics: unknown version %u", in[0]);
    if (in[1] > XTTS_QUALITY_TOO_SHORT || in[2] > 1 || in[3] > 1)
        return xtts_error_set(err, XTTS_ECORRUPT, "quality metrics: bad status or cut flag");
    xtts_quality_metrics c = {0};
    c.status = in[1];
    c.version = in[0];
    c.cut_start = in[2];
    c.cut_end = in[3];
    c.sample_rate = xtts_get_le32(in + 4);
    c.native_rate = xtts_get_le32(in + 8);
    c.n_chars = xtts_get_le32(in + 12);
    c.n_tokens = xtts_get_le32(in + 16);
    float *f[N_FLOATS];
    float_fields(&c, f);
    for (int i = 0; i < N_FLOATS; i++) {
        uint32_t bits = xtts_get_le32(in + 20 + 4 * i);
        memcpy(f[i], &bits, 4);
        if (!isfinite(*f[i])) return xtts_error_set(err, XTTS_ECORRUPT, "quality metrics: non-finite value");
    }
    for (int h = 0; h < 2; h++)
        c.audio_hash[h] = xtts_get_le32(in + 84 + 8 * h) | (uint64_t)xtts_get_le32(in + 88 + 8 * h) << 32;
    *m = c;
    return XTTS_OK;
}
