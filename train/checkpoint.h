/* checkpoint.h — xtts-train checkpoints: one file holding the model, the optimizer
 * moments, the step, the loader position and the seed, behind a versioned header.
 *
 * Layout (version 1, little-endian; docs/xtts-train.md "Checkpoints"):
 *   0   char[8]  magic "XTTSCKPT"
 *   8   u32      version (1)
 *   12  u32      header bytes (256)
 *   16  i32[7]   n_layer channels n_head n_mels vocab_size max_text_pos max_mel_pos
 *   44  u32      batch size
 *   48  u64      number of parameters P
 *   56  u64      steps done
 *   64  u64      seed (the loader's shuffles and the initial weights derive from it)
 *   72  u64      loader epoch
 *   80  u64      loader batch within the epoch (the next one to train on)
 *   88  u64      payload bytes (12 P)
 *   96  char[64] configuration hash of the cache it was trained on (hex)
 *   160 u32      payload CRC-32
 *   164 ...      zero
 *   252 u32      CRC-32 of bytes 0..251
 *   256 float32  parameters[P], AdamW m[P], AdamW v[P]
 * Written atomically (temporary file, fsync, rename), so a crash leaves the old one.
 */
#ifndef XTTS_TRAIN_CHECKPOINT_H
#define XTTS_TRAIN_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>

#include "common/xtts_common.h"
#include "train/model.h"

#ifdef __cplusplus
extern "C" {
#endif

#define XTTS_CKPT_MAGIC "XTTSCKPT"
#define XTTS_CKPT_VERSION 1
#define XTTS_CKPT_HEADER_BYTES 256

typedef struct {
    uint32_t version;
    xtts_model_config model;
    uint32_t batch_size;
    uint64_t num_parameters;
    uint64_t step;
    uint64_t seed;
    uint64_t epoch, batch_in_epoch;
    uint64_t payload_bytes;
    uint32_t payload_crc;
    char cache_config_hash[65];
} xtts_ckpt_header;

/* Parse and check a header from the first len bytes of a file (magic, version, CRC,
 * sizes consistent with the model config). name is used in messages. Never reads
 * beyond len.
 * Errors: XTTS_EINPUT (len below the header size or no magic: not a checkpoint),
 * XTTS_EMISMATCH (another checkpoint version), XTTS_ECORRUPT (header size, CRC, model config,
 * parameter count, payload size, batch size or cache hash bad). */
xtts_status xtts_ckpt_parse_header(const void *buf, size_t len, const char *name, xtts_ckpt_header *h,
                                   xtts_error *err);

/* Encode a header into out[XTTS_CKPT_HEADER_BYTES]. */
void xtts_ckpt_encode_header(const xtts_ckpt_header *h, uint8_t *out);

/* Refuse a checkpoint that does not belong to this model and cache: another model size,
 * another cache configuration or another batch size. XTTS_EMISMATCH naming the field.
 * Errors: XTTS_EMISMATCH only. */
xtts_status xtts_ckpt_check(const xtts_ckpt_header *h, const char *name, const xtts_model_config *model,
                            const char *cache_config_hash, uint32_t batch_size, xtts_error *err);

/* Write path atomically: h (payload fields are filled here), then params, m, v.
 * Errors: XTTS_ENOMEM (the whole file is built in memory), and those of
 * xtts_write_file_atomic (XTTS_EIO, XTTS_ERANGE for a path too long). */
xtts_status xtts_ckpt_save(const char *path, xtts_ckpt_header *h, const float *params, const float *m,
                           const float *v, xtts_error *err);

/* Read path: header into h, and params, m, v (each h->num_parameters floats, allocated
 * by the caller after xtts_ckpt_read_header, or pass expected_params to check).
 * Errors (both): XTTS_EIO (path cannot be opened, a missing file included), those of
 * xtts_ckpt_parse_header (a short read is XTTS_EINPUT). Load also: XTTS_EMISMATCH (parameter
 * count is not expected_params), XTTS_ECORRUPT (truncated payload, trailing bytes, payload
 * CRC mismatch). */
xtts_status xtts_ckpt_read_header(const char *path, xtts_ckpt_header *h, xtts_error *err);
xtts_status xtts_ckpt_load(const char *path, xtts_ckpt_header *h, float *params, float *m, float *v,
                           size_t expected_params, xtts_error *err);

#ifdef __cplusplus
}
#endif
#endif
