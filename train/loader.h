/* loader.h — the batch loader of xtts-train: N threads decode upcoming batches straight
 * from the cache into a ring of three batch slots; the training step takes a ready slot
 * (xtts_loader_next) and gives it back (xtts_loader_release).
 *
 * Order: the records of one split are grouped by padded length (bucket); every epoch each
 * bucket is shuffled and cut into batches, and the batches' order is shuffled, all from
 * the seed and the epoch number alone. So the position (epoch, batch) is the whole loader
 * state, and a run resumed at a position sees the same batches as an uninterrupted one.
 * Every batch holds records of one bucket; the last batch of a bucket may be smaller.
 * A bucket's shuffle is a keyed bijection of its positions (a Feistel network walked back
 * into range), computed per row, so an epoch costs no per-record memory and no pause at
 * its start: the loader keeps 4 bytes a record (the records grouped by bucket) and 4 bytes
 * a batch for each of the two epochs it may be filling; the scan 8 bytes a record.
 *
 * Rows are what the model reads (model.h, xtts_model_batch): the language token and the
 * text tokens, and the mel transposed to time-major and normalized with the manifest's
 * per-channel mean and std when it has them.
 */
#ifndef XTTS_TRAIN_LOADER_H
#define XTTS_TRAIN_LOADER_H

#include <stddef.h>
#include <stdint.h>

#include "cache/store/read/reader.h"
#include "common/xtts_common.h"
#include "train/model.h"

#ifdef __cplusplus
extern "C" {
#endif

#define XTTS_LOADER_SLOTS 3

/* What a header scan found: the records of each split and the longest sequence. */
typedef struct {
    uint32_t *train, *val;    /* record indices, in index order (a cache holds < 2^32) */
    uint32_t *train_bucket;   /* frames_padded of each train record */
    uint32_t *val_bucket;
    size_t n_train, n_val;
    int max_seq;              /* max over records of 1 + n_tokens + n_frames */
    int n_mels, max_tokens, max_frames, vocab_size;
    int n_langs;              /* the manifest's language table: XTTS's 17, or more */
    float *mel_mean, *mel_std; /* (n_mels) from the manifest's "stats", or 0 and 1 */
    int normalized;           /* the manifest had stats */
    size_t n_skipped;         /* records left out for a corrupt header (skip_corrupt) */
    char skipped_msg[XTTS_ERRMSG_MAX]; /* the first of them */
} xtts_dataset;

/* Read every record header of the cache once. A corrupt header stops the scan with
 * XTTS_ECORRUPT naming the record, or with skip_corrupt leaves the record out (counted).
 * Errors: XTTS_ENOMEM, and those of xtts_cache_reader_header (cache/store/read/reader.h; only
 * XTTS_ECORRUPT is skipped with skip_corrupt: an unreadable shard's other fault, or a record
 * version this build does not read, XTTS_EMISMATCH, still stops the scan). */
xtts_status xtts_dataset_scan(xtts_cache *cache, int skip_corrupt, xtts_dataset *ds, xtts_error *err);
/* NULL is allowed. */
void xtts_dataset_free(xtts_dataset *ds);

/* One batch slot. */
typedef struct {
    xtts_model_batch view; /* what the model reads; B rows in use */
    int32_t *text;         /* (B_max, text_stride) */
    int *n_text, *n_frames;
    float *mel;            /* (B_max, mel_stride, n_mels) */
    uint64_t *index;       /* (B_max) record index per row */
    uint64_t epoch, batch; /* position of this batch */
    uint64_t seq;          /* batches since the loader started */
    size_t decoded_bytes;  /* bytes decoded into the slot */
    size_t stored_bytes;   /* bytes of the stored records */
    int n_skipped;         /* corrupt records skipped (with skip_corrupt) */
    char skipped_msg[XTTS_ERRMSG_MAX]; /* the first of them */
} xtts_loader_batch;

typedef struct {
    int batch_size;
    int n_threads;        /* decoding threads (>= 1) */
    uint64_t seed;
    int split;            /* XTTS_SPLIT_TRAIN (shuffled, endless) or XTTS_SPLIT_VAL (in order, one pass) */
    int skip_corrupt;     /* skip a corrupt record with a counted warning instead of stopping */
    uint64_t start_epoch, start_batch;
} xtts_loader_options;

typedef struct xtts_loader xtts_loader;

/* Start the threads. ds and cache are borrowed and must outlive the loader.
 * XTTS_EINPUT when the split has no records.
 * Errors: XTTS_EUSAGE (batch size or threads below 1), XTTS_EINPUT, XTTS_EMISMATCH (start_batch
 * past the batches of an epoch: a checkpoint of a cache with another record count),
 * XTTS_ENOMEM, XTTS_EIO (a thread cannot be started). */
xtts_status xtts_loader_new(xtts_cache *cache, const xtts_dataset *ds, const xtts_loader_options *opt,
                            xtts_loader **out, xtts_error *err);
/* Stop the threads and free everything. NULL is allowed. */
void xtts_loader_delete(xtts_loader *l);

/* Batches per epoch of the loader's split. */
uint64_t xtts_loader_batches_per_epoch(const xtts_loader *l);

/* Wait for the next batch. *waited_s: seconds spent waiting. On a corrupt record (without
 * skip_corrupt) returns XTTS_ECORRUPT with the shard, index and id. XTTS_ENOTFOUND when a
 * validation pass is over.
 * Errors: XTTS_ENOTFOUND, XTTS_ECORRUPT (also a record whose shape or token ids do not fit the
 * dataset), any other error of xtts_cache_reader_get on a row (not skipped with
 * skip_corrupt), XTTS_ENOMEM (planning an epoch). */
xtts_status xtts_loader_next(xtts_loader *l, xtts_loader_batch **out, double *waited_s, xtts_error *err);
/* Give the slot back for refilling. */
void xtts_loader_release(xtts_loader *l, xtts_loader_batch *b);

/* Slot k (0 <= k < XTTS_LOADER_SLOTS), e.g. to pin its buffers for device copies. */
xtts_loader_batch *xtts_loader_slot(xtts_loader *l, int k);

/* The position after the last batch taken: where a resumed run starts. */
void xtts_loader_position(const xtts_loader *l, uint64_t *epoch, uint64_t *batch);

#ifdef __cplusplus
}
#endif
#endif
