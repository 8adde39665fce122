/* audio.c — decode (libsndfile), downmix, resample (libsoxr or libsamplerate), check and trim.
 *
 * libsndfile picks the decoder from the file's bytes, so a FLAC file named .wav decodes as
 * FLAC. Decoding runs in fixed chunks straight into the mono buffer, so a multichannel file
 * never needs its interleaved form in memory at once. Both resamplers run single-threaded
 * on whole clips (one-shot), so a clip's output does not depend on what ran before it.
 */
#include "prep/audio/audio.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <samplerate.h>
#include <sndfile.h>
#include <soxr.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "formats/audio/sndfile_open.h"

/* Samples (all channels) decoded per read: 256 KB of 16-bit PCM, so that a clip is read in
 * a few system calls (each costs more than the copy on some virtual machines). */
#define CHUNK_SAMPLES 131072
#define MAX_SAMPLES ((size_t)1 << 31) /* per channel: 13.5 h at 44.1 kHz */
#define TRIM_FRAME_S 0.010

struct xtts_audio {
    xtts_audio_options opt;
    int soxr_recipe;   /* SOXR_QQ .. SOXR_VHQ when the resampler is soxr */
    int src_converter; /* SRC_* when it is libsamplerate, else -1 */
    float *chunk;      /* (CHUNK_SAMPLES / channels, channels) interleaved decode buffer */
    size_t chunk_cap;  /* floats */
    int16_t *chunk16;  /* (CHUNK_SAMPLES / channels, channels) 16-bit PCM as stored (read_pcm16) */
    size_t chunk16_cap;
    float *mono;       /* (n) decoded, downmixed samples at the source rate */
    size_t mono_cap;
    float *out;        /* (n) resampled samples at the target rate */
    size_t out_cap;
    soxr_t soxr;       /* kept from clip to clip (its buffers too), for soxr_rate -> target */
    int soxr_rate;
};

typedef struct {
    const char *name;
    int value;
} named_value;

static const named_value SOXR_QUALITIES[] = {
    {"quick", SOXR_QQ}, {"low", SOXR_LQ}, {"mq", SOXR_MQ}, {"hq", SOXR_HQ}, {"vhq", SOXR_VHQ}, {NULL, 0}};
static const named_value SRC_QUALITIES[] = {{"sinc_best", SRC_SINC_BEST_QUALITY},
                                            {"sinc_medium", SRC_SINC_MEDIUM_QUALITY},
                                            {"sinc_fastest", SRC_SINC_FASTEST},
                                            {"zoh", SRC_ZERO_ORDER_HOLD},
                                            {"linear", SRC_LINEAR},
                                            {NULL, 0}};

static int lookup(const named_value *table, const char *name, int *value) {
    for (; table->name; table++)
        if (strcmp(table->name, name) == 0) { *value = table->value; return 1; }
    return 0;
}

static int is_libsamplerate(const xtts_audio_options *opt) { return strcmp(opt->resampler, "libsamplerate") == 0; }

xtts_status xtts_audio_options_check(const xtts_audio_options *opt, xtts_error *err) {
    int v;
    if (opt->target_rate < 1000 || opt->target_rate > 384000)
        return xtts_error_set(err, XTTS_EUSAGE, "audio: target rate %d Hz is outside 1000..384000", opt->target_rate);
    if (!memchr(opt->resampler, 0, sizeof opt->resampler) || !memchr(opt->quality, 0, sizeof opt->quality))
        return xtts_error_set(err, XTTS_EUSAGE, "audio: resampler or quality name is not terminated");
    if (opt->resampler[0] && strcmp(opt->resampler, "soxr") != 0 && !is_libsamplerate(opt))
        return xtts_error_set(err, XTTS_EUSAGE, "audio: resampler '%s' is unknown (use soxr or libsamplerate)",
                              opt->resampler);
    if (opt->quality[0]) {
        if (is_libsamplerate(opt) ? !lookup(SRC_QUALITIES, opt->quality, &v) : !lookup(SOXR_QUALITIES, opt->quality, &v))
            return xtts_error_set(err, XTTS_EUSAGE, "audio: resample quality '%s' is unknown for %s (use %s)",
                                  opt->quality, is_libsamplerate(opt) ? "libsamplerate" : "soxr",
                                  is_libsamplerate(opt) ? "sinc_fastest, sinc_medium, sinc_best, linear or zoh"
                                                        : "quick, low, mq, hq or vhq");
    }
    if (!(opt->trim_db >= 0.0 && opt->trim_db <= 200.0))
        return xtts_error_set(err, XTTS_EUSAGE, "audio: trim dB %g is outside 0..200", opt->trim_db);
    return XTTS_OK;
}

