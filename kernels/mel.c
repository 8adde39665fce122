/* mel.c — log-mel spectrogram on the CPU: sparse filterbank and the fused per-frame
 * STFT -> power/magnitude -> mel -> log loop over FFTW3 (single precision). Its parameters
 * and presets: common/mel_params.c.
 *
 * One context per thread: the FFTW plan, window, filterbank and scratch are made once and
 * reused for every clip. FFTW's planner is not thread-safe, so plan creation and destruction
 * are serialized by a process-wide mutex; executing a plan is thread-safe. Plans come from
 * wisdom built into the library (kernels/mel_fftw_wisdom.h, FFTW_PATIENT, made by
 * bench/src/make_fftw_wisdom.c) with FFTW_WISDOM_ONLY, or, for sizes or machines the wisdom
 * does not cover, from FFTW_ESTIMATE. Both pick the same algorithm in every context and every
 * process, so output bytes do not depend on the thread count or on which run computed them
 * (FFTW_MEASURE times candidates at run time and may pick differently from run to run).
 *
 * Per-element math (window, reflection, mel scales, filter weights, magnitude, log, whisper
 * post-processing) comes from kernels/mel_math.h, shared with the CUDA kernels.
 */
#include "kernels/mel.h"

#include <fftw3.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/fftw_internal.h"
#include "kernels/mel_fftw_wisdom.h"
#include "kernels/mel_internal.h"
#include "kernels/mel_math.h"

/* The 8-lane vectors are only passed between static inline functions of this file and
 * mel_math.h; gcc's note that their calling convention differs without AVX does not apply. */
#pragma GCC diagnostic ignored "-Wpsabi"

/* The per-clip loop is compiled three times, for x86-64-v4 (AVX-512), v3 (AVX2, FMA unused:
 * ISO C) and the build's baseline, and the loader picks the widest the CPU has, so a portable
 * build (make install: x86-64-v2) runs the wide code where it can. The lanes do the same
 * arithmetic in every clone, so the output does not depend on which one runs. Its helpers are
 * always inlined so that they take the clone's instruction set. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#define MEL_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define MEL_CLONES
#endif
#define MEL_INLINE static inline __attribute__((always_inline))

/* Frames computed together: the mel projection and the log run across the frames of a block,
 * one frame per vector lane, so every lane sums its bins in the scalar order. */
#define MEL_LANES 8

static pthread_mutex_t fftw_planner_lock = PTHREAD_MUTEX_INITIALIZER;
static int fftw_wisdom_imported; /* under fftw_planner_lock */

static fftwf_plan plan_r2c(int n_fft, float *in, fftwf_complex *out) {
    pthread_mutex_lock(&fftw_planner_lock);
    if (!fftw_wisdom_imported) {
        fftwf_import_wisdom_from_string(XTTS_MEL_FFTW_WISDOM); /* refused by another FFTW build: fine */
        fftw_wisdom_imported = 1;
    }
    fftwf_plan plan = fftwf_plan_dft_r2c_1d(n_fft, in, out, FFTW_WISDOM_ONLY | FFTW_PATIENT | FFTW_DESTROY_INPUT);
    if (!plan) plan = fftwf_plan_dft_r2c_1d(n_fft, in, out, FFTW_ESTIMATE | FFTW_DESTROY_INPUT);
    pthread_mutex_unlock(&fftw_planner_lock);
    return plan;
}

fftwf_plan xtts_fftw_plan_r2c(int n, float *in, fftwf_complex *out) { return plan_r2c(n, in, out); }

void xtts_fftw_destroy_plan(fftwf_plan plan) {
    if (!plan) return;
    pthread_mutex_lock(&fftw_planner_lock);
    fftwf_destroy_plan(plan);
    pthread_mutex_unlock(&fftw_planner_lock);
}

struct xtts_mel {
    xtts_mel_params p;
    int n_bins;          /* n_fft/2 + 1 */
    int n_bins_used;     /* bins up to the last one any filter touches */
    int pad_left;        /* reflect padding before sample 0 */
    float *window;       /* (n_fft) */
    float *frame;        /* (n_fft) windowed frame, FFT input */
    fftwf_complex *spec; /* (n_bins) FFT output */
    float *power;        /* (MEL_LANES, n_bins_pad) power or magnitude per bin, a row per frame of the block */
    float *power_t;      /* (n_bins_pad, MEL_LANES) the same, transposed: a bin's values for the block's frames */
    int n_bins_pad;      /* n_bins_used rounded up to a multiple of MEL_LANES */
    int *fb_first;       /* (n_mels) first nonzero bin of each filter */
    int *fb_count;       /* (n_mels) number of bins from fb_first on */
    float *fb_weight;    /* packed nonzero weights, filter after filter */
    size_t *fb_offset;   /* (n_mels) start of each filter in fb_weight */
    fftwf_plan plan;
};

