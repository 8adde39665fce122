/* plan.h — updates and reuse (private to prep/melcache): which of a build's inputs are
 * carried over from a source cache instead of computed (formats/cache.md, "Content keys").
 *
 * The source is the cache --reuse names, or the cache --update replaces; an update is built
 * beside its target (the stage) and exchanged with it at the end. A whole update first plans
 * which records stay where the old cache stores them (a shared update, cache/store/share.h); the
 * build pass then keeps those, takes the source's copy of every other record whose content
 * key is unchanged, and computes the rest.
 */
#ifndef XTTS_PREP_MELCACHE_PLAN_H
#define XTTS_PREP_MELCACHE_PLAN_H

#include <stdint.h>
#include <string.h>

#include "cache/store/keys.h"
#include "cache/store/read/reader.h"
#include "cache/store/share.h"
#include "common/xtts_common.h"
#include "prep/melcache/inputs.h"
#include "prep/melcache/options.h"
#include "prep/melcache/result.h"
#include "prep/melcache/slots.h"
#include "prep/melcache/state.h"
#include "prep/melcache/update.h"

/* The most kept inputs one slot of the build pass stands for (a bound on the time between two
 * progress lines and commits of state). */
#define XTTS_MELCACHE_RUN_MAX 65536

/* What the statistics take of a kept record (its header's figures). */
typedef struct {
    uint32_t n_frames, n_tokens, n_samples, split;
} xtts_melcache_kept_fig;

/* What the plan's pass learns of an input, kept until the stream is read whole and its
 * speakers numbered (plan_walk.c): whether the source holds its id, and with its content key
 * (found, same; then kept_at and kept_fig hold where and its figures), whether that record
 * carries quality metrics, the ids it was stored with. */
typedef struct {
    xtts_tokens_pos pos;     /* where the stream holds the input */
    uint64_t len;            /* the stored record's bytes */
    uint32_t speaker_id;     /* the speaker id the record was stored with */
    uint32_t first_speaker;  /* the input's speaker's place in the order of first appearance */
    uint8_t found, same, has_quality, same_lang;
} xtts_melcache_plan_seen;

/* An input's place in the token stream. */
typedef struct {
    uint64_t input;
    xtts_tokens_pos pos;
} xtts_melcache_parse_at;

typedef struct {
    const xtts_cache_config *cfg;
    xtts_melcache_result *res;
    int measure;               /* the build stores quality metrics (set once the build is open) */
    int dry_run;
    xtts_cache_source *src;    /* the cache records are carried from, or NULL */
    xtts_audio_hasher *hasher; /* takes the source's stat records, or NULL (--rehash) */
    char target[4096];         /* with staging: the cache the update replaces (its absolute path) */
    char stage[4096];          /* with staging: where the update is built (the run writes there) */
    int staging;
    int lock_fd;               /* the target's build lock, shared, while it is a source (-1: none) */
    uint64_t lo;               /* the part's first input: keys and bits below are from there */
    xtts_share_plan *plan;     /* a shared update: what stays in the old shards, or NULL */
    uint8_t *plan_keys;        /* [hi - lo][32]: the inputs' content keys, from the plan's pass */
    uint8_t *keep_bits;        /* [(hi - lo + 7) / 8]: input lo + i is kept */
    uint64_t *found_at;        /* the plan's pass: the source records the inputs' ids name */
    size_t n_found;
    uint64_t *kept_at;         /* [hi - lo]: where the source stores input lo + i when it is kept
                                  (its directory << 40 | its local key) */
    xtts_melcache_kept_fig *kept_fig; /* [hi - lo]: the figures of input lo + i when it is kept */
    xtts_melcache_parse_at *parse_at; /* where the stream holds each input not kept, in input order */
    size_t n_parse_at, cap_parse_at;
    xtts_melcache_plan_seen *seen; /* [n_seen]: the plan's pass, until the plan is made of it */
    uint64_t n_seen;
    size_t cap_inputs;       /* of plan_keys, kept_at, kept_fig and seen while the pass grows them */
    int *renumber;           /* the speakers' ids by their place of first appearance */
} xtts_melcache_plan;

/* An empty plan for configuration cfg (by pointer), filling res. */
void xtts_melcache_plan_init(xtts_melcache_plan *p, const xtts_cache_config *cfg, xtts_melcache_result *res,
                             int dry_run);

/* The source: the cache dir (--reuse, or the cache an update replaces: update = 1), and the
 * stat records its builds saved, given to p->hasher (best effort: none when it holds none).
 * Errors: those of xtts_cache_source_open (XTTS_EUNSUPPORTED with a hint: a cache without
 * content keys; XTTS_EMISMATCH: another configuration). */
xtts_status xtts_melcache_plan_source(xtts_melcache_plan *p, const char *dir, int update, xtts_error *err);

/* --update: where the build goes. A missing or empty out_dir is a plain build, an unfinished
 * one is finished first; a finished cache of this configuration is the source of a build
 * beside it (staging: p->stage names it, which xtts_melcache_plan_stage makes and where the
 * run writes the build); of another configuration it is refused, or with --force rebuilt in
 * place as without --update; one without content keys is refused, or with --force rebuilt
 * whole beside it. The options are not changed.
 * Errors: XTTS_EINPUT (an unfinished build), the source's, the lock's, the stage's path. */
