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
#include "formats/audio/flac_mem.h"
#include "formats/record_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

/* The FLAC codec of waveform sections (formats/audio/flac_mem.c, over libsndfile) is a weak
 * reference: the programs and the tests link it (the Makefile's XTTS_LINK_FLAC), the reader
 * library libxtts-reader.so, which reads no waveform, is built without it and needs no
 * libsndfile; there a FLAC section is XTTS_EUNSUPPORTED. */
#pragma weak xtts_flac_encode_i16
#pragma weak xtts_flac_decode_i16

#define PAYLOAD_MAX ((size_t)1 << 30)

struct xtts_record_encoder {
    ZSTD_CCtx *cctx;
    xtts_dtype dtype;
    unsigned flags;
    int version;         /* 1 or 2 */
    xtts_audio_store audio;
    uint8_t *raw;   /* payload before compression */
    size_t raw_cap;
    uint8_t *out;   /* header + id + frame */
    size_t out_cap;
};

struct xtts_record_decoder {
    ZSTD_DCtx *dctx;
    uint8_t *raw;
    size_t raw_cap;
    uint8_t *aux;        /* text and waveform sections */
    size_t aux_cap;
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

xtts_status xtts_record_encoder_new(xtts_dtype dtype, int zstd_level, unsigned flags, xtts_record_encoder **out) {
    *out = NULL;
    xtts_record_encoder *e = calloc(1, sizeof *e);
    if (!e) return XTTS_ENOMEM;
    e->cctx = ZSTD_createCCtx();
    if (!e->cctx) { free(e); return XTTS_ENOMEM; }
    if (zstd_level < 1) zstd_level = 1;
    if (zstd_level > ZSTD_maxCLevel()) zstd_level = ZSTD_maxCLevel();
    ZSTD_CCtx_setParameter(e->cctx, ZSTD_c_compressionLevel, zstd_level);
    /* Level 1 (the default) with a hash table of 2^11 entries rather than the 2^13 zstd picks
     * for inputs under 128 KB: a record's sections are compressed one frame each, and
     * setting up the larger table for every frame cost a quarter of the time; the shuffled
     * mel planes find few matches either way (+28 % speed, +0.6 % bytes on an hour of
     * speech; docs/benchmarks.md "Storage"). */
    if (zstd_level == 1) ZSTD_CCtx_setParameter(e->cctx, ZSTD_c_hashLog, 11);
    ZSTD_CCtx_setParameter(e->cctx, ZSTD_c_checksumFlag, 1);
    ZSTD_CCtx_setParameter(e->cctx, ZSTD_c_contentSizeFlag, 1);
    e->dtype = dtype;
    e->flags = flags & XTTS_RECORD_SHUFFLED;
    e->version = XTTS_RECORD_VERSION;
    e->audio = XTTS_AUDIO_NONE;
    *out = e;
    return XTTS_OK;
}

xtts_status xtts_record_encoder_set_version(xtts_record_encoder *e, int version, xtts_error *err) {
    if (version < XTTS_RECORD_VERSION_MIN || version > XTTS_RECORD_VERSION)
        return xtts_error_set(err, XTTS_EUSAGE, "record version %d is not written by this build (%d..%d)", version,
                              XTTS_RECORD_VERSION_MIN, XTTS_RECORD_VERSION);
    e->version = version;
    return XTTS_OK;
}

void xtts_record_encoder_set_audio(xtts_record_encoder *e, xtts_audio_store audio) { e->audio = audio; }

const char *xtts_audio_store_name(int a) {
    return a == XTTS_AUDIO_INT16 ? "int16" : a == XTTS_AUDIO_FLAC ? "flac" : "none";
}

int xtts_audio_store_parse(const char *s) {
    if (!s) return -1;
    if (!strcmp(s, "none")) return XTTS_AUDIO_NONE;
    if (!strcmp(s, "int16")) return XTTS_AUDIO_INT16;
    if (!strcmp(s, "flac")) return XTTS_AUDIO_FLAC;
    return -1;
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

/* The header fields both record versions share; the version's own (bytes 11 and 44..51, 56)
 * are the caller's, then header_seal. */
static void header_common(uint8_t *h, const xtts_record_encoder *e, const xtts_record_input *in, int version,
                          size_t id_len) {
    memset(h, 0, XTTS_RECORD_HEADER_BYTES);
    memcpy(h, XTTS_RECORD_MAGIC, 4);
    xtts_put_le16(h + 4, (uint16_t)version);
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
    put_f32(h + 52, in->pad_value);
}

/* The id after the header, and the header CRC over both. */
static void header_seal(uint8_t *h, const char *id, size_t id_len) {
    memcpy(h + XTTS_RECORD_HEADER_BYTES, id, id_len);
    uint32_t crc = xtts_crc32(0, h, 60);
    crc = xtts_crc32(crc, h + XTTS_RECORD_HEADER_BYTES, id_len);
    xtts_put_le32(h + 60, crc);
}

static xtts_status encode_v2(xtts_record_encoder *e, const xtts_record_input *in, const uint8_t **out,
                             size_t *out_len, xtts_error *err);


static xtts_status check_input(const xtts_record_input *in, const char *id, xtts_error *err);
xtts_status xtts_record_encode(xtts_record_encoder *e, const xtts_record_input *in, const uint8_t **out,
                               size_t *out_len, xtts_error *err) {
    if (e->version == 2) return encode_v2(e, in, out, out_len, err);
    const char *id = in->id ? in->id : "";
    size_t id_len = strlen(id);
    xtts_status checked = check_input(in, id, err);
    if (checked) return checked;
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
    header_common(h, e, in, 1, id_len);
    xtts_put_le32(h + 44, (uint32_t)payload);
    xtts_put_le32(h + 48, (uint32_t)fsz);
    xtts_put_le32(h + 56, xtts_crc32(0, e->out + head, fsz));
    header_seal(h, id, id_len);
    *out = e->out;
    *out_len = head + fsz;
    return XTTS_OK;
}


/* ---- version 2 ------------------------------------------------------------------ */

#define V2_ENTRY 16

/* Checks shared by both versions' encoders. */
static xtts_status check_input(const xtts_record_input *in, const char *id, xtts_error *err) {
    if (strlen(id) > XTTS_RECORD_MAX_ID)
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
    return XTTS_OK;
}

/* The table entry at e->out + tab of a section whose stored body is e->out[pos..pos+stored)
 * and raw_len bytes decoded. */
static void put_section_entry(xtts_record_encoder *e, size_t tab, int kind, int codec, int flags, size_t pos,
                              size_t stored, size_t raw_len) {
    uint8_t *t = e->out + tab;
    t[0] = (uint8_t)kind;
    t[1] = (uint8_t)codec;
    t[2] = (uint8_t)flags;
    t[3] = 0;
    xtts_put_le32(t + 4, (uint32_t)stored);
    xtts_put_le32(t + 8, (uint32_t)raw_len);
    xtts_put_le32(t + 12, xtts_crc32(0, e->out + pos, stored));
}

/* Append one section body compressed from raw[0..raw_len) at e->out + *pos, and fill its
 * table entry at e->out + tab. */
static xtts_status put_zstd_section(xtts_record_encoder *e, const char *id, size_t tab, size_t *pos, int kind,
                                    int flags, const uint8_t *raw, size_t raw_len, xtts_error *err) {
    size_t bound = ZSTD_compressBound(raw_len);
    if (grow(&e->out, &e->out_cap, *pos + bound))
        return xtts_error_set(err, XTTS_ENOMEM, "record '%s': out of memory", id);
    size_t fsz = ZSTD_compress2(e->cctx, e->out + *pos, bound, raw, raw_len);
    if (ZSTD_isError(fsz))
        return xtts_error_set(err, XTTS_EIO, "record '%s': zstd: %s", id, ZSTD_getErrorName(fsz));
    put_section_entry(e, tab, kind, XTTS_CODEC_ZSTD, flags, *pos, fsz, raw_len);
    *pos += fsz;
    return XTTS_OK;
}

/* A version-2 record being encoded: its sizes, and where in e->out its next section goes. */
typedef struct {
    const char *id, *text, *norm;  /* norm: the normalized text */
    size_t id_len, text_len, norm_len;
    size_t esize, n_mel, mel_bytes, wave_bytes;
    int n_sec;
    size_t tab;                    /* the section table */
    size_t pos;                    /* the next section body */
} v2_record;

/* Check the input against the limits, size the record, and make room for the largest
 * section's raw bytes and for the header and section table. */
static xtts_status v2_plan(xtts_record_encoder *e, const xtts_record_input *in, v2_record *r, xtts_error *err) {
    const char *id = r->id = in->id ? in->id : "";
    xtts_status st = check_input(in, id, err);
    if (st) return st;
    r->id_len = strlen(id);
    r->text = in->text ? in->text : "";
    r->norm = in->text_norm ? in->text_norm : "";
    r->text_len = strlen(r->text);
    r->norm_len = strlen(r->norm);
    if (r->text_len > XTTS_RECORD_MAX_TEXT || r->norm_len > XTTS_RECORD_MAX_TEXT)
        return xtts_error_set(err, XTTS_ERANGE, "record '%s': text longer than %d bytes", id, XTTS_RECORD_MAX_TEXT);
    if (e->audio != XTTS_AUDIO_NONE && !in->wave && in->n_samples)
        return xtts_error_set(err, XTTS_EUSAGE, "record '%s': the cache stores waveforms but none was given", id);
    r->esize = xtts_dtype_size(e->dtype);
    r->n_mel = (size_t)in->n_mels * in->n_frames;
    r->mel_bytes = r->n_mel * r->esize;
    r->wave_bytes = (size_t)in->n_samples * 2;
    if (r->mel_bytes > PAYLOAD_MAX || (e->audio != XTTS_AUDIO_NONE && r->wave_bytes > PAYLOAD_MAX))
        return xtts_error_set(err, XTTS_ERANGE, "record '%s': a section over %zu bytes", id, (size_t)PAYLOAD_MAX);
    r->n_sec = e->audio != XTTS_AUDIO_NONE ? 4 : 3;
    r->tab = XTTS_RECORD_HEADER_BYTES + r->id_len;
    r->pos = r->tab + (size_t)V2_ENTRY * r->n_sec;
    size_t scratch = 4 * (size_t)in->n_tokens;
    if (scratch < 2 * r->mel_bytes) scratch = 2 * r->mel_bytes;
    if (scratch < 4 + r->text_len + r->norm_len) scratch = 4 + r->text_len + r->norm_len;
    if (e->audio == XTTS_AUDIO_INT16 && scratch < r->wave_bytes) scratch = r->wave_bytes;
    if (grow(&e->raw, &e->raw_cap, scratch ? scratch : 1) || grow(&e->out, &e->out_cap, r->pos))
        return xtts_error_set(err, XTTS_ENOMEM, "record '%s': out of memory", id);
    return XTTS_OK;
}

/* tokens: the true ids only */
static xtts_status v2_put_tokens(xtts_record_encoder *e, const xtts_record_input *in, v2_record *r, xtts_error *err) {
    uint8_t *raw = e->raw;
    for (size_t i = 0; i < in->n_tokens; i++) xtts_put_le32(raw + 4 * i, (uint32_t)in->tokens[i]);
    return put_zstd_section(e, r->id, r->tab, &r->pos, XTTS_SECTION_TOKENS, 0, raw, 4 * (size_t)in->n_tokens, err);
}

/* mel: the true frames of each row, rows of n_frames */
static xtts_status v2_put_mel(xtts_record_encoder *e, const xtts_record_input *in, v2_record *r, xtts_error *err) {
    uint8_t *raw = e->raw;
    size_t esize = r->esize;
    uint8_t *mel_tmp = (e->flags & XTTS_RECORD_SHUFFLED) ? raw + r->mel_bytes : raw;
    for (size_t c = 0; c < in->n_mels; c++) {
        const float *row = in->mel + c * in->frames_padded;
        uint8_t *dst = mel_tmp + c * in->n_frames * esize;
        if (e->dtype == XTTS_DTYPE_F16)
            xtts_f32_to_f16_n(row, (uint16_t *)(void *)dst, in->n_frames);
        else
            for (size_t t = 0; t < in->n_frames; t++) put_f32(dst + 4 * t, row[t]);
    }
    if (e->flags & XTTS_RECORD_SHUFFLED) shuffle_bytes(raw, mel_tmp, r->n_mel, esize);
    return put_zstd_section(e, r->id, r->tab + V2_ENTRY, &r->pos, XTTS_SECTION_MEL,
                            (int)(e->flags & XTTS_RECORD_SHUFFLED), raw, r->mel_bytes, err);
}

/* text: u32 original length, original, normalized */
static xtts_status v2_put_text(xtts_record_encoder *e, v2_record *r, xtts_error *err) {
    uint8_t *raw = e->raw;
    xtts_put_le32(raw, (uint32_t)r->text_len);
    memcpy(raw + 4, r->text, r->text_len);
    memcpy(raw + 4 + r->text_len, r->norm, r->norm_len);
    return put_zstd_section(e, r->id, r->tab + 2 * V2_ENTRY, &r->pos, XTTS_SECTION_TEXT, 0, raw,
                            4 + r->text_len + r->norm_len, err);
}

/* waveform, --audio int16: low bytes then high bytes, zstd */
static xtts_status v2_put_wave_int16(xtts_record_encoder *e, const xtts_record_input *in, v2_record *r,
                                     xtts_error *err) {
    uint8_t *lo = e->raw, *hi = e->raw + in->n_samples;
    for (size_t i = 0; i < in->n_samples; i++) {
        uint16_t v = (uint16_t)in->wave[i];
        lo[i] = (uint8_t)(v & 0xff);
        hi[i] = (uint8_t)(v >> 8);
    }
    return put_zstd_section(e, r->id, r->tab + 3 * V2_ENTRY, &r->pos, XTTS_SECTION_WAVE, XTTS_RECORD_SHUFFLED, e->raw,
                            r->wave_bytes, err);
}

/* waveform, --audio flac */
static xtts_status v2_put_wave_flac(xtts_record_encoder *e, const xtts_record_input *in, v2_record *r,
                                    xtts_error *err) {
    uint8_t *fl = NULL;
    size_t fl_len = 0;
    if (!xtts_flac_encode_i16)
        return xtts_error_set(err, XTTS_EUNSUPPORTED, "record '%s': waveform: this library has no FLAC codec", r->id);
    xtts_status st = xtts_flac_encode_i16(in->wave, in->n_samples, (int)in->sample_rate, &fl, &fl_len, err);
    if (st) return st;
    if (fl_len > UINT32_MAX || grow(&e->out, &e->out_cap, r->pos + fl_len)) {
        free(fl);
        return xtts_error_set(err, XTTS_ENOMEM, "record '%s': out of memory", r->id);
    }
    memcpy(e->out + r->pos, fl, fl_len);
    free(fl);
    put_section_entry(e, r->tab + 3 * V2_ENTRY, XTTS_SECTION_WAVE, XTTS_CODEC_FLAC, 0, r->pos, fl_len, r->wave_bytes);
    r->pos += fl_len;
    return XTTS_OK;
}

static void v2_put_header(xtts_record_encoder *e, const xtts_record_input *in, const v2_record *r) {
    uint8_t *h = e->out;
    header_common(h, e, in, 2, r->id_len);
    h[11] = (uint8_t)r->n_sec;
    xtts_put_le32(h + 44, in->pad_token);
    xtts_put_le32(h + 48, in->trim_start);
    xtts_put_le32(h + 56, xtts_crc32(0, h + r->tab, (size_t)V2_ENTRY * r->n_sec));
    header_seal(h, r->id, r->id_len);
}

static xtts_status encode_v2(xtts_record_encoder *e, const xtts_record_input *in, const uint8_t **out,
                             size_t *out_len, xtts_error *err) {
    v2_record r;
    xtts_status st = v2_plan(e, in, &r, err);
    if (!st) st = v2_put_tokens(e, in, &r, err);
    if (!st) st = v2_put_mel(e, in, &r, err);
    if (!st) st = v2_put_text(e, &r, err);
    if (!st && e->audio == XTTS_AUDIO_INT16) st = v2_put_wave_int16(e, in, &r, err);
    if (!st && e->audio == XTTS_AUDIO_FLAC) st = v2_put_wave_flac(e, in, &r, err);
    if (st) return st;
    if (r.pos > UINT32_MAX)
        return xtts_error_set(err, XTTS_ERANGE, "record '%s': %zu bytes, over the 4 GiB record limit", r.id, r.pos);
    v2_put_header(e, in, &r);
    *out = e->out;
    *out_len = r.pos;
    return XTTS_OK;
}

/* Parse and check a version-2 header and section table (the header CRC is checked). */
static xtts_status parse_v2(const uint8_t *h, size_t buf_len, xtts_record_header *t, xtts_error *err) {
    if (h[7] & ~XTTS_RECORD_SHUFFLED || t->dtype > XTTS_DTYPE_F16 || t->split > XTTS_SPLIT_VAL ||
        xtts_get_le16(h + 14) != 0)
        return xtts_error_set(err, XTTS_ECORRUPT, "record '%s': bad dtype, flags, split or reserved field", t->id);
    unsigned n_sec = h[11];
    if (n_sec < 3 || n_sec > 4)
        return xtts_error_set(err, XTTS_ECORRUPT, "record '%s': %u sections (3 or 4 expected)", t->id, n_sec);
    size_t tab = (size_t)XTTS_RECORD_HEADER_BYTES + t->id_len;
    if (tab + (size_t)V2_ENTRY * n_sec > buf_len)
        return xtts_error_set(err, XTTS_ECORRUPT, "record '%s': section table does not fit %zu bytes", t->id, buf_len);
    if (xtts_crc32(0, h + tab, (size_t)V2_ENTRY * n_sec) != xtts_get_le32(h + 56))
        return xtts_error_set(err, XTTS_ECORRUPT, "record '%s': section table checksum mismatch", t->id);
    t->n_sections = (uint8_t)n_sec;
    t->pad_token = xtts_get_le32(h + 44);
    t->trim_start = xtts_get_le32(h + 48);
    if (t->n_mels == 0 || t->n_mels > XTTS_RECORD_MAX_MELS || t->tokens_padded > XTTS_RECORD_MAX_TOKENS ||
        t->frames_padded > XTTS_RECORD_MAX_FRAMES)
        return xtts_error_set(err, XTTS_ECORRUPT, "record '%s': shape out of limits", t->id);
    if (t->n_tokens > t->tokens_padded || t->n_frames > t->frames_padded)
        return xtts_error_set(err, XTTS_ECORRUPT, "record '%s': lengths (%u tokens, %u frames) exceed padded shape (%u, %u)",
                              t->id, t->n_tokens, t->tokens_padded, t->n_frames, t->frames_padded);
    uint64_t off = tab + (uint64_t)V2_ENTRY * n_sec, raw_sum = 0;
    for (unsigned i = 0; i < n_sec; i++) {
        const uint8_t *e = h + tab + (size_t)V2_ENTRY * i;
        xtts_record_section *s = &t->sections[i];
        s->kind = e[0];
        s->codec = e[1];
        s->flags = e[2];
        s->stored_bytes = xtts_get_le32(e + 4);
        s->raw_bytes = xtts_get_le32(e + 8);
        s->crc32 = xtts_get_le32(e + 12);
        s->offset = (uint32_t)(off <= UINT32_MAX ? off : 0);
        unsigned want = i + 1; /* tokens, mel, text, waveform */
        int ok = s->kind == want && e[3] == 0;
        uint64_t raw = 0;
        switch (want) {
        case XTTS_SECTION_TOKENS:
            ok = ok && s->codec == XTTS_CODEC_ZSTD && s->flags == 0;
            raw = 4ull * t->n_tokens;
            break;
        case XTTS_SECTION_MEL:
            ok = ok && s->codec == XTTS_CODEC_ZSTD && s->flags == (h[7] & XTTS_RECORD_SHUFFLED);
            raw = (uint64_t)t->n_mels * t->n_frames * xtts_dtype_size(t->dtype);
            break;
        case XTTS_SECTION_TEXT:
            ok = ok && s->codec == XTTS_CODEC_ZSTD && s->flags == 0 && s->raw_bytes >= 4 &&
                 s->raw_bytes <= 4 + 2 * XTTS_RECORD_MAX_TEXT;
            raw = s->raw_bytes;
            break;
        default:
            ok = ok && ((s->codec == XTTS_CODEC_ZSTD && s->flags == XTTS_RECORD_SHUFFLED) ||
                        (s->codec == XTTS_CODEC_FLAC && s->flags == 0));
            raw = 2ull * t->n_samples;
            t->audio = s->codec == XTTS_CODEC_FLAC ? XTTS_AUDIO_FLAC : XTTS_AUDIO_INT16;
            break;
        }
        if (!ok)
            return xtts_error_set(err, XTTS_ECORRUPT, "record '%s': section %u: bad kind, codec or flags", t->id, i);
        if (raw > PAYLOAD_MAX || s->raw_bytes != raw)
            return xtts_error_set(err, XTTS_ECORRUPT, "record '%s': section %u: %u decoded bytes, the header says %llu",
                                  t->id, i, s->raw_bytes, (unsigned long long)raw);
        off += s->stored_bytes;
        raw_sum += s->raw_bytes;
    }
    if (off != buf_len)
        return xtts_error_set(err, XTTS_ECORRUPT, "record '%s': %zu bytes stored, header says %llu", t->id, buf_len,
                              (unsigned long long)off);
    t->payload_bytes = (uint32_t)(raw_sum <= UINT32_MAX ? raw_sum : UINT32_MAX);
    t->frame_bytes = (uint32_t)(off - tab - (uint64_t)V2_ENTRY * n_sec);
    if (!isfinite(t->pad_value))
        return xtts_error_set(err, XTTS_ECORRUPT, "record '%s': pad value is not finite", t->id);
    return XTTS_OK;
}

/* Check section i's stored bytes and decompress a zstd body into *dst (grown). */
static xtts_status zsection(const uint8_t *buf, const xtts_record_header *h, unsigned i, ZSTD_DCtx *dctx,
                            uint8_t **dst, size_t *cap, xtts_error *err) {
    static const char *const names[] = {"", "tokens", "mel", "text", "waveform"};
    const xtts_record_section *s = &h->sections[i];
    const char *nm = s->kind < 5 ? names[s->kind] : "?";
    const uint8_t *body = buf + s->offset;
    if (xtts_crc32(0, body, s->stored_bytes) != s->crc32)
        return s->kind == XTTS_SECTION_MEL /* the message of version 1, whose one frame holds the mel */
                   ? xtts_error_set(err, XTTS_ECORRUPT, "record '%s': zstd frame checksum mismatch", h->id)
                   : xtts_error_set(err, XTTS_ECORRUPT, "record '%s': %s section: checksum mismatch", h->id, nm);
    if (s->codec != XTTS_CODEC_ZSTD) return XTTS_OK;
    unsigned long long csize = ZSTD_getFrameContentSize(body, s->stored_bytes);
    if (csize != s->raw_bytes)
        return xtts_error_set(err, XTTS_ECORRUPT, "record '%s': %s section content size does not match", h->id, nm);
    if (grow(dst, cap, s->raw_bytes ? s->raw_bytes : 1))
        return xtts_error_set(err, XTTS_ENOMEM, "record '%s': out of memory", h->id);
    size_t got = ZSTD_decompressDCtx(dctx, *dst, s->raw_bytes, body, s->stored_bytes);
    if (ZSTD_isError(got))
        return xtts_error_set(err, XTTS_ECORRUPT, "record '%s': %s section: %s", h->id, nm, ZSTD_getErrorName(got));
    if (got != s->raw_bytes)
        return xtts_error_set(err, XTTS_ECORRUPT, "record '%s': %s section decompressed to %zu bytes, expected %u",
                              h->id, nm, got, s->raw_bytes);
    return XTTS_OK;
}

xtts_status xtts_record_decode_text(xtts_record_decoder *d, const void *buf, size_t buf_len, const char **orig,
                                    size_t *orig_len, const char **norm, size_t *norm_len, xtts_error *err) {
    xtts_record_header h;
    xtts_status st = xtts_record_parse_header(buf, buf_len, &h, err);
    if (st) return st;
    if (h.version < 2) return xtts_error_set(err, XTTS_ENOTFOUND, "record '%s': version 1 stores no text", h.id);
    if ((st = zsection(buf, &h, 2, d->dctx, &d->raw, &d->raw_cap, err))) return st;
    size_t raw = h.sections[2].raw_bytes;
    uint32_t ol = xtts_get_le32(d->raw);
    if (ol > raw - 4 || ol > XTTS_RECORD_MAX_TEXT || raw - 4 - ol > XTTS_RECORD_MAX_TEXT)
        return xtts_error_set(err, XTTS_ECORRUPT, "record '%s': text section lengths do not add up", h.id);
    size_t nl = raw - 4 - ol;
    if (memchr(d->raw + 4, 0, raw - 4))
        return xtts_error_set(err, XTTS_ECORRUPT, "record '%s': text holds a NUL byte", h.id);
    if (grow(&d->aux, &d->aux_cap, ol + nl + 2)) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    memcpy(d->aux, d->raw + 4, ol);
    d->aux[ol] = 0;
    memcpy(d->aux + ol + 1, d->raw + 4 + ol, nl);
    d->aux[ol + 1 + nl] = 0;
    if (orig) *orig = (const char *)d->aux;
    if (orig_len) *orig_len = ol;
    if (norm) *norm = (const char *)d->aux + ol + 1;
    if (norm_len) *norm_len = nl;
    return XTTS_OK;
}

xtts_status xtts_record_decode_wave(xtts_record_decoder *d, const void *buf, size_t buf_len, int16_t *out, size_t first,
                                    size_t n, xtts_error *err) {
    xtts_record_header h;
    xtts_status st = xtts_record_parse_header(buf, buf_len, &h, err);
    if (st) return st;
    if (h.audio == XTTS_AUDIO_NONE)
        return xtts_error_set(err, XTTS_ENOTFOUND, "record '%s': no waveform stored", h.id);
    if (first > h.n_samples || n > h.n_samples - first)
        return xtts_error_set(err, XTTS_ERANGE, "record '%s': samples [%zu, %zu) outside its %u", h.id, first, first + n,
                              h.n_samples);
    if ((st = zsection(buf, &h, 3, d->dctx, &d->aux, &d->aux_cap, err))) return st;
    if (h.audio == XTTS_AUDIO_INT16) {
        const uint8_t *lo = d->aux, *hi = d->aux + h.n_samples;
        for (size_t i = 0; i < n; i++) out[i] = (int16_t)(uint16_t)(lo[first + i] | (hi[first + i] << 8));
        return XTTS_OK;
    }
    if (grow(&d->aux, &d->aux_cap, (size_t)h.n_samples * 2 + 2))
        return xtts_error_set(err, XTTS_ENOMEM, "record '%s': out of memory", h.id);
    int16_t *all = (int16_t *)(void *)d->aux;
    const xtts_record_section *s = &h.sections[3];
    if (!xtts_flac_decode_i16)
        return xtts_error_set(err, XTTS_EUNSUPPORTED, "record '%s': waveform: this library has no FLAC codec", h.id);
    if ((st = xtts_flac_decode_i16((const uint8_t *)buf + s->offset, s->stored_bytes, all, h.n_samples, err))) {
        char m[sizeof err->msg];
        snprintf(m, sizeof m, "%s", err ? err->msg : "");
        return xtts_error_set(err, st, "record '%s': waveform: %s", h.id, m);
    }
    memcpy(out, all + first, n * sizeof *out);
    return XTTS_OK;
}

xtts_status xtts_record_check(xtts_record_decoder *d, const void *buf, size_t buf_len, xtts_error *err) {
    xtts_record_header h;
    xtts_status st = xtts_record_parse_header(buf, buf_len, &h, err);
    if (st) return st;
    if (h.version < 2)
        return xtts_record_decode(d, buf, buf_len, NULL, NULL, 0, NULL, XTTS_DTYPE_F32, 0, 0, err);
    for (unsigned i = 0; i < 2; i++)
        if ((st = zsection(buf, &h, i, d->dctx, &d->raw, &d->raw_cap, err))) return st;
    if ((st = xtts_record_decode_text(d, buf, buf_len, NULL, NULL, NULL, NULL, err))) return st;
    if (h.audio != XTTS_AUDIO_NONE) {
        int16_t one;
        if ((st = xtts_record_decode_wave(d, buf, buf_len, &one, 0, 0, err))) return st;
    }
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
    if (t.version == 2) {
        t.payload_bytes = t.frame_bytes = 0;
        xtts_status st = parse_v2(h, buf_len, &t, err);
        if (st) return st;
        if (hdr) *hdr = t;
        return XTTS_OK;
    }
    if (t.version != 1)
        return xtts_error_set(err, XTTS_EMISMATCH, "record '%s': version %u, this build reads %d..%d", t.id, t.version,
                              XTTS_RECORD_VERSION_MIN, XTTS_RECORD_VERSION);
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

xtts_status xtts_record_decoder_new(xtts_record_decoder **out) {
    *out = NULL;
    xtts_record_decoder *d = calloc(1, sizeof *d);
    if (!d) return XTTS_ENOMEM;
    d->dctx = ZSTD_createDCtx();
    if (!d->dctx) { free(d); return XTTS_ENOMEM; }
    *out = d;
    return XTTS_OK;
}

/* Streaming mode (declared where it is used until formats/record.h has it): decoded
 * mels are written with non-temporal stores, for outputs read later rather than at once
 * (a batch being filled); each decode ends with a store fence. Values are the same. */
void xtts_record_decoder_set_streaming(xtts_record_decoder *d, int on) { d->stream = on != 0; }

void xtts_record_decoder_delete(xtts_record_decoder *d) {
    if (!d) return;
    ZSTD_freeDCtx(d->dctx);
    free(d->raw);
    free(d->aux);
    free(d);
}

static xtts_status write_mel(xtts_record_decoder *d, const xtts_record_header *h, const uint8_t *src, size_t T,
                             void *mel, xtts_dtype out_dtype, size_t frames_cap, xtts_error *err);

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
    const uint8_t *src;
    size_t T; /* frames stored per mel row */
    if (h->version == 2) {
        if (tokens) {
            if ((st = zsection(buf, h, 0, d->dctx, &d->raw, &d->raw_cap, err))) return st;
            for (size_t i = 0; i < h->n_tokens; i++) tokens[i] = (int32_t)xtts_get_le32(d->raw + 4 * i);
            for (size_t i = h->n_tokens; i < h->tokens_padded; i++) tokens[i] = (int32_t)h->pad_token;
        }
        if (!mel) return XTTS_OK;
        if ((st = zsection(buf, h, 1, d->dctx, &d->raw, &d->raw_cap, err))) return st;
        src = d->raw;
        T = h->n_frames;
        return write_mel(d, h, src, T, mel, out_dtype, frames_cap, err);
    }
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
    src = raw + (size_t)h->tokens_padded * 4;
    T = h->frames_padded;
    return write_mel(d, h, src, T, mel, out_dtype, frames_cap, err);
}

/* Write a decoded mel (T frames per stored row, at src, which may be in d->raw) into
 * the caller's buffer with row stride frames_cap, padding each row from T on. */
static xtts_status write_mel(xtts_record_decoder *d, const xtts_record_header *h, const uint8_t *src, size_t T,
                             void *mel, xtts_dtype out_dtype, size_t frames_cap, xtts_error *err) {
    size_t esize = xtts_dtype_size(h->dtype);
    size_t C = h->n_mels, n = C * T;
    int nt = d->stream;
    /* version 2 writes all padding: as the stored dtype rounds it, so that fp16 records
     * decode to the same values as fp32 output and fp16 output */
    float padf = h->version >= 2 && h->dtype == XTTS_DTYPE_F16 ? xtts_f16_to_f32(xtts_f32_to_f16(h->pad_value))
                                                                : h->pad_value;
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
                fill_f32(dst + T, padf, frames_cap - T, nt);
            }
        }
        if (nt) store_fence();
        return XTTS_OK;
    }
    if (h->flags & XTTS_RECORD_SHUFFLED) {
        /* unshuffle in place is not possible; use the tail of a grown scratch buffer */
        size_t src_off = (size_t)(src - d->raw), off = src_off + n * esize;
        if (grow(&d->raw, &d->raw_cap, off + n * esize))
            return xtts_error_set(err, XTTS_ENOMEM, "record '%s': out of memory", h->id);
        src = d->raw + src_off;
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
            fill_f32(dst + T, padf, frames_cap - T, nt);
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

/* ---- lengths index entries ------------------------------------------------------- */

void xtts_lengths_from_header(const xtts_record_header *h, xtts_lengths *o) {
    memset(o, 0, sizeof *o);
    o->n_frames = h->n_frames;
    o->n_tokens = h->n_tokens;
    o->n_samples = h->n_samples;
    o->speaker_id = h->speaker_id;
    o->lang_id = h->lang_id;
    o->split = h->split;
    o->has_wave = h->audio != XTTS_AUDIO_NONE;
}

void xtts_lengths_pack(const xtts_record_header *h, uint8_t out[XTTS_LENGTHS_BYTES]) {
    xtts_lengths l;
    xtts_lengths_from_header(h, &l);
    memset(out, 0, XTTS_LENGTHS_BYTES);
    xtts_put_le32(out, l.n_frames);
    xtts_put_le32(out + 4, l.n_tokens);
    xtts_put_le32(out + 8, l.n_samples);
    xtts_put_le32(out + 12, l.speaker_id);
    xtts_put_le32(out + 16, l.lang_id);
    out[20] = l.split;
    out[21] = l.has_wave ? 1 : 0;
}

xtts_status xtts_lengths_unpack(const void *buf, size_t len, xtts_lengths *o, xtts_error *err) {
    const uint8_t *p = buf;
    if (len != XTTS_LENGTHS_BYTES)
        return xtts_error_set(err, XTTS_ECORRUPT, "lengths entry of %zu bytes, expected %d", len, XTTS_LENGTHS_BYTES);
    if (p[20] > XTTS_SPLIT_VAL || p[21] > 1 || p[22] || p[23])
        return xtts_error_set(err, XTTS_ECORRUPT, "lengths entry with a bad split, flags or reserved byte");
    o->n_frames = xtts_get_le32(p);
    o->n_tokens = xtts_get_le32(p + 4);
    o->n_samples = xtts_get_le32(p + 8);
    o->speaker_id = xtts_get_le32(p + 12);
    o->lang_id = xtts_get_le32(p + 16);
    o->split = p[20];
    o->has_wave = p[21];
    return XTTS_OK;
}

void xtts_wave_to_int16(const float *x, size_t n, int16_t *q, float *xq) {
    for (size_t i = 0; i < n; i++) {
        float v = rintf(x[i] * 32768.0f);
        v = v > 32767.0f ? 32767.0f : v < -32768.0f ? -32768.0f : v; /* NaN is refused before */
        q[i] = (int16_t)v;
        if (xq) xq[i] = v / 32768.0f;
    }
}

/* ---- the id a damaged record claims (record.h) ---------------------------------------- */

void xtts_record_claimed_id(const void *buf, size_t len, char *out, size_t cap) {
    const uint8_t *p = buf;
    out[0] = '\0';
    if (len < XTTS_RECORD_HEADER_BYTES || cap < 8) return;
    size_t n = xtts_get_le16(p + 12);
    if (n > len - XTTS_RECORD_HEADER_BYTES) n = len - XTTS_RECORD_HEADER_BYTES;
    if (n > cap - 1) n = cap - 1;
    for (size_t i = 0; i < n; i++) {
        uint8_t ch = p[XTTS_RECORD_HEADER_BYTES + i];
        out[i] = (ch >= 0x20 && ch < 0x7f && ch != '\'') ? (char)ch : '?';
    }
    out[n] = '\0';
}
