/* quality.c — the quality metrics of one clip (kernels/quality.h, docs/quality.md).
 *
 * Made to ride along a cache build at about 3 % of its CPU time (docs/quality.md, "Cost"):
 * one pass over the samples (levels, peak, DC, the int16 hash, 10 ms frame energies) in
 * 16-lane vectors held in registers; the full-scale count only when the peak reaches full
 * scale; the speech/silence decision from a histogram of frame levels (no sort, no
 * logarithm per frame); a short FFT of about one speech frame per second for the bandwidth.
 * Limits: the speech/silence decision is an energy detector, not a voice detector: steady
 * loud noise reads as speech, and a clip without any pause has no noise estimate (its SNR
 * reads low).
 */
#include "kernels/quality.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/fftw_internal.h"

#define BLOCK 32             /* samples per vector block; frames are whole blocks */
#define HIST_BINS 1040       /* frame levels from -120 dB to +10 dB in 1/8 dB */
#define HIST_STEP 0.125f
#define NOISE_FRACTION 0.10  /* the quietest 10 % of frames: the noise estimate */
#define LOUD_FRACTION 0.95   /* the 95th percentile frame level: "loud" */
#define SPEECH_RANGE_DB 40.0f /* speech frames: within 40 dB of loud ... */
#define SPEECH_OVER_NOISE_DB 6.0f /* ... and 6 dB above the noise */
#define MIN_RUN_FRAMES 3     /* the speech span starts and ends with runs this long */
#define SPECTRUM_FRAMES 32   /* at most this many FFT frames per clip */
#define SPECTRUM_EVERY_S 1.0 /* about one FFT frame per this much speech */
#define BAND_HZ 250.0        /* the bandwidth's band width */
#define BANDWIDTH_MARGIN_DB 70.0 /* energy: at most this far under the speech band */
#define REF_LO_HZ 300.0      /* the speech band the bandwidth margin is taken from */
#define REF_HI_HZ 3400.0

struct xtts_quality_state {
    float *frame_pow; /* [n_frames] mean power of each frame (about the clip's mean, later) */
    float *frame_sum; /* [n_frames] sum of each frame's samples */
    size_t cap_frames;
    int fft_rate;     /* the sample rate the FFT below was made for; 0 none */
    int n_fft;
    float *window;    /* [n_fft] periodic Blackman-Harris */
    double window_power; /* sum of the window's squares */
    float *fft_in;    /* [n_fft] */
    fftwf_complex *fft_out; /* [n_fft/2+1] */
    double *spectrum; /* [n_fft/2+1] summed power */
    fftwf_plan plan;
};

xtts_status xtts_quality_state_new(xtts_quality_state **out, xtts_error *err) {
    *out = calloc(1, sizeof **out);
    if (!*out) return xtts_error_set(err, XTTS_ENOMEM, "quality: out of memory");
    return XTTS_OK;
}

static void free_fft(xtts_quality_state *st) {
    xtts_fftw_destroy_plan(st->plan);
    fftwf_free(st->window);
    fftwf_free(st->fft_in);
    fftwf_free(st->fft_out);
    free(st->spectrum);
    st->plan = NULL;
    st->window = st->fft_in = NULL;
    st->fft_out = NULL;
    st->spectrum = NULL;
    st->fft_rate = 0;
    st->window_power = 0;
}

void xtts_quality_state_delete(xtts_quality_state *st) {
    if (!st) return;
    free_fft(st);
    free(st->frame_pow);
    free(st->frame_sum);
    free(st);
}

