/* test_mel.c — log-mel presets against golden outputs of an independent numpy
 * implementation (tests/golden/make_mel_golden.py), frame counts, filterbanks, the shared
 * per-element math, silence, short clips and determinism across contexts and threads. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kernels/mel.h"
#include "kernels/mel_batch.h"
#include "kernels/mel_internal.h"
#include "kernels/mel_math.h"

#pragma GCC diagnostic ignored "-Wpsabi" /* 8-lane vectors between static inline functions only */

#define GOLDEN_DIR "tests/golden/mel/"

/* Same formula as make_mel_golden.py: make_clip. */
static float *make_clip(uint32_t seed, size_t n, int sr) {
    float *x = malloc(n * sizeof *x);
    uint32_t state = seed;
    for (size_t i = 0; i < n; i++) {
        state = state * 1664525u + 1013904223u;
        double noise = (double)(state >> 8) / 16777216.0 - 0.5;
        double t = (double)i / sr;
        double env = 0.1 + 0.9 * (0.5 + 0.5 * sin(2.0 * M_PI * 2.5 * t));
        double v = env * (0.3 * sin(2.0 * M_PI * 220.0 * t) + 0.2 * sin(2.0 * M_PI * 1375.5 * t + 0.3) +
                          0.1 * sin(2.0 * M_PI * 5000.0 * t)) +
                   0.04 * noise;
        x[i] = (float)v;
    }
    return x;
}

static const char *const PRESETS[] = {"xtts", "hifigan", "vits", "tacotron2", "whisper", "linear"};
#define N_PRESETS 6

static void test_presets_carry_their_reference_parameters(void **state) {
    (void)state;
    xtts_mel_params p;
    xtts_error err;
    assert_int_equal(xtts_mel_preset("xtts", &p, &err), XTTS_OK);
    assert_int_equal(p.sample_rate, 22050);
    assert_int_equal(p.mel_scale, XTTS_MEL_SCALE_HTK);
    assert_int_equal(p.mel_norm, XTTS_MEL_NORM_SLANEY);
    assert_int_equal(p.power, 2);
    assert_int_equal(p.center, 1);
    assert_true(p.fmax_hz == 8000.0);
    assert_int_equal(xtts_mel_preset("hifigan", &p, &err), XTTS_OK);
    assert_int_equal(p.center, 0);
    assert_int_equal(p.pad_samples, 384);
    assert_int_equal(p.mel_scale, XTTS_MEL_SCALE_SLANEY);
    assert_true(p.mag_eps == 1e-9);
    assert_int_equal(xtts_mel_preset("vits", &p, &err), XTTS_OK);
    assert_true(p.fmax_hz == 11025.0);
    assert_true(p.mag_eps == 1e-6);
    assert_int_equal(xtts_mel_preset("tacotron2", &p, &err), XTTS_OK);
    assert_int_equal(p.center, 1);
    assert_true(p.mag_eps == 0.0);
    assert_int_equal(xtts_mel_preset("whisper", &p, &err), XTTS_OK);
    assert_int_equal(p.sample_rate, 16000);
    assert_int_equal(p.n_fft, 400);
    assert_int_equal(p.hop_samples, 160);
    assert_int_equal(p.log_kind, XTTS_LOG_LOG10);
    assert_int_equal(p.drop_last_frame, 1);
    assert_int_equal(p.whisper_post, 1);
    assert_string_equal(p.preset, "whisper");
    /* VITS spectrogram_torch: 513 linear magnitude bins, (n_fft-hop)/2 reflect pad, no log */
    assert_int_equal(xtts_mel_preset("linear", &p, &err), XTTS_OK);
    assert_int_equal(p.n_mels, 513);
    assert_int_equal(p.mel_scale, XTTS_MEL_SCALE_LINEAR);
    assert_int_equal(p.log_kind, XTTS_LOG_NONE);
    assert_int_equal(p.center, 0);
    assert_int_equal(p.pad_samples, 384);
    assert_int_equal(p.power, 1);
    assert_float_equal(xtts_mel_pad_value(&p), 1e-3f, 1e-9); /* sqrt(1e-6): the magnitude of silence */
    p.n_mels = 80;
    assert_int_equal(xtts_mel_params_check(&p, &err), XTTS_EUSAGE);
    for (int i = 0; i < N_PRESETS; i++) {
        assert_int_equal(xtts_mel_preset(PRESETS[i], &p, &err), XTTS_OK);
        assert_int_equal(xtts_mel_params_check(&p, &err), XTTS_OK);
    }
}

