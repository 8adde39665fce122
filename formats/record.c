/* record.c — encode and decode cache records (formats/cache.md, "Record").
 *
 * Header layout (little-endian, 64 bytes):
 *   0 magic "XTRC"  4 version u16  6 dtype u8  7 flags u8  8 n_mels u16  10 split u8
 *   11 reserved u8  12 id_len u16  14 reserved u16  16 n_tokens u32  20 tokens_padded u32
 *   24 n_frames u32  28 frames_padded u32  32 speaker_id u32  36 lang_id u32
 *   40 n_samples u32  44 payload_bytes u32  48 frame_bytes u32  52 pad_value f32
 *   56 frame_crc32 u32 (CRC-32 of the zstd frame's bytes)  60 crc32(bytes 0..59 || id)
 * followed by id_len bytes of id and one zstd frame of frame_bytes bytes.
 *
 * Why frame_crc32: zstd's content checksum covers the decompressed bytes only, and the
 * compressed form has bits that do not change the content (the frame descriptor's unused
 * bit, the window size, padding bits in entropy tables), so without it some single-bit
 * changes to a stored record would go unnoticed.
 */
#define ZSTD_STATIC_LINKING_ONLY
#include "formats/record.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#define PAYLOAD_MAX ((size_t)1 << 30)

struct xtts_record_encoder {
    ZSTD_CCtx *cctx;
    xtts_dtype dtype;
    unsigned flags;
    uint8_t *raw;   /* payload before compression */
    size_t raw_cap;
    uint8_t *out;   /* header + id + frame */
    size_t out_cap;
};

struct xtts_record_decoder {
    ZSTD_DCtx *dctx;
    uint8_t *raw;
    size_t raw_cap;
    int stream; /* write mels with non-temporal stores (xtts_record_decoder_set_streaming) */
};

const char *xtts_dtype_name(xtts_dtype d) { return d == XTTS_DTYPE_F16 ? "fp16" : "fp32"; }

int xtts_dtype_parse(const char *s) {
    if (!s) return -1;
    if (!strcmp(s, "fp16") || !strcmp(s, "float16")) return XTTS_DTYPE_F16;
    if (!strcmp(s, "fp32") || !strcmp(s, "float32")) return XTTS_DTYPE_F32;
    return -1;
}

static int grow(uint8_t **buf, size_t *cap, size_t need) {
    if (*cap >= need) return 0;
    size_t n = *cap ? *cap : 4096;
    while (n < need) n *= 2;
    uint8_t *p = realloc(*buf, n);
    if (!p) return -1;
    *buf = p;
    *cap = n;
    return 0;
}

xtts_record_encoder *xtts_record_encoder_new(xtts_dtype dtype, int zstd_level, unsigned flags) {
    xtts_record_encoder *e = calloc(1, sizeof *e);
    if (!e) return NULL;
    e->cctx = ZSTD_createCCtx();
    if (!e->cctx) { free(e); return NULL; }
    if (zstd_level < 1) zstd_level = 1;
    if (zstd_level > ZSTD_maxCLevel()) zstd_level = ZSTD_maxCLevel();
    ZSTD_CCtx_setParameter(e->cctx, ZSTD_c_compressionLevel, zstd_level);
    ZSTD_CCtx_setParameter(e->cctx, ZSTD_c_checksumFlag, 1);
    ZSTD_CCtx_setParameter(e->cctx, ZSTD_c_contentSizeFlag, 1);
    e->dtype = dtype;
    e->flags = flags & XTTS_RECORD_SHUFFLED;
    return e;
}

void xtts_record_encoder_delete(xtts_record_encoder *e) {
    if (!e) return;
    ZSTD_freeCCtx(e->cctx);
    free(e->raw);
    free(e->out);
    free(e);
}

/* Scatter element bytes into planes: plane b holds byte b of every element. */
static void shuffle_bytes(uint8_t *dst, const uint8_t *src, size_t n, size_t esize) {
    for (size_t b = 0; b < esize; b++) {
        uint8_t *plane = dst + b * n;
        for (size_t i = 0; i < n; i++) plane[i] = src[i * esize + b];
    }
}

