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
/* Open flags of xtts_api_open_ex. XTTS_API_OPEN_TOLERANT: a shard that is missing, damaged
 * or of another build does not fail the open; every read of its records (and a lookup in it)
 * returns its fault instead, so the other shards' records read. The manifest must still load,
 * and a shard that cannot be opened for want of a resource (descriptors, memory) still fails
 * the open. */
#define XTTS_API_OPEN_TOLERANT 0x1u
/* xtts_api_open with flags (0: the same as xtts_api_open). */
xtts_api_cache *xtts_api_open_ex(const char *dir, unsigned flags);
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

/* Record index's quality metrics decoded (xtts_quality_decode, docs/quality.md): ints[0..8)
 * version, status (0 unmeasured, 1 measured, 2 too short), cut_start, cut_end, sample_rate,
 * native_rate, n_chars, n_tokens; floats[0..16) duration_s, lead_silence_s, trail_silence_s,
 * speech_s, start_edge_db, end_edge_db, peak_dbfs, rms_dbfs, active_dbfs, noise_dbfs,
 * clip_fraction, snr_db, bandwidth_hz, chars_per_s, tokens_per_s, dc_offset; hash[0..2) the
 * audio hash. Returns 0 or the statuses of xtts_api_quality, and 5 (corrupt) for stored metrics
 * that do not decode (another version, a bad status or cut flag, a value not finite). */
int xtts_api_metrics(xtts_api_cache *c, uint64_t index, uint32_t *ints, float *floats, uint64_t *hash);

/* Every record's quality flags as xtts-cache-report decides them (the same code: kernels/
 * quality.h xtts_quality_flag_all, speakers from the records): flags[i] the bitmask of
 * 1u << flag (flag numbers and names as in docs/quality.md), dup_of[i] the index of the earlier
 * record with the same audio or -1; n must be the record count. thresholds is the text of a
 * thresholds file (thresholds_len bytes; NULL for the defaults). Returns 0 or an xtts_status:
 * 8 (not found) for a cache without metrics, 5 (corrupt) for a record's missing or damaged
 * metrics, 7 (range) when n is not the count, 1 (usage) for a NULL argument or a bad thresholds
 * text (the message names the line); those of reads. */
int xtts_api_quality_flags(xtts_api_cache *c, const char *thresholds, size_t thresholds_len, uint32_t *flags,
                           int64_t *dup_of, size_t n);

/* ---- one record, one value ---------------------------------------------------------------
 * The calls below copy a value of unknown size into a caller buffer out[0..cap) and set *len
 * to its size; when cap is too small they return 7 (range) with *len set to the size needed
 * (ask with cap 0 to learn it). Every one returns 0 or an xtts_status and may return, besides
 * those named: 1 (usage) for a NULL handle or argument, or a handle opened by another process;
 * 7 (range) for an index out of range; those of reads (cache/store/read/reader.h: a shard's
 * fault kept by a tolerant open, 3 when LMDB cannot begin a read transaction, 5 for damaged
 * LMDB pages, a fault under the guard, a value outside data.mdb). */

/* The stored value of record index, as formats/cache.md section 3 lays it out (its header,
 * then its sections, compressed): the caller parses and checks it (a record read by
 * xtts_api_read_batch, xtts_api_text or xtts_api_waveform is checked here). 5 (corrupt) when
 * the record is missing from its shard. */
int xtts_api_record(xtts_api_cache *c, uint64_t index, void *out, size_t cap, size_t *len);

/* The original and the normalized text of record index (formats/cache.md 3.2), UTF-8 bytes
 * without a terminating NUL, into orig[0..orig_cap) and norm[0..norm_cap) with their sizes in
 * *orig_len and *norm_len (7 with both sizes set when either buffer is too small). 8 (not
 * found) for a version-1 record (it stores no text); 5 (corrupt) for a damaged record or text
 * section (checksum, zstd, lengths, a NUL byte), 6 (mismatch) for a record version this
 * library does not read; the message names the shard, the index and the id. */
int xtts_api_text(xtts_api_cache *c, uint64_t index, char *orig, size_t orig_cap, size_t *orig_len, char *norm,
                  size_t norm_cap, size_t *norm_len);

/* Samples [first, first + n) of record index's stored waveform (int16 at the mel's sample
 * rate; n_samples is in the record's header) into out[0..n). 8 (not found) when the record
 * stores none (--audio none, or version 1); 7 (range) for samples outside the waveform; 5
 * (corrupt) for a damaged record or section, also a FLAC section, which this library does not
 * decode (the caller decodes it from xtts_api_record's bytes); 6 (mismatch) as above. */