static void test_unknown_preset_is_a_usage_error(void **state) {
    (void)state;
    xtts_mel_params p;
    xtts_error err;
    assert_int_equal(xtts_mel_preset("melgan", &p, &err), XTTS_EUSAGE);
    assert_non_null(strstr(err.msg, "melgan"));
    assert_int_equal(xtts_mel_preset(NULL, &p, &err), XTTS_EUSAGE);
}

static void test_params_check_rejects_inconsistent_fields(void **state) {
    (void)state;
    xtts_mel_params base, p;
    xtts_error err;
    xtts_mel_preset("xtts", &base, &err);
    p = base; p.win_samples = 2048;
    assert_int_equal(xtts_mel_params_check(&p, &err), XTTS_EUSAGE);
    p = base; p.fmax_hz = 12000.0;
    assert_int_equal(xtts_mel_params_check(&p, &err), XTTS_EUSAGE);
    assert_non_null(strstr(err.msg, "fmax"));
    p = base; p.fmin_hz = 9000.0;
    assert_int_equal(xtts_mel_params_check(&p, &err), XTTS_EUSAGE);
    p = base; p.hop_samples = 0;
    assert_int_equal(xtts_mel_params_check(&p, &err), XTTS_EUSAGE);
    p = base; p.n_mels = 0;
    assert_int_equal(xtts_mel_params_check(&p, &err), XTTS_EUSAGE);
    p = base; p.power = 3;
    assert_int_equal(xtts_mel_params_check(&p, &err), XTTS_EUSAGE);
    p = base; p.log_floor = 0.0;
    assert_int_equal(xtts_mel_params_check(&p, &err), XTTS_EUSAGE);
    p = base; p.center = 0; p.pad_samples = 1024;
    assert_int_equal(xtts_mel_params_check(&p, &err), XTTS_EUSAGE);
    p = base; p.sample_rate = 0;
    assert_int_equal(xtts_mel_params_check(&p, &err), XTTS_EUSAGE);
    xtts_mel *none;
    xtts_mel_new(&p, &none, &err);
    assert_null(none);
}

static void test_frame_counts_follow_centering_padding_and_dropped_frame(void **state) {
    (void)state;
    xtts_mel_params p;
    xtts_error err;
    xtts_mel_preset("xtts", &p, &err);            /* centered: 1 + n / hop */
    assert_int_equal(xtts_mel_n_frames(&p, 7000), 28);
    assert_int_equal(xtts_mel_n_frames(&p, 22050), 87);
    assert_int_equal(xtts_mel_n_frames(&p, 512), 0); /* reflect pad needs n > n_fft/2 */
    assert_int_equal(xtts_mel_n_frames(&p, 513), 3);
    xtts_mel_preset("hifigan", &p, &err);         /* (n + 768 - 1024) / 256 + 1 */
    assert_int_equal(xtts_mel_n_frames(&p, 7000), 27);
    assert_int_equal(xtts_mel_n_frames(&p, 22050), 86);
    assert_int_equal(xtts_mel_n_frames(&p, 255), 0);
    assert_int_equal(xtts_mel_n_frames(&p, 385), 1);
    xtts_mel_preset("whisper", &p, &err);         /* n / hop: last centered frame dropped */
    assert_int_equal(xtts_mel_n_frames(&p, 16000), 100);
    assert_int_equal(xtts_mel_n_frames(&p, 7000), 43);
    assert_int_equal(xtts_mel_n_frames(&p, 0), 0);
}

