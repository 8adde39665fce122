/* inputs.h — a build's inputs: the token stream's records, read in two passes (private to
 * prep/melcache).
 *
 * The inputs are streamed, never held: a first pass over the token stream counts the
 * records and builds the speaker table (every part of a build must agree on it, so it comes
 * from the whole stream); the second pass hands records to the pipeline one at a time. A
 * stream that cannot be read twice (a pipe, stdin) is copied to a temporary file as the
 * first pass reads it. Memory is bounded by the speaker table, not by the number of records.
 * The first pass opens with the header (what the configuration takes from the stream), and
 * either reads its records at once (xtts_melcache_inputs_scan_rest) or hands each input to a
 * caller that has a use for it (an update's plan, plan_walk.c) before it ends.
 * The second pass also carries the running digest of the content keys of the inputs it has
 * handed out (what a resume checks, resume.h).
 */
#ifndef XTTS_PREP_MELCACHE_INPUTS_H
#define XTTS_PREP_MELCACHE_INPUTS_H

#include <stdint.h>
#include <stdio.h>

#include "cache/store/exclude.h"
#include "common/xtts_common.h"
#include "formats/manifest.h"
#include "formats/tokens.h"

/* One input record, owning its strings. */
typedef struct {
    char *id, *audio_path;
    char *speaker;          /* its name ("default" for none) */
    int speaker_id, lang_id;
    int split;              /* the stream's split field: -1 none (--val-fraction decides), else xtts_split */
    char *lang;
    int32_t *tokens;
    uint32_t n_tokens;
    char *text, *orig_text; /* normalized and original (may be "") text, stored in the record */
    char *reject;           /* the token stream's reason to reject this record (formats/tokens.h), or NULL */
} xtts_melcache_input;

typedef struct { uint64_t *keys; int *vals; size_t cap; } xtts_melcache_speaker_map;

typedef struct {
    size_t n;               /* records (test split excluded) */
    uint64_t lo, hi;        /* this part's block of them, [lo, hi) (the whole stream without --part) */
    char **speakers;        /* [n_speakers], in the bytewise order of the names */
    size_t n_speakers, cap_speakers;
    xtts_melcache_speaker_map spk;
    xtts_tokens_header hdr;
    /* the cache's language table: XTTS's 17, then the stream's languages= list */
    char langs[XTTS_MAX_LANGS][16];
    int n_langs;
    size_t n_test;          /* records of the test split, held out of the cache */
    const xtts_exclude *exclude; /* ids left out (--exclude), or NULL */
    double val_fraction;    /* --val-fraction (the first pass counts the records it puts in val) */
    size_t n_excluded;      /* records of the stream left out by it */
    uint64_t split_given, val_by_fraction;
    /* the first pass, while it is open */
    xtts_tokens_reader *scan_r;
    FILE *scan_src;         /* what scan_r reads: the stream, or a copy-as-you-read of it into spool */
    struct xtts_melcache_tee *tee; /* that copy's state (inputs.c) */
    /* the second pass */
    FILE *f;                /* the stream (seekable), or the spool */
    FILE *spool;            /* owned temporary copy of a stream that cannot seek */
    const char *name;
    xtts_tokens_reader *r;
    uint64_t next;          /* index of the next record the second pass returns */
    xtts_sha256 keys_ctx;   /* the content keys of the inputs added (xtts_melcache_inputs_add_key) */
} xtts_melcache_inputs;

/* Whether id falls in the validation split by --val-fraction: a hash of the id, so that
 * sharded builds agree (the split of a record whose stream gives none). */
int xtts_melcache_is_val(const char *id, double val_fraction);

/* The first pass over f (named name in messages) opened: the header and its languages read
 * (in->hdr, in->langs). On error in holds nothing to free.
 * Errors: XTTS_EIO (the temporary copy), XTTS_ENOMEM, XTTS_EINPUT (a bad languages= header),
 * those of xtts_tokens_reader_open. */
xtts_status xtts_melcache_inputs_open(FILE *f, const char *name, double val_fraction, const xtts_exclude *exclude,
                                      xtts_melcache_inputs *in, xtts_error *err);
/* The first pass's next input (the test split and excluded ids are counted and passed by)
 * into x, which owns its strings as with xtts_melcache_inputs_next, and where the reader stood
 * before its line into pos; its speaker_id is its speaker's place in the order of first
 * appearance until the pass ends. The input's index is in->n - 1. Returns 1, 0 at the end of
 * the stream, -1 on error (err set: XTTS_ENOMEM, the reader's). */
int xtts_melcache_inputs_scan_next(xtts_melcache_inputs *in, xtts_melcache_input *x, xtts_tokens_pos *pos,
                                   xtts_error *err);
/* The first pass ended: the speakers numbered in the order of their names; lo and hi span the
 * whole stream. renumber (NULL: not wanted) takes a malloc'd map from the place of first
 * appearance to that number, [n_speakers]. On error in holds nothing to free.
 * Errors: XTTS_EIO (the temporary copy), XTTS_ENOMEM, XTTS_EINPUT (no records). */
xtts_status xtts_melcache_inputs_scan_end(xtts_melcache_inputs *in, int **renumber, xtts_error *err);
/* The rest of the first pass (counts and speaker table only), ended.
 * Errors: those of _scan_next and _scan_end. */
xtts_status xtts_melcache_inputs_scan_rest(xtts_melcache_inputs *in, xtts_error *err);
/* Everything the scan and the second pass hold. */
void xtts_melcache_inputs_free(xtts_melcache_inputs *in);
void xtts_melcache_input_free(xtts_melcache_input *x);

/* The second pass: the next record (the test split and excluded ids skipped) into x, which
 * owns its strings (its previous ones are freed).
 * Errors: XTTS_EIO (the stream changed), XTTS_ENOMEM, the reader's. */
xtts_status xtts_melcache_inputs_next(xtts_melcache_inputs *in, xtts_melcache_input *x, xtts_error *err);
/* Position the second pass at input target (from the first record when it is behind). */
xtts_status xtts_melcache_inputs_seek(xtts_melcache_inputs *in, uint64_t target, xtts_error *err);

/* Position the second pass at input target, whose line the reader found at pos (its
 * position before reading it, xtts_tokens_reader_tell) in an earlier pass over the same stream.
 * Errors: XTTS_EIO. */
xtts_status xtts_melcache_inputs_jump(xtts_melcache_inputs *in, uint64_t target, const xtts_tokens_pos *pos,
                                      xtts_error *err);

/* The running digest: cleared, one key added, the digest of the keys added so far. */
void xtts_melcache_inputs_clear_keys(xtts_melcache_inputs *in);
void xtts_melcache_inputs_add_key(xtts_melcache_inputs *in, const uint8_t key[32]);
/* n keys, one after the other (keys[n][32]), as n calls of xtts_melcache_inputs_add_key. */
void xtts_melcache_inputs_add_keys(xtts_melcache_inputs *in, const uint8_t *keys, uint64_t n);
void xtts_melcache_inputs_digest(const xtts_melcache_inputs *in, uint8_t out[32]);

#endif