static void unshuffle_bytes(uint8_t *dst, const uint8_t *src, size_t n, size_t esize) {
    if (esize == 2) { /* the common case (fp16): a loop gcc vectorizes */
        const uint8_t *lo = src, *hi = src + n;
        for (size_t i = 0; i < n; i++) {
            uint16_t v = (uint16_t)(lo[i] | (hi[i] << 8));
            memcpy(dst + 2 * i, &v, 2);
        }
        return;
    }
    for (size_t b = 0; b < esize; b++) {
        const uint8_t *plane = src + b * n;
        for (size_t i = 0; i < n; i++) dst[i * esize + b] = plane[i];
    }
}

/* Writing decoded mels. join_*: byte planes lo (byte 0) and hi (byte 1) of n fp16 values
 * into dst, as fp16 or converted to fp32 (exact); fill_*: runs of pad values; cvt_f32 and
 * copy_out: the plain layout. With nt (the decoder's streaming mode) the vector bodies
 * use non-temporal stores from the first 32-byte aligned element on: the output goes
 * to memory without first being read into the cache, which keeps the decoder's own
 * working set cached and leaves the memory bandwidth of a read-for-ownership to other
 * threads; store_fence() then orders those stores before anything the caller does. */
#if defined(__AVX2__) && defined(__F16C__)
#include <immintrin.h>
static inline int unaligned32(const void *p) { return ((uintptr_t)p & 31) != 0; }
static inline void put256(void *p, __m256i v, int nt) {
    if (nt) _mm256_stream_si256((__m256i *)p, v);
    else _mm256_storeu_si256((__m256i *)p, v);
}
static void join_f16(uint16_t *dst, const uint8_t *lo, const uint8_t *hi, size_t n, int nt) {
    size_t i = 0;
    if (nt)
        for (; i < n && unaligned32(dst + i); i++) dst[i] = (uint16_t)(lo[i] | (hi[i] << 8));
    for (; i + 32 <= n; i += 32) {
        __m256i l = _mm256_loadu_si256((const __m256i *)(const void *)(lo + i));
        __m256i h = _mm256_loadu_si256((const __m256i *)(const void *)(hi + i));
        __m256i a = _mm256_unpacklo_epi8(l, h), b = _mm256_unpackhi_epi8(l, h); /* 0-7|16-23, 8-15|24-31 */
        put256(dst + i, _mm256_permute2x128_si256(a, b, 0x20), nt);
        put256(dst + i + 16, _mm256_permute2x128_si256(a, b, 0x31), nt);
    }
    for (; i < n; i++) dst[i] = (uint16_t)(lo[i] | (hi[i] << 8));
}
static void join_f32(float *dst, const uint8_t *lo, const uint8_t *hi, size_t n, int nt) {
    size_t i = 0;
    if (nt)
        for (; i < n && unaligned32(dst + i); i++) dst[i] = xtts_f16_to_f32((uint16_t)(lo[i] | (hi[i] << 8)));
    for (; i + 16 <= n; i += 16) {
        __m128i l = _mm_loadu_si128((const __m128i *)(const void *)(lo + i));
        __m128i h = _mm_loadu_si128((const __m128i *)(const void *)(hi + i));
        put256(dst + i, _mm256_castps_si256(_mm256_cvtph_ps(_mm_unpacklo_epi8(l, h))), nt);
        put256(dst + i + 8, _mm256_castps_si256(_mm256_cvtph_ps(_mm_unpackhi_epi8(l, h))), nt);
    }
    for (; i < n; i++) dst[i] = xtts_f16_to_f32((uint16_t)(lo[i] | (hi[i] << 8)));
}
static void fill_u16(uint16_t *dst, uint16_t v, size_t n, int nt) {
    size_t i = 0;
    if (nt) {
        for (; i < n && unaligned32(dst + i); i++) dst[i] = v;
        __m256i x = _mm256_set1_epi16((short)v);
        for (; i + 16 <= n; i += 16) _mm256_stream_si256((__m256i *)(void *)(dst + i), x);
    }
    for (; i < n; i++) dst[i] = v;
}
static void fill_f32(float *dst, float v, size_t n, int nt) {
    size_t i = 0;
    if (nt) {
        for (; i < n && unaligned32(dst + i); i++) dst[i] = v;
        __m256 x = _mm256_set1_ps(v);
        for (; i + 8 <= n; i += 8) _mm256_stream_ps(dst + i, x);
    }
    for (; i < n; i++) dst[i] = v;
}
static void cvt_f32(float *dst, const uint16_t *src, size_t n, int nt) {
    if (!nt) {
        xtts_f16_to_f32_n(src, dst, n);
        return;
    }
    size_t i = 0;
    for (; i < n && unaligned32(dst + i); i++) dst[i] = xtts_f16_to_f32(src[i]);
    for (; i + 8 <= n; i += 8)
        _mm256_stream_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(src + i))));
    for (; i < n; i++) dst[i] = xtts_f16_to_f32(src[i]);
}
static void copy_out(uint8_t *dst, const uint8_t *src, size_t n, int nt) {
    if (!nt) {
        memcpy(dst, src, n);
        return;
    }
    size_t i = 0;
    for (; i < n && unaligned32(dst + i); i++) dst[i] = src[i];
    for (; i + 32 <= n; i += 32)
        _mm256_stream_si256((__m256i *)(void *)(dst + i), _mm256_loadu_si256((const __m256i *)(const void *)(src + i)));
    memcpy(dst + i, src + i, n - i);
}
static void store_fence(void) { _mm_sfence(); }
#else
static void join_f16(uint16_t *dst, const uint8_t *lo, const uint8_t *hi, size_t n, int nt) {
    (void)nt;
    for (size_t i = 0; i < n; i++) dst[i] = (uint16_t)(lo[i] | (hi[i] << 8));
}
static void join_f32(float *dst, const uint8_t *lo, const uint8_t *hi, size_t n, int nt) {
    uint16_t blk[256];
    for (size_t i0 = 0; i0 < n; i0 += 256) {
        size_t len = n - i0 < 256 ? n - i0 : 256;
        join_f16(blk, lo + i0, hi + i0, len, nt);
        xtts_f16_to_f32_n(blk, dst + i0, len);
    }
}
static void fill_u16(uint16_t *dst, uint16_t v, size_t n, int nt) {
    (void)nt;
    for (size_t i = 0; i < n; i++) dst[i] = v;
}
static void fill_f32(float *dst, float v, size_t n, int nt) {
    (void)nt;
    for (size_t i = 0; i < n; i++) dst[i] = v;
}
static void cvt_f32(float *dst, const uint16_t *src, size_t n, int nt) {
    (void)nt;
    xtts_f16_to_f32_n(src, dst, n);
}
static void copy_out(uint8_t *dst, const uint8_t *src, size_t n, int nt) {
    (void)nt;
    memcpy(dst, src, n);
}
static void store_fence(void) {}
#endif

