/* test_quality.c — the quality metrics on synthetic signals with known answers, the flags
 * (duplicates, per-speaker rate outliers), the thresholds file and the stored form. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "formats/quality_flags.h"

#define SR 22050
#define TWO_PI 6.283185307179586

static double gauss(uint64_t *s) {
    double u1 = ((double)(xtts_splitmix64(s) >> 11) + 1.0) / 9007199254740993.0;
    double u2 = (double)(xtts_splitmix64(s) >> 11) / 9007199254740992.0;
    return sqrt(-2.0 * log(u1)) * cos(TWO_PI * u2);
}

/* Bursts: on_s of signal, off_s of silence, repeated over [start, start + len), starting
 * and ending with a burst (the last one stretched to reach the end); raised-cosine ramps
 * of ramp_s (add_bursts: 5 ms). kind 0: harmonics of 200 Hz up to 3 kHz (speech band),
 * kind 1: sines every 50 Hz from 100 Hz up to top_hz with random phases (flat band-limited
 * noise-like). The signal's power while on is `power`. Adds into x. */
static void add_bursts_ramped(float *x, size_t start, size_t len, int kind, double top_hz, double power, uint64_t seed,
                              double ramp_s) {
    double on_s = 0.30, off_s = 0.20, ramp = ramp_s * SR;
    int n_comp = kind == 0 ? 15 : (int)((top_hz - 100.0) / 50.0) + 1;
    double amp = sqrt(2.0 * power / n_comp), phase[512];
    for (int k = 0; k < n_comp && k < 512; k++) phase[k] = TWO_PI * (double)(xtts_splitmix64(&seed) >> 11) / 9007199254740992.0;
    size_t period = (size_t)((on_s + off_s) * SR), on = (size_t)(on_s * SR);
    size_t n_periods = len > on ? (len - on) / period : 0; /* the last burst runs to the end */
    for (size_t i = 0; i < len; i++) {
        size_t p = i / period < n_periods ? i / period : n_periods;
        size_t b0 = p * period, b1 = p == n_periods ? len : b0 + on;
        if (i >= b1) continue;
        double env = 1.0, a = (double)(i - b0), z = (double)(b1 - i);
        if (a < ramp) env *= 0.5 - 0.5 * cos(M_PI * a / ramp);
        if (z < ramp) env *= 0.5 - 0.5 * cos(M_PI * z / ramp);
        double t = (double)i / SR, v = 0;
        for (int k = 0; k < n_comp && k < 512; k++) {
            double f = kind == 0 ? 200.0 * (k + 1) : 100.0 + 50.0 * k;
            v += sin(TWO_PI * f * t + phase[k]);
        }
        x[start + i] += (float)(env * amp * v);
    }
}

static void add_bursts(float *x, size_t start, size_t len, int kind, double top_hz, double power, uint64_t seed) {
    add_bursts_ramped(x, start, len, kind, top_hz, power, seed, 0.005);
}

static void measure(const float *x, size_t n, xtts_quality_metrics *m) {
    xtts_quality_state *st = NULL;
    xtts_error e;
    assert_int_equal(xtts_quality_state_new(&st, &e), XTTS_OK);
    assert_int_equal(xtts_quality_measure(st, x, n, SR, 44100, 30, 20, m, &e), XTTS_OK);
    xtts_quality_state_delete(st);
}

static void assert_all_finite(const xtts_quality_metrics *m) {
    const float v[] = {m->duration_s,  m->lead_silence_s, m->trail_silence_s, m->speech_s,    m->start_edge_db,
                       m->end_edge_db, m->peak_dbfs,      m->rms_dbfs,        m->active_dbfs, m->noise_dbfs,
                       m->clip_fraction, m->snr_db,       m->bandwidth_hz,    m->chars_per_s, m->tokens_per_s,
                       m->dc_offset};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) assert_true(isfinite(v[i]));
}

static uint32_t flags_of(const xtts_quality_metrics *m) {
    xtts_quality_thresholds t;
    xtts_quality_thresholds_defaults(&t);
    uint32_t f = 0;
    int64_t d = 0;
    xtts_error e;
    assert_int_equal(xtts_quality_flag_all(m, NULL, 1, &t, &f, &d, &e), XTTS_OK);
    return f;
}

