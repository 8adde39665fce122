/* report.c — the quality report's data and its text forms (report.h): every record's stored
 * metrics and speaker read once into arrays, flagged with the thresholds, summed per flag and
 * per speaker; the summary, the TSV and the JSON written from there. The HTML page is
 * report_html.c.
 */
#include "cache/audit/report.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cache/store/quality_store.h"
#include "cache/audit/report_internal.h"

void xtts_report_options_defaults(xtts_report_options *o) {
    memset(o, 0, sizeof *o);
    xtts_quality_thresholds_defaults(&o->thresholds);
    o->worst_per_flag = 20;
    o->audio_budget_bytes = (size_t)16 << 20;
}

void xtts_report_close(xtts_report *r) {
    if (!r) return;
    xtts_cache_reader_delete(r->reader);
    xtts_cache_close(r->cache);
    free(r->m);
    free(r->speaker);
    free(r->flags);
    free(r->dup_of);
    free(r->spk);
    free(r);
}

const char *xtts_report_speaker_name(const xtts_report *r, uint32_t s, char *buf, size_t cap) {
    const xtts_manifest_info *mi = xtts_cache_manifest(r->cache);
    if (s < mi->n_speakers && mi->speakers[s]) return mi->speakers[s]; /* whole: a copy cut it inside a character */
    snprintf(buf, cap, "speaker %u", s);
    return buf;
}

xtts_status xtts_report_record_id(xtts_report *r, uint64_t i, char *buf, size_t cap, xtts_error *err) {
    xtts_record_header h;
    xtts_status st = xtts_cache_reader_header(r->reader, i, &h, err);
    snprintf(buf, cap, "%s", st ? "?" : h.id);
    return st;
}

double xtts_report_severity(const xtts_report *r, int f, uint64_t i) {
    const xtts_quality_metrics *m = &r->m[i];
    const xtts_report_speaker *s = r->speaker[i] < r->n_speakers ? &r->spk[r->speaker[i]] : NULL;
    switch (f) {
    case XTTS_QFLAG_LEAD_SILENCE: return m->lead_silence_s;
    case XTTS_QFLAG_TRAIL_SILENCE: return m->trail_silence_s;
    case XTTS_QFLAG_CUT_START: return m->start_edge_db;
    case XTTS_QFLAG_CUT_END: return m->end_edge_db;
    case XTTS_QFLAG_CLIPPED: return m->clip_fraction;
    case XTTS_QFLAG_LOW_SNR: return -m->snr_db;
    case XTTS_QFLAG_UPSAMPLED: return -m->bandwidth_hz;
    case XTTS_QFLAG_TOO_QUIET: return -m->active_dbfs;
    case XTTS_QFLAG_DUP_AUDIO: return m->duration_s;
    case XTTS_QFLAG_RATE_OUTLIER:
        return s && s->rate_median > 0 && m->chars_per_s > 0 ? fabs(log(m->chars_per_s / s->rate_median)) : 0;
    case XTTS_QFLAG_TOO_SHORT: return -m->duration_s;
    case XTTS_QFLAG_DC_OFFSET: return fabs(m->dc_offset);
    default: return 0;
    }
}

/* ---- loading ---------------------------------------------------------------------------- */

/* Every record's speaker (from the lengths index: no record is decoded). */
static xtts_status load_speakers(xtts_report *r, xtts_error *err) {
    xtts_lengths *l = malloc((r->n ? r->n : 1) * sizeof *l);
    if (!l) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    xtts_status st = xtts_cache_lengths(r->reader, l, err);
    for (uint64_t i = 0; !st && i < r->n; i++) {
        r->speaker[i] = l[i].speaker_id;
        if ((size_t)l[i].speaker_id + 1 > r->n_speakers) r->n_speakers = (size_t)l[i].speaker_id + 1;
    }
    free(l);
    size_t listed = xtts_cache_manifest(r->cache)->n_speakers;
    if (listed > r->n_speakers) r->n_speakers = listed;
    return st;
}

