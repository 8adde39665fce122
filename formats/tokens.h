/* tokens.h — the token stream codec (formats/tokens.md, version 1).
 *
 * The token stream is the UTF-8 TSV that xtts-tokenize writes and xtts-melcache reads:
 * one header line "#xtts-tokens 1" with key=value fields, then one line per record:
 *   id \t speaker \t lang \t audio_path \t token ids (space separated) \t normalized text
 * Fields are escaped (\\ \t \n \r) so that they never hold a raw tab or newline.
 *
 * Reading: open a reader on a FILE (it reads and validates the header line), then call
 * xtts_tokens_reader_next() until it returns 0. Records are borrowed from the reader's
 * buffers and stay valid until the next call. The reader reads the FILE ahead, a block at a
 * time: while it is open, the FILE's position is not that of the next record (use
 * xtts_tokens_reader_tell and _seek). Writing: xtts_tokens_write_header() once,
 * then xtts_tokens_format_record() into a caller-owned buffer (thread-safe, so records can
 * be formatted in parallel) and fwrite() the buffers in order.
 */
#ifndef XTTS_TOKENS_H
#define XTTS_TOKENS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/xtts_common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define XTTS_TOKENS_MAGIC "#xtts-tokens"
#define XTTS_TOKENS_VERSION 1
#define XTTS_TOKENS_MAX_LINE (16u << 20)  /* bytes per line, header included */
#define XTTS_TOKENS_MAX_BYTES ((uint64_t)8 << 30)  /* bytes per stream: endless inputs stop */
#define XTTS_TOKENS_MAX_EXTRA 16          /* extra header key=value pairs kept */
#define XTTS_TOKENS_MAX_IDS (1 << 20)     /* max_tokens upper bound */

/* One header key=value pair that the codec does not interpret (kept in order). */
typedef struct {
    char key[32];
    char value[224];
} xtts_tokens_kv;

/* The header line. Required keys: tokenizer, vocab_hash, vocab_size, lang, max_tokens,
 * pad_id. Any other key is kept in extra[] and written back in order. */
typedef struct {
    int version;            /* XTTS_TOKENS_VERSION */
    char tokenizer[32];     /* "bytes", "bpe", "phonemes" ([a-z0-9_-]+) */
    char vocab_hash[72];    /* "sha256:" + 64 lower-case hex */
    int vocab_size;         /* every token id is in [0, vocab_size) */
    char lang_mode[16];     /* an XTTS language code, "auto" or "column" */
    int max_tokens;         /* no record has more token ids than this */
    int pad_id;             /* the id to pad token sequences with, in [0, vocab_size) */
    size_t n_extra;
    xtts_tokens_kv extra[XTTS_TOKENS_MAX_EXTRA];
} xtts_tokens_header;

/* One record. On reading, every pointer is borrowed from the reader and valid until the
 * next xtts_tokens_reader_next() or close. speaker may be "" (no speaker). lang is an
 * language code (xtts_lang_tag_valid; XTTS's 17 keep their spelling). audio_path is as written (absolute when
 * xtts-tokenize wrote it). */
typedef struct {
    const char *id, *speaker, *lang, *audio_path, *text;
    const int32_t *tokens;
    size_t n_tokens;
    const char *split;     /* NULL: the stream has no split field; else (header fields=split...)
                              "train", "val", "test" or "" (not assigned) */
    const char *orig_text; /* NULL: the stream has no original-text field; else (header
                              fields=...text) the transcript before normalization */
    /* Set only by a reader in lenient mode (xtts_tokens_reader_lenient): the line is well
     * formed but the record cannot be stored (unknown language, more than max_tokens ids,
     * an id over XTTS_ID_MAX_BYTES); the reason, borrowed like the rest. NULL otherwise. */
    const char *reject;
} xtts_tokens_record;

typedef struct xtts_tokens_reader xtts_tokens_reader;

/* Fill h with defaults (version 1, pad_id 0, max_tokens 512, everything else empty). */
void xtts_tokens_header_defaults(xtts_tokens_header *h);

/* Add or replace an extra header pair. Returns XTTS_EINPUT for a bad key or value
 * (empty, too long, holding '=', tab, newline or a required key's name) and XTTS_ERANGE
 * when extra[] is full.
 * Errors: XTTS_EINPUT, XTTS_ERANGE (as above). */
xtts_status xtts_tokens_header_set(xtts_tokens_header *h, const char *key, const char *value, xtts_error *err);

/* Value of an extra header key, or NULL. */
const char *xtts_tokens_header_get(const xtts_tokens_header *h, const char *key);

