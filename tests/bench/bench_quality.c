/* bench_quality.c — the cost of the quality metrics (xtts_quality_measure) beside the xtts
 * preset's log-mel (xtts_mel_compute) on the same clips, one core, per hour of audio.
 * The audio is speech-like: a 120 Hz pulse train through three formant resonators, breath
 * noise, syllables of 150-250 ms at a random level and pauses, so the speech/silence
 * decision and the spectrum frames run as they do on speech. Prints one line each:
 *   <what> <seconds per hour of audio>
 * Usage: bench_quality [SECONDS_OF_AUDIO (default 600) [CLIP_SECONDS (default 10)]]
 * Built and run by scripts/bench_quality.sh. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/mel.h"
#include "kernels/quality.h"

#define ROUNDS 15

static double uniform(uint64_t *s) { return (double)(xtts_splitmix64(s) >> 11) / 9007199254740992.0; }

/* A two-pole resonator at f Hz with bandwidth bw Hz. */
typedef struct {
    double a1, a2, y1, y2;
} resonator;

static resonator resonator_at(double f, double bw, int sr) {
    double r = exp(-M_PI * bw / sr);
    return (resonator){2 * r * cos(2 * M_PI * f / sr), -r * r, 0, 0};
}

static double resonate(resonator *z, double x) {
    double y = x + z->a1 * z->y1 + z->a2 * z->y2;
    z->y2 = z->y1;
    z->y1 = y;
    return y;
}

static float *make_speechlike(size_t n, int sr, uint64_t seed) {
    float *x = calloc(n, sizeof *x);
    resonator f1 = resonator_at(600, 90, sr), f2 = resonator_at(1500, 120, sr), f3 = resonator_at(2600, 160, sr);
    size_t i = 0, period = (size_t)(sr / 120.0);
    while (i < n) {
        size_t syl = (size_t)((0.15 + 0.1 * uniform(&seed)) * sr), pause = uniform(&seed) < 0.3 ? (size_t)(0.2 * sr) : 0;
        double level = 0.02 + 0.05 * uniform(&seed);
        for (size_t k = 0; k < syl && i < n; k++, i++) {
            double env = sin(M_PI * (double)k / syl), src = (i % period == 0) ? 1.0 : 0.0;
            double v = resonate(&f3, resonate(&f2, resonate(&f1, src))) * 0.02 + 0.02 * (uniform(&seed) - 0.5);
            x[i] = (float)(level * env * v * 10);
        }
        i += pause;
    }
    return x;
}

#define TIME_RUN(expr, seconds_audio, out)                       \
    do {                                                         \
        double t0_ = xtts_now_s();                               \
        expr;                                                    \
        (out) = (xtts_now_s() - t0_) * 3600.0 / (seconds_audio); \
    } while (0)

int main(int argc, char **argv) {
    double seconds = argc > 1 ? atof(argv[1]) : 600.0, clip_seconds = argc > 2 ? atof(argv[2]) : 10.0;
    if (!(seconds > 1.0) || !(clip_seconds >= 0.5) || clip_seconds > seconds) {
        fprintf(stderr, "usage: bench_quality [SECONDS_OF_AUDIO [CLIP_SECONDS]]\n");
        return 1;
    }
    xtts_mel_params p;
    xtts_error err;
    xtts_mel_preset("xtts", &p, &err);
    int sr = p.sample_rate;
    size_t n = (size_t)(seconds * sr), clip = (size_t)(clip_seconds * sr), n_clips = n / clip;
    float *x = make_speechlike(n, sr, 42);
    size_t frames = xtts_mel_n_frames(&p, clip);
    float *out = malloc(sizeof(float) * frames * p.n_mels);
    xtts_mel *m = NULL;
    xtts_quality_state *q = NULL;
    if (xtts_mel_new(&p, &m, &err) || xtts_quality_state_new(&q, &err)) {
        fprintf(stderr, "bench_quality: %s\n", err.msg);
        return 2;
    }
    double audio_s = (double)(n_clips * clip) / sr, mel_s = 1e30, quality_s = 1e30, v;
    xtts_quality_metrics qm;
    double snr_sum = 0;
    /* rounds alternate the two and keep each one's best */
    for (int r = 0; r < ROUNDS; r++) {
        TIME_RUN(for (size_t k = 0; k < n_clips; k++) xtts_mel_compute(m, x + k * clip, clip, out, frames, NULL, NULL, &err),
                 audio_s, v);
        if (v < mel_s) mel_s = v;
        TIME_RUN(for (size_t k = 0; k < n_clips; k++) {
            xtts_quality_measure(q, x + k * clip, clip, sr, sr, 150, 120, &qm, &err);
            snr_sum += qm.snr_db;
        }, audio_s, v);
        if (v < quality_s) quality_s = v;
    }
    printf("# one core, %.0f s of speech-like audio at %d Hz in %.1f s clips, best of %d alternating rounds;"
           " seconds per hour of audio (last clip: speech %.2f s, SNR %.1f dB, bandwidth %.0f Hz)\n",
           audio_s, sr, clip_seconds, ROUNDS, qm.speech_s, qm.snr_db, qm.bandwidth_hz);
    printf("mel_xtts %.4f\n", mel_s);
    printf("quality %.4f\n", quality_s);
    xtts_mel_delete(m);
    xtts_quality_state_delete(q);
    free(out);
    free(x);
    return snr_sum == 12345.0;
}
