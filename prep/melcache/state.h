/* state.h — what a build saves with every commit of its shard writer, so that a re-run
 * resumes it (private to prep/melcache): the running statistics, the digest of the inputs
 * consumed, and the notes that say how the build began (formats/cache.md, "Resuming").
 */
#ifndef XTTS_PREP_MELCACHE_STATE_H
#define XTTS_PREP_MELCACHE_STATE_H

#include <stdint.h>

#include "cache/store/writer.h"
#include "common/xtts_common.h"
#include "formats/record.h"

/* State key: the running statistics (xtts_melcache_stats). */
#define XTTS_MELCACHE_STATS_KEY "melcache-stats"
/* State key: SHA-256 over the content keys (prep/melcache/update.h) of the inputs the build
 * (or part) has consumed, then the last one's id: a resume proves the stored build is this
 * stream's, whatever the audio files' paths. Builds of earlier versions saved
 * "melcache-inputs" (over the audio paths) instead and resume without the check. */
#define XTTS_MELCACHE_INPUTS_KEY "melcache-keys"
/* State key set with the first record of a build that stores quality metrics: a resume of a
 * build without it (made before the metrics) goes on without them, so that no cache holds
 * some records with metrics and some without. */
#define XTTS_MELCACHE_QUALITY_KEY "melcache-quality"
/* State key: "sorted" in a build whose speaker ids follow the names' order. Builds begun
 * before it numbered speakers by first appearance: their stored ids would not agree with
 * this run's, so they are not resumed (--force rebuilds them). */
#define XTTS_MELCACHE_SPEAKERS_KEY "melcache-speakers"
/* State key set with the last commit of a build: the stat records of the audio files it read
 * (prep/melcache/update.h; formats/cache.md, "Stat records"), so that a later update or
 * --reuse reads only the files whose stat changed. */
#define XTTS_MELCACHE_STAT_KEY "melcache-audio-stat"
/* State key: "1" an update that shares the old shards, "0" one that copies (cache/store/share.h). */
#define XTTS_MELCACHE_SHARE_KEY "melcache-share"

/* The statistics of the records stored so far, for the manifest. */
typedef struct {
    uint32_t magic, n_mels;
    uint64_t frames, tokens, train, val;
    double audio_seconds;
    double sum[XTTS_RECORD_MAX_MELS], sumsq[XTTS_RECORD_MAX_MELS];
} xtts_melcache_stats;

/* A build being written: its writer and what the writer told of the build so far. */
typedef struct {
    xtts_cache_writer *w;
    xtts_melcache_stats *stats;
    uint64_t start;             /* the first input the writer has not stored */
    int measure;                /* the build stores quality metrics */
} xtts_melcache_build;

/* One stored record into s, in input order (the sums are floating point: their order is the
 * statistics' last bits): its frames, tokens, samples at sample_rate, split and mel sums. */
void xtts_melcache_stats_add(xtts_melcache_stats *s, uint64_t frames, uint32_t tokens, uint64_t n_pcm, int split,
                             const double *sum, const double *sumsq, int sample_rate);

/* Save s into the writer's state (it joins the next commit). Errors: the writer's. */
xtts_status xtts_melcache_stats_save(xtts_cache_writer *w, const xtts_melcache_stats *s, xtts_error *err);
/* s from the writer's state, or zero (n_mels channels) when it holds none.
 * Errors: XTTS_ECORRUPT (damaged or of another configuration), the writer's. */
xtts_status xtts_melcache_stats_load(xtts_cache_writer *w, xtts_melcache_stats *s, int n_mels, xtts_error *err);

/* The inputs' state for a commit that ends with input id: the digest of the keys up to it,
 * then its id. Errors: the writer's. */
xtts_status xtts_melcache_inputs_save(xtts_cache_writer *w, const uint8_t digest[32], const char *id, xtts_error *err);

/* 1 when the writer's state holds key (whatever its value). */
int xtts_melcache_state_has(xtts_cache_writer *w, const char *key);

#endif