xtts_status xtts_audio_new(const xtts_audio_options *opt, xtts_audio **out, xtts_error *err) {
    *out = NULL;
    xtts_status st = xtts_audio_options_check(opt, err);
    if (st) return st;
    xtts_audio *a = calloc(1, sizeof *a);
    if (!a) return xtts_error_set(err, XTTS_ENOMEM, "audio: out of memory");
    a->opt = *opt;
    a->soxr_recipe = SOXR_HQ;
    a->src_converter = -1;
    if (is_libsamplerate(opt)) {
        a->src_converter = SRC_SINC_MEDIUM_QUALITY;
        if (opt->quality[0]) lookup(SRC_QUALITIES, opt->quality, &a->src_converter);
    } else {
        snprintf(a->opt.resampler, sizeof a->opt.resampler, "soxr");
        if (opt->quality[0]) lookup(SOXR_QUALITIES, opt->quality, &a->soxr_recipe);
    }
    *out = a;
    return XTTS_OK;
}

void xtts_audio_delete(xtts_audio *a) {
    if (!a) return;
    if (a->soxr) soxr_delete(a->soxr);
    free(a->chunk);
    free(a->chunk16);
    free(a->mono);
    free(a->out);
    free(a);
}

static int grow(float **buf, size_t *cap, size_t need) {
    if (need <= *cap) return 1;
    size_t c = *cap ? *cap : 4096;
    while (c < need) c *= 2;
    float *p = realloc(*buf, c * sizeof *p);
    if (!p) return 0;
    *buf = p;
    *cap = c;
    return 1;
}

static void format_name(int format, char *out, size_t len) {
    const char *major, *sub;
    switch (format & SF_FORMAT_TYPEMASK) {
    case SF_FORMAT_WAV: major = "wav"; break;
    case SF_FORMAT_WAVEX: major = "wavex"; break;
    case SF_FORMAT_W64: major = "w64"; break;
    case SF_FORMAT_RF64: major = "rf64"; break;
    case SF_FORMAT_AIFF: major = "aiff"; break;
    case SF_FORMAT_AU: major = "au"; break;
    case SF_FORMAT_FLAC: major = "flac"; break;
    case SF_FORMAT_OGG: major = "ogg"; break;
    case SF_FORMAT_CAF: major = "caf"; break;
    case SF_FORMAT_MPEG: major = "mpeg"; break;
    default: major = "other"; break;
    }
    switch (format & SF_FORMAT_SUBMASK) {
    case SF_FORMAT_PCM_S8: sub = "pcm_s8"; break;
    case SF_FORMAT_PCM_U8: sub = "pcm_u8"; break;
    case SF_FORMAT_PCM_16: sub = "pcm_16"; break;
    case SF_FORMAT_PCM_24: sub = "pcm_24"; break;
    case SF_FORMAT_PCM_32: sub = "pcm_32"; break;
    case SF_FORMAT_FLOAT: sub = "float"; break;
    case SF_FORMAT_DOUBLE: sub = "double"; break;
    case SF_FORMAT_ULAW: sub = "ulaw"; break;
    case SF_FORMAT_ALAW: sub = "alaw"; break;
    case SF_FORMAT_VORBIS: sub = "vorbis"; break;
    case SF_FORMAT_OPUS: sub = "opus"; break;
    case SF_FORMAT_MPEG_LAYER_III: sub = "mp3"; break;
    default: sub = "other"; break;
    }
    snprintf(out, len, "%s/%s", major, sub);
}