static int pad_left_of(const xtts_mel_params *p) { return p->center ? p->n_fft / 2 : p->pad_samples; }

float xtts_mel_pad_value(const xtts_mel_params *p) {
    if (p->log_kind == XTTS_LOG_NONE) /* silence: the spectrum value of a zero bin */
        return p->power == 1 ? (float)sqrt(p->mag_eps) : 0.0f;
    return xtts_log_clamp(0.0f, (float)p->log_floor, p->log_kind);
}

xtts_status xtts_mel_filterbank(const xtts_mel_params *p, float *fb, xtts_error *err) {
    xtts_status st = xtts_mel_params_check(p, err);
    if (st) return st;
    int n_bins = p->n_fft / 2 + 1;
    if (p->mel_scale == XTTS_MEL_SCALE_LINEAR) { /* the identity: bin c is channel c */
        memset(fb, 0, sizeof(float) * (size_t)p->n_mels * n_bins);
        for (int c = 0; c < p->n_mels; c++) fb[(size_t)c * n_bins + c] = 1.0f;
        return XTTS_OK;
    }
    for (int c = 0; c < p->n_mels; c++) {
        double f_lo = xtts_mel_point_hz(c, p->n_mels, p->fmin_hz, p->fmax_hz, p->mel_scale);
        double f_c = xtts_mel_point_hz(c + 1, p->n_mels, p->fmin_hz, p->fmax_hz, p->mel_scale);
        double f_hi = xtts_mel_point_hz(c + 2, p->n_mels, p->fmin_hz, p->fmax_hz, p->mel_scale);
        for (int k = 0; k < n_bins; k++) {
            double f = xtts_bin_hz(k, p->n_fft, p->sample_rate);
            fb[(size_t)c * n_bins + k] = (float)xtts_mel_filter_weight(f, f_lo, f_c, f_hi, p->mel_norm);
        }
    }
    return XTTS_OK;
}

void xtts_mel_delete(xtts_mel *m) {
    if (!m) return;
    if (m->plan) {
        pthread_mutex_lock(&fftw_planner_lock);
        fftwf_destroy_plan(m->plan);
        pthread_mutex_unlock(&fftw_planner_lock);
    }
    fftwf_free(m->window);
    fftwf_free(m->frame);
    fftwf_free(m->spec);
    fftwf_free(m->power);
    fftwf_free(m->power_t);
    free(m->fb_first);
    free(m->fb_count);
    free(m->fb_weight);
    free(m->fb_offset);
    free(m);
}

/* Keep only each filter's nonzero run of bins: a triangle covers a contiguous range, so
 * per filter [first, first+count) holds every nonzero weight. */
static xtts_status build_sparse_filterbank(xtts_mel *m, xtts_error *err) {
    const xtts_mel_params *p = &m->p;
    float *dense = malloc(sizeof(float) * (size_t)p->n_mels * (size_t)m->n_bins);
    m->fb_first = calloc((size_t)p->n_mels, sizeof(int));
    m->fb_count = calloc((size_t)p->n_mels, sizeof(int));
    m->fb_offset = calloc((size_t)p->n_mels, sizeof(size_t));
    if (!dense || !m->fb_first || !m->fb_count || !m->fb_offset) {
        free(dense);
        return xtts_error_set(err, XTTS_ENOMEM, "mel: out of memory for the filterbank");
    }
    xtts_status st = xtts_mel_filterbank(p, dense, err);
    if (st) { free(dense); return st; }
    size_t total = 0;
    int max_bin = 0;
    for (int c = 0; c < p->n_mels; c++) {
        const float *row = dense + (size_t)c * m->n_bins;
        int first = -1, last = -1;
        for (int k = 0; k < m->n_bins; k++)
            if (row[k] != 0.0f) { if (first < 0) first = k; last = k; }
        m->fb_first[c] = first < 0 ? 0 : first;
        m->fb_count[c] = first < 0 ? 0 : last - first + 1;
        m->fb_offset[c] = total;
        total += (size_t)m->fb_count[c];
        if (last + 1 > max_bin) max_bin = last + 1;
    }
    m->fb_weight = malloc(sizeof(float) * (total ? total : 1));
    if (!m->fb_weight) { free(dense); return xtts_error_set(err, XTTS_ENOMEM, "mel: out of memory for the filterbank"); }
    for (int c = 0; c < p->n_mels; c++)
        memcpy(m->fb_weight + m->fb_offset[c], dense + (size_t)c * m->n_bins + m->fb_first[c],
               sizeof(float) * (size_t)m->fb_count[c]);
    m->n_bins_used = max_bin > 0 ? max_bin : 1;
    free(dense);
    return XTTS_OK;
}

