/* quality_store.h — the records' quality metrics as a cache stores them: the per-record
 * database "quality" of each shard (formats/cache.md section 2), one value of
 * XTTS_QUALITY_BYTES per record in xtts_quality_encode's layout (kernels/quality.h), keyed
 * by the local index like "records". Written by xtts-melcache in the build pass, checked by
 * xtts-cache-verify, read by xtts-cache-report. A cache built before the metrics has no
 * "quality" database: it reads as "no metrics".
 */
#ifndef XTTS_CACHE_QUALITY_STORE_H
#define XTTS_CACHE_QUALITY_STORE_H

#include <stdint.h>

#include "cache/store/read/reader.h"
#include "common/xtts_common.h"
#include "kernels/quality.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when any shard of c stores metrics (a cache built with them), else 0. */
int xtts_cache_has_metrics(const xtts_cache *c);

/* The metrics of record index, decoded.
 * Errors: XTTS_ENOTFOUND (the cache stores no metrics at all: a cache built before them),
 * XTTS_ECORRUPT naming the shard, index and id (the cache stores metrics but this record's are
 * missing, of the wrong size, or fail xtts_quality_decode's checks), those of reads
 * (cache/store/read/reader.h). */
xtts_status xtts_cache_reader_metrics(xtts_cache_reader *r, uint64_t index, xtts_quality_metrics *m,
                                      xtts_error *err);

/* The one-line hint for a cache without metrics, naming dir: how to add them. */
void xtts_cache_metrics_hint(const char *dir, char *out, size_t cap);

#ifdef __cplusplus
}
#endif
#endif