static xtts_status load_metrics(xtts_report *r, xtts_error *err) {
    xtts_progress prog;
    xtts_progress_init(&prog, "xtts-cache-report", r->opt.progress);
    for (uint64_t i = 0; i < r->n; i++) {
        xtts_status st = xtts_cache_reader_metrics(r->reader, i, &r->m[i], err);
        if (st) return st;
        if ((i & 4095) == 0) xtts_progress_update(&prog, i, r->n, NULL);
    }
    xtts_progress_finish(&prog, r->n, r->n, NULL);
    return XTTS_OK;
}

/* Per speaker: the 10th, 50th and 90th percentile of the speaking rate (records judged on
 * rate: measured, with text, at least rate_min_speech_s of speech) and the median SNR and level
 * of the measured records, from (speaker, value) pairs sorted together. */
typedef struct {
    uint32_t s;
    double v;
} spk_value;

static int cmp_spk_value(const void *a, const void *b) {
    const spk_value *x = a, *y = b;
    if (x->s != y->s) return x->s < y->s ? -1 : 1;
    return (x->v > y->v) - (x->v < y->v);
}

static double pair_quantile(const spk_value *p, size_t n, double q) {
    double pos = q * (double)(n - 1);
    size_t i = (size_t)pos;
    if (i + 1 >= n) return p[n - 1].v;
    return p[i].v + (pos - (double)i) * (p[i + 1].v - p[i].v);
}

static xtts_status speaker_quantiles(xtts_report *r, int what, spk_value *p, xtts_error *err) {
    (void)err;
    size_t n = 0;
    for (uint64_t i = 0; i < r->n; i++) {
        const xtts_quality_metrics *m = &r->m[i];
        if (m->status != XTTS_QUALITY_MEASURED || r->speaker[i] >= r->n_speakers) continue;
        if (what == 0 && (m->n_chars == 0 || m->speech_s < r->opt.thresholds.rate_min_speech_s || !(m->chars_per_s > 0)))
            continue;
        p[n++] = (spk_value){r->speaker[i], what == 0 ? m->chars_per_s : what == 1 ? m->snr_db : m->active_dbfs};
    }
    qsort(p, n, sizeof *p, cmp_spk_value);
    for (size_t a = 0, b; a < n; a = b) {
        for (b = a; b < n && p[b].s == p[a].s; b++) {}
        xtts_report_speaker *s = &r->spk[p[a].s];
        if (what == 0) {
            s->rate_p10 = pair_quantile(p + a, b - a, 0.1);
            s->rate_median = pair_quantile(p + a, b - a, 0.5);
            s->rate_p90 = pair_quantile(p + a, b - a, 0.9);
            s->rate_n = b - a;
        } else if (what == 1) {
            s->snr_median = pair_quantile(p + a, b - a, 0.5);
        } else {
            s->level_median = pair_quantile(p + a, b - a, 0.5);
        }
    }
    return XTTS_OK;
}

/* The sums per flag and per speaker. */
static xtts_status aggregate(xtts_report *r, xtts_error *err) {
    if (!(r->spk = calloc(r->n_speakers ? r->n_speakers : 1, sizeof *r->spk)))
        return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    for (size_t s = 0; s < r->n_speakers; s++)
        r->spk[s].rate_p10 = r->spk[s].rate_median = r->spk[s].rate_p90 = r->spk[s].snr_median =
            r->spk[s].level_median = NAN;
    for (uint64_t i = 0; i < r->n; i++) {
        const xtts_quality_metrics *m = &r->m[i];
        double sec = isfinite(m->duration_s) ? m->duration_s : 0;
        xtts_report_speaker *s = &r->spk[r->speaker[i]];
        r->seconds += sec;
        s->records++;
        s->seconds += sec;
        r->measured += m->status == XTTS_QUALITY_MEASURED;
        r->too_short += m->status == XTTS_QUALITY_TOO_SHORT;
        if (!r->flags[i]) continue;
        r->flagged++;
        r->flagged_seconds += sec;
        s->flagged++;
        s->flagged_seconds += sec;
        for (int f = 0; f < XTTS_QUALITY_N_FLAGS; f++)
            if (r->flags[i] & (1u << f)) {
                r->flag_records[f]++;
                r->flag_seconds[f] += sec;
                s->flag_records[f]++;
            }
    }
    spk_value *p = malloc((r->n ? r->n : 1) * sizeof *p);
    if (!p) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    xtts_status st = XTTS_OK;
    for (int what = 0; what < 3 && !st; what++) st = speaker_quantiles(r, what, p, err);
    free(p);
    return st;
}

