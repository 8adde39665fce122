/* tokenize_run.h — the whole of xtts-tokenize as a library call: read a transcript list
 * (LJSpeech or TSV), pick each record's language, normalize, tokenize, and write the token
 * stream (formats/tokens.md) in input order, in parallel. The program's main() only parses
 * options and calls xtts_tokenize_run().
 */
#ifndef XTTS_TOKENIZE_RUN_H
#define XTTS_TOKENIZE_RUN_H

#include <stdio.h>

#include "common/xtts_common.h"
#include "prep/tokenizer.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest metadata file read (1 GiB); larger or endless inputs stop with XTTS_EINPUT. */
#define XTTS_METADATA_MAX_BYTES ((size_t)1 << 30)

typedef enum { XTTS_META_LJSPEECH = 0, XTTS_META_TSV = 1 } xtts_meta_format;

typedef struct {
    const char *input;          /* metadata path, "-" for stdin; the name in messages */
    const char *input_data;     /* if not NULL: the metadata itself (input_len bytes), not read from input */
    size_t input_len;
    xtts_meta_format format;
    const char *audio_dir;      /* NULL: ljspeech <dir>/wavs, tsv <dir> (dir = the metadata's) */
    int lang;                   /* XTTS language index, or -1 for auto */
    const xtts_tokenizer *tok;
    int max_tokens;             /* records with more ids are rejected */
    int shard_k, shard_n;       /* keep records i with i % shard_n == shard_k */
    int threads;                /* 0: OpenMP default */
    const char *rejects_path;   /* NULL: none */
    int progress;               /* force the progress line */
    int expand;                 /* expand numbers/abbreviations/symbols */
    int lowercase;              /* -1: as the tokenizer wants, 0 no, 1 yes */
    int quiet;                  /* no per-record reject lines on stderr */
} xtts_tokenize_opts;

typedef struct {
    size_t records;      /* data lines in the input (all shards) */
    size_t selected;     /* records in this shard */
    size_t written;
    size_t rejected;
    size_t digits_kept;  /* records in languages without number expansion that kept digits */
    size_t lang_fallback;/* records given the majority language because detection was unsure */
    int majority_lang;   /* -1 when not auto */
    size_t per_lang[XTTS_N_LANGS];
} xtts_tokenize_stats;

void xtts_tokenize_opts_init(xtts_tokenize_opts *o);

/* Run. Writes the header and records to out. Rejected records are reported (stderr and
 * rejects file) and counted, not errors. Returns XTTS_OK when the run finished (check
 * stats->rejected), or the status that stopped it (unreadable input, bad header row, write
 * failure) with err set. */
xtts_status xtts_tokenize_run(const xtts_tokenize_opts *o, FILE *out, xtts_tokenize_stats *stats, xtts_error *err);

#ifdef __cplusplus
}
#endif
#endif
