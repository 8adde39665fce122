/* quality.h — per-clip audio quality metrics, the flag vocabulary of the dataset quality
 * report, the thresholds that turn metrics into flags, and the fixed byte layout the cache
 * stores the metrics in (docs/quality.md).
 *
 * Two steps. xtts_quality_measure runs on one clip's samples, at the cache's sample rate,
 * before padding, inside each build worker (one xtts_quality_state per worker); it looks at
 * the clip alone and never decides anything. xtts_quality_flag_all runs once over all the
 * records' metrics and decides: per-clip thresholds, duplicates (the later record in input
 * order names the earlier one) and speaking-rate outliers against each speaker's own median.
 * So thresholds can change without decoding any audio again.
 *
 * Every field of a measured clip is finite: no NaN, no Inf. Levels of silence read
 * XTTS_QUALITY_FLOOR_DBFS, an SNR without measurable noise reads XTTS_QUALITY_MAX_SNR_DB.
 */
#ifndef XTTS_QUALITY_H
#define XTTS_QUALITY_H

#include <stddef.h>
#include <stdint.h>

#include "common/xtts_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- measurement ----------------------------------------------------------------------- */

/* The analysis grid: frames of about 10 ms (a whole number of 32-sample blocks: 224 samples
 * at 22050 Hz, 160 at 16000 Hz), non-overlapping. Silences, speech span and the cut edges are
 * measured on it. A clip shorter than XTTS_QUALITY_MIN_FRAMES frames is too short to
 * measure (status XTTS_QUALITY_TOO_SHORT): only its duration, levels, clip fraction, DC and
 * hash are filled. */
#define XTTS_QUALITY_FRAME_S 0.010
#define XTTS_QUALITY_MIN_FRAMES 10
/* The edge the cut tests look at: the first or last 5 ms of the clip, in the speech band
 * (above XTTS_QUALITY_SPEECH_BAND_HZ, so mains hum, rumble and DC drift are not speech). A
 * tight trim's onset is still rising from near silence there; a cut starts at speech level.
 * (Metrics of stored version 1 looked at 20 ms, broadband.) */
#define XTTS_QUALITY_EDGE_S 0.0025
#define XTTS_QUALITY_SPEECH_BAND_HZ 200.0
/* A level of digital silence (log of zero) reads this. */
#define XTTS_QUALITY_FLOOR_DBFS (-120.0f)
/* SNR when the noise estimate is zero or below what float samples resolve. */
#define XTTS_QUALITY_MAX_SNR_DB 100.0f
/* A sample at or above this magnitude counts as at full scale (-0.09 dBFS; a clipped
 * passage resampled keeps most of its samples above it despite the filter's ripple). */
#define XTTS_QUALITY_FULL_SCALE 0.99f

typedef enum {
    XTTS_QUALITY_UNMEASURED = 0, /* no metrics (a zeroed struct) */
    XTTS_QUALITY_MEASURED = 1,
    XTTS_QUALITY_TOO_SHORT = 2,  /* shorter than the analysis window: flagged too_short */
} xtts_quality_status;

/* One record's metrics. Plain values of fixed size; its stored form is
 * xtts_quality_encode's, never this struct's bytes. */