static void test_shared_math_matches_the_formulas(void **state) {
    (void)state;
    /* reflect: x[-1] = x[1], x[n] = x[n-2], repeated reflection further out */
    assert_int_equal(xtts_reflect_index(-1, 10), 1);
    assert_int_equal(xtts_reflect_index(-9, 10), 9);
    assert_int_equal(xtts_reflect_index(10, 10), 8);
    assert_int_equal(xtts_reflect_index(5, 10), 5);
    assert_int_equal(xtts_reflect_index(-10, 10), 8);
    assert_int_equal(xtts_reflect_index(3, 1), 0);
    /* periodic hann: w[0] = 0, w[n/2] = 1, symmetric around n/2 */
    assert_true(xtts_hann_periodic(0, 1024) == 0.0f);
    assert_float_equal(xtts_hann_periodic(512, 1024), 1.0f, 1e-7);
    assert_float_equal(xtts_hann_periodic(100, 1024), xtts_hann_periodic(924, 1024), 1e-7);
    /* a narrower window sits in the middle of the frame */
    assert_true(xtts_stft_window(0, 1024, 800) == 0.0f);
    assert_true(xtts_stft_window(111, 1024, 800) == 0.0f);
    assert_float_equal(xtts_stft_window(112 + 400, 1024, 800), 1.0f, 1e-7);
    /* scales: htk 1000 Hz = 1000.0 mel; slaney linear below 1 kHz (15 mel at 1 kHz) */
    assert_float_equal(xtts_hz_to_mel_htk(1000.0), 999.9855, 1e-3);
    assert_float_equal(xtts_hz_to_mel_slaney(1000.0), 15.0, 1e-12);
    assert_float_equal(xtts_hz_to_mel_slaney(500.0), 7.5, 1e-12);
    assert_float_equal(xtts_hz_to_mel_slaney(6400.0), 42.0, 1e-9);
    for (double f = 10.0; f < 20000.0; f *= 1.7) {
        assert_float_equal(xtts_mel_to_hz_htk(xtts_hz_to_mel_htk(f)), f, 1e-7 * f);
        assert_float_equal(xtts_mel_to_hz_slaney(xtts_hz_to_mel_slaney(f)), f, 1e-7 * f);
    }
    /* triangle with slaney area norm: peak 2 / (f_hi - f_lo) */
    assert_float_equal(xtts_mel_filter_weight(200.0, 100.0, 200.0, 400.0, 1), 2.0 / 300.0, 1e-15);
    assert_float_equal(xtts_mel_filter_weight(150.0, 100.0, 200.0, 400.0, 0), 0.5, 1e-15);
    assert_true(xtts_mel_filter_weight(450.0, 100.0, 200.0, 400.0, 1) == 0.0);
    /* magnitude and power */
    assert_float_equal(xtts_spec_value(3.0f, 4.0f, 2, 0.0f), 25.0f, 0.0);
    assert_float_equal(xtts_spec_value(3.0f, 4.0f, 1, 0.0f), 5.0f, 1e-6);
    assert_float_equal(xtts_spec_value(0.0f, 0.0f, 1, 1e-6f), 1e-3f, 1e-9);
    /* log with clamp */
    assert_float_equal(xtts_log_clamp(0.0f, 1e-5f, 0), logf(1e-5f), 1e-6);
    assert_float_equal(xtts_log_clamp(100.0f, 1e-10f, 1), 2.0f, 1e-6);
    /* the vectorizable ln against double-precision log over the clamped range: within
     * 1e-6 plus about one float ulp of the result (what logf itself achieves) */
    int bad = 0;
    for (float x = 1e-30f; x < 1e8f; x *= 1.0001f) {
        double want = log((double)x);
        if (fabs((double)xtts_ln_positive(x) - want) > 1e-6 + 1.2e-7 * fabs(want)) bad++;
    }
    assert_int_equal(bad, 0);
    /* whisper post: max(x, max-8) then (x+4)/4 */
    assert_float_equal(xtts_whisper_post(-10.0f, 0.0f), -1.0f, 1e-7);
    assert_float_equal(xtts_whisper_post(0.0f, 0.0f), 1.0f, 1e-7);
}

