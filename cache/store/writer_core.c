/* writer_core.c — what every step of the cache writer uses (writer_core.h): shard paths and
 * environments, the list of shards, the pending records and state blobs freed.
 */
#include "cache/store/writer_core.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

void xtts_writer_shard_path(const xtts_cache_writer *w, int number, char *out, size_t cap) {
    char name[32];
    xtts_shard_name(name, w->part, number);
    xtts_path_join(out, cap, w->dir, name);
}

void xtts_writer_blobs_free(state_blob *b, size_t n) {
    for (size_t i = 0; i < n; i++) { free(b[i].key); free(b[i].data); }
    free(b);
}

void xtts_writer_pending_clear(xtts_cache_writer *w) {
    for (size_t i = 0; i < w->n_pend; i++) {
        free(w->pend[i].id); free(w->pend[i].data); free(w->pend[i].source); free(w->pend[i].entries);
    }
    w->n_pend = 0;
    w->pend_bytes = 0;
    w->ops_pending = 0;
    json_array_clear(w->rejects_pending);
    xtts_writer_blobs_free(w->state_pending, w->n_state_pending);
    w->state_pending = NULL;
    w->n_state_pending = 0;
}

void xtts_writer_free(xtts_cache_writer *w) {
    if (!w) return;
    if (w->env) mdb_env_close(w->env);
    xtts_writer_pending_clear(w);
    xtts_writer_blobs_free(w->state_after, w->n_state_after);
    free(w->pend);
    json_decref(w->rejects);
    json_decref(w->shard_rejects);
    json_decref(w->rejects_pending);
    xtts_writer_blobs_free(w->state, w->n_state);
    free(w->shards);
    xtts_id_filter_free(&w->ids);
    xtts_unlock(w->part_lock_fd);
    xtts_unlock(w->lock_fd);
    free(w->dir);
    free(w);
}

xtts_status xtts_writer_env_open(xtts_cache_writer *w, int number, int create, MDB_env **out, xtts_error *err) {
    char path[4096];
    xtts_writer_shard_path(w, number, path, sizeof path);
    *out = NULL;
    if (create && mkdir(path, 0755) != 0 && errno != EEXIST)
        return xtts_error_set(err, XTTS_EIO, "%s: cannot create shard directory: %s", path, strerror(errno));
    xtts_status fst = xtts_lmdb_file_check(path, err); /* a cut data.mdb would be SIGBUS inside liblmdb */
    if (fst) return fst;
    int rc = xtts_lmdb_env_open(out, path, XTTS_LMDB_SHARD_WRITE, w->map_bytes0);
    if (rc) return xtts_error_set(err, xtts_mdb_status(rc), "%s: cannot open shard: %s", path, mdb_strerror(rc));
    return XTTS_OK;
}

xtts_status xtts_writer_shards_push(xtts_cache_writer *w, int number, uint64_t records, uint64_t bytes,
                                    xtts_error *err) {
    if (w->n_shards == w->cap_shards) {
        size_t nc = w->cap_shards ? 2 * w->cap_shards : 8;
        shard_info *p = realloc(w->shards, nc * sizeof *p);
        if (!p) return xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", w->dir);
        w->shards = p;
        w->cap_shards = nc;
    }
    w->shards[w->n_shards++] = (shard_info){number, records, bytes};
    return XTTS_OK;
}

int xtts_cache_db_reserved(const char *name) {
    return !strcmp(name, "records") || !strcmp(name, "ids") || !strcmp(name, "meta") || !strcmp(name, "lengths");
}