/* Check a header's fields (what the reader checks after parsing and the writer before
 * writing). name is used in the message.
 * Errors: XTTS_EMISMATCH (a version other than this build's), XTTS_EINPUT (any other field,
 * or an extra pair, is bad). */
xtts_status xtts_tokens_header_validate(const xtts_tokens_header *h, const char *name, xtts_error *err);

/* Open a reader on f (not closed by the reader); reads and validates the header line.
 * name (file name, "-" for stdin) prefixes every error: "name:LINE: what". On success
 * *out is a new reader; free it with xtts_tokens_reader_close().
 * Errors: XTTS_EINPUT (empty input, no magic, a malformed, duplicate or missing header key, a
 * bad value, a header line over XTTS_TOKENS_MAX_LINE), XTTS_EMISMATCH (an unsupported stream
 * version), XTTS_EIO (a read error), XTTS_ENOMEM. With err NULL, a failed first read (XTTS_EIO,
 * XTTS_ENOMEM) comes back as XTTS_EINPUT. */
xtts_status xtts_tokens_reader_open(FILE *f, const char *name, xtts_tokens_reader **out, xtts_error *err);

/* The header read by xtts_tokens_reader_open(). Never NULL for an open reader. */
const xtts_tokens_header *xtts_tokens_reader_header(const xtts_tokens_reader *r);

/* Read the next record into rec. Returns 1 with a record, 0 at end of input, -1 on error
 * (err says "name:LINE: what"; the reader may be called again to skip to the next line,
 * or closed; after a line longer than XTTS_TOKENS_MAX_LINE or a stream longer than
 * XTTS_TOKENS_MAX_BYTES, close it: the rest of that line is not read). Checks: six fields, valid UTF-8, non-empty id, audio_path and text, a known
 * language, 1..max_tokens ids each in [0, vocab_size). */
int xtts_tokens_reader_next(xtts_tokens_reader *r, xtts_tokens_record *rec, xtts_error *err);

/* Lenient mode (on != 0): a record with an unknown language, more than max_tokens ids or
 * an id over XTTS_ID_MAX_BYTES is returned (1) with rec->reject saying why (and no token
 * ids), for the caller to reject that record alone; by default such a line is an error. */
void xtts_tokens_reader_lenient(xtts_tokens_reader *r, int on);

/* The 1-based number of the line last read (the header is line 1). */
size_t xtts_tokens_reader_line(const xtts_tokens_reader *r);

/* Where the reader stands: the byte offset of the next line in the stream (counted from
 * where it was opened) and the number of the line last read. */
typedef struct {
    uint64_t offset;
    size_t line_no;
} xtts_tokens_pos;

/* The position before the next line; xtts_tokens_reader_seek() returns there, so that the
 * next xtts_tokens_reader_next() reads that line again (a pass that skips records it has no
 * use for). The stream must be seekable and opened at its offset 0.
 * Errors of _seek: XTTS_EIO (fseeko failed). */
void xtts_tokens_reader_tell(const xtts_tokens_reader *r, xtts_tokens_pos *pos);
xtts_status xtts_tokens_reader_seek(xtts_tokens_reader *r, const xtts_tokens_pos *pos, xtts_error *err);

/* Free the reader and its buffers (NULL is allowed). */
void xtts_tokens_reader_close(xtts_tokens_reader *r);

/* Validate h and write the header line to f.
 * Errors: those of xtts_tokens_header_validate (XTTS_EMISMATCH, XTTS_EINPUT), XTTS_EIO (f's
 * error flag is set after writing). */
xtts_status xtts_tokens_write_header(FILE *f, const xtts_tokens_header *h, xtts_error *err);

/* Format one record line (with its final '\n') into *buf, growing it with realloc as
 * needed (*buf may be NULL with *cap 0; the caller frees it). *len is set to the line's
 * length (the buffer is also NUL-terminated). Escapes \\, tab, newline and CR in the text fields. Rejects (XTTS_EINPUT, message
 * naming the record id) an empty id, audio_path or text, an unknown language, no tokens
 * or a negative token id, and invalid UTF-8. Does not know the header, so range checks
 * against vocab_size/max_tokens are the caller's. Thread-safe.
 * Errors: XTTS_EINPUT (as above; also a control character in a field, a bad split), XTTS_ENOMEM
 * (*buf cannot grow). */
xtts_status xtts_tokens_format_record(const xtts_tokens_record *rec, char **buf, size_t *cap, size_t *len,
                                      xtts_error *err);

/* 1 if s[0..n) is valid UTF-8 (no overlongs, surrogates or code points past U+10FFFF). */
int xtts_utf8_valid(const char *s, size_t n);

#ifdef __cplusplus
}
#endif
#endif