static void test_silence_lengths_and_speech_span(void **state) {
    (void)state;
    size_t lead = SR / 2, body = 2 * SR, trail = (size_t)(0.7 * SR), n = lead + body + trail;
    float *x = calloc(n, sizeof *x);
    add_bursts(x, lead, body, 1, 10900, 0.01, 1);
    xtts_quality_metrics m;
    measure(x, n, &m);
    assert_int_equal(m.status, XTTS_QUALITY_MEASURED);
    assert_true(fabsf(m.duration_s - 3.2f) < 1e-4f);
    assert_true(fabsf(m.lead_silence_s - 0.5f) < 0.025f);
    assert_true(fabsf(m.trail_silence_s - 0.7f) < 0.025f);
    assert_true(fabsf(m.speech_s - 2.0f) < 0.03f);
    assert_int_equal(m.cut_start, 0);
    assert_int_equal(m.cut_end, 0);
    assert_true(fabsf(m.chars_per_s - 30.0f / m.speech_s) < 1e-3f);
    assert_true(fabsf(m.tokens_per_s - 20.0f / m.speech_s) < 1e-3f);
    assert_int_equal(m.sample_rate, SR);
    assert_int_equal(m.native_rate, 44100);
    assert_int_equal(flags_of(&m), 0);
    /* longer silences than the thresholds */
    size_t lead2 = 2 * SR, n2 = lead2 + body + 3 * SR;
    float *y = calloc(n2, sizeof *y);
    add_bursts(y, lead2, body, 1, 10900, 0.01, 1);
    measure(y, n2, &m);
    assert_true(fabsf(m.lead_silence_s - 2.0f) < 0.025f);
    assert_true(fabsf(m.trail_silence_s - 3.0f) < 0.025f);
    assert_int_equal(flags_of(&m), (1u << XTTS_QFLAG_LEAD_SILENCE) | (1u << XTTS_QFLAG_TRAIL_SILENCE));
    free(x);
    free(y);
}

static void test_speech_at_the_very_start_or_end_is_a_cut(void **state) {
    (void)state;
    size_t body = 2 * SR, trail = SR / 2, n = body + trail;
    float *x = calloc(n, sizeof *x);
    add_bursts(x, 0, body, 1, 10900, 0.01, 2);
    x[0] = 0; /* the burst starts at full level: no ramp at the start */
    for (size_t i = 0; i < (size_t)(0.005 * SR); i++) x[i] = x[i + (size_t)(0.005 * SR)];
    xtts_quality_metrics m;
    measure(x, n, &m);
    assert_int_equal(m.cut_start, 1);
    assert_int_equal(m.cut_end, 0);
    assert_true(m.lead_silence_s < 0.011f);
    assert_true(m.start_edge_db > -6.0f);
    assert_int_equal(flags_of(&m), 1u << XTTS_QFLAG_CUT_START);
    /* reversed: the cut is at the end */
    for (size_t i = 0; i < n / 2; i++) {
        float t = x[i];
        x[i] = x[n - 1 - i];
        x[n - 1 - i] = t;
    }
    measure(x, n, &m);
    assert_int_equal(m.cut_start, 0);
    assert_int_equal(m.cut_end, 1);
    assert_int_equal(flags_of(&m), 1u << XTTS_QFLAG_CUT_END);
    free(x);
}

/* A tight trim: the clip starts on the onset itself, which rises from silence over 15 ms (as
 * LJSpeech's clips do); and ends on a 15 ms decay. Speech in the first frame, but no cut. */
static void test_onset_rising_from_silence_is_a_tight_trim_not_a_cut(void **state) {
    (void)state;
    size_t n = 2 * SR;
    float *x = calloc(n, sizeof *x);
    add_bursts_ramped(x, 0, n, 0, 0, 0.01, 3, 0.015);
    xtts_quality_metrics m;
    measure(x, n, &m);
    assert_true(m.lead_silence_s < 0.011f);
    /* a 15 ms raised-cosine rise, faster than any onset of the real corpora (docs/quality.md):
     * its first 10 ms are 8.5 dB under the speech, read 9 dB lower still */
    assert_true(m.start_edge_db < -16.0f);
    assert_true(m.end_edge_db < -16.0f);
    assert_int_equal(flags_of(&m) & ((1u << XTTS_QFLAG_CUT_START) | (1u << XTTS_QFLAG_CUT_END)), 0);
    free(x);
}

