/* metadata.h — the one reader of dataset metadata (docs/datasets.md).
 *
 * A table of formats, each a small entry: how its lines or directory tree are laid out,
 * where its audio lives, which fields it fills (id, audio path, text, speaker, language,
 * split). Open a reader on a file, a directory or a buffer, call xtts_meta_next() until it
 * returns 0, close it. Entries are borrowed from the reader and valid until the next call.
 *
 * Every read of outside bytes is bounded: lines longer than XTTS_META_MAX_LINE make that
 * record a rejected one, directory walks stop at a fixed depth and count, and .gz input
 * (lhotse) is decompressed as a stream.
 */
#ifndef XTTS_METADATA_H
#define XTTS_METADATA_H

#include <stddef.h>

#include "common/xtts_common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    XTTS_META_AUTO = -1,
    XTTS_META_LJSPEECH = 0,
    XTTS_META_TSV,
    XTTS_META_COQUI,
    XTTS_META_VCTK,
    XTTS_META_LIBRITTS,
    XTTS_META_COMMONVOICE,
    XTTS_META_MAILABS,
    XTTS_META_NEMO,
    XTTS_META_LHOTSE,
    XTTS_META_N_FORMATS
} xtts_meta_format;

#define XTTS_META_MAX_LINE (1u << 20)   /* bytes per metadata line */
#define XTTS_META_MAX_BYTES ((size_t)1 << 30) /* a metadata file (or standard input) is read up to 1 GiB */
#define XTTS_META_MAX_FILES (1u << 24)  /* files a directory walk visits */

/* The format's name ("ljspeech", ...), or "auto". */
const char *xtts_meta_format_name(xtts_meta_format f);
/* Parse a format name ("auto" included); -2 when unknown. */
int xtts_meta_format_parse(const char *name);
/* The names, space separated, for messages and --help. */
const char *xtts_meta_format_list(void);

typedef struct {
    const char *path;        /* file or directory; "-" for stdin; the name in messages */
    const char *data;        /* if not NULL: the metadata itself (len bytes), read instead of path */
    size_t len;
    xtts_meta_format format; /* XTTS_META_AUTO: recognise (and say so on stderr unless quiet) */
    const char *audio_dir;   /* overrides where relative audio paths resolve */
    int original_text;       /* libritts: the original text instead of the normalized one */
    const char *vctk_mic;    /* vctk 0.92: "mic1" (default) or "mic2" */
    const char *text_column; /* if not NULL: the column (or JSON key) the text is read from, where a
                                layout has several (docs/datasets.md, "Text columns") */
    int quiet;               /* no notices on stderr */
} xtts_meta_options;

/* One record. Strings are never NULL ("" when the format has no such field). When reject
 * is not NULL the record is malformed: it says why, and only line and whatever fields were
 * read (often id) are meaningful. lang is the code as the dataset spells it (mapped to a
 * BCP-47 form: "en_US" -> "en-US"); split is "", "train", "val" or "test". */
typedef struct {
    const char *source;      /* file the record came from (for messages) */
    size_t line;             /* 1-based line in source (0 for one-file-per-record formats) */
    const char *id, *audio, *text, *speaker, *lang, *split;
    const char *reject;
} xtts_meta_entry;

typedef struct xtts_meta_reader xtts_meta_reader;

void xtts_meta_options_defaults(xtts_meta_options *o);

/* Open a reader. With format auto, recognises the format from the path and its first
 * lines, or fails (XTTS_EINPUT) naming what it saw when unsure. A directory that is no tree
 * format is read through its metadata files: metadata_train.csv, metadata_eval.csv and
 * metadata_val.csv as the train and val splits, else metadata.csv; which files are read
 * is said on stderr unless quiet.
 * Errors: XTTS_EIO (path cannot be opened, a missing path included, or a read error),
 * XTTS_EINPUT (format not recognised, a directory without metadata files or given to a format
 * that reads one file, empty input, a bad or missing header row, a header naming several text
 * columns none of which is `text`, a lhotse set without its companion, a tree without
 * transcripts, a file over the size limit), XTTS_EUSAGE (a text_column the format or the
 * header does not have, or one that contradicts original_text), XTTS_ENOMEM. */
xtts_status xtts_meta_open(const xtts_meta_options *o, xtts_meta_reader **out, xtts_error *err);

/* The format being read (auto resolved). */
xtts_meta_format xtts_meta_reader_format(const xtts_meta_reader *r);

/* 1 if the input names a language per record (a lang column, a locale, a tree level). */
int xtts_meta_reader_has_lang(const xtts_meta_reader *r);

/* Next record: 1 with e filled, 0 at the end, -1 on an error that stops reading (err set:
 * "file:line: what"). A malformed record is not an error: it comes back with e->reject. */
int xtts_meta_next(xtts_meta_reader *r, xtts_meta_entry *e, xtts_error *err);

/* Free the reader (NULL is allowed). */
void xtts_meta_close(xtts_meta_reader *r);


#ifdef __cplusplus
}
#endif
#endif
