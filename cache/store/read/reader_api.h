/* reader_api.h — the cache reader as a small, stable C interface for other languages.
 *
 * The shared library build/lib/libxtts-reader.so (installed into $(PREFIX)/lib) exports
 * these functions and nothing else. They take and return plain C types only, so a caller
 * needs no other header of the project and no struct layout: the Python package
 * (python/xtts_prep/_clib.py) binds them with ctypes, another language's FFI can do the
 * same. Everything a record read checks (cache/store/read/reader.h) is checked here too.
 *
 * Versioning: xtts_api_abi_version() returns XTTS_API_ABI_VERSION of the library that was
 * loaded. The number changes only when a function below changes its meaning or its
 * signature; functions may be added without a change. A caller compares it with the
 * version it was written for and refuses (or falls back) when they differ.
 *
 * Errors: a failing call returns NULL or a nonzero status (the xtts_status codes of
 * common/xtts_common.h: 2 input, 3 I/O, 4 out of memory, 5 corrupt, 6 mismatch, 7 range,
 * 8 not found) and leaves a one-line message naming the shard, the index and the id in
 * the calling thread's last-error buffer (xtts_api_last_error).
 *
 * Threads and processes: a handle may be used by several threads at once (each call takes
 * readers from the handle's own pool). A handle belongs to the process that opened it: a
 * child made by fork() must open its own (LMDB environments must not be used across a
 * fork); the inherited one may be left alone, not closed. xtts_api_read_batch may run its
 * own threads (POSIX threads, started for the call and joined before it returns).
 *
 * Opening installs the readers' fault guard (xtts_cache_guard_faults): a damaged shard
 * that would make LMDB fault inside a read becomes status 5 instead of killing the
 * process; any other SIGSEGV/SIGBUS is passed on to the handler installed before.
 */
#ifndef XTTS_CACHE_READER_API_H
#define XTTS_CACHE_READER_API_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define XTTS_API_ABI_VERSION 1

/* Output dtypes of the mel. */
#define XTTS_API_MEL_F32 0 /* float32 */
#define XTTS_API_MEL_F16 1 /* IEEE half as uint16 bits */

typedef struct xtts_api_cache xtts_api_cache;

/* XTTS_API_ABI_VERSION of the loaded library. */
int xtts_api_abi_version(void);
/* The project version the library was built from, e.g. "0.9.0". */
const char *xtts_api_version(void);
/* The message of the last failed call on this thread ("" when none). Valid until the
 * next failed call on this thread. */
const char *xtts_api_last_error(void);

/* Open dir/manifest.json and every shard it lists. NULL on failure; the last error says
 * why (the failures of xtts_cache_open in cache/store/read/reader.h). */
xtts_api_cache *xtts_api_open(const char *dir);
/* NULL is allowed. */
void xtts_api_close(xtts_api_cache *c);

/* The cache's shape. */
uint64_t xtts_api_count(const xtts_api_cache *c);      /* records */
uint32_t xtts_api_n_mels(const xtts_api_cache *c);     /* mel channels */
uint32_t xtts_api_max_tokens(const xtts_api_cache *c); /* padded token count of a batch row */
uint32_t xtts_api_max_frames(const xtts_api_cache *c); /* largest padded frame count (largest bucket) */
int32_t xtts_api_pad_token(const xtts_api_cache *c);   /* token id of padding */
uint32_t xtts_api_format_version(const xtts_api_cache *c);

/* Decode records indices[0..n) into row k = 0..n of caller arrays:
 *   tokens      int32 [n][tokens_cap]: the record's stored tokens, then pad_token up to
 *               tokens_cap
 *   mel         [n][n_mels][frames_cap] as mel_dtype (XTTS_API_MEL_*): the record's frames,
 *               then its pad value up to frames_cap (rounded to the stored dtype, as the C
 *               reader writes it)
 *   n_tokens, n_frames, speaker_id, lang_id  uint32 [n];  split uint8 [n] (0 train, 1 val)
 * tokens_cap and frames_cap must hold every record's padded lengths (xtts_api_max_tokens,
 * xtts_api_max_frames always do), else status 7. Every pointer must be non-NULL when
 * n > 0. threads: how many threads decode (the calling thread is one of them); 0 or 1
 * decodes on the calling thread only; more than n is cut to n. Rows are split into
 * contiguous runs, one per thread, so the output does not depend on threads. On failure
 * the rows are unspecified and the message names the first failing record in index order
 * of the rows. Returns 0 or an xtts_status.
 * Errors: XTTS_EUSAGE (no handle, a NULL array, an unknown mel_dtype, a handle opened by
 * another process); XTTS_ERANGE (rows too narrow for a record, an index out of range);
 * XTTS_ENOMEM; those of reads and decoding (cache/store/read/reader.h: XTTS_ECORRUPT, XTTS_EIO, ...). */
int xtts_api_read_batch(xtts_api_cache *c, const uint64_t *indices, size_t n, int32_t *tokens, size_t tokens_cap,
                        void *mel, int mel_dtype, size_t frames_cap, uint32_t *n_tokens, uint32_t *n_frames,
                        uint32_t *speaker_id, uint32_t *lang_id, uint8_t *split, int threads);

/* The stored quality metrics of record index (formats/cache.md section 3.5: 104 bytes, little
 * endian, ending in their CRC-32; the caller decodes them) copied into out[0..cap); *len gets
 * their size. Returns 0 or an xtts_status: 8 (not found) when the cache stores no metrics (a
 * cache built before them), 5 (corrupt) when it does but this record's are missing, 7 (range)
 * for an index out of range or cap too small, 2 (input) for a NULL argument; those of reads.
 * The bytes are checked by their CRC here. */
int xtts_api_quality(xtts_api_cache *c, uint64_t index, uint8_t *out, size_t cap, size_t *len);

#ifdef __cplusplus
}
#endif
#endif