/* A clip cut in the middle of a word whose last 2.5 ms fall in the quiet part of a pitch
 * period (26 dB under the speech there): its last 10 ms stand at speech level, so it is a cut
 * (the 2.5 ms edge alone missed 12 of 120 injected cut_end clips of the synthetic corpus). The
 * same at the start. */
static void test_cut_in_the_quiet_part_of_a_period_is_a_cut(void **state) {
    (void)state;
    size_t n = 2 * SR, quiet = (size_t)(0.0025 * SR);
    float *x = calloc(n, sizeof *x);
    add_bursts_ramped(x, SR / 4, n - SR / 4, 0, 0, 0.01, 3, 0.0); /* the last burst runs to the end */
    for (size_t i = n - quiet; i < n; i++) x[i] *= 0.05f;
    xtts_quality_metrics m;
    measure(x, n, &m);
    assert_true(m.end_edge_db > -15.0f);
    assert_true(flags_of(&m) & (1u << XTTS_QFLAG_CUT_END));
    for (size_t i = 0; i < n / 2; i++) { /* the same clip backwards: cut at its start */
        float t = x[i];
        x[i] = x[n - 1 - i];
        x[n - 1 - i] = t;
    }
    measure(x, n, &m);
    assert_true(m.start_edge_db > -15.0f);
    assert_true(flags_of(&m) & (1u << XTTS_QFLAG_CUT_START));
    free(x);
}

/* Mains hum (50 Hz and its 2nd harmonic) and a DC step as loud as the speech over the first
 * and last 40 ms, silence between them and the speech: below the speech band, not speech, so
 * not a cut (a broadband edge level would read it as speech at speech level). And hum does not
 * hide a cut either. */
static void test_hum_and_drift_at_the_edges_are_not_a_cut(void **state) {
    (void)state;
    size_t n = 2 * SR, edge = (size_t)(0.040 * SR), gap = SR / 10;
    float *x = calloc(n, sizeof *x);
    add_bursts(x, edge + gap, n - 2 * (edge + gap), 0, 0, 0.01, 4);
    for (size_t i = 0; i < n; i++) {
        if (i >= edge && i < n - edge) continue;
        double t = (double)i / SR, a = sqrt(2 * 0.01);
        x[i] += (float)(a * sin(TWO_PI * 50 * t) + 0.5 * a * sin(TWO_PI * 100 * t + 1) + 0.01 * (i < edge ? 1 : -1));
    }
    xtts_quality_metrics m;
    measure(x, n, &m);
    assert_true(m.start_edge_db < -20.0f);
    assert_true(m.end_edge_db < -20.0f);
    assert_int_equal(flags_of(&m) & ((1u << XTTS_QFLAG_CUT_START) | (1u << XTTS_QFLAG_CUT_END)), 0);
    /* hum all through, 7 dB under the speech, over a clip cut at its start in a part of the word
     * 10 dB under its level: the hum raises the broadband noise over that part, but the cut is
     * judged against the speech band's noise and still found */
    memset(x, 0, n * sizeof *x);
    add_bursts(x, 0, n - gap, 0, 0, 0.01, 5);
    for (size_t i = 0; i < (size_t)(0.005 * SR); i++) x[i] = x[i + (size_t)(0.005 * SR)];
    for (size_t i = 0; i < (size_t)(0.010 * SR); i++) x[i] *= 0.316f;
    for (size_t i = 0; i < n; i++)
        x[i] += (float)(sqrt(2 * 0.002) * sin(TWO_PI * 50 * (double)i / SR));
    measure(x, n, &m);
    assert_true(m.start_edge_db > -13.0f && m.start_edge_db < -7.0f);
    assert_int_equal(flags_of(&m) & ((1u << XTTS_QFLAG_CUT_START) | (1u << XTTS_QFLAG_CUT_END)),
                     1u << XTTS_QFLAG_CUT_START);
    free(x);
}