static float *read_f32(const char *path, size_t n) {
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    float *v = malloc(n * sizeof *v);
    assert_int_equal(fread(v, sizeof *v, n, f), n);
    char extra;
    assert_int_equal(fread(&extra, 1, 1, f), 0); /* the file holds exactly [n_mels][frames] */
    fclose(f);
    return v;
}

/* The 8-lane log the CPU path uses equals the shared scalar function bit for bit, on every
 * kind of float it can meet (tiny, huge, below the floor, NaN, infinities), for both kinds. */
static void test_vector_log_equals_scalar_log_bit_for_bit(void **state) {
    (void)state;
    uint32_t s = 777u;
    const float specials[] = {0.0f, -0.0f, 1e-30f, 1e-10f, 1e-5f, 1.0f, 1.41421356f, 1.4142137f, 2.0f, 3e38f,
                              INFINITY, -INFINITY, NAN, -1.0f, 1e-45f, 0.7071067f};
    const float floors[] = {1e-5f, 1e-10f, 1e-30f};
    for (int round = 0; round < 200000; round++) {
        xtts_v8f x;
        for (int l = 0; l < 8; l++) {
            s = s * 1664525u + 1013904223u;
            union { uint32_t u; float f; } b = {s};
            if ((s & 15u) == 0) b.f = specials[(s >> 4) % (sizeof specials / sizeof specials[0])];
            x[l] = b.f;
        }
        for (int kind = 0; kind < 3; kind++)
            for (int f = 0; f < 3; f++) {
                xtts_v8f y = xtts_log_clamp_v8(x, floors[f], kind);
                for (int l = 0; l < 8; l++) {
                    float want = xtts_log_clamp(x[l], floors[f], kind), got = y[l];
                    if (memcmp(&want, &got, sizeof want)) fail_msg("lane %d of %a: %a, scalar %a", l, (double)x[l], (double)got, (double)want);
                }
            }
    }
}

static void test_every_preset_matches_golden_within_1e3_on_every_cell(void **state) {
    (void)state;
    FILE *idx = fopen(GOLDEN_DIR "index.txt", "r");
    assert_non_null(idx);
    char line[512];
    int cases = 0;
    int presets_seen[N_PRESETS] = {0};
    while (fgets(line, sizeof line, idx)) {
        if (line[0] == '#') continue;
        char name[64], preset[32], clip[8], file[128];
        unsigned seed;
        size_t n, n_mels, frames;
        assert_int_equal(sscanf(line, "%63s %31s %7s %u %zu %zu %zu %127s", name, preset, clip, &seed, &n, &n_mels,
                                &frames, file), 8);
        xtts_mel_params p;
        xtts_error err;
        assert_int_equal(xtts_mel_preset(preset, &p, &err), XTTS_OK);
        for (int i = 0; i < N_PRESETS; i++) if (!strcmp(PRESETS[i], preset)) presets_seen[i] = 1;
        p.n_mels = (int)n_mels;
        assert_int_equal(xtts_mel_n_frames(&p, n), frames);
        char path[256];
        snprintf(path, sizeof path, GOLDEN_DIR "%s", file);
        float *gold = read_f32(path, n_mels * frames);
        float *x = make_clip(seed, n, p.sample_rate);
        xtts_mel *m;
        xtts_mel_new(&p, &m, &err);
        assert_non_null(m);
        size_t stride = frames + 3; /* exercise a stride wider than the clip */
        float *out = malloc(sizeof(float) * n_mels * stride);
        size_t got = 0;
        float pad = 0.0f;
        assert_int_equal(xtts_mel_compute(m, x, n, out, stride, &got, &pad, &err), XTTS_OK);
        assert_int_equal(got, frames);
        double worst = 0.0;
        for (size_t c = 0; c < n_mels; c++)
            for (size_t t = 0; t < frames; t++) {
                double d = fabs((double)out[c * stride + t] - gold[c * frames + t]);
                if (d > worst) worst = d;
            }
        printf("  %-14s %zu x %zu frames, max |diff| %.2e\n", name, n_mels, frames, worst);
        assert_true(worst <= 1e-3);
        if (!p.whisper_post) assert_true(pad == xtts_mel_pad_value(&p));
        xtts_mel_delete(m);
        free(out);
        free(x);
        free(gold);
        cases++;
    }
    fclose(idx);
    assert_true(cases >= 10);
    for (int i = 0; i < N_PRESETS; i++) assert_true(presets_seen[i]);
}

