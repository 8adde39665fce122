/* test_mel_cuda.c — the CUDA mel API: device detection always gives a reason when it says no,
 * a context on an unusable device (or in a build without CUDA) is refused cleanly with
 * XTTS_EUNSUPPORTED, and, on a machine with a usable device, batches agree with the CPU path
 * within the golden tolerance for every preset, also for batches spanning many groups of the
 * two-stream pipeline (skipped, and reported as skipped, elsewhere). */
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
#include "kernels/mel_cuda.h"

static float *make_clip(uint32_t seed, size_t n, int sr) {
    float *x = malloc(n * sizeof *x);
    uint32_t state = seed;
    for (size_t i = 0; i < n; i++) {
        state = state * 1664525u + 1013904223u;
        double t = (double)i / sr;
        x[i] = (float)((0.1 + 0.9 * (0.5 + 0.5 * sin(2.0 * M_PI * 2.5 * t))) *
                           (0.3 * sin(2.0 * M_PI * 220.0 * t) + 0.1 * sin(2.0 * M_PI * 5000.0 * t)) +
                       0.04 * ((double)(state >> 8) / 16777216.0 - 0.5));
    }
    return x;
}

static void test_device_detection_always_gives_a_reason_for_no(void **state) {
    (void)state;
    char why[256] = "";
    int usable = xtts_cuda_device_usable(0, why, sizeof why);
    if (!usable) assert_true(strlen(why) > 0);
    printf("  cuda:0 %s%s%s\n", usable ? "usable" : "not usable: ", usable ? "" : why, "");
    why[0] = 0;
    assert_int_equal(xtts_cuda_device_usable(-1, why, sizeof why), 0);
    assert_true(strlen(why) > 0);
    assert_int_equal(xtts_cuda_device_usable(4096, NULL, 0), 0);
}

static void test_context_on_an_unusable_device_is_refused_with_eunsupported(void **state) {
    (void)state;
    xtts_mel_params p;
    xtts_error err;
    xtts_mel_preset("xtts", &p, &err);
    /* device 4096 never exists, whether or not this machine has a GPU */
    xtts_error_clear(&err);
    xtts_mel_cuda *none;
    xtts_mel_cuda_new(&p, 4096, 4, 1 << 20, &none, &err);
    assert_null(none);
    assert_int_equal(err.code, XTTS_EUNSUPPORTED);
    assert_non_null(strstr(err.msg, "cuda:4096"));
    if (!xtts_cuda_device_usable(0, NULL, 0)) {
        xtts_error_clear(&err);
        xtts_mel_cuda_new(&p, 0, 4, 1 << 20, &none, &err);
        assert_null(none);
        assert_int_equal(err.code, XTTS_EUNSUPPORTED);
        assert_non_null(strstr(err.msg, "cuda:0"));
    }
    xtts_mel_cuda_delete(NULL);
}

static void test_cuda_batches_match_the_cpu_path_within_1e3(void **state) {
    (void)state;
    if (!xtts_cuda_device_usable(0, NULL, 0)) {
        printf("  no usable CUDA device here: nothing compared\n");
        skip();
    }
    const char *presets[] = {"xtts", "hifigan", "vits", "tacotron2", "whisper"};
    for (int i = 0; i < 5; i++) {
        xtts_mel_params p;
        xtts_error err;
        xtts_mel_preset(presets[i], &p, &err);
        enum { N = 3 };
        size_t n[N] = {7000, 1800, (size_t)p.sample_rate * 3};
        float *x[N], *out[N], *ref[N];
        size_t stride[N], frames[N];
        float pad[N];
        xtts_mel *cpu;
        xtts_mel_new(&p, &cpu, &err);
        xtts_mel_cuda *gpu;
        xtts_mel_cuda_new(&p, 0, N, 1 << 20, &gpu, &err);
        assert_non_null(cpu);
        assert_non_null(gpu);
        for (int k = 0; k < N; k++) {
            x[k] = make_clip(11 + k, n[k], p.sample_rate);
            stride[k] = xtts_mel_n_frames(&p, n[k]) + 5;
            out[k] = calloc((size_t)p.n_mels * stride[k], sizeof(float));
            ref[k] = calloc((size_t)p.n_mels * stride[k], sizeof(float));
        }
        assert_int_equal(xtts_mel_cuda_compute_batch(gpu, N, (const float *const *)x, n, out, stride, frames, pad, &err),
                         XTTS_OK);
        for (int k = 0; k < N; k++) {
            size_t f;
            float cpu_pad;
            assert_int_equal(xtts_mel_compute(cpu, x[k], n[k], ref[k], stride[k], &f, &cpu_pad, &err), XTTS_OK);
            assert_int_equal(frames[k], f);
            assert_float_equal(pad[k], cpu_pad, 1e-3);
            double worst = 0;
            for (int c = 0; c < p.n_mels; c++)
                for (size_t t = 0; t < f; t++) {   /* (not fmax: gcc 12 for aarch64 fails on that reduction, an ICE) */
                    double d = fabs((double)out[k][c * stride[k] + t] - ref[k][c * stride[k] + t]);
                    if (d > worst) worst = d;
                }
            printf("  %s clip %d: %zu frames, max |cuda - cpu| %.2e\n", presets[i], k, f, worst);
            assert_true(worst <= 1e-3);
        }
        /* a clip shorter than one frame fails the batch, naming it */
        size_t short_n[2] = {n[0], 10};
        assert_int_equal(xtts_mel_cuda_compute_batch(gpu, 2, (const float *const *)x, short_n, out, stride, frames,
                                                     NULL, &err),
                         XTTS_EINPUT);
        assert_non_null(strstr(err.msg, "clip 1"));
        for (int k = 0; k < N; k++) { free(x[k]); free(out[k]); free(ref[k]); }
        xtts_mel_cuda_delete(gpu);
        xtts_mel_delete(cpu);
    }
}

