/* features.c — energy and cepstra of a signal, in a stream, from the project's mel kernel
 * (kernels/mel.h), and the silence threshold (segment_internal.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kernels/mel.h"
#include "prep/segment/segment_internal.h"

struct seg_features {
    xtts_mel *mel;
    float *pend; /* samples not yet framed */
    size_t n_pend, cap_pend;
    float *out;  /* [SEG_NMELS][out_cap] */
    size_t out_cap;
    float acc[SEG_NMELS]; /* log-mel sum of the feature frame being built */
    int n_acc;
    float dct[SEG_DIM][SEG_NMELS];
};

xtts_status xtts_seg_features_new(seg_features **out, xtts_error *err) {
    *out = NULL;
    seg_features *f = calloc(1, sizeof *f);
    if (!f) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    xtts_mel_params p;
    xtts_mel_preset("whisper", &p, NULL);
    strcpy(p.preset, "segment");
    p.sample_rate = SEG_RATE, p.n_fft = SEG_NFFT, p.hop_samples = SEG_HOP, p.win_samples = 400;
    p.n_mels = SEG_NMELS, p.fmin_hz = 80, p.fmax_hz = 7600;
    p.mel_scale = XTTS_MEL_SCALE_HTK, p.mel_norm = XTTS_MEL_NORM_NONE;
    p.center = 0, p.pad_samples = 0, p.power = 2, p.log_kind = XTTS_LOG_LN, p.log_floor = 1e-10;
    p.drop_last_frame = 0, p.whisper_post = 0;
    xtts_status st = xtts_mel_new(&p, &f->mel, err);
    if (st) { free(f); return st; }
    for (int k = 0; k < SEG_DIM; k++)
        for (int m = 0; m < SEG_NMELS; m++)
            f->dct[k][m] = (float)cos(M_PI * (k + 1) * (m + 0.5) / SEG_NMELS);
    *out = f;
    return XTTS_OK;
}

void xtts_seg_features_delete(seg_features *f) {
    if (!f) return;
    xtts_mel_delete(f->mel);
    free(f->pend);
    free(f->out);
    free(f);
}

void xtts_seg_features_reset(seg_features *f) { f->n_pend = 0, f->n_acc = 0; }

/* ---- arrays in a temporary file ---------------------------------------------------------- */

static int spill_open(void) {
    const char *dir = getenv("TMPDIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/xtts-segment.XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0 && dir && *dir) {
        snprintf(path, sizeof path, "/tmp/xtts-segment.XXXXXX");
        fd = mkstemp(path);
    }
    if (fd >= 0) unlink(path);
    return fd;
}

int xtts_seg_spill_reserve(seg_spill *s, size_t bytes) {
    if (bytes <= s->cap && s->p) return 0;
    size_t page = (size_t)sysconf(_SC_PAGESIZE), c = s->cap ? s->cap : ((size_t)1 << 20);
    while (c < bytes) c *= 2;
    c = (c + page - 1) / page * page;
    if (!s->fd1 && !s->heap) {
        int fd = spill_open();
        if (fd >= 0) s->fd1 = fd + 1;
        else s->heap = 1;
    }
    if (s->fd1) {
        if (ftruncate(s->fd1 - 1, (off_t)c) == 0) {
            void *q = mmap(NULL, c, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd1 - 1, 0);
            if (q != MAP_FAILED) {
                if (s->p) munmap(s->p, s->cap); /* the contents are the file's */
                s->p = q, s->cap = c;
                return 0;
            }
        }
        if (s->p) return -1; /* a mapping already: it cannot become malloc'd */
        close(s->fd1 - 1);
        s->fd1 = 0, s->heap = 1;
    }
    void *q = realloc(s->p, c);
    if (!q) return -1;
    s->p = q, s->cap = c;
    return 0;
}

void xtts_seg_spill_trim(const seg_spill *s) {
    if (s->fd1 && s->p) madvise(s->p, s->cap, MADV_DONTNEED);
}

void xtts_seg_spill_free(seg_spill *s) {
    if (s->fd1) {
        if (s->p) munmap(s->p, s->cap);
        close(s->fd1 - 1);
    } else free(s->p);
    memset(s, 0, sizeof *s);
}

void xtts_seg_track_trim(const seg_track *t) {
    xtts_seg_spill_trim(&t->sp_energy);
    xtts_seg_spill_trim(&t->sp_cep);
    xtts_seg_spill_trim(&t->sp_silent);
    xtts_seg_spill_trim(&t->sp_feat);
}