typedef struct xtts_quality_metrics {
    uint8_t status;        /* xtts_quality_status */
    uint8_t cut_start;     /* 1: speech at the start: the first 2.5 ms in the speech band over the
                              speech/silence threshold (version 1: a speech frame in the first 20 ms) */
    uint8_t cut_end;       /* 1: speech at the end, the same */
    uint8_t version;       /* the stored form's version the metrics were measured for:
                              XTTS_QUALITY_VERSION, or 1 for a cache built before it (edges
                              measured broadband over 20 ms; flagged by the same rule) */
    uint32_t sample_rate;  /* Hz of the samples measured (the cache's rate) */
    uint32_t native_rate;  /* Hz of the source file before resampling; 0 unknown */
    uint32_t n_chars;      /* characters of the text (as given to measure) */
    uint32_t n_tokens;     /* tokens of the text */
    float duration_s;      /* samples / sample_rate */
    float lead_silence_s;  /* from the start to the first speech frame */
    float trail_silence_s; /* from the end of the last speech frame to the end */
    float speech_s;        /* duration - lead - trail: the span the text is spoken in */
    float start_edge_db;   /* speech-band level of the first 5 ms relative to the speech-band level of
                              the speech frames (dB, <= ~+10; version 1: broadband, 20 ms) */
    float end_edge_db;     /* the same for the last 5 ms */
    float peak_dbfs;       /* 20 log10 max |x| */
    float rms_dbfs;        /* RMS of the whole clip (DC included) */
    float active_dbfs;     /* RMS of the speech frames only, about the clip's mean: the speech level */
    float noise_dbfs;      /* RMS of the quietest 10 % of frames, about the clip's mean */
    float clip_fraction;   /* fraction of samples with |x| >= XTTS_QUALITY_FULL_SCALE */
    float snr_db;          /* frame-energy percentile SNR (below and docs/quality.md) */
    float bandwidth_hz;    /* highest frequency with energy (below); 0 without speech */
    float chars_per_s;     /* n_chars / speech_s (0 when speech_s is 0) */
    float tokens_per_s;    /* n_tokens / speech_s (0 when speech_s is 0) */
    float dc_offset;       /* mean of the samples */
    uint64_t audio_hash[2]; /* 128-bit hash of the samples rounded to int16, and of their count */
} xtts_quality_metrics;

/* Per-worker scratch (frame energies, FFT tables and buffers), grown as clips need. */
typedef struct xtts_quality_state xtts_quality_state;

/* A state in *out, NULL on failure. Errors: XTTS_ENOMEM. */
xtts_status xtts_quality_state_new(xtts_quality_state **out, xtts_error *err);
/* NULL is allowed. */
void xtts_quality_state_delete(xtts_quality_state *st);

/* Measure one clip: n mono samples at sample_rate (the cache's rate, after resampling and
 * any trimming, before padding); native_rate is the source file's rate (0 when unknown);
 * n_chars and n_tokens are the record's text length in characters (code points) and tokens.
 * Fills *out completely (status MEASURED or TOO_SHORT); never NaN or Inf.
 *
 * Methods (docs/quality.md says more, with the biases):
 *  - speech/silence: 10 ms frame energies; a frame is speech when its level is above
 *    max(loud - 40 dB, noise + 6 dB) (loud: the 95th percentile frame level, noise: the mean
 *    power of the quietest 10 % of frames); the speech span runs from the first to the last
 *    run of at least 3 speech frames.
 *  - snr_db: frame-energy percentiles: 10 log10((P_speech - P_noise) / P_noise), P_speech the
 *    mean power of the speech frames, P_noise that of the quietest 10 % of frames. Biased
 *    low when the clip has (almost) no pauses (speech in the quietest frames), slightly high
 *    (about 0.5 dB) for steady noise because the quietest frames are the noise's quiet ones,
 *    and high for speech under 10 dB (weak speech frames fall under noise + 6 dB): it reads
 *    no lower than about 6 dB.
 *  - cut edges: the first and last 2.5 ms through a 4th-order 200 Hz high-pass run towards
 *    the edge (hum, rumble and DC drift are not speech); start_edge_db / end_edge_db that level
 *    against the speech frames' speech-band level, cut_start / cut_end whether it is over the
 *    speech/silence threshold taken in the speech band (loud and noise scaled by their
 *    speech-band shares). A tight trim's onset still rises from near silence there.
 *  - bandwidth_hz: mean power spectrum of speech frames (4, and one per second of speech,
 *    at most 32; FFT of 512 points at 16-24 kHz, Blackman-Harris window), in bands of about 250 Hz; the
 *    upper edge of the highest band whose level is at most 70 dB below the 300-3400 Hz
 *    band's mean level and 6 dB or more over 16-bit rounding noise. Clean wideband speech
 *    (or its recording's noise) reaches the Nyquist frequency; audio from an 8 or 16 kHz
 *    source stops near 4 or 8 kHz. Reads low for noise-free speech with weak highs.
 * Errors: XTTS_EUSAGE (st or out NULL, sample_rate <= 0, samples NULL with n > 0). */
xtts_status xtts_quality_measure(xtts_quality_state *st, const float *samples, size_t n, int sample_rate,
                                 int native_rate, uint32_t n_chars, uint32_t n_tokens,
                                 xtts_quality_metrics *out, xtts_error *err);

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
#define XTTS_QUALITY_VERSION 2
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