/* max |a - b| over clip k's frames; cells past the frames (the stride's slack) must still hold
 * the sentinel the buffer was filled with */
static double clip_diff(const float *a, const float *b, int n_mels, size_t frames, size_t stride) {
    double worst = 0;
    for (int c = 0; c < n_mels; c++) {
        for (size_t t = 0; t < frames; t++) {   /* (not fmax: gcc 12 for aarch64 fails on that reduction, an ICE) */
            double d = fabs((double)a[c * stride + t] - b[c * stride + t]);
            if (d > worst) worst = d;
        }
        for (size_t t = frames; t < stride; t++) assert_true(a[c * stride + t] == 777.0f);
    }
    return worst;
}

/* A batch many times the size of one group of the two-stream pipeline (groups of about 8192
 * frames, alternating streams): a clip larger than a group, many of 0.2-25 s, one of a single
 * FFT length, in an order and then in the reverse order (other group boundaries) on the same
 * context. Every clip agrees with the CPU path, and nothing is written past its frames. */
static void test_cuda_batch_of_many_groups_matches_the_cpu_path_in_any_order(void **state) {
    (void)state;
    if (!xtts_cuda_device_usable(0, NULL, 0)) {
        printf("  no usable CUDA device here: nothing compared\n");
        skip();
    }
    const char *presets[] = {"xtts", "whisper", "vits"};
    for (int i = 0; i < 3; i++) {
        xtts_mel_params p;
        xtts_error err;
        xtts_mel_preset(presets[i], &p, &err);
        enum { N = 24 };
        size_t n[N], total = 0, total_frames = 0;
        uint32_t lcg = 99;
        for (int k = 0; k < N; k++) {
            lcg = lcg * 1664525u + 1013904223u;
            n[k] = (size_t)(p.sample_rate * (0.2 + 24.8 * (double)(lcg >> 8) / 16777216.0));
        }
        n[0] = (size_t)9000 * p.hop_samples; /* more frames than a group */
        n[7] = (size_t)p.n_fft;
        float *x[N], *out[N], *ref[N];
        size_t stride[N], frames[N];
        float ref_pad[N];
        xtts_mel *cpu;
        xtts_mel_new(&p, &cpu, &err);
        assert_non_null(cpu);
        for (int k = 0; k < N; k++) {
            x[k] = make_clip(101 + k, n[k], p.sample_rate);
            stride[k] = xtts_mel_n_frames(&p, n[k]) + 3;
            out[k] = malloc((size_t)p.n_mels * stride[k] * sizeof(float));
            ref[k] = calloc((size_t)p.n_mels * stride[k], sizeof(float));
            assert_int_equal(xtts_mel_compute(cpu, x[k], n[k], ref[k], stride[k], &frames[k], &ref_pad[k], &err),
                             XTTS_OK);
            total += n[k];
            total_frames += frames[k];
        }
        xtts_mel_cuda *gpu;
        xtts_mel_cuda_new(&p, 0, N, total, &gpu, &err);
        assert_non_null(gpu);
        for (int pass = 0; pass < 2; pass++) {
            /* pass 1 hands the same clips over in reverse order */
            const float *xs[N];
            float *outs[N];
            size_t ns[N], strides[N], fs[N];
            float pads[N];
            for (int j = 0; j < N; j++) {
                int k = pass ? N - 1 - j : j;
                xs[j] = x[k]; outs[j] = out[k]; ns[j] = n[k]; strides[j] = stride[k];
                for (size_t c = 0; c < (size_t)p.n_mels * stride[k]; c++) out[k][c] = 777.0f;
            }
            assert_int_equal(xtts_mel_cuda_compute_batch(gpu, N, xs, ns, outs, strides, fs, pads, &err), XTTS_OK);
            double worst = 0;
            for (int j = 0; j < N; j++) {
                int k = pass ? N - 1 - j : j;
                assert_int_equal(fs[j], frames[k]);
                assert_float_equal(pads[j], ref_pad[k], 1e-3);
                double d = clip_diff(out[k], ref[k], p.n_mels, frames[k], stride[k]);
                assert_true(d <= 1e-3);
                worst = fmax(worst, d);
            }
            printf("  %s pass %d: %d clips, %zu frames, max |cuda - cpu| %.2e\n", presets[i], pass, N, total_frames,
                   worst);
        }
        for (int k = 0; k < N; k++) { free(x[k]); free(out[k]); free(ref[k]); }
        xtts_mel_cuda_delete(gpu);
        xtts_mel_delete(cpu);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_device_detection_always_gives_a_reason_for_no),
        cmocka_unit_test(test_context_on_an_unusable_device_is_refused_with_eunsupported),
        cmocka_unit_test(test_cuda_batches_match_the_cpu_path_within_1e3),
        cmocka_unit_test(test_cuda_batch_of_many_groups_matches_the_cpu_path_in_any_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