/* An FFT of bins no wider than about 50 Hz (512 points at 16-24 kHz, 1024 at 44.1-48 kHz). */
static xtts_status ensure_fft(xtts_quality_state *st, int sample_rate, xtts_error *err) {
    if (st->fft_rate == sample_rate) return XTTS_OK;
    free_fft(st);
    int n = 64;
    while (n < sample_rate / 50 && n < (1 << 16)) n *= 2;
    st->n_fft = n;
    st->window = fftwf_alloc_real((size_t)n);
    st->fft_in = fftwf_alloc_real((size_t)n);
    st->fft_out = fftwf_alloc_complex((size_t)n / 2 + 1);
    st->spectrum = malloc(((size_t)n / 2 + 1) * sizeof(double));
    if (st->window && st->fft_in && st->fft_out && st->spectrum)
        st->plan = xtts_fftw_plan_r2c(n, st->fft_in, st->fft_out);
    if (!st->plan) {
        free_fft(st);
        return xtts_error_set(err, XTTS_ENOMEM, "quality: out of memory for a %d-point FFT", n);
    }
    /* 4-term Blackman-Harris: side lobes 92 dB down, so a filter's edge 70 dB deep shows
     * within two bands instead of leaking over several (Hann's fall only 31 dB at first) */
    for (int i = 0; i < n; i++) {
        double t = 2.0 * 3.14159265358979 * i / n;
        st->window[i] = (float)(0.35875 - 0.48829 * cos(t) + 0.14128 * cos(2 * t) - 0.01168 * cos(3 * t));
        st->window_power += (double)st->window[i] * st->window[i];
    }
    st->fft_rate = sample_rate;
    return XTTS_OK;
}

static float db_of_power(double p) {
    return p > 1e-12 ? (float)(10.0 * log10(p)) : XTTS_QUALITY_FLOOR_DBFS;
}

/* ---- the one pass over the samples ---------------------------------------------------- */

typedef struct {
    double sum, sumsq;
    float peak;
    size_t n_full;
    uint32_t lanes[BLOCK]; /* hash sums: the blocks' in the first 16, the last samples' in all */
} sample_sums;

/* A sample's int16 value as a hash input: x * 32768 rounded to the nearest integer (ties
 * to even) by adding 1.5 * 2^23, which leaves the integer in the low mantissa bits; its low
 * 16 bits are kept. The product by a power of two is exact, so the vector and the scalar
 * code, with or without FMA, give the same bits. (Samples beyond +-128 give bits that are
 * still deterministic.) */
#define ROUND_MAGIC 12582912.0f
static inline uint32_t int16_bits(float v) {
    float t = v * 32768.0f + ROUND_MAGIC;
    uint32_t bits;
    memcpy(&bits, &t, sizeof bits);
    return bits & 0xffffu;
}

/* The hash term of one sample: its int16 value and its position, mixed. The terms are
 * summed per lane (no chain of dependent multiplies, so the lanes run at vector speed). */
#define POS_STEP 0x9e3779b9u
static inline uint32_t hash_term(uint32_t q, uint32_t pos) {
    uint32_t h = (q ^ pos) * 0x85ebca6bu;
    return h ^ (h >> 15);
}

/* Sixteen lanes in one vector (GCC's vector extension: one AVX-512 register, or four SSE
 * ones in a baseline build); a block is two of them. Accumulators held in these types stay
 * in registers across a frame, where arrays would go through memory on every block. */
typedef float vf16 __attribute__((vector_size(64)));
typedef int32_t vi16 __attribute__((vector_size(64)));
typedef uint32_t vu16 __attribute__((vector_size(64)));
#define HALF (BLOCK / 2)

/* The pass over the samples is compiled for x86-64-v4 (AVX-512), v3 (AVX2) and the build's
 * baseline, and the loader picks the widest the CPU has (as the mel kernel does), so that a
 * portable build (make install: x86-64-v2) runs the wide code where it can. Integer lanes and
 * float sums in a fixed order: every clone gives the same bits. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#define QUALITY_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define QUALITY_CLONES
#endif

/* The int16 bits (int16_bits) of the 16 samples at x into *q, their level sums into sum and
 * sq, their magnitudes into peak. Vectors go by pointer: passed by value, their calling
 * convention would depend on the instruction set. */
static inline __attribute__((always_inline)) void block_lanes(const float *x, vf16 *sum, vf16 *sq, vf16 *peak,
                                                              vu16 *q) {
    const vf16 zero = {0};
    vf16 v;
    memcpy(&v, x, sizeof v);
    vf16 m = (vf16)((vu16)v & 0x7fffffffu);
    vi16 louder = m > *peak;
    *sum += v;
    *sq += v * v;
    *peak = (vf16)((louder & (vi16)m) | (~louder & (vi16)*peak));
    *q = (vu16)(v * 32768.0f + (zero + ROUND_MAGIC)) & 0xffffu;
}

/* The sum of the 32 square lanes, pairwise by halves (a chain of 31 dependent scalar adds
 * per frame would cost more than the frame's vector work). */
