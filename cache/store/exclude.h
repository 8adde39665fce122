/* exclude.h — the ids a build leaves out (`--exclude FILE` of xtts-tokenize and xtts-melcache).
 *
 * FILE is either the TSV of xtts-cache-report (recognised by its header line, which starts
 * "id<TAB>flags<TAB>"): the ids of its flagged lines, where a line counts when one of its flags
 * is among those asked for (`--exclude-flags`, default all); or a plain list: one id per line,
 * blank lines ignored. Only the ids that count are kept in memory (formats: docs/xtts-cache-report.md).
 */
#ifndef XTTS_CACHE_EXCLUDE_H
#define XTTS_CACHE_EXCLUDE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/xtts_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Every flag of the report's vocabulary (kernels/quality.h). */
#define XTTS_EXCLUDE_ALL_FLAGS 0xffffffffu

typedef struct xtts_exclude xtts_exclude;

/* Parse a comma-separated list of flag names ("clipped,low_snr") into a mask of
 * 1u << xtts_quality_flag. Errors: XTTS_EUSAGE naming the unknown or empty name and the
 * vocabulary. */
xtts_status xtts_exclude_parse_flags(const char *list, uint32_t *mask, xtts_error *err);

/* Read path ("-": standard input) into *out; flags: the mask of flags that count for a
 * report's TSV (ignored for a plain list).
 * Errors: XTTS_ENOTFOUND, XTTS_EIO (cannot open or read path), XTTS_EINPUT ("FILE:LINE: ..." for
 * a TSV line without a flags field or with a flag outside the vocabulary, an id over
 * XTTS_ID_MAX_BYTES, a NUL byte), XTTS_ENOMEM. */
xtts_status xtts_exclude_load(const char *path, uint32_t flags, xtts_exclude **out, xtts_error *err);

/* The same from an open stream (left open); name is what messages call it.
 * Errors: as xtts_exclude_load, but for opening. */
xtts_status xtts_exclude_read(FILE *f, const char *name, uint32_t flags, xtts_exclude **out, xtts_error *err);

/* 1 when id is to be left out. */
int xtts_exclude_has(const xtts_exclude *x, const char *id);
/* Ids in the list. */
size_t xtts_exclude_count(const xtts_exclude *x);
/* NULL is allowed. */
void xtts_exclude_free(xtts_exclude *x);

#ifdef __cplusplus
}
#endif
#endif