xtts_status xtts_report_open(const char *dir, const xtts_report_options *o, xtts_report **out, xtts_error *err) {
    *out = NULL;
    xtts_report *r = calloc(1, sizeof *r);
    if (!r) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    if (o) r->opt = *o;
    else xtts_report_options_defaults(&r->opt);
    xtts_status st = xtts_cache_open(dir, &r->cache, err);
    if (!st) st = xtts_cache_reader_new(r->cache, &r->reader, err);
    if (!st && !xtts_cache_has_metrics(r->cache)) {
        char hint[XTTS_ERRMSG_MAX];
        xtts_cache_metrics_hint(dir, hint, sizeof hint);
        st = xtts_error_set(err, XTTS_ENOTFOUND, "%s", hint);
    }
    if (!st) {
        r->n = xtts_cache_count(r->cache);
        size_t n = r->n ? r->n : 1;
        r->m = calloc(n, sizeof *r->m);
        r->speaker = calloc(n, sizeof *r->speaker);
        r->flags = calloc(n, sizeof *r->flags);
        r->dup_of = calloc(n, sizeof *r->dup_of);
        if (!r->m || !r->speaker || !r->flags || !r->dup_of) st = xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    }
    if (!st) st = load_speakers(r, err);
    if (!st) st = load_metrics(r, err);
    if (!st) st = xtts_quality_flag_all(r->m, r->speaker, r->n, &r->opt.thresholds, r->flags, r->dup_of, err);
    if (!st) st = aggregate(r, err);
    if (st) {
        xtts_report_close(r);
        return st;
    }
    *out = r;
    return XTTS_OK;
}

/* ---- summary ------------------------------------------------------------------------------- */

static double pct(double a, double b) { return b > 0 ? 100.0 * a / b : 0.0; }

static void summary_speakers(const xtts_report *r, FILE *f) {
    enum { SHOWN = 50 };
    fprintf(f, "\n%-24s %9s %9s %9s %9s %9s\n", "speaker", "records", "hours", "flagged", "flagged_h", "kept_h");
    size_t shown = 0;
    for (size_t s = 0; s < r->n_speakers && shown < SHOWN; s++) {
        const xtts_report_speaker *p = &r->spk[s];
        if (!p->records) continue;
        char name[64];
        fprintf(f, "%-24s %9llu %9.3f %9llu %9.3f %9.3f\n", xtts_report_speaker_name(r, (uint32_t)s, name, sizeof name),
                (unsigned long long)p->records, p->seconds / 3600,
                (unsigned long long)p->flagged, p->flagged_seconds / 3600, (p->seconds - p->flagged_seconds) / 3600);
        shown++;
    }
    size_t with = 0;
    for (size_t s = 0; s < r->n_speakers; s++) with += r->spk[s].records > 0;
    if (with > shown) fprintf(f, "... %zu more speakers (the JSON lists them all)\n", with - shown);
}

/* What a flag on most records says of the dataset (XTTS_REPORT_DATASET_SHARE), by flag. */
static const char *const DATASET_NOTES[XTTS_QUALITY_N_FLAGS] = {
    [XTTS_QFLAG_LEAD_SILENCE] = "the dataset leaves long silences before the speech",
    [XTTS_QFLAG_TRAIL_SILENCE] = "the dataset leaves long silences after the speech",
    [XTTS_QFLAG_CUT_START] = "the dataset is trimmed tightly at the start (or cut there): look at a few before "
                             "dropping them",
    [XTTS_QFLAG_CUT_END] = "the dataset is trimmed tightly at the end (or cut there): look at a few before dropping them",
    [XTTS_QFLAG_CLIPPED] = "the dataset was recorded or normalized too hot",
    [XTTS_QFLAG_LOW_SNR] = "the dataset is noisy throughout",
    [XTTS_QFLAG_UPSAMPLED] = "the dataset's sources have a lower rate than the cache (build at their rate)",
    [XTTS_QFLAG_TOO_QUIET] = "the dataset is recorded quietly throughout",
    [XTTS_QFLAG_DUP_AUDIO] = "the dataset repeats its audio",
    [XTTS_QFLAG_RATE_OUTLIER] = "the speakers' rates vary more than the rule expects",
    [XTTS_QFLAG_TOO_SHORT] = "the dataset's clips are too short to measure",
    [XTTS_QFLAG_DC_OFFSET] = "the dataset's recording chain leaves a DC offset",
};

