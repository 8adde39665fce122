/* lmdb_env.h — the one way into LMDB: every environment of the store (a shard, an audio
 * codes directory) is made and opened by xtts_lmdb_env_open, with the flags, database count,
 * map size and file mode its role gives in one table (lmdb_env.c). The store's read side
 * and its writers both call it, so it lives in the lowest room of cache/. */
#ifndef XTTS_LMDB_ENV_H
#define XTTS_LMDB_ENV_H

#include <lmdb.h>
#include <stdint.h>

/* Who opens the environment, and so how (the table in lmdb_env.c says why each differs). */
typedef enum {
    XTTS_LMDB_SHARD_WRITE, /* the cache writer's shard: read-write, locked, the map it asks */
    XTTS_LMDB_SHARD_READ,  /* a shard of a cache read: the reader (verify, inspect, train, the
                              Python package), and the store's short reads of a shard (its
                              record count, the bytes of a range, a batch of ids) */
    XTTS_LMDB_SHARD_SCAN,  /* a source shard of --update or --reuse, walked in key order */
    XTTS_LMDB_CODES_WRITE, /* an audio codes directory being computed (xtts-cache-codes) */
    XTTS_LMDB_CODES_READ,  /* an audio codes directory read (verify, the Python package) */
    XTTS_LMDB_CODES_COPY   /* another cache's codes directory that an update copies from */
} xtts_lmdb_role;

/* Make an environment and open the directory dir as role says. map_bytes: the map's size for
 * the write roles; for the read roles the size of dir's data.mdb when the caller has it, or 0
 * to have it measured (the map is the file rounded up to pages: a reader needs no room to
 * grow). *env is set as soon as the environment exists, before mdb_env_open maps the file,
 * so that a caller whose fault guard (guard.h) jumps out of the open still holds it to close;
 * on a failure returned it is closed and *env is NULL. The read roles set LMDB's assertion
 * hook to the guard's (xtts_guard_lmdb_assert), which leaves a guarded block instead of
 * aborting. Returns 0 or the code of mdb_env_create / mdb_env_open (errno values positive,
 * liblmdb's own negative); mdb_strerror names it. */
int xtts_lmdb_env_open(MDB_env **env, const char *dir, xtts_lmdb_role role, uint64_t map_bytes);

#endif
