/* mel_math.h — per-element math of the STFT/log-mel, shared by the CPU path (gcc) and the
 * CUDA kernels (nvcc). Every function is static inline and depends on nothing but <math.h>,
 * so the CUDA path computes each cell with the very code the CPU golden tests exercise.
 *
 * Filterbank math runs in double (it is computed once per context); per-sample and
 * per-bin math runs in float, as the reference implementations do.
 */
#ifndef XTTS_MEL_MATH_H
#define XTTS_MEL_MATH_H

#include <math.h>

#ifdef __CUDACC__
#define XTTS_HD __host__ __device__
#else
#define XTTS_HD
#endif

#define XTTS_PI_D 3.14159265358979323846

/* Periodic Hann window of length n at index i (torch.hann_window(n, periodic=True),
 * scipy get_window('hann', n, fftbins=True)): 0.5 - 0.5 cos(2 pi i / n). */
static inline XTTS_HD float xtts_hann_periodic(int i, int n) {
    return (float)(0.5 - 0.5 * cos(2.0 * XTTS_PI_D * (double)i / (double)n));
}

/* Window value at position j of an n_fft frame, the win-sample Hann window centered in it
 * and zero outside (torch.stft pads the window by (n_fft - win) / 2 on the left). */
static inline XTTS_HD float xtts_stft_window(int j, int n_fft, int win) {
    int left = (n_fft - win) / 2;
    int k = j - left;
    return (k >= 0 && k < win) ? xtts_hann_periodic(k, win) : 0.0f;
}

/* Reflect an index into [0, n) without repeating the edge sample (numpy/torch 'reflect':
 * x[-1] = x[1], x[n] = x[n-2]); reflects repeatedly when i is further out than n - 1. */
static inline XTTS_HD long xtts_reflect_index(long i, long n) {
    if (n <= 1) return 0;
    long period = 2 * (n - 1);
    i %= period;
    if (i < 0) i += period;
    return i < n ? i : period - i;
}

/* HTK mel scale: 2595 log10(1 + f / 700). */
static inline XTTS_HD double xtts_hz_to_mel_htk(double hz) { return 2595.0 * log10(1.0 + hz / 700.0); }
static inline XTTS_HD double xtts_mel_to_hz_htk(double mel) { return 700.0 * (pow(10.0, mel / 2595.0) - 1.0); }

/* Slaney (Auditory Toolbox, librosa htk=False) mel scale: linear below 1 kHz with
 * 200/3 Hz per mel, logarithmic above with step log(6.4) / 27. */
static inline XTTS_HD double xtts_hz_to_mel_slaney(double hz) {
    const double f_sp = 200.0 / 3.0, min_log_hz = 1000.0, min_log_mel = min_log_hz / f_sp;
    const double logstep = log(6.4) / 27.0;
    return hz >= min_log_hz ? min_log_mel + log(hz / min_log_hz) / logstep : hz / f_sp;
}
static inline XTTS_HD double xtts_mel_to_hz_slaney(double mel) {
    const double f_sp = 200.0 / 3.0, min_log_hz = 1000.0, min_log_mel = min_log_hz / f_sp;
    const double logstep = log(6.4) / 27.0;
    return mel >= min_log_mel ? min_log_hz * exp(logstep * (mel - min_log_mel)) : f_sp * mel;
}

/* scale: 0 HTK, 1 Slaney (xtts_mel_scale). */
static inline XTTS_HD double xtts_hz_to_mel(double hz, int scale) {
    return scale == 1 ? xtts_hz_to_mel_slaney(hz) : xtts_hz_to_mel_htk(hz);
}
static inline XTTS_HD double xtts_mel_to_hz(double mel, int scale) {
    return scale == 1 ? xtts_mel_to_hz_slaney(mel) : xtts_mel_to_hz_htk(mel);
}

/* Center frequency (Hz) of point m of the n_mels + 2 points spaced evenly in mel between
 * fmin and fmax; filter c spans points c, c+1, c+2. */
static inline XTTS_HD double xtts_mel_point_hz(int m, int n_mels, double fmin_hz, double fmax_hz, int scale) {
    double lo = xtts_hz_to_mel(fmin_hz, scale), hi = xtts_hz_to_mel(fmax_hz, scale);
    return xtts_mel_to_hz(lo + (hi - lo) * (double)m / (double)(n_mels + 1), scale);
}

/* Frequency (Hz) of rfft bin k of an n_fft transform at sample_rate. */
static inline XTTS_HD double xtts_bin_hz(int k, int n_fft, double sample_rate) {
    return (double)k * sample_rate / (double)n_fft;
}

/* Weight of a triangular filter with corners f_lo < f_c < f_hi at frequency f, as
 * librosa and torchaudio build it: max(0, min((f - f_lo)/(f_c - f_lo), (f_hi - f)/(f_hi - f_c))),
 * times 2 / (f_hi - f_lo) under Slaney area normalization (norm = 1). */
static inline XTTS_HD double xtts_mel_filter_weight(double f, double f_lo, double f_c, double f_hi, int norm) {
    double up = (f - f_lo) / (f_c - f_lo);
    double down = (f_hi - f) / (f_hi - f_c);
    double w = up < down ? up : down;
    if (!(w > 0.0)) return 0.0;
    return norm == 1 ? w * 2.0 / (f_hi - f_lo) : w;
}

