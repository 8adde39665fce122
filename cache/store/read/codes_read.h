/* codes_read.h — the read side of the audio codes directories (formats/cache.md, "Audio
 * codes"; the writer is cache/store/codes_store.h): their names, their header and the check
 * of a stored value, shared with the writer, and a read-only reader of one directory that
 * libxtts-reader.so serves (cache/store/read/reader_api.h).
 *
 * CACHE/codes-<16 hex>/ holds an LMDB environment of two databases: "meta" (the header: the
 * format, the SHA-256 of the DVAE file and of the mel norms file, the codebook size, the
 * norms themselves) and "codes", keyed by a record's 32-byte content key. A value is n (u32
 * LE), CRC-32 (u32 LE) of the key, n and the codes, then n codes as u16 LE.
 *
 * The reader opens the directory as the cache's readers open a shard: read-only, without a
 * lock file (MDB_NOLOCK: a directory on a read-only filesystem reads), mapping the file as
 * it is, its meta pages checked before liblmdb maps it, every LMDB call under the fault guard
 * (guard.h), so that a damaged data.mdb is XTTS_ECORRUPT, not a crash. */
#ifndef XTTS_CACHE_CODES_READ_H
#define XTTS_CACHE_CODES_READ_H

#include <lmdb.h>
#include <stddef.h>
#include <stdint.h>

#include "common/xtts_common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define XTTS_CODES_FORMAT "xtts-codes 1"
#define XTTS_CODES_DIR_PREFIX "codes-"
#define XTTS_CODES_KEY_BYTES 32
#define XTTS_CODES_NAME_MAX 32 /* "codes-" + 16 hex + NUL fits */
#define XTTS_CODES_MAX_TOKENS 65536
#define XTTS_CODES_MAX_MELS 256
#define XTTS_CODES_VALUE_HEAD 8 /* n and the CRC-32 before the codes */

/* What a codes directory was computed with. */
typedef struct {
    char dvae_sha256[65];  /* hex of the DVAE file's bytes */
    char norms_sha256[65]; /* hex of the mel norms file's bytes */
    uint32_t num_tokens;   /* codebook entries: every code is below it */
    uint32_t n_mels;       /* the mel norms' count (80) */
    float mel_norms[XTTS_CODES_MAX_MELS]; /* the norms the mels were divided by, for readers
                                             that compute conditioning mels (python/xtts_prep) */
} xtts_codes_header;

/* The directory's name: "codes-" and the first 16 hex digits of the SHA-256 of the two hex
 * digests written one after the other (dvae, then norms). */
void xtts_codes_dir_name(const char *dvae_sha256, const char *norms_sha256, char out[XTTS_CODES_NAME_MAX]);

/* 0 when the last component of path is the name h's hashes give, else XTTS_ECORRUPT
 * ("PATH: the header's hashes give the name codes-..."). */
xtts_status xtts_codes_name_check(const char *path, const xtts_codes_header *h, xtts_error *err);

/* 1 when name is a codes directory's ("codes-" and 16 lower-case hex digits), else 0. */
int xtts_codes_dir_name_valid(const char *name);

/* The CRC-32 a value stores: of the key, the count n_le (4 bytes LE) and the codes' bytes. */
uint32_t xtts_codes_entry_crc(const uint8_t *key, const uint8_t *n_le, const void *codes, size_t bytes);

/* The header of the directory at path from its "meta" database (meta) inside txn.
 * Errors: XTTS_ECORRUPT (a field missing or out of form), XTTS_EMISMATCH (another format). */
xtts_status xtts_codes_header_read(MDB_txn *txn, MDB_dbi meta, const char *path, xtts_codes_header *h,
                                   xtts_error *err);

/* Check a value val[0..len) found under key (its count, its CRC, every code below
 * num_tokens) and copy its codes into codes[0..cap), their count in *n.
 * Errors: XTTS_ECORRUPT, XTTS_ERANGE (more than cap codes: *n says how many). */
xtts_status xtts_codes_value_decode(const char *path, uint32_t num_tokens, const uint8_t *key, const void *val,
                                    size_t len, uint16_t *codes, size_t cap, size_t *n, xtts_error *err);

typedef struct xtts_codes_reader xtts_codes_reader;

/* Open the codes directory at path read-only and read its header (see the top of this file).
 * Call xtts_cache_guard_faults() first, as for the cache's readers.
 * Errors: XTTS_ENOTFOUND (no data.mdb), XTTS_ECORRUPT (not a regular file, damaged meta pages
 * or databases, a fault under the guard, a header missing or out of form, hashes that do not
 * give the directory's name), XTTS_EMISMATCH (another format), XTTS_EIO (LMDB cannot open the
 * environment or begin a transaction), XTTS_ENOMEM. */
xtts_status xtts_codes_reader_open(const char *path, xtts_codes_reader **out, xtts_error *err);

/* The reader's header (borrowed; valid until close). */
const xtts_codes_header *xtts_codes_reader_header(const xtts_codes_reader *r);

/* The codes stored under key into codes[0..cap), their count in *n.
 * Errors: XTTS_ENOTFOUND (no entry), XTTS_ECORRUPT (damaged pages or a fault under the guard,
 * and those of xtts_codes_value_decode), XTTS_ERANGE (more than cap codes), XTTS_EIO (no read
 * transaction). *n is set with XTTS_ERANGE too. */
xtts_status xtts_codes_reader_get(xtts_codes_reader *r, const uint8_t key[XTTS_CODES_KEY_BYTES], uint16_t *codes,
                                  size_t cap, size_t *n, xtts_error *err);

/* Every entry in key order, each key and value copied out of the map under the guard and
 * handed to cb outside it (cb may write elsewhere; its key has XTTS_CODES_KEY_BYTES, its value
 * is not checked). cb returns XTTS_OK to go on, anything else stops the walk and is returned.
 * Errors: XTTS_ECORRUPT (damaged pages or a fault under the guard, a key of another size),
 * XTTS_EIO (no read transaction), XTTS_ENOMEM, cb's. */
typedef xtts_status (*xtts_codes_foreach_fn)(void *ctx, const uint8_t *key, const void *val, size_t len,
                                             xtts_error *err);
xtts_status xtts_codes_reader_foreach(xtts_codes_reader *r, xtts_codes_foreach_fn cb, void *ctx, xtts_error *err);

/* The entries the directory holds (0 when its pages cannot be read). */
uint64_t xtts_codes_reader_count(xtts_codes_reader *r);

/* NULL is allowed. */
void xtts_codes_reader_close(xtts_codes_reader *r);

#ifdef __cplusplus
}
#endif
#endif