#if defined(__clang__)
#define LANE_SHUFFLE(t, ...) __builtin_shufflevector(t, t, __VA_ARGS__)
#else
#define LANE_SHUFFLE(t, ...) __builtin_shuffle(t, (vi16){__VA_ARGS__})
#endif
static inline __attribute__((always_inline)) float lanes_sum(const vf16 *sq) {
    vf16 t = sq[0] + sq[1];
    t += LANE_SHUFFLE(t, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7);
    t += LANE_SHUFFLE(t, 4, 5, 6, 7, 0, 1, 2, 3, 12, 13, 14, 15, 8, 9, 10, 11);
    t += LANE_SHUFFLE(t, 2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13);
    t += LANE_SHUFFLE(t, 1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14);
    return t[0];
}

/* Frame powers into frame_pow (frame_len samples each, a multiple of BLOCK) and the
 * whole-clip sums. The accumulators are local vectors, which stay in registers; lane j of
 * the hash takes samples j and j + 16 of every block (two int16 in one 32-bit word). */
QUALITY_CLONES static void sample_pass(const float *x, size_t n, size_t frame_len, float *frame_pow,
                                      float *frame_sum, sample_sums *s) {
    const vf16 zero = {0};
    vf16 sum0 = zero, sum1 = zero, sq_all = zero, pk0 = zero, pk1 = zero;
    vu16 hash = {0}, pos;
    for (int j = 0; j < HALF; j++) pos[j] = (uint32_t)j * 0x27d4eb2fu;
    size_t n_blocks = n / BLOCK, per_frame = frame_len / BLOCK, i = 0;
    for (size_t b0 = 0; b0 < n_blocks; b0 += per_frame) {
        size_t b1 = b0 + per_frame <= n_blocks ? b0 + per_frame : n_blocks; /* the last: a part frame */
        vf16 sq0 = zero, sq1 = zero, fs0 = zero, fs1 = zero;
        for (size_t b = b0; b < b1; b++, i += BLOCK) {
            vu16 q0, q1;
            block_lanes(x + i, &fs0, &sq0, &pk0, &q0);
            block_lanes(x + i + HALF, &fs1, &sq1, &pk1, &q1);
            vu16 t = ((q0 | (q1 << 16)) ^ pos) * 0x85ebca6bu;
            hash += t ^ (t >> 15);
            pos += POS_STEP;
        }
        vf16 sq[2] = {sq0, sq1}, fs[2] = {fs0, fs1};
        if (b1 - b0 == per_frame) {
            frame_pow[b0 / per_frame] = lanes_sum(sq) / (float)frame_len;
            frame_sum[b0 / per_frame] = lanes_sum(fs);
        }
        sq_all += sq0 + sq1;
        sum0 += fs0;
        sum1 += fs1;
    }
    vf16 sums[2] = {sum0, sum1}, sqs[2] = {sq_all, zero};
    s->sum = lanes_sum(sums);
    s->sumsq = lanes_sum(sqs);
    float peak = 0;
    for (int j = 0; j < HALF; j++) {
        peak = pk0[j] > peak ? pk0[j] : peak;
        peak = pk1[j] > peak ? pk1[j] : peak;
        s->lanes[j] = hash[j];
        s->lanes[j + HALF] = 0; /* lanes HALF.. take the last samples only */
    }
    for (; i < n; i++) {
        float v = x[i], m = fabsf(v);
        s->sum += v;
        s->sumsq += (double)v * v;
        peak = m > peak ? m : peak;
        s->lanes[i % BLOCK] += hash_term(int16_bits(v), (uint32_t)i * POS_STEP);
    }
    s->peak = peak;
    /* full-scale samples: counted only where the peak reaches full scale (rarely) */
    s->n_full = 0;
    if (peak >= XTTS_QUALITY_FULL_SCALE)
        for (i = 0; i < n; i++) s->n_full += fabsf(x[i]) >= XTTS_QUALITY_FULL_SCALE;
}