static void test_peak_and_rms_of_a_sine(void **state) {
    (void)state;
    size_t n = 40 * 1100;
    float *x = malloc(n * sizeof *x);
    /* 40 samples a period: whole periods, and the crests fall on samples */
    for (size_t i = 0; i < n; i++) x[i] = (float)(0.5 * sin(TWO_PI * 551.25 * i / SR));
    xtts_quality_metrics m;
    measure(x, n, &m);
    assert_true(fabsf(m.peak_dbfs - (-6.0206f)) < 0.01f);
    assert_true(fabsf(m.rms_dbfs - (-9.0309f)) < 0.01f);
    assert_true(m.clip_fraction == 0.0f);
    assert_true(fabsf(m.dc_offset) < 1e-5f);
    assert_all_finite(&m);
    free(x);
}

static void test_clip_fraction_of_a_clipped_sine(void **state) {
    (void)state;
    size_t n = 2 * SR;
    float *x = malloc(n * sizeof *x);
    size_t at_full = 0; /* the samples of |2 sin| >= 0.99: about 1 - (2/pi) asin(0.495) = 0.67 */
    for (size_t i = 0; i < n; i++) {
        double v = 2.0 * sin(TWO_PI * 441.0 * i / SR);
        x[i] = (float)(v > 1 ? 1 : v < -1 ? -1 : v);
        at_full += fabs(v) >= 0.99;
    }
    xtts_quality_metrics m;
    measure(x, n, &m);
    assert_true(fabs(m.clip_fraction - (double)at_full / n) < 1e-6);
    assert_true(fabs(m.clip_fraction - (1.0 - 2.0 / M_PI * asin(0.495))) < 0.04);
    assert_true(fabsf(m.peak_dbfs) < 0.01f);
    assert_true(flags_of(&m) & (1u << XTTS_QFLAG_CLIPPED));
    free(x);
}

static void test_dc_offset_is_the_mean(void **state) {
    (void)state;
    size_t n = 3 * SR;
    float *x = calloc(n, sizeof *x);
    add_bursts(x, SR / 4, n - SR / 2, 0, 0, 0.01, 3);
    for (size_t i = 0; i < n; i++) x[i] += 0.05f;
    xtts_quality_metrics m;
    measure(x, n, &m);
    assert_true(fabsf(m.dc_offset - 0.05f) < 1e-3f);
    assert_true(flags_of(&m) & (1u << XTTS_QFLAG_DC_OFFSET));
    free(x);
}

/* SNR = power of the bursts while on / power of the white noise, within 1.5 dB. */
static void test_snr_of_harmonic_bursts_in_white_noise(void **state) {
    (void)state;
    size_t n = 4 * SR;
    const double snrs[] = {5, 10, 20, 30, 40};
    for (size_t k = 0; k < sizeof snrs / sizeof snrs[0]; k++) {
        float *x = calloc(n, sizeof *x);
        double sig = 0.01, noise = sig / pow(10.0, snrs[k] / 10.0), sd = sqrt(noise);
        add_bursts(x, SR / 4, n - SR / 2, 0, 0, sig, 4);
        uint64_t s = 99 + k;
        for (size_t i = 0; i < n; i++) x[i] += (float)(sd * gauss(&s));
        xtts_quality_metrics m;
        measure(x, n, &m);
        assert_true(fabs(m.snr_db - snrs[k]) < 1.5);
        assert_true(fabs(m.noise_dbfs - 10 * log10(noise)) < 1.0);
        assert_true(fabs(m.active_dbfs - 10 * log10(sig + noise)) < 1.0);
        uint32_t f = flags_of(&m);
        assert_int_equal(!!(f & (1u << XTTS_QFLAG_LOW_SNR)), snrs[k] < 15);
        free(x);
    }
}

static void test_bandwidth_of_band_limited_signals(void **state) {
    (void)state;
    size_t n = 3 * SR;
    const double tops[] = {4000, 8000, 11000};
    for (size_t k = 0; k < 3; k++) {
        float *x = calloc(n, sizeof *x);
        /* 40 ms ramps: a 5 ms onset spreads energy 70 dB down some 500 Hz past the top */
        add_bursts_ramped(x, SR / 4, n - SR / 2, 1, tops[k], 0.01, 5 + k, 0.04);
        xtts_quality_metrics m;
        measure(x, n, &m);
        assert_true(m.bandwidth_hz >= tops[k] - 150 && m.bandwidth_hz <= tops[k] + 400);
        assert_int_equal(!!(flags_of(&m) & (1u << XTTS_QFLAG_UPSAMPLED)), tops[k] < 8820);
        free(x);
    }
}

