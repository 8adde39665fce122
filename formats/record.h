/* record.h — the cache record codec (formats/cache.md, "Record", version 1).
 *
 * A record is one utterance: a fixed 64-byte header, the utterance id, and one zstd
 * frame holding the padded token ids and the padded log-mel. The header and id are
 * covered by a CRC-32 stored in the header, the zstd frame's bytes by a second CRC-32
 * stored in the header, and the decompressed payload by zstd's content checksum (XXH64)
 * and content size, so every byte of a record is checked.
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
#define XTTS_RECORD_VERSION 1
#define XTTS_RECORD_HEADER_BYTES 64
#define XTTS_RECORD_MAX_ID 1024          /* bytes of utterance id */
#define XTTS_RECORD_MAX_TOKENS 65536     /* padded token count limit */
#define XTTS_RECORD_MAX_FRAMES 1048576   /* padded frame count limit */
#define XTTS_RECORD_MAX_MELS 1024

typedef enum { XTTS_DTYPE_F32 = 0, XTTS_DTYPE_F16 = 1 } xtts_dtype;
typedef enum { XTTS_SPLIT_TRAIN = 0, XTTS_SPLIT_VAL = 1 } xtts_split;

/* Record flags. */
#define XTTS_RECORD_SHUFFLED 0x01u /* mel bytes stored byte-plane shuffled (see cache.md) */

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
    uint32_t payload_bytes; /* decompressed payload size */
    uint32_t frame_bytes;   /* compressed zstd frame size */
    float pad_value;        /* the mel value of padded frames (the preset's log floor) */
    uint16_t id_len;
    char id[XTTS_RECORD_MAX_ID + 1]; /* NUL-terminated */
} xtts_record_header;

/* What to store. tokens: int32[tokens_padded] already padded; mel: float32 laid out
 * [n_mels][frames_padded] (channel-major, row stride frames_padded) already padded. */
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
} xtts_record_input;

typedef struct xtts_record_encoder xtts_record_encoder;
typedef struct xtts_record_decoder xtts_record_decoder;

/* Make an encoder storing mels as dtype, zstd level (1..19), flags (XTTS_RECORD_SHUFFLED).
 * Returns NULL when out of memory. */
xtts_record_encoder *xtts_record_encoder_new(xtts_dtype dtype, int zstd_level, unsigned flags);
void xtts_record_encoder_delete(xtts_record_encoder *enc);

/* Encode one record. On success *out points into the encoder's own buffer (valid until
 * the next call on this encoder) and *out_len is its size. */
xtts_status xtts_record_encode(xtts_record_encoder *enc, const xtts_record_input *in,
                               const uint8_t **out, size_t *out_len, xtts_error *err);

/* Parse and check the header and id of a stored record (CRC, magic, version, shape
 * limits, lengths within padded lengths, sizes consistent with buf_len). Cheap: does
 * not decompress. */
xtts_status xtts_record_parse_header(const void *buf, size_t buf_len, xtts_record_header *hdr,
                                     xtts_error *err);

xtts_record_decoder *xtts_record_decoder_new(void);
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
 * Corrupt or truncated input is XTTS_ECORRUPT; nothing outside the buffers is touched. */
xtts_status xtts_record_decode(xtts_record_decoder *dec, const void *buf, size_t buf_len,
                               xtts_record_header *hdr, int32_t *tokens, size_t tokens_cap,
                               void *mel, xtts_dtype out_dtype, size_t n_mels_cap, size_t frames_cap,
                               xtts_error *err);

/* Bytes per stored mel element for a dtype. */
static inline size_t xtts_dtype_size(xtts_dtype d) { return d == XTTS_DTYPE_F16 ? 2 : 4; }
const char *xtts_dtype_name(xtts_dtype d);
/* "fp16"/"fp32" -> dtype; returns -1 when unknown. */
int xtts_dtype_parse(const char *s);

#ifdef __cplusplus
}
#endif
#endif
