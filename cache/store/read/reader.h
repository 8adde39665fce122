/* reader.h — read a cache directory: manifest, shards, records by index or id, and
 * fixed-shape batches decoded straight into caller buffers.
 *
 * An xtts_cache is opened once and shared by threads (read-only; LMDB environments are
 * opened with MDB_RDONLY | MDB_NOLOCK | MDB_NOSUBDIR-free directories, so a cache on a
 * read-only filesystem reads fine). Each thread makes its own xtts_cache_reader, which
 * holds its read transactions and a reused record decoder.
 *
 * Every failure — a missing shard, a manifest that does not match its shards, a corrupt
 * record — is a returned status with a message naming the shard, index and id.
 *
 * Errors of reads (the "Errors:" lines below refer to these): reading record `index` can
 * return XTTS_ERANGE (index >= xtts_cache_count), the shard's fault (a shard that a tolerant
 * open kept: XTTS_ENOTFOUND, XTTS_ECORRUPT, XTTS_EMISMATCH, XTTS_EIO or XTTS_ENOMEM, as the
 * open found it), XTTS_EIO (LMDB cannot begin a read transaction) and XTTS_ECORRUPT (damaged
 * LMDB pages, a fault under the guard, the record missing from "records" or pointing outside
 * data.mdb).
 */
#ifndef XTTS_CACHE_READER_H
#define XTTS_CACHE_READER_H

#include <stddef.h>
#include <stdint.h>

#include "common/xtts_common.h"
#include "formats/manifest.h"
#include "formats/record.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct xtts_cache xtts_cache;
typedef struct xtts_cache_reader xtts_cache_reader;

/* Open dir/manifest.json and every shard it lists.
 * Errors: XTTS_ENOMEM; XTTS_EBUSY (a build holds the directory's lock: xtts_cache_build_running);
 * those of xtts_manifest_load (XTTS_ENOTFOUND, also for an unfinished build, with what it holds; XTTS_EIO, XTTS_ERANGE, XTTS_EINPUT, XTTS_EMISMATCH,
 * XTTS_ECORRUPT); XTTS_EINPUT (shard entries or the config shape out of limits); the first
 * shard's fault: XTTS_ENOTFOUND (shard directory or data.mdb missing), XTTS_ECORRUPT (damaged
 * or truncated data.mdb, a missing database, counts that disagree with the manifest),
 * XTTS_EMISMATCH (a shard built with another configuration or format), XTTS_EIO (LMDB cannot
 * begin or commit a transaction), XTTS_ENOMEM (LMDB cannot make an environment). */
xtts_status xtts_cache_open(const char *dir, xtts_cache **out, xtts_error *err);

/* 1 with msg "DIR: a build is running in this directory (lock NAME held by pid P); read it
 * when the build has finished" when another process holds one of the directory's build
 * locks (a whole build, a part of one, a merge; from the build's first instant, before it
 * writes anything else, and whether or not a manifest is there yet), else 0. Every open
 * checks it first (XTTS_EBUSY): a build may be replacing the shards a manifest lists. */
int xtts_cache_build_running(const char *dir, char *msg, size_t cap);

/* For a directory without manifest.json: 2 with msg "DIR: a build is running in this
 * directory (lock NAME held by pid P); ..." when a build, a part of one or a merge holds its
 * lock (from the build's first instant, before anything else is written); 1 with msg saying
 * what it holds when it is an unfinished build ("DIR: unfinished: 1 of 2 parts done; ..." for
 * a build in parts, "DIR: unfinished build (no manifest.json, N shard directories); ..." for a
 * whole build stopped before its manifest), else 0. The readers' open uses it for their
 * message (cache/store/read/unfinished.c): XTTS_EBUSY for 2, XTTS_ENOTFOUND for 1. */
int xtts_cache_unfinished(const char *dir, char *msg, size_t cap);
/* NULL is allowed. */
void xtts_cache_close(xtts_cache *c);

uint64_t xtts_cache_count(const xtts_cache *c);
const xtts_cache_config *xtts_cache_get_config(const xtts_cache *c);
const char *xtts_cache_config_hash_hex(const xtts_cache *c);
/* The manifest as plain values (formats/manifest.h): record counts, the speaker and language
 * tables, splits, totals, the mel statistics. Borrowed; valid until close. */
const xtts_manifest_info *xtts_cache_manifest(const xtts_cache *c);
/* Shard name (e.g. "shard-00000") holding index, or NULL when out of range. */
const char *xtts_cache_shard_of(const xtts_cache *c, uint64_t index);

/* Errors: XTTS_ENOMEM only. */
xtts_status xtts_cache_reader_new(xtts_cache *c, xtts_cache_reader **out, xtts_error *err);
/* NULL is allowed. */
void xtts_cache_reader_delete(xtts_cache_reader *r);

