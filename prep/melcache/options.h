/* options.h — what a cache build is asked to do (xtts_melcache_options): the configuration
 * of its records and where and how the build runs. Filled by xtts-melcache's command line
 * (programs/xtts-melcache.c), read by every step of the build and never written by one (an
 * update's stage, where it is built, is the plan's: plan.h).
 */
#ifndef XTTS_PREP_MELCACHE_OPTIONS_H
#define XTTS_PREP_MELCACHE_OPTIONS_H

#include <stdint.h>
#include <stdio.h>

#include "cache/store/exclude.h"
#include "common/xtts_common.h"
#include "formats/manifest.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    xtts_cache_config cfg;      /* mel and storage fields; tokenizer fields come from the stream */
    const char *out_dir;
    int part, n_parts;          /* part < 0: a whole build */
    int force;
    int threads;                /* <= 0: all cores */
    uint64_t shard_bytes;
    uint32_t commit_every;
    const char *device;         /* "auto", "cpu", "cuda", "cuda:N" */
    int progress;               /* force the progress line */
    FILE *rejects;              /* optional: "id\treason" lines */
    int quiet;                  /* no per-record reject lines on stderr */
    int update;                 /* out_dir holds a finished cache: build the stream's cache beside it,
                                   carrying over records whose content key is unchanged, then
                                   exchange the two (formats/cache.md, "Updates") */
    const char *reuse_dir;      /* a finished cache of the same configuration to copy records from */
    int dry_run;                /* count what would be reused and computed; write nothing */
    int compact;                /* with update: copy every carried record into new shards instead of
                                   sharing the old cache's (formats/cache.md, "Shared shards") */
    const xtts_exclude *exclude; /* ids of the stream to leave out (--exclude), or NULL */
    int rehash;                 /* read every audio file for its content key, trusting no stat record
                                   (formats/cache.md, "Stat records") */
} xtts_melcache_options;

/* The defaults: the xtts preset's configuration (byte planes shuffled), a whole build, all
 * cores, 1 GiB shards, a commit every 256 inputs, device "auto". */
void xtts_melcache_options_defaults(xtts_melcache_options *o);

/* The configuration's fields that follow the others once the options are in: the resampler's
 * default quality (hq for soxr, sinc_medium for libsamplerate) unless resample_quality is
 * given, and max_frames: the largest bucket with buckets, else the preset's default
 * (xtts_mel_default_max_frames) unless max_frames_given. */
void xtts_melcache_config_finish(xtts_cache_config *c, const char *resample_quality, int max_frames_given);

#ifdef __cplusplus
}
#endif
#endif