int xtts_api_waveform(xtts_api_cache *c, uint64_t index, int16_t *out, size_t first, size_t n);

/* The index of the record of utterance id (NUL-terminated UTF-8) in *index. 8 (not found) when
 * no shard holds it; 5 (corrupt) for an "ids" entry that is not an index of its shard; the
 * fault of a shard a tolerant open kept (other than a missing shard, which holds nothing). */
int xtts_api_find(xtts_api_cache *c, const char *id, uint64_t *index);

/* The value of key (NUL-terminated) in the "meta" database of shard shard (0 to the
 * manifest's shard count - 1), copied as described above. 8 (not found) when the key is
 * absent; 7 (range) for no such shard. */
int xtts_api_meta(xtts_api_cache *c, size_t shard, const char *key, void *out, size_t cap, size_t *len);

/* Record index's 32-byte content key (formats/cache.md, "Content keys"; what the audio codes
 * directories are keyed by) into out[0..32). 8 (not found) when its shard has no "keys"
 * database (a cache built before content keys); 5 (corrupt) when the record has no entry or
 * one shorter than 32 bytes. */
int xtts_api_content_key(xtts_api_cache *c, uint64_t index, uint8_t *out);

/* Every record's lengths in index order into out[n][7] (uint32): n_frames, n_tokens,
 * n_samples, speaker_id, lang_id, split, flags (bit 0: a waveform is stored). From the
 * shards' lengths index (format 2: one cursor pass a shard), else from every record's header
 * (no decompression). n must be the record count (else 7). 5 (corrupt) for an entry out of
 * order, out of range or malformed, or a count that differs from the shard's. */
int xtts_api_lengths(xtts_api_cache *c, uint32_t *out, size_t n);

/* How many shards (of those that opened) hold the optional database db: "quality" (the quality
 * metrics) or "keys" (content keys); 0 for another name or a NULL argument. */
size_t xtts_api_shards_with(const xtts_api_cache *c, const char *db);

/* ---- audio codes directories (formats/cache.md, "Audio codes") ---------------------------
 * One codes-<16 hex>/ directory of a cache, opened read-only (the checks of
 * cache/store/read/codes_read.h: meta pages, the header, the name its hashes give; LMDB under
 * the fault guard). The same rules of threads and processes as a cache handle. */
typedef struct xtts_api_codes xtts_api_codes;

/* Open the codes directory at path. NULL on failure; the last error says why (no data.mdb,
 * a damaged file, a header missing or out of form, another format). */
xtts_api_codes *xtts_api_codes_open(const char *path);
/* NULL is allowed. */
void xtts_api_codes_close(xtts_api_codes *h);

/* Its header: the SHA-256 (64 hex digits and a NUL) of the DVAE file and of the mel norms
 * file, the codebook size, and the mel norms (float32) into mel_norms[0..cap) with their count
 * in *n_mels (7 with *n_mels set when cap is too small; at most 256). */
int xtts_api_codes_header(xtts_api_codes *h, char *dvae_sha256, char *norms_sha256, uint32_t *num_tokens,
                          float *mel_norms, size_t cap, size_t *n_mels);

/* The codes stored under a record's content key (key[0..32)) into out[0..cap), their count in
 * *n (7 with *n set when cap is too small). 8 (not found) when there is no entry; 5 (corrupt)
 * for a value whose size, checksum or codes (each below num_tokens) fail, or damaged pages;
 * 3 when LMDB cannot begin a read transaction. */
int xtts_api_codes_get(xtts_api_codes *h, const uint8_t *key, uint16_t *out, size_t cap, size_t *n);

/* ---- the manifest ------------------------------------------------------------------------------ */

/* Check the manifest at path (dir/manifest.json) as xtts_api_open does (formats/cache.md
 * sections 4 and 5, and first the build lock of its directory), without opening the shards. Returns 0 or an xtts_status: 9 (busy) when a build
 * holds the directory's lock, 8 (not found) for no manifest (the message says what an unfinished
 * build holds), those of the manifest loader (2 input, 3 I/O, 5 corrupt, 6 mismatch, 7 range),
 * with the message naming the file and the key. */
int xtts_api_manifest_check(const char *path);

/* The configuration hash (formats/cache.md section 5: SHA-256 of the configuration's canonical
 * JSON) of the configuration object config_json[0..len) (a manifest's "config"), checked as the
 * manifest loader checks it, into out[0..65) (64 hex digits and a NUL). Returns 0 or an
 * xtts_status: 2 (input) for text that is not JSON, those of the configuration's checks. */
