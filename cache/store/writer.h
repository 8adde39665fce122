/* writer.h — write a cache directory: records appended in input order into bounded LMDB
 * shards, crash-safe and resumable, with a lock so two builds never share one directory.
 *
 * On-disk layout (formats/cache.md): DIR/manifest.json and DIR/shard-NNNNN/ (one LMDB
 * environment each, named databases "records", "ids", "meta"). With --part K the shards
 * are DIR/shard-KKKKK-NNNNN/ and the partial manifest DIR/manifest.part-KKKKK.json;
 * xtts_cache_merge joins parts into manifest.json.
 *
 * Crash safety: records, rejects and the caller's state blobs are committed together in
 * one LMDB transaction, so after a kill -9 the directory holds exactly the records up to
 * the last commit and the state that matches them; a re-run opens the writer, reads
 * xtts_cache_writer_next_input() and the state, and continues from there.
 *
 * Errors of a commit (the "Errors:" lines below refer to these): an LMDB failure mapped by
 * its code (cache/store/writer_internal.h xtts_mdb_status): XTTS_EIO (disk full, quota, I/O error
 * and most others), XTTS_ENOMEM, XTTS_ECORRUPT, XTTS_EMISMATCH (LMDB version), XTTS_ENOTFOUND;
 * after it the writer is failed and every call that checks returns the same code and message.
 */
#ifndef XTTS_CACHE_WRITER_H
#define XTTS_CACHE_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "cache/store/read/names.h"
#include "common/xtts_common.h"
#include "formats/manifest.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct xtts_cache_writer xtts_cache_writer;

typedef struct {
    const char *dir;          /* output directory (created when missing) */
    int part;                 /* -1: a whole build; K >= 0: part K of a sharded build */
    int force;                /* replace a cache built with another configuration */
    int replace;              /* remove this build's shards and manifests even when they match
                                 (the caller found them built from another input) */
    uint64_t shard_bytes;     /* bound on a shard's data (default 1 GiB) */
    uint32_t commit_every;    /* records per transaction (default 256) */
    int n_parts;              /* with part >= 0: how many parts the build has (> part) */
    uint64_t map_bytes;       /* initial LMDB map size of a new shard (0: shard_bytes
                                 + 1/4 + 32 MiB); the map grows on MDB_MAP_FULL */
    uint64_t part_first, part_end; /* with part >= 0: the inputs [part_first, part_end) this part
                                 takes (xtts_part_block); written to its manifest as
                                 "part_inputs" and checked by the merge */
} xtts_cache_writer_options;

/* The block of inputs part `part` of `n_parts` takes from a stream of n inputs:
 * [n*part/n_parts, n*(part+1)/n_parts). The parts tile the stream in order, so their records
 * joined in part order are in input order. */
void xtts_part_block(uint64_t n, int part, int n_parts, uint64_t *first, uint64_t *end);

/* Fill opt with the defaults above for dir (a whole build). */
void xtts_cache_writer_options_defaults(xtts_cache_writer_options *opt, const char *dir);

/* Open (or resume) a build of dir with configuration cfg.
 * - XTTS_EUSAGE: cfg is not a valid configuration, or part/n_parts are out of range.
 * - XTTS_EBUSY: another process holds the directory (or this part) lock.
 * - XTTS_EMISMATCH: dir holds a cache with another configuration hash, or a build of the
 *   other layout (whole vs. in parts), and !force.
 * - XTTS_ECORRUPT: the build's shards are damaged (a gap, unreadable), and !force.
 * - with force, such a cache is removed first (a part build removes only its own part,
 *   the whole-build shards and manifest.json).
 * A commit that fails (disk full, I/O error) leaves the committed data intact and the
 * writer failed: every later call returns the same error; abort and re-run to resume.
 * Errors: XTTS_EUSAGE, XTTS_EBUSY, XTTS_EMISMATCH, XTTS_ECORRUPT (as above; XTTS_EMISMATCH
 * also for an LMDB version mismatch), XTTS_ERANGE (dir longer than 3000 bytes), XTTS_ENOMEM,
 * XTTS_EIO (cannot create dir or a lock file, list dir, open a shard, remove old files),
 * XTTS_ENOTFOUND (an existing last shard lacks meta "next_input"; LMDB's MDB_NOTFOUND). */
