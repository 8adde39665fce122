/* synth.h — a small synthetic cache for smoke tests and benchmarks of the trainer and the
 * readers (the test helper build/tests/tools/synth-cache writes one from the command line).
 * Test code, not part of the library: compiled into build/tests/libxtts-test.a, which the
 * tests and the test helpers link.
 *
 * Records are made by code, not audio: each token id has its own smooth log-mel pattern,
 * held for frames_per_token frames and blended into the next, so a model that learns
 * text -> mel has something real to learn. Written through the cache writer and the
 * record codec, so it is a cache like any other (manifest, LMDB shards, zstd records).
 */
#ifndef XTTS_TESTS_SYNTH_H
#define XTTS_TESTS_SYNTH_H

#include <stdint.h>

#include "common/xtts_common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int n_records;        /* default 64 */
    int n_mels;           /* default 80 */
    int vocab_size;       /* default 256 (the bytes tokenizer's ids) */
    int min_tokens, max_tokens; /* token count range of a record; default 4..24 */
    int frames_per_token; /* default 3 */
    int max_frames;       /* padded frame count, default 96 */
    int n_buckets;        /* 0 = no buckets */
    int buckets[4];
    int val_every;        /* every val_every-th record is validation; 0 = none; default 8 */
    uint64_t seed;
} xtts_synth_options;

void xtts_synth_options_defaults(xtts_synth_options *o);

/* Write a cache to dir (replacing one of another configuration).
 * Errors: XTTS_EUSAGE (options out of range, or a configuration the writer refuses),
 * XTTS_ENOMEM, and those of xtts_cache_writer_open (with force: XTTS_EBUSY, XTTS_EIO, ...),
 * xtts_record_encode, xtts_cache_writer_put and xtts_cache_writer_finish. */
xtts_status xtts_synth_cache_write(const char *dir, const xtts_synth_options *o, xtts_error *err);

#ifdef __cplusplus
}
#endif
#endif
