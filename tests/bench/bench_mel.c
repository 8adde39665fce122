/* bench_mel.c — log-mel throughput on one core, per hour of audio, for each preset, beside
 * the STFT floor it is built on: FFTW's bare r2c transforms of the same frames, and r2c with
 * window and power. Prints one line per measurement:
 *   <what> <seconds per hour of audio>
 * Usage: bench_mel [SECONDS_OF_AUDIO (default 600)]
 * Built and run by scripts/bench_mel.sh. */
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

/* Best of three runs, in seconds per hour of audio. */
#define BEST_OF(expr, seconds_audio, out)                   \
    do {                                                    \
        double best_ = 1e30;                                \
        for (int rep_ = 0; rep_ < 3; rep_++) {              \
            double t0_ = xtts_now_s();                      \
            expr;                                           \
            double dt_ = xtts_now_s() - t0_;                \
            if (dt_ < best_) best_ = dt_;                   \
        }                                                   \
        (out) = best_ * 3600.0 / (seconds_audio);           \
    } while (0)

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
    BEST_OF(
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
    if (!(seconds > 1.0)) { fprintf(stderr, "usage: bench_mel [SECONDS_OF_AUDIO]\n"); return 1; }
    const char *presets[] = {"xtts", "hifigan", "vits", "tacotron2", "whisper"};
    printf("# one core, %.0f s of audio per run, best of 3; seconds per hour of audio\n", seconds);
    for (int i = 0; i < 5; i++) {
        xtts_mel_params p;
        xtts_error err;
        xtts_mel_preset(presets[i], &p, &err);
        size_t n = (size_t)(seconds * p.sample_rate);
        float *x = make_audio(n, p.sample_rate);
        size_t frames = xtts_mel_n_frames(&p, n);
        float *out = malloc(sizeof(float) * frames * p.n_mels);
        xtts_mel *m = xtts_mel_new(&p, &err);
        double mel_s, floor_bare, floor_wp, floor_wp_measure;
        BEST_OF(xtts_mel_compute(m, x, n, out, frames, NULL, NULL, &err), seconds, mel_s);
        stft_floor(&p, x, n, FFTW_ESTIMATE, 0, &floor_bare, seconds);
        stft_floor(&p, x, n, FFTW_ESTIMATE, 1, &floor_wp, seconds);
        stft_floor(&p, x, n, FFTW_MEASURE, 1, &floor_wp_measure, seconds);
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
