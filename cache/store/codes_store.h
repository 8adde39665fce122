/* codes_store.h — the XTTS DVAE's audio codes of a cache's records, stored beside the cache
 * in a directory of their own, one per DVAE and mel norms (formats/cache.md, "Audio codes").
 *
 * Names, the header and the value check are the read side's (cache/store/read/codes_read.h,
 * which also reads a directory for libxtts-reader.so).
 *
 * CACHE/codes-<16 hex>/ holds an LMDB environment of two databases: "meta" (the header: the
 * format, the SHA-256 of the DVAE file and of the mel norms file, the codebook size, the
 * norms themselves) and
 * "codes", keyed by a record's content key (the 32 bytes of its "keys" entry,
 * cache/store/keys.h), so that the codes follow the record's content and not its index: a
 * record an update carries keeps them, a changed record is computed again. A value is
 * n (u32 LE), CRC-32 (u32 LE) of the key, n and the codes, then n codes as u16 LE.
 * The directory is never one of the cache's shards: an update that shares shards with an
 * older cache never writes into it. A writer holds the directory's "writer.lock" (flock).
 */
#ifndef XTTS_CACHE_CODES_STORE_H
#define XTTS_CACHE_CODES_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "cache/store/read/codes_read.h"
#include "common/xtts_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The codes of a clip of n_samples samples at 22,050 Hz: one per 4 frames of the `xtts` mel
 * (hop 256, centered), xtts_dvae_codes_len(n_samples / 256 + 1); 0 for an empty clip. */
size_t xtts_codes_expected(uint32_t n_samples);

typedef struct xtts_codes_store xtts_codes_store;

/* Open (creating when missing) the codes directory of hdr in cache_dir, for writing: takes
 * its lock, writes the header of a new directory and checks an existing one's.
 * Errors: XTTS_EBUSY (another process writes it), XTTS_EIO (directory, lock or LMDB),
 * XTTS_EMISMATCH (a header that differs from hdr), XTTS_ECORRUPT (a header that does not
 * parse), XTTS_ENOMEM. */
xtts_status xtts_codes_store_create(const char *cache_dir, const xtts_codes_header *hdr, xtts_codes_store **out,
                                    xtts_error *err);

/* Open the codes directory at path read-only and read its header.
 * Errors: XTTS_ENOTFOUND (no data.mdb), XTTS_EIO (LMDB), XTTS_ECORRUPT (a header missing or
 * that does not parse, or whose hashes do not give the directory's name), XTTS_ENOMEM. */
xtts_status xtts_codes_store_open(const char *path, xtts_codes_store **out, xtts_error *err);

/* The store's header and directory path (borrowed). */
const xtts_codes_header *xtts_codes_store_header(const xtts_codes_store *s);
const char *xtts_codes_store_path(const xtts_codes_store *s);

/* The codes stored under key into codes[0..cap), their count in *n.
 * Errors: XTTS_ENOTFOUND (no entry), XTTS_ECORRUPT (a value of the wrong size, a checksum
 * that fails, a code not below num_tokens), XTTS_ERANGE (more than cap codes), XTTS_EIO. */
xtts_status xtts_codes_store_get(xtts_codes_store *s, const uint8_t key[XTTS_CODES_KEY_BYTES], uint16_t *codes,
                                 size_t cap, size_t *n, xtts_error *err);

/* Stage codes[0..n) under key (a store from _create); written at the next commit.
 * Errors: XTTS_EUSAGE (a read-only store, n 0 or over 2^31), XTTS_EIO (LMDB; a full map is
 * grown), XTTS_ENOMEM. */
xtts_status xtts_codes_store_put(xtts_codes_store *s, const uint8_t key[XTTS_CODES_KEY_BYTES], const uint16_t *codes,
                                 size_t n, xtts_error *err);

/* Commit what was put (durable when it returns). Errors: XTTS_EIO. */
xtts_status xtts_codes_store_commit(xtts_codes_store *s, xtts_error *err);

/* Entries stored (as of the last commit). */
uint64_t xtts_codes_store_count(xtts_codes_store *s);

/* Remove, and commit, the entries whose keys are not among keys[0..n_keys) (content keys,
 * XTTS_CODES_KEY_BYTES each, sorted by memcmp, each once): those of records the cache no
 * longer holds. *removed counts them. Commits what was put first. Reads under the fault guard.
 * Errors: XTTS_EUSAGE (a read-only store), XTTS_ECORRUPT (damaged pages), XTTS_EIO. */
xtts_status xtts_codes_store_prune(xtts_codes_store *s, const uint8_t *keys, size_t n_keys, uint64_t *removed,
                                   xtts_error *err);

/* Close; staged entries not committed are dropped. NULL is allowed. */
void xtts_codes_store_close(xtts_codes_store *s);

/* Remove the codes directory at path (its LMDB files, its lock, itself); missing is fine.
 * Errors: XTTS_EIO naming the file that could not be removed. */
xtts_status xtts_codes_dir_remove(const char *path, xtts_error *err);

/* Copy every codes directory of from_dir into to_dir (an update's new cache, finished, before
 * it takes the old one's place), replacing a copy an earlier try left: the entries of the
 * records to_dir holds (by content key), each checked, read under the fault guard (call
 * xtts_cache_guard_faults() first); entries of records the update dropped and damaged ones
 * stay behind (xtts-cache-codes computes a damaged one again).
 * Errors: XTTS_EIO, XTTS_ENOMEM, those of opening to_dir as a cache, of
 * xtts_codes_reader_open (XTTS_ECORRUPT for a damaged file) and of xtts_codes_store_create. */
xtts_status xtts_codes_dirs_copy(const char *from_dir, const char *to_dir, xtts_error *err);

/* The codes directories of cache_dir (names matching "codes-" and 16 hex digits), sorted, in
 * a malloc'd array of malloc'd names (*n of them; free with xtts_codes_dirs_free).
 * Errors: XTTS_EIO (cannot list the directory), XTTS_ENOMEM. */
xtts_status xtts_codes_dirs(const char *cache_dir, char ***names, size_t *n, xtts_error *err);
void xtts_codes_dirs_free(char **names, size_t n);

#ifdef __cplusplus
}
#endif
#endif