static uint64_t mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* The 128-bit hash: the lanes and the sample count folded through two splitmix chains. */
static void fold_hash(const sample_sums *s, size_t n, uint64_t out[2]) {
    uint64_t a = mix64((uint64_t)n ^ 0x51a3e1c0ffee0001ULL), b = mix64((uint64_t)n + 0x7f4a7c159e3779b9ULL);
    for (int j = 0; j < BLOCK; j++) {
        a = mix64(a ^ s->lanes[j]);
        b = mix64(b + ((uint64_t)s->lanes[j] << 32 | (uint32_t)j));
    }
    out[0] = a;
    out[1] = b;
}

/* ---- speech / silence ------------------------------------------------------------------ */

typedef struct {
    float loud_db, noise_db, thr_db;
    double noise_pow, speech_pow;
    size_t n_speech;   /* frames above the threshold */
    size_t first, last; /* the speech span [first, last] in frames; first > last: none */
} frame_stats;

/* The histogram bin of a frame power: its level in dB from the float's exponent and a
 * quadratic fit of log2 over the mantissa (error under 0.02 dB, a sixth of a bin), so that
 * a frame costs no logarithm. */
static int level_bin(float p) {
    if (!(p > 1e-12f)) return 0;
    uint32_t bits;
    memcpy(&bits, &p, sizeof bits);
    float frac = (float)(bits & 0x7fffffu) * (1.0f / 8388608.0f);
    float log2p = (float)((int)(bits >> 23) - 127) + frac + 0.346607f * frac * (1.0f - frac);
    int b = (int)((3.0103f * log2p - XTTS_QUALITY_FLOOR_DBFS) / HIST_STEP);
    return b < 0 ? 0 : b >= HIST_BINS ? HIST_BINS - 1 : b;
}

/* The level below which a fraction of the frames lie (a bin's upper edge). */
static float level_percentile(const uint32_t *hist, size_t n_frames, double fraction) {
    size_t want = (size_t)ceil(fraction * (double)n_frames), seen = 0;
    if (want < 1) want = 1;
    for (int b = 0; b < HIST_BINS; b++) {
        seen += hist[b];
        if (seen >= want) return XTTS_QUALITY_FLOOR_DBFS + HIST_STEP * (float)(b + 1);
    }
    return XTTS_QUALITY_FLOOR_DBFS + HIST_STEP * HIST_BINS;
}

/* The first frame of the first run of MIN_RUN_FRAMES speech frames, scanning from `from` in
 * steps of dir; -1 when there is none. */
static long find_run(const float *fp, size_t n_frames, double thr_pow, long from, int dir) {
    int run = 0;
    for (long f = from; f >= 0 && f < (long)n_frames; f += dir) {
        run = fp[f] > thr_pow ? run + 1 : 0;
        if (run == MIN_RUN_FRAMES) return f - dir * (MIN_RUN_FRAMES - 1);
    }
    return -1;
}

static void classify_frames(const float *fp, size_t n_frames, frame_stats *fs) {
    uint32_t hist[HIST_BINS] = {0};
    for (size_t f = 0; f < n_frames; f++) hist[level_bin(fp[f])]++;
    fs->loud_db = level_percentile(hist, n_frames, LOUD_FRACTION);
    float noise_edge = level_percentile(hist, n_frames, NOISE_FRACTION);
    float noise_edge_pow = noise_edge <= XTTS_QUALITY_FLOOR_DBFS + HIST_STEP ? 1e-12f : (float)pow(10.0, noise_edge / 10.0);
    double noise_sum = 0, speech_sum = 0;
    size_t n_noise = 0;
    for (size_t f = 0; f < n_frames; f++)
        if (fp[f] < noise_edge_pow) noise_sum += fp[f], n_noise++;
    fs->noise_pow = n_noise ? noise_sum / (double)n_noise : 0;
    fs->noise_db = db_of_power(fs->noise_pow);
    float thr = fs->loud_db - SPEECH_RANGE_DB;
    if (fs->noise_db + SPEECH_OVER_NOISE_DB > thr) thr = fs->noise_db + SPEECH_OVER_NOISE_DB;
    if (thr < XTTS_QUALITY_FLOOR_DBFS + 1) thr = XTTS_QUALITY_FLOOR_DBFS + 1;
    fs->thr_db = thr;
    double thr_pow = pow(10.0, thr / 10.0);
    fs->n_speech = 0;
    for (size_t f = 0; f < n_frames; f++)
        if (fp[f] > thr_pow) speech_sum += fp[f], fs->n_speech++;
    fs->speech_pow = fs->n_speech ? speech_sum / (double)fs->n_speech : 0;
    long first = find_run(fp, n_frames, thr_pow, 0, 1);
    long last = find_run(fp, n_frames, thr_pow, (long)n_frames - 1, -1);
    if (first < 0 || last < first) {
        fs->first = 1;
        fs->last = 0;
    } else {
        fs->first = (size_t)first;
        fs->last = (size_t)last;
    }
}

