/* flac_mem.c — FLAC in memory through libsndfile's virtual I/O (formats/audio/flac_mem.h). */
#include "formats/audio/flac_mem.h"

#include <sndfile.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/audio/sndfile_open.h"

/* A growable memory file: libsndfile seeks back to rewrite the FLAC STREAMINFO block. */
typedef struct {
    uint8_t *data;
    const uint8_t *rdata; /* read-only source when decoding */
    sf_count_t len, cap, pos;
    int failed;
} memfile;

static sf_count_t mf_len(void *u) { return ((memfile *)u)->len; }
static sf_count_t mf_seek(sf_count_t off, int whence, void *u) {
    memfile *m = u;
    sf_count_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? m->pos : m->len;
    if (off > 0 && base > INT64_MAX - off) return -1;
    sf_count_t p = base + off;
    if (p < 0 || p > m->len) return -1;
    m->pos = p;
    return p;
}
static sf_count_t mf_read(void *dst, sf_count_t count, void *u) {
    memfile *m = u;
    if (count <= 0) return 0;
    sf_count_t left = m->len - m->pos;
    if (count > left) count = left;
    memcpy(dst, (m->rdata ? m->rdata : m->data) + m->pos, (size_t)count);
    m->pos += count;
    return count;
}
static sf_count_t mf_write(const void *src, sf_count_t count, void *u) {
    memfile *m = u;
    if (count <= 0 || m->rdata) return 0;
    sf_count_t end = m->pos + count;
    if (end > m->cap) {
        sf_count_t c = m->cap ? m->cap : 65536;
        while (c < end) c *= 2;
        uint8_t *p = realloc(m->data, (size_t)c);
        if (!p) {
            m->failed = 1;
            return 0;
        }
        m->data = p;
        m->cap = c;
    }
    memcpy(m->data + m->pos, src, (size_t)count);
    m->pos = end;
    if (end > m->len) m->len = end;
    return count;
}
static sf_count_t mf_tell(void *u) { return ((memfile *)u)->pos; }

static SNDFILE *open_write(void *ctx, SF_INFO *si) {
    memfile *m = ctx;
    m->pos = m->len = 0; /* a second try starts the stream again */
    m->failed = 0;
    SF_VIRTUAL_IO io = {mf_len, mf_seek, mf_read, mf_write, mf_tell};
    return sf_open_virtual(&io, SFM_WRITE, si, ctx);
}
static SNDFILE *open_read(void *ctx, SF_INFO *si) {
    ((memfile *)ctx)->pos = 0;
    SF_VIRTUAL_IO io = {mf_len, mf_seek, mf_read, mf_write, mf_tell};
    return sf_open_virtual(&io, SFM_READ, si, ctx);
}

xtts_status xtts_flac_encode_i16(const int16_t *x, size_t n, int rate, uint8_t **out, size_t *out_len,
                                 xtts_error *err) {
    *out = NULL;
    *out_len = 0;
    memfile m;
    memset(&m, 0, sizeof m);
    SF_INFO si;
    memset(&si, 0, sizeof si);
    si.samplerate = rate;
    si.channels = 1;
    si.format = SF_FORMAT_FLAC | SF_FORMAT_PCM_16;
    char why[256] = "";
    SNDFILE *sf = xtts_sf_open(open_write, &m, &si, why, sizeof why);
    if (!sf) {
        free(m.data);
        return xtts_error_set(err, XTTS_EIO, "flac: cannot start a stream at %d Hz: %s", rate, why);
    }
    size_t done = 0;
    while (done < n) {
        size_t k = n - done < 65536 ? n - done : 65536;
        if (sf_write_short(sf, x + done, (sf_count_t)k) != (sf_count_t)k) break;
        done += k;
    }
    int cerr = sf_close(sf);
    if (done != n || cerr || m.failed) {
        free(m.data);
        return xtts_error_set(err, m.failed ? XTTS_ENOMEM : XTTS_EIO, "flac: encoding %zu samples failed", n);
    }
    *out = m.data;
    *out_len = (size_t)m.len;
    return XTTS_OK;
}

xtts_status xtts_flac_decode_i16(const void *buf, size_t len, int16_t *out, size_t n, xtts_error *err) {
    memfile m;
    memset(&m, 0, sizeof m);
    m.rdata = buf;
    m.len = (sf_count_t)len;
    SF_INFO si;
    memset(&si, 0, sizeof si);
    char why[256] = "";
    SNDFILE *sf = xtts_sf_open(open_read, &m, &si, why, sizeof why);
    if (!sf) return xtts_error_set(err, XTTS_ECORRUPT, "flac stream does not open: %s", why);
    if ((si.format & SF_FORMAT_TYPEMASK) != SF_FORMAT_FLAC || si.channels != 1 || si.frames != (sf_count_t)n) {
        sf_close(sf);
        return xtts_error_set(err, XTTS_ECORRUPT, "flac stream is not %zu mono samples (%lld frames, %d channels)", n,
                              (long long)si.frames, si.channels);
    }
    size_t done = 0;
    while (done < n) {
        size_t k = n - done < 65536 ? n - done : 65536;
        sf_count_t got = sf_read_short(sf, out + done, (sf_count_t)k);
        if (got <= 0) break;
        done += (size_t)got;
    }
    int16_t extra;
    sf_count_t more = done == n ? sf_read_short(sf, &extra, 1) : 0;
    int e = sf_error(sf);
    sf_close(sf);
    if (done != n || more != 0 || e)
        return xtts_error_set(err, XTTS_ECORRUPT, "flac stream decodes to %zu of %zu samples", done, n);
    return XTTS_OK;
}
