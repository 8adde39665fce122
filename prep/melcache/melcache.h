/* melcache.h — the cache build: token stream in, verified record shards out.
 *
 * For each token-stream record: decode the audio, downmix, resample to the preset's rate,
 * compute the log-mel, pad tokens and mel to the fixed shape, encode one record and
 * append it to the shard writer in input order. Worker threads compute; the calling
 * thread writes. Resumable and deterministic: the same inputs and configuration give
 * the same records in the same order whatever the thread count, and a re-run on a
 * partly built directory completes it with the same content.
 */
#ifndef XTTS_MELCACHE_H
#define XTTS_MELCACHE_H

#include <stdint.h>
#include <stdio.h>

#include "cache/store/exclude.h"
#include "common/xtts_common.h"
#include "formats/manifest.h"
#include "prep/audio/audio.h"

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

void xtts_melcache_options_defaults(xtts_melcache_options *o);

/* Run a build. tokens_name names the stream in messages ("-" for stdin). A record whose audio
 * fails is rejected (counted in res), not an error.
 * Errors: XTTS_EUSAGE (mel parameters, part number or device spelling), XTTS_EUNSUPPORTED (the
 * CUDA device asked for is not usable), those of the token stream (xtts_tokens_reader_open and
 * _next: XTTS_EINPUT, XTTS_EMISMATCH, XTTS_EIO, XTTS_ENOMEM; also XTTS_EINPUT for no records, a
 * bad languages= header or max_tokens, XTTS_EIO for the temporary copy of stdin or a stream
 * that changed), those of xtts_cache_writer_open (XTTS_EMISMATCH: another configuration or
 * another input, without force; XTTS_EBUSY, XTTS_ECORRUPT, ...), XTTS_ECORRUPT (saved
 * statistics or input digest damaged), the writer's put/reject/finish errors, XTTS_ENOMEM,
 * and XTTS_EINPUT when the last part cannot join the parts (whatever xtts_cache_merge
 * returned, other than XTTS_ENOTFOUND or XTTS_EBUSY, which are not errors here). */
xtts_status xtts_melcache_run(const xtts_melcache_options *o, FILE *tokens, const char *tokens_name,
                              xtts_melcache_result *res, xtts_error *err);

/* The configuration's fields that follow the others once the options are in: the resampler's
 * default quality (hq for soxr, sinc_medium for libsamplerate) unless resample_quality is
 * given, and max_frames: the largest bucket with buckets, else the preset's default
 * (xtts_mel_default_max_frames) unless max_frames_given. */
void xtts_melcache_config_finish(xtts_cache_config *c, const char *resample_quality, int max_frames_given);

/* Validation membership of an id (a hash, so sharded builds agree). */
int xtts_melcache_is_val(const char *id, double val_fraction);

#ifdef __cplusplus
}
#endif
#endif
