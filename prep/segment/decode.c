/* decode.c — the recording in a stream: its features (first pass) and its clips (second
 * pass), one block of libsndfile frames at a time, so that memory does not follow its length. */
#include <errno.h>
#include <math.h>
#include <soxr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "formats/audio/sndfile_open.h"
#include "prep/segment/segment_internal.h"

#define BLOCK 16384

static SNDFILE *open_path(void *ctx, SF_INFO *si) { return sf_open((const char *)ctx, SFM_READ, si); }

static xtts_status open_source(const char *path, SNDFILE **sf, SF_INFO *si, xtts_error *err) {
    struct stat stt;
    if (stat(path, &stt) != 0)
        return xtts_error_set(err, errno == ENOENT ? XTTS_ENOTFOUND : XTTS_EIO, "%s: %s", path, strerror(errno));
    if (S_ISDIR(stt.st_mode)) return xtts_error_set(err, XTTS_EIO, "%s: a directory, not audio", path);
    char why[256] = "";
    memset(si, 0, sizeof *si);
    *sf = xtts_sf_open(open_path, (void *)path, si, why, sizeof why);
    if (!*sf) return xtts_error_set(err, XTTS_EINPUT, "%s: not audio libsndfile can decode (%s)", path, why);
    if (si->channels < 1 || si->samplerate < 1000 || si->samplerate > 384000) {
        sf_close(*sf);
        return xtts_error_set(err, XTTS_EINPUT, "%s: unusable audio (%d channels at %d Hz)", path, si->channels,
                              si->samplerate);
    }
    return XTTS_OK;
}

/* Mix n frames of ch channels down in place; 0, or -1 at a sample that is not finite. */
static int mix_down(float *x, size_t n, int ch) {
    for (size_t i = 0; i < n; i++) {
        float s = 0;
        for (int c = 0; c < ch; c++) s += x[i * (size_t)ch + (size_t)c];
        s /= (float)ch;
        if (!isfinite(s)) return -1;
        x[i] = s;
    }
    return 0;
}

typedef struct {
    soxr_t soxr; /* NULL when the source is at 16 kHz */
    float *out;
    size_t cap;
} resampler;

static xtts_status feed_resampled(resampler *r, const float *x, size_t n, seg_features *f, seg_track *t,
                                  xtts_error *err) {
    if (!r->soxr) return xtts_seg_features_feed(f, x, n, t, err);
    for (;;) {
        size_t idone = 0, odone = 0;
        soxr_error_t e = soxr_process(r->soxr, x, n, &idone, r->out, r->cap, &odone);
        if (e) return xtts_error_set(err, XTTS_EINPUT, "resampling failed: %s", e);
        xtts_status st = xtts_seg_features_feed(f, r->out, odone, t, err);
        if (st) return st;
        if (x) x += idone, n -= idone;
        if ((x && n == 0) || (!x && odone == 0)) return XTTS_OK;
    }
}

