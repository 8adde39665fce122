/* record.h — one record through a worker's three steps (private to prep/melcache): load
 * (decode, mix down, resample, trim, measure), mel (the worker's own mel kernel; the batch
 * pipeline computes it on its engine instead, compute.h) and finish (check, sum, pad,
 * encode). A record that fails a step is rejected in its slot (ok = 0, reason set); no step
 * returns an error.
 */
#ifndef XTTS_PREP_MELCACHE_RECORD_H
#define XTTS_PREP_MELCACHE_RECORD_H

#include "formats/manifest.h"
#include "kernels/quality.h"
#include "prep/melcache/builder.h"
#include "prep/melcache/slots.h"

/* Load the slot's input with worker w into the buffers b. With the record's own buffers
 * (own = 1: the batch pipeline) the samples are copied out of the worker's audio buffer,
 * which the worker's next load overwrites; with the worker's, s->src points into that
 * buffer. qs: the worker's quality state when the build stores metrics, else NULL. */
void xtts_melcache_record_load(const xtts_cache_config *c, xtts_record_builder *w, xtts_quality_state *qs,
                               xtts_melcache_slot *s, xtts_melcache_slot_bufs *b, int own);
/* The loaded slot's mel on the worker's kernel. */
void xtts_melcache_record_mel(xtts_record_builder *w, xtts_melcache_slot *s);
/* Check the slot's mel, sum it, pad it and the tokens, and encode the record into s->bytes. */
void xtts_melcache_record_finish(const xtts_cache_config *c, xtts_record_builder *w, xtts_melcache_slot *s);

#endif
