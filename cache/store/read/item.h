/* item.h — one record read once for a dataset item (cache/store/read/item.c): its header,
 * tokens, mel, waveform and content key from one lookup of its stored value, each section
 * decompressed once. The engine of xtts_api_read_items (reader_api.h); private to this folder. */
#ifndef XTTS_CACHE_READ_ITEM_H
#define XTTS_CACHE_READ_ITEM_H

#include <stddef.h>
#include <stdint.h>

#include "cache/store/read/reader.h"

/* A reader's reusable decoder and scratch rows (for records padded past what the caller's
 * unpadded buffers hold). */
typedef struct xtts_item_state xtts_item_state;

/* Errors: XTTS_ENOMEM only. */
xtts_status xtts_item_state_new(xtts_item_state **out, xtts_error *err);
/* NULL is allowed. */
void xtts_item_state_delete(xtts_item_state *s);

/* What one item asks for: a NULL buffer skips that part. Counts are elements. */
typedef struct {
    int32_t *tokens;   /* n_tokens ids, unpadded */
    size_t tokens_cap;
    void *mel;         /* [n_mels][n_frames] as mel_dtype, unpadded */
    size_t mel_cap;
    xtts_dtype mel_dtype;
    int16_t *wave;     /* n_samples */
    size_t wave_cap;
    uint8_t *key;      /* 32 bytes: the record's content key */
} xtts_item_want;

/* Read record index once with r and decode what w asks into its buffers; hdr gets the header
 * and *frame_crc the header's word at byte 56 (version 1: the zstd frame's CRC-32; version 2:
 * the section table's). The ids are checked against the manifest's tables and n_mels against
 * the cache's, as every read of the reader checks them. A buffer too small is XTTS_ERANGE
 * (hdr is filled first, so the caller learns the sizes).
 * Errors: those of reads (reader.h), of xtts_record_decode and xtts_record_decode_wave
 * (prefixed with shard, index and id), XTTS_ECORRUPT (n_mels, the ids, a missing or short
 * content key), XTTS_ENOTFOUND (a waveform asked of a record without one; a content key of a
 * cache without "keys"), XTTS_ERANGE, XTTS_ENOMEM. */
xtts_status xtts_item_read(xtts_cache_reader *r, xtts_item_state *s, uint64_t index, const xtts_item_want *w,
                           xtts_record_header *hdr, uint32_t *frame_crc, xtts_error *err);

#endif
