/* update.h — the content key of a token-stream record: what decides whether a stored
 * record can be carried into another build (xtts-melcache --update, --reuse) and whether a
 * stored build is this stream's (resuming).
 *
 * The key is a SHA-256 over everything the stored record depends on: the configuration
 * hash, the audio file's content (a 64-bit hash of its bytes and their count, not its
 * path or time stamps), the id,
 * speaker name, language code, the stream's split field, the token ids, the normalized and
 * the original text, and the stream's own reason to reject the record (formats/cache.md,
 * "Content keys"). Moving the dataset changes no key; re-recording a file does, whatever
 * its name and modification time.
 */
#ifndef XTTS_MELCACHE_UPDATE_H
#define XTTS_MELCACHE_UPDATE_H

#include <stddef.h>
#include <stdint.h>

#include "common/xtts_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Audio files' content hashes, remembered by file identity (device, inode) with the file's
 * size, modification and change times in nanoseconds, as git's index remembers them: a file
 * whose stat still matches is not read again. Within a run a file that many records share is
 * read once; across runs the hasher saves its stat records (xtts_audio_hasher_save) and a later
 * run loads them (xtts_audio_hasher_load), so that an update reads only the files whose stat
 * changed. A copied or moved dataset (other inodes, or other change times) is read once more.
 * The change time is the safeguard: `touch -r` can set a re-recorded file's modification time
 * back, never its change time. Thread-safe. */
typedef struct xtts_audio_hasher xtts_audio_hasher;

/* Errors: XTTS_ENOMEM. */
xtts_status xtts_audio_hasher_new(xtts_audio_hasher **out, xtts_error *err);
/* NULL is allowed. */
void xtts_audio_hasher_delete(xtts_audio_hasher *h);
/* The content hash of path's bytes into out (their XXH64 with seed 0, then their count,
 * each as 8 bytes LE, then 16 zero bytes): 0, or -1 when it cannot be read (out is then
 * all zero: such a record is rejected when it is computed, and its key says so). A file
 * whose identity and stat match a record the hasher holds is not read. */
int xtts_audio_hasher_hash(xtts_audio_hasher *h, const char *path, uint8_t out[32]);
/* The content hash of the file at path from its stat record alone: 1 (out set) when h holds a
 * record whose identity and stat match, else 0 (out cleared; xtts_audio_hasher_hash reads it).
 * A stat, no open: what an update asks first of every file, on one thread. */
int xtts_audio_hasher_known(xtts_audio_hasher *h, const char *path, uint8_t out[32]);
/* 1 when h holds no stat record (a first build: every file is read). */
int xtts_audio_hasher_empty(const xtts_audio_hasher *h);

/* The stat records of a blob saved by xtts_audio_hasher_save added to h. Of two loaded records
 * of one file the one with the later change time is kept (blobs of several builds may name
 * it); a file h has seen this run keeps its own. A blob that is not one is ignored: the files
 * are read.
 * Errors: XTTS_ENOMEM. */
xtts_status xtts_audio_hasher_load(xtts_audio_hasher *h, const void *blob, size_t len, xtts_error *err);
/* The stat records of the files h read or found unchanged since it was made, as a blob
 * (malloc'd, the caller frees; formats/cache.md, "Stat records"): those whose modification
 * or change time is within a second of the moment they were read are left out, since a
 * change made right after the read could leave the same times (git's "racy" entries).
 * Errors: XTTS_ENOMEM. */
xtts_status xtts_audio_hasher_save(xtts_audio_hasher *h, void **blob, size_t *len, xtts_error *err);
/* Files read, and files whose stat record spared the read, since h was made. */
void xtts_audio_hasher_counts(const xtts_audio_hasher *h, uint64_t *read, uint64_t *known);

/* XXH64 (xxHash's published 64-bit algorithm) of data. */
uint64_t xtts_xxh64(const void *data, size_t len, uint64_t seed);

/* One record's fields, as the token stream gives them. */
typedef struct {
    const char *config_hash;   /* 64 hex digits */
    const uint8_t *audio_hash; /* 32 bytes (xtts_audio_hasher_hash), or NULL when the file cannot be read */
    const char *id, *speaker, *lang;
    int split;                 /* the stream's split: -1 none, else xtts_split */
    const int32_t *tokens;
    uint32_t n_tokens;
    const char *text, *orig_text;
    const char *reject;        /* the stream's reason to reject it, or NULL */
} xtts_content_key_input;

void xtts_content_key(const xtts_content_key_input *in, uint8_t out[32]);

#ifdef __cplusplus
}
#endif
#endif
