/* cache_internal.h — what the opened cache (cache.c: its manifest, its shards and the pool of
 * their LMDB environments) and its readers (reader.c: records, batches, per-record values)
 * share. Private to cache/store/read/. */
#ifndef XTTS_CACHE_INTERNAL_H
#define XTTS_CACHE_INTERNAL_H

#include <errno.h>
#include <lmdb.h>
#include <pthread.h>
#include <sys/types.h>

#include "cache/store/read/reader.h"

/* One entry of the manifest's shard list. */
typedef struct {
    char *name, *path;
    uint64_t first, manifest_first, records, bytes, entries;
    uint64_t local_first; /* the directory's local key of the entry's first record */
    int ranged;           /* a range of a shared directory (manifest format_version 3): the
                             directory may hold keys outside it, which are not the entry's */
    size_t home;          /* the first entry of the same directory: it alone holds the
                             environment (one per directory), its databases and its map */
    uint64_t dir_entries; /* home: the directory's "records" entries */
    MDB_env *env;
    MDB_dbi records_dbi, ids_dbi, meta_dbi;
    MDB_dbi lengths_dbi; /* format 2: the "lengths" database */
    uint64_t lengths_entries;
    MDB_dbi quality_dbi; /* the "quality" database, when has_quality */
    int has_quality;
    MDB_dbi keys_dbi; /* the "keys" database (content keys), when has_keys */
    int has_keys;
    const char *map;     /* start of the memory map */
    uint64_t file_bytes; /* size of data.mdb at open */
    xtts_status status;
    char error[XTTS_ERRMSG_MAX];
    int sys_errno; /* the errno of a failed open of the files (a resource limit, not damage) */
    int pins;      /* readers holding a read transaction on env (the pool closes only idle ones) */
    uint64_t used; /* pool clock at the last pin */
} shard_t;

struct xtts_cache {
    char *dir;
    xtts_manifest_info manifest;
    xtts_cache_config cfg;
    char hash[65];
    size_t n_shards;
    shard_t *shards;
    uint64_t count;
    size_t max_frames;
    /* The pool of open environments: an environment holds a descriptor (data.mdb) and a
     * map, so at most pool_cap stay open; the least recently used idle one is closed to
     * open another, and reopened when read again. */
    pthread_mutex_t pool_mu;
    size_t pool_cap, pool_open;
    uint64_t pool_clock;
    /* the directory as opened: a shard (re)opened after an update or a rebuild exchanged it
     * would be the new cache's under the old manifest, so each opening checks it first */
    dev_t dir_dev;
    ino_t dir_ino;
    int dir_known;
};

/* Failures of the system rather than of the files: a descriptor or memory limit, a
 * permission. They stop a read with the errno's words and never call a shard damaged. */
static inline xtts_status xtts_resource_status(int e) { return e == ENOMEM ? XTTS_ENOMEM : XTTS_EIO; }

/* Hold shard si's environment open for a read transaction, reopening it when the pool
 * closed it. A resource limit met while reopening is returned and not kept as the shard's
 * fault (a later read tries again). Errors: the shard's fault, or XTTS_ENOMEM / XTTS_EIO
 * (a resource limit), XTTS_EBUSY (the directory was exchanged meanwhile). */
xtts_status xtts_shard_pin(xtts_cache *c, size_t si, xtts_error *err);

/* Let go of what xtts_shard_pin held (the pool may close the environment once idle). */
void xtts_shard_unpin(xtts_cache *c, size_t si);

/* "SHARD: index N, id 'ID': " before inner's message, into err (inner's code): how the reader
 * (reader.c) and the item reads (item.c) name a record's fault. */
xtts_status xtts_cache_record_error(const char *shard, uint64_t index, const char *id, const xtts_error *inner,
                                    xtts_error *err);

/* The ids a record carries index the manifest's tables: each must lie inside its table when
 * the manifest has one (an empty table holds none; without "languages", the built-in 17).
 * XTTS_OK, or XTTS_ECORRUPT with the bare reason in e. */
xtts_status xtts_cache_check_table_ids(const xtts_cache *c, const xtts_record_header *h, xtts_error *e);

#endif