/* Index of an utterance id. XTTS_ENOTFOUND when absent.
 * Errors: XTTS_ENOTFOUND; otherwise the first error of a shard's lookup
 * (xtts_cache_reader_find_local: XTTS_ECORRUPT, XTTS_EIO, or a kept shard fault other than
 * XTTS_ENOTFOUND; a kept XTTS_ENOTFOUND fault, a missing shard, reads as "absent"). */
xtts_status xtts_cache_reader_find(xtts_cache_reader *r, const char *id, uint64_t *index, xtts_error *err);

/* The stored bytes of record index (borrowed from LMDB's map; valid until the next call
 * on this reader).
 * Errors: those of reads (top of this file). */
xtts_status xtts_cache_reader_raw(xtts_cache_reader *r, uint64_t index, const void **buf, size_t *len,
                                  xtts_error *err);

/* Header only (lengths, split, speaker, language, id), without decompressing.
 * Errors: those of reads (top of this file), and of xtts_record_parse_header (XTTS_ECORRUPT,
 * XTTS_EMISMATCH), prefixed with shard, index and id. */
xtts_status xtts_cache_reader_header(xtts_cache_reader *r, uint64_t index, xtts_record_header *hdr,
                                     xtts_error *err);

/* Decode one record (see xtts_record_decode for the buffer contract).
 * Errors: those of reads (top of this file), and of xtts_record_decode (XTTS_ECORRUPT,
 * XTTS_EMISMATCH, XTTS_ERANGE for buffers too small, XTTS_ENOMEM). */
xtts_status xtts_cache_reader_get(xtts_cache_reader *r, uint64_t index, xtts_record_header *hdr,
                                  int32_t *tokens, size_t tokens_cap, void *mel, xtts_dtype out_dtype,
                                  size_t n_mels_cap, size_t frames_cap, xtts_error *err);

/* A fixed-shape batch, owned by the caller (allocate with xtts_batch_init or by hand).
 *   tokens    (B, max_tokens)            int32, padded with the cache's pad token
 *   mel       (B, n_mels, max_frames)    float32 or fp16 bits, padded with the pad value
 *   n_tokens, n_frames, speaker_id, lang_id, split  (B,)                                */
typedef struct {
    size_t batch_size, max_tokens, n_mels, max_frames;
    xtts_dtype mel_dtype;
    int32_t *tokens;
    void *mel;
    uint32_t *n_tokens, *n_frames, *speaker_id, *lang_id;
    uint8_t *split;
    uint64_t *index;
} xtts_batch;

/* Allocate a batch shaped for this cache (max_frames = the largest bucket). Free with
 * xtts_batch_free. Returns XTTS_ENOMEM on failure.
 * Errors: XTTS_ENOMEM only (also for a size that overflows). */
xtts_status xtts_batch_init(const xtts_cache *c, size_t batch_size, xtts_dtype mel_dtype, xtts_batch *b,
                             xtts_error *err);
/* NULL is allowed. */
void xtts_batch_free(xtts_batch *b);

/* Decode records indices[0..n) into rows 0..n of b (n <= b->batch_size).
 * Errors: XTTS_ERANGE (n > b->batch_size), those of xtts_cache_reader_get (a record larger
 * than the batch's shape is XTTS_ERANGE), XTTS_ECORRUPT (a record's n_mels differs from the
 * batch's). */
xtts_status xtts_cache_reader_batch(xtts_cache_reader *r, const uint64_t *indices, size_t n, xtts_batch *b,
                                    xtts_error *err);

/* How xtts_cache_reader_batch stores mels: mode < 0 (the default) decides per call
 * (non-temporal stores when the call's mels reach 1 MiB), 1 always non-temporal, 0 never.
 * For callers that fill one large batch a few rows at a time from several threads
 * (cache/store/read/reader_api.c), where each call alone looks small. */
void xtts_cache_reader_set_batch_streaming(xtts_cache_reader *r, int mode);


/* ---- additions: tolerant open, shards, raw database access ---------------------------
 * These serve xtts-cache-verify and xtts-cache-inspect, which must report every fault of
 * a damaged cache instead of stopping at the first.
 *
 * Damaged files: liblmdb follows page numbers without bounds checks, so a damaged
 * data.mdb can fault inside it. xtts_cache_guard_faults() (below) installs SIGSEGV and
 * SIGBUS handlers that turn a fault inside a reader call (LMDB or mapped record bytes) into
 * XTTS_ECORRUPT naming the shard, and pass any other fault on to the handler that was
 * installed before. Nothing installs them behind the caller's back: without the call a
 * damaged shard can kill the process. A program that installs its own handlers afterwards
 * should chain to the previous ones (cache/store/read/guard.h: where it is installed, which
 * signals, and how a host process keeps its own handlers). */

