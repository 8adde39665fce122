/* quality_flags.h — the decisions over stored quality metrics (formats/quality_flags.c): the
 * flag vocabulary of the dataset quality report, the thresholds that turn metrics into flags,
 * the flagging over all records, and the fixed byte layout the cache stores the metrics in
 * (docs/quality.md). The metrics and their measurement are kernels/quality.h's.
 */
#ifndef XTTS_QUALITY_FLAGS_H
#define XTTS_QUALITY_FLAGS_H

#include <stddef.h>
#include <stdint.h>

#include "common/xtts_common.h"
#include "kernels/quality.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- flags ----------------------------------------------------------------------------- */

/* Flag numbers; a record's flags are the bitmask of 1u << flag. Names (xtts_quality_flag_name)
 * are the report's fixed vocabulary. */
typedef enum {
    XTTS_QFLAG_LEAD_SILENCE = 0,  /* lead_silence_s above the threshold */
    XTTS_QFLAG_TRAIL_SILENCE = 1, /* trail_silence_s above the threshold */
    XTTS_QFLAG_CUT_START = 2,     /* speech at near speech level in the first 2.5 ms (speech band) */
    XTTS_QFLAG_CUT_END = 3,       /* speech at near speech level in the last 2.5 ms (speech band) */
    XTTS_QFLAG_CLIPPED = 4,       /* clip_fraction above the threshold */
    XTTS_QFLAG_LOW_SNR = 5,       /* snr_db below the threshold */
    XTTS_QFLAG_UPSAMPLED = 6,     /* bandwidth well below the Nyquist frequency of the cache */
    XTTS_QFLAG_TOO_QUIET = 7,     /* active_dbfs below the threshold */
    XTTS_QFLAG_DUP_AUDIO = 8,     /* same samples as an earlier record (dup_of names it) */
    XTTS_QFLAG_RATE_OUTLIER = 9,  /* chars per second far from the speaker's own median */
    XTTS_QFLAG_TOO_SHORT = 10,    /* too short to measure */
    XTTS_QFLAG_DC_OFFSET = 11,    /* |dc_offset| above the threshold */
    XTTS_QUALITY_N_FLAGS = 12
} xtts_quality_flag;

/* The name of flag ("lead_silence", ...), NULL when out of range. */
const char *xtts_quality_flag_name(int flag);
/* The flag number of a name, -1 when it is none. */
int xtts_quality_flag_parse(const char *name);
/* The flags of mask as names joined by ',' in flag order, or "-" for none, into out (cap
 * bytes, NUL-terminated). Returns the length, or the length it needed when >= cap. */
size_t xtts_quality_flags_format(uint32_t mask, char *out, size_t cap);

/* The metrics as TSV fields, for reports: the column names (tab-separated, no newline) and
 * one record's values in the same order (numbers in C locale, fixed decimals; no newline)
 * into out (cap bytes, NUL-terminated). Returns the length, or the length it needed when
 * >= cap. Columns (xtts_quality_tsv_header): status by name (measured, too_short,
 * unmeasured), the 16 floats in struct order, cut_start, cut_end, sample_rate, native_rate,
 * n_chars, n_tokens, the hash as 32 hex digits. */
const char *xtts_quality_tsv_header(void);
size_t xtts_quality_tsv_fields(const xtts_quality_metrics *m, char *out, size_t cap);

/* ---- thresholds ------------------------------------------------------------------------ */

/* Each field is also a key of the thresholds file (same name); docs/quality.md gives each
 * default's reason. */