xtts_status xtts_cache_writer_open(const xtts_cache_writer_options *opt, const xtts_cache_config *cfg,
                                   xtts_cache_writer **out, xtts_error *err);

/* Input position to resume from: 1 + the input index of the last record or reject
 * committed, or 0 for a new build. */
uint64_t xtts_cache_writer_next_input(const xtts_cache_writer *w);
/* Records stored so far (committed and pending). */
uint64_t xtts_cache_writer_count(const xtts_cache_writer *w);

/* Append one encoded record for input index input_index (strictly increasing across
 * put and reject calls). id must be 1..511 bytes (the LMDB key limit) and equal to the
 * id inside the record, and the record must have the configuration's shape (n_mels,
 * dtype, shuffle flag, max_tokens tokens, frames padded as
 * xtts_cache_config_padded_frames says); otherwise, and for a duplicate id, it is
 * XTTS_EINPUT. A refused put changes nothing.
 * Commits every commit_every records; rotates to a new shard when the current one
 * would exceed shard_bytes; grows the LMDB map on MDB_MAP_FULL.
 * Errors: XTTS_EINPUT (as above: an empty id, a record that does not parse or does not match,
 * a duplicate id), XTTS_ERANGE (an id over XTTS_ID_MAX_BYTES, not XTTS_EINPUT as said above;
 * more than XTTS_MAX_SHARDS shards), XTTS_EUSAGE (input_index not after the last one),
 * XTTS_ENOMEM, XTTS_EIO/XTTS_ECORRUPT (a new shard cannot be created or an earlier shard read
 * for the duplicate check), those of a commit (top of this file), and a failed writer's
 * code. */
xtts_status xtts_cache_writer_put(xtts_cache_writer *w, uint64_t input_index, const char *id,
                                  const void *record, size_t len, xtts_error *err);

/* As put, and store source_path (the record's audio file) as meta "audio:<id>" in the
 * record's shard, where xtts-cache-verify --recompute finds it.
 * Errors: those of xtts_cache_writer_put. */
xtts_status xtts_cache_writer_put_source(xtts_cache_writer *w, uint64_t input_index, const char *id,
                                         const void *record, size_t len, const char *source_path, xtts_error *err);

/* One entry of a record in a database of its own (beside "records", "ids", "meta" and
 * "lengths"), stored under the record's local key: the content key ("keys") and any other
 * per-record data. */
typedef struct {
    const char *db;           /* database name, 1..XTTS_CACHE_DB_NAME_MAX bytes, not a reserved one */
    const void *data;
    size_t len;
} xtts_cache_entry;

#define XTTS_CACHE_DB_NAME_MAX 64
/* Named databases a shard's environment may hold: XTTS_SHARD_MAX_DBS (cache/store/read/names.h),
 * the four above and up to twelve of records' own. */

/* 1 for the databases the writer fills itself: "records", "ids", "meta", "lengths". */
int xtts_cache_db_reserved(const char *name);

/* As put_source (source_path may be NULL), and store each entry in its database under the
 * record's local key, in the same commit as the record.
 * Errors: those of xtts_cache_writer_put; XTTS_EUSAGE for a reserved or bad database name. */
xtts_status xtts_cache_writer_put_entries(xtts_cache_writer *w, uint64_t input_index, const char *id,
                                          const void *record, size_t len, const char *source_path,
                                          const xtts_cache_entry *entries, size_t n_entries, xtts_error *err);

/* Record that input input_index was rejected, with its id and a one-line reason.
 * Errors: XTTS_EUSAGE (input_index not after the last one), XTTS_ENOMEM, those of a commit
 * when one is due (top of this file), and a failed writer's code. */
xtts_status xtts_cache_writer_reject(xtts_cache_writer *w, uint64_t input_index, const char *id,
                                     const char *reason, xtts_error *err);

