/* record.h — the cache record codec (formats/cache.md, "Record", versions 1 and 2).
 *
 * A record is one utterance. Version 2 (written by default): a fixed 64-byte header, the
 * utterance id, a section table, and one body per section — tokens, mel (true frames
 * only), text (original and normalized), optionally the waveform (int16 shuffled + zstd,
 * or FLAC) — each with its own CRC-32, zstd bodies also with zstd's content checksum, so
 * a reader decodes only the sections it asks for and every byte is checked. Version 1
 * (still read, and written when asked for): the header, the id and one zstd frame of
 * padded tokens and padded mel.
 *
 * Lifecycle (zstd's habit): make one encoder or decoder per thread, reuse it for every
 * record, delete it at the end. The caller owns all buffers. Decoding never reads or
 * writes outside the buffers it is given, whatever the input bytes are.
 */
#ifndef XTTS_RECORD_H
#define XTTS_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "common/xtts_common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define XTTS_RECORD_MAGIC "XTRC"
#define XTTS_RECORD_VERSION 2          /* the version written by default */
#define XTTS_RECORD_VERSION_MIN 1      /* the oldest version read */
#define XTTS_RECORD_MAX_SECTIONS 16
#define XTTS_RECORD_MAX_TEXT 65536     /* bytes of each text (original, normalized) */
#define XTTS_RECORD_HEADER_BYTES 64
#define XTTS_RECORD_MAX_ID 1024          /* bytes of utterance id */
#define XTTS_RECORD_MAX_TOKENS 65536     /* padded token count limit */
#define XTTS_RECORD_MAX_FRAMES 1048576   /* padded frame count limit */
#define XTTS_RECORD_MAX_MELS 1024

typedef enum { XTTS_DTYPE_F32 = 0, XTTS_DTYPE_F16 = 1 } xtts_dtype;
typedef enum { XTTS_SPLIT_TRAIN = 0, XTTS_SPLIT_VAL = 1 } xtts_split;

/* Record flags. */
#define XTTS_RECORD_SHUFFLED 0x01u /* mel bytes stored byte-plane shuffled (see cache.md) */

/* Version-2 section kinds and codecs (formats/cache.md 3.2). */
typedef enum {
    XTTS_SECTION_TOKENS = 1,
    XTTS_SECTION_MEL = 2,
    XTTS_SECTION_TEXT = 3,
    XTTS_SECTION_WAVE = 4,
} xtts_section_kind;
typedef enum { XTTS_CODEC_ZSTD = 1, XTTS_CODEC_FLAC = 2 } xtts_section_codec;

/* How the waveform is stored (the cache's --audio): none, int16 shuffled + zstd, FLAC. */
typedef enum { XTTS_AUDIO_NONE = 0, XTTS_AUDIO_INT16 = 1, XTTS_AUDIO_FLAC = 2 } xtts_audio_store;
const char *xtts_audio_store_name(int a);
/* "none"/"int16"/"flac" -> xtts_audio_store; -1 when unknown. */
int xtts_audio_store_parse(const char *s);

/* One entry of a version-2 section table, with where its body starts in the record. */
typedef struct {
    uint8_t kind, codec, flags;
    uint32_t stored_bytes, raw_bytes, crc32;
    uint32_t offset; /* of the body, from the start of the record */
} xtts_record_section;

/* The decoded header of a record: everything but the payload. */
typedef struct {
    uint16_t version;
    uint8_t dtype;          /* xtts_dtype of the stored mel */
    uint8_t flags;          /* XTTS_RECORD_* */
    uint16_t n_mels;
    uint8_t split;          /* xtts_split */
    uint32_t n_tokens;      /* true token count */
    uint32_t tokens_padded; /* stored token count (>= n_tokens) */
    uint32_t n_frames;      /* true frame count */
    uint32_t frames_padded; /* stored frame count (>= n_frames) */
    uint32_t speaker_id;
    uint32_t lang_id;
    uint32_t n_samples;     /* audio length at the mel sample rate */
    uint32_t payload_bytes; /* v1: decompressed payload size; v2: sum of the sections' raw_bytes */
    uint32_t frame_bytes;   /* v1: compressed zstd frame size; v2: sum of the sections' stored_bytes */
    float pad_value;        /* the mel value of padded frames (the preset's log floor) */
    uint32_t pad_token;     /* v2: the token id of padding (v1: 0, the padding is stored) */
    uint32_t trim_start;    /* v2: samples cut from the start by trimming */
    uint8_t audio;          /* xtts_audio_store of the waveform section (v1: NONE) */
    uint8_t n_sections;     /* v2: entries in sections[] (v1: 0) */
    xtts_record_section sections[XTTS_RECORD_MAX_SECTIONS];
    uint16_t id_len;
    char id[XTTS_RECORD_MAX_ID + 1]; /* NUL-terminated */
} xtts_record_header;