void xtts_seg_track_free(seg_track *t) {
    if (!t) return;
    xtts_seg_spill_free(&t->sp_energy);
    xtts_seg_spill_free(&t->sp_cep);
    xtts_seg_spill_free(&t->sp_silent);
    xtts_seg_spill_free(&t->sp_feat);
    memset(t, 0, sizeof *t);
}

static int track_grow(seg_track *t, size_t n10) {
    if (t->n10 + n10 > t->cap10) {
        if (xtts_seg_spill_reserve(&t->sp_energy, (t->n10 + n10) * sizeof(float))) return -1;
        t->energy_db = t->sp_energy.p, t->cap10 = t->sp_energy.cap / sizeof(float);
    }
    size_t need40 = (t->n10 + n10) / SEG_SUB + 1;
    if (need40 > t->cap40) {
        if (xtts_seg_spill_reserve(&t->sp_cep, need40 * SEG_DIM * sizeof(float))) return -1;
        if (xtts_seg_spill_reserve(&t->sp_silent, need40)) return -1;
        t->cep = t->sp_cep.p, t->silent = t->sp_silent.p;
        size_t a = t->sp_cep.cap / (SEG_DIM * sizeof(float)), b = t->sp_silent.cap;
        t->cap40 = a < b ? a : b;
    }
    if (++t->n_fed >= 32) t->n_fed = 0, xtts_seg_track_trim(t);
    return 0;
}

/* One 10 ms frame of log-mel (column t of f->out, stride) into the track. */
static void take_frame(seg_features *f, size_t col, size_t stride, seg_track *t) {
    double power = 0;
    for (int m = 0; m < SEG_NMELS; m++) {
        float v = f->out[(size_t)m * stride + col];
        power += exp(v);
        f->acc[m] += v;
    }
    t->energy_db[t->n10++] = (float)(10.0 * log10(power + 1e-10));
    if (++f->n_acc < SEG_SUB) return;
    float *c = t->cep + t->n40 * SEG_DIM;
    for (int k = 0; k < SEG_DIM; k++) {
        float s = 0;
        for (int m = 0; m < SEG_NMELS; m++) s += f->dct[k][m] * f->acc[m];
        c[k] = s / SEG_SUB;
    }
    t->silent[t->n40++] = 0;
    memset(f->acc, 0, sizeof f->acc);
    f->n_acc = 0;
}

/* Frame what is pending. */
static xtts_status drain(seg_features *f, seg_track *t, xtts_error *err) {
    if (f->n_pend < SEG_NFFT) return XTTS_OK;
    size_t nf = 1 + (f->n_pend - SEG_NFFT) / SEG_HOP;
    if (nf > f->out_cap) {
        free(f->out);
        f->out = malloc((size_t)SEG_NMELS * nf * sizeof *f->out);
        if (!f->out) { f->out_cap = 0; return xtts_error_set(err, XTTS_ENOMEM, "out of memory (features)"); }
        f->out_cap = nf;
    }
    if (track_grow(t, nf)) return xtts_error_set(err, XTTS_ENOMEM, "out of memory (features)");
    size_t got = 0;
    xtts_status st = xtts_mel_compute(f->mel, f->pend, f->n_pend, f->out, nf, &got, NULL, err);
    if (st) return st;
    for (size_t k = 0; k < got; k++) take_frame(f, k, nf, t);
    size_t used = got * SEG_HOP;
    memmove(f->pend, f->pend + used, (f->n_pend - used) * sizeof *f->pend);
    f->n_pend -= used;
    return XTTS_OK;
}

xtts_status xtts_seg_features_feed(seg_features *f, const float *x, size_t n, seg_track *t, xtts_error *err) {
    while (n) {
        size_t room = 65536 - f->n_pend;
        if (!f->pend) {
            f->pend = malloc(65536 * sizeof *f->pend);
            if (!f->pend) return xtts_error_set(err, XTTS_ENOMEM, "out of memory (features)");
        }
        size_t k = n < room ? n : room;
        memcpy(f->pend + f->n_pend, x, k * sizeof *x);
        f->n_pend += k, x += k, n -= k;
        xtts_status st = drain(f, t, err);
        if (st) return st;
    }
    return XTTS_OK;
}

xtts_status xtts_seg_features_flush(seg_features *f, seg_track *t, xtts_error *err) {
    float zeros[SEG_NFFT] = {0};
    xtts_status st = xtts_seg_features_feed(f, zeros, SEG_NFFT - SEG_HOP, t, err);
    f->n_pend = 0, f->n_acc = 0;
    memset(f->acc, 0, sizeof f->acc);
    return st;
}

