/* report_internal.h — what the files of the quality report share (report.c, report_html.c,
 * report_svg.c). Not installed. */
#ifndef XTTS_CACHE_REPORT_INTERNAL_H
#define XTTS_CACHE_REPORT_INTERNAL_H

#include <stdint.h>
#include <stdio.h>

#include "cache/store/read/reader.h"
#include "cache/audit/report.h"
#include "formats/quality_flags.h"

/* Per speaker: counts, and the quantiles the page draws. */
typedef struct {
    uint64_t records, flagged;
    double seconds, flagged_seconds;
    uint64_t flag_records[XTTS_QUALITY_N_FLAGS];
    double rate_p10, rate_median, rate_p90; /* chars per second of the measured records */
    double snr_median, level_median;        /* snr_db, active_dbfs */
    size_t rate_n;
} xtts_report_speaker;

struct xtts_report {
    xtts_report_options opt;
    xtts_cache *cache;
    xtts_cache_reader *reader;
    uint64_t n;
    xtts_quality_metrics *m; /* [n] */
    uint32_t *speaker;       /* [n] */
    uint32_t *flags;         /* [n] */
    int64_t *dup_of;         /* [n] */
    size_t n_speakers;
    xtts_report_speaker *spk; /* [n_speakers] */
    uint64_t measured, too_short, flagged;
    double seconds, flagged_seconds;
    uint64_t flag_records[XTTS_QUALITY_N_FLAGS];
    double flag_seconds[XTTS_QUALITY_N_FLAGS];
};

/* Name of speaker id s: the manifest's, whole (borrowed until the report is freed), or
 * "speaker N" past its table's end, written into buf. */
const char *xtts_report_speaker_name(const xtts_report *r, uint32_t s, char *buf, size_t cap);
/* When flag f is on more than XTTS_REPORT_DATASET_SHARE of the records it says something of
 * the dataset rather than of single clips: what, in a few words ("the dataset is trimmed
 * tightly at the start"); NULL when f is on fewer records. */
#define XTTS_REPORT_DATASET_SHARE 0.5
const char *xtts_report_dataset_note(const xtts_report *r, int f);
/* How bad record i is for flag f (larger is worse), to pick the worst records per flag. */
double xtts_report_severity(const xtts_report *r, int f, uint64_t i);
/* The id of record i into buf ("?" when its header cannot be read). */
xtts_status xtts_report_record_id(xtts_report *r, uint64_t i, char *buf, size_t cap, xtts_error *err);

/* ---- pieces of the page (report_svg.c) ---- */
void xtts_html_escape(FILE *f, const char *s);
void xtts_base64_write(FILE *f, const uint8_t *p, size_t n);
/* mel float32 [n_mels][stride] (first n_frames) as a w x h PNG data: URI (magma colours).
 * Errors: XTTS_EINPUT (empty), XTTS_ENOMEM, XTTS_EIO. */
xtts_status xtts_report_png_data_uri(FILE *f, const float *mel, size_t n_mels, size_t n_frames, size_t stride,
                                     size_t w, size_t h, xtts_error *err);
/* n int16 samples at rate as a 16-bit mono WAV data: URI (nothing when out of memory). */
void xtts_report_wav_data_uri(FILE *f, const int16_t *x, size_t n, int rate);
void xtts_report_sort(double *v, size_t n);
/* Linear-interpolated quantile q of sorted[0..n); NaN for n 0. */
double xtts_report_quantile(const double *sorted, size_t n, double q);
/* A histogram of v[0..n) (sorted in place) as an inline SVG figure; mark (when finite) a
 * threshold line labelled mark_label. */
void xtts_svg_histogram(FILE *f, const char *title, const char *unit, double *v, size_t n, double mark,
                        const char *mark_label);
typedef struct {
    const char *name;
    double p10, median, p90;
    size_t n;
} xtts_report_strip;
/* One row per group: the 10th..90th percentile range and the median. */
void xtts_svg_strips(FILE *f, const char *title, const char *unit, const xtts_report_strip *s, size_t n);

#endif