/* What to store. tokens: int32[tokens_padded] already padded (version 2 reads only the
 * first n_tokens); mel: float32 laid out [n_mels][frames_padded] (channel-major, row
 * stride frames_padded) already padded (version 2 reads only the first n_frames of each
 * row). The version-2 fields after mel are ignored by version 1. */
typedef struct {
    const char *id;
    uint8_t split;
    uint32_t speaker_id, lang_id, n_samples;
    uint32_t n_tokens, tokens_padded;
    uint32_t n_frames, frames_padded;
    uint16_t n_mels;
    float pad_value;
    const int32_t *tokens;
    const float *mel;
    uint32_t pad_token;      /* v2: the token id of padding */
    uint32_t trim_start;     /* v2: samples cut from the start by trimming */
    const char *text;        /* v2: the original transcript (NULL = empty) */
    const char *text_norm;   /* v2: the normalized text (NULL = empty) */
    const int16_t *wave;     /* v2: n_samples mono samples, stored when the encoder's audio
                                is not NONE (required then) */
    uint32_t sample_rate;    /* v2 with FLAC: the waveform's rate */
} xtts_record_input;

typedef struct xtts_record_encoder xtts_record_encoder;
typedef struct xtts_record_decoder xtts_record_decoder;

/* Make an encoder storing mels as dtype, zstd level (1..19), flags (XTTS_RECORD_SHUFFLED), in
 * *out (NULL on failure). Out of memory is its only failure, so it takes no xtts_error.
 * Errors: XTTS_ENOMEM only. */
xtts_status xtts_record_encoder_new(xtts_dtype dtype, int zstd_level, unsigned flags, xtts_record_encoder **out);
/* NULL is allowed. */
void xtts_record_encoder_delete(xtts_record_encoder *enc);
/* How version 2 stores the waveform (XTTS_AUDIO_NONE by default). */
void xtts_record_encoder_set_audio(xtts_record_encoder *enc, xtts_audio_store audio);

/* Encode one record. On success *out points into the encoder's own buffer (valid until
 * the next call on this encoder) and *out_len is its size.
 * Errors: XTTS_ERANGE (id, token count, frame count, n_mels or split out of limits; v2: text
 * over XTTS_RECORD_MAX_TEXT, a section or the record over the size limits), XTTS_EUSAGE (v2: the
 * encoder stores waveforms but in->wave is NULL), XTTS_ENOMEM, XTTS_EIO (zstd fails; v2 FLAC:
 * the encode fails). */
xtts_status xtts_record_encode(xtts_record_encoder *enc, const xtts_record_input *in,
                               const uint8_t **out, size_t *out_len, xtts_error *err);

/* Parse and check the header and id of a stored record (CRC, magic, version, shape
 * limits, lengths within padded lengths, sizes consistent with buf_len). Cheap: does
 * not decompress.
 * Errors: XTTS_ECORRUPT (any check fails), XTTS_EMISMATCH (a record version this build does
 * not read). */
xtts_status xtts_record_parse_header(const void *buf, size_t buf_len, xtts_record_header *hdr,
                                     xtts_error *err);

/* A decoder in *out (NULL on failure); like the encoder, it takes no xtts_error.
 * Errors: XTTS_ENOMEM only. */
xtts_status xtts_record_decoder_new(xtts_record_decoder **out);
/* NULL is allowed. */
void xtts_record_decoder_delete(xtts_record_decoder *dec);

/* on != 0: decode writes mels with non-temporal stores (bypassing the cache), for large
 * batches that are read later by someone else; off (the default) for data read at once. */
void xtts_record_decoder_set_streaming(xtts_record_decoder *dec, int on);

/* Decode a record into caller buffers.
 *   hdr:     filled (may be NULL)
 *   tokens:  int32[tokens_cap]; receives tokens_padded ids (NULL to skip)
 *   mel:     receives the mel as out_dtype, channel-major with row stride frames_cap:
 *            mel[c * frames_cap + t] for t < frames_padded; columns frames_padded..frames_cap-1
 *            are filled with the header's pad_value. NULL to skip.
 *   tokens beyond tokens_padded (up to tokens_cap) are left untouched.
 *   n_mels_cap, frames_cap: the mel buffer's shape; records that do not fit are XTTS_ERANGE.
 * Corrupt or truncated input is XTTS_ECORRUPT; nothing outside the buffers is touched.
 * Errors: those of xtts_record_parse_header (XTTS_ECORRUPT, XTTS_EMISMATCH), XTTS_ERANGE (the
 * record does not fit tokens_cap or the mel buffer), XTTS_ECORRUPT (checksum, size or zstd
 * failure of the payload), XTTS_ENOMEM. */