const char *xtts_report_dataset_note(const xtts_report *r, int f) {
    if (f < 0 || f >= XTTS_QUALITY_N_FLAGS || !r->n) return NULL;
    if ((double)r->flag_records[f] <= XTTS_REPORT_DATASET_SHARE * (double)r->n) return NULL;
    return DATASET_NOTES[f] ? DATASET_NOTES[f] : "a property of the dataset";
}

/* "cut_start on 70 % of records: the dataset is trimmed tightly at the start ..." lines. */
static void summary_dataset_notes(const xtts_report *r, FILE *f) {
    int any = 0;
    for (int fl = 0; fl < XTTS_QUALITY_N_FLAGS; fl++) {
        const char *note = xtts_report_dataset_note(r, fl);
        if (!note) continue;
        if (!any++) fputs("\nof the dataset as a whole:\n", f);
        fprintf(f, "%s on %.0f %% of records: %s\n", xtts_quality_flag_name(fl), pct((double)r->flag_records[fl], (double)r->n),
                note);
    }
}

xtts_status xtts_report_summary(xtts_report *r, FILE *f, xtts_error *err) {
    fprintf(f, "cache: %s\n", xtts_cache_dir(r->cache));
    fprintf(f, "records: %llu (%.3f h), %llu measured, %llu too short to measure\n", (unsigned long long)r->n,
            r->seconds / 3600, (unsigned long long)r->measured, (unsigned long long)r->too_short);
    fprintf(f, "flagged: %llu records (%.3f h, %.1f%% of the hours)\n", (unsigned long long)r->flagged,
            r->flagged_seconds / 3600, pct(r->flagged_seconds, r->seconds));
    fprintf(f, "kept if the flagged records are dropped: %llu records, %.3f h\n", (unsigned long long)(r->n - r->flagged),
            (r->seconds - r->flagged_seconds) / 3600);
    fprintf(f, "\n%-16s %9s %9s %8s\n", "flag", "records", "hours", "share");
    for (int fl = 0; fl < XTTS_QUALITY_N_FLAGS; fl++)
        fprintf(f, "%-16s %9llu %9.3f %7.1f%%\n", xtts_quality_flag_name(fl), (unsigned long long)r->flag_records[fl],
                r->flag_seconds[fl] / 3600, pct((double)r->flag_records[fl], (double)r->n));
    summary_dataset_notes(r, f);
    summary_speakers(r, f);
    if (fflush(f) || ferror(f)) return xtts_error_set(err, XTTS_EIO, "summary: write failed");
    return XTTS_OK;
}

/* ---- TSV and JSON -------------------------------------------------------------------------- */

/* The metrics of the JSON records, by name (those of xtts_quality_tsv_header), and whether a
 * record too short to measure has the value (null in the JSON when not). */
typedef struct {
    const char *name;
    int measured_only;
} column;

static const column COLUMNS[] = {
    {"duration_s", 0},   {"lead_silence_s", 1}, {"trail_silence_s", 1}, {"speech_s", 1},   {"cut_start", 1},
    {"cut_end", 1},      {"start_edge_db", 1},  {"end_edge_db", 1},     {"peak_dbfs", 0},  {"rms_dbfs", 0},
    {"active_dbfs", 1},  {"noise_dbfs", 1},     {"clip_fraction", 0},   {"snr_db", 1},     {"bandwidth_hz", 1},
    {"sample_rate", 0},  {"native_rate", 0},    {"n_chars", 0},         {"n_tokens", 0},   {"chars_per_s", 1},
    {"tokens_per_s", 1}, {"dc_offset", 0},
};
#define N_COLUMNS (sizeof COLUMNS / sizeof *COLUMNS)