/* The largest sample magnitude accepted: 60 dB above full scale. Integer formats decode
 * to [-1, 1]; float and double files (and lossy codecs, which may overshoot a little) may
 * hold more. Past this bound a file is refused rather than stored: samples near FLT_MAX
 * overflow the downmix, the resampler and the STFT's power to Inf or NaN, which the log
 * clamp would turn into a flat mel at the silence floor; and a file scaled to integer range
 * (±32768) would give a mel unlike every other record's. Below it every stage stays finite
 * for any FFT size the mel parameters allow. */
#define SAMPLE_LIMIT 1024.0f
#define SAMPLE_LIMIT_BITS 0x44800000u /* the bits of 1024.0f */
#define FINITE_LIMIT_BITS 0x7f7fffffu /* the bits of FLT_MAX */

/* Index of the first sample that is NaN, infinite or of a magnitude whose bits exceed
 * limit_bits (SAMPLE_LIMIT_BITS: beyond ±SAMPLE_LIMIT; FINITE_LIMIT_BITS: not finite), n when
 * none.
 * Blocks are scanned without a branch per sample (an integer compare of the magnitude's
 * bits, in vector lanes: NaN and Inf have the largest), and searched only when one holds
 * such a sample: about a tenth of an early-exit loop's time. */
static size_t first_out_of_range(const float *x, size_t n, uint32_t limit_bits) {
    for (size_t i = 0; i < n; i += 4096) {
        size_t m = n - i < 4096 ? n - i : 4096;
        uint32_t bad = 0;
        for (size_t j = 0; j < m; j++) {
            uint32_t u;
            memcpy(&u, &x[i + j], sizeof u);
            bad |= (u & 0x7fffffffu) > limit_bits;
        }
        if (bad)
            for (size_t j = 0; j < m; j++) {
                uint32_t u;
                memcpy(&u, &x[i + j], sizeof u);
                if ((u & 0x7fffffffu) > limit_bits) return i + j;
            }
    }
    return n;
}

/* The reason a sample is refused: "NaN", "infinite" or its value. A double beyond a float's
 * range reads as infinite (libsndfile converts to float), hence the second wording. */
static const char *sample_fault(float v, int is_double, char *buf, size_t len) {
    if (isnan(v)) return "NaN";
    if (isinf(v)) return is_double ? "infinite or beyond the range of a float" : "infinite";
    snprintf(buf, len, "%g, out of range (more than %g: 60 dB over full scale)", (double)v, (double)SAMPLE_LIMIT);
    return buf;
}

/* 16-bit PCM, the common case, is read as stored and converted here, in vector lanes:
 * s * (1 / 32768) is what libsndfile's float reads give (its normalization), bit for bit,
 * at a fraction of the cost of its per-sample loop. dst holds frames * channels floats. */
static sf_count_t read_pcm16(xtts_audio *a, SNDFILE *sf, int ch, float *dst, sf_count_t frames) {
    sf_count_t got = sf_readf_short(sf, a->chunk16, frames);
    const size_t n = got > 0 ? (size_t)got * (size_t)ch : 0;
    const int16_t *src = a->chunk16;
    for (size_t i = 0; i < n; i++) dst[i] = (float)src[i] * (1.0f / 32768.0f);
    return got;
}

/* Decode an open SNDFILE into a->mono (channel mean), every channel's samples checked as they
 * are read (first_out_of_range). */
