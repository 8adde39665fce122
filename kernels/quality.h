/* quality.h — per-clip audio quality metrics (docs/quality.md). The flag vocabulary of the
 * dataset quality report, the thresholds that turn metrics into flags, and the fixed byte
 * layout the cache stores the metrics in are formats/quality_flags.h's: they work on stored
 * metrics, need no signal processing, and the reader library carries them.
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

/* The version of the metrics xtts_quality_measure gives (formats/quality_flags.h: the stored
 * form, which carries it). */
#define XTTS_QUALITY_VERSION 2

/* ---- measurement ----------------------------------------------------------------------- */

/* The analysis grid: frames of about 10 ms (a whole number of 32-sample blocks: 224 samples
 * at 22050 Hz, 160 at 16000 Hz), non-overlapping. Silences, speech span and the cut edges are
 * measured on it. A clip shorter than XTTS_QUALITY_MIN_FRAMES frames is too short to
 * measure (status XTTS_QUALITY_TOO_SHORT): only its duration, levels, clip fraction, DC and
 * hash are filled. */
#define XTTS_QUALITY_FRAME_S 0.010
#define XTTS_QUALITY_MIN_FRAMES 10
/* The edge the cut tests look at: the first or last 2.5 ms of the clip, in the speech band
 * (above XTTS_QUALITY_SPEECH_BAND_HZ, so mains hum, rumble and DC drift are not speech). A
 * tight trim's onset is still rising from near silence there; a cut starts at speech level.
 * (Metrics of stored version 1 looked at 20 ms, broadband.) */
#define XTTS_QUALITY_EDGE_S 0.0025
/* and the first or last 10 ms, read XTTS_QUALITY_EDGE_LONG_DB lower: a cut that lands in the
 * quiet part of a pitch period reads low over 2.5 ms but at speech level over 10 ms, where a
 * tight trim's onset or a word's release is still 20 dB or more under it. The edge level is the
 * louder of the two. */
#define XTTS_QUALITY_EDGE_LONG_S 0.010
#define XTTS_QUALITY_EDGE_LONG_DB 9.0
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

#ifdef __cplusplus
}
#endif
#endif
