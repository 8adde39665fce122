/* result.h — what a cache build did (xtts_melcache_result): its counts, filled by the run's
 * steps (inputs, plan, resume, pipeline) and reported by xtts-melcache.
 */
#ifndef XTTS_PREP_MELCACHE_RESULT_H
#define XTTS_PREP_MELCACHE_RESULT_H

#include <stdint.h>

typedef struct {
    uint64_t inputs;            /* records in the token stream */
    uint64_t selected;          /* records of this part */
    uint64_t resumed_from;      /* input position the run started at (0 = fresh) */
    uint64_t stored, rejected;  /* in the whole cache (or part) after the run */
    double audio_seconds;       /* stored audio */
    double wall_seconds;
    int merged;                 /* 1 when this run joined all parts into manifest.json */
    char device[64];            /* what computed the mels */
    uint64_t test_held_out;     /* records of the stream's test split, not stored */
    uint64_t excluded;          /* records of the stream left out by the exclude list */
    int metrics;                /* 1: the cache stores the records' quality metrics */
    uint64_t split_given;       /* records whose split the stream set */
    uint64_t val_by_fraction;   /* records --val-fraction put in val (the others' fallback) */
    int has_source;             /* an update or --reuse had a cache to carry records from */
    uint64_t reused;            /* records this run carried over without computing them */
    uint64_t computed;          /* inputs this run computed (stored or rejected) */
    uint64_t replaced;          /* of those, ids the source held with another content key */
    int has_dropped;            /* dropped is known: a whole build that did the whole stream */
    uint64_t dropped;           /* source records not in the new cache (ids gone or replaced) */
    int switched;               /* the update took the place of the old cache */
    uint64_t shared;            /* of reused: records the update kept where the old cache stores them */
    uint64_t shared_runs, garbage_bytes; /* their runs; bytes of the kept shards no record uses */
    int compacted;              /* the update copied every record (--compact, or sharing was not
                                   worth it: compact_why says why) */
    char compact_why[160];
    uint64_t audio_read;        /* audio files read for their content keys */
    uint64_t audio_known;       /* audio files whose stat record (from the source cache) spared the read */
} xtts_melcache_result;

#endif