static void test_too_short_input_is_flagged_not_measured(void **state) {
    (void)state;
    float x[1500];
    for (size_t i = 0; i < 1500; i++) x[i] = (float)(0.3 * sin(TWO_PI * 441.0 * i / SR));
    xtts_quality_metrics m;
    measure(x, 1500, &m);
    assert_int_equal(m.status, XTTS_QUALITY_TOO_SHORT);
    assert_all_finite(&m);
    assert_true(fabsf(m.peak_dbfs - 20 * log10f(0.3f)) < 0.05f);
    assert_int_equal(flags_of(&m), 1u << XTTS_QFLAG_TOO_SHORT);
    measure(NULL, 0, &m);
    assert_int_equal(m.status, XTTS_QUALITY_TOO_SHORT);
    assert_all_finite(&m);
    assert_true(m.peak_dbfs == XTTS_QUALITY_FLOOR_DBFS);
}

static void test_all_zero_input_gives_finite_silence(void **state) {
    (void)state;
    size_t n = 2 * SR;
    float *x = calloc(n, sizeof *x);
    xtts_quality_metrics m;
    measure(x, n, &m);
    assert_int_equal(m.status, XTTS_QUALITY_MEASURED);
    assert_all_finite(&m);
    assert_true(m.peak_dbfs == XTTS_QUALITY_FLOOR_DBFS);
    assert_true(m.speech_s == 0.0f && m.chars_per_s == 0.0f);
    assert_true(fabsf(m.lead_silence_s - m.duration_s) < 1e-6f);
    uint32_t f = flags_of(&m);
    assert_true(f & (1u << XTTS_QFLAG_LEAD_SILENCE));
    assert_true(f & (1u << XTTS_QFLAG_TOO_QUIET));
    free(x);
}

static void test_non_finite_samples_give_finite_fields(void **state) {
    (void)state;
    size_t n = 2 * SR;
    float *x = calloc(n, sizeof *x);
    add_bursts(x, SR / 4, n - SR / 2, 1, 10900, 0.01, 9);
    x[SR] = NAN;
    x[SR + 7] = INFINITY;
    xtts_quality_metrics m;
    measure(x, n, &m);
    assert_all_finite(&m);
    measure(x, 1000, &m); /* too short, with no bad sample */
    assert_all_finite(&m);
    x[10] = -INFINITY;
    measure(x, 1000, &m);
    assert_all_finite(&m);
    free(x);
}

static void test_hash_sees_int16_values_not_float_noise(void **state) {
    (void)state;
    size_t n = SR;
    float *x = calloc(n, sizeof *x), *y = calloc(n, sizeof *y);
    add_bursts(x, 0, n, 0, 0, 0.01, 6);
    for (size_t i = 0; i < n; i++) x[i] = (float)lrintf(x[i] * 32768.0f) / 32768.0f;
    memcpy(y, x, n * sizeof *x);
    xtts_quality_metrics a, b;
    measure(x, n, &a);
    for (size_t i = 0; i < n; i++) y[i] += 0.2f / 32768.0f; /* under half a step: same int16 */
    measure(y, n, &b);
    assert_memory_equal(a.audio_hash, b.audio_hash, sizeof a.audio_hash);
    y[n / 2] += 1.0f / 32768.0f; /* one step in one sample */
    measure(y, n, &b);
    assert_true(a.audio_hash[0] != b.audio_hash[0] && a.audio_hash[1] != b.audio_hash[1]);
    measure(x, n - 1, &b); /* one sample shorter */
    assert_true(a.audio_hash[0] != b.audio_hash[0]);
    free(x);
    free(y);
}

static xtts_quality_metrics plain_metrics(float chars_per_s, uint64_t hash) {
    xtts_quality_metrics m = {0};
    m.status = XTTS_QUALITY_MEASURED;
    m.sample_rate = SR;
    m.duration_s = 4;
    m.lead_silence_s = m.trail_silence_s = 0.2f;
    m.speech_s = 3.6f;
    m.start_edge_db = m.end_edge_db = -40;
    m.peak_dbfs = -3;
    m.rms_dbfs = -20;
    m.active_dbfs = -18;
    m.noise_dbfs = -70;
    m.snr_db = 50;
    m.bandwidth_hz = 11025;
    m.n_chars = (uint32_t)lroundf(chars_per_s * 3.6f);
    m.chars_per_s = (float)m.n_chars / 3.6f;
    m.audio_hash[0] = hash;
    m.audio_hash[1] = ~hash;
    return m;
}