/* ---- bandwidth ------------------------------------------------------------------------- */

/* Mean power spectrum of speech frames of the span (4 and about one per SPECTRUM_EVERY_S, at
 * most SPECTRUM_FRAMES), then the highest band within the margin of the speech band. */
static float measure_bandwidth(xtts_quality_state *st, const float *x, float dc, size_t n, size_t frame_len,
                               const frame_stats *fs, double thr_pow, int sample_rate) {
    int nf = st->n_fft, nb = nf / 2 + 1;
    size_t span = fs->last - fs->first + 1;
    size_t want = (size_t)((double)span * (double)frame_len / sample_rate / SPECTRUM_EVERY_S) + 4;
    if (want > SPECTRUM_FRAMES) want = SPECTRUM_FRAMES;
    size_t stride = span / want ? span / want : 1, used = 0;
    memset(st->spectrum, 0, (size_t)nb * sizeof(double));
    for (size_t f = fs->first; f <= fs->last && used < want; f += stride) {
        size_t g = f; /* the next speech frame from f within the stride */
        while (g < f + stride && g <= fs->last && !(st->frame_pow[g] > thr_pow)) g++;
        if (g >= f + stride || g > fs->last) continue;
        size_t start = g * frame_len;
        if (start + (size_t)nf > n) start = n >= (size_t)nf ? n - (size_t)nf : 0;
        if (start + (size_t)nf > n) break;
        for (int i = 0; i < nf; i++) st->fft_in[i] = (x[start + (size_t)i] - dc) * st->window[i];
        fftwf_execute(st->plan);
        for (int k = 0; k < nb; k++)
            st->spectrum[k] += (double)st->fft_out[k][0] * st->fft_out[k][0] + (double)st->fft_out[k][1] * st->fft_out[k][1];
        used++;
    }
    if (!used) return 0;
    double bin_hz = (double)sample_rate / nf, ref = 0;
    int ref_lo = (int)ceil(REF_LO_HZ / bin_hz), ref_hi = (int)floor(REF_HI_HZ / bin_hz), per_band = (int)lround(BAND_HZ / bin_hz);
    if (ref_hi >= nb) ref_hi = nb - 1;
    if (per_band < 1) per_band = 1;
    for (int k = ref_lo; k <= ref_hi; k++) ref += st->spectrum[k];
    ref /= (double)(ref_hi - ref_lo + 1);
    if (!(ref > 0)) return 0;
    /* energy: within the margin of the speech band, and 6 dB over what 16-bit rounding with
     * dither leaves in a bin (variance step^2/4: an upsampled file's band above its source's
     * Nyquist frequency holds only that) */
    double quant_pow = 3.98 * st->window_power * (1.0 / 32768 / 32768) / 4.0 * used;
    double floor_pow = ref * pow(10.0, -BANDWIDTH_MARGIN_DB / 10.0);
    if (floor_pow < quant_pow) floor_pow = quant_pow;
    for (int hi = nb; hi > 1; hi -= per_band) { /* bands [lo, hi) from the top down */
        int lo = hi - per_band > 1 ? hi - per_band : 1;
        double band = 0;
        for (int k = lo; k < hi; k++) band += st->spectrum[k];
        if (band / (hi - lo) >= floor_pow) {
            double edge = (hi - 0.5) * bin_hz;
            return (float)(edge < sample_rate / 2.0 ? edge : sample_rate / 2.0);
        }
    }
    return 0;
}

/* Of the power in the speech frames' spectrum (measure_bandwidth's sum), the share above the
 * speech band's lower edge; 1 when there is no spectrum. */
