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
#include "formats/quality_flags.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The state key (the meta key "state:" XTTS_CACHE_QUALITY_KEY of every shard) a build sets with
 * its first record when it stores metrics: "2" (XTTS_QUALITY_VERSION) in a build begun with
 * version-2 metrics, whose every entry is then of that version; "1" in a build begun before that
 * note had a version, whose entries may be of either (formats/cache.md section 3.5). */
#define XTTS_CACHE_QUALITY_KEY "melcache-quality"

/* 1 when any shard of c stores metrics (a cache built with them), else 0. */
int xtts_cache_has_metrics(const xtts_cache *c);

/* The metrics of record index, decoded.
 * Errors: XTTS_ENOTFOUND (the cache stores no metrics at all: a cache built before them),
 * XTTS_ECORRUPT naming the shard, index and id (the cache stores metrics but this record's are
 * missing, of the wrong size, fail xtts_quality_decode's checks, or are of another version than
 * xtts_cache_metrics_version says the shard holds), those of reads
 * (cache/store/read/reader.h). */
xtts_status xtts_cache_reader_metrics(xtts_cache_reader *r, uint64_t index, xtts_quality_metrics *m,
                                      xtts_error *err);

/* The version every quality entry of shard i must have: that of its build's note
 * (XTTS_CACHE_QUALITY_KEY), or 0 when either version may be there (a note "1", or none).
 * Errors: those of xtts_cache_reader_meta but XTTS_ENOTFOUND; XTTS_ECORRUPT for a note that is
 * not a version this build knows. */
xtts_status xtts_cache_metrics_version(xtts_cache_reader *r, size_t shard, unsigned *version, xtts_error *err);

/* The one-line hint for a cache without metrics, naming dir: how to add them. */
void xtts_cache_metrics_hint(const char *dir, char *out, size_t cap);

#ifdef __cplusplus
}
#endif
#endif