static void check_filterbank(const char *preset, const char *file) {
    xtts_mel_params p;
    xtts_error err;
    xtts_mel_preset(preset, &p, &err);
    int n_bins = p.n_fft / 2 + 1;
    float *fb = malloc(sizeof(float) * (size_t)p.n_mels * n_bins);
    assert_int_equal(xtts_mel_filterbank(&p, fb, &err), XTTS_OK);
    FILE *f = fopen(file, "r");
    assert_non_null(f);
    char header[256];
    assert_non_null(fgets(header, sizeof header, f));
    for (int c = 0; c < p.n_mels; c++) {
        int first, count;
        assert_int_equal(fscanf(f, "%d %d", &first, &count), 2);
        for (int k = 0; k < n_bins; k++) {
            double want = 0.0;
            if (k >= first && k < first + count) assert_int_equal(fscanf(f, "%lf", &want), 1);
            double got = fb[(size_t)c * n_bins + k];
            assert_float_equal(got, want, 1e-6 * fabs(want) + 1e-12);
        }
    }
    fclose(f);
    free(fb);
}

static void test_dense_filterbanks_match_librosa_formula_for_htk_and_slaney(void **state) {
    (void)state;
    check_filterbank("xtts", GOLDEN_DIR "fb_xtts.txt");
    check_filterbank("whisper", GOLDEN_DIR "fb_whisper.txt");
}

static void test_silence_gives_the_log_floor_everywhere(void **state) {
    (void)state;
    for (int i = 0; i < N_PRESETS; i++) {
        xtts_mel_params p;
        xtts_error err;
        xtts_mel_preset(PRESETS[i], &p, &err);
        size_t n = 5000, frames = xtts_mel_n_frames(&p, n);
        float *x = calloc(n, sizeof *x), *out = malloc(sizeof(float) * p.n_mels * frames);
        xtts_mel *m;
        xtts_mel_new(&p, &m, &err);
        float pad;
        size_t got;
        assert_int_equal(xtts_mel_compute(m, x, n, out, frames, &got, &pad, &err), XTTS_OK);
        /* magnitude with eps: sqrt(eps) may exceed the floor; otherwise the floor itself */
        float want = p.power == 1 && p.mag_eps > 0 ? NAN : xtts_mel_pad_value(&p);
        if (p.whisper_post) want = (-10.0f + 4.0f) / 4.0f; /* max is the floor itself */
        for (size_t j = 0; j < (size_t)p.n_mels * frames; j++) {
            assert_false(isnan(out[j]));
            if (!isnan(want)) assert_float_equal(out[j], want, 1e-6);
        }
        if (!isnan(want)) assert_float_equal(pad, want, 1e-6);
        xtts_mel_delete(m);
        free(x);
        free(out);
    }
}

static void test_clip_shorter_than_one_frame_is_rejected(void **state) {
    (void)state;
    xtts_mel_params p;
    xtts_error err;
    xtts_mel_preset("xtts", &p, &err);
    xtts_mel *m;
    xtts_mel_new(&p, &m, &err);
    float x[512] = {0}, out[80 * 4];
    size_t frames = 99;
    assert_int_equal(xtts_mel_compute(m, x, 512, out, 4, &frames, NULL, &err), XTTS_EINPUT);
    assert_int_equal(frames, 0);
    assert_non_null(strstr(err.msg, "shorter than one frame"));
    assert_int_equal(xtts_mel_compute(m, x, 0, out, 4, &frames, NULL, &err), XTTS_EINPUT);
    xtts_mel_delete(m);
}