static xtts_status decode(xtts_audio *a, SNDFILE *sf, const SF_INFO *si, const char *name, size_t *n_out,
                          xtts_error *err) {
    const int ch = si->channels;
    if (ch < 1 || ch > 1024)
        return xtts_error_set(err, XTTS_EINPUT, "%s: %d channels is not a usable channel count", name, ch);
    if (si->samplerate < 1 || si->samplerate > 1000000)
        return xtts_error_set(err, XTTS_EINPUT, "%s: sample rate %d Hz is not usable", name, si->samplerate);
    const sf_count_t chunk_frames = CHUNK_SAMPLES / ch; /* ch <= 1024: at least 128 */
    if (ch != 1 && !grow(&a->chunk, &a->chunk_cap, CHUNK_SAMPLES))
        return xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", name);
    const int pcm16 = (si->format & SF_FORMAT_SUBMASK) == SF_FORMAT_PCM_16;
    const int is_double = (si->format & SF_FORMAT_SUBMASK) == SF_FORMAT_DOUBLE;
    if (pcm16 && a->chunk16_cap < CHUNK_SAMPLES) {
        int16_t *p = realloc(a->chunk16, CHUNK_SAMPLES * sizeof *p);
        if (!p) return xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", name);
        a->chunk16 = p;
        a->chunk16_cap = CHUNK_SAMPLES;
    }
    /* The header's frame count only sizes the first allocation, and only up to 4 Mi samples:
     * a damaged or hostile header must not make us reserve memory the data never fills. */
    sf_count_t hint = si->frames > 0 ? (si->frames < ((sf_count_t)1 << 22) ? si->frames : ((sf_count_t)1 << 22)) : 0;
    /* With a length limit, room for the longest clip it allows from the start (pages are
     * touched only as samples fill them): a buffer grown clip after clip touches fresh
     * pages at every step. */
    if (hint > 0 && a->opt.max_seconds > 0) {
        double most = a->opt.max_seconds * si->samplerate + 1.0;
        if (most < (double)((sf_count_t)1 << 22) && (sf_count_t)most > hint) hint = (sf_count_t)most;
    }
    if (hint > 0 && !(a->mono = xtts_renew(a->mono, &a->mono_cap, (size_t)hint, sizeof(float))))
        return xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory for %lld samples", name, (long long)hint);
    size_t n = 0;
    const float inv_ch = 1.0f / (float)ch;
    for (;;) {
        /* mono reads straight into the output, as much as it has room for (sized from the
         * header, it grows only when it is full: the read that finds the end needs no more
         * room); other layouts through chunk and the downmix */
        sf_count_t want = chunk_frames;
        if (ch == 1) {
            if (n == a->mono_cap && !grow(&a->mono, &a->mono_cap, n + 4096))
                return xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory after %zu samples", name, n);
            if ((size_t)want > a->mono_cap - n) want = (sf_count_t)(a->mono_cap - n);
        }
        float *into = ch == 1 ? a->mono + n : a->chunk;
        sf_count_t got = pcm16 ? read_pcm16(a, sf, ch, into, want) : sf_readf_float(sf, into, want);
        if (got <= 0) break;
        /* every channel's samples, before the downmix can hide them (+x and -x cancel, two
         * near FLT_MAX overflow); 16-bit PCM lies in [-1, 1) by construction */
        size_t bad = pcm16 ? (size_t)got * ch : first_out_of_range(into, (size_t)got * ch, SAMPLE_LIMIT_BITS);
        if (bad < (size_t)got * ch) {
            char why[96], chan[32] = "";
            size_t at = n + bad / (size_t)ch;
            if (ch > 1) snprintf(chan, sizeof chan, " of channel %zu", bad % (size_t)ch + 1);
            return xtts_error_set(err, XTTS_EINPUT, "%s: sample %zu (%.3f s)%s is %s", name, at,
                                  (double)at / si->samplerate, chan, sample_fault(into[bad], is_double, why, sizeof why));
        }
        if (n + (size_t)got > MAX_SAMPLES)
            return xtts_error_set(err, XTTS_EINPUT, "%s: longer than %zu samples per channel", name, MAX_SAMPLES);
        if (a->opt.max_seconds > 0 && (double)(n + (size_t)got) > a->opt.max_seconds * si->samplerate)
            return xtts_error_set(err, XTTS_EINPUT, "%s: longer than the %.1f s limit", name, a->opt.max_seconds);
        if (!grow(&a->mono, &a->mono_cap, n + (size_t)got))
            return xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory after %zu samples", name, n);
        float *dst = a->mono + n;
        if (ch != 1) {
            for (sf_count_t i = 0; i < got; i++) {
                const float *frame = a->chunk + (size_t)i * ch;
                float sum = 0.0f;
                for (int c = 0; c < ch; c++) sum += frame[c];
                dst[i] = ch == 2 ? 0.5f * sum : sum * inv_ch;
            }
        }
        n += (size_t)got;
    }
    int e = sf_error(sf);
    if (e != SF_ERR_NO_ERROR)
        return xtts_error_set(err, XTTS_EINPUT, "%s: decode error after %zu samples: %s", name, n, sf_error_number(e));
    if (n == 0) return xtts_error_set(err, XTTS_EINPUT, "%s: no audio samples", name);
    *n_out = n;
    return XTTS_OK;
}