xtts_status xtts_melcache_plan_update(xtts_melcache_plan *p, const xtts_melcache_options *o, xtts_error *err);

/* With staging, the stage made (or an earlier try's taken up): once the inputs are read.
 * Errors: those of xtts_update_dir_prepare. */
xtts_status xtts_melcache_plan_stage(xtts_melcache_plan *p, xtts_error *err);

/* A whole update: plan which records stay in the old cache's shards, and share them when that
 * is worth it (else, or with compact, every record is copied); the mode is saved in b's writer
 * state, and a re-run continues in the mode its update began in. The plan is made of what the
 * plan's pass (xtts_melcache_plan_walk) saw, whose keys bs's keys then take.
 * Errors: XTTS_ENOMEM, the writer's. */
xtts_status xtts_melcache_plan_share(xtts_melcache_plan *p, const xtts_melcache_build *b, int compact,
                                     xtts_melcache_buffers *bs, xtts_error *err);

/* --dry-run: the keys of the part's inputs looked up in the source; nothing is written.
 * Errors: the inputs', the source's. */
xtts_status xtts_melcache_plan_dry(xtts_melcache_plan *p, int whole, xtts_melcache_inputs *in,
                                   xtts_melcache_buffers *bs, xtts_error *err);

/* The records of the part's inputs from `from` to `hi` the plan does not keep. */
uint64_t xtts_melcache_plan_to_compute(const xtts_melcache_plan *p, uint64_t from, uint64_t hi);

/* The build pass's next inputs before end into buf, a chunk of slots at most (*m: how many;
 * *next moves past them): as xtts_melcache_buffer_fill, but the inputs the plan keeps are not
 * read from the stream: a run of them takes one slot (run_end; what the build needs of them is
 * in the source), and the reader skips to the next input it must read. So a buffer holds up to
 * a chunk of records to compute however sparse they are. Errors: those of the inputs. */
xtts_status xtts_melcache_plan_fill(const xtts_melcache_plan *p, const xtts_melcache_buffers *bs, xtts_melcache_inputs *in,
                                    xtts_melcache_slot *buf, uint64_t *next, uint64_t end, size_t *m, xtts_error *err);

/* The plan's pass (a whole update's, plan_walk.c), which is also the first pass over the
 * stream (in opened with xtts_melcache_inputs_open, ended here): every input keyed and looked up
 * in the source, plan_keys, kept_at, kept_fig and seen filled, renumber taken.
 * Errors: XTTS_ENOMEM, the inputs', the source's. */
xtts_status xtts_melcache_plan_walk(xtts_melcache_plan *p, xtts_melcache_inputs *in, const xtts_melcache_buffers *bs,
                                    xtts_error *err);
/* The plan made of what the pass saw, in input order: each input kept where the source stores
 * it (keep_bits; the same content key, quality metrics when the build stores them, the ids
 * this build gives it) or written (parse_at), found_at filled; seen is freed.
 * Errors: XTTS_ENOMEM. */
xtts_status xtts_melcache_plan_seen_apply(xtts_melcache_plan *p, xtts_error *err);
/* 1 when the plan keeps input `input` in the source. */
static inline int xtts_melcache_plan_is_kept(const xtts_melcache_plan *p, uint64_t input) {
    return p->keep_bits && (p->keep_bits[(input - p->lo) / 8] >> ((input - p->lo) % 8) & 1);
}
/* 1 when the source's record h carries quality metrics (a source built without them, by
 * resuming a build begun before them, holds none). */
static inline int xtts_melcache_hit_has_quality(const xtts_cache_source_hit *h) {
    for (size_t i = 0; i < h->n_entries; i++)
        if (!strcmp(h->entries[i].db, XTTS_CACHE_DB_QUALITY)) return 1;
    return 0;
}
/* 1 when a record carries every entry the build stores, given whether it has quality metrics:
 * they are needed when the build measures them. */
static inline int xtts_melcache_plan_complete(const xtts_melcache_plan *p, int has_quality) {
    return has_quality || (!p->measure && !p->dry_run);
}

/* The statistics of the kept inputs [from, to), added to stats in input order: each one's
 * sums and figures read where the plan's pass found it, through v (a view for the calling
 * thread). Errors: XTTS_ECORRUPT (a kept record changed), the source's. */
xtts_status xtts_melcache_plan_keep_run(const xtts_melcache_plan *p, xtts_cache_source_view *v, uint64_t from,
                                        uint64_t to, xtts_melcache_stats *stats, xtts_error *err);

/* Look every slot of buf[0..m) up in the source, in input order (one thread: the source's
 * transactions are not shared): kept, taken (its bytes, sums and entries), or to compute;
 * res counts them. Errors: XTTS_ECORRUPT (a kept record changed), the source's. */
xtts_status xtts_melcache_plan_buffer(xtts_melcache_plan *p, xtts_melcache_slot *buf, size_t m, xtts_error *err);

/* After the manifest, with st the run's status so far: the records the source lost (a whole
 * build from its start), then, when st is XTTS_OK, the shared shards finished and an update's
 * stage put in its target's place (a whole build, or a part that joined the parts). Returns st
 * when it is an error, else those of xtts_share_finish and xtts_update_dir_switch. */
xtts_status xtts_melcache_plan_finish(xtts_melcache_plan *p, int whole, xtts_status st, xtts_error *err);

void xtts_melcache_plan_free(xtts_melcache_plan *p);

#endif