static void test_output_stride_smaller_than_frames_is_refused(void **state) {
    (void)state;
    xtts_mel_params p;
    xtts_error err;
    xtts_mel_preset("xtts", &p, &err);
    xtts_mel *m;
    xtts_mel_new(&p, &m, &err);
    float *x = make_clip(1, 7000, 22050), *out = malloc(sizeof(float) * 80 * 28);
    size_t frames;
    assert_int_equal(xtts_mel_compute(m, x, 7000, out, 27, &frames, NULL, &err), XTTS_ERANGE);
    xtts_mel_delete(m);
    free(x);
    free(out);
}

/* Same bytes from a reused context, a fresh one, and contexts made and used concurrently. */
static void test_output_bytes_identical_across_contexts_and_threads(void **state) {
    (void)state;
    xtts_mel_params p;
    xtts_error err;
    xtts_mel_preset("xtts", &p, &err);
    size_t n = 22050 * 3;
    float *x = make_clip(7, n, p.sample_rate);
    size_t frames = xtts_mel_n_frames(&p, n), cells = (size_t)p.n_mels * frames;
    float *ref = malloc(sizeof(float) * cells);
    xtts_mel *m;
    xtts_mel_new(&p, &m, &err);
    assert_int_equal(xtts_mel_compute(m, x, n, ref, frames, NULL, NULL, &err), XTTS_OK);
    float *again = malloc(sizeof(float) * cells);
    assert_int_equal(xtts_mel_compute(m, x, n, again, frames, NULL, NULL, &err), XTTS_OK);
    assert_memory_equal(ref, again, sizeof(float) * cells);
    xtts_mel_delete(m);
    int mismatches = 0;
#pragma omp parallel for num_threads(4) reduction(+ : mismatches)
    for (int k = 0; k < 8; k++) {
        xtts_error e;
        xtts_mel *mk;
        xtts_mel_new(&p, &mk, &e);
        float *o = malloc(sizeof(float) * cells);
        if (!mk || !o || xtts_mel_compute(mk, x, n, o, frames, NULL, NULL, &e) != XTTS_OK ||
            memcmp(o, ref, sizeof(float) * cells) != 0)
            mismatches++;
        free(o);
        xtts_mel_delete(mk);
    }
    assert_int_equal(mismatches, 0);
    free(x);
    free(ref);
    free(again);
}

/* Overrides over a preset, with the values that depend on them following. */
static void test_overrides_follow_the_dependent_values(void **state) {
    (void)state;
    xtts_mel_overrides ov;
    xtts_mel_params p;
    xtts_error e;
    xtts_mel_overrides_defaults(&ov);
    ov.sample_rate = 16000; /* hifigan's fmax 8000 fits; vits' 11025 is capped at Nyquist */
    assert_int_equal(xtts_mel_params_derive("vits", &ov, &p, &e), XTTS_OK);
    assert_true(p.fmax_hz == 8000.0);
    ov.fmax = 7600; /* given: kept */
    assert_int_equal(xtts_mel_params_derive("vits", &ov, &p, &e), XTTS_OK);
    assert_true(p.fmax_hz == 7600.0);
    xtts_mel_overrides_defaults(&ov);
    ov.n_fft = 512; /* the preset's 1024-sample window no longer fits: capped */
    assert_int_equal(xtts_mel_params_derive("xtts", &ov, &p, &e), XTTS_OK);
    assert_int_equal(p.win_samples, 512);
    xtts_mel_overrides_defaults(&ov);
    ov.n_fft = 800;
    ov.hop = 200; /* hifigan does not center: its reflect padding follows */
    assert_int_equal(xtts_mel_params_derive("hifigan", &ov, &p, &e), XTTS_OK);
    assert_int_equal(p.pad_samples, 300);
    xtts_mel_overrides_defaults(&ov);
    ov.win = 4096; /* larger than n_fft: refused by the check */
    assert_int_equal(xtts_mel_params_derive("xtts", &ov, &p, &e), XTTS_EUSAGE);
    assert_int_equal(xtts_mel_params_derive("nope", &ov, &p, &e), XTTS_EUSAGE);
}

