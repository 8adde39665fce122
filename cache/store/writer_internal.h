/* writer_internal.h — what the cache writer (cache/store/writer*.c) and the store's other
 * files share: the listing of a cache directory's entries, the flock() locks, and small
 * LMDB helpers.
 * Not a public interface.
 */
#ifndef XTTS_CACHE_WRITER_INTERNAL_H
#define XTTS_CACHE_WRITER_INTERNAL_H

#include <lmdb.h>
#include <stddef.h>
#include <stdint.h>

#include "cache/store/read/lmdb_env.h"
#include "cache/store/read/lmdb_file.h"
#include "cache/store/read/names.h"
#include "common/xtts_common.h"

#define XTTS_UPDATE_MARK ".xtts-update" /* an update being built in this directory (cache/store/update_dir.h) */
#define XTTS_MAX_PARTS 99999
#define XTTS_MAX_SHARDS 99999
#define XTTS_LMDB_MAX_KEY 511 /* mdb_env_get_maxkeysize() of a default LMDB build */

/* One shard directory found on disk: part -1 for shard-NNNNN, K for shard-KKKKK-NNNNN. */
typedef struct {
    int part;
    int number;
} xtts_dir_shard;

typedef struct {
    xtts_dir_shard *shards; /* sorted by (part, number) */
    size_t n_shards;
    int has_manifest;       /* manifest.json */
    int *parts;             /* K of every manifest.part-KKKKK.json, sorted */
    size_t n_parts;
    size_t n_base;          /* base-NNNNN directories (shards an update shares with the
                               cache it replaced, cache/store/share.h) */
} xtts_dir_listing;

xtts_status xtts_dir_list(const char *dir, xtts_dir_listing *out, xtts_error *err);
/* Remove dir's base-NNNNN directories (links of another cache's shards: removing them
 * leaves that cache's files as they are). Errors: XTTS_EIO, XTTS_EINPUT (one holds a file
 * that is not LMDB's). */
xtts_status xtts_remove_base_dirs(const char *dir, xtts_error *err);
/* NULL is allowed. */
void xtts_dir_listing_free(xtts_dir_listing *l);

/* Before a build writes into dir: it is missing, empty (but for a build's lock and temporary
 * files) or a cache (it holds shards, partial manifests or a manifest.json naming a
 * config_hash, damaged or not; other files beside them are the user's and left alone). Otherwise, and
 * whenever it holds a manifest.json that is not a cache's, XTTS_EINPUT naming dir and an
 * entry, so that a build never writes into (or --force removes from) a folder of the user's.
 * Errors: XTTS_EINPUT (as said, or dir is not a directory), XTTS_EIO (cannot be listed). */
xtts_status xtts_dir_check_cache_or_empty(const char *dir, xtts_error *err);

/* "shard-NNNNN" (part < 0) or "shard-KKKKK-NNNNN". */
void xtts_shard_name(char out[32], int part, int number);
/* 1 when n is a shard directory's name ("shard-NNNNN": *part = -1, or "shard-KKKKK-NNNNN"),
 * else 0: other names in a cache directory are not the cache's. */
int xtts_shard_name_parse(const char *n, int *part, int *number);
/* "base-NNNNN" (the base of a shared update, cache/store/share.h): 1 with its number. */
int xtts_base_name_parse(const char *name, int *number);
/* "manifest.json" (part < 0) or "manifest.part-KKKKK.json". */
void xtts_manifest_name(char out[40], int part);

/* Take a flock() lock on dir/name: exclusive (the holder's pid is written into the
 * file, for the message another process gets) or shared. XTTS_EBUSY when held. *fd is
 * the open descriptor to pass to xtts_unlock. */
xtts_status xtts_lock(const char *dir, const char *name, int exclusive, int *fd, const char *what, xtts_error *err);
void xtts_unlock(int fd);

/* Remove dir/<manifest>.tmp.* left by a process killed while writing that manifest
 * (part < 0: manifest.json, else the part's manifest). Call only while holding the lock
 * that makes this process the manifest's one writer. Best effort. */
void xtts_remove_manifest_temps(const char *dir, int part);

/* A shard directory holds LMDB's data.mdb and lock.mdb alone (missing is fine).
 * Errors: XTTS_EINPUT when it holds anything else or is a file (not the cache's), naming
 * it; XTTS_EIO (cannot be listed). */
xtts_status xtts_shard_dir_check(const char *path, xtts_error *err);
/* Remove a shard directory: LMDB's data.mdb and lock.mdb, then the directory. Missing is
 * fine. Errors: those of xtts_shard_dir_check, nothing removed; XTTS_EIO, XTTS_ERANGE. */
xtts_status xtts_remove_shard_dir(const char *path, xtts_error *err);
/* unlink() that accepts a missing file. */
xtts_status xtts_remove_file(const char *path, xtts_error *err);

/* Open an existing shard read-only (MDB_RDONLY | MDB_NOLOCK) and count its "records"
 * entries. */
xtts_status xtts_shard_count_records(const char *path, uint64_t *records, xtts_error *err);

/* Map an LMDB or errno return code to a status: ENOSPC, EFBIG, EIO and MDB errors about
 * files are XTTS_EIO; MDB_CORRUPTED, MDB_INVALID, MDB_PAGE_NOTFOUND XTTS_ECORRUPT;
 * ENOMEM XTTS_ENOMEM; MDB_VERSION_MISMATCH XTTS_EMISMATCH. */
xtts_status xtts_mdb_status(int rc);

/* The "ids" databases of several shards read together in key order (cache/store/id_merge.c):
 * LMDB keeps each sorted, so one cursor per shard finds an id stored twice with memory
 * independent of the number of records. Among equal ids the lower source (index into
 * paths) comes first. Each shard is opened read-only, without locks or read-ahead.
 * Errors of open: XTTS_ENOMEM, XTTS_ECORRUPT, XTTS_EIO (a shard that does not open, or has
 * no "ids"), naming the shard. */
typedef struct xtts_id_merge xtts_id_merge;
xtts_status xtts_id_merge_open(const char *const *paths, size_t n, xtts_id_merge **out, xtts_error *err);
/* As xtts_id_merge_open, but source i gives only the ids of its local indices lo[i] ..
 * lo[i]+count[i]-1 (a range of a shared shard directory, formats/cache.md "Shared shards"),
 * each with its local index minus lo[i]; lo and count NULL: every id. */
xtts_status xtts_id_merge_open_ranges(const char *const *paths, const uint64_t *lo, const uint64_t *count, size_t n,
                                      xtts_id_merge **out, xtts_error *err);
/* The next id: *got = 1 with *id and *len (borrowed until the next call), *source and *local
 * (the stored local index, UINT64_MAX when the value is not 8 bytes); *got = 0 after the
 * last. Errors: XTTS_ECORRUPT, XTTS_EIO (a database that cannot be read, naming the shard). */
xtts_status xtts_id_merge_next(xtts_id_merge *m, int *got, const void **id, size_t *len, size_t *source,
                               uint64_t *local, xtts_error *err);
/* NULL is allowed. */
void xtts_id_merge_close(xtts_id_merge *m);

#endif