static int cmp_float(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* The energy a frame must pass to be speech: a third of the way from the floor (10th
 * percentile) to the loud frames (97th), and no lower than 45 dB under them; nothing when the
 * loud frames are not 10 dB over the floor (a silence, a steady noise). */
static float silence_threshold(const seg_track *t, const float *e, size_t n, int clean, float *tmp) {
    size_t step = (n + 199999) / 200000, m = 0; /* at most 200000 samples */
    for (size_t i = 0; i < n; i += step) {
        tmp[m++] = e[i];
        if ((m & 65535) == 0) xtts_seg_track_trim(t);
    }
    qsort(tmp, m, sizeof *tmp, cmp_float);
    float floor = tmp[m / 10], loud = tmp[(size_t)(m * 0.97)];
    if (loud - floor < 10.f) return loud + 1.f; /* no level stands out: all of it is silence (or noise) */
    if (clean) return loud - 40.f;
    float thr = floor + 0.33f * (loud - floor);
    if (thr < loud - 45.f) thr = loud - 45.f;
    return thr;
}

/* The feature vectors: the normalized cepstra and their slopes (a regression over two frames
 * on each side), the slopes weighted by SEG_DELTA_WEIGHT. */
static xtts_status add_deltas(seg_track *t, xtts_error *err) {
    if (xtts_seg_spill_reserve(&t->sp_feat, (t->n40 ? t->n40 : 1) * SEG_FEAT * sizeof(float)))
        return xtts_error_set(err, XTTS_ENOMEM, "out of memory (features)");
    t->feat = t->sp_feat.p;
    const float w = SEG_DELTA_WEIGHT;
    for (size_t i = 0; i < t->n40; i++) {
        if ((i & 32767) == 32767) xtts_seg_track_trim(t);
        float *f = t->feat + i * SEG_FEAT;
        memcpy(f, t->cep + i * SEG_DIM, SEG_DIM * sizeof *f);
        for (int k = 0; k < SEG_DIM; k++) {
            float d = 0;
            for (int o = 1; o <= 2; o++) {
                size_t lo = i >= (size_t)o ? i - (size_t)o : 0, hi = i + (size_t)o < t->n40 ? i + (size_t)o : t->n40 - 1;
                d += (float)o * (t->cep[hi * SEG_DIM + k] - t->cep[lo * SEG_DIM + k]);
            }
            f[SEG_DIM + k] = w * d / 10.f;
        }
    }
    xtts_seg_spill_free(&t->sp_cep); /* the slopes are taken: only the feature vectors are compared from here */
    t->cep = NULL;
    t->cap40 = 0;
    xtts_seg_track_trim(t);
    return XTTS_OK;
}

xtts_status xtts_seg_track_finish(seg_track *t, int clean, xtts_error *err) {
    if (!t->n10) return XTTS_OK;
    size_t m = t->n10 < 200000 ? t->n10 : 200000;
    float *tmp = malloc((m + 1) * sizeof *tmp);
    if (!tmp) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    t->silence_db = silence_threshold(t, t->energy_db, t->n10, clean, tmp);
    free(tmp);
    double mean[SEG_DIM] = {0}, sq[SEG_DIM] = {0};
    size_t speech = 0;
    for (size_t i = 0; i < t->n40; i++) {
        if ((i & 32767) == 32767) xtts_seg_track_trim(t);
        int below = 0;
        for (int k = 0; k < SEG_SUB; k++) below += t->energy_db[i * SEG_SUB + k] < t->silence_db;
        t->silent[i] = below >= 3;
        if (t->silent[i]) continue;
        speech++;
        for (int k = 0; k < SEG_DIM; k++) mean[k] += t->cep[i * SEG_DIM + k], sq[k] += t->cep[i * SEG_DIM + k] * t->cep[i * SEG_DIM + k];
    }
    if (!speech) return add_deltas(t, err);
    float mu[SEG_DIM], inv[SEG_DIM];
    for (int k = 0; k < SEG_DIM; k++) {
        mu[k] = (float)(mean[k] / speech);
        double var = sq[k] / speech - (double)mu[k] * mu[k];
        inv[k] = (float)(1.0 / sqrt(var > 1e-6 ? var : 1e-6));
    }
    double avg = 0;
    for (int k = 0; k < SEG_DIM; k++) avg += 1.0 / ((double)inv[k] * inv[k]);
    float scale = (float)(1.0 / sqrt(avg / SEG_DIM));
    for (size_t i = 0; i < t->n40; i++) {
        if ((i & 32767) == 32767) xtts_seg_track_trim(t);
        for (int k = 0; k < SEG_DIM; k++) t->cep[i * SEG_DIM + k] = (t->cep[i * SEG_DIM + k] - mu[k]) * scale;
    }
    return add_deltas(t, err);
}
