/* inspect.h — what xtts-cache-inspect shows, as a library: a cache summary (manifest,
 * shards, rejects, length histograms), one record's mel as a .npy file or as a PNG
 * spectrogram picture.
 */
#ifndef XTTS_CACHE_INSPECT_H
#define XTTS_CACHE_INSPECT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cache/audit/png.h"
#include "cache/store/read/reader.h"
#include "common/xtts_common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define XTTS_HIST_BINS 12

typedef struct {
    uint64_t n, min, max, sum;
    uint64_t lo[XTTS_HIST_BINS], hi[XTTS_HIST_BINS], count[XTTS_HIST_BINS];
    int bins;
} xtts_histogram;

/* What a summary adds to what it always holds, and its form. */
#define XTTS_INSPECT_LENGTHS 0x1u /* frame and token length histograms */
#define XTTS_INSPECT_STATS 0x2u   /* (JSON) the manifest's "stats" as it is */
#define XTTS_INSPECT_JSON 0x4u    /* JSON instead of text */

/* Print the summary of a cache to f: records, hours, configuration and its hash, shards,
 * rejects, splits, speakers and languages as dir/manifest.json holds them, and with
 * XTTS_INSPECT_LENGTHS frame and token length histograms from every record's header (no
 * decompression); a record whose header cannot be read is counted ("unreadable") and named
 * (the first 20, "errors"). As text, one "key: value" line each and the histograms drawn;
 * with XTTS_INSPECT_JSON as one JSON object (indented by 2, sorted keys, a newline after it),
 * holding with XTTS_INSPECT_STATS the manifest's "stats" too. *unreadable (NULL is allowed)
 * gets the count of unreadable records (0 without XTTS_INSPECT_LENGTHS). Nothing is printed
 * on error.
 * Errors: those of xtts_manifest_load (the manifest is read again); XTTS_ENOMEM (unreadable
 * records and shards are reported in the summary). */
xtts_status xtts_inspect_print_summary(FILE *f, xtts_cache *c, unsigned flags, uint64_t *unreadable,
                                       xtts_error *err);

/* Per-channel mel mean/std of the manifest as text (one line per channel). */
void xtts_inspect_print_stats(FILE *f, const xtts_cache *c);

/* One record, as `xtts-cache-inspect --id/--index` shows it: its header fields with the
 * speaker and language names of the manifest, its shard, token ids and (version 2) texts,
 * waveform storage and trim start. text and norm may be NULL (version 1). */
typedef struct {
    uint64_t index;
    const xtts_record_header *h;
    const int32_t *tokens;          /* h->n_tokens ids */
    const char *text, *norm;
} xtts_inspect_record;

/* As text, one "key: value" line each. */
void xtts_inspect_print_record(FILE *f, const xtts_cache *c, const xtts_inspect_record *r);
/* As one JSON object (indented by 2, sorted keys) and a newline; out of memory, the newline
 * alone. */
void xtts_inspect_print_record_json(FILE *f, const xtts_cache *c, const xtts_inspect_record *r);

/* Histogram of values (equal-width bins between min and max). */
void xtts_histogram_build(const uint32_t *values, size_t n, xtts_histogram *h);
void xtts_histogram_print(FILE *f, const char *title, const xtts_histogram *h);

/* Write float32 [rows][cols] (row stride `stride` floats) as a version 1.0 .npy file,
 * C order, little-endian '<f4'. path "-" is stdout.
 * Errors: XTTS_EIO only (cannot open, write or close path). */
xtts_status xtts_npy_write_f32(const char *path, const float *data, size_t rows, size_t cols, size_t stride,
                               xtts_error *err);

/* Write n int16 mono samples at rate Hz as a 16-bit PCM WAV file (libsndfile). path "-"
 * is stdout.
 * Errors: XTTS_EIO only (libsndfile cannot open path, a short write). */
xtts_status xtts_wav_write_i16(const char *path, const int16_t *x, size_t n, int rate, xtts_error *err);

/* The record's mel (float32 [n_mels][stride], its first h->n_frames columns) as the figure of
 * xtts_png_write_figure, titled with the record's id, speaker, language, frames and seconds,
 * split and the preset, on the axes of the cache's mel configuration; with o->bare the bare
 * picture of xtts_png_write_mel.
 * Errors: those of xtts_png_write_figure and xtts_png_write_mel. */
xtts_status xtts_inspect_write_png(const char *path, const xtts_cache *c, const xtts_inspect_record *r,
                                   const float *mel, size_t stride, const xtts_png_options *o, xtts_error *err);

#ifdef __cplusplus
}
#endif
#endif
