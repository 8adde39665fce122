/* bench_mel.c — log-mel throughput on one core, per hour of audio, for each preset, beside
 * the STFT floor it is built on: FFTW's bare r2c transforms of the same frames, and r2c with
 * window and power. Prints one line per measurement:
 *   <what> <seconds per hour of audio>
 * The mel is computed clip by clip (CLIP_SECONDS each, as a dataset's utterances come), the
 * floors over the same audio as one stream.
 * FFTW's planner here shares the process's wisdom, which includes the built-in wisdom the mel
 * contexts import, so "estimate" floors use the same plans as the mel where the wisdom fits.
 * Usage: bench_mel [SECONDS_OF_AUDIO (default 600) [CLIP_SECONDS (default 10)]]
 * Built and run by bench/mel.sh. */
#include <fftw3.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/mel.h"
#include "kernels/mel_math.h"

static float *make_audio(size_t n, int sr) {
    float *x = malloc(n * sizeof *x);
    uint32_t s = 12345;
    for (size_t i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        double t = (double)i / sr;
        x[i] = (float)(0.3 * sin(2 * M_PI * 220.0 * t) + 0.1 * sin(2 * M_PI * 3150.0 * t) +
                       0.05 * ((double)(s >> 8) / 16777216.0 - 0.5));
    }
    return x;
}

/* One timed run, in seconds per hour of audio. */
#define TIME_RUN(expr, seconds_audio, out)                  \
    do {                                                    \
        double t0_ = xtts_now_s();                          \
        expr;                                               \
        (out) = (xtts_now_s() - t0_) * 3600.0 / (seconds_audio); \
    } while (0)

#define ROUNDS 15

static double sink;

static void stft_floor(const xtts_mel_params *p, const float *x, size_t n, unsigned flags, int with_window_power,
                       double *per_hour, double seconds) {
    int n_fft = p->n_fft, n_bins = n_fft / 2 + 1;
    float *in = fftwf_malloc(sizeof(float) * n_fft), *win = fftwf_malloc(sizeof(float) * n_fft);
    float *pw = fftwf_malloc(sizeof(float) * n_bins);
    fftwf_complex *out = fftwf_malloc(sizeof(fftwf_complex) * n_bins);
    fftwf_plan plan = fftwf_plan_dft_r2c_1d(n_fft, in, out, flags);
    for (int j = 0; j < n_fft; j++) win[j] = xtts_stft_window(j, n_fft, p->win_samples);
    size_t frames = (n - n_fft) / p->hop_samples + 1;
    TIME_RUN(
        {
            double acc = 0;
            for (size_t t = 0; t < frames; t++) {
                const float *src = x + t * p->hop_samples;
                if (with_window_power) {
                    for (int j = 0; j < n_fft; j++) in[j] = src[j] * win[j];
                } else {
                    memcpy(in, src, sizeof(float) * n_fft);
                }
                fftwf_execute(plan);
                if (with_window_power) {
                    for (int k = 0; k < n_bins; k++) pw[k] = out[k][0] * out[k][0] + out[k][1] * out[k][1];
                    acc += pw[t % n_bins];
                } else {
                    acc += out[t % n_bins][0];
                }
            }
            sink += acc;
        },
        seconds, *per_hour);
    fftwf_destroy_plan(plan);
    fftwf_free(in);
    fftwf_free(win);
    fftwf_free(pw);
    fftwf_free(out);
}

int main(int argc, char **argv) {
    double seconds = argc > 1 ? atof(argv[1]) : 600.0;
    double clip_seconds = argc > 2 ? atof(argv[2]) : 10.0;
    if (!(seconds > 1.0) || !(clip_seconds >= 0.1) || clip_seconds > seconds) {
        fprintf(stderr, "usage: bench_mel [SECONDS_OF_AUDIO [CLIP_SECONDS]]\n");
        return 1;
    }
    const char *presets[] = {"xtts", "hifigan", "vits", "tacotron2", "whisper"};
    printf("# one core, %.0f s of audio per run in %.1f s clips, best of 15 alternating rounds; seconds per hour of audio\n", seconds,
           clip_seconds);
    for (int i = 0; i < 5; i++) {
        xtts_mel_params p;
        xtts_error err;
        xtts_mel_preset(presets[i], &p, &err);
        size_t n = (size_t)(seconds * p.sample_rate);
        float *x = make_audio(n, p.sample_rate);
        size_t clip = (size_t)(clip_seconds * p.sample_rate), n_clips = n / clip;
        size_t frames = xtts_mel_n_frames(&p, clip);
        float *out = malloc(sizeof(float) * frames * p.n_mels);
        xtts_mel *m;
        xtts_mel_new(&p, &m, &err);
        /* Rounds alternate the four measurements and keep each one's best, so a burst of
         * other load on the machine hits them alike. */
        double mel_s = 1e30, floor_bare = 1e30, floor_wp = 1e30, floor_wp_measure = 1e30, v;
        for (int r = 0; r < ROUNDS; r++) {
            TIME_RUN(for (size_t k = 0; k < n_clips; k++)
                         xtts_mel_compute(m, x + k * clip, clip, out, frames, NULL, NULL, &err),
                     (double)(n_clips * clip) / p.sample_rate, v);
            if (v < mel_s) mel_s = v;
            stft_floor(&p, x, n, FFTW_ESTIMATE, 0, &v, seconds);
            if (v < floor_bare) floor_bare = v;
            stft_floor(&p, x, n, FFTW_ESTIMATE, 1, &v, seconds);
            if (v < floor_wp) floor_wp = v;
            stft_floor(&p, x, n, FFTW_MEASURE, 1, &v, seconds);
            if (v < floor_wp_measure) floor_wp_measure = v;
        }
        printf("mel_%s %.3f\n", presets[i], mel_s);
        printf("fftw_r2c_%s %.3f\n", presets[i], floor_bare);
        printf("fftw_r2c_window_power_%s %.3f\n", presets[i], floor_wp);
        printf("fftw_r2c_window_power_measure_%s %.3f\n", presets[i], floor_wp_measure);
        xtts_mel_delete(m);
        free(out);
        free(x);
    }
    return sink == 42.0;
}
