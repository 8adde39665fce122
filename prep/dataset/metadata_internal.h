/* metadata_internal.h — what the files of prep/dataset/ share (metadata.h is the room's face):
 * the table of formats, the bounded line source, the reader's state, the field helpers and
 * the line parser of each format, each in a file of its own:
 *   metadata.c       format detection, opening and the record loop
 *   table.c          the table of formats
 *   lines.c          the bounded line source, paths and the sorted directory walk
 *   fields.c         columns, headers and the helpers that fill an entry's fields
 *   fmt_ljspeech.c   ljspeech and mailabs lines   fmt_columns.c  tsv, coqui, commonvoice
 *   fmt_nemo.c       nemo manifests               fmt_lhotse.c   lhotse cuts and supervisions
 *   fmt_vctk.c       VCTK's text files            fmt_libritts.c LibriTTS's transcripts
 */
#ifndef XTTS_METADATA_INTERNAL_H
#define XTTS_METADATA_INTERNAL_H

#include <jansson.h>
#include <stddef.h>
#include <zlib.h>

#include "common/strbuf.h"
#include "prep/dataset/metadata.h"

typedef enum { KIND_LINES, KIND_TREE } format_kind;

typedef struct {
    const char *name;
    format_kind kind;
    char sep;          /* line formats with fields: the separator; 0 for JSON */
    int header;        /* a header row names the columns */
    int has_lang;      /* fills lang per record */
    const char *default_lang; /* the dataset's one language, or NULL */
} format_entry;

typedef struct {
    gzFile gz;               /* NULL: buffer mode */
    const char *buf;
    size_t len, pos;
    char chunk[1 << 16];
    size_t cpos, cend;
    int eof;
    char *line;
    size_t cap;
    size_t line_no;
    int too_long, has_nul;
    int replay;              /* the last line is returned again by the next call */
    size_t last_len;
    size_t total;            /* bytes read so far */
    int too_big;             /* more than XTTS_META_MAX_BYTES: reading stopped */
} linesrc;

typedef struct { char **v; size_t n, cap; int failed; } strlist;

enum { C_ID, C_AUDIO, C_TEXT, C_SPEAKER, C_LANG, C_SPLIT, N_COLS };

typedef struct { char *key; char *path; double duration; } rec_entry; /* lhotse recordings */

/* Which of two text columns a fixed layout reads (ljspeech, mailabs; libritts through
 * original_text): its default, or the one --text-column names. */
enum { PICK_DEFAULT, PICK_TEXT, PICK_NORMALIZED };

#define FOLDER_MAX_FILES 4

struct xtts_meta_reader {
    xtts_meta_options o;
    xtts_meta_format fmt;
    char *base;           /* absolute directory relative audio paths resolve against */
    char *root;           /* tree formats: the dataset root */
    char *source;         /* file being read */
    linesrc ls;
    int ls_open;
    int col[N_COLS];
    int n_cols;
    const char *split;    /* split of the whole file (commonvoice file name, libritts part) */
    char lang_dir[16];    /* language from the path (commonvoice, mailabs) */
    char speaker_dir[256];/* mailabs speaker from the path */
    strlist files;        /* tree formats: transcript files to read, in order */
    size_t file_i;
    int lhotse_kind;      /* 1 cuts, 2 supervisions */
    rec_entry *recs;      /* lhotse supervisions: recordings by id (open addressing) */
    size_t recs_cap;
    int text_pick;        /* PICK_*: ljspeech and mailabs */
    int folder;           /* files are a dataset folder's metadata files, read as one input */
    const char *folder_split[FOLDER_MAX_FILES]; /* the split of each of them */
    xtts_sb f[N_COLS];    /* the current entry's fields */
    char reject[320];
};

/* The table: per format, its name and which fields it can fill (table.c). */
extern const format_entry xtts_meta_formats[XTTS_META_N_FORMATS];

/* lines.c: the bounded line source over a file (gz or plain) or a buffer; paths; the sorted,
 * bounded walk of a tree (links into directories already read are skipped and counted) */
char *xtts_meta_abs_path(const char *p);
const char *xtts_meta_base_of(const char *path);
char *xtts_meta_dir_of(const char *path);
int xtts_meta_ends_with(const char *s, const char *suf);
int xtts_meta_is_dir(const char *p);
int xtts_meta_is_file(const char *p);
void xtts_meta_ls_close(linesrc *s);
xtts_status xtts_meta_ls_error(const linesrc *s, const char *path, xtts_error *err);
int xtts_meta_ls_next(linesrc *s, char **out, size_t *out_len);
xtts_status xtts_meta_ls_open(linesrc *s, const char *path, const char *data, size_t len, xtts_error *err);
char *xtts_meta_path_join(const char *a, const char *b);
void xtts_meta_sl_add(strlist *l, char *s);
void xtts_meta_sl_free(strlist *l);
int xtts_meta_sub_is_dir(const char *dir, const char *name);
int xtts_meta_sub_is_file(const char *dir, const char *name);
size_t xtts_meta_walk(const char *dir, int depth, const char *const *suffixes, strlist *out, char *first_skip,
                   size_t skip_cap);

/* fields.c: fields of a line, header rows, and the helpers that fill the current entry (set,
 * reject, audio path, id from the audio file) */
double xtts_meta_json_num(json_t *o, const char *key, double dflt);
const char *xtts_meta_json_str(json_t *o, const char *key);
int xtts_meta_looks_like_header(const char *line, char sep);
char *xtts_meta_next_field(char **p, char sep);
xtts_status xtts_meta_parse_header(xtts_meta_reader *r, char *line, xtts_error *err);
void xtts_meta_rejectf(xtts_meta_reader *r, const char *fmt, const char *a);
void xtts_meta_set(xtts_meta_reader *r, int c, const char *s);
void xtts_meta_set_audio(xtts_meta_reader *r, const char *dir, const char *rel);
void xtts_meta_set_id_from_audio(xtts_meta_reader *r);
char *xtts_meta_stem(const char *path);
void xtts_meta_trim(char *s);
void xtts_meta_unquote(char *s);

/* fmt_ljspeech.c: an ljspeech (or M-AILABS) line */
void xtts_meta_parse_pipe_line(xtts_meta_reader *r, char *line, const char *dir);

/* fmt_columns.c: a line of a format with named columns (tsv, coqui, commonvoice) */
void xtts_meta_parse_columns_line(xtts_meta_reader *r, char *line);

/* fmt_nemo.c: a NeMo manifest line */
void xtts_meta_parse_nemo_line(xtts_meta_reader *r, const char *line);

/* fmt_lhotse.c: a lhotse cut or supervision line, and the recordings file supervisions name */
xtts_status xtts_meta_lhotse_load_recordings(xtts_meta_reader *r, const char *path, xtts_error *err);
void xtts_meta_parse_lhotse_line(xtts_meta_reader *r, const char *line);
const char *xtts_meta_sup_text(const xtts_meta_reader *r, json_t *sup);

/* fmt_vctk.c: the record of a VCTK text file */
void xtts_meta_vctk_record(xtts_meta_reader *r, const char *text);

/* fmt_libritts.c: LibriTTS transcripts, its splits and its layout */
int xtts_meta_dir_has_libritts(const char *dir);
const char *xtts_meta_libritts_split(const char *path);
void xtts_meta_libritts_text_record(xtts_meta_reader *r, const char *text);
void xtts_meta_libritts_tsv_line(xtts_meta_reader *r, char *line, const char *dir);
const char *xtts_meta_split_of_name(const char *name);

#endif