/* soxr over one clip: the same samples as soxr_oneshot gives, from a resampler kept across
 * clips of the same rate (cleared between them) and fed in blocks, so that its buffers are
 * reused rather than grown from nothing for every clip (about 10 % of soxr's time). */
#define SOXR_BLOCK 16384
static soxr_error_t soxr_run(xtts_audio *a, const float *in, size_t n_in, int in_rate, size_t cap, size_t *n_out) {
    soxr_error_t e = NULL;
    if (a->soxr && a->soxr_rate != in_rate) {
        soxr_delete(a->soxr);
        a->soxr = NULL;
    }
    if (!a->soxr) {
        soxr_io_spec_t io = soxr_io_spec(SOXR_FLOAT32_I, SOXR_FLOAT32_I);
        soxr_quality_spec_t q = soxr_quality_spec((unsigned long)a->soxr_recipe, 0);
        soxr_runtime_spec_t rt = soxr_runtime_spec(1);
        a->soxr = soxr_create(in_rate, a->opt.target_rate, 1, &e, &io, &q, &rt);
        if (e) {
            a->soxr = NULL;
            return e;
        }
        a->soxr_rate = in_rate;
    } else if ((e = soxr_clear(a->soxr))) {
        return e;
    }
    size_t pos = 0, done = 0;
    while (pos < n_in && done < cap) {
        size_t used = 0, got = 0;
        size_t m = n_in - pos < SOXR_BLOCK ? n_in - pos : SOXR_BLOCK;
        if ((e = soxr_process(a->soxr, in + pos, m, &used, a->out + done, cap - done, &got))) return e;
        if (!used && !got) break; /* cannot happen with room for output; never spin */
        pos += used;
        done += got;
    }
    for (;;) { /* the end of the input: drain what the filter still holds */
        size_t got = 0;
        if ((e = soxr_process(a->soxr, NULL, 0, NULL, a->out + done, cap - done, &got))) return e;
        done += got;
        if (!got || done == cap) break;
    }
    *n_out = done;
    return NULL;
}

xtts_status xtts_audio_resample(xtts_audio *a, const float *in, size_t n_in, int in_rate, const float **out,
                                size_t *n_out, xtts_error *err) {
    const int out_rate = a->opt.target_rate;
    if (in_rate < 1 || in_rate > 1000000)
        return xtts_error_set(err, XTTS_EINPUT, "resample: input rate %d Hz is not usable", in_rate);
    if (in_rate == out_rate) {
        *out = in;
        *n_out = n_in;
        return XTTS_OK;
    }
    const double ratio = (double)out_rate / in_rate;
    size_t cap = (size_t)ceil((double)n_in * ratio) + 64;
    if (a->opt.max_seconds > 0) { /* room for the longest clip allowed, as in decode() */
        double most = ceil(a->opt.max_seconds * out_rate) + 64.0;
        if (most < (double)((size_t)1 << 22) && (size_t)most > cap) cap = (size_t)most;
    }
    if (!(a->out = xtts_renew(a->out, &a->out_cap, cap, sizeof(float))))
        return xtts_error_set(err, XTTS_ENOMEM, "resample: out of memory for %zu samples", cap);
    if (a->src_converter >= 0) {
        if (ratio < 1.0 / 256 || ratio > 256)
            return xtts_error_set(err, XTTS_EINPUT, "resample: %d -> %d Hz is beyond libsamplerate's 256x", in_rate,
                                  out_rate);
        SRC_DATA d;
        memset(&d, 0, sizeof d);
        d.data_in = in;
        d.data_out = a->out;
        d.input_frames = (long)n_in;
        d.output_frames = (long)cap;
        d.end_of_input = 1;
        d.src_ratio = ratio;
        int e = src_simple(&d, a->src_converter, 1);
        if (e) return xtts_error_set(err, XTTS_EINPUT, "resample: libsamplerate: %s", src_strerror(e));
        *n_out = (size_t)d.output_frames_gen;
    } else {
        soxr_error_t e = soxr_run(a, in, n_in, in_rate, cap, n_out);
        if (e) return xtts_error_set(err, XTTS_EINPUT, "resample: soxr: %s", e);
    }
    *out = a->out;
    return XTTS_OK;
}