/* Caller state saved atomically with the records (e.g. running mel statistics, speaker
 * tables). Set replaces the value for key at the next commit; get returns the value
 * as of the last commit (XTTS_ENOTFOUND when never set). *data is malloc'd; caller frees.
 * Order: set the state that includes input i, THEN put or reject input i. A value set
 * joins the commit together with the next successful put or reject (an explicit commit
 * or finish takes it as it is), so at every commit, automatic or after a kill -9, the
 * committed state matches the committed records exactly.
 * Errors (set): XTTS_EUSAGE (key empty or over 200 bytes), XTTS_ENOMEM, and a failed writer's
 * code. Errors (get): XTTS_ENOTFOUND, XTTS_ENOMEM. */
xtts_status xtts_cache_writer_set_state(xtts_cache_writer *w, const char *key, const void *data, size_t len,
                                        xtts_error *err);
xtts_status xtts_cache_writer_get_state(xtts_cache_writer *w, const char *key, void **data, size_t *len,
                                        xtts_error *err);

/* Commit what is pending now.
 * Errors: XTTS_ENOMEM, those of creating the first shard (XTTS_ERANGE, XTTS_EIO,
 * XTTS_ECORRUPT) and of a commit (top of this file), and a failed writer's code. */
xtts_status xtts_cache_writer_commit(xtts_cache_writer *w, xtts_error *err);

/* Inputs rejected so far (committed and pending); the manifest lists them as "rejects". */
uint64_t xtts_cache_writer_rejected(const xtts_cache_writer *w);

/* Commit, then write the manifest (manifest.json, or the part's partial manifest): the
 * writer fills "format_version", "tool_version", "records", "config", "config_hash",
 * "shards", "rejected" and "rejects" (and a part's "part", "n_parts", "part_inputs"); extra
 * (formats/manifest.h) adds what the build has ("speakers", "languages", "splits",
 * "totals", "stats", "token_stream"); NULL adds nothing ("languages" XTTS's 17, "stats"
 * {"frames": 0}). Releases the lock and frees w, also on error.
 * Errors: those of xtts_cache_writer_commit, XTTS_ENOMEM, those of xtts_manifest_parse (the
 * manifest would not load back, e.g. "stats" arrays of another length than the
 * configuration's n_mels, or a "stats"."frames" over INT64_MAX: XTTS_EINPUT) and of
 * xtts_manifest_write (XTTS_EIO). */
xtts_status xtts_cache_writer_finish(xtts_cache_writer *w, const xtts_manifest_extra *extra, xtts_error *err);

/* Abandon: release the lock and free w without writing a manifest (what is committed
 * stays and a re-run resumes from it). NULL is allowed. */
void xtts_cache_writer_abort(xtts_cache_writer *w);

/* Join the partial manifests in dir into manifest.json: checks that every part has the
 * same configuration hash, the same "speakers" and "languages" tables (every part builds
 * them from the whole token stream) and that parts 0..N-1 (N = "n_parts" of each
 * partial manifest) are present; assigns each shard its first global index in part
 * order; sums "records", "rejects", numeric "totals" and the "stats" accumulators
 * ("frames", "mel_sum", "mel_sumsq"), then recomputes "mel_mean" and "mel_std".
 * Returns XTTS_ENOTFOUND when a part's manifest is missing (that part has not finished),
 * XTTS_EBUSY when a part is still being written (or another merge runs), and
 * XTTS_EMISMATCH when parts disagree. A part that has finished may simply try the merge:
 * of parts finishing at the same time, the last one to release its lock merges.
 * Errors: XTTS_ENOTFOUND (also: no partial manifests at all), XTTS_EBUSY, XTTS_EMISMATCH
 * (also: shards of a whole build beside the parts, parts that do not tile the input),
 * XTTS_EINPUT (not a partial manifest, a shard listed by the wrong part, an id stored by two
 * parts), XTTS_ECORRUPT (a shard's record count differs from its manifest, a damaged
 * data.mdb), XTTS_EIO (lock, directory or shard cannot be read; manifest write), XTTS_ENOMEM,
 * XTTS_ERANGE (a path too long), and those of xtts_manifest_load for each part. */
xtts_status xtts_cache_merge(const char *dir, xtts_error *err);

#ifdef __cplusplus
}
#endif
#endif
