/* options.c — a build's options: their defaults, and the configuration fields that follow
 * from the others (options.h).
 */
#include "prep/melcache/options.h"

#include <stdio.h>
#include <string.h>

#include "common/mel_params.h"

void xtts_melcache_options_defaults(xtts_melcache_options *o) {
    memset(o, 0, sizeof *o);
    xtts_cache_config_defaults(&o->cfg);
    o->cfg.shuffle = 1; /* byte planes compress better and decode faster (docs/benchmarks.md) */
    o->part = -1;
    o->n_parts = 1;
    o->threads = 0;
    o->shard_bytes = (uint64_t)1 << 30;
    o->commit_every = 256;
    o->device = "auto";
}

void xtts_melcache_config_finish(xtts_cache_config *c, const char *resample_quality, int max_frames_given) {
    if (resample_quality) snprintf(c->resample_quality, sizeof c->resample_quality, "%s", resample_quality);
    else if (!strcmp(c->resampler, "libsamplerate")) snprintf(c->resample_quality, sizeof c->resample_quality, "sinc_medium");
    if (c->n_buckets) c->max_frames = c->buckets[c->n_buckets - 1];
    else if (!max_frames_given) c->max_frames = xtts_mel_default_max_frames(&c->mel);
}
