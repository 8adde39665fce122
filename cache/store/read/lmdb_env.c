/* lmdb_env.c — every LMDB environment of the store opened by one function, its flags for
 * each role in one table (lmdb_env.h).
 *
 * MDB_RDONLY | MDB_NOLOCK: a reader writes no lock file (a cache on a read-only filesystem
 * reads fine) and takes no slot in a lock table (any number of threads and processes); the
 * writer must not run on the same directory meanwhile, which its own lock file sees to
 * (writer_dir.c). MDB_NOTLS: a read transaction is not tied to the thread that began it (the
 * reader's pool hands transactions between threads). MDB_NORDAHEAD: records are read at
 * random, so the kernel's read-ahead only fills the page cache with pages nobody asks for;
 * a source shard of an update is the exception, walked in key order over pages a commit
 * wrote side by side (from a cold page cache, 100,000 records: 39,000 page reads and 2.7 s
 * without read-ahead, 330 and 1.7-2.0 s with). An update copying codes takes the codes
 * directory's lock when it can (a run still computing them commits whole transactions), and
 * goes without it where the directory is read-only.
 */
#include "cache/store/read/lmdb_env.h"

#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache/store/read/guard.h"
#include "cache/store/read/names.h"
#include "common/xtts_common.h"

enum { MAP_GIVEN, MAP_FILE };

static const struct {
    unsigned flags;      /* mdb_env_open's */
    unsigned max_dbs;    /* named databases it may open */
    int map;             /* MAP_GIVEN: the caller's size; MAP_FILE: the data file's */
    mdb_mode_t mode;     /* of the files it creates */
    int guarded;         /* LMDB's assertions leave the fault guard's block (guard.h) */
    unsigned retry_flag; /* added for a second try when the first is refused (EACCES, EROFS) */
} roles[] = {
    [XTTS_LMDB_SHARD_WRITE] = {0, XTTS_SHARD_MAX_DBS, MAP_GIVEN, 0644, 0, 0},
    [XTTS_LMDB_SHARD_READ] = {MDB_RDONLY | MDB_NOLOCK | MDB_NORDAHEAD | MDB_NOTLS, XTTS_SHARD_MAX_DBS, MAP_FILE,
                              0444, 1, 0},
    [XTTS_LMDB_SHARD_SCAN] = {MDB_RDONLY | MDB_NOLOCK, XTTS_SHARD_MAX_DBS, MAP_FILE, 0444, 1, 0},
    [XTTS_LMDB_CODES_WRITE] = {MDB_NOTLS | MDB_NORDAHEAD, 4, MAP_GIVEN, 0644, 0, 0},
    [XTTS_LMDB_CODES_READ] = {MDB_RDONLY | MDB_NOLOCK | MDB_NORDAHEAD | MDB_NOTLS, 4, MAP_FILE, 0444, 1, 0},
    [XTTS_LMDB_CODES_COPY] = {MDB_RDONLY | MDB_NOTLS | MDB_NORDAHEAD, 4, MAP_FILE, 0644, 1, MDB_NOLOCK},
};

/* the data file's size rounded up to whole pages, at least one page (0: no data file) */
static uint64_t file_map_bytes(const char *dir, uint64_t file_bytes) {
    if (!file_bytes) {
        char data[4200];
        struct stat sb;
        xtts_path_join(data, sizeof data, dir, "data.mdb");
        if (stat(data, &sb) != 0) return 0; /* mdb_env_open names what is missing */
        file_bytes = (uint64_t)sb.st_size;
    }
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    uint64_t map_bytes = (file_bytes + page - 1) / page * page;
    return map_bytes < page ? page : map_bytes;
}

int xtts_lmdb_env_open(MDB_env **env, const char *dir, xtts_lmdb_role role, uint64_t map_bytes) {
    *env = NULL;
    MDB_env *e;
    int rc = mdb_env_create(&e);
    if (rc) return rc;
    *env = e;
    mdb_env_set_maxdbs(e, roles[role].max_dbs);
    if (roles[role].guarded) mdb_env_set_assert(e, xtts_guard_lmdb_assert);
    uint64_t map = roles[role].map == MAP_FILE ? file_map_bytes(dir, map_bytes) : map_bytes;
    if (map) rc = mdb_env_set_mapsize(e, (size_t)map);
    if (!rc) rc = mdb_env_open(e, dir, roles[role].flags, roles[role].mode);
    if (rc && roles[role].retry_flag && (rc == EACCES || rc == EROFS))
        rc = mdb_env_open(e, dir, roles[role].flags | roles[role].retry_flag, roles[role].mode);
    if (rc) {
        mdb_env_close(e);
        *env = NULL;
    }
    return rc;
}