static double column_value(const xtts_quality_metrics *m, size_t c) {
    if (COLUMNS[c].measured_only && m->status != XTTS_QUALITY_MEASURED) return NAN;
    const double v[] = {m->duration_s,  m->lead_silence_s, m->trail_silence_s, m->speech_s,    m->cut_start,
                        m->cut_end,     m->start_edge_db,  m->end_edge_db,     m->peak_dbfs,   m->rms_dbfs,
                        m->active_dbfs, m->noise_dbfs,     m->clip_fraction,   m->snr_db,      m->bandwidth_hz,
                        m->sample_rate, m->native_rate ? (double)m->native_rate : NAN, m->n_chars, m->n_tokens,
                        m->chars_per_s, m->tokens_per_s,   m->dc_offset};
    return v[c];
}

static const char *status_name(const xtts_quality_metrics *m) {
    return m->status == XTTS_QUALITY_MEASURED ? "measured" : m->status == XTTS_QUALITY_TOO_SHORT ? "too_short" : "unmeasured";
}

xtts_status xtts_report_tsv(xtts_report *r, FILE *f, xtts_error *err) {
    fprintf(f, "id\tflags\tdup_of\tspeaker\t%s\n", xtts_quality_tsv_header());
    for (uint64_t i = 0; i < r->n; i++) {
        char id[XTTS_RECORD_MAX_ID + 1], dup[XTTS_RECORD_MAX_ID + 1] = "-", spk[256], flags[256], fields[1024];
        xtts_status st = xtts_report_record_id(r, i, id, sizeof id, err);
        if (!st && r->dup_of[i] >= 0) st = xtts_report_record_id(r, (uint64_t)r->dup_of[i], dup, sizeof dup, err);
        if (st) return st;
        xtts_quality_flags_format(r->flags[i], flags, sizeof flags);
        xtts_quality_tsv_fields(&r->m[i], fields, sizeof fields);
        fprintf(f, "%s\t%s\t%s\t%s\t%s\n", id, flags, dup, xtts_report_speaker_name(r, r->speaker[i], spk, sizeof spk),
                fields);
        if (ferror(f)) break;
    }
    if (fflush(f) || ferror(f)) return xtts_error_set(err, XTTS_EIO, "TSV: write failed");
    return XTTS_OK;
}

static json_t *num_or_null(double v) { return isfinite(v) ? json_real(v) : json_null(); }

/* Everything but the records, as one object. */
static json_t *summary_json(const xtts_report *r) {
    json_t *o = json_object(), *fl = json_object(), *sp = json_array(), *th = json_object();
    const xtts_quality_thresholds *t = &r->opt.thresholds;
    json_object_set_new(o, "cache", json_string(xtts_cache_dir(r->cache)));
    json_object_set_new(o, "records", json_integer((json_int_t)r->n));
    json_object_set_new(o, "hours", json_real(r->seconds / 3600));
    json_object_set_new(o, "measured", json_integer((json_int_t)r->measured));
    json_object_set_new(o, "too_short", json_integer((json_int_t)r->too_short));
    json_object_set_new(o, "flagged_records", json_integer((json_int_t)r->flagged));
    json_object_set_new(o, "flagged_hours", json_real(r->flagged_seconds / 3600));
    json_object_set_new(o, "kept_records", json_integer((json_int_t)(r->n - r->flagged)));
    json_object_set_new(o, "kept_hours", json_real((r->seconds - r->flagged_seconds) / 3600));
    for (int f = 0; f < XTTS_QUALITY_N_FLAGS; f++)
        json_object_set_new(fl, xtts_quality_flag_name(f), json_pack("{s:I, s:f}", "records", (json_int_t)r->flag_records[f],
                                                                       "hours", r->flag_seconds[f] / 3600));
    json_object_set_new(o, "flags", fl);
    json_t *notes = json_array();
    for (int f = 0; f < XTTS_QUALITY_N_FLAGS; f++) {
        const char *note = xtts_report_dataset_note(r, f);
        if (note)
            json_array_append_new(notes, json_pack("{s:s, s:f, s:s}", "flag", xtts_quality_flag_name(f), "share",
                                                   (double)r->flag_records[f] / (double)r->n, "note", note));
    }
    json_object_set_new(o, "dataset_notes", notes);
    for (size_t s = 0; s < r->n_speakers; s++) {
        const xtts_report_speaker *p = &r->spk[s];
        char name[256];
        json_t *j = json_pack("{s:s, s:I, s:f, s:I, s:f, s:f}", "speaker", xtts_report_speaker_name(r, (uint32_t)s, name, sizeof name),
                              "records", (json_int_t)p->records, "hours", p->seconds / 3600, "flagged_records",
                              (json_int_t)p->flagged, "flagged_hours", p->flagged_seconds / 3600, "kept_hours",
                              (p->seconds - p->flagged_seconds) / 3600);
        if (!j) continue;
        json_object_set_new(j, "median_chars_per_s", num_or_null(p->rate_median));
        json_object_set_new(j, "median_snr_db", num_or_null(p->snr_median));
        json_object_set_new(j, "median_active_dbfs", num_or_null(p->level_median));
        json_array_append_new(sp, j);
    }
    json_object_set_new(o, "speakers", sp);
    json_object_set_new(th, "lead_silence_s", json_real(t->lead_silence_s));
    json_object_set_new(th, "trail_silence_s", json_real(t->trail_silence_s));
    json_object_set_new(th, "cut_edge_db", json_real(t->cut_edge_db));
    json_object_set_new(th, "clip_fraction", json_real(t->clip_fraction));
    json_object_set_new(th, "snr_db", json_real(t->snr_db));
    json_object_set_new(th, "bandwidth_fraction", json_real(t->bandwidth_fraction));
    json_object_set_new(th, "too_quiet_dbfs", json_real(t->too_quiet_dbfs));
    json_object_set_new(th, "dc_offset", json_real(t->dc_offset));
    json_object_set_new(th, "rate_k", json_real(t->rate_k));
    json_object_set_new(o, "thresholds", th);
    return o;
}