static double speech_band_share(const xtts_quality_state *st, int sample_rate) {
    int nb = st->n_fft / 2 + 1, lo = (int)ceil(XTTS_QUALITY_SPEECH_BAND_HZ * st->n_fft / sample_rate);
    double all = 0, band = 0;
    for (int k = 1; k < nb; k++) {
        all += st->spectrum[k];
        if (k >= lo) band += st->spectrum[k];
    }
    return all > 0 && band > 0 ? band / all : 1;
}

/* Of the power of the quietest frame (the noise), the share above the speech band's lower
 * edge, from one FFT there: small for hum and rumble, about 1 for broadband noise; 1 when the
 * frame is silent. */
static double noise_band_share(xtts_quality_state *st, const float *x, float dc, size_t n, size_t frame_len,
                               size_t n_frames, int sample_rate) {
    size_t q = 0;
    for (size_t f = 1; f < n_frames; f++)
        if (st->frame_pow[f] < st->frame_pow[q]) q = f;
    int nf = st->n_fft, nb = nf / 2 + 1, lo = (int)ceil(XTTS_QUALITY_SPEECH_BAND_HZ * nf / sample_rate);
    size_t start = q * frame_len + frame_len / 2;
    start = start > (size_t)nf / 2 ? start - (size_t)nf / 2 : 0;
    if (start + (size_t)nf > n) start = n >= (size_t)nf ? n - (size_t)nf : 0;
    if (start + (size_t)nf > n) return 1;
    for (int i = 0; i < nf; i++) st->fft_in[i] = (x[start + (size_t)i] - dc) * st->window[i];
    fftwf_execute(st->plan);
    double all = 0, band = 0;
    for (int k = 1; k < nb; k++) {
        double p = (double)st->fft_out[k][0] * st->fft_out[k][0] + (double)st->fft_out[k][1] * st->fft_out[k][1];
        all += p;
        if (k >= lo) band += p;
    }
    return all > 0 && band > 0 ? band / all : 1;
}

/* ---- the edges, in the speech band --------------------------------------------------------- */

#define EDGE_SETTLE_S 0.020 /* the high-pass runs this long before the edge: its slowest pole pair
                            * decays in 2.1 ms, so a start-up transient is 80 dB down by then */

/* A 4th-order Butterworth high-pass at the speech band's edge, as two biquads (Q 0.5412 and
 * 1.3066): hum at 50-60 Hz falls 40 dB or more, 100-120 Hz some 20 dB, rumble and DC drift
 * further. */
typedef struct {
    double b0, b1, b2, a1, a2, z1, z2;
} edge_biquad;

static void edge_biquad_init(edge_biquad *q, double fc, int sample_rate, double qf) {
    double w = 2 * 3.14159265358979 * fc / sample_rate, alpha = sin(w) / (2 * qf), c = cos(w), a0 = 1 + alpha;
    *q = (edge_biquad){(1 + c) / 2 / a0, -(1 + c) / a0, (1 + c) / 2 / a0, -2 * c / a0, (1 - alpha) / a0, 0, 0};
}

static double edge_biquad_step(edge_biquad *q, double v) {
    double o = q->b0 * v + q->z1;
    q->z1 = q->b1 * v - q->a1 * o + q->z2;
    q->z2 = q->b2 * v - q->a2 * o;
    return o;
}

/* The speech-band levels (dBFS, about dc) of the start and of the end: the louder of the
 * first (last) XTTS_QUALITY_EDGE_S and of the first (last) XTTS_QUALITY_EDGE_LONG_S less
 * XTTS_QUALITY_EDGE_LONG_DB. The filters run from EDGE_SETTLE_S inside the clip towards the
 * edge (backwards in time for the start), so their start-up transient has died out before the
 * edge and the clip's boundary itself makes none. Both ends run in one loop: their recursions
 * are independent, so the CPU overlaps them. */