/* Install the fault guard described above, once per process (later calls do nothing).
 * Every program that reads caches calls it first (xtts-cache-verify, xtts-cache-inspect,
 * xtts-train); so do the tests. Thread-safe. */
void xtts_cache_guard_faults(void);

/* Open flags. XTTS_CACHE_OPEN_TOLERANT: a shard that is missing, unreadable or does not
 * match the manifest (record count, configuration hash, format) does not fail the open;
 * its fault is kept (xtts_cache_shard_get) and every read of its records returns it.
 * The manifest itself must still load.
 * Errors: those of xtts_cache_open; with XTTS_CACHE_OPEN_TOLERANT no shard fault (nor a
 * "records" total that disagrees with the shards) fails the open. */
#define XTTS_CACHE_OPEN_TOLERANT 0x1u
xtts_status xtts_cache_open_ex(const char *dir, unsigned flags, xtts_cache **out, xtts_error *err);

/* The directory the cache was opened from. */
const char *xtts_cache_dir(const xtts_cache *c);
/* Largest padded frame count (largest bucket, or max_frames). */
size_t xtts_cache_max_frames(const xtts_cache *c);

typedef struct {
    const char *name;        /* "shard-00000" */
    const char *path;        /* dir/shard-00000 */
    uint64_t first_index;    /* global index of its local record 0 (from the record counts) */
    uint64_t manifest_first; /* "first_index" as the manifest states it */
    uint64_t records;        /* record count the manifest states */
    uint64_t bytes;          /* "bytes" the manifest states */
    uint64_t entries;        /* entries in its "records" database (0 when it did not open);
                                of a ranged entry, its records when the directory holds them */
    uint64_t local_first;    /* the directory's local key of its first record ("local_first") */
    int ranged;              /* a range of a shared directory (manifest format_version 3): the
                                walks (xtts_cache_reader_foreach) and the id lookups see only
                                its keys, made relative to local_first */
    xtts_status status;      /* XTTS_OK, or why the shard cannot be read */
    const char *error;       /* one-line message when status != XTTS_OK, else "" */
} xtts_cache_shard;

size_t xtts_cache_n_shards(const xtts_cache *c);
/* Describe shard i (i < n_shards). The strings are borrowed; valid until close. */
void xtts_cache_shard_get(const xtts_cache *c, size_t i, xtts_cache_shard *out);
/* Shard number holding global index, or (size_t)-1 when out of range. */
size_t xtts_cache_shard_index_of(const xtts_cache *c, uint64_t index);

/* Iterate over every key/value of one of shard i's databases ("records", "ids", "meta",
 * "lengths" or "quality") in key order. cb returns 0 to go on, nonzero to stop early (the call still
 * returns XTTS_OK). The pointers are borrowed for the duration of the callback. A damaged
 * database is XTTS_ECORRUPT naming the shard (entries before the damage were passed).
 * Errors: XTTS_ERANGE (no shard i), XTTS_EUSAGE (another database name, or "lengths" in a
 * format-1 cache), XTTS_ENOTFOUND ("quality" in a shard without it), the shard's fault, XTTS_EIO (no read transaction or cursor),
 * XTTS_ECORRUPT. */
typedef int (*xtts_cache_foreach_fn)(void *ctx, const void *key, size_t key_len, const void *val,
                                     size_t val_len);
xtts_status xtts_cache_reader_foreach(xtts_cache_reader *r, size_t shard, const char *db,
                                      xtts_cache_foreach_fn cb, void *ctx, xtts_error *err);

/* One value of shard i's "meta" database, copied into a malloc'd NUL-terminated buffer
 * (*len excludes the NUL; caller frees). XTTS_ENOTFOUND when the key is absent.
 * Errors: XTTS_ERANGE (no shard i), the shard's fault, XTTS_EIO (no read transaction),
 * XTTS_ENOTFOUND, XTTS_ECORRUPT (damaged pages, a value outside data.mdb; also when the
 * copy cannot be allocated). */
xtts_status xtts_cache_reader_meta(xtts_cache_reader *r, size_t shard, const char *key, char **val,
                                   size_t *len, xtts_error *err);

/* Look an id up in shard i's "ids" database only: its local index there.
 * Errors: XTTS_ERANGE (i is not a shard), XTTS_ENOTFOUND (absent, empty or longer than
 * XTTS_RECORD_MAX_ID), the shard's fault, XTTS_EIO (no read transaction), XTTS_ECORRUPT (damaged pages, a
 * value that is not an 8-byte index within the shard). */
xtts_status xtts_cache_reader_find_local(xtts_cache_reader *r, size_t shard, const char *id, uint64_t *local,
                                         xtts_error *err);

