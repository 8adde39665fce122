/* writer_core.h — what the files of the cache writer share: its state (the struct behind
 * xtts_cache_writer) and the helpers every step of it uses. writer.c is the spine (open,
 * finish, abort), writer_resume.c takes the directory (lock, resume or replace),
 * writer_commit.c takes records and commits them, writer_core.c holds what all three use.
 * Private to cache/store/. */
#ifndef XTTS_CACHE_WRITER_CORE_H
#define XTTS_CACHE_WRITER_CORE_H

#include <jansson.h>
#include <lmdb.h>

#include "cache/store/writer.h"
#include "cache/store/writer_internal.h"
#include "formats/record.h"

typedef struct {
    uint64_t input;
    char *id;
    uint8_t *data;
    size_t len;
    char *source; /* audio path, stored as meta "audio:<id>" in the record's shard; may be NULL */
    uint8_t lengths[XTTS_LENGTHS_BYTES]; /* its "lengths" entry (format 2) */
    uint8_t *entries;   /* its entries in other databases, packed (entries_pack) */
    size_t entries_len;
} pending_record;

typedef struct {
    char *key;
    uint8_t *data;
    size_t len;
} state_blob;

typedef struct {
    int number;
    uint64_t records; /* committed */
    uint64_t bytes;   /* committed record value bytes */
} shard_info;


struct xtts_cache_writer {
    char *dir;
    int part, n_parts;
    uint64_t part_first, part_end;
    uint64_t shard_bytes, map_bytes0;
    uint32_t commit_every;
    xtts_cache_config cfg;
    char hash[65];
    int lock_fd, part_lock_fd;

    shard_info *shards; /* every shard of this build (or part), in order */
    size_t n_shards, cap_shards;
    MDB_env *env;       /* the last shard's environment (NULL before the first shard) */
    int last_committed; /* the last shard has seen a commit */

    uint64_t next_input;         /* committed */
    uint64_t next_input_pending; /* including pending puts and rejects */
    json_t *rejects;             /* committed, all shards */
    json_t *shard_rejects;       /* committed into the last shard */
    json_t *rejects_pending;
    state_blob *state;           /* committed */
    size_t n_state;
    state_blob *state_pending;   /* adopted by a put or reject since the last commit */
    size_t n_state_pending;
    state_blob *state_after;     /* set since the last put or reject */
    size_t n_state_after;

    pending_record *pend;
    size_t n_pend, cap_pend;
    uint64_t pend_bytes;
    uint32_t ops_pending; /* puts and rejects since the last commit */

    xtts_id_filter ids; /* every stored or pending id: a "maybe" is confirmed in the shards */
    xtts_status failed; /* set by a failed commit: the writer only aborts from here */
    char failed_msg[XTTS_ERRMSG_MAX];
};

/* The path of shard number of this build (or part) in out. */
void xtts_writer_shard_path(const xtts_cache_writer *w, int number, char *out, size_t cap);

/* Free a list of n state blobs (NULL is allowed). */
void xtts_writer_blobs_free(state_blob *b, size_t n);

/* Drop everything pending since the last commit (records, rejects, adopted state). */
void xtts_writer_pending_clear(xtts_cache_writer *w);

/* Free the writer and all it holds: its environment, locks and lists. NULL is allowed. */
void xtts_writer_free(xtts_cache_writer *w);

/* Open shard number's environment (making its directory when create), the data file checked
 * first (cache/store/read/lmdb_file.h). Errors: XTTS_EIO, XTTS_ECORRUPT, and LMDB's as
 * xtts_mdb_status gives them. */
xtts_status xtts_writer_env_open(xtts_cache_writer *w, int number, int create, MDB_env **out, xtts_error *err);

/* Append shard number (with what it holds committed) to the writer's list. Errors: XTTS_ENOMEM. */
xtts_status xtts_writer_shards_push(xtts_cache_writer *w, int number, uint64_t records, uint64_t bytes,
                                    xtts_error *err);

/* Take the directory's locks (a new directory is made under a temporary name, locked there
 * and renamed into place). Errors: those of xtts_lock, XTTS_EIO. */
xtts_status xtts_writer_lock(xtts_cache_writer *w, xtts_error *err);

/* What the locked directory holds decides: resume the build, start empty, replace it (with
 * --force) or refuse, saying why. Errors: XTTS_EMISMATCH, XTTS_ECORRUPT, XTTS_EIO, XTTS_ENOMEM. */
xtts_status xtts_writer_take_dir(xtts_cache_writer *w, const xtts_cache_writer_options *opt, xtts_error *err);

#endif