static void edge_band_dbfs(const float *x, size_t n, float dc, int sample_rate, float *start_db, float *end_db) {
    size_t edge = (size_t)lround(XTTS_QUALITY_EDGE_S * sample_rate), wide = (size_t)lround(XTTS_QUALITY_EDGE_LONG_S * sample_rate);
    if (edge < 1) edge = 1;
    if (wide < edge) wide = edge;
    size_t run = wide + (size_t)lround(EDGE_SETTLE_S * sample_rate);
    if (run > n) run = n;
    if (wide > run) wide = run;
    if (edge > wide) edge = wide;
    edge_biquad s[2], e[2];
    edge_biquad_init(&s[0], XTTS_QUALITY_SPEECH_BAND_HZ, sample_rate, 0.5412);
    edge_biquad_init(&s[1], XTTS_QUALITY_SPEECH_BAND_HZ, sample_rate, 1.3066);
    e[0] = s[0];
    e[1] = s[1];
    double sum_s = 0, sum_e = 0, wide_s = 0, wide_e = 0;
    for (size_t k = 0; k < run; k++) { /* k-th sample from the inside towards each edge */
        double ys = edge_biquad_step(&s[1], edge_biquad_step(&s[0], (double)x[run - 1 - k] - dc));
        double ye = edge_biquad_step(&e[1], edge_biquad_step(&e[0], (double)x[n - run + k] - dc));
        if (k >= run - wide) wide_s += ys * ys, wide_e += ye * ye;
        if (k >= run - edge) sum_s += ys * ys, sum_e += ye * ye;
    }
    float long_s = db_of_power(wide_s / (double)wide) - (float)XTTS_QUALITY_EDGE_LONG_DB;
    float long_e = db_of_power(wide_e / (double)wide) - (float)XTTS_QUALITY_EDGE_LONG_DB;
    *start_db = db_of_power(sum_s / (double)edge);
    *end_db = db_of_power(sum_e / (double)edge);
    if (long_s > *start_db) *start_db = long_s;
    if (long_e > *end_db) *end_db = long_e;
}

/* cut_start / cut_end and the edge levels: the edge's speech-band level against the speech
 * frames' speech-band level (band_active_db), and whether it is speech at all: over the
 * speech/silence threshold taken in the speech band (band_thr_db: loud - 40 dB and noise + 6 dB,
 * each of its speech-band share), so that hum, which raises the broadband noise, hides no cut. */
static void measure_edges(xtts_quality_metrics *m, const float *x, size_t n, float dc, int sample_rate,
                          float band_thr_db, float band_active_db) {
    float start, end;
    edge_band_dbfs(x, n, dc, sample_rate, &start, &end);
    m->cut_start = start > band_thr_db;
    m->cut_end = end > band_thr_db;
    m->start_edge_db = start - band_active_db;
    m->end_edge_db = end - band_active_db;
}

/* ---- the clip -------------------------------------------------------------------------- */

static size_t frame_samples(int sample_rate) {
    long blocks = lround(sample_rate * XTTS_QUALITY_FRAME_S / BLOCK);
    return (size_t)(blocks < 1 ? 1 : blocks) * BLOCK;
}

static void fill_speech(xtts_quality_metrics *m, const frame_stats *fs, size_t frame_len, size_t n,
                        int sample_rate) {
    double frame_s = (double)frame_len / sample_rate;
    m->active_dbfs = fs->n_speech ? db_of_power(fs->speech_pow) : XTTS_QUALITY_FLOOR_DBFS;
    m->noise_dbfs = fs->noise_db;
    if (fs->first > fs->last) { /* no speech: all of it is leading silence */
        m->lead_silence_s = m->duration_s;
        m->snr_db = 0;
    } else {
        m->lead_silence_s = (float)(fs->first * frame_s);
        m->trail_silence_s = (float)((double)(n - (fs->last + 1) * frame_len) / sample_rate);
        m->speech_s = (float)((fs->last - fs->first + 1) * frame_s);
        double sig = fs->speech_pow - fs->noise_pow;
        if (fs->noise_pow <= fs->speech_pow * 1e-10) m->snr_db = XTTS_QUALITY_MAX_SNR_DB;
        else m->snr_db = sig > fs->noise_pow * 1e-3 ? (float)(10.0 * log10(sig / fs->noise_pow)) : -30.0f;
    }
    if (m->speech_s > 0) {
        m->chars_per_s = (float)m->n_chars / m->speech_s;
        m->tokens_per_s = (float)m->n_tokens / m->speech_s;
    }
}

/* Samples that are NaN or infinite (the audio front end rejects them) would carry into the
 * sums; the fields they reach read 0 instead, so that no field is ever non-finite. */