/* Leading and trailing 10 ms frames more than trim_db below the loudest frame (RMS). */
static void trim_bounds(const float *x, size_t n, int rate, double trim_db, size_t *head, size_t *tail) {
    *head = *tail = 0;
    size_t frame = (size_t)lround(rate * TRIM_FRAME_S);
    if (frame < 1) frame = 1;
    size_t n_frames = (n + frame - 1) / frame;
    double peak = 0.0;
    for (size_t f = 0; f < n_frames; f++) {
        size_t lo = f * frame, hi = lo + frame < n ? lo + frame : n;
        double s = 0.0;
        for (size_t i = lo; i < hi; i++) s += (double)x[i] * x[i];
        double ms = s / (double)(hi - lo);
        if (ms > peak) peak = ms;
    }
    if (peak <= 0.0) return; /* silence is kept whole */
    double threshold = peak * pow(10.0, -trim_db / 10.0); /* on mean squares: dB/10 */
    size_t first = n_frames, last = 0;
    for (size_t f = 0; f < n_frames; f++) {
        size_t lo = f * frame, hi = lo + frame < n ? lo + frame : n;
        double s = 0.0;
        for (size_t i = lo; i < hi; i++) s += (double)x[i] * x[i];
        if (s / (double)(hi - lo) >= threshold) {
            if (first == n_frames) first = f;
            last = f;
        }
    }
    *head = first * frame;
    size_t end = (last + 1) * frame < n ? (last + 1) * frame : n;
    *tail = n - end;
}

static xtts_status load_open(xtts_audio *a, SNDFILE *sf, const SF_INFO *si, const char *name, const float **samples,
                             size_t *n, xtts_audio_info *info, xtts_error *err) {
    size_t n_src = 0;
    xtts_status st = decode(a, sf, si, name, &n_src, err);
    sf_close(sf);
    if (st) return st;
    const float *res;
    size_t n_res;
    st = xtts_audio_resample(a, a->mono, n_src, si->samplerate, &res, &n_res, err);
    if (st) {
        char msg[XTTS_ERRMSG_MAX];
        snprintf(msg, sizeof msg, "%s", err ? err->msg : "");
        return xtts_error_set(err, st, "%s: %s", name, msg);
    }
    /* bounded input keeps a resampler's output finite; checked all the same, since a NaN
     * here would reach the mel as the silence floor */
    size_t bad = first_out_of_range(res, n_res, FINITE_LIMIT_BITS);
    if (bad < n_res)
        return xtts_error_set(err, XTTS_EINPUT, "%s: resampled sample %zu is %s", name, bad,
                              isnan(res[bad]) ? "NaN" : "infinite");
    size_t head = 0, tail = 0;
    if (a->opt.trim_db > 0.0) trim_bounds(res, n_res, a->opt.target_rate, a->opt.trim_db, &head, &tail);
    *samples = res + head;
    *n = n_res - head - tail;
    if (info) {
        info->source_rate = si->samplerate;
        info->channels = si->channels;
        info->source_frames = (int64_t)n_src;
        format_name(si->format, info->format, sizeof info->format);
        info->trimmed_head = head;
        info->trimmed_tail = tail;
    }
    return XTTS_OK;
}

