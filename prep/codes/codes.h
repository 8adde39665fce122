/* codes.h — the XTTS DVAE's audio codes of every record of a finished cache (xtts-cache-codes;
 * docs/xtts-cache-codes.md).
 *
 * For each record whose content key has no entry yet in the cache's codes directory of this
 * DVAE and these mel norms (cache/store/codes_store.h): the stored 22,050 Hz waveform, its
 * `xtts`-preset log-mel in float32 (kernels/mel.h), divided per channel by the norms, the
 * DVAE encoder and the nearest codebook entries (kernels/dvae.h). Committed every
 * commit_every records, so a kill loses at most that many and a re-run computes only what is
 * missing; the codes of a record do not depend on the others or on the thread count.
 */
#ifndef XTTS_PREP_CODES_H
#define XTTS_PREP_CODES_H

#include <stdint.h>

#include "common/xtts_common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    const char *cache_dir;
    const char *dvae_path;  /* dvae.pth or .safetensors */
    const char *norms_path; /* mel_stats.pth or .safetensors */
    int threads;            /* the encoder's threads; <= 0: OpenMP's default */
    int progress;           /* force the progress line when stderr is not a terminal */
    uint64_t commit_every;  /* records per commit */
} xtts_codes_options;

/* Defaults: threads 0, progress 0, commit_every 64. */
void xtts_codes_options_defaults(xtts_codes_options *o);

typedef struct {
    char dir[4096];         /* the codes directory written */
    uint64_t records;       /* records in the cache */
    uint64_t present;       /* of which already had codes */
    uint64_t computed;      /* of which were computed now */
    double audio_seconds;   /* audio of the computed records */
    double seconds;         /* wall time spent computing them */
    uint64_t codes_bytes;   /* bytes of codes of the computed records (2 a code) */
    uint64_t pruned;        /* entries of records the cache no longer holds, removed */
} xtts_codes_summary;

/* Compute the missing codes.
 * Errors: XTTS_EUNSUPPORTED (the cache stores no waveform, or not at 22,050 Hz: the message
 * names the command that adds it; a cache without content keys), those of the model files
 * (formats/model/torch_dvae.h), of xtts_cache_open, of the codes store (XTTS_EBUSY when
 * another run writes it), XTTS_EINPUT (a record too short for one mel frame, named),
 * XTTS_ENOMEM. */
xtts_status xtts_codes_run(const xtts_codes_options *o, xtts_codes_summary *sum, xtts_error *err);

#ifdef __cplusplus
}
#endif
#endif