static void put_f32(uint8_t *p, float v) {
    uint32_t u;
    memcpy(&u, &v, 4);
    xtts_put_le32(p, u);
}

static float get_f32(const uint8_t *p) {
    uint32_t u = xtts_get_le32(p);
    float v;
    memcpy(&v, &u, 4);
    return v;
}

xtts_status xtts_record_encode(xtts_record_encoder *e, const xtts_record_input *in, const uint8_t **out,
                               size_t *out_len, xtts_error *err) {
    const char *id = in->id ? in->id : "";
    size_t id_len = strlen(id);
    if (id_len > XTTS_RECORD_MAX_ID)
        return xtts_error_set(err, XTTS_ERANGE, "record '%.64s...': id longer than %d bytes", id, XTTS_RECORD_MAX_ID);
    if (in->n_tokens > in->tokens_padded || in->tokens_padded > XTTS_RECORD_MAX_TOKENS)
        return xtts_error_set(err, XTTS_ERANGE, "record '%s': %u tokens do not fit %u padded (limit %d)", id,
                              in->n_tokens, in->tokens_padded, XTTS_RECORD_MAX_TOKENS);
    if (in->n_frames > in->frames_padded || in->frames_padded > XTTS_RECORD_MAX_FRAMES)
        return xtts_error_set(err, XTTS_ERANGE, "record '%s': %u frames do not fit %u padded (limit %d)", id,
                              in->n_frames, in->frames_padded, XTTS_RECORD_MAX_FRAMES);
    if (in->n_mels == 0 || in->n_mels > XTTS_RECORD_MAX_MELS)
        return xtts_error_set(err, XTTS_ERANGE, "record '%s': n_mels %u out of range", id, in->n_mels);
    if (in->split > XTTS_SPLIT_VAL)
        return xtts_error_set(err, XTTS_ERANGE, "record '%s': bad split %u", id, in->split);
    size_t esize = xtts_dtype_size(e->dtype);
    size_t n_mel = (size_t)in->n_mels * in->frames_padded;
    size_t tok_bytes = (size_t)in->tokens_padded * 4;
    size_t payload = tok_bytes + n_mel * esize;
    if (payload > PAYLOAD_MAX)
        return xtts_error_set(err, XTTS_ERANGE, "record '%s': payload of %zu bytes too large", id, payload);
    /* raw holds the payload; with shuffling a second half holds the unshuffled mel. */
    if (grow(&e->raw, &e->raw_cap, payload + ((e->flags & XTTS_RECORD_SHUFFLED) ? n_mel * esize : 0)))
        return xtts_error_set(err, XTTS_ENOMEM, "record '%s': out of memory", id);
    uint8_t *raw = e->raw;
    for (size_t i = 0; i < in->tokens_padded; i++) xtts_put_le32(raw + 4 * i, (uint32_t)in->tokens[i]);
    uint8_t *mel_dst = raw + tok_bytes;
    uint8_t *mel_tmp = (e->flags & XTTS_RECORD_SHUFFLED) ? raw + payload : mel_dst;
    if (e->dtype == XTTS_DTYPE_F16) {
        xtts_f32_to_f16_n(in->mel, (uint16_t *)(void *)mel_tmp, n_mel); /* 2-aligned: after int32 tokens */
    } else {
        for (size_t i = 0; i < n_mel; i++) put_f32(mel_tmp + 4 * i, in->mel[i]);
    }
    if (e->flags & XTTS_RECORD_SHUFFLED) shuffle_bytes(mel_dst, mel_tmp, n_mel, esize);

    size_t bound = ZSTD_compressBound(payload);
    size_t head = XTTS_RECORD_HEADER_BYTES + id_len;
    if (grow(&e->out, &e->out_cap, head + bound))
        return xtts_error_set(err, XTTS_ENOMEM, "record '%s': out of memory", id);
    size_t fsz = ZSTD_compress2(e->cctx, e->out + head, bound, raw, payload);
    if (ZSTD_isError(fsz))
        return xtts_error_set(err, XTTS_EIO, "record '%s': zstd: %s", id, ZSTD_getErrorName(fsz));

    uint8_t *h = e->out;
    memset(h, 0, XTTS_RECORD_HEADER_BYTES);
    memcpy(h, XTTS_RECORD_MAGIC, 4);
    xtts_put_le16(h + 4, XTTS_RECORD_VERSION);
    h[6] = (uint8_t)e->dtype;
    h[7] = (uint8_t)e->flags;
    xtts_put_le16(h + 8, in->n_mels);
    h[10] = in->split;
    xtts_put_le16(h + 12, (uint16_t)id_len);
    xtts_put_le32(h + 16, in->n_tokens);
    xtts_put_le32(h + 20, in->tokens_padded);
    xtts_put_le32(h + 24, in->n_frames);
    xtts_put_le32(h + 28, in->frames_padded);
    xtts_put_le32(h + 32, in->speaker_id);
    xtts_put_le32(h + 36, in->lang_id);
    xtts_put_le32(h + 40, in->n_samples);
    xtts_put_le32(h + 44, (uint32_t)payload);
    xtts_put_le32(h + 48, (uint32_t)fsz);
    put_f32(h + 52, in->pad_value);
    xtts_put_le32(h + 56, xtts_crc32(0, e->out + head, fsz));
    memcpy(h + XTTS_RECORD_HEADER_BYTES, id, id_len);
    uint32_t crc = xtts_crc32(0, h, 60);
    crc = xtts_crc32(crc, h + XTTS_RECORD_HEADER_BYTES, id_len);
    xtts_put_le32(h + 60, crc);
    *out = e->out;
    *out_len = head + fsz;
    return XTTS_OK;
}

