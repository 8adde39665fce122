/* tokenize_run.h — the whole of xtts-tokenize as a library call: read a transcript list
 * (any format of prep/dataset/metadata.h), pick each record's language, normalize, tokenize, and write the token
 * stream (formats/tokens.md) in input order, in parallel. The program's main() only parses
 * options and calls xtts_tokenize_run().
 */
#ifndef XTTS_TOKENIZE_RUN_H
#define XTTS_TOKENIZE_RUN_H

#include <stdio.h>

#include "cache/store/exclude.h"
#include "common/xtts_common.h"
#include "prep/dataset/metadata.h"
#include "prep/text/tokenizer/tokenizer.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    const char *input;          /* metadata path, "-" for stdin; the name in messages */
    const char *input_data;     /* if not NULL: the metadata itself (input_len bytes), not read from input */
    size_t input_len;
    xtts_meta_format format;    /* XTTS_META_AUTO (default): recognised, see prep/dataset/metadata.h */
    const char *audio_dir;      /* NULL: ljspeech <dir>/wavs, tsv <dir> (dir = the metadata's) */
    int lang;                   /* XTTS language index, or -1 for auto */
    const char *lang_tag;       /* if not NULL: force this language code (any the tokenizer serves) */
    int original_text;          /* libritts: original instead of normalized text */
    const char *vctk_mic;       /* vctk 0.92: mic1 (default) or mic2 */
    const char *text_column;    /* NULL: the format's text; else the column (or JSON key) to read it from */
    const char *val_list;       /* file of ids for the val split, or NULL */
    const char *test_list;      /* file of ids for the test split, or NULL */
    const xtts_tokenizer *tok;
    int max_tokens;             /* records with more ids are rejected */
    int max_chars;              /* 0: none; -1: reject records longer than XTTS's character limit of
                                   their language (--max-chars auto); N: longer than N characters */
    int shard_k, shard_n;       /* keep records i with i % shard_n == shard_k */
    int threads;                /* 0: OpenMP default */
    const char *rejects_path;   /* NULL: none */
    int progress;               /* force the progress line */
    int expand;                 /* expand numbers/abbreviations/symbols; 0 acts as normalize none */
    int normalize;              /* an xtts_norm_mode (prep/text/normalize/normalize.h), or -1: xtts with an XTTS
                                   vocabulary, spoken otherwise */
    int unify;                  /* normalize xtts: NFC and unification before Coqui's steps */
    int lowercase;              /* -1: as the tokenizer wants, 0 no, 1 yes */
    int quiet;                  /* no per-record reject lines on stderr */
    int verbose;                /* a warning line on stderr per record over XTTS's character limit */
    int keep_text;              /* write the original transcript as the optional 7th field */
    const xtts_exclude *exclude; /* ids to leave out (--exclude, cache/store/exclude.h), or NULL */
} xtts_tokenize_options;

typedef struct {
    size_t records;      /* data lines in the input (all shards) */
    size_t selected;     /* records in this shard */
    size_t written;
    size_t rejected;
    size_t excluded;     /* records left out by the exclude list */
    size_t digits_kept;  /* records in languages without number expansion that kept digits */
    size_t over_char_limit; /* records longer than XTTS's character limit of their language */
    size_t lang_fallback;/* detected records whose language the dataset/speaker prior changed */
    int majority_lang;   /* most frequent detected language; -1 when not auto */
    size_t per_lang[XTTS_N_LANGS];
} xtts_tokenize_stats;

void xtts_tokenize_options_defaults(xtts_tokenize_options *o);

/* Run. Writes the header and records to out. Rejected records are reported (stderr and
 * rejects file) and counted, not errors. Returns XTTS_OK when the run finished (check
 * stats->rejected), or the status that stopped it (unreadable input, bad header row, write
 * failure) with err set.
 * Errors: XTTS_EUSAGE (shard K/N, max_tokens, a --lang the tokenizer does not serve, or a
 * text_column the metadata does not have),
 * those of xtts_read_file for the val/test id lists (XTTS_ENOTFOUND, XTTS_EIO, XTTS_ERANGE,
 * XTTS_ENOMEM; XTTS_EINPUT for a NUL byte), those of xtts_meta_open and of reading the
 * metadata (XTTS_EIO, XTTS_EINPUT, XTTS_ENOMEM), XTTS_EINPUT (too many languages beyond
 * XTTS's 17 for the header; standard input over the size limit), XTTS_EIO (cannot write the
 * rejects file or out, cannot read standard input, a temporary file for the ids fails),
 * XTTS_ENOMEM, and those of writing the header (xtts_tokens_header_set: XTTS_EINPUT,
 * XTTS_ERANGE; xtts_tokens_write_header). */
xtts_status xtts_tokenize_run(const xtts_tokenize_options *o, FILE *out, xtts_tokenize_stats *stats, xtts_error *err);

#ifdef __cplusplus
}
#endif
#endif