xtts_status xtts_seg_decode_features(const char *path, seg_features *f, seg_track *t, seg_source_info *info,
                                void (*progress)(void *ctx, double seconds), void *ctx, xtts_error *err) {
    SNDFILE *sf;
    SF_INFO si;
    xtts_status st = open_source(path, &sf, &si, err);
    if (st) return st;
    info->rate = si.samplerate, info->channels = si.channels, info->frames = 0;
    resampler r = {0};
    float *buf = malloc((size_t)BLOCK * (size_t)si.channels * sizeof *buf);
    r.cap = BLOCK * 2;
    r.out = malloc(r.cap * sizeof *r.out);
    if (!buf || !r.out) { st = xtts_error_set(err, XTTS_ENOMEM, "out of memory"); goto done; }
    if (si.samplerate != SEG_RATE) {
        soxr_error_t e = NULL;
        soxr_io_spec_t io = soxr_io_spec(SOXR_FLOAT32_I, SOXR_FLOAT32_I);
        soxr_quality_spec_t q = soxr_quality_spec(SOXR_MQ, 0);
        r.soxr = soxr_create(si.samplerate, SEG_RATE, 1, &e, &io, &q, NULL);
        if (!r.soxr) { st = xtts_error_set(err, XTTS_EINPUT, "%s: resampler: %s", path, e ? e : "?"); goto done; }
    }
    xtts_seg_features_reset(f);
    for (sf_count_t got; (got = sf_readf_float(sf, buf, BLOCK)) > 0;) {
        if (mix_down(buf, (size_t)got, si.channels)) {
            st = xtts_error_set(err, XTTS_EINPUT, "%s: a sample that is not a number at %.2f s", path,
                                (double)info->frames / si.samplerate);
            goto done;
        }
        info->frames += got;
        if ((st = feed_resampled(&r, buf, (size_t)got, f, t, err))) goto done;
        if (progress && (info->frames / BLOCK) % 64 == 0) progress(ctx, (double)info->frames / si.samplerate);
    }
    if (sf_error(sf)) { st = xtts_error_set(err, XTTS_EINPUT, "%s: decode error at %.2f s: %s", path, (double)info->frames / si.samplerate, sf_strerror(sf)); goto done; }
    if (!info->frames) { st = xtts_error_set(err, XTTS_EINPUT, "%s: no samples", path); goto done; }
    if ((st = feed_resampled(&r, NULL, 0, f, t, err))) goto done;
    st = xtts_seg_features_flush(f, t, err);
    info->seconds = (double)info->frames / si.samplerate;
done:
    if (r.soxr) soxr_delete(r.soxr);
    free(r.out);
    free(buf);
    sf_close(sf);
    return st;
}

/* ---- the clips ------------------------------------------------------------------------- */

/* a clip is made in memory by libsndfile's virtual I/O, then written to FILE.tmp and renamed:
 * a full disk leaves no half clip under its name, and the failure is said once, with its
 * reason (libsndfile writing to the file itself printed "ftruncate() failed" besides) */
typedef struct { unsigned char *p; sf_count_t n, cap, pos; int oom; } membuf;
static sf_count_t mem_len(void *u) { return ((membuf *)u)->n; }
static sf_count_t mem_seek(sf_count_t off, int whence, void *u) {
    membuf *m = u;
    sf_count_t to = whence == SEEK_SET ? off : whence == SEEK_CUR ? m->pos + off : m->n + off;
    if (to < 0) return -1;
    return m->pos = to;
}
static sf_count_t mem_read(void *ptr, sf_count_t count, void *u) {
    membuf *m = u;
    sf_count_t k = m->pos < m->n ? (m->n - m->pos < count ? m->n - m->pos : count) : 0;
    memcpy(ptr, m->p + m->pos, (size_t)k);
    m->pos += k;
    return k;
}
static sf_count_t mem_write(const void *ptr, sf_count_t count, void *u) {
    membuf *m = u;
    if (m->pos + count > m->cap) {
        sf_count_t cap = m->cap ? m->cap : 65536;
        while (cap < m->pos + count) cap *= 2;
        unsigned char *q = realloc(m->p, (size_t)cap);
        if (!q) { m->oom = 1; return 0; }
        memset(q + m->cap, 0, (size_t)(cap - m->cap));
        m->p = q, m->cap = cap;
    }
    memcpy(m->p + m->pos, ptr, (size_t)count);
    m->pos += count;
    if (m->pos > m->n) m->n = m->pos;
    return count;
}
static sf_count_t mem_tell(void *u) { return ((membuf *)u)->pos; }

