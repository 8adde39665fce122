/* keys.h — records found by content key in a finished cache, to be carried into another
 * build instead of computed again (xtts-melcache --update and --reuse).
 *
 * Every record of a cache written by this version has an entry in its shard's "keys"
 * database (formats/cache.md, "Content keys"): the SHA-256 of everything the stored record
 * depends on, followed by the record's per-channel mel sums, so that a build that carries
 * the record over adds the same statistics a fresh build would. A source looks an id up in
 * the shards' "ids" databases (no table in memory) and compares the stored key with the
 * key the new build computed.
 */
#ifndef XTTS_CACHE_KEYS_H
#define XTTS_CACHE_KEYS_H

#include <stddef.h>
#include <stdint.h>

#include "cache/store/writer.h"
#include "common/xtts_common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define XTTS_CONTENT_KEY_BYTES 32
#define XTTS_KEYS_DB "keys"

/* The "keys" value of a record: the key, n_mels (u32 LE), then sum[n_mels] and
 * sumsq[n_mels] as float64 LE. xtts_keys_value_bytes(n_mels) bytes. */
size_t xtts_keys_value_bytes(int n_mels);
void xtts_keys_value_pack(const uint8_t key[XTTS_CONTENT_KEY_BYTES], int n_mels, const double *sum,
                          const double *sumsq, uint8_t *out);
/* Unpack into sum and sumsq (n_mels each). -1 when value is not a value of n_mels channels. */
int xtts_keys_value_unpack(const void *value, size_t len, int n_mels, double *sum, double *sumsq);

typedef struct xtts_cache_source xtts_cache_source;

/* Open the finished cache dir (its manifest.json) as a source of records for a build of
 * the configuration whose hash is config_hash. Every shard is opened read-only.
 * Errors: XTTS_ENOTFOUND (no manifest.json: not a finished cache), XTTS_EMISMATCH (another
 * configuration; the message names both hashes), XTTS_EUNSUPPORTED (a shard without a
 * "keys" database: built by an earlier version), those of xtts_manifest_info_init,
 * XTTS_EIO/XTTS_ECORRUPT (a shard that does not open), XTTS_ENOMEM. */
xtts_status xtts_cache_source_open(const char *dir, const char *config_hash, xtts_cache_source **out,
                                   xtts_error *err);
/* Records the source holds. */
uint64_t xtts_cache_source_records(const xtts_cache_source *s);
/* Its shard directories (each once, however many manifest entries list it): name ("shard-
 * NNNNN" or "base-NNNNN"), path, and the sum of the value sizes of every record the
 * directory holds, those no entry lists included. */
size_t xtts_cache_source_dirs(const xtts_cache_source *s);
const char *xtts_cache_source_dir_name(const xtts_cache_source *s, size_t d);
const char *xtts_cache_source_dir_path(const xtts_cache_source *s, size_t d);
uint64_t xtts_cache_source_dir_bytes(const xtts_cache_source *s, size_t d);

/* What a lookup found. Pointers are the source's, valid until it is closed. */
typedef struct {
    int found;                 /* the id is stored */
    int same;                  /* and its content key equals the one asked for */
    const void *record;        /* with same: the stored record */
    size_t len;
    const void *keys_value;    /* with same: its "keys" value */
    size_t keys_len;
    xtts_cache_entry entries[XTTS_SHARD_MAX_DBS]; /* with same: its entry in every database
                                                     of its own ("keys" among them) */
    size_t n_entries;
    const void *lengths;       /* with same, from a view asked for them: its "lengths" entry, or NULL */
    size_t lengths_len;
    size_t dir;                /* with found: the shard directory holding it (< xtts_cache_source_dirs) */
    uint64_t local;            /* and its local key there */
} xtts_cache_source_hit;

/* Look id up. Errors: XTTS_ECORRUPT (an "ids" value that is not a local index, a record or
 * key missing), XTTS_EIO (LMDB), naming the shard. */
xtts_status xtts_cache_source_find(xtts_cache_source *s, const char *id, const uint8_t key[XTTS_CONTENT_KEY_BYTES],
                                   xtts_cache_source_hit *hit, xtts_error *err);

/* A view of the source for another thread: its own read transactions (opened when first
 * used, on the thread that uses the view; the source stays open longer than its views), and
 * lookups by place, where an earlier find saw a record. A run of consecutive local keys is
 * read by stepping cursors, not by searching for each. */
typedef struct xtts_cache_source_view xtts_cache_source_view;
xtts_status xtts_cache_source_view_open(const xtts_cache_source *s, xtts_cache_source_view **out, xtts_error *err);
/* What a view's lookup reads besides the content key: the record (its place and size; its
 * bytes are not touched until the caller reads them), its "lengths" entry where the shard has
 * one (a record's figures from a dense database instead of its header). */
enum { XTTS_SOURCE_RECORD = 1, XTTS_SOURCE_LENGTHS = 2 };
/* The record at directory dir, local key local, without its entries: found is set, and same
 * (with keys_value, and what `with` asks for) when its content key is key. Errors: as
 * _find's. */
xtts_status xtts_cache_source_view_get(xtts_cache_source_view *v, size_t dir, uint64_t local,
                                       const uint8_t key[XTTS_CONTENT_KEY_BYTES], int with,
                                       xtts_cache_source_hit *hit, xtts_error *err);
/* xtts_cache_source_find through the view, with at most one entry: the record's in database
 * entry_db (none when NULL, or when the record has none there), and its "lengths" entry where
 * the shard has one. */
xtts_status xtts_cache_source_view_find(xtts_cache_source_view *v, const char *id,
                                        const uint8_t key[XTTS_CONTENT_KEY_BYTES], const char *entry_db,
                                        xtts_cache_source_hit *hit, xtts_error *err);
/* NULL is allowed. */
void xtts_cache_source_view_close(xtts_cache_source_view *v);

/* NULL is allowed. */
void xtts_cache_source_close(xtts_cache_source *s);

#ifdef __cplusplus
}
#endif
#endif