static void test_later_duplicate_names_the_earlier(void **state) {
    (void)state;
    xtts_quality_metrics m[5] = {plain_metrics(12, 1), plain_metrics(12, 2), plain_metrics(12, 1),
                                 plain_metrics(12, 3), plain_metrics(12, 1)};
    m[3].audio_hash[1] = 0; /* same first half as nothing else: not a duplicate */
    uint32_t f[5];
    int64_t d[5];
    xtts_quality_thresholds t;
    xtts_quality_thresholds_defaults(&t);
    xtts_error e;
    assert_int_equal(xtts_quality_flag_all(m, NULL, 5, &t, f, d, &e), XTTS_OK);
    assert_int_equal(f[0], 0);
    assert_int_equal(d[0], -1);
    assert_int_equal(f[1], 0);
    assert_int_equal(f[2], 1u << XTTS_QFLAG_DUP_AUDIO);
    assert_int_equal(d[2], 0);
    assert_int_equal(f[3], 0);
    assert_int_equal(d[4], 0);
    assert_int_equal(f[4], 1u << XTTS_QFLAG_DUP_AUDIO);
}

static void test_rate_outlier_against_own_speaker_not_fast_speaker(void **state) {
    (void)state;
    enum { N = 25 };
    xtts_quality_metrics m[N];
    uint32_t spk[N], f[N];
    int64_t d[N];
    uint64_t s = 7;
    for (int i = 0; i < N; i++) {
        double jitter = 1.0 + 0.1 * ((double)(xtts_splitmix64(&s) >> 11) / 9007199254740992.0 - 0.5);
        spk[i] = i < 12 ? 0 : 1;
        m[i] = plain_metrics((float)((spk[i] ? 22.0 : 12.0) * jitter), (uint64_t)i + 10);
    }
    m[5] = plain_metrics(24.0f, 100); /* speaker 0 at twice its own rate */
    m[20] = plain_metrics(11.0f, 101); /* speaker 1 at half its own rate */
    xtts_quality_thresholds t;
    xtts_quality_thresholds_defaults(&t);
    xtts_error e;
    assert_int_equal(xtts_quality_flag_all(m, spk, N, &t, f, d, &e), XTTS_OK);
    for (int i = 0; i < N; i++)
        assert_int_equal(f[i], (i == 5 || i == 20) ? 1u << XTTS_QFLAG_RATE_OUTLIER : 0u);
    /* speaker NULL: all one speaker (here speaker 0's records alone) */
    assert_int_equal(xtts_quality_flag_all(m, NULL, 12, &t, f, d, &e), XTTS_OK);
    for (int i = 0; i < 12; i++) assert_int_equal(f[i], i == 5 ? 1u << XTTS_QFLAG_RATE_OUTLIER : 0u);
    /* a cut record's span is not trusted: its odd rate is neither judged nor counted */
    m[7] = plain_metrics(30.0f, 102);
    m[7].cut_start = 1;
    m[7].start_edge_db = -3;
    assert_int_equal(xtts_quality_flag_all(m, spk, N, &t, f, d, &e), XTTS_OK);
    assert_int_equal(f[7], 1u << XTTS_QFLAG_CUT_START);
    assert_int_equal(f[5], 1u << XTTS_QFLAG_RATE_OUTLIER);
    /* an unmeasured record (no metrics stored) carries nothing */
    xtts_quality_metrics none = {0};
    uint32_t fn;
    int64_t dn;
    assert_int_equal(xtts_quality_flag_all(&none, NULL, 1, &t, &fn, &dn, &e), XTTS_OK);
    assert_int_equal(fn, 0);
    assert_int_equal(dn, -1);
    m[7] = plain_metrics(12.0f, 17);
    /* too few records of a speaker: not judged */
    t.rate_min_records = 14;
    assert_int_equal(xtts_quality_flag_all(m, spk, N, &t, f, d, &e), XTTS_OK);
    for (int i = 0; i < N; i++) assert_int_equal(f[i], 0);
}

