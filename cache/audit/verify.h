/* verify.h — check a cache directory end to end and compute its content digest.
 *
 * xtts_verify_cache opens the cache tolerantly (a damaged shard does not stop the run),
 * walks every shard's databases and every record, and reports each fault it finds
 * through a callback, with the shard, the global index and the id where they are known.
 * It also computes the content digest: SHA-256 over every record's decoded content in
 * global index order (docs/xtts-cache-verify.md, "Content digest"), which depends neither on the
 * LMDB page layout nor on where shard boundaries fall, so two builds can be compared.
 */
#ifndef XTTS_CACHE_VERIFY_H
#define XTTS_CACHE_VERIFY_H

#include <stddef.h>
#include <stdint.h>

#include "common/xtts_common.h"
#include "formats/manifest.h"
#include "formats/record.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One fault. shard is "" for cache-wide faults, index is -1 when no record is named,
 * id is "" when unknown. Strings are valid during the callback only. */
typedef struct {
    const char *shard;
    int64_t index;
    const char *id;
    const char *message;
} xtts_verify_fault;

typedef void (*xtts_verify_fault_fn)(void *ctx, const xtts_verify_fault *f);

/* Rebuild one record from its source audio and compare (what --recompute does per record):
 * the cache build's xtts_recompute_record (prep/melcache/recompute.h), set by the program.
 * *max_abs: the largest |stored - recomputed| mel value; *wave_diff (wave not NULL): the
 * stored waveform's samples that differ. */
typedef xtts_status (*xtts_verify_recompute_fn)(const xtts_cache_config *cfg, const char *audio_path,
                                                const xtts_record_header *h, const float *mel, size_t stride,
                                                const int16_t *wave, double *max_abs, size_t *wave_diff,
                                                xtts_error *err);

typedef struct {
    int deep;                  /* also: padding content, token ids within the vocabulary, mel
                                  statistics and totals recomputed against the manifest */
    uint64_t recompute;        /* recompute this many random records from their source audio */
    uint64_t seed;             /* picks the records to recompute */
    double recompute_tol;      /* largest absolute difference allowed (0: 1e-3, fp16: 2e-2) */
    xtts_verify_recompute_fn recompute_fn; /* needed by recompute > 0; NULL: reported as not
                                  available (recompute_available = 0) */
    int progress;              /* force a progress line on stderr */
    xtts_verify_fault_fn on_fault;
    void *ctx;
} xtts_verify_options;

typedef struct {
    uint64_t manifest_records; /* "records" of the manifest */
    uint64_t records_checked;  /* records read and decoded */
    uint64_t records_ok;       /* records without any fault */
    uint64_t shards, shards_ok;
    uint64_t faults;
    uint64_t train, val;
    uint64_t frames, tokens, samples;
    uint64_t ids;              /* entries of the "ids" databases */
    uint64_t recomputed, recompute_failed;
    double recompute_max_abs;  /* largest |stored - recomputed| seen */
    int recompute_available;   /* 0: recomputing was not possible in this build */
    uint64_t codes_dirs;       /* audio codes directories (codes-<hash>/) checked */
    uint64_t codes_records;    /* records whose codes were found whole, summed over them */
    uint64_t codes_entries;    /* entries they hold (those of records no longer in the cache included) */
    uint64_t codes_stale;      /* of those, entries of no record the cache holds (an update dropped it) */
    char digest[65];           /* hex SHA-256 */
    int digest_complete;       /* 1: every record of the manifest went into the digest */
} xtts_verify_report;

void xtts_verify_options_defaults(xtts_verify_options *o);

/* Verify dir. Returns XTTS_OK when the run went through (faults, if any, are counted in
 * rep->faults and were passed to opt->on_fault); an error status only when nothing could
 * be checked (manifest unreadable) or memory ran out — that is also reported as a fault.
 * Errors: those of xtts_cache_open_ex with XTTS_CACHE_OPEN_TOLERANT (the manifest's:
 * XTTS_ENOTFOUND, XTTS_EIO, XTTS_ERANGE, XTTS_EINPUT, XTTS_EMISMATCH, XTTS_ECORRUPT; XTTS_ENOMEM),
 * and XTTS_ENOMEM. Every other fault is counted in rep, not returned. */
xtts_status xtts_verify_cache(const char *dir, const xtts_verify_options *opt, xtts_verify_report *rep,
                              xtts_error *err);

/* Feed one decoded record into a content digest: the canonical bytes of docs/xtts-cache-verify.md
 * ("Content digest"). mel is float32 [n_mels][stride] holding the real frames first. */
void xtts_digest_record(xtts_sha256 *s, const xtts_record_header *h, const int32_t *tokens, const float *mel,
                        size_t stride);

#ifdef __cplusplus
}
#endif
#endif
