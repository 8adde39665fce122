/* flac_mem.h — 16-bit mono FLAC streams in memory, through libsndfile's virtual I/O:
 * the codec of a record's FLAC waveform section (formats/cache.md 3.2). Lossless for
 * int16 samples. */
#ifndef XTTS_FLAC_MEM_H
#define XTTS_FLAC_MEM_H

#include <stddef.h>
#include <stdint.h>

#include "common/xtts_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Encode n samples at rate Hz into a malloc'd buffer *out (the caller frees it) of
 * *out_len bytes.
 * Errors: XTTS_EIO (libsndfile cannot start a stream at this rate, or the encode fails),
 * XTTS_ENOMEM (the memory buffer cannot grow). */
xtts_status xtts_flac_encode_i16(const int16_t *x, size_t n, int rate, uint8_t **out, size_t *out_len,
                                 xtts_error *err);

/* Decode a stream that must hold exactly n mono samples into out[0..n). A stream that
 * does not decode, is not mono, or holds another count is XTTS_ECORRUPT.
 * Errors: XTTS_ECORRUPT only. */
xtts_status xtts_flac_decode_i16(const void *buf, size_t len, int16_t *out, size_t n, xtts_error *err);

#ifdef __cplusplus
}
#endif
#endif