/* sf_open_fd over the descriptor opened and checked below, or (a second try, the first one
 * having closed it) over the path opened again */
typedef struct {
    const char *path;
    int fd;
} fd_open;
static SNDFILE *open_fd(void *ctx, SF_INFO *si) {
    fd_open *o = ctx;
    int fd = o->fd >= 0 ? o->fd : open(o->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    o->fd = -1;
    return fd < 0 ? NULL : sf_open_fd(fd, SFM_READ, si, 1); /* closes fd, also on failure */
}

xtts_status xtts_audio_load(xtts_audio *a, const char *path, const float **samples, size_t *n,
                            xtts_audio_info *info, xtts_error *err) {
    /* O_NONBLOCK: a fifo (or a device) given as audio must be refused, not wait forever
     * in open() for a writer; it is cleared again once the file is known to be regular. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        int e = errno;
        return xtts_error_set(err, e == ENOENT || e == ENOTDIR ? XTTS_ENOTFOUND : XTTS_EIO, "%s: %s", path,
                              e == ENOENT ? "audio file not found" : strerror(e));
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || fcntl(fd, F_SETFL, O_RDONLY) != 0) {
        close(fd);
        return xtts_error_set(err, XTTS_EIO, "%s: not a regular file", path);
    }
    if (st.st_size == 0) {
        close(fd);
        return xtts_error_set(err, XTTS_EINPUT, "%s: empty file", path);
    }
    SF_INFO si;
    memset(&si, 0, sizeof si);
    fd_open o = {path, fd};
    char why[256] = "";
    SNDFILE *sf = xtts_sf_open(open_fd, &o, &si, why, sizeof why);
    if (!sf) return xtts_error_set(err, XTTS_EINPUT, "%s: not decodable audio: %s", path, why);
    return load_open(a, sf, &si, path, samples, n, info, err);
}

/* libsndfile virtual I/O over a read-only memory buffer. */
typedef struct {
    const unsigned char *data;
    sf_count_t len, pos;
} membuf;

static sf_count_t mem_len(void *u) { return ((membuf *)u)->len; }
static sf_count_t mem_seek(sf_count_t off, int whence, void *u) {
    membuf *m = u;
    sf_count_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? m->pos : m->len;
    sf_count_t p = base + off;
    if (p < 0 || p > m->len) return -1;
    m->pos = p;
    return p;
}
static sf_count_t mem_read(void *dst, sf_count_t count, void *u) {
    membuf *m = u;
    if (count < 0) return 0;
    sf_count_t left = m->len - m->pos;
    if (count > left) count = left;
    memcpy(dst, m->data + m->pos, (size_t)count);
    m->pos += count;
    return count;
}
static sf_count_t mem_write(const void *src, sf_count_t count, void *u) {
    (void)src; (void)count; (void)u;
    return 0;
}
static sf_count_t mem_tell(void *u) { return ((membuf *)u)->pos; }

static SNDFILE *open_mem(void *ctx, SF_INFO *si) {
    membuf *m = ctx;
    m->pos = 0;
    SF_VIRTUAL_IO io = {mem_len, mem_seek, mem_read, mem_write, mem_tell};
    return sf_open_virtual(&io, SFM_READ, si, m);
}

xtts_status xtts_audio_load_memory(xtts_audio *a, const void *data, size_t len, const char *name,
                                   const float **samples, size_t *n, xtts_audio_info *info, xtts_error *err) {
    if (!name) name = "(memory)";
    if (len == 0) return xtts_error_set(err, XTTS_EINPUT, "%s: empty file", name);
    membuf m = {data, (sf_count_t)len, 0};
    SF_INFO si;
    memset(&si, 0, sizeof si);
    char why[256] = "";
    SNDFILE *sf = xtts_sf_open(open_mem, &m, &si, why, sizeof why);
    if (!sf) return xtts_error_set(err, XTTS_EINPUT, "%s: not decodable audio: %s", name, why);
    return load_open(a, sf, &si, name, samples, n, info, err);
}