/* The CPU batch engine gives, for every clip of a batch, the bytes, frame count and pad value
 * xtts_mel_compute gives (whisper: a pad value per clip), into strided outputs; a clip too
 * short for one frame fails the batch naming its index. */
static void test_cpu_batch_engine_equals_the_cpu_path_clip_for_clip(void **state) {
    (void)state;
    const char *presets[] = {"xtts", "whisper"};
    for (size_t pi = 0; pi < 2; pi++) {
        xtts_mel_params p;
        xtts_error err;
        xtts_error_clear(&err);
        assert_int_equal(xtts_mel_preset(presets[pi], &p, &err), XTTS_OK);
        enum { N = 3 };
        size_t n_samples[N] = {(size_t)p.sample_rate / 2, (size_t)p.sample_rate * 2, 4000};
        const float *samples[N];
        float *out[N], *ref[N], pads[N], ref_pad[N];
        size_t stride[N], frames[N], ref_frames[N];
        xtts_mel *m;
        xtts_mel_batch *b;
        assert_int_equal(xtts_mel_new(&p, &m, &err), XTTS_OK);
        assert_int_equal(xtts_mel_batch_new_cpu(&p, &b, &err), XTTS_OK);
        assert_string_equal(xtts_mel_batch_engine_name(b), "cpu");
        for (int k = 0; k < N; k++) {
            samples[k] = make_clip(11 + (uint32_t)k, n_samples[k], p.sample_rate);
            stride[k] = xtts_mel_n_frames(&p, n_samples[k]) + 5; /* padded, as a cache pads */
            out[k] = calloc((size_t)p.n_mels * stride[k], sizeof(float));
            ref[k] = calloc((size_t)p.n_mels * stride[k], sizeof(float));
            assert_int_equal(xtts_mel_compute(m, samples[k], n_samples[k], ref[k], stride[k], &ref_frames[k],
                                              &ref_pad[k], &err), XTTS_OK);
        }
        assert_int_equal(xtts_mel_batch_compute(b, N, samples, n_samples, out, stride, frames, pads, &err), XTTS_OK);
        for (int k = 0; k < N; k++) {
            assert_int_equal(frames[k], ref_frames[k]);
            assert_memory_equal(&pads[k], &ref_pad[k], sizeof(float));
            assert_memory_equal(out[k], ref[k], sizeof(float) * (size_t)p.n_mels * stride[k]);
        }
        size_t short_n[N] = {n_samples[0], 100, n_samples[2]};
        assert_int_equal(xtts_mel_batch_compute(b, N, samples, short_n, out, stride, frames, NULL, &err), XTTS_EINPUT);
        assert_non_null(strstr(err.msg, "clip 1"));
        for (int k = 0; k < N; k++) {
            free((void *)samples[k]);
            free(out[k]);
            free(ref[k]);
        }
        xtts_mel_batch_delete(b);
        xtts_mel_delete(m);
    }
    xtts_mel_batch_delete(NULL);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_presets_carry_their_reference_parameters),
        cmocka_unit_test(test_unknown_preset_is_a_usage_error),
        cmocka_unit_test(test_params_check_rejects_inconsistent_fields),
        cmocka_unit_test(test_overrides_follow_the_dependent_values),
        cmocka_unit_test(test_frame_counts_follow_centering_padding_and_dropped_frame),
        cmocka_unit_test(test_shared_math_matches_the_formulas),
        cmocka_unit_test(test_vector_log_equals_scalar_log_bit_for_bit),
        cmocka_unit_test(test_every_preset_matches_golden_within_1e3_on_every_cell),
        cmocka_unit_test(test_dense_filterbanks_match_librosa_formula_for_htk_and_slaney),
        cmocka_unit_test(test_silence_gives_the_log_floor_everywhere),
        cmocka_unit_test(test_clip_shorter_than_one_frame_is_rejected),
        cmocka_unit_test(test_output_stride_smaller_than_frames_is_refused),
        cmocka_unit_test(test_output_bytes_identical_across_contexts_and_threads),
        cmocka_unit_test(test_cpu_batch_engine_equals_the_cpu_path_clip_for_clip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