static void test_thresholds_file_errors_name_the_line(void **state) {
    (void)state;
    xtts_quality_thresholds t, d;
    xtts_quality_thresholds_defaults(&d);
    t = d;
    xtts_error e;
    const char *good = "# mine\n\nsnr_db = 20   # stricter\nrate_min_records=3\r\nlead_silence_s =0.5\n";
    assert_int_equal(xtts_quality_thresholds_parse(good, strlen(good), "q.conf", &t, &e), XTTS_OK);
    assert_true(t.snr_db == 20.0f && t.rate_min_records == 3 && t.lead_silence_s == 0.5f);
    assert_true(t.trail_silence_s == d.trail_silence_s);
    const struct {
        const char *text, *msg;
    } bad[] = {
        {"snr_db = 20\n\nsnr_dbb = 3\n", "q.conf:3: unknown key 'snr_dbb'"},
        {"# c\nclip_fraction = lots\n", "q.conf:2: 'clip_fraction': 'lots' is not a number"},
        {"clip_fraction = 2\n", "q.conf:1: 'clip_fraction': 2 is outside [0, 1]"},
        {"rate_min_records = 2.5\n", "q.conf:1: 'rate_min_records': '2.5' is not a whole number"},
        {"snr_db = 1\nsnr_db = 2\n", "q.conf:2: 'snr_db' given twice"},
        {"\n\n\nsnr_db 20\n", "q.conf:4: expected 'key = value'"},
        {"snr_db =\n", "q.conf:1: 'snr_db': '' is not a number"},
        {"snr_db = nan\n", "q.conf:1: 'snr_db': 'nan' is not a number"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        t = d;
        assert_int_equal(xtts_quality_thresholds_parse(bad[i].text, strlen(bad[i].text), "q.conf", &t, &e), XTTS_EUSAGE);
        assert_non_null(strstr(e.msg, bad[i].msg));
        assert_memory_equal(&t, &d, sizeof t); /* unchanged on error */
    }
    assert_int_equal(xtts_quality_thresholds_load("/nonexistent/q.conf", &t, &e), XTTS_ENOTFOUND);
    /* from a file: the message names the file and the line */
    char path[] = "/tmp/test_quality_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs("snr_db = 12\nlow_snr = 3\n", f);
    fclose(f);
    t = d;
    assert_int_equal(xtts_quality_thresholds_load(path, &t, &e), XTTS_EUSAGE);
    char want[64];
    snprintf(want, sizeof want, "%s:2: unknown key 'low_snr'", path);
    assert_non_null(strstr(e.msg, want));
    assert_int_equal(xtts_exit_code(e.code), 1);
    f = fopen(path, "w");
    fputs("snr_db = 12\n", f);
    fclose(f);
    assert_int_equal(xtts_quality_thresholds_load(path, &t, &e), XTTS_OK);
    assert_true(t.snr_db == 12.0f);
    unlink(path);
}

static void test_stored_form_round_trips_and_detects_damage(void **state) {
    (void)state;
    size_t n = 2 * SR;
    float *x = calloc(n, sizeof *x);
    add_bursts(x, SR / 4, n - SR / 2, 0, 0, 0.01, 8);
    xtts_quality_metrics m, back;
    measure(x, n, &m);
    uint8_t b[XTTS_QUALITY_BYTES];
    xtts_quality_encode(&m, b);
    assert_int_equal(b[0], XTTS_QUALITY_VERSION);
    xtts_error e;
    assert_int_equal(xtts_quality_decode(b, &back, &e), XTTS_OK);
    assert_memory_equal(&m, &back, sizeof m);
    /* metrics of a cache built before version 2 (broadband 20 ms edges) read back as such,
     * and are stored again as version 1 */
    xtts_quality_metrics old = m;
    old.version = 1;
    uint8_t b1[XTTS_QUALITY_BYTES];
    xtts_quality_encode(&old, b1);
    assert_int_equal(b1[0], 1);
    assert_int_equal(xtts_quality_decode(b1, &back, &e), XTTS_OK);
    assert_int_equal(back.version, 1);
    assert_memory_equal(&old, &back, sizeof old);
    b1[0] = 3;
    xtts_put_le32(b1 + 100, xtts_crc32(0, b1, 100));
    assert_int_equal(xtts_quality_decode(b1, &back, &e), XTTS_ECORRUPT);
    for (size_t i = 0; i < XTTS_QUALITY_BYTES; i += 7) {
        uint8_t c[XTTS_QUALITY_BYTES];
        memcpy(c, b, sizeof c);
        c[i] ^= 0x10;
        assert_int_equal(xtts_quality_decode(c, &back, &e), XTTS_ECORRUPT);
    }
    /* a NaN with a valid checksum is still refused */
    uint8_t c[XTTS_QUALITY_BYTES];
    memcpy(c, b, sizeof c);
    xtts_put_le32(c + 20, 0x7fc00000u);
    xtts_put_le32(c + 100, xtts_crc32(0, c, 100));
    assert_int_equal(xtts_quality_decode(c, &back, &e), XTTS_ECORRUPT);
    free(x);
}

static void test_flag_names_round_trip(void **state) {
    (void)state;
    for (int f = 0; f < XTTS_QUALITY_N_FLAGS; f++) assert_int_equal(xtts_quality_flag_parse(xtts_quality_flag_name(f)), f);
    assert_null(xtts_quality_flag_name(XTTS_QUALITY_N_FLAGS));
    assert_int_equal(xtts_quality_flag_parse("clipping"), -1);
    assert_string_equal(xtts_quality_flag_name(XTTS_QFLAG_DUP_AUDIO), "dup_audio");
    char buf[64];
    assert_int_equal(xtts_quality_flags_format(0, buf, sizeof buf), 1);
    assert_string_equal(buf, "-");
    xtts_quality_flags_format((1u << XTTS_QFLAG_CUT_END) | (1u << XTTS_QFLAG_LOW_SNR), buf, sizeof buf);
    assert_string_equal(buf, "cut_end,low_snr");
    assert_int_equal(xtts_quality_flags_format((1u << XTTS_QFLAG_CUT_END) | (1u << XTTS_QFLAG_LOW_SNR), buf, 5), 15);
    assert_string_equal(buf, "cut_");
}

static int count_tabs(const char *s) {
    int n = 0;
    for (; *s; s++) n += *s == '\t';
    return n;
}

static void test_tsv_fields_match_the_header(void **state) {
    (void)state;
    xtts_quality_metrics m = plain_metrics(12, 0x0123456789abcdefULL);
    char buf[1024];
    size_t len = xtts_quality_tsv_fields(&m, buf, sizeof buf);
    assert_int_equal(len, strlen(buf));
    assert_int_equal(count_tabs(buf), count_tabs(xtts_quality_tsv_header()));
    assert_true(strncmp(buf, "measured\t4.000\t0.200\t", 21) == 0);
    assert_non_null(strstr(buf, "\t0123456789abcdeffedcba9876543210"));
    char small[8];
    assert_int_equal(xtts_quality_tsv_fields(&m, small, sizeof small), len);
    assert_string_equal(small, "measure");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_silence_lengths_and_speech_span),
        cmocka_unit_test(test_speech_at_the_very_start_or_end_is_a_cut),
        cmocka_unit_test(test_onset_rising_from_silence_is_a_tight_trim_not_a_cut),
        cmocka_unit_test(test_cut_in_the_quiet_part_of_a_period_is_a_cut),
        cmocka_unit_test(test_hum_and_drift_at_the_edges_are_not_a_cut),
        cmocka_unit_test(test_peak_and_rms_of_a_sine),
        cmocka_unit_test(test_clip_fraction_of_a_clipped_sine),
        cmocka_unit_test(test_dc_offset_is_the_mean),
        cmocka_unit_test(test_snr_of_harmonic_bursts_in_white_noise),
        cmocka_unit_test(test_bandwidth_of_band_limited_signals),
        cmocka_unit_test(test_too_short_input_is_flagged_not_measured),
        cmocka_unit_test(test_all_zero_input_gives_finite_silence),
        cmocka_unit_test(test_non_finite_samples_give_finite_fields),
        cmocka_unit_test(test_hash_sees_int16_values_not_float_noise),
        cmocka_unit_test(test_later_duplicate_names_the_earlier),
        cmocka_unit_test(test_rate_outlier_against_own_speaker_not_fast_speaker),
        cmocka_unit_test(test_thresholds_file_errors_name_the_line),
        cmocka_unit_test(test_stored_form_round_trips_and_detects_damage),
        cmocka_unit_test(test_flag_names_round_trip),
        cmocka_unit_test(test_tsv_fields_match_the_header),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