static void make_finite(xtts_quality_metrics *m) {
    float *f[] = {&m->duration_s,  &m->lead_silence_s, &m->trail_silence_s, &m->speech_s,    &m->start_edge_db,
                  &m->end_edge_db, &m->peak_dbfs,      &m->rms_dbfs,        &m->active_dbfs, &m->noise_dbfs,
                  &m->clip_fraction, &m->snr_db,       &m->bandwidth_hz,    &m->chars_per_s, &m->tokens_per_s,
                  &m->dc_offset};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        if (!isfinite(*f[i])) *f[i] = 0;
}

xtts_status xtts_quality_measure(xtts_quality_state *st, const float *samples, size_t n, int sample_rate,
                                 int native_rate, uint32_t n_chars, uint32_t n_tokens,
                                 xtts_quality_metrics *out, xtts_error *err) {
    if (!st || !out || sample_rate <= 0 || (!samples && n > 0))
        return xtts_error_set(err, XTTS_EUSAGE, "quality: bad arguments (state, output, rate %d)", sample_rate);
    memset(out, 0, sizeof *out);
    out->version = XTTS_QUALITY_VERSION;
    out->sample_rate = (uint32_t)sample_rate;
    out->native_rate = native_rate > 0 ? (uint32_t)native_rate : 0;
    out->n_chars = n_chars;
    out->n_tokens = n_tokens;
    out->duration_s = (float)((double)n / sample_rate);
    size_t frame_len = frame_samples(sample_rate), n_frames = n / frame_len;
    if (n_frames > st->cap_frames) {
        free(st->frame_pow);
        free(st->frame_sum);
        st->frame_pow = malloc(n_frames * sizeof(float));
        st->frame_sum = malloc(n_frames * sizeof(float));
        st->cap_frames = st->frame_pow && st->frame_sum ? n_frames : 0;
        if (!st->cap_frames) return xtts_error_set(err, XTTS_ENOMEM, "quality: out of memory (%zu frames)", n_frames);
    }
    sample_sums s = {0};
    sample_pass(samples, n, frame_len, st->frame_pow, st->frame_sum, &s);
    fold_hash(&s, n, out->audio_hash);
    out->peak_dbfs = db_of_power((double)s.peak * s.peak);
    out->rms_dbfs = n ? db_of_power(s.sumsq / (double)n) : XTTS_QUALITY_FLOOR_DBFS;
    out->clip_fraction = n ? (float)((double)s.n_full / (double)n) : 0;
    out->dc_offset = n ? (float)(s.sum / (double)n) : 0;
    if (n_frames < XTTS_QUALITY_MIN_FRAMES) {
        out->status = XTTS_QUALITY_TOO_SHORT;
        out->active_dbfs = out->noise_dbfs = out->rms_dbfs;
        make_finite(out);
        return XTTS_OK;
    }
    out->status = XTTS_QUALITY_MEASURED;
    /* the frames' power about the clip's mean: a DC offset is its own flag, not speech */
    float dc = out->dc_offset;
    for (size_t f = 0; f < n_frames; f++) {
        float p = st->frame_pow[f] - 2.0f * dc * st->frame_sum[f] / (float)frame_len + dc * dc;
        st->frame_pow[f] = p > 0 ? p : 0;
    }
    frame_stats fs;
    classify_frames(st->frame_pow, n_frames, &fs);
    fill_speech(out, &fs, frame_len, n, sample_rate);
    double band_share = 1, noise_share = 1; /* of the speech frames' and the noise's power, the speech band's */
    if (fs.first <= fs.last) {
        xtts_status e = ensure_fft(st, sample_rate, err);
        if (e) return e;
        out->bandwidth_hz = measure_bandwidth(st, samples, dc, n, frame_len, &fs, pow(10.0, fs.thr_db / 10.0), sample_rate);
        band_share = speech_band_share(st, sample_rate);
        noise_share = noise_band_share(st, samples, dc, n, frame_len, n_frames, sample_rate);
    }
    float band_thr = fs.loud_db + db_of_power(band_share) - SPEECH_RANGE_DB;
    float band_noise_thr = fs.noise_db + db_of_power(noise_share) + SPEECH_OVER_NOISE_DB;
    if (band_noise_thr > band_thr) band_thr = band_noise_thr;
    measure_edges(out, samples, n, dc, sample_rate, band_thr, out->active_dbfs + db_of_power(band_share));
    make_finite(out);
    return XTTS_OK;
}