/* Power re^2 + im^2 and magnitude sqrt(re^2 + im^2 + eps) of one bin. */
static inline XTTS_HD float xtts_power(float re, float im) { return re * re + im * im; }
static inline XTTS_HD float xtts_magnitude(float re, float im, float eps) { return sqrtf(re * re + im * im + eps); }

/* Spectrum value of one bin: power (power == 2) or magnitude (power == 1). */
static inline XTTS_HD float xtts_spec_value(float re, float im, int power, float eps) {
    return power == 2 ? xtts_power(re, im) : xtts_magnitude(re, im, eps);
}

/* Natural log of a positive, normal, finite float, written out so that it vectorizes on the
 * CPU and compiles unchanged for CUDA: x = m 2^e with m in [sqrt(1/2), sqrt(2)), and
 * ln m = 2 atanh(s), s = (m-1)/(m+1), |s| < 0.172, summed to s^9 (truncation < 4e-10).
 * Absolute error below 1e-6 over the range the clamped log sees. */
static inline XTTS_HD float xtts_ln_positive(float x) {
    union { float f; unsigned int u; } v = {x};
    int e = (int)((v.u >> 23) & 0xffu) - 127;
    v.u = (v.u & 0x007fffffu) | 0x3f800000u; /* m in [1, 2) */
    float m = v.f;
    if (m > 1.41421356f) { m *= 0.5f; e += 1; }
    float s = (m - 1.0f) / (m + 1.0f), s2 = s * s;
    float poly = 1.0f + s2 * (1.0f / 3 + s2 * (1.0f / 5 + s2 * (1.0f / 7 + s2 * (1.0f / 9))));
    const float ln2_hi = 0.693145751953125f, ln2_lo = 1.428606765330187e-06f;
    return (float)e * ln2_hi + ((float)e * ln2_lo + 2.0f * s * poly);
}

/* log(max(x, floor)) (kind 0) or log10(max(x, floor)) (kind 1); floor must be a normal
 * positive float (xtts_mel_params_check asks for at least 1e-30). */
static inline XTTS_HD float xtts_log_clamp(float x, float floor_value, int kind) {
    if (kind == 2) return x; /* XTTS_LOG_NONE: a linear spectrogram, stored as computed */
    float v = x > floor_value ? x : floor_value;
    float ln = xtts_ln_positive(v);
    return kind == 1 ? ln * 0.43429448190325176f : ln;
}

#ifndef __CUDACC__
/* Eight lanes of xtts_log_clamp at once, with GCC vector extensions: the same operations in
 * the same order in every lane, so each lane equals the scalar function bit for bit (the
 * build compiles C in ISO mode, where gcc does not contract a*b+c into FMA). The compiler
 * lowers the 8-lane type to one AVX2/AVX-512 register or two SSE registers, so the result does
 * not depend on the machine. The scalar form above stays the reference and the CUDA form. */
/* Static inline only, so the 32-byte vector's calling convention never crosses an ABI
 * boundary; gcc's note about it on pre-AVX targets does not apply. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"
typedef float xtts_v8f __attribute__((vector_size(32)));
typedef int xtts_v8i __attribute__((vector_size(32)));

static inline xtts_v8f xtts_log_clamp_v8(xtts_v8f x, float floor_value, int kind) {
    if (kind == 2) return x; /* XTTS_LOG_NONE, as xtts_log_clamp */
    const xtts_v8f floor_v = {floor_value, floor_value, floor_value, floor_value,
                              floor_value, floor_value, floor_value, floor_value};
    xtts_v8i keep = x > floor_v;
    xtts_v8f v = (xtts_v8f)(((xtts_v8i)x & keep) | ((xtts_v8i)floor_v & ~keep));
    xtts_v8i u = (xtts_v8i)v;
    xtts_v8i e = ((u >> 23) & 0xff) - 127;
    xtts_v8f m = (xtts_v8f)((u & 0x007fffff) | 0x3f800000);
    xtts_v8i big = m > 1.41421356f;
    m = (xtts_v8f)(((xtts_v8i)(m * 0.5f) & big) | ((xtts_v8i)m & ~big));
    e -= big; /* big is -1 where true */
    xtts_v8f s = (m - 1.0f) / (m + 1.0f), s2 = s * s;
    xtts_v8f poly = 1.0f + s2 * (1.0f / 3 + s2 * (1.0f / 5 + s2 * (1.0f / 7 + s2 * (1.0f / 9))));
    const float ln2_hi = 0.693145751953125f, ln2_lo = 1.428606765330187e-06f;
    xtts_v8f ef = __builtin_convertvector(e, xtts_v8f);
    xtts_v8f ln = ef * ln2_hi + (ef * ln2_lo + 2.0f * s * poly);
    return kind == 1 ? ln * 0.43429448190325176f : ln;
}
#pragma GCC diagnostic pop
#endif

/* Whisper's post-processing of one log10 cell given the clip's maximum log10 value:
 * max(x, max - 8), then (x + 4) / 4. */
static inline XTTS_HD float xtts_whisper_post(float x, float clip_max) {
    float lo = clip_max - 8.0f;
    return ((x > lo ? x : lo) + 4.0f) / 4.0f;
}

#endif
