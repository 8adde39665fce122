/* manifest.h — the cache manifest codec (formats/cache.md, "Manifest", version 1) and
 * the cache configuration it carries.
 *
 * manifest.json is JSON through jansson with at least the top-level keys
 * "format_version", "records", "config", "config_hash", "shards", "stats". The
 * configuration hash covers every option that changes stored bytes, plus
 * XTTS_ALGO_VERSION, which is bumped whenever a code change changes stored output.
 *
 * Readers take a loaded manifest as plain C values (xtts_manifest_info), and a build says
 * what it adds to the manifest the same way (xtts_manifest_extra); the JSON codec functions
 * (the ones with a json_t) are for the writers of manifests in cache/, which include
 * <jansson.h> themselves: this header does not, so that nothing above formats/ sees jansson
 * through it.
 */
#ifndef XTTS_MANIFEST_H
#define XTTS_MANIFEST_H

#include <stddef.h>
#include <stdint.h>

#include "common/mel_params.h"
#include "common/xtts_common.h"
#include "formats/tokens.h"

#ifdef __cplusplus
extern "C" {
#endif

#define XTTS_MANIFEST_VERSION 2      /* written by default */
#define XTTS_MANIFEST_VERSION_MIN 1  /* the oldest read */
#define XTTS_MANIFEST_VERSION_SHARED 3 /* a cache whose shard entries are ranges of shard
                                          directories ("local_first", base-NNNNN; written by
                                          an update that shares an old cache's shards) */
/* Bump when any change to decoding, resampling, mel or record layout changes output. */
#define XTTS_ALGO_VERSION 2
#define XTTS_MAX_BUCKETS 16

typedef struct json_t json_t; /* jansson's, as <jansson.h> declares it */

typedef struct {
    xtts_mel_params mel;
    char tokenizer[32];      /* "bytes", "bpe", "phonemes" */
    char vocab_hash[72];     /* sha256 hex of the vocabulary (or of the built-in table) */
    int vocab_size;
    int max_tokens;          /* tokens are padded to this */
    int pad_token;           /* id used for token padding */
    int max_frames;          /* frames are padded to this, or to the smallest bucket */
    int n_buckets;
    int buckets[XTTS_MAX_BUCKETS];
    int dtype;               /* xtts_dtype */
    int shuffle;             /* XTTS_RECORD_SHUFFLED used */
    int zstd_level;
    char resampler[16];      /* "soxr" or "libsamplerate" */
    char resample_quality[16];
    double trim_db;          /* 0 = off */
    double val_fraction;
    int algo_version;        /* XTTS_ALGO_VERSION of the build that wrote it */
    int audio;               /* xtts_audio_store: the waveform section (format 2 only) */
    int format_version;      /* 2: records of version 2, "audio" in the JSON, lengths
                                databases; 1: an older cache (records of version 1, no
                                "audio" key, so its hash is unchanged). From the JSON: 2
                                exactly when the "audio" key is present. */
} xtts_cache_config;

/* The shard meta "format" value of a cache format version: "xtts-cache 1" or "xtts-cache 2". */
const char *xtts_cache_format_name(int format_version);

/* Defaults: preset xtts, bytes tokenizer, max_tokens 512, max_frames 1024, fp16, zstd 1,
 * soxr HQ, no trim, no validation split. */
void xtts_cache_config_defaults(xtts_cache_config *c);

/* Config <-> JSON object. from_json checks every field's type and range.
 * Errors (from_json): XTTS_EINPUT only (not an object, an unknown, missing, mistyped or
 * out-of-range key). */
json_t *xtts_cache_config_to_json(const xtts_cache_config *c);
xtts_status xtts_cache_config_from_json(const json_t *j, xtts_cache_config *c, const char *where,
                                        xtts_error *err);

/* SHA-256 hex over the canonical (sorted, compact) JSON of the config. */
void xtts_cache_config_hash(const xtts_cache_config *c, char out_hex[65]);

/* Frames a record of n_frames is padded to: the smallest bucket >= n_frames, or
 * max_frames without buckets. 0 when it fits nowhere (the record is rejected). */
int xtts_cache_config_padded_frames(const xtts_cache_config *c, int n_frames);

/* The largest padded length a record of this configuration can have: max_frames or the
 * largest bucket (buckets outside 1..XTTS_RECORD_MAX_FRAMES are not counted). The one
 * place the build, the readers and the trainer take it from. */
int xtts_cache_config_max_padded_frames(const xtts_cache_config *c);

/* Load and validate a manifest: parses the JSON (error names the file, line and column),
 * checks the required keys and their types, format_version, and that config_hash
 * matches config. *out is a new reference the caller releases with json_decref.
 * Errors: those of xtts_read_file (XTTS_ENOTFOUND, XTTS_EIO, XTTS_ERANGE past the manifest size
 * limit, XTTS_ENOMEM) and of xtts_manifest_parse. */
xtts_status xtts_manifest_load(const char *path, json_t **out, xtts_error *err);

/* 1 when two of the first n entries of a manifest's "shards" array conflict: the same shard
 * listed twice, or (shared: format_version 3) one directory's ranges of keys overlapping; also
 * when memory runs out. What the manifest check asks first, by sorting, before it names the
 * first conflicting entry pair by pair. */
int xtts_manifest_shards_conflict(const json_t *shards, size_t n, int shared);

/* Same checks on an in-memory JSON text (used by load and by the fuzz target).
 * Errors: XTTS_EINPUT (invalid JSON, including a duplicate key; a missing, mistyped or
 * inconsistent key; a bad config), XTTS_EMISMATCH (format_version outside what this build
 * reads), XTTS_ECORRUPT (config_hash does not match the config). */
xtts_status xtts_manifest_parse(const char *text, size_t len, const char *name, json_t **out,
                                xtts_error *err);

/* Write a manifest atomically (temporary file, fsync, rename, fsync of the directory),
 * pretty-printed with sorted keys.
 * Errors: XTTS_ENOMEM (cannot serialize), and those of xtts_write_file_atomic (XTTS_EIO,
 * XTTS_ERANGE for a path too long). */
xtts_status xtts_manifest_write(const char *path, const json_t *manifest, xtts_error *err);

/* What a build adds to the manifest beside what the cache writer fills (formats/cache.md,
 * "Manifest"), as xtts_record_input is a record's: the caller sets what the build has (a
 * designated initializer) and every field left zero adds nothing; every pointer is the
 * caller's, read while the manifest is made. */
typedef struct {
    int has_speakers;                   /* "speakers": the name of each speaker id */
    const char *const *speakers;
    size_t n_speakers;
    const char *const *languages;       /* "languages": the code of each language id; NULL: XTTS's
                                           17 (xtts_lang_codes) */
    size_t n_languages;
    int has_splits;                     /* "splits": the records put in each split */
    uint64_t split_train, split_val;
    int has_totals;                     /* "totals": sums over the stored records; "hours" is
                                           audio_seconds / 3600 */
    double audio_seconds;
    uint64_t total_frames, total_tokens;
    uint64_t stats_frames;              /* "stats"."frames": the frames the sums cover (0 when
                                           there are none: "stats" is always written) */
    size_t n_mels;                      /* values in each "stats" array below */
    const double *mel_sum, *mel_sumsq;  /* "stats"."mel_sum" / "mel_sumsq" / "mel_mean" / */
    const double *mel_mean, *mel_std;   /* "mel_std": each NULL: no key */
    const xtts_tokens_header *token_stream; /* "token_stream": its tokenizer, vocab_hash,
                                           vocab_size and lang; NULL: no key */
} xtts_manifest_extra;

/* extra as the JSON object of its manifest keys (a new reference; NULL when out of memory).
 * A number JSON cannot hold (not finite) is left out: from a "stats" array, which the cache
 * writer's check of the manifest then refuses by name, or as the whole of "totals". */
json_t *xtts_manifest_extra_to_json(const xtts_manifest_extra *x);

/* One shard as the manifest lists it. */
typedef struct {
    char name[24];                /* "shard-NNNNN", "shard-KKKKK-NNNNN" or (format_version 3)
                                     "base-NNNNN" */
    uint64_t records, bytes, first_index;
    uint64_t local_first;         /* the shard's local key of the entry's first record
                                     ("local_first", format_version 3; else 0) */
} xtts_manifest_shard;

/* A manifest as plain C values: what the readers, the verifier and the trainer take from it
 * (formats/cache.md, "Manifest"). An optional key the manifest lacks reads as absent: its
 * has_ flag 0, its count 0, its array NULL. */
typedef struct {
    int format_version;
    uint64_t records;                   /* "records" */
    xtts_cache_config config;           /* "config" */
    char config_hash[65];               /* "config_hash" (checked against config) */
    size_t n_shards;                    /* "shards", in order */
    xtts_manifest_shard *shards;
    int has_speakers;                   /* "speakers" present (an empty table holds no id) */
    size_t n_speakers;                  /* "speakers": the name of each speaker id */
    char **speakers;
    int has_languages;                  /* "languages": the code of each language id */
    size_t n_languages;
    char **languages;
    int has_split_train, has_split_val; /* "splits": the records the build put in each */
    int64_t split_train, split_val;
    int has_rejected;                   /* "rejected": inputs the build rejected */
    uint64_t rejected;
    int has_rejects;                    /* "rejects": the list of them, n_rejects long */
    size_t n_rejects;
    int has_total_frames, has_total_tokens; /* "totals": sums over the stored records */
    int64_t total_frames, total_tokens;
    uint64_t stats_frames;              /* "stats"."frames" (0 when absent) */
    double *mel_mean, *mel_std;         /* "stats"."mel_mean" / "mel_std": config.mel.n_mels
                                           values each */
} xtts_manifest_info;

/* Load path as xtts_manifest_load does (every check above) and fill info with its values.
 * The caller frees info with xtts_manifest_info_free, also after a failure.
 * Errors: those of xtts_manifest_load; XTTS_ENOMEM. */
xtts_status xtts_manifest_info_init(xtts_manifest_info *info, const char *path, xtts_error *err);
void xtts_manifest_info_free(xtts_manifest_info *info);

/* "n_parts" of a partial manifest (manifest.part-KKKKK.json) at path, read without the
 * checks above (it serves a message about an unfinished build): 1..999999, or 0 when the
 * file cannot be read or parsed or holds no such count. */
int xtts_manifest_part_count(const char *path);

#ifdef __cplusplus
}
#endif
#endif
