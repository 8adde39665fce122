/* resume.h — a build's shard writer opened where a previous run stopped (private to
 * prep/melcache): the statistics saved up to there, and the proof that the stored build is
 * this stream's (the digest of the content keys of the inputs it consumed, state.h). A stored
 * build of another input, of another speaker numbering or without the quality metrics is
 * refused, or with --force replaced by an empty one.
 */
#ifndef XTTS_PREP_MELCACHE_RESUME_H
#define XTTS_PREP_MELCACHE_RESUME_H

#include "common/xtts_common.h"
#include "prep/melcache/inputs.h"
#include "prep/melcache/options.h"
#include "prep/melcache/result.h"
#include "prep/melcache/slots.h"
#include "prep/melcache/state.h"

/* Open the part's writer (in out_dir, --out or an update's stage, replacing another build
 * there when force; the inputs' block [in->lo, in->hi)) into b, with its statistics, start
 * and whether it stores quality metrics; the stream is left at the first input not stored,
 * its running digest over the keys before it (bs's first buffer is used to read them). res
 * gets resumed_from and selected.
 * Errors: XTTS_ENOMEM, XTTS_EMISMATCH (another input or speaker numbering, without force),
 * XTTS_ECORRUPT (saved statistics or digest damaged), those of xtts_cache_writer_open and of
 * the inputs. */
xtts_status xtts_melcache_resume_open(xtts_melcache_build *b, const xtts_melcache_options *o, const char *out_dir,
                                      int force, xtts_melcache_inputs *in, xtts_melcache_buffers *bs,
                                      xtts_melcache_result *res, xtts_error *err);

#endif
