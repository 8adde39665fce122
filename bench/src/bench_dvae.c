/* bench_dvae.c — the DVAE encoder (kernels/dvae.h) at XTTS-v2's sizes on the CPU: random
 * weights, random log-mel clips, the threads OpenMP is given (OMP_NUM_THREADS).
 *
 * Usage: bench_dvae SECONDS_AUDIO CLIP_SECONDS [REPEATS]
 * Output lines "name value": ours_s (the best of REPEATS passes over the clips, seconds),
 * gflop (the encoder's and the search's floating-point operations, multiply-adds counted
 * twice, as tests/tools/dvae-codes counts them), audio_s (seconds of audio encoded). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "kernels/dvae.h"

static double xtts_bench_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static float xtts_bench_rand(unsigned long long *s) {
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (float)((*s >> 40) & 0xFFFFFF) / 16777216.0f - 0.5f;
}

static float *xtts_bench_fill(size_t n, float scale, unsigned long long *s) {
    float *p = malloc(n * sizeof(float));
    if (!p) exit(2);
    for (size_t i = 0; i < n; i++) p[i] = scale * xtts_bench_rand(s);
    return p;
}

static double xtts_bench_flops(const xtts_dvae_config *c, size_t frames) {
    double t1 = (double)((frames + 1) / 2), t2 = (double)xtts_dvae_codes_len(frames), h = c->hidden, in = 2.0 * h;
    double macs = t1 * h * c->channels * 3 + t2 * in * h * 3 + 3 * t2 * (2 * in * in * 3 + in * in) +
                  t2 * c->codebook_dim * in + t2 * c->codebook_dim * c->num_tokens;
    return 2 * macs;
}

static void xtts_bench_weights(xtts_dvae_weights *w, unsigned long long *s) {
    xtts_dvae_config c = {80, 512, 512, 1024};
    int in = 2 * c.hidden;
    w->cfg = c;
    w->conv0_w = xtts_bench_fill((size_t)c.hidden * c.channels * 3, 0.2f, s);
    w->conv0_b = xtts_bench_fill((size_t)c.hidden, 0.1f, s);
    w->conv1_w = xtts_bench_fill((size_t)in * c.hidden * 3, 0.05f, s);
    w->conv1_b = xtts_bench_fill((size_t)in, 0.1f, s);
    for (int b = 0; b < XTTS_DVAE_RES_BLOCKS; b++)
        for (int k = 0; k < 3; k++) {
            w->res_w[b][k] = xtts_bench_fill((size_t)in * in * (k < 2 ? 3 : 1), 0.03f, s);
            w->res_b[b][k] = xtts_bench_fill((size_t)in, 0.1f, s);
        }
    w->proj_w = xtts_bench_fill((size_t)c.codebook_dim * in, 0.05f, s);
    w->proj_b = xtts_bench_fill((size_t)c.codebook_dim, 0.1f, s);
    w->codebook = xtts_bench_fill((size_t)c.codebook_dim * c.num_tokens, 1.0f, s);
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: bench_dvae SECONDS_AUDIO CLIP_SECONDS [REPEATS]\n");
        return 1;
    }
    double total = atof(argv[1]), clip = atof(argv[2]);
    int repeats = argc > 3 ? atoi(argv[3]) : 3;
    unsigned long long seed = 38;
    xtts_dvae_weights w;
    xtts_bench_weights(&w, &seed);
    xtts_dvae *d;
    xtts_error err;
    if (xtts_dvae_new(&w, &d, &err) != XTTS_OK) return 2;
    size_t frames = (size_t)(clip * 22050.0 / 256.0), nclips = (size_t)(total / clip + 0.5);
    if (nclips < 1) nclips = 1;
    float *mel = xtts_bench_fill(80 * frames, 4.0f, &seed);
    uint16_t *codes = malloc(xtts_dvae_codes_len(frames) * sizeof(uint16_t));
    double best = 1e30;
    for (int r = 0; r < repeats; r++) {
        double t0 = xtts_bench_now();
        for (size_t k = 0; k < nclips; k++)
            if (xtts_dvae_encode(d, mel, frames, codes, NULL, &err) != XTTS_OK) return 2;
        double t = xtts_bench_now() - t0;
        if (t < best) best = t;
    }
    printf("ours_s %.4f\ngflop %.4f\naudio_s %.3f\n", best, nclips * xtts_bench_flops(&w.cfg, frames) * 1e-9,
           (double)(nclips * frames) * 256.0 / 22050.0);
    xtts_dvae_delete(d);
    return 0;
}