xtts_status xtts_record_parse_header(const void *buf, size_t buf_len, xtts_record_header *hdr, xtts_error *err) {
    const uint8_t *h = buf;
    if (!buf || buf_len < XTTS_RECORD_HEADER_BYTES)
        return xtts_error_set(err, XTTS_ECORRUPT, "record truncated: %zu bytes, header needs %d", buf_len,
                              XTTS_RECORD_HEADER_BYTES);
    if (memcmp(h, XTTS_RECORD_MAGIC, 4) != 0)
        return xtts_error_set(err, XTTS_ECORRUPT, "bad record magic");
    uint16_t id_len = xtts_get_le16(h + 12);
    if (id_len > XTTS_RECORD_MAX_ID || (size_t)XTTS_RECORD_HEADER_BYTES + id_len > buf_len)
        return xtts_error_set(err, XTTS_ECORRUPT, "record id length %u does not fit %zu bytes", id_len, buf_len);
    uint32_t crc = xtts_crc32(0, h, 60);
    crc = xtts_crc32(crc, h + XTTS_RECORD_HEADER_BYTES, id_len);
    if (crc != xtts_get_le32(h + 60))
        return xtts_error_set(err, XTTS_ECORRUPT, "record header checksum mismatch");
    xtts_record_header t;
    memset(&t, 0, sizeof t);
    t.version = xtts_get_le16(h + 4);
    t.dtype = h[6];
    t.flags = h[7];
    t.n_mels = xtts_get_le16(h + 8);
    t.split = h[10];
    t.id_len = id_len;
    t.n_tokens = xtts_get_le32(h + 16);
    t.tokens_padded = xtts_get_le32(h + 20);
    t.n_frames = xtts_get_le32(h + 24);
    t.frames_padded = xtts_get_le32(h + 28);
    t.speaker_id = xtts_get_le32(h + 32);
    t.lang_id = xtts_get_le32(h + 36);
    t.n_samples = xtts_get_le32(h + 40);
    t.payload_bytes = xtts_get_le32(h + 44);
    t.frame_bytes = xtts_get_le32(h + 48);
    t.pad_value = get_f32(h + 52);
    memcpy(t.id, h + XTTS_RECORD_HEADER_BYTES, id_len);
    t.id[id_len] = '\0';
    if (t.version != XTTS_RECORD_VERSION)
        return xtts_error_set(err, XTTS_EMISMATCH, "record '%s': version %u, this build reads %d", t.id, t.version,
                              XTTS_RECORD_VERSION);
    if (t.dtype > XTTS_DTYPE_F16 || (t.flags & ~XTTS_RECORD_SHUFFLED) || t.split > XTTS_SPLIT_VAL)
        return xtts_error_set(err, XTTS_ECORRUPT, "record '%s': bad dtype, flags or split", t.id);
    if (t.n_mels == 0 || t.n_mels > XTTS_RECORD_MAX_MELS || t.tokens_padded > XTTS_RECORD_MAX_TOKENS ||
        t.frames_padded > XTTS_RECORD_MAX_FRAMES)
        return xtts_error_set(err, XTTS_ECORRUPT, "record '%s': shape out of limits", t.id);
    if (t.n_tokens > t.tokens_padded || t.n_frames > t.frames_padded)
        return xtts_error_set(err, XTTS_ECORRUPT, "record '%s': lengths (%u tokens, %u frames) exceed padded shape (%u, %u)",
                              t.id, t.n_tokens, t.tokens_padded, t.n_frames, t.frames_padded);
    size_t expect = (size_t)t.tokens_padded * 4 + (size_t)t.n_mels * t.frames_padded * xtts_dtype_size(t.dtype);
    if (expect > PAYLOAD_MAX) /* the encoder never writes these; refuse before allocating */
        return xtts_error_set(err, XTTS_ECORRUPT, "record '%s': payload of %zu bytes over the limit", t.id, expect);
    if (t.payload_bytes != expect)
        return xtts_error_set(err, XTTS_ECORRUPT, "record '%s': payload size %u, shape says %zu", t.id, t.payload_bytes, expect);
    if ((size_t)XTTS_RECORD_HEADER_BYTES + id_len + t.frame_bytes != buf_len)
        return xtts_error_set(err, XTTS_ECORRUPT, "record '%s': %zu bytes stored, header says %zu", t.id, buf_len,
                              (size_t)XTTS_RECORD_HEADER_BYTES + id_len + t.frame_bytes);
    if (!isfinite(t.pad_value))
        return xtts_error_set(err, XTTS_ECORRUPT, "record '%s': pad value is not finite", t.id);
    if (hdr) *hdr = t;
    return XTTS_OK;
}