/* One record as a JSON object. */
static json_t *record_json(xtts_report *r, uint64_t i, const char *id, const char *dup) {
    const xtts_quality_metrics *m = &r->m[i];
    json_t *fl = json_array();
    for (int f = 0; f < XTTS_QUALITY_N_FLAGS; f++)
        if (r->flags[i] & (1u << f)) json_array_append_new(fl, json_string(xtts_quality_flag_name(f)));
    char spk[256], hash[40];
    snprintf(hash, sizeof hash, "%016llx%016llx", (unsigned long long)m->audio_hash[0], (unsigned long long)m->audio_hash[1]);
    json_t *o = json_pack("{s:s, s:o, s:s, s:s, s:s}", "id", id, "flags", fl, "speaker",
                          xtts_report_speaker_name(r, r->speaker[i], spk, sizeof spk), "status", status_name(m),
                          "audio_hash", hash);
    if (!o) return NULL;
    json_object_set_new(o, "dup_of", dup ? json_string(dup) : json_null());
    for (size_t c = 0; c < N_COLUMNS; c++) json_object_set_new(o, COLUMNS[c].name, num_or_null(column_value(m, c)));
    return o;
}

xtts_status xtts_report_json(xtts_report *r, FILE *f, xtts_error *err) {
    json_t *s = summary_json(r);
    char *text = s ? json_dumps(s, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
    json_decref(s);
    if (!text) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    /* the summary object, reopened for the records, which are written one at a time */
    size_t len = strlen(text);
    while (len && text[len - 1] != '}') len--;
    if (len) len--;
    while (len && (text[len - 1] == '\n' || text[len - 1] == ' ')) len--;
    fprintf(f, "%.*s,\n  \"per_record\": [", (int)len, text);
    free(text);
    for (uint64_t i = 0; i < r->n; i++) {
        char id[XTTS_RECORD_MAX_ID + 1], dup[XTTS_RECORD_MAX_ID + 1];
        xtts_status st = xtts_report_record_id(r, i, id, sizeof id, err);
        if (!st && r->dup_of[i] >= 0) st = xtts_report_record_id(r, (uint64_t)r->dup_of[i], dup, sizeof dup, err);
        if (st) return st;
        json_t *o = record_json(r, i, id, r->dup_of[i] >= 0 ? dup : NULL);
        char *line = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
        json_decref(o);
        if (!line) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
        fprintf(f, "%s\n    %s", i ? "," : "", line);
        free(line);
        if (ferror(f)) break;
    }
    fputs("\n  ]\n}\n", f);
    if (fflush(f) || ferror(f)) return xtts_error_set(err, XTTS_EIO, "JSON: write failed");
    return XTTS_OK;
}