static xtts_status write_clip(const char *file, const float *x, size_t n, int rate, xtts_error *err) {
    SF_INFO so = {.samplerate = rate, .channels = 1, .format = SF_FORMAT_WAV | SF_FORMAT_PCM_16};
    SF_VIRTUAL_IO io = {mem_len, mem_seek, mem_read, mem_write, mem_tell};
    membuf m = {0};
    SNDFILE *out = sf_open_virtual(&io, SFM_WRITE, &so, &m);
    if (!out) {
        free(m.p);
        return xtts_error_set(err, XTTS_EIO, "%s: cannot write: %s", file, sf_strerror(NULL));
    }
    sf_command(out, SFC_SET_CLIPPING, NULL, SF_TRUE);
    sf_count_t w = sf_writef_float(out, x, (sf_count_t)n);
    int bad = sf_close(out) != 0 || w != (sf_count_t)n;
    if (bad || m.oom) {
        free(m.p);
        return xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory for the clip", file);
    }
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", file);
    FILE *f = fopen(tmp, "wb");
    int e = 0;
    if (!f) e = errno;
    else {
        if (fwrite(m.p, 1, (size_t)m.n, f) != (size_t)m.n || fflush(f)) e = errno ? errno : EIO;
        if (fclose(f) && !e) e = errno ? errno : EIO;
        if (!e && rename(tmp, file)) e = errno;
        if (e) remove(tmp);
    }
    free(m.p);
    return e ? xtts_error_set(err, XTTS_EIO, "%s: cannot write: %s", file, strerror(e)) : XTTS_OK;
}

/* Read frames [a, b) of the open source, mixed down, into *x (grown as needed). */
static xtts_status read_span(SNDFILE *sf, const SF_INFO *si, int64_t a, int64_t b, float **x, size_t *cap,
                             const char *path, xtts_error *err) {
    size_t n = (size_t)(b - a), need = n * (size_t)si->channels;
    if (need > *cap) {
        float *nx = realloc(*x, need * sizeof *nx);
        if (!nx) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
        *x = nx, *cap = need;
    }
    if (sf_seek(sf, a, SEEK_SET) < 0 || sf_readf_float(sf, *x, (sf_count_t)n) != (sf_count_t)n)
        return xtts_error_set(err, XTTS_EIO, "%s: cannot read back %.2f-%.2f s", path, (double)a / si->samplerate,
                              (double)b / si->samplerate);
    mix_down(*x, n, si->channels);
    return XTTS_OK;
}

xtts_status xtts_seg_write_wavs(const char *path, const char *out_dir, const char *stem, const seg_clip *clips,
                           size_t n_clips, int sample_rate, xtts_error *err) {
    if (!n_clips) return XTTS_OK;
    SNDFILE *sf;
    SF_INFO si;
    xtts_status st = open_source(path, &sf, &si, err);
    if (st) return st;
    float *x = NULL, *y = NULL;
    size_t cap = 0;
    int rate = sample_rate ? sample_rate : si.samplerate;
    char file[4096];
    for (size_t k = 0; k < n_clips && !st; k++) {
        int64_t a = (int64_t)llround(clips[k].start * si.samplerate), b = (int64_t)llround(clips[k].end * si.samplerate);
        if (b > si.frames) b = si.frames;
        if (a < 0) a = 0;
        if (b <= a) continue;
        if ((st = read_span(sf, &si, a, b, &x, &cap, path, err))) break;
        size_t n = (size_t)(b - a);
        const float *w = x;
        if (rate != si.samplerate) {
            size_t m = (size_t)ceil((double)n * rate / si.samplerate) + 16, done = 0;
            free(y);
            y = malloc(m * sizeof *y);
            soxr_quality_spec_t q = soxr_quality_spec(SOXR_HQ, 0);
            if (!y || soxr_oneshot(si.samplerate, rate, 1, x, n, NULL, y, m, &done, NULL, &q, NULL)) {
                st = xtts_error_set(err, XTTS_ENOMEM, "%s: resampling a clip failed", path);
                break;
            }
            w = y, n = done;
        }
        snprintf(file, sizeof file, "%s/wavs/%s_%04zu.wav", out_dir, stem, k + 1);
        st = write_clip(file, w, n, rate, err);
    }
    free(x);
    free(y);
    sf_close(sf);
    return st;
}
