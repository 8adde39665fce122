/* metadata.c — dataset metadata reader (metadata.h, docs/datasets.md).
 *
 * Three kinds of format share one machinery:
 * - line formats (ljspeech, tsv, coqui, commonvoice, nemo, lhotse): one file of lines,
 *   read as a bounded stream (zlib's gz reader, which also reads plain files);
 * - tree formats (vctk, libritts, mailabs): a sorted, bounded directory walk that yields
 *   the files holding transcripts, each then read as lines;
 * - a buffer (the fuzz target, tests) stands for one file of the format's text grammar.
 * The table `formats` says, per format, its name and which fields it can fill.
 */
#include "prep/dataset/metadata.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "common/strbuf.h"

/* ---- the table ------------------------------------------------------------------------------ */

typedef enum { KIND_LINES, KIND_TREE } format_kind;

typedef struct {
    const char *name;
    format_kind kind;
    char sep;          /* line formats with fields: the separator; 0 for JSON */
    int header;        /* a header row names the columns */
    int has_lang;      /* fills lang per record */
    const char *default_lang; /* the dataset's one language, or NULL */
} format_entry;

static const format_entry formats[XTTS_META_N_FORMATS] = {
    [XTTS_META_LJSPEECH] = {"ljspeech", KIND_LINES, '|', 0, 0, NULL},
    [XTTS_META_TSV] = {"tsv", KIND_LINES, '\t', 1, 1, NULL},
    [XTTS_META_COQUI] = {"coqui", KIND_LINES, '|', 1, 1, NULL},
    [XTTS_META_VCTK] = {"vctk", KIND_TREE, 0, 0, 1, "en"},
    [XTTS_META_LIBRITTS] = {"libritts", KIND_TREE, '\t', 0, 1, "en"},
    [XTTS_META_COMMONVOICE] = {"commonvoice", KIND_LINES, '\t', 1, 1, NULL},
    [XTTS_META_MAILABS] = {"mailabs", KIND_TREE, '|', 0, 1, NULL},
    [XTTS_META_NEMO] = {"nemo", KIND_LINES, 0, 0, 1, NULL},
    [XTTS_META_LHOTSE] = {"lhotse", KIND_LINES, 0, 0, 1, NULL},
};

const char *xtts_meta_format_name(xtts_meta_format f) {
    if (f >= 0 && f < XTTS_META_N_FORMATS) return formats[f].name;
    return "auto";
}

int xtts_meta_format_parse(const char *name) {
    if (!strcmp(name, "auto")) return XTTS_META_AUTO;
    for (int i = 0; i < XTTS_META_N_FORMATS; i++)
        if (!strcmp(name, formats[i].name)) return i;
    return -2;
}

const char *xtts_meta_format_list(void) {
    return "auto ljspeech tsv coqui vctk libritts commonvoice mailabs nemo lhotse";
}

void xtts_meta_options_defaults(xtts_meta_options *o) {
    memset(o, 0, sizeof *o);
    o->path = "-";
    o->format = XTTS_META_AUTO;
    o->vctk_mic = "mic1";
}

/* ---- bounded line source ------------------------------------------------------------------ */

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

static int ls_fill(linesrc *s) { /* 1 more bytes, 0 eof, -1 error */
    if (s->eof) return 0;
    if (!s->gz) {
        size_t n = s->len - s->pos;
        if (n > sizeof s->chunk) n = sizeof s->chunk;
        memcpy(s->chunk, s->buf + s->pos, n);
        s->pos += n;
        s->cpos = 0;
        s->cend = n;
        if (!n) s->eof = 1;
        return n ? 1 : 0;
    }
    int n = gzread(s->gz, s->chunk, sizeof s->chunk);
    if (n < 0) return -1;
    s->total += (size_t)n;
    if (s->total > XTTS_META_MAX_BYTES) { /* an endless or huge input (/dev/zero) */
        s->too_big = 1;
        return -1;
    }
    s->cpos = 0;
    s->cend = (size_t)n;
    if (!n) { s->eof = 1; return 0; }
    return 1;
}

/* The error that stopped a line source: its size limit, or a read error. */
static xtts_status ls_error(const linesrc *s, const char *path, xtts_error *err) {
    if (s->too_big)
        return xtts_error_set(err, XTTS_EINPUT, "%s: larger than %zu bytes (metadata files are read up to that size)", path,
                              (size_t)XTTS_META_MAX_BYTES);
    return xtts_error_set(err, XTTS_EIO, "%s:%zu: read error", path, s->line_no + 1);
}

/* Next line without its line end. Returns 1, 0 at end, -1 read error. Over-long lines come
 * back empty with too_long set; a line holding a NUL byte has has_nul set. */
static int ls_next(linesrc *s, char **out, size_t *out_len) {
    if (s->replay) { s->replay = 0; *out = s->line; *out_len = s->last_len; return 1; }
    size_t n = 0;
    int any = 0;
    s->too_long = s->has_nul = 0;
    for (;;) {
        if (s->cpos == s->cend) {
            int r = ls_fill(s);
            if (r < 0) return -1;
            if (r == 0) break;
        }
        any = 1;
        char *start = s->chunk + s->cpos;
        size_t avail = s->cend - s->cpos;
        char *nl = memchr(start, '\n', avail);
        size_t take = nl ? (size_t)(nl - start) : avail;
        if (!s->too_long) {
            if (n + take + 1 > XTTS_META_MAX_LINE) s->too_long = 1;
            else {
                if (n + take + 1 > s->cap) {
                    size_t c = s->cap ? s->cap : 4096;
                    while (c < n + take + 1) c *= 2;
                    char *nb = realloc(s->line, c);
                    if (!nb) return -1;
                    s->line = nb;
                    s->cap = c;
                }
                memcpy(s->line + n, start, take);
                n += take;
            }
        }
        s->cpos += take + (nl ? 1 : 0);
        if (nl) break;
    }
    if (!any) return 0;
    if (!s->line) {
        s->line = malloc(16);
        if (!s->line) return -1;
        s->cap = 16;
    }
    if (s->too_long) n = 0;
    s->line[n] = 0;
    if (n && s->line[n - 1] == '\r') s->line[--n] = 0;
    s->line_no++;
    if (s->line_no == 1 && n >= 3 && !memcmp(s->line, "\xEF\xBB\xBF", 3)) {
        memmove(s->line, s->line + 3, n - 2);
        n -= 3;
    }
    if (strlen(s->line) != n) s->has_nul = 1;
    *out = s->line;
    *out_len = s->last_len = n;
    return 1;
}

static void ls_close(linesrc *s) {
    if (s->gz) gzclose(s->gz);
    free(s->line);
    memset(s, 0, sizeof *s);
}

static xtts_status ls_open(linesrc *s, const char *path, const char *data, size_t len, xtts_error *err) {
    memset(s, 0, sizeof *s);
    if (data) { s->buf = data; s->len = len; return XTTS_OK; }
    if (!strcmp(path, "-")) {
        int fd = dup(0);
        s->gz = fd >= 0 ? gzdopen(fd, "rb") : NULL;
        if (!s->gz && fd >= 0) close(fd);
    } else {
        s->gz = gzopen(path, "rb");
    }
    if (!s->gz) return xtts_error_set(err, XTTS_EIO, "%s: cannot open: %s", path, strerror(errno ? errno : ENOENT));
    gzbuffer(s->gz, 1 << 17);
    return XTTS_OK;
}

/* ---- paths ------------------------------------------------------------------------------------ */

static char *path_join(const char *a, const char *b) {
    if (b[0] == '/' || !*a) return strdup(b);
    size_t n = strlen(a) + strlen(b) + 2;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s%s%s", a, a[strlen(a) - 1] == '/' ? "" : "/", b);
    return p;
}

static char *abs_path(const char *p) {
    char *r = realpath(p, NULL);
    if (r) return r;
    if (p[0] == '/') return strdup(p);
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) strcpy(cwd, ".");
    return path_join(cwd, p);
}

/* Absolute directory of a file path; "-" and a pipe named by /dev/fd/N, /dev/stdin or
 * <(...) (a directory under /dev or /proc, where no dataset lives) stand for the current
 * directory, as standard input does. */
static char *dir_of(const char *path) {
    if (!strcmp(path, "-")) return abs_path(".");
    char *c = strdup(path);
    if (!c) return NULL;
    char *slash = strrchr(c, '/');
    if (slash == c) c[1] = 0;
    else if (slash) *slash = 0;
    else strcpy(c, ".");
    char *r = abs_path(c);
    free(c);
    if (r && (!strcmp(r, "/dev") || !strncmp(r, "/dev/", 5) || !strncmp(r, "/proc/", 6))) {
        free(r);
        return abs_path(".");
    }
    return r;
}

static const char *base_of(const char *path) {
    const char *b = strrchr(path, '/');
    return b ? b + 1 : path;
}

static int is_dir(const char *p) { struct stat st; return !stat(p, &st) && S_ISDIR(st.st_mode); }
static int is_file(const char *p) { struct stat st; return !stat(p, &st) && S_ISREG(st.st_mode); }

static int ends_with(const char *s, const char *suf) {
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && !strcmp(s + a - b, suf);
}

static int sub_is_dir(const char *dir, const char *name) {
    char *p = path_join(dir, name);
    int r = p && is_dir(p);
    free(p);
    return r;
}

/* ---- directory walk (sorted, bounded) ----------------------------------------------------------- */

typedef struct { char **v; size_t n, cap; int failed; } strlist;

