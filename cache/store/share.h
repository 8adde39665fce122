/* share.h — an update that shares the unchanged records' shard directories with the cache
 * it replaces instead of copying them (formats/cache.md, "Shared shards").
 *
 * The update's writer stores only the records that must be written (computed ones, and
 * carried ones whose speaker or language ids change); every other record stays where the
 * old cache stored it. A plan, made in input order before anything is written, says which:
 * runs of records that follow each other in one old shard directory (kept), and stretches of
 * inputs the writer takes (stored or rejected). When the writer has finished, the old
 * directories the runs use are hard-linked into the new cache as base-NNNNN (never opened
 * for writing: the old cache reads them until the exchange) and the manifest lists, in
 * global order, each run and each stretch of the writer's shards as a range of a
 * directory's local keys (manifest format_version 3).
 */
#ifndef XTTS_CACHE_SHARE_H
#define XTTS_CACHE_SHARE_H

#include <stddef.h>
#include <stdint.h>

#include "cache/store/keys.h"
#include "common/xtts_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Past these an update copies every record instead (a compaction): more than this share of
 * the bytes of the directories it would keep belongs to no record, or more runs than
 * XTTS_SHARE_RUNS_FIXED plus XTTS_SHARE_RUNS_PER_DIR per directory of the new cache plus
 * one per XTTS_SHARE_MIN_RUN kept records (runs shorter than that on average: the manifest
 * and the readers' tables of entries would grow with the records). */
#define XTTS_SHARE_GARBAGE_MAX 0.25
#define XTTS_SHARE_RUNS_PER_DIR 4
#define XTTS_SHARE_RUNS_FIXED 64
#define XTTS_SHARE_MIN_RUN 32

typedef struct xtts_share_plan xtts_share_plan;

/* A plan over the records of src (borrowed; open until the plan is freed).
 * Errors: XTTS_ENOMEM. */
xtts_status xtts_share_plan_new(const xtts_cache_source *src, xtts_share_plan **out, xtts_error *err);
/* NULL is allowed. */
void xtts_share_plan_free(xtts_share_plan *p);

/* In input order: the next input is kept where the source stores it (directory dir, local
 * key local, len value bytes), or taken by the writer. -1 when out of memory or past the
 * bound on runs (the plan is then over: xtts_share_plan_worth says so). */
int xtts_share_plan_keep(xtts_share_plan *p, size_t dir, uint64_t local, uint64_t len);
int xtts_share_plan_write(xtts_share_plan *p, uint64_t input);

typedef struct {
    uint64_t kept, kept_bytes;  /* records kept, and their value bytes */
    uint64_t garbage_bytes;     /* bytes of the kept directories no record of the new cache uses */
    uint64_t runs, dirs;        /* runs of kept records; directories they use */
} xtts_share_figures;
void xtts_share_plan_figures(const xtts_share_plan *p, xtts_share_figures *f);

/* 1 when sharing is worth it; 0 with the reason (garbage or runs past the bounds, nothing
 * kept) in why. */
int xtts_share_plan_worth(const xtts_share_plan *p, char *why, size_t cap);

/* Whether a file of the source can be hard-linked into stage (the same filesystem, links
 * allowed). Errors: XTTS_EUNSUPPORTED with the reason. */
xtts_status xtts_share_probe(const xtts_cache_source *src, const char *stage, xtts_error *err);

/* After the writer finished the update in stage (its manifest.json lists its own shards):
 * link the directories the plan keeps into stage as base-NNNNN (replacing any an earlier
 * try left) and rewrite stage/manifest.json with every record in global order; *records:
 * how many it lists.
 * Errors: XTTS_EIO (a link or the write), XTTS_ECORRUPT (the writer stored another count of
 * records than the plan has inputs for), XTTS_ENOMEM. */
xtts_status xtts_share_finish(const xtts_share_plan *p, const char *stage, uint64_t *records, xtts_error *err);

#ifdef __cplusplus
}
#endif
#endif
