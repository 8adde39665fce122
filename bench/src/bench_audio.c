/* bench_audio.c — every resampler option of prep/audio/audio.h on one core: seconds per hour of
 * 44.1 kHz input resampled to 22.05 kHz and to 16 kHz, and the SNR of each against in-band
 * tones computed in double (1 kHz + 7 kHz kept, 15 kHz to be removed; as tests/test_audio.c).
 * Prints: <resampler> <quality> <out_rate> <s_per_hour> <snr_db>
 * Usage: bench_audio [SECONDS_OF_AUDIO (default 300)]
 * Built and run by bench/mel.sh. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prep/audio/audio.h"

static double two_tones(double t) { return 0.4 * sin(2.0 * M_PI * 1000.0 * t) + 0.2 * sin(2.0 * M_PI * 7000.0 * t); }

int main(int argc, char **argv) {
    double seconds = argc > 1 ? atof(argv[1]) : 300.0;
    if (!(seconds >= 1.0)) { fprintf(stderr, "usage: bench_audio [SECONDS_OF_AUDIO]\n"); return 1; }
    const int in_rate = 44100;
    size_t n = (size_t)(seconds * in_rate);
    float *x = malloc(n * sizeof *x);
    for (size_t i = 0; i < n; i++) {
        double t = (double)i / in_rate;
        x[i] = (float)(two_tones(t) + 0.2 * sin(2.0 * M_PI * 15000.0 * t));
    }
    const char *opts[][2] = {{"soxr", "quick"}, {"soxr", "low"}, {"soxr", "mq"}, {"soxr", "hq"}, {"soxr", "vhq"},
                             {"libsamplerate", "sinc_fastest"}, {"libsamplerate", "sinc_medium"},
                             {"libsamplerate", "sinc_best"}, {"libsamplerate", "linear"}, {"libsamplerate", "zoh"}};
    const int out_rates[] = {22050, 16000};
    printf("# one core, %.0f s of 44.1 kHz input per run, best of 5\n", seconds);
    printf("# resampler quality out_rate s_per_hour_of_input snr_db\n");
    for (size_t r = 0; r < 2; r++)
        for (size_t o = 0; o < sizeof opts / sizeof opts[0]; o++) {
            xtts_audio_options ao;
            memset(&ao, 0, sizeof ao);
            ao.target_rate = out_rates[r];
            snprintf(ao.resampler, sizeof ao.resampler, "%s", opts[o][0]);
            snprintf(ao.quality, sizeof ao.quality, "%s", opts[o][1]);
            xtts_error err;
            xtts_audio *a;
            xtts_audio_new(&ao, &a, &err);
            if (!a) { fprintf(stderr, "%s\n", err.msg); return 2; }
            const float *y = NULL;
            size_t m = 0;
            double best = 1e30;
            int reps = 5;
            for (int rep = 0; rep < reps; rep++) {
                double t0 = xtts_now_s();
                if (xtts_audio_resample(a, x, n, in_rate, &y, &m, &err)) { fprintf(stderr, "%s\n", err.msg); return 2; }
                double dt = xtts_now_s() - t0;
                if (dt < best) best = dt;
            }
            size_t edge = (size_t)(0.05 * out_rates[r]);
            double sig = 0, noise = 0;
            for (size_t i = edge; i + edge < m; i++) {
                double ref = two_tones((double)i / out_rates[r]);
                sig += ref * ref;
                noise += (y[i] - ref) * (y[i] - ref);
            }
            printf("%s %s %d %.3f %.1f\n", opts[o][0], opts[o][1], out_rates[r], best * 3600.0 / seconds,
                   10.0 * log10(sig / (noise > 0 ? noise : 1e-300)));
            fflush(stdout);
            xtts_audio_delete(a);
        }
    free(x);
    return 0;
}