int xtts_api_config_hash(const char *config_json, size_t len, char *out);

/* ---- dataset items --------------------------------------------------------------------------
 * What a dataset item needs of records indices[0..n), in one call: each record is looked up
 * once, its header parsed once, each section it asks for decompressed once.
 *
 * bufs and caps: XTTS_API_ITEM_PARTS entries per row (row k at bufs + k * XTTS_API_ITEM_PARTS),
 * one per part below, a buffer and its room in elements; a NULL buffer skips the part.
 *   XTTS_API_PART_TOKENS  int32 [n_tokens]: the stored ids, unpadded
 *   XTTS_API_PART_MEL     [n_mels][n_frames] as mel_dtype (XTTS_API_MEL_*), unpadded
 *   XTTS_API_PART_WAVE    int16 [n_samples]: the stored waveform (8 when the record stores none;
 *                         5 for a FLAC section this library cannot decode, as xtts_api_waveform)
 *   XTTS_API_PART_KEY     uint8 [32]: the content key (as xtts_api_content_key)
 *   XTTS_API_PART_CODES   uint16 [n_codes]: the codes the codes handle stores under the content
 *                         key (as xtts_api_codes_get; 8 when there is none); needs codes
 * fields: XTTS_API_ITEM_FIELDS uint64 per row, the header (XTTS_API_F_*: pad_value as the bits of
 * its float32, frame_crc the header's word at byte 56: version 1 the zstd frame's CRC-32, version
 * 2 the section table's), the count of codes read, and up to XTTS_API_ITEM_MAX_SECTIONS section
 * table entries of 7 values from XTTS_API_F_SECTIONS on (kind, codec, flags, offset of the body
 * in the stored record, stored bytes, raw bytes, CRC-32); unused fields are 0.
 * ids: NULL, or id_cap (>= 1025) bytes per row: the record's id, NUL-terminated.
 * A row's ids are checked against the manifest's tables and its n_mels against the cache's, as
 * every read is. The rows are read in order; the first failure stops the call (rows after it
 * are unspecified) with its message naming the shard, the index and the id. A buffer too small
 * is 7 (range) with that row's fields (and n_codes) set, so the caller learns the sizes.
 * Returns 0 or an xtts_status: 1 (usage) for a NULL argument, a bad mel_dtype or id_cap, codes
 * asked without a codes handle, a handle of another process; 7 (range) for an index out of range
 * or a buffer too small; 8 (not found) as above; 5 (corrupt) for a damaged record, a missing
 * content key; those of reads. */
#define XTTS_API_PART_TOKENS 0
#define XTTS_API_PART_MEL 1
#define XTTS_API_PART_WAVE 2
#define XTTS_API_PART_KEY 3
#define XTTS_API_PART_CODES 4
#define XTTS_API_ITEM_PARTS 5

#define XTTS_API_F_VERSION 0
#define XTTS_API_F_DTYPE 1 /* of the stored mel: 0 float32, 1 float16 */
#define XTTS_API_F_FLAGS 2
#define XTTS_API_F_N_MELS 3
#define XTTS_API_F_SPLIT 4
#define XTTS_API_F_ID_LEN 5
#define XTTS_API_F_N_TOKENS 6
#define XTTS_API_F_TOKENS_PADDED 7
#define XTTS_API_F_N_FRAMES 8
#define XTTS_API_F_FRAMES_PADDED 9
#define XTTS_API_F_SPEAKER_ID 10
#define XTTS_API_F_LANG_ID 11
#define XTTS_API_F_N_SAMPLES 12
#define XTTS_API_F_PAD_VALUE 13 /* float32 bits */
#define XTTS_API_F_PAD_TOKEN 14
#define XTTS_API_F_TRIM_START 15
#define XTTS_API_F_AUDIO 16 /* 0 none, 1 int16, 2 flac */
#define XTTS_API_F_N_SECTIONS 17
#define XTTS_API_F_PAYLOAD_BYTES 18
#define XTTS_API_F_FRAME_BYTES 19
#define XTTS_API_F_FRAME_CRC 20
#define XTTS_API_F_N_CODES 21
#define XTTS_API_F_SECTIONS 22
#define XTTS_API_ITEM_MAX_SECTIONS 4
#define XTTS_API_ITEM_FIELDS 64

int xtts_api_read_items(xtts_api_cache *c, xtts_api_codes *codes, const uint64_t *indices, size_t n, int mel_dtype,
                        void *const *bufs, const size_t *caps, uint64_t *fields, char *ids, size_t id_cap);

#ifdef __cplusplus
}
#endif
#endif
