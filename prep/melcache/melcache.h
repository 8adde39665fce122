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

#include <stdio.h>

#include "common/xtts_common.h"
#include "prep/melcache/options.h"
#include "prep/melcache/result.h"

#ifdef __cplusplus
extern "C" {
#endif

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

#ifdef __cplusplus
}
#endif
#endif