xtts_status xtts_mel_new(const xtts_mel_params *p, xtts_mel **out, xtts_error *err) {
    *out = NULL;
    xtts_status st = xtts_mel_params_check(p, err);
    if (st) return st;
    xtts_mel *m = calloc(1, sizeof *m);
    if (!m) return xtts_error_set(err, XTTS_ENOMEM, "mel: out of memory");
    m->p = *p;
    m->n_bins = p->n_fft / 2 + 1;
    m->pad_left = pad_left_of(p);
    m->window = fftwf_malloc(sizeof(float) * (size_t)p->n_fft);
    m->frame = fftwf_malloc(sizeof(float) * (size_t)p->n_fft);
    m->spec = fftwf_malloc(sizeof(fftwf_complex) * (size_t)m->n_bins);
    if (!m->window || !m->frame || !m->spec) {
        xtts_mel_delete(m);
        return xtts_error_set(err, XTTS_ENOMEM, "mel: out of memory");
    }
    for (int j = 0; j < p->n_fft; j++) m->window[j] = xtts_stft_window(j, p->n_fft, p->win_samples);
    st = build_sparse_filterbank(m, err);
    if (st) { xtts_mel_delete(m); return st; }
    m->n_bins_pad = (m->n_bins_used + MEL_LANES - 1) / MEL_LANES * MEL_LANES;
    m->power = fftwf_malloc(sizeof(float) * MEL_LANES * (size_t)m->n_bins_pad);
    m->power_t = fftwf_malloc(sizeof(float) * MEL_LANES * (size_t)m->n_bins_pad);
    if (!m->power || !m->power_t) {
        xtts_mel_delete(m);
        return xtts_error_set(err, XTTS_ENOMEM, "mel: out of memory");
    }
    memset(m->power, 0, sizeof(float) * MEL_LANES * (size_t)m->n_bins_pad);
    m->plan = plan_r2c(p->n_fft, m->frame, m->spec);
    if (!m->plan) {
        xtts_mel_delete(m);
        return xtts_error_set(err, XTTS_ENOMEM, "mel: FFTW could not plan a %d-point r2c transform", p->n_fft);
    }
    *out = m;
    return XTTS_OK;
}

/* Fill m->frame with frame t: samples from t*hop - pad_left on, reflected at both ends, windowed. */
MEL_INLINE void load_frame(xtts_mel *m, const float *x, long n, size_t t) {
    const int n_fft = m->p.n_fft;
    float *restrict frame = m->frame;
    const float *restrict window = m->window;
    long start = (long)t * m->p.hop_samples - m->pad_left;
    if (start >= 0 && start + n_fft <= n) {
        const float *restrict src = x + start;
#pragma omp simd
        for (int j = 0; j < n_fft; j++) frame[j] = src[j] * window[j];
    } else {
        for (int j = 0; j < n_fft; j++) frame[j] = x[xtts_reflect_index(start + j, n)] * window[j];
    }
}

/* Spectrum values of the bins the filters use into pw; one loop per kind so each vectorizes. */
MEL_INLINE void spectrum_values(xtts_mel *m, float *restrict pw) {
    const float *restrict s = (const float *)m->spec; /* interleaved re, im */
    const int n_used = m->n_bins_used;
    const float eps = (float)m->p.mag_eps;
    if (m->p.power == 2) {
#pragma omp simd
        for (int k = 0; k < n_used; k++) pw[k] = xtts_power(s[2 * k], s[2 * k + 1]);
    } else {
#pragma omp simd
        for (int k = 0; k < n_used; k++) pw[k] = xtts_magnitude(s[2 * k], s[2 * k + 1], eps);
    }
}

/* rows (MEL_LANES, n) -> cols (n, MEL_LANES), n a multiple of MEL_LANES: 8x8 blocks through
 * registers (unpack, shuffle, 128-bit lane swap). */
MEL_INLINE void transpose_block(const float *restrict rows, float *restrict cols, int n) {
    for (int k = 0; k < n; k += MEL_LANES) {
        xtts_v8f r[8], a[8], b[8];
        for (int u = 0; u < 8; u++) memcpy(&r[u], rows + (size_t)u * n + k, sizeof r[u]);
        /* __builtin_shufflevector: gcc (12 on) and clang alike */
        for (int u = 0; u < 8; u += 2) {
            a[u] = __builtin_shufflevector(r[u], r[u + 1], 0, 8, 1, 9, 4, 12, 5, 13);
            a[u + 1] = __builtin_shufflevector(r[u], r[u + 1], 2, 10, 3, 11, 6, 14, 7, 15);
        }
        for (int u = 0; u < 8; u += 4)
            for (int h = 0; h < 2; h++) {
                b[u + 2 * h] = __builtin_shufflevector(a[u + h], a[u + h + 2], 0, 1, 8, 9, 4, 5, 12, 13);
                b[u + 2 * h + 1] = __builtin_shufflevector(a[u + h], a[u + h + 2], 2, 3, 10, 11, 6, 7, 14, 15);
            }
        for (int u = 0; u < 4; u++) {
            xtts_v8f c0 = __builtin_shufflevector(b[u], b[u + 4], 0, 1, 2, 3, 8, 9, 10, 11);
            xtts_v8f c1 = __builtin_shufflevector(b[u], b[u + 4], 4, 5, 6, 7, 12, 13, 14, 15);
            memcpy(cols + (size_t)(k + u) * MEL_LANES, &c0, sizeof c0);
            memcpy(cols + (size_t)(k + u + 4) * MEL_LANES, &c1, sizeof c1);
        }
    }
}