xtts_record_decoder *xtts_record_decoder_new(void) {
    xtts_record_decoder *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    d->dctx = ZSTD_createDCtx();
    if (!d->dctx) { free(d); return NULL; }
    return d;
}

/* Streaming mode (declared where it is used until formats/record.h has it): decoded
 * mels are written with non-temporal stores, for outputs read later rather than at once
 * (a batch being filled); each decode ends with a store fence. Values are the same. */
void xtts_record_decoder_set_streaming(xtts_record_decoder *d, int on) { d->stream = on != 0; }

void xtts_record_decoder_delete(xtts_record_decoder *d) {
    if (!d) return;
    ZSTD_freeDCtx(d->dctx);
    free(d->raw);
    free(d);
}

xtts_status xtts_record_decode(xtts_record_decoder *d, const void *buf, size_t buf_len, xtts_record_header *hdr_out,
                               int32_t *tokens, size_t tokens_cap, void *mel, xtts_dtype out_dtype,
                               size_t n_mels_cap, size_t frames_cap, xtts_error *err) {
    xtts_record_header hb, *h = hdr_out ? hdr_out : &hb;
    xtts_status st = xtts_record_parse_header(buf, buf_len, h, err);
    if (st) return st;
    if (tokens && h->tokens_padded > tokens_cap)
        return xtts_error_set(err, XTTS_ERANGE, "record '%s': %u padded tokens exceed buffer of %zu", h->id,
                              h->tokens_padded, tokens_cap);
    if (mel && (h->n_mels > n_mels_cap || h->frames_padded > frames_cap))
        return xtts_error_set(err, XTTS_ERANGE, "record '%s': mel [%u, %u] exceeds buffer [%zu, %zu]", h->id, h->n_mels,
                              h->frames_padded, n_mels_cap, frames_cap);
    const uint8_t *frame = (const uint8_t *)buf + XTTS_RECORD_HEADER_BYTES + h->id_len;
    if (xtts_crc32(0, frame, h->frame_bytes) != xtts_get_le32((const uint8_t *)buf + 56))
        return xtts_error_set(err, XTTS_ECORRUPT, "record '%s': zstd frame checksum mismatch", h->id);
    unsigned long long csize = ZSTD_getFrameContentSize(frame, h->frame_bytes);
    if (csize != h->payload_bytes)
        return xtts_error_set(err, XTTS_ECORRUPT, "record '%s': zstd frame content size does not match header", h->id);
    if (grow(&d->raw, &d->raw_cap, h->payload_bytes ? h->payload_bytes : 1))
        return xtts_error_set(err, XTTS_ENOMEM, "record '%s': out of memory", h->id);
    size_t got = ZSTD_decompressDCtx(d->dctx, d->raw, h->payload_bytes, frame, h->frame_bytes);
    if (ZSTD_isError(got))
        return xtts_error_set(err, XTTS_ECORRUPT, "record '%s': zstd frame: %s", h->id, ZSTD_getErrorName(got));
    if (got != h->payload_bytes)
        return xtts_error_set(err, XTTS_ECORRUPT, "record '%s': payload decompressed to %zu bytes, expected %u", h->id,
                              got, h->payload_bytes);
    const uint8_t *raw = d->raw;
    if (tokens)
        for (size_t i = 0; i < h->tokens_padded; i++) tokens[i] = (int32_t)xtts_get_le32(raw + 4 * i);
    if (!mel) return XTTS_OK;
    const uint8_t *src = raw + (size_t)h->tokens_padded * 4;
    size_t esize = xtts_dtype_size(h->dtype);
    size_t T = h->frames_padded, C = h->n_mels, n = C * T;
    int nt = d->stream;
    if ((h->flags & XTTS_RECORD_SHUFFLED) && h->dtype == XTTS_DTYPE_F16) {
        /* the common case, fused: join each row's two byte planes and write (or convert
         * and write) straight into the caller's buffer; one pass, no scratch copy */
        const uint8_t *lo = src, *hi = src + n;
        uint16_t pad16 = xtts_f32_to_f16(h->pad_value);
        for (size_t c = 0; c < C; c++) {
            if (out_dtype == XTTS_DTYPE_F16) {
                uint16_t *dst = (uint16_t *)mel + c * frames_cap;
                join_f16(dst, lo + c * T, hi + c * T, T, nt);
                fill_u16(dst + T, pad16, frames_cap - T, nt);
            } else {
                float *dst = (float *)mel + c * frames_cap;
                join_f32(dst, lo + c * T, hi + c * T, T, nt);
                fill_f32(dst + T, h->pad_value, frames_cap - T, nt);
            }
        }
        if (nt) store_fence();
        return XTTS_OK;
    }
    if (h->flags & XTTS_RECORD_SHUFFLED) {
        /* unshuffle in place is not possible; use the tail of a grown scratch buffer */
        size_t off = h->payload_bytes;
        if (grow(&d->raw, &d->raw_cap, off + n * esize))
            return xtts_error_set(err, XTTS_ENOMEM, "record '%s': out of memory", h->id);
        raw = d->raw;
        src = raw + (size_t)h->tokens_padded * 4;
        unshuffle_bytes(d->raw + off, src, n, esize);
        src = d->raw + off;
    }
    uint16_t pad16 = xtts_f32_to_f16(h->pad_value);
    for (size_t c = 0; c < C; c++) {
        const uint8_t *row = src + c * T * esize;
        if (out_dtype == XTTS_DTYPE_F32) {
            float *dst = (float *)mel + c * frames_cap;
            if (h->dtype == XTTS_DTYPE_F16)
                cvt_f32(dst, (const uint16_t *)(const void *)row, T, nt);
            else
                copy_out((uint8_t *)dst, row, T * 4, nt); /* little-endian host */
            fill_f32(dst + T, h->pad_value, frames_cap - T, nt);
        } else {
            uint16_t *dst = (uint16_t *)mel + c * frames_cap;
            if (h->dtype == XTTS_DTYPE_F16)
                copy_out((uint8_t *)dst, row, T * 2, nt);
            else
                for (size_t t = 0; t < T; t++) dst[t] = xtts_f32_to_f16(get_f32(row + 4 * t));
            fill_u16(dst + T, pad16, frames_cap - T, nt);
        }
    }
    if (nt) store_fence();
    return XTTS_OK;
}
