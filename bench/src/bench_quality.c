/* bench_quality.c — the cost of the quality metrics (xtts_quality_measure) beside the xtts
 * preset's log-mel (xtts_mel_compute) on the same clips, one core, per hour of audio.
 * The audio is speech-like: a 120 Hz pulse train through three formant resonators, breath
 * noise, syllables of 150-250 ms at a random level and pauses, so the speech/silence
 * decision and the spectrum frames run as they do on speech. Prints one line each:
 *   <what> <seconds per hour of audio>
 * With --wavs LIST the clips are instead the files LIST names (one path a line), decoded and
 * resampled to 22,050 Hz by the audio front end, up to SECONDS_OF_AUDIO, each timed as a
 * clip of its own length (as a build measures them).
 * Usage: bench_quality [--wavs LIST] [SECONDS_OF_AUDIO (default 600) [CLIP_SECONDS (default 10)]]
 * Built and run by bench/quality.sh. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/mel.h"
#include "kernels/quality.h"
#include "prep/audio/audio.h"

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

/* Clips from the files list names, at rate, up to max_seconds: their samples one after the
 * other in *out, clip k at [start[k], start[k + 1]). Returns the clip count (0 on failure). */
static size_t load_list(const char *list, int rate, double max_seconds, float **out, size_t **start) {
    FILE *f = fopen(list, "r");
    xtts_audio_options ao = {.target_rate = rate};
    xtts_audio *au = NULL;
    xtts_error e;
    if (!f || xtts_audio_new(&ao, &au, &e)) return 0;
    size_t n = 0, cap = 0, k = 0, kcap = 0;
    float *x = NULL;
    size_t *st = NULL;
    char path[4096];
    while (fgets(path, sizeof path, f) && (double)n < max_seconds * rate) {
        path[strcspn(path, "\r\n")] = '\0';
        const float *y;
        size_t ny;
        if (!*path || xtts_audio_load(au, path, &y, &ny, NULL, &e)) continue;
        if (n + ny > cap) x = realloc(x, (cap = 2 * (n + ny)) * sizeof *x);
        if (k + 2 > kcap) st = realloc(st, (kcap = 2 * (k + 2)) * sizeof *st);
        memcpy(x + n, y, ny * sizeof *x);
        st[k++] = n;
        n += ny;
    }
    fclose(f);
    xtts_audio_delete(au);
    if (k) st[k] = n;
    *out = x;
    *start = st;
    return k;
}

/* CPU time of this thread, not wall time: on a shared machine the wall clock also counts the
 * time other processes hold the core, which hits the two measurements unequally. */
static double thread_cpu_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv) {
    const char *list = NULL;
    if (argc > 2 && strcmp(argv[1], "--wavs") == 0) {
        list = argv[2];
        argc -= 2;
        argv += 2;
    }
    double seconds = argc > 1 ? atof(argv[1]) : 600.0, clip_seconds = argc > 2 ? atof(argv[2]) : 10.0;
    if (!(seconds > 1.0) || !(clip_seconds >= 0.5) || clip_seconds > seconds) {
        fprintf(stderr, "usage: bench_quality [--wavs LIST] [SECONDS_OF_AUDIO [CLIP_SECONDS]]\n");
        return 1;
    }
    xtts_mel_params p;
    xtts_error err;
    xtts_mel_preset("xtts", &p, &err);
    int sr = p.sample_rate;
    float *x;
    size_t *start, n_clips, max_clip = 0;
    if (list) {
        n_clips = load_list(list, sr, seconds, &x, &start);
        if (!n_clips) {
            fprintf(stderr, "bench_quality: no audio from %s\n", list);
            return 2;
        }
    } else {
        size_t clip = (size_t)(clip_seconds * sr);
        n_clips = (size_t)(seconds * sr) / clip;
        x = make_speechlike(n_clips * clip, sr, 42);
        start = malloc((n_clips + 1) * sizeof *start);
        for (size_t k = 0; k <= n_clips; k++) start[k] = k * clip;
    }
    for (size_t k = 0; k < n_clips; k++)
        if (start[k + 1] - start[k] > max_clip) max_clip = start[k + 1] - start[k];
    size_t frames = xtts_mel_n_frames(&p, max_clip);
    float *out = malloc(sizeof(float) * frames * p.n_mels);
    xtts_mel *m = NULL;
    xtts_quality_state *q = NULL;
    if (xtts_mel_new(&p, &m, &err) || xtts_quality_state_new(&q, &err)) {
        fprintf(stderr, "bench_quality: %s\n", err.msg);
        return 2;
    }
    double audio_s = (double)start[n_clips] / sr, mel_s = 1e30, quality_s = 1e30, v;
    xtts_quality_metrics qm;
    double snr_sum = 0;
    /* Clip by clip, as a build does: the two run on the same clip one after the other (which
     * one first alternates between rounds, since the first one brings the clip into the
     * cache), each timed on its own; every round keeps each one's best total. */
    for (int r = 0; r < ROUNDS; r++) {
        double mel_t = 0, q_t = 0;
        for (size_t k = 0; k < n_clips; k++) {
            const float *c = x + start[k];
            size_t len = start[k + 1] - start[k];
            for (int step = 0; step < 2; step++) {
                double t0 = thread_cpu_s();
                if ((step == 0) == (r % 2 == 0)) {
                    xtts_mel_compute(m, c, len, out, frames, NULL, NULL, &err);
                    mel_t += thread_cpu_s() - t0;
                } else {
                    xtts_quality_measure(q, c, len, sr, sr, 150, 120, &qm, &err);
                    snr_sum += qm.snr_db;
                    q_t += thread_cpu_s() - t0;
                }
            }
        }
        v = mel_t * 3600.0 / audio_s;
        if (v < mel_s) mel_s = v;
        v = q_t * 3600.0 / audio_s;
        if (v < quality_s) quality_s = v;
    }
    printf("# one core (thread CPU time), %.0f s of %s at %d Hz in %zu clips, best of %d alternating rounds;"
           " seconds per hour of audio (last clip: speech %.2f s, SNR %.1f dB, bandwidth %.0f Hz)\n",
           audio_s, list ? "the listed files' audio" : "speech-like audio", sr, n_clips, ROUNDS, qm.speech_s, qm.snr_db, qm.bandwidth_hz);
    printf("mel_xtts %.4f\n", mel_s);
    printf("quality %.4f\n", quality_s);
    xtts_mel_delete(m);
    xtts_quality_state_delete(q);
    free(out);
    free(x);
    free(start);
    return snr_sum == 12345.0;
}
