/* report.h — the dataset quality report of xtts-cache-report, as a library: the records'
 * stored quality metrics (cache/store/quality_store.h) flagged against thresholds
 * (kernels/quality.h xtts_quality_flag_all), summed per flag and per speaker, and written as
 * a text summary, a TSV (one line per record, what `--exclude` of xtts-tokenize and
 * xtts-melcache reads), JSON, and one self-contained HTML page.
 *
 * Memory: the metrics, speaker, flags and duplicate index of every record (about 130 bytes a
 * record), never the records themselves; a record is read again (header, mel, waveform) only
 * for what a line or a picture shows.
 */
#ifndef XTTS_CACHE_REPORT_H
#define XTTS_CACHE_REPORT_H

#include <stdio.h>

#include "common/xtts_common.h"
#include "kernels/quality.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    xtts_quality_thresholds thresholds; /* what the flags are decided with */
    size_t worst_per_flag;              /* records the HTML page shows per flag (default 20) */
    size_t audio_budget_bytes;          /* waveform bytes the page embeds in all (default 16 MiB) */
    int progress;                       /* a progress line on stderr even when it is no terminal */
} xtts_report_options;

typedef struct xtts_report xtts_report;

void xtts_report_options_defaults(xtts_report_options *o);

/* Open the cache in dir, read every record's metrics and speaker, flag them.
 * Errors: those of xtts_cache_open; XTTS_ENOTFOUND for a cache without metrics (the message
 * says how to add them: xtts_cache_metrics_hint); XTTS_ECORRUPT naming the record whose
 * metrics are missing or damaged; those of reads (cache/store/read/reader.h); XTTS_ENOMEM. */
xtts_status xtts_report_open(const char *dir, const xtts_report_options *o, xtts_report **out, xtts_error *err);
/* NULL is allowed. */
void xtts_report_close(xtts_report *r);

/* Records and hours per flag and per speaker, and what is left when the flagged records are
 * dropped, as text. Errors: XTTS_EIO (a failed write). */
xtts_status xtts_report_summary(xtts_report *r, FILE *f, xtts_error *err);

/* A header line, then one line per record in index order: id, flags (names joined by ',' or
 * '-'), the id of the earlier record of the same audio ('-' when none), speaker, then the
 * metrics as xtts_quality_tsv_fields writes them (kernels/quality.h); never NaN.
 * Errors: XTTS_EIO, those of reads (a record's header). */
xtts_status xtts_report_tsv(xtts_report *r, FILE *f, xtts_error *err);

/* The summary and every record as one JSON object (null for a value a record has not).
 * Errors: XTTS_EIO, XTTS_ENOMEM, those of reads. */
xtts_status xtts_report_json(xtts_report *r, FILE *f, xtts_error *err);

/* One self-contained HTML page (no network): the summary, distributions as inline SVG, a
 * per-speaker table, and each flag's worst records with a mel picture and, when the cache
 * stores the waveform, an audio player (both as data: URIs).
 * Errors: XTTS_EIO, XTTS_ENOMEM, those of reads. */
xtts_status xtts_report_html(xtts_report *r, FILE *f, xtts_error *err);

#ifdef __cplusplus
}
#endif
#endif