xtts_status xtts_record_decode(xtts_record_decoder *dec, const void *buf, size_t buf_len,
                               xtts_record_header *hdr, int32_t *tokens, size_t tokens_cap,
                               void *mel, xtts_dtype out_dtype, size_t n_mels_cap, size_t frames_cap,
                               xtts_error *err);

/* Version 2's text section: the original and the normalized text, pointing into the
 * decoder's own buffer, each followed by a NUL (valid until the next call on this
 * decoder).
 * XTTS_ENOTFOUND for a version-1 record (it stores no text).
 * Errors: those of xtts_record_parse_header (XTTS_ECORRUPT, XTTS_EMISMATCH), XTTS_ENOTFOUND,
 * XTTS_ECORRUPT (a bad text section: checksum, zstd, lengths, a NUL byte), XTTS_ENOMEM. */
xtts_status xtts_record_decode_text(xtts_record_decoder *dec, const void *buf, size_t buf_len, const char **orig,
                                    size_t *orig_len, const char **norm, size_t *norm_len, xtts_error *err);

/* Version 2's waveform: samples [first, first + n) of the stored int16 waveform into
 * out[0..n) (first + n <= n_samples). Decodes the whole section (zstd or FLAC).
 * XTTS_ENOTFOUND when the record stores no waveform.
 * Errors: those of xtts_record_parse_header (XTTS_ECORRUPT, XTTS_EMISMATCH), XTTS_ENOTFOUND,
 * XTTS_ERANGE ([first, first + n) outside the waveform), XTTS_ECORRUPT (a bad section or FLAC
 * stream), XTTS_ENOMEM. */
xtts_status xtts_record_decode_wave(xtts_record_decoder *dec, const void *buf, size_t buf_len, int16_t *out,
                                    size_t first, size_t n, xtts_error *err);

/* Check every section of a record completely (CRCs, decompression, sizes, the FLAC
 * stream's length) without giving anything back; for verification.
 * Errors: XTTS_ECORRUPT (any check fails), XTTS_EMISMATCH (a record version this build does not
 * read), XTTS_ENOMEM. */
xtts_status xtts_record_check(xtts_record_decoder *dec, const void *buf, size_t buf_len, xtts_error *err);

/* One record's entry of a shard's "lengths" database (formats/cache.md 3.3). */
#define XTTS_LENGTHS_BYTES 24
typedef struct {
    uint32_t n_frames, n_tokens, n_samples, speaker_id, lang_id;
    uint8_t split;
    uint8_t has_wave;
} xtts_lengths;
/* The entry of a record from its header, packed as stored. */
void xtts_lengths_pack(const xtts_record_header *h, uint8_t out[XTTS_LENGTHS_BYTES]);
/* Unpack a stored entry; XTTS_ECORRUPT when len is not 24 or a field is out of range.
 * Errors: XTTS_ECORRUPT only. */
xtts_status xtts_lengths_unpack(const void *buf, size_t len, xtts_lengths *out, xtts_error *err);
/* The entry a header gives (for caches without a lengths database, and for checks). */
void xtts_lengths_from_header(const xtts_record_header *h, xtts_lengths *out);

/* The stored form of a waveform (formats/cache.md 3.2): q[i] = clamp(round(x[i] * 32768),
 * -32768, 32767), and xq[i] = q[i] / 32768, the signal the mel is computed from when a
 * waveform is stored. xq may be NULL; x and xq may be the same array. */
void xtts_wave_to_int16(const float *x, size_t n, int16_t *q, float *xq);

/* Bytes per stored mel element for a dtype. */
static inline size_t xtts_dtype_size(xtts_dtype d) { return d == XTTS_DTYPE_F16 ? 2 : 4; }
const char *xtts_dtype_name(xtts_dtype d);
/* "fp16"/"fp32" -> dtype; returns -1 when unknown. */
int xtts_dtype_parse(const char *s);

/* The id a record's header claims (its id_len bytes after the header), for error messages
 * about a record that does not decode: non-printable bytes and quotes become '?', cut to
 * the record and to cap - 1 bytes; "" when buf is shorter than a header. Unverified: the
 * record's checksum may not hold. */
void xtts_record_claimed_id(const void *buf, size_t len, char *out, size_t cap);

#ifdef __cplusplus
}
#endif
#endif