static void sl_add(strlist *l, char *s) {
    if (!s) { l->failed = 1; return; }
    if (l->n == l->cap) {
        size_t c = l->cap ? l->cap * 2 : 256;
        char **nv = realloc(l->v, c * sizeof *nv);
        if (!nv) { free(s); l->failed = 1; return; }
        l->v = nv;
        l->cap = c;
    }
    l->v[l->n++] = s;
}

static void sl_free(strlist *l) {
    for (size_t i = 0; i < l->n; i++) free(l->v[i]);
    free(l->v);
    memset(l, 0, sizeof *l);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The directories a walk has entered, by device and inode (open addressing), so that a
 * symbolic link into a directory already read — a chapter linked into itself, a speaker
 * linked twice — is not read again: its transcripts would come back as duplicate ids (for
 * a loop, once more per level of the depth bound). Links to directories are followed after
 * every real directory (deferred), so that a link met early in the sorted order does not
 * take the place of the directory it points to. */
typedef struct { dev_t dev; ino_t ino; } dir_key;

typedef struct {
    const char *const *suffixes;
    strlist *out;
    dir_key *seen;       /* cap slots; ino 0 and dev 0 marks a free one */
    size_t n_seen, cap;
    strlist links;       /* links to directories, followed after the real ones */
    int *link_depth;     /* (links.cap) the depth left below each */
    size_t links_done;
    size_t skipped;      /* links into a directory already read */
    char first_skip[512];
} walker;

static size_t dir_slot(dev_t dev, ino_t ino, size_t cap) {
    uint64_t v[2] = {(uint64_t)dev, (uint64_t)ino};
    return (size_t)xtts_fnv1a64(XTTS_FNV64_INIT, v, sizeof v) & (cap - 1);
}

/* 1 when (dev, ino) was not seen before (and now is), 0 when it was, -1 out of memory. */
static int walker_enter(walker *w, dev_t dev, ino_t ino) {
    if (2 * (w->n_seen + 1) > w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 256;
        dir_key *nk = calloc(cap, sizeof *nk);
        if (!nk) return -1;
        for (size_t i = 0; i < w->cap; i++) {
            if (!w->seen[i].ino && !w->seen[i].dev) continue;
            size_t j = dir_slot(w->seen[i].dev, w->seen[i].ino, cap);
            while (nk[j].ino || nk[j].dev) j = (j + 1) & (cap - 1);
            nk[j] = w->seen[i];
        }
        free(w->seen);
        w->seen = nk;
        w->cap = cap;
    }
    size_t j = dir_slot(dev, ino, w->cap);
    for (; w->seen[j].ino || w->seen[j].dev; j = (j + 1) & (w->cap - 1))
        if (w->seen[j].dev == dev && w->seen[j].ino == ino) return 0;
    w->seen[j] = (dir_key){dev, ino};
    w->n_seen++;
    return 1;
}

/* A link to a directory, depth levels to walk below it, kept for later (p is taken). */
static void walker_defer(walker *w, char *p, int depth) {
    size_t n = w->links.n;
    sl_add(&w->links, p);
    if (w->links.n == n) { w->out->failed = 1; return; }
    int *nd = realloc(w->link_depth, w->links.cap * sizeof *nd);
    if (!nd) { w->out->failed = 1; return; }
    w->link_depth = nd;
    nd[n] = depth;
}

/* Files under dir (depth levels down at most) whose name ends with one of the suffixes,
 * in sorted path order. Hidden entries are skipped; links to directories are deferred. */
static void walk_dir(walker *w, const char *dir, int depth) {
    strlist *out = w->out;
    if (out->failed || out->n >= XTTS_META_MAX_FILES) return;
    DIR *d = opendir(dir);
    if (!d) return;
    strlist names = {0};
    struct dirent *de;
    while ((de = readdir(d)) && names.n < XTTS_META_MAX_FILES) {
        if (de->d_name[0] == '.') continue;
        sl_add(&names, strdup(de->d_name));
    }
    closedir(d);
    if (names.n) qsort(names.v, names.n, sizeof *names.v, cmp_str);
    for (size_t i = 0; i < names.n && !out->failed; i++) {
        char *p = path_join(dir, names.v[i]);
        if (!p) { out->failed = 1; break; }
        struct stat st, lst;
        if (stat(p, &st) || lstat(p, &lst)) { free(p); continue; }
        if (S_ISDIR(st.st_mode)) {
            if (depth > 0 && S_ISLNK(lst.st_mode)) { walker_defer(w, p, depth - 1); continue; }
            int fresh = depth > 0 ? walker_enter(w, st.st_dev, st.st_ino) : 0;
            if (fresh < 0) out->failed = 1;
            if (fresh > 0) walk_dir(w, p, depth - 1);
            free(p);
            continue;
        }
        int want = 0;
        for (const char *const *s = w->suffixes; *s && !want; s++) want = ends_with(names.v[i], *s);
        if (want && S_ISREG(st.st_mode)) sl_add(out, p);
        else free(p);
    }
    sl_free(&names);
}

/* walk_dir from dir (which counts as entered), then the links to directories it met, in
 * the order met, each unless its directory was read already. Returns the number of links
 * skipped; the first one's path in first_skip (may be NULL). */
static size_t walk(const char *dir, int depth, const char *const *suffixes, strlist *out, char *first_skip,
                   size_t skip_cap) {
    walker w = {.suffixes = suffixes, .out = out};
    struct stat st;
    if (stat(dir, &st) == 0 && walker_enter(&w, st.st_dev, st.st_ino) < 0) out->failed = 1;
    walk_dir(&w, dir, depth);
    for (; w.links_done < w.links.n && !out->failed; w.links_done++) {
        const char *p = w.links.v[w.links_done];
        int fresh = stat(p, &st) == 0 ? walker_enter(&w, st.st_dev, st.st_ino) : 1;
        if (fresh < 0) out->failed = 1;
        if (fresh > 0) walk_dir(&w, p, w.link_depth[w.links_done]);
        if (fresh == 0 && w.skipped++ == 0) snprintf(w.first_skip, sizeof w.first_skip, "%s", p);
    }
    free(w.seen);
    free(w.link_depth);
    sl_free(&w.links);
    if (first_skip && skip_cap) snprintf(first_skip, skip_cap, "%s", w.first_skip);
    return w.skipped;
}

/* ---- the reader --------------------------------------------------------------------------------- */

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

xtts_meta_format xtts_meta_reader_format(const xtts_meta_reader *r) { return r->fmt; }

int xtts_meta_reader_has_lang(const xtts_meta_reader *r) {
    return (r->fmt == XTTS_META_TSV || r->fmt == XTTS_META_COQUI) ? r->col[C_LANG] >= 0 : formats[r->fmt].has_lang;
}

void xtts_meta_close(xtts_meta_reader *r) {
    if (!r) return;
    if (r->ls_open) ls_close(&r->ls);
    for (int i = 0; i < N_COLS; i++) xtts_sb_free(&r->f[i]);
    for (size_t i = 0; i < r->recs_cap; i++) { free(r->recs[i].key); free(r->recs[i].path); }
    free(r->recs);
    sl_free(&r->files);
    free(r->base);
    free(r->root);
    free(r->source);
    free(r);
}

/* Column names of the header-row formats: each field's accepted names. */
static int column_of(const char *name) {
    static const struct { const char *name; int col; } names[] = {
        {"id", C_ID},
        {"audio", C_AUDIO}, {"audio_file", C_AUDIO}, {"audio_filepath", C_AUDIO}, {"path", C_AUDIO}, {"wav", C_AUDIO},
        {"text", C_TEXT}, {"transcription", C_TEXT}, {"sentence", C_TEXT},
        {"speaker", C_SPEAKER}, {"speaker_name", C_SPEAKER}, {"client_id", C_SPEAKER},
        {"lang", C_LANG}, {"language", C_LANG}, {"locale", C_LANG},
        {"split", C_SPLIT},
    };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (!strcmp(name, names[i].name)) return names[i].col;
    return -1;
}

static char *next_field(char **p, char sep) {
    char *s = *p;
    if (!s) return NULL;
    char *e = strchr(s, sep);
    if (e) { *e = 0; *p = e + 1; } else *p = NULL;
    return s;
}

/* names, comma separated, into buf (cut with "..." when it is full) */
static void list_names(char *buf, size_t cap, char *const *names, int n) {
    size_t k = 0;
    buf[0] = 0;
    for (int i = 0; i < n && k < cap; i++) {
        int w = snprintf(buf + k, cap - k, "%s%s", i ? ", " : "", names[i]);
        if (w < 0 || (size_t)w >= cap - k) {
            snprintf(buf + (cap > 4 ? cap - 4 : 0), cap > 4 ? 4 : cap, "...");
            return;
        }
        k += (size_t)w;
    }
}

/* The text column of a header row: --text-column's, else the one text column, else the one
 * named `text` (Coqui's formatter reads `text` and ignores `transcription`). */
static xtts_status pick_text_column(xtts_meta_reader *r, char *const *names, xtts_error *err) {
    const char *name = r->source, *want = r->o.text_column;
    int n_text = 0, named_text = -1, other[2] = {-1, -1};
    for (int i = 0; i < r->n_cols; i++) {
        if (want) {
            if (!strcmp(names[i], want)) { r->col[C_TEXT] = i; return XTTS_OK; }
            continue;
        }
        if (column_of(names[i]) != C_TEXT) continue;
        if (!strcmp(names[i], "text")) named_text = i;
        else if (other[0] < 0) other[0] = i;
        else if (other[1] < 0) other[1] = i;
        n_text++;
    }
    if (want) {
        char cols[300];
        list_names(cols, sizeof cols, names, r->n_cols);
        return xtts_error_set(err, XTTS_EUSAGE, "%s:1: no column '%.60s' (--text-column); the header names: %s", name, want, cols);
    }
    if (n_text > 1 && named_text < 0)
        return xtts_error_set(err, XTTS_EINPUT, "%s:1: columns '%s' and '%s' both hold a text: choose one with --text-column", name,
                              names[other[0]], names[other[1]]);
    r->col[C_TEXT] = named_text >= 0 ? named_text : other[0];
    return XTTS_OK;
}

static xtts_status parse_header(xtts_meta_reader *r, char *line, xtts_error *err) {
    const char *name = r->source;
    char sep = formats[r->fmt].sep;
    for (int i = 0; i < N_COLS; i++) r->col[i] = -1;
    r->n_cols = 0;
    char *p = line, *f, *names[64];
    while ((f = next_field(&p, sep))) {
        if (r->n_cols >= 64) return xtts_error_set(err, XTTS_EINPUT, "%s:1: more than 64 columns", name);
        names[r->n_cols++] = f;
    }
    for (int i = 0; i < r->n_cols; i++) {
        int c = column_of(names[i]);
        if (c < 0) continue;
        for (int j = 0; j < i; j++)
            if (!strcmp(names[j], names[i])) return xtts_error_set(err, XTTS_EINPUT, "%s:1: column '%.60s' named twice", name, names[i]);
        if (c == C_TEXT) continue;
        if (r->col[c] >= 0)
            return xtts_error_set(err, XTTS_EINPUT, "%s:1: columns '%s' and '%.60s' name the same field", name, names[r->col[c]], names[i]);
        r->col[c] = i;
    }
    xtts_status st = pick_text_column(r, names, err);
    if (st) return st;
    if (r->col[C_AUDIO] < 0 || r->col[C_TEXT] < 0) {
        if (r->fmt == XTTS_META_COQUI)
            return xtts_error_set(err, XTTS_EINPUT, "%s:1: the header row must name the columns 'audio_file' and 'text' (|-separated)", name);
        if (r->fmt == XTTS_META_COMMONVOICE)
            return xtts_error_set(err, XTTS_EINPUT, "%s:1: the header row must name the columns 'path' and 'sentence' (a Common Voice .tsv)", name);
        return xtts_error_set(err, XTTS_EINPUT, "%s:1: the header row must name the columns 'audio' and 'text' (tab-separated)", name);
    }
    return XTTS_OK;
}

/* A first line that names columns: a header row where data is expected. */
static int looks_like_header(const char *line, char sep) {
    char buf[512];
    snprintf(buf, sizeof buf, "%s", line);
    char *p = buf, *f;
    int named = 0, audio = 0, text = 0;
    while ((f = next_field(&p, sep))) {
        int c = column_of(f);
        if (c >= 0) named++;
        if (c == C_AUDIO) audio = 1;
        if (c == C_TEXT || !strcmp(f, "normalized_text")) text = 1;
    }
    return (audio && text) || (named >= 2 && text);
}

static void set(xtts_meta_reader *r, int c, const char *s) {
    xtts_sb_clear(&r->f[c]);
    xtts_sb_puts(&r->f[c], s);
}

static void rejectf(xtts_meta_reader *r, const char *fmt, const char *a) {
    snprintf(r->reject, sizeof r->reject, fmt, a);
}

/* Common Voice, and pandas' to_csv that writes Coqui's CSVs, write a field holding quotes
 * CSV-style: "..." with inner quotes doubled. */
static void unquote(char *s) {
    size_t n = strlen(s);
    if (n < 2 || s[0] != '"' || s[n - 1] != '"') return;
    for (size_t i = 1; i + 1 < n; i++) { /* every inner quote doubled, else not CSV quoting */
        if (s[i] != '"') continue;
        if (s[i + 1] != '"' || i + 2 >= n) return;
        i++;
    }
    size_t k = 0;
    for (size_t i = 1; i + 1 < n; i++) {
        if (s[i] == '"') i++;
        s[k++] = s[i];
    }
    s[k] = 0;
}

static char *stem(const char *path) {
    const char *b = base_of(path);
    const char *dot = strrchr(b, '.');
    size_t n = dot && dot != b ? (size_t)(dot - b) : strlen(b);
    char *s = malloc(n + 1);
    if (s) { memcpy(s, b, n); s[n] = 0; }
    return s;
}

static void set_audio(xtts_meta_reader *r, const char *dir, const char *rel) {
    char *p = path_join(dir, rel);
    set(r, C_AUDIO, p ? p : "");
    if (!p) r->f[C_AUDIO].failed = 1;
    free(p);
}

static void set_id_from_audio(xtts_meta_reader *r) {
    char *s = stem(r->f[C_AUDIO].s ? r->f[C_AUDIO].s : "");
    set(r, C_ID, s ? s : "");
    if (!s) r->f[C_ID].failed = 1;
    free(s);
}

static void trim(char *s) {
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n')) s[--n] = 0;
    size_t i = 0;
    while (s[i] == ' ' || s[i] == '\t') i++;
    if (i) memmove(s, s + i, n - i + 1);
}

/* ---- per-format line parsers ---------------------------------------------------------------------- */

/* ljspeech and mailabs: id|text|normalized_text, audio at <dir>/wavs/<id>.wav; the text is the
 * normalized_text where it is given, else the text, unless --text-column names one. */
static void parse_pipe_line(xtts_meta_reader *r, char *line, const char *dir) {
    char *q = line, *f[4];
    int nf = 0;
    while (nf < 4 && (f[nf] = next_field(&q, '|'))) nf++;
    if (nf < 2 || nf > 3) { rejectf(r, "expected id|text|normalized_text (2 or 3 |-separated fields)%s", ""); return; }
    set(r, C_ID, f[0]);
    int norm = nf == 3 && *f[2];
    if (r->text_pick == PICK_NORMALIZED && !norm) {
        rejectf(r, "no normalized_text (its third field is empty or missing; --text-column normalized_text)%s", "");
        return;
    }
    set(r, C_TEXT, norm && r->text_pick != PICK_TEXT ? f[2] : f[1]);
    if (!*f[0]) { rejectf(r, "missing id%s", ""); return; }
    if (r->split) set(r, C_SPLIT, r->split); /* a dataset folder's metadata_train.csv, ... */
    if (r->o.audio_dir && r->fmt == XTTS_META_LJSPEECH) {
        char *p = malloc(strlen(f[0]) + 5);
        if (p) { sprintf(p, "%s.wav", f[0]); set_audio(r, r->base, p); free(p); }
        else r->f[C_AUDIO].failed = 1;
        return;
    }
    char *p = malloc(strlen(f[0]) + 10);
    if (!p) { r->f[C_AUDIO].failed = 1; return; }
    sprintf(p, "wavs/%s.wav", f[0]);
    set_audio(r, dir, p);
    free(p);
}

/* tsv, coqui, commonvoice: columns named by the header row. */
static void parse_columns_line(xtts_meta_reader *r, char *line) {
    char sep = formats[r->fmt].sep;
    char *q = line, *f[64], *x;
    int nf = 0;
    while ((x = next_field(&q, sep))) { if (nf < 64) f[nf] = x; nf++; }
    if (nf != r->n_cols) {
        snprintf(r->reject, sizeof r->reject, "expected %d %s fields, found %d", r->n_cols,
                 sep == '\t' ? "tab-separated" : "|-separated", nf);
        if (r->col[C_ID] >= 0 && r->col[C_ID] < nf && nf <= 64) set(r, C_ID, f[r->col[C_ID]]);
        return;
    }
    if (r->fmt == XTTS_META_COMMONVOICE || r->fmt == XTTS_META_COQUI) for (int i = 0; i < nf; i++) unquote(f[i]);
    for (int c = 0; c < N_COLS; c++)
        if (r->col[c] >= 0) set(r, c, f[r->col[c]]);
    const char *audio = f[r->col[C_AUDIO]];
    if (!*audio) { rejectf(r, "missing audio path%s", ""); return; }
    if (r->fmt == XTTS_META_COMMONVOICE) {
        char *p = r->o.audio_dir ? strdup(audio) : path_join("clips", audio); /* --audio-dir: the clips directory */
        if (!p) { r->f[C_AUDIO].failed = 1; return; }
        set_audio(r, r->base, p);
        free(p);
        if (r->col[C_LANG] < 0 && r->lang_dir[0]) set(r, C_LANG, r->lang_dir);
    } else {
        set_audio(r, r->base, audio);
    }
    if (r->col[C_ID] < 0 || !r->f[C_ID].s || !*r->f[C_ID].s) set_id_from_audio(r);
    if (r->col[C_SPLIT] < 0 && r->split) set(r, C_SPLIT, r->split);
}

static const char *json_str(json_t *o, const char *key) {
    json_t *v = json_object_get(o, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

/* nemo: one JSON object a line. */
static void parse_nemo_line(xtts_meta_reader *r, const char *line) {
    json_error_t je;
    json_t *o = json_loads(line, 0, &je);
    if (!o || !json_is_object(o)) { json_decref(o); rejectf(r, "not a JSON object (NeMo manifests hold one object a line)%s", ""); return; }
    const char *audio = json_str(o, "audio_filepath");
    const char *key = r->o.text_column ? r->o.text_column : "text";
    const char *text = json_str(o, key);
    if (!text && !r->o.text_column) text = json_str(o, "normalized_text");
    if (!audio || !*audio) { json_decref(o); rejectf(r, "no \"audio_filepath\" string%s", ""); return; }
    if (!text) { set(r, C_AUDIO, audio); set_id_from_audio(r); json_decref(o); rejectf(r, "no \"%.200s\" string", key); return; }
    set_audio(r, r->base, audio);
    set_id_from_audio(r);
    set(r, C_TEXT, text);
    json_t *spk = json_object_get(o, "speaker");
    if (json_is_string(spk)) set(r, C_SPEAKER, json_string_value(spk));
    else if (json_is_integer(spk)) {
        char b[32];
        snprintf(b, sizeof b, "%lld", (long long)json_integer_value(spk));
        set(r, C_SPEAKER, b);
    }
    const char *lang = json_str(o, "lang");
    if (!lang) lang = json_str(o, "language");
    if (lang) set(r, C_LANG, lang);
    const char *split = json_str(o, "split");
    if (split) set(r, C_SPLIT, split);
    json_decref(o);
}

/* lhotse: the audio file of a recording object, or NULL (reject set). */
static const char *lhotse_source(xtts_meta_reader *r, json_t *rec) {
    json_t *sources = json_object_get(rec, "sources");
    if (!json_is_array(sources) || json_array_size(sources) != 1) {
        rejectf(r, "recording without exactly one source (multi-file recordings are not read)%s", "");
        return NULL;
    }
    json_t *s = json_array_get(sources, 0);
    const char *type = json_str(s, "type"), *src = json_str(s, "source");
    if (!type || strcmp(type, "file") || !src || !*src) {
        rejectf(r, "recording source of type '%.40s' (only \"file\" sources are read)", type ? type : "?");
        return NULL;
    }
    return src;
}

static int lhotse_whole(xtts_meta_reader *r, double start, double dur, double rec_dur) {
    if (fabs(start) > 1e-3 || (rec_dur > 0 && fabs(dur - rec_dur) > 0.02)) {
        char b[160];
        snprintf(b, sizeof b, "a segment (start %.3f s, duration %.3f s) of a %.3f s recording: only whole recordings are read",
                 start, dur, rec_dur);
        rejectf(r, "%s", b);
        return 0;
    }
    return 1;
}

static double json_num(json_t *o, const char *key, double dflt) {
    json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : dflt;
}

/* A supervision's text: its "text", or --text-column's key at its top level or in its "custom"
 * object ("custom.KEY" names only the latter). */
static const char *sup_text(const xtts_meta_reader *r, json_t *sup) {
    const char *key = r->o.text_column ? r->o.text_column : "text";
    if (!strncmp(key, "custom.", 7)) return json_str(json_object_get(sup, "custom"), key + 7);
    const char *t = json_str(sup, key);
    return t || !r->o.text_column ? t : json_str(json_object_get(sup, "custom"), key);
}

static void lhotse_fill_supervision(xtts_meta_reader *r, json_t *sup) {
    const char *text = sup_text(r, sup);
    if (!text) { rejectf(r, "supervision without \"%.200s\"", r->o.text_column ? r->o.text_column : "text"); return; }
    set(r, C_TEXT, text);
    const char *spk = json_str(sup, "speaker");
    if (spk) set(r, C_SPEAKER, spk);
    const char *lang = json_str(sup, "language");
    if (lang) set(r, C_LANG, lang);
}

static size_t rec_slot(const xtts_meta_reader *r, const char *key) {
    size_t i = xtts_fnv1a64(XTTS_FNV64_INIT, key, strlen(key)) & (r->recs_cap - 1);
    while (r->recs[i].key && strcmp(r->recs[i].key, key)) i = (i + 1) & (r->recs_cap - 1);
    return i;
}

static void parse_lhotse_line(xtts_meta_reader *r, const char *line) {
    json_error_t je;
    json_t *o = json_loads(line, 0, &je);
    if (!o || !json_is_object(o)) { json_decref(o); rejectf(r, "not a JSON object (lhotse manifests hold one object a line)%s", ""); return; }
    const char *id = json_str(o, "id");
    if (!id || !*id) { json_decref(o); rejectf(r, "no \"id\" string%s", ""); return; }
    set(r, C_ID, id);
    if (r->lhotse_kind == 1) {
        json_t *rec = json_object_get(o, "recording");
        json_t *sups = json_object_get(o, "supervisions");
        if (!json_is_object(rec)) { rejectf(r, "cut without a \"recording\" object%s", ""); goto done; }
        size_t ns = json_is_array(sups) ? json_array_size(sups) : 0;
        if (!ns || ns > 256) { rejectf(r, "cut without supervisions (or more than 256)%s", ""); goto done; }
        const char *src = lhotse_source(r, rec);
        if (!src) goto done;
        if (!lhotse_whole(r, json_num(o, "start", 0), json_num(o, "duration", 0), json_num(rec, "duration", 0))) goto done;
        set_audio(r, r->base, src);
        lhotse_fill_supervision(r, json_array_get(sups, 0));
        if (ns > 1 && !r->reject[0]) {
            /* several supervisions: their texts joined in order of start time */
            size_t order[256];
            for (size_t i = 0; i < ns; i++) order[i] = i;
            for (size_t i = 1; i < ns; i++)
                for (size_t j = i; j > 0 && json_num(json_array_get(sups, order[j]), "start", 0) <
                                                json_num(json_array_get(sups, order[j - 1]), "start", 0); j--) {
                    size_t t = order[j]; order[j] = order[j - 1]; order[j - 1] = t;
                }
            xtts_sb_clear(&r->f[C_TEXT]);
            for (size_t i = 0; i < ns; i++) {
                const char *t = sup_text(r, json_array_get(sups, order[i]));
                if (!t) { rejectf(r, "supervision without \"%.200s\"", r->o.text_column ? r->o.text_column : "text"); break; }
                if (i) xtts_sb_putc(&r->f[C_TEXT], ' ');
                xtts_sb_puts(&r->f[C_TEXT], t);
            }
        }
    } else {
        const char *rid = json_str(o, "recording_id");
        if (!rid) { rejectf(r, "supervision without \"recording_id\"%s", ""); goto done; }
        size_t i = rec_slot(r, rid);
        if (!r->recs[i].key) { rejectf(r, "recording '%.200s' is not in the RecordingSet", rid); goto done; }
        if (!lhotse_whole(r, json_num(o, "start", 0), json_num(o, "duration", 0), r->recs[i].duration)) goto done;
        set_audio(r, r->base, r->recs[i].path);
        lhotse_fill_supervision(r, o);
    }
done:
    json_decref(o);
}

/* Load a RecordingSet (id -> file) for a SupervisionSet. */
static xtts_status lhotse_load_recordings(xtts_meta_reader *r, const char *path, xtts_error *err) {
    linesrc ls;
    xtts_status st = ls_open(&ls, path, NULL, 0, err);
    if (st) return st;
    size_t n = 0;
    char *line;
    size_t len;
    int rc;
    r->recs_cap = 1024;
    r->recs = calloc(r->recs_cap, sizeof *r->recs);
    if (!r->recs) { ls_close(&ls); return xtts_error_set(err, XTTS_ENOMEM, "out of memory"); }
    while ((rc = ls_next(&ls, &line, &len)) == 1) {
        if (!len) continue;
        if (ls.too_long || ls.has_nul) continue;
        json_error_t je;
        json_t *o = json_loads(line, 0, &je);
        const char *id = o ? json_str(o, "id") : NULL;
        if (!id) { json_decref(o); continue; }
        r->reject[0] = 0;
        const char *src = lhotse_source(r, o);
        if (!src) { json_decref(o); continue; }
        if ((n + 1) * 2 > r->recs_cap) {
            size_t oc = r->recs_cap;
            rec_entry *old = r->recs;
            r->recs_cap *= 2;
            r->recs = calloc(r->recs_cap, sizeof *r->recs);
            if (!r->recs) { r->recs = old; r->recs_cap = oc; json_decref(o); ls_close(&ls); return xtts_error_set(err, XTTS_ENOMEM, "out of memory"); }
            for (size_t i = 0; i < oc; i++)
                if (old[i].key) r->recs[rec_slot(r, old[i].key)] = old[i];
            free(old);
        }
        size_t i = rec_slot(r, id);
        if (!r->recs[i].key) {
            r->recs[i].key = strdup(id);
            r->recs[i].path = strdup(src);
            r->recs[i].duration = json_num(o, "duration", 0);
            if (!r->recs[i].key || !r->recs[i].path) { json_decref(o); ls_close(&ls); return xtts_error_set(err, XTTS_ENOMEM, "out of memory"); }
            n++;
        }
        json_decref(o);
    }
    r->reject[0] = 0;
    ls_close(&ls);
    if (rc < 0) return ls_error(&ls, path, err);
    return XTTS_OK;
}

/* ---- tree formats ------------------------------------------------------------------------------------ */

/* The split that a directory name stands for (LibriTTS parts, Common Voice files). */
static const char *split_of_name(const char *name) {
    if (!strncmp(name, "train", 5)) return "train";
    if (!strncmp(name, "dev", 3) || !strncmp(name, "val", 3)) return "val";
    if (!strncmp(name, "test", 4)) return "test";
    return NULL;
}

static const char *libritts_split(const char *path) {
    const char *split = NULL;
    char *c = strdup(path);
    if (!c) return NULL;
    char *save = NULL;
    for (char *t = strtok_r(c, "/", &save); t; t = strtok_r(NULL, "/", &save))
        if (strchr(t, '-') && split_of_name(t) && !strstr(t, ".")) split = split_of_name(t);
    free(c);
    return split;
}

/* Open the next transcript file of a tree; 0 when none is left. */
static int tree_next_file(xtts_meta_reader *r, xtts_error *err) {
    while (r->file_i < r->files.n) {
        const char *p = r->files.v[r->file_i++];
        if (r->fmt == XTTS_META_LIBRITTS && !ends_with(p, ".trans.tsv")) {
            /* a per-utterance text file is read only where no .trans.tsv covers it */
            char *dir = strdup(p);
            if (!dir) return -1;
            *strrchr(dir, '/') = 0;
            const char *b = base_of(p);
            const char *u1 = strchr(b, '_'), *u2 = u1 ? strchr(u1 + 1, '_') : NULL;
            int covered = 0;
            if (u2) {
                char t[PATH_MAX];
                snprintf(t, sizeof t, "%s/%.*s.trans.tsv", dir, (int)(u2 - b), b);
                covered = is_file(t);
            }
            free(dir);
            if (covered) continue;
        }
        free(r->source);
        r->source = strdup(p);
        if (!r->source) return -1;
        if (r->ls_open) ls_close(&r->ls);
        r->ls_open = 0;
        if (ls_open(&r->ls, p, NULL, 0, err)) return -1;
        r->ls_open = 1;
        if (r->fmt == XTTS_META_MAILABS) {
            /* <lang>/by_book/<gender>/<speaker>/<book>/metadata.csv */
            r->lang_dir[0] = r->speaker_dir[0] = 0;
            char *c = strdup(p);
            if (!c) return -1;
            char *parts[64];
            int np = 0;
            char *save = NULL;
            for (char *t = strtok_r(c, "/", &save); t && np < 64; t = strtok_r(NULL, "/", &save)) parts[np++] = t;
            for (int i = 0; i < np; i++) {
                if (strcmp(parts[i], "by_book")) continue;
                if (i > 0) {
                    snprintf(r->lang_dir, sizeof r->lang_dir, "%.15s", parts[i - 1]);
                    char *us = strchr(r->lang_dir, '_');
                    if (us) *us = 0;
                    if (!xtts_lang_tag_normalize(r->lang_dir)) r->lang_dir[0] = 0;
                }
                if (i + 3 < np && (!strcmp(parts[i + 1], "male") || !strcmp(parts[i + 1], "female")))
                    snprintf(r->speaker_dir, sizeof r->speaker_dir, "%s", parts[i + 2]);
            }
            free(c);
        }
        if (r->fmt == XTTS_META_LIBRITTS) r->split = libritts_split(p);
        return 1;
    }
    return 0;
}

static void vctk_record(xtts_meta_reader *r, const char *text) {
    char *id = stem(r->source);
    if (!id) { r->f[C_ID].failed = 1; return; }
    set(r, C_ID, id);
    char spk[64];
    snprintf(spk, sizeof spk, "%.63s", id);
    char *us = strchr(spk, '_');
    if (us) *us = 0;
    set(r, C_SPEAKER, spk);
    set(r, C_TEXT, text);
    set(r, C_LANG, "en");
    char rel[PATH_MAX];
    if (sub_is_dir(r->root, "wav48_silence_trimmed"))
        snprintf(rel, sizeof rel, "wav48_silence_trimmed/%s/%s_%s.flac", spk, id, r->o.vctk_mic ? r->o.vctk_mic : "mic1");
    else
        snprintf(rel, sizeof rel, "wav48/%s/%s.wav", spk, id);
    set_audio(r, r->root, rel);
    free(id);
    if (!is_file(r->f[C_AUDIO].s)) rejectf(r, "no audio file %.280s", r->f[C_AUDIO].s);
}

static void libritts_tsv_line(xtts_meta_reader *r, char *line, const char *dir) {
    char *q = line, *f[4];
    int nf = 0;
    while (nf < 4 && (f[nf] = next_field(&q, '\t'))) nf++;
    if (nf < 2 || nf > 3) { rejectf(r, "expected id<TAB>original text<TAB>normalized text (a LibriTTS .trans.tsv line)%s", ""); return; }
    set(r, C_ID, f[0]);
    if (!*f[0]) { rejectf(r, "missing id%s", ""); return; }
    const char *text = r->o.original_text || nf < 3 || !*f[2] ? f[1] : f[2];
    set(r, C_TEXT, text);
    char spk[64];
    snprintf(spk, sizeof spk, "%.63s", f[0]);
    char *us = strchr(spk, '_');
    if (us) *us = 0;
    set(r, C_SPEAKER, spk);
    set(r, C_LANG, "en");
    if (r->split) set(r, C_SPLIT, r->split);
    char rel[PATH_MAX];
    snprintf(rel, sizeof rel, "%s.wav", f[0]);
    set_audio(r, dir, rel);
}

/* ---- open ------------------------------------------------------------------------------------------- */

static int has_by_book(const char *dir) {
    if (sub_is_dir(dir, "by_book")) return 1;
    DIR *d = opendir(dir);
    if (!d) return 0;
    struct dirent *de;
    int found = 0, n = 0;
    while (!found && (de = readdir(d)) && n++ < 4096) {
        if (de->d_name[0] == '.') continue;
        char *p = path_join(dir, de->d_name);
        if (p && is_dir(p) && sub_is_dir(p, "by_book")) found = 1;
        free(p);
    }
    closedir(d);
    return found;
}

static int dir_has_libritts(const char *dir) {
    static const char *const suf[] = {".trans.tsv", ".normalized.txt", NULL};
    strlist l = {0};
    walk(dir, 3, suf, &l, NULL, 0);
    int yes = l.n > 0;
    sl_free(&l);
    return yes;
}

/* The metadata files a dataset folder is read through, in the order they are read: the split
 * files of Coqui's recipes (metadata_eval.csv from its XTTS fine-tuning, metadata_val.csv from
 * its LJSpeech recipe), and metadata.csv where there are none. */
static const struct { const char *name, *split; } folder_files[] = {
    {"metadata_train.csv", "train"}, {"metadata_eval.csv", "val"}, {"metadata_val.csv", "val"}, {"metadata.csv", NULL},
};
#define FOLDER_SPLIT_FILES 3

/* Whether dir/name is a file. */
static int sub_is_file(const char *dir, const char *name) {
    char *p = path_join(dir, name);
    int r = p && is_file(p);
    free(p);
    return r;
}

static int folder_has_metadata(const char *dir) {
    for (size_t i = 0; i < sizeof folder_files / sizeof *folder_files; i++)
        if (sub_is_file(dir, folder_files[i].name)) return 1;
    return 0;
}

/* detect_dir's answer for a folder read through its metadata files */
#define DETECT_FOLDER XTTS_META_N_FORMATS

/* Recognise the format of a directory: a tree format, DETECT_FOLDER, or XTTS_META_AUTO with
 * the reason in why. */
static int detect_dir(const char *dir, char *why, size_t whylen) {
    if (sub_is_dir(dir, "txt") && (sub_is_dir(dir, "wav48") || sub_is_dir(dir, "wav48_silence_trimmed"))) return XTTS_META_VCTK;
    if (has_by_book(dir)) return XTTS_META_MAILABS;
    if (folder_has_metadata(dir)) return DETECT_FOLDER;
    if (sub_is_dir(dir, "clips")) {
        snprintf(why, whylen, "cannot tell the dataset format: a Common Voice directory: give one of its .tsv files "
                 "(validated.tsv, train.tsv, ...)");
        return XTTS_META_AUTO;
    }
    if (dir_has_libritts(dir)) return XTTS_META_LIBRITTS;
    snprintf(why, whylen, "no dataset metadata found: looked for metadata_train.csv, metadata_eval.csv, metadata_val.csv, "
             "metadata.csv, a VCTK tree (txt/ and wav48*/), an M-AILABS tree (by_book/) and a LibriTTS tree (*.trans.tsv, "
             "*.normalized.txt); give the metadata file, or --format");
    return XTTS_META_AUTO;
}

/* Recognise the format of a line file from its name and first line. */
static int detect_file(const char *path, const char *first, char *why, size_t whylen) {
    const char *b = base_of(path);
    if (ends_with(b, ".trans.tsv")) return XTTS_META_LIBRITTS;
    if (first[0] == '{') {
        json_error_t je;
        json_t *o = json_loads(first, 0, &je);
        int f = XTTS_META_AUTO;
        if (json_is_object(o)) {
            if (json_object_get(o, "audio_filepath")) f = XTTS_META_NEMO;
            else if (json_object_get(o, "recording") || json_object_get(o, "recording_id") || json_object_get(o, "sources"))
                f = XTTS_META_LHOTSE;
        }
        json_decref(o);
        if (f == XTTS_META_AUTO) snprintf(why, whylen, "a JSON line that is neither a NeMo nor a lhotse manifest entry");
        return f;
    }
    if (strstr(path, "by_book/") && !strcmp(b, "metadata.csv")) return XTTS_META_MAILABS;
    if (strchr(first, '|') && looks_like_header(first, '|')) return XTTS_META_COQUI;
    if (strchr(first, '\t')) {
        char buf[4096];
        snprintf(buf, sizeof buf, "%s", first);
        int client = 0, pathc = 0, sentence = 0;
        char *p = buf, *f;
        while ((f = next_field(&p, '\t'))) {
            client |= !strcmp(f, "client_id");
            pathc |= !strcmp(f, "path");
            sentence |= !strcmp(f, "sentence");
        }
        if (client && pathc && sentence) return XTTS_META_COMMONVOICE;
        if (looks_like_header(first, '\t')) return XTTS_META_TSV;
    }
    if (strchr(first, '|')) {
        /* an LJSpeech record (a tab inside its text is allowed) */
        int bars = 0;
        for (const char *q = first; *q; q++) bars += *q == '|';
        if (bars == 1 || bars == 2) return XTTS_META_LJSPEECH;
        snprintf(why, whylen, "|-separated lines with %d fields and no header row", bars + 1);
        return XTTS_META_AUTO;
    }
    if (strchr(first, '\t')) {
        snprintf(why, whylen, "tab-separated lines whose first row names no audio and text columns");
        return XTTS_META_AUTO;
    }
    snprintf(why, whylen, "no tab, no '|' and no JSON in the first line");
    return XTTS_META_AUTO;
}

static xtts_status open_tree(xtts_meta_reader *r, xtts_error *err) {
    static const char *const vctk_suf[] = {".txt", NULL};
    static const char *const libri_norm[] = {".trans.tsv", ".normalized.txt", NULL};
    static const char *const libri_orig[] = {".trans.tsv", ".original.txt", NULL};
    static const char *const mailabs_suf[] = {"metadata.csv", NULL};
    const char *path = r->o.path;
    size_t skipped = 0;
    char first_skip[512] = "";
    if (is_file(path)) {
        /* one transcript file of the tree */
        sl_add(&r->files, abs_path(path));
        char *d = dir_of(path);
        if (r->fmt == XTTS_META_VCTK && d) { /* <root>/txt/<spk>/<id>.txt */
            char *s = strrchr(d, '/');
            if (s) { *s = 0; s = strrchr(d, '/'); if (s) *s = 0; }
        }
        r->root = d;
    } else if (is_dir(path)) {
        r->root = abs_path(path);
        if (!r->root) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
        if (r->fmt == XTTS_META_VCTK) {
            char *txt = path_join(r->root, "txt");
            if (!txt) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
            if (!is_dir(txt)) { free(txt); return xtts_error_set(err, XTTS_EINPUT, "%s: not a VCTK tree (no txt/ directory)", path); }
            skipped = walk(txt, 1, vctk_suf, &r->files, first_skip, sizeof first_skip);
            free(txt);
            /* speakers with audio but no transcripts (p315 in VCTK) */
            const char *wd = sub_is_dir(r->root, "wav48_silence_trimmed") ? "wav48_silence_trimmed" : "wav48";
            char *wdir = path_join(r->root, wd);
            DIR *d = wdir ? opendir(wdir) : NULL;
            struct dirent *de;
            while (d && (de = readdir(d))) {
                if (de->d_name[0] == '.') continue;
                char rel[NAME_MAX + 8];
                snprintf(rel, sizeof rel, "txt/%s", de->d_name);
                if (!sub_is_dir(r->root, rel) && !r->o.quiet)
                    fprintf(stderr, "xtts-tokenize: %s: speaker %s has audio in %s/ but no transcripts: skipped\n", path, de->d_name, wd);
            }
            if (d) closedir(d);
            free(wdir);
        } else if (r->fmt == XTTS_META_LIBRITTS) {
            skipped = walk(r->root, 4, r->o.original_text ? libri_orig : libri_norm, &r->files, first_skip,
                           sizeof first_skip);
        } else {
            skipped = walk(r->root, 6, mailabs_suf, &r->files, first_skip, sizeof first_skip);
        }
        if (skipped && !r->o.quiet)
            fprintf(stderr, "xtts-tokenize: %s: skipped %zu link%s into a directory already read (%s%s)\n", path, skipped,
                    skipped == 1 ? "" : "s", first_skip, skipped == 1 ? "" : ", ...");
    } else {
        return xtts_error_set(err, XTTS_EIO, "%s: cannot open: %s", path, strerror(ENOENT));
    }
    if (r->files.failed || !r->root) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    if (!r->files.n) return xtts_error_set(err, XTTS_EINPUT, "%s: no %s transcript files found", path, formats[r->fmt].name);
    return XTTS_OK;
}

/* lhotse: which manifest (CutSet, SupervisionSet; a RecordingSet is refused) from its first
 * line, and a SupervisionSet's recordings from the *recordings* file beside it */
static xtts_status open_lhotse(xtts_meta_reader *r, const char *path, const char *first, int have_first, xtts_error *err) {
    const xtts_meta_options *o = &r->o;
    /* lhotse paths are relative to the working directory, as lhotse itself reads them */
    free(r->base);
    r->base = abs_path(o->audio_dir ? o->audio_dir : ".");
    if (!r->base) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    json_error_t je;
    json_t *j = have_first ? json_loads(first, 0, &je) : NULL;
    if (json_object_get(j, "recording")) r->lhotse_kind = 1;
    else if (json_object_get(j, "recording_id")) r->lhotse_kind = 2;
    else if (json_object_get(j, "sources")) r->lhotse_kind = 3;
    json_decref(j);
    if (have_first && r->lhotse_kind == 0)
        return xtts_error_set(err, XTTS_EINPUT, "%s:1: not a lhotse CutSet, SupervisionSet or RecordingSet line", path);
    if (r->lhotse_kind == 3)
        return xtts_error_set(err, XTTS_EINPUT, "%s: a lhotse RecordingSet holds no text: give the SupervisionSet (supervisions*.jsonl[.gz]) or a CutSet", path);
    if (r->lhotse_kind != 2) return XTTS_OK;
    if (o->data) { /* a buffer stands alone: no recordings */
        r->recs_cap = 16;
        r->recs = calloc(16, sizeof *r->recs);
        return r->recs ? XTTS_OK : xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    }
    const char *b = base_of(path);
    const char *s = strstr(b, "supervisions");
    if (!s)
        return xtts_error_set(err, XTTS_EINPUT, "%s: a lhotse SupervisionSet must be named *supervisions*.jsonl[.gz] so that its RecordingSet (*recordings*) can be found", path);
    size_t n = strlen(path) + 8;
    char *rp = malloc(n);
    if (!rp) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    snprintf(rp, n, "%.*srecordings%s", (int)(s - path), path, s + strlen("supervisions"));
    xtts_status st = is_file(rp) ? lhotse_load_recordings(r, rp, err)
                                 : xtts_error_set(err, XTTS_EINPUT, "%s: its RecordingSet %s is missing", path, rp);
    free(rp);
    return st;
}

/* the split (and Common Voice's language) a file's name gives */
static void splits_from_name(xtts_meta_reader *r, const char *path, int fmt) {
    if (fmt == XTTS_META_COQUI) { /* metadata_train.csv / metadata_eval.csv */
        const char *b = base_of(path);
        r->split = strstr(b, "eval") ? "val" : strstr(b, "train") ? "train" : strstr(b, "test") ? "test" : NULL;
    }
    if (fmt == XTTS_META_COMMONVOICE) {
        char *st_name = stem(path);
        r->split = st_name ? split_of_name(st_name) : NULL;
        if (st_name && !strcmp(st_name, "validated")) r->split = NULL;
        free(st_name);
        const char *b = base_of(r->base);
        snprintf(r->lang_dir, sizeof r->lang_dir, "%.15s", b);
        if (!xtts_lang_tag_normalize(r->lang_dir)) r->lang_dir[0] = 0;
    }
}

/* the header row of formats that have one; a header where the format has none is refused */
static xtts_status read_header(xtts_meta_reader *r, const char *path, int fmt, const char *first, int have_first,
                               xtts_error *err) {
    if (formats[fmt].header) {
        char *line;
        size_t len;
        int rc = ls_next(&r->ls, &line, &len);
        if (rc < 0) return ls_error(&r->ls, path, err);
        if (rc == 0) return xtts_error_set(err, XTTS_EINPUT, "%s:1: empty input: a header row was expected", path);
        if (r->ls.too_long || r->ls.has_nul) return xtts_error_set(err, XTTS_EINPUT, "%s:%zu: unreadable header row", path, r->ls.line_no);
        return parse_header(r, line, err);
    }
    if (formats[fmt].sep == '|' && have_first && looks_like_header(first, '|'))
        return xtts_error_set(err, XTTS_EINPUT, "%s:%zu: the first line is a header row naming columns (%.80s); --format %s has none: use --format coqui",
                              path, r->ls.line_no, first, formats[fmt].name);
    return XTTS_OK;
}

/* --text-column for the layouts whose columns are fixed: ljspeech and mailabs
 * (id|text|normalized_text), libritts (original_text, normalized_text: --text), vctk (text).
 * Header rows and JSON keys are checked where they are read. */
static xtts_status resolve_text_column(xtts_meta_reader *r, const char *path, xtts_error *err) {
    const char *want = r->o.text_column, *has = NULL;
    if (!want) return XTTS_OK;
    switch (r->fmt) {
    case XTTS_META_LJSPEECH:
    case XTTS_META_MAILABS:
        if (!strcmp(want, "text")) r->text_pick = PICK_TEXT;
        else if (!strcmp(want, "normalized_text")) r->text_pick = PICK_NORMALIZED;
        else has = "text, normalized_text (id|text|normalized_text)";
        break;
    case XTTS_META_LIBRITTS:
        if (!strcmp(want, "original_text") || !strcmp(want, "normalized_text")) {
            int original = want[0] == 'o';
            if (r->o.original_text && !original)
                return xtts_error_set(err, XTTS_EUSAGE, "--text original and --text-column normalized_text disagree");
            r->o.original_text = original;
        } else {
            has = "original_text, normalized_text";
        }
        break;
    case XTTS_META_VCTK:
        if (strcmp(want, "text")) has = "text (one transcript file per utterance)";
        break;
    default: break;
    }
    if (has)
        return xtts_error_set(err, XTTS_EUSAGE, "%s: no text column '%.60s' in --format %s (--text-column); it has: %s", path, want,
                              formats[r->fmt].name, has);
    return XTTS_OK;
}

/* The keys of a JSON object, comma separated, into buf; prefix before each. */
static void list_keys(char *buf, size_t cap, json_t *obj, const char *prefix) {
    const char *k;
    json_t *v;
    size_t n = strlen(buf);
    json_object_foreach(obj, k, v) {
        if (n + 1 >= cap) break;
        int w = snprintf(buf + n, cap - n, "%s%s%s", n ? ", " : "", prefix, k);
        if (w < 0 || (size_t)w >= cap - n) { snprintf(buf + (cap > 4 ? cap - 4 : 0), cap > 4 ? 4 : cap, "..."); break; }
        n += (size_t)w;
    }
}

/* --text-column for nemo and lhotse: the first record (lhotse: its first supervision) must have
 * the key as a string; the error lists the keys it has. A first line that is no such object is
 * left to be that record's rejection. */
static xtts_status check_text_key(xtts_meta_reader *r, const char *path, const char *first, int have_first, xtts_error *err) {
    const char *want = r->o.text_column;
    if (!want || !have_first || (r->fmt != XTTS_META_NEMO && r->fmt != XTTS_META_LHOTSE)) return XTTS_OK;
    json_error_t je;
    json_t *o = json_loads(first, 0, &je), *obj = o;
    if (r->fmt == XTTS_META_LHOTSE && json_object_get(o, "supervisions")) obj = json_array_get(json_object_get(o, "supervisions"), 0);
    xtts_status st = XTTS_OK;
    if (json_is_object(obj) && !(r->fmt == XTTS_META_NEMO ? json_str(obj, want) : sup_text(r, obj))) {
        char keys[300] = "";
        list_keys(keys, sizeof keys, obj, "");
        if (r->fmt == XTTS_META_LHOTSE && json_is_object(json_object_get(obj, "custom")))
            list_keys(keys, sizeof keys, json_object_get(obj, "custom"), "custom.");
        st = xtts_error_set(err, XTTS_EUSAGE, "%s:%zu: no \"%.60s\" string in the first %s (--text-column); it has: %s", path,
                            r->ls.line_no, want, r->fmt == XTTS_META_NEMO ? "record" : "supervision", keys);
    }
    json_decref(o);
    return st;
}

/* a dataset directory in a tree format (LibriTTS, VCTK, ...) */
static xtts_status open_tree_format(xtts_meta_reader *r, int fmt, xtts_error *err) {
    r->fmt = (xtts_meta_format)fmt;
    xtts_status st = resolve_text_column(r, r->o.path, err);
    if (st) return st;
    st = open_tree(r, err);
    if (st) return st;
    r->base = r->o.audio_dir ? abs_path(r->o.audio_dir) : strdup(r->root);
    if (!r->base) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    if (r->o.format == XTTS_META_AUTO && !r->o.quiet)
        fprintf(stderr, "xtts-tokenize: %s: reading as --format %s\n", r->o.path, formats[fmt].name);
    return XTTS_OK;
}

/* a metadata file (or buffer) at path: its first non-empty line decides auto and is read again
 * as data or header */
static xtts_status open_file_format(xtts_meta_reader *r, int fmt, const char *path, xtts_error *err) {
    const xtts_meta_options *o = &r->o;
    char why[200] = "";
    xtts_status st = ls_open(&r->ls, path, o->data, o->len, err);
    if (st) return st;
    r->ls_open = 1;
    char *first = "";
    size_t flen = 0;
    int rc;
    while ((rc = ls_next(&r->ls, &first, &flen)) == 1 && flen == 0 && !r->ls.too_long) {}
    if (rc < 0) return ls_error(&r->ls, path, err);
    if (rc == 1) r->ls.replay = 1;
    else first = "";
    if (fmt == XTTS_META_AUTO) {
        if (rc == 0) return xtts_error_set(err, XTTS_EINPUT, "%s: empty input: cannot tell its format; give --format", path);
        fmt = detect_file(o->data ? "" : path, first, why, sizeof why);
        if (fmt == XTTS_META_AUTO)
            return xtts_error_set(err, XTTS_EINPUT, "%s:%zu: cannot tell the dataset format: %s; give --format", path, r->ls.line_no, why);
        if (!o->quiet) fprintf(stderr, "xtts-tokenize: %s: reading as --format %s\n", path, formats[fmt].name);
    }
    r->fmt = (xtts_meta_format)fmt;
    if ((st = resolve_text_column(r, path, err)) || (st = check_text_key(r, path, first, rc == 1, err))) return st;
    if (formats[fmt].kind == KIND_TREE) { /* a buffer in a tree format: one transcript file */
        r->root = dir_of(path);
        if (!r->root) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
        if (fmt == XTTS_META_LIBRITTS) r->split = libritts_split(r->root);
    }
    r->base = o->audio_dir ? abs_path(o->audio_dir) : r->root ? strdup(r->root) : dir_of(path);
    if (!r->base) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    if (fmt == XTTS_META_LHOTSE && (st = open_lhotse(r, path, first, rc == 1, err))) return st;
    splits_from_name(r, path, fmt);
    return read_header(r, path, fmt, first, rc == 1, err);
}

/* The i-th metadata file of a dataset folder, opened in format fmt (auto for the first), with
 * the split its name stands for. */
static xtts_status open_folder_file(xtts_meta_reader *r, int fmt, size_t i, xtts_error *err) {
    if (r->ls_open) ls_close(&r->ls);
    r->ls_open = 0;
    free(r->base);
    free(r->root);
    free(r->source);
    r->base = r->root = NULL;
    r->split = NULL;
    r->source = strdup(r->files.v[i]);
    if (!r->source) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    xtts_status st = open_file_format(r, fmt, r->files.v[i], err);
    if (!st && r->folder_split[i]) r->split = r->folder_split[i];
    return st;
}

/* The notice that says which files of a dataset folder are read, as what. */
static void folder_notice(const xtts_meta_reader *r) {
    fprintf(stderr, "xtts-tokenize: %s: reading ", r->o.path);
    for (size_t i = 0; i < r->files.n; i++) {
        fprintf(stderr, "%s%s", i == 0 ? "" : i + 1 < r->files.n ? ", " : " and ", base_of(r->files.v[i]));
        if (r->folder_split[i]) fprintf(stderr, " (%s)", r->folder_split[i]);
    }
    fprintf(stderr, " as --format %s", formats[r->fmt].name);
    if (r->folder_split[0] && sub_is_file(r->o.path, "metadata.csv")) fputs("; metadata.csv is not read", stderr);
    fputc('\n', stderr);
}

/* A dataset folder read through its metadata files (folder_files: the split files, else
 * metadata.csv) as one input: the first opened now, the others by next_line in turn. */
static xtts_status open_folder(xtts_meta_reader *r, int fmt, xtts_error *err) {
    const char *dir = r->o.path;
    for (size_t i = 0; i < sizeof folder_files / sizeof *folder_files; i++) {
        if (i == FOLDER_SPLIT_FILES && r->files.n) break;
        char *p = path_join(dir, folder_files[i].name);
        if (!p) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
        if (!is_file(p)) { free(p); continue; }
        r->folder_split[r->files.n] = folder_files[i].split;
        sl_add(&r->files, p);
    }
    if (r->files.failed) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    if (!r->files.n)
        return xtts_error_set(err, XTTS_EINPUT, "%s: a directory without metadata_train.csv, metadata_eval.csv, metadata_val.csv "
                              "or metadata.csv; give the metadata file", dir);
    r->folder = 1;
    r->file_i = 1;
    int quiet = r->o.quiet;
    r->o.quiet = 1; /* the folder's own notice says the format */
    xtts_status st = open_folder_file(r, fmt, 0, err);
    r->o.quiet = quiet;
    if (!st && !quiet) folder_notice(r);
    return st;
}

xtts_status xtts_meta_open(const xtts_meta_options *o, xtts_meta_reader **out, xtts_error *err) {
    *out = NULL;
    xtts_meta_reader *r = calloc(1, sizeof *r);
    if (!r) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    r->o = *o;
    if (!r->o.path) r->o.path = "-";
    for (int i = 0; i < N_COLS; i++) r->col[i] = -1;
    xtts_status st = XTTS_OK;
    const char *path = r->o.path;
    int fmt = o->format;
    char why[400] = "";
    int path_is_dir = !o->data && strcmp(path, "-") && is_dir(path);
    r->source = strdup(path);
    if (!r->source) st = xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    if (!st && fmt == XTTS_META_AUTO && path_is_dir) {
        fmt = detect_dir(path, why, sizeof why);
        if (fmt == XTTS_META_AUTO) st = xtts_error_set(err, XTTS_EINPUT, "%s: %s", path, why);
    }
    if (!st) {
        if (fmt == DETECT_FOLDER || (path_is_dir && (fmt == XTTS_META_LJSPEECH || fmt == XTTS_META_COQUI)))
            st = open_folder(r, fmt == DETECT_FOLDER ? XTTS_META_AUTO : fmt, err);
        else if (fmt != XTTS_META_AUTO && formats[fmt].kind == KIND_TREE && !o->data)
            st = open_tree_format(r, fmt, err);
        else if (path_is_dir)
            st = xtts_error_set(err, XTTS_EINPUT, "%s: is a directory; --format %s reads a file", path, formats[fmt].name);
        else
            st = open_file_format(r, fmt, path, err);
    }
    if (st) {
        xtts_meta_close(r);
        return st;
    }
    *out = r;
    return XTTS_OK;
}

/* The code of a language named in English (as lhotse recipes write "English"), or NULL. */
static const char *lang_of_name(const char *name) {
    static const char *const names[][2] = {
        {"English", "en"}, {"Spanish", "es"}, {"French", "fr"}, {"German", "de"}, {"Italian", "it"},
        {"Portuguese", "pt"}, {"Polish", "pl"}, {"Turkish", "tr"}, {"Russian", "ru"}, {"Dutch", "nl"},
        {"Czech", "cs"}, {"Arabic", "ar"}, {"Chinese", "zh-cn"}, {"Mandarin", "zh-cn"}, {"Hungarian", "hu"},
        {"Korean", "ko"}, {"Japanese", "ja"}, {"Hindi", "hi"}, {"Ukrainian", "uk"}, {"Swedish", "sv"},
        {"Finnish", "fi"}, {"Greek", "el"}, {"Danish", "da"}, {"Norwegian", "no"}, {"Catalan", "ca"},
        {"Swahili", "sw"}, {"Vietnamese", "vi"}, {"Indonesian", "id"}, {"Persian", "fa"}, {"Hebrew", "he"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcasecmp(name, names[i][0])) return names[i][1];
    return NULL;
}

/* ---- next ---------------------------------------------------------------------------------------------- */

/* The next line of the input, the tree formats going on to their next transcript file at the
 * end of one: 1, 0 at the end of the input, -1 on an error. */
static int next_line(xtts_meta_reader *r, char **line, xtts_error *err) {
    for (;;) {
        if (!r->ls_open) {
            int t = tree_next_file(r, err);
            if (t < 0) { if (!err || !err->msg[0]) xtts_error_set(err, XTTS_ENOMEM, "out of memory"); return -1; }
            if (t == 0) return 0;
        }
        size_t len;
        int rc = ls_next(&r->ls, line, &len);
        if (rc < 0) { ls_error(&r->ls, r->source, err); return -1; }
        if (rc == 1) return 1;
        if (r->folder && r->file_i < r->files.n) { /* a dataset folder's next metadata file */
            if (open_folder_file(r, r->fmt, r->file_i++, err)) return -1;
            continue;
        }
        if (formats[r->fmt].kind != KIND_TREE || r->o.data) return 0;
        ls_close(&r->ls);
        r->ls_open = 0;
    }
}

static int is_blank(const char *line) {
    for (const char *q = line; *q; q++)
        if (*q != ' ' && *q != '\t') return 0;
    return 1;
}

/* A LibriTTS <id>.normalized.txt: its text as the record of a transcript line "id, text, text". */
static void libritts_text_record(xtts_meta_reader *r, const char *text) {
    char *id = stem(r->source);
    char *dot = id ? strchr(id, '.') : NULL; /* <id>.normalized.txt */
    if (dot) *dot = 0;
    xtts_sb l2 = {0};
    xtts_sb_puts(&l2, id ? id : "");
    xtts_sb_putc(&l2, '\t');
    xtts_sb_puts(&l2, text);
    xtts_sb_putc(&l2, '\t');
    xtts_sb_puts(&l2, text);
    char *dir = dir_of(r->source);
    if (l2.s && dir && !l2.failed) libritts_tsv_line(r, l2.s, dir);
    free(dir);
    free(id);
    xtts_sb_free(&l2);
}

/* A one-record file (VCTK, LibriTTS's per-clip text): the whole file, from its first line,
 * is the transcript; the file is done after it. */
static int parse_whole_file(xtts_meta_reader *r, const char *line, xtts_meta_entry *e, xtts_error *err) {
    xtts_sb text = {0};
    xtts_sb_puts(&text, line);
    char *more;
    size_t ml;
    while (ls_next(&r->ls, &more, &ml) == 1 && !r->ls.too_long && !r->ls.has_nul) {
        xtts_sb_putc(&text, ' ');
        xtts_sb_puts(&text, more);
        if (text.len > XTTS_META_MAX_LINE) break;
    }
    if (text.failed || !text.s) { xtts_sb_free(&text); xtts_error_set(err, XTTS_ENOMEM, "out of memory"); return -1; }
    trim(text.s);
    e->line = 1;
    if (r->fmt == XTTS_META_VCTK) vctk_record(r, text.s);
    else libritts_text_record(r, text.s);
    xtts_sb_free(&text);
    if (r->ls_open) { ls_close(&r->ls); r->ls_open = 0; }
    if (r->o.data) r->ls_open = 1, r->ls.eof = 1, r->ls.cpos = r->ls.cend = 0;
    return 0;
}

/* One line of a format with a record a line, into the reader's fields. */
static int parse_format_line(xtts_meta_reader *r, char *line, xtts_error *err) {
    switch (r->fmt) {
    case XTTS_META_LJSPEECH: parse_pipe_line(r, line, r->base); break;
    case XTTS_META_MAILABS: {
        char *dir = r->o.data ? strdup(r->base) : dir_of(r->source);
        if (!dir) { xtts_error_set(err, XTTS_ENOMEM, "out of memory"); return -1; }
        parse_pipe_line(r, line, r->o.audio_dir ? r->base : dir);
        free(dir);
        if (!r->reject[0]) {
            if (r->lang_dir[0]) set(r, C_LANG, r->lang_dir);
            set(r, C_SPEAKER, r->speaker_dir);
        }
        break;
    }
    case XTTS_META_TSV:
    case XTTS_META_COQUI:
    case XTTS_META_COMMONVOICE: parse_columns_line(r, line); break;
    case XTTS_META_NEMO: parse_nemo_line(r, line); break;
    case XTTS_META_LHOTSE: parse_lhotse_line(r, line); break;
    case XTTS_META_LIBRITTS: {
        char *dir = r->o.data ? strdup(r->root) : dir_of(r->source);
        if (!dir) { xtts_error_set(err, XTTS_ENOMEM, "out of memory"); return -1; }
        libritts_tsv_line(r, line, r->o.audio_dir ? r->base : dir);
        free(dir);
        break;
    }
    default: rejectf(r, "unsupported format%s", "");
    }
    return 0;
}

/* The entry from the reader's fields: the language named in English as its code, the split
 * as train, val or test. */
static int fill_entry(xtts_meta_reader *r, xtts_meta_entry *e, xtts_error *err) {
    for (int i = 0; i < N_COLS; i++)
        if (r->f[i].failed) { xtts_error_set(err, XTTS_ENOMEM, "out of memory"); return -1; }
    e->id = r->f[C_ID].s ? r->f[C_ID].s : "";
    e->audio = r->f[C_AUDIO].s ? r->f[C_AUDIO].s : "";
    e->text = r->f[C_TEXT].s ? r->f[C_TEXT].s : "";
    e->speaker = r->f[C_SPEAKER].s ? r->f[C_SPEAKER].s : "";
    e->lang = r->f[C_LANG].s ? r->f[C_LANG].s : "";
    e->split = r->f[C_SPLIT].s ? r->f[C_SPLIT].s : "";
    if (*e->lang) { /* lhotse recipes often name the language in English */
        const char *code = lang_of_name(e->lang);
        if (code) { set(r, C_LANG, code); e->lang = r->f[C_LANG].s ? r->f[C_LANG].s : ""; }
    }
    if (!r->reject[0] && *e->split) {
        const char *s = e->split;
        const char *norm = !strcmp(s, "train") ? "train"
                         : (!strcmp(s, "val") || !strcmp(s, "dev") || !strcmp(s, "valid") || !strcmp(s, "validation") || !strcmp(s, "eval")) ? "val"
                         : !strcmp(s, "test") ? "test" : NULL;
        if (!norm) rejectf(r, "unknown split '%.40s' (train, val or test)", s);
        else e->split = norm;
    }
    e->reject = r->reject[0] ? r->reject : NULL;
    return 0;
}

int xtts_meta_next(xtts_meta_reader *r, xtts_meta_entry *e, xtts_error *err) {
    for (;;) {
        char *line;
        int rc = next_line(r, &line, err);
        if (rc <= 0) return rc;
        int vctk_like = r->fmt == XTTS_META_VCTK ||
                        (r->fmt == XTTS_META_LIBRITTS && !ends_with(r->source, ".trans.tsv") && !r->o.data);
        if (is_blank(line) && !r->ls.too_long && !vctk_like) continue;
        for (int i = 0; i < N_COLS; i++) { xtts_sb_clear(&r->f[i]); r->f[i].failed = 0; }
        r->reject[0] = 0;
        memset(e, 0, sizeof *e);
        e->source = r->source;
        e->line = r->ls.line_no;
        if (r->ls.too_long) rejectf(r, "line longer than %s bytes", "1048576");
        else if (r->ls.has_nul) rejectf(r, "NUL byte in the line (not a text file?)%s", "");
        else if (vctk_like ? parse_whole_file(r, line, e, err) : parse_format_line(r, line, err)) return -1;
        if (fill_entry(r, e, err)) return -1;
        return 1;
    }
}