/* ---- per-record databases (formats/cache.md section 2) ----------------------------------
 * Values kept beside the records, keyed like "records" by the local index, in databases of
 * their own that a cache may or may not hold: "quality" (the records' quality metrics,
 * kernels/quality.h; cache/store/quality_store.h reads them decoded) and "keys" (content keys). A cache built before them
 * has none. */
#define XTTS_CACHE_DB_QUALITY "quality"
/* "keys": each record's content key (32 bytes) and mel sums (cache/store/keys.h); caches built
 * before content keys have none. */
#define XTTS_CACHE_DB_KEYS "keys"

/* The cache r reads. */
const xtts_cache *xtts_cache_reader_cache(const xtts_cache_reader *r);

/* How many shards (of those that opened) hold database db; 0 for a name this reader does
 * not know. */
size_t xtts_cache_shards_with_db(const xtts_cache *c, const char *db);

/* The value of record index in per-record database db (borrowed from LMDB's map; valid until
 * the next call on this reader).
 * Errors: XTTS_EUSAGE (db is not a per-record database), XTTS_ENOTFOUND (the record's shard
 * has no such database, or no entry for the record), those of reads (top of this file). */
xtts_status xtts_cache_reader_value(xtts_cache_reader *r, uint64_t index, const char *db, const void **buf,
                                    size_t *len, xtts_error *err);

/* ---- version 2: lengths index, text, waveform, aligned segments (formats/cache.md 3) ---- */

/* 1 when the cache stores a "lengths" database per shard (format 2). */
int xtts_cache_has_lengths_index(const xtts_cache *c);

/* Every record's lengths, speaker, language and split, in global index order, into
 * out[0..xtts_cache_count). From the shards' "lengths" databases (one cursor pass, no
 * record read); for a format-1 cache from each record's header (no decompression).
 * Errors: format 2: a shard's fault, those of xtts_cache_reader_foreach, XTTS_ECORRUPT (an
 * entry out of order or out of range, a count that differs from the shard's); format 1: those
 * of xtts_cache_reader_header. */
xtts_status xtts_cache_lengths(xtts_cache_reader *r, xtts_lengths *out, xtts_error *err);

/* The original and normalized text of record index (borrowed: valid until the next call
 * on this reader; NUL-terminated). XTTS_ENOTFOUND for a version-1 record.
 * Errors: those of reads (top of this file) and of xtts_record_decode_text (XTTS_ECORRUPT,
 * XTTS_EMISMATCH, XTTS_ENOTFOUND, XTTS_ENOMEM). */
xtts_status xtts_cache_reader_text(xtts_cache_reader *r, uint64_t index, const char **orig, size_t *orig_len,
                                   const char **norm, size_t *norm_len, xtts_error *err);

/* Samples [first, first + n) of record index's stored waveform (int16). XTTS_ENOTFOUND
 * when the cache stores none (--audio none).
 * Errors: those of reads (top of this file) and of xtts_record_decode_wave (XTTS_ECORRUPT,
 * XTTS_EMISMATCH, XTTS_ENOTFOUND, XTTS_ERANGE for samples outside the waveform,
 * XTTS_ENOMEM). */
xtts_status xtts_cache_reader_wave(xtts_cache_reader *r, uint64_t index, int16_t *out, size_t first, size_t n,
                                   xtts_error *err);

/* Check every section of record index completely (xtts_record_check).
 * Errors: those of reads (top of this file) and of xtts_record_check (XTTS_ECORRUPT,
 * XTTS_EMISMATCH, XTTS_ENOMEM). */
xtts_status xtts_cache_reader_check(xtts_cache_reader *r, uint64_t index, xtts_error *err);

/* An aligned segment (formats/cache.md 3.4): frames [start_frame, start_frame +
 * seg_frames) of the mel into mel[n_mels][seg_frames] (float32, channel-major; NULL to
 * skip) and samples [start_frame * hop, (start_frame + seg_frames) * hop) of the
 * waveform as float (int16 / 32768; zero past the end of the audio) into
 * wave[seg_frames * hop] (NULL to skip). start_frame + seg_frames <= n_frames, else
 * XTTS_ERANGE; a waveform asked of a cache without one is XTTS_ENOTFOUND.
 * Errors: XTTS_ERANGE (also seg_frames 0), XTTS_ENOTFOUND, XTTS_ENOMEM, and those of
 * xtts_cache_reader_header, xtts_cache_reader_get and xtts_cache_reader_wave. */
xtts_status xtts_cache_reader_segment(xtts_cache_reader *r, uint64_t index, size_t start_frame, size_t seg_frames,
                                      float *wave, float *mel, xtts_error *err);

#ifdef __cplusplus
}
#endif
#endif