typedef struct {
    float lead_silence_s;    /* lead_silence above: 1.0 s */
    float trail_silence_s;   /* trail_silence above: 1.0 s */
    float cut_edge_db;       /* cut_*: edge speech at or above the speech level - this many dB: -15 */
    float clip_fraction;     /* clipped above: 0.001 (0.1 % of samples at full scale) */
    float snr_db;            /* low_snr below: 15 dB */
    float bandwidth_fraction; /* upsampled when bandwidth < this x the cache's Nyquist: 0.8 */
    float too_quiet_dbfs;    /* too_quiet when active_dbfs below: -40 dBFS */
    float dc_offset;         /* dc_offset when |dc_offset| above: 0.02 */
    float rate_k;            /* rate_outlier when |ln(rate / median)| > rate_k x spread: 4 */
    float rate_min_spread;   /* the spread (1.4826 MAD of ln rate) is at least this: 0.08 */
    float rate_min_speech_s; /* records with less speech are not judged on rate: 0.5 s */
    int rate_min_records;    /* speakers with fewer judged records are not judged: 8 */
} xtts_quality_thresholds;

void xtts_quality_thresholds_defaults(xtts_quality_thresholds *t);

/* Apply a `key = value` text (one per line; '#' starts a comment; blank lines ignored) over
 * *t (fill it with the defaults first). name is what messages call the text (a file name).
 * Errors: XTTS_EUSAGE "NAME:LINE: ..." for an unknown key, a repeated key, a line without
 * '=', a value that is not a number or is out of the key's range. *t is unchanged on error. */
xtts_status xtts_quality_thresholds_parse(const char *text, size_t len, const char *name,
                                          xtts_quality_thresholds *t, xtts_error *err);
/* The same from a file (at most 1 MiB).
 * Errors: XTTS_EUSAGE as above, and those of xtts_read_file (XTTS_ENOTFOUND, XTTS_EIO, ...). */
xtts_status xtts_quality_thresholds_load(const char *path, xtts_quality_thresholds *t, xtts_error *err);

/* ---- flagging over all records --------------------------------------------------------- */

/* Flag n records in input order: m[i] the metrics, speaker[i] the speaker id (NULL: all one
 * speaker). flags_out[i] gets the bitmask; dup_of_out[i] the index of the earliest record
 * with the same audio hash when record i carries dup_audio, else -1 (the earliest record
 * itself is not flagged). A record whose status is UNMEASURED gets no flags, a TOO_SHORT one
 * too_short (and dup_audio) only. rate_outlier
 * compares ln(chars_per_s) with the speaker's median, spread 1.4826 x MAD (at least
 * rate_min_spread), over the speaker's MEASURED records with speech_s >= rate_min_speech_s
 * and n_chars > 0 that carry none of cut_start, cut_end, low_snr, too_quiet, too_short (their
 * speech span is not to be trusted). O(n log n) time, O(n) memory (24 bytes a record at most).
 * Errors: XTTS_EUSAGE (a NULL array with n > 0), XTTS_ENOMEM. */
xtts_status xtts_quality_flag_all(const xtts_quality_metrics *m, const uint32_t *speaker, size_t n,
                                  const xtts_quality_thresholds *t, uint32_t *flags_out, int64_t *dup_of_out,
                                  xtts_error *err);

/* ---- stored form ----------------------------------------------------------------------- */

/* The fixed little-endian layout (docs/quality.md): version byte, the fields in struct order,
 * then a CRC-32 of everything before it. Version 2 has version 1's layout; its edge fields
 * (cut_start, cut_end, start_edge_db, end_edge_db) are measured in the speech band over 5 ms
 * instead of broadband over 20 ms. Both decode. */
#define XTTS_QUALITY_BYTES 104

void xtts_quality_encode(const xtts_quality_metrics *m, uint8_t out[XTTS_QUALITY_BYTES]);
/* Encodes m as version m->version (1 or 2; 0 reads as XTTS_QUALITY_VERSION), so a metric
 * decoded from an old cache is stored again as it was measured. */
/* Errors: XTTS_ECORRUPT (CRC mismatch, a version other than 1 or 2, an unknown status, a cut
 * flag not 0/1, a non-finite float); *m is zeroed then. m->version gets the stored version. */
xtts_status xtts_quality_decode(const uint8_t in[XTTS_QUALITY_BYTES], xtts_quality_metrics *m, xtts_error *err);

#ifdef __cplusplus
}
#endif
#endif