MEL_CLONES xtts_status xtts_mel_compute(xtts_mel *m, const float *samples, size_t n_samples, float *out,
                             size_t out_stride, size_t *n_frames, float *pad_value, xtts_error *err) {
    const xtts_mel_params *p = &m->p;
    size_t frames = xtts_mel_n_frames(p, n_samples);
    if (n_frames) *n_frames = frames;
    if (frames == 0)
        return xtts_error_set(err, XTTS_EINPUT, "mel: %zu samples are shorter than one frame (n_fft %d, padding %d)",
                              n_samples, p->n_fft, m->pad_left);
    if (out_stride < frames)
        return xtts_error_set(err, XTTS_ERANGE, "mel: output stride %zu is smaller than %zu frames", out_stride, frames);
    if ((long)n_samples < 0)
        return xtts_error_set(err, XTTS_ERANGE, "mel: %zu samples is too many", n_samples);

    /* Frames go through the FFT one at a time; then a block of MEL_LANES frames is projected
     * and logged together, one frame per lane, and each channel's values for the block are
     * stored straight into the channel-major output. */
    const int n_mels = p->n_mels, log_kind = p->log_kind, n_pad = m->n_bins_pad;
    const float floor_value = (float)p->log_floor;
    xtts_v8f clip_max_v = {-INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY};
    for (size_t t0 = 0; t0 < frames; t0 += MEL_LANES) {
        size_t block = frames - t0 < MEL_LANES ? frames - t0 : MEL_LANES;
        for (size_t u = 0; u < block; u++) {
            load_frame(m, samples, (long)n_samples, t0 + u);
            fftwf_execute(m->plan);
            spectrum_values(m, m->power + u * (size_t)n_pad);
        }
        /* A short last block repeats its last frame in the unused lanes, so every lane holds
         * real values (they are not stored). */
        for (size_t u = block; u < MEL_LANES; u++)
            memcpy(m->power + u * (size_t)n_pad, m->power + (block - 1) * (size_t)n_pad, sizeof(float) * (size_t)n_pad);
        transpose_block(m->power, m->power_t, n_pad);
        for (int c = 0; c < n_mels; c++) {
            const float *restrict w = m->fb_weight + m->fb_offset[c];
            const float *restrict pk = m->power_t + (size_t)m->fb_first[c] * MEL_LANES;
            xtts_v8f acc = {0};
            const int count = m->fb_count[c];
            for (int i = 0; i < count; i++) {
                xtts_v8f v;
                memcpy(&v, pk + (size_t)i * MEL_LANES, sizeof v);
                acc += w[i] * v;
            }
            xtts_v8f lg = xtts_log_clamp_v8(acc, floor_value, log_kind);
            float *restrict row = out + (size_t)c * out_stride + t0;
            if (block == MEL_LANES) {
                xtts_v8i more = lg > clip_max_v;
                clip_max_v = (xtts_v8f)(((xtts_v8i)lg & more) | ((xtts_v8i)clip_max_v & ~more));
                memcpy(row, &lg, sizeof lg);
            } else {
                for (size_t u = 0; u < block; u++) {
                    row[u] = lg[u];
                    if (lg[u] > clip_max_v[u]) clip_max_v[u] = lg[u];
                }
            }
        }
    }
    float clip_max = -INFINITY;
    for (int u = 0; u < MEL_LANES; u++) clip_max = clip_max_v[u] > clip_max ? clip_max_v[u] : clip_max;
    float pad = xtts_mel_pad_value(p);
    if (p->whisper_post) {
        for (int c = 0; c < n_mels; c++) {
            float *row = out + (size_t)c * out_stride;
            for (size_t t = 0; t < frames; t++) row[t] = xtts_whisper_post(row[t], clip_max);
        }
        pad = xtts_whisper_post(pad, clip_max);
    }
    if (pad_value) *pad_value = pad;
    return XTTS_OK;
}
