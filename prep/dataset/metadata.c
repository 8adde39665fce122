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
#include "prep/dataset/metadata_internal.h"

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

/* ---- the table (table.c) ----------------------------------------------------------------------- */

const char *xtts_meta_format_name(xtts_meta_format f) {
    if (f >= 0 && f < XTTS_META_N_FORMATS) return xtts_meta_formats[f].name;
    return "auto";
}

int xtts_meta_format_parse(const char *name) {
    if (!strcmp(name, "auto")) return XTTS_META_AUTO;
    for (int i = 0; i < XTTS_META_N_FORMATS; i++)
        if (!strcmp(name, xtts_meta_formats[i].name)) return i;
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

/* ---- paths ------------------------------------------------------------------------------------ */

/* ---- directory walk (sorted, bounded) ----------------------------------------------------------- */

/* ---- the reader --------------------------------------------------------------------------------- */

xtts_meta_format xtts_meta_reader_format(const xtts_meta_reader *r) { return r->fmt; }

int xtts_meta_reader_has_lang(const xtts_meta_reader *r) {
    return (r->fmt == XTTS_META_TSV || r->fmt == XTTS_META_COQUI) ? r->col[C_LANG] >= 0 : xtts_meta_formats[r->fmt].has_lang;
}

void xtts_meta_close(xtts_meta_reader *r) {
    if (!r) return;
    if (r->ls_open) xtts_meta_ls_close(&r->ls);
    for (int i = 0; i < N_COLS; i++) xtts_sb_free(&r->f[i]);
    for (size_t i = 0; i < r->recs_cap; i++) { free(r->recs[i].key); free(r->recs[i].path); }
    free(r->recs);
    xtts_meta_sl_free(&r->files);
    free(r->base);
    free(r->root);
    free(r->source);
    free(r);
}

/* ---- per-format line parsers ---------------------------------------------------------------------- */

/* ---- tree formats ------------------------------------------------------------------------------------ */

/* Open the next transcript file of a tree; 0 when none is left. */
static int tree_next_file(xtts_meta_reader *r, xtts_error *err) {
    while (r->file_i < r->files.n) {
        const char *p = r->files.v[r->file_i++];
        if (r->fmt == XTTS_META_LIBRITTS && !xtts_meta_ends_with(p, ".trans.tsv")) {
            /* a per-utterance text file is read only where no .trans.tsv covers it */
            char *dir = strdup(p);
            if (!dir) return -1;
            *strrchr(dir, '/') = 0;
            const char *b = xtts_meta_base_of(p);
            const char *u1 = strchr(b, '_'), *u2 = u1 ? strchr(u1 + 1, '_') : NULL;
            int covered = 0;
            if (u2) {
                char t[PATH_MAX];
                snprintf(t, sizeof t, "%s/%.*s.trans.tsv", dir, (int)(u2 - b), b);
                covered = xtts_meta_is_file(t);
            }
            free(dir);
            if (covered) continue;
        }
        free(r->source);
        r->source = strdup(p);
        if (!r->source) return -1;
        if (r->ls_open) xtts_meta_ls_close(&r->ls);
        r->ls_open = 0;
        if (xtts_meta_ls_open(&r->ls, p, NULL, 0, err)) return -1;
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
        if (r->fmt == XTTS_META_LIBRITTS) r->split = xtts_meta_libritts_split(p);
        return 1;
    }
    return 0;
}

/* ---- open ------------------------------------------------------------------------------------------- */

static int has_by_book(const char *dir) {
    if (xtts_meta_sub_is_dir(dir, "by_book")) return 1;
    DIR *d = opendir(dir);
    if (!d) return 0;
    struct dirent *de;
    int found = 0, n = 0;
    while (!found && (de = readdir(d)) && n++ < 4096) {
        if (de->d_name[0] == '.') continue;
        char *p = xtts_meta_path_join(dir, de->d_name);
        if (p && xtts_meta_is_dir(p) && xtts_meta_sub_is_dir(p, "by_book")) found = 1;
        free(p);
    }
    closedir(d);
    return found;
}

/* The metadata files a dataset folder is read through, in the order they are read: the split
 * files of Coqui's recipes (metadata_eval.csv from its XTTS fine-tuning, metadata_val.csv from
 * its LJSpeech recipe), and metadata.csv where there are none. */
static const struct { const char *name, *split; } folder_files[] = {
    {"metadata_train.csv", "train"}, {"metadata_eval.csv", "val"}, {"metadata_val.csv", "val"}, {"metadata.csv", NULL},
};
#define FOLDER_SPLIT_FILES 3

static int folder_has_metadata(const char *dir) {
    for (size_t i = 0; i < sizeof folder_files / sizeof *folder_files; i++)
        if (xtts_meta_sub_is_file(dir, folder_files[i].name)) return 1;
    return 0;
}

/* detect_dir's answer for a folder read through its metadata files */
#define DETECT_FOLDER XTTS_META_N_FORMATS

/* Recognise the format of a directory: a tree format, DETECT_FOLDER, or XTTS_META_AUTO with
 * the reason in why. */
static int detect_dir(const char *dir, char *why, size_t whylen) {
    if (xtts_meta_sub_is_dir(dir, "txt") && (xtts_meta_sub_is_dir(dir, "wav48") || xtts_meta_sub_is_dir(dir, "wav48_silence_trimmed"))) return XTTS_META_VCTK;
    if (has_by_book(dir)) return XTTS_META_MAILABS;
    if (folder_has_metadata(dir)) return DETECT_FOLDER;
    if (xtts_meta_sub_is_dir(dir, "clips")) {
        snprintf(why, whylen, "cannot tell the dataset format: a Common Voice directory: give one of its .tsv files "
                 "(validated.tsv, train.tsv, ...)");
        return XTTS_META_AUTO;
    }
    if (xtts_meta_dir_has_libritts(dir)) return XTTS_META_LIBRITTS;
    snprintf(why, whylen, "no dataset metadata found: looked for metadata_train.csv, metadata_eval.csv, metadata_val.csv, "
             "metadata.csv, a VCTK tree (txt/ and wav48*/), an M-AILABS tree (by_book/) and a LibriTTS tree (*.trans.tsv, "
             "*.normalized.txt); give the metadata file, or --format");
    return XTTS_META_AUTO;
}

/* Recognise the format of a line file from its name and first line. */
static int detect_file(const char *path, const char *first, char *why, size_t whylen) {
    const char *b = xtts_meta_base_of(path);
    if (xtts_meta_ends_with(b, ".trans.tsv")) return XTTS_META_LIBRITTS;
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
    if (strchr(first, '|') && xtts_meta_looks_like_header(first, '|')) return XTTS_META_COQUI;
    if (strchr(first, '\t')) {
        char buf[4096];
        snprintf(buf, sizeof buf, "%s", first);
        int client = 0, pathc = 0, sentence = 0;
        char *p = buf, *f;
        while ((f = xtts_meta_next_field(&p, '\t'))) {
            client |= !strcmp(f, "client_id");
            pathc |= !strcmp(f, "path");
            sentence |= !strcmp(f, "sentence");
        }
        if (client && pathc && sentence) return XTTS_META_COMMONVOICE;
        if (xtts_meta_looks_like_header(first, '\t')) return XTTS_META_TSV;
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
    if (xtts_meta_is_file(path)) {
        /* one transcript file of the tree */
        xtts_meta_sl_add(&r->files, xtts_meta_abs_path(path));
        char *d = xtts_meta_dir_of(path);
        if (r->fmt == XTTS_META_VCTK && d) { /* <root>/txt/<spk>/<id>.txt */
            char *s = strrchr(d, '/');
            if (s) { *s = 0; s = strrchr(d, '/'); if (s) *s = 0; }
        }
        r->root = d;
    } else if (xtts_meta_is_dir(path)) {
        r->root = xtts_meta_abs_path(path);
        if (!r->root) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
        if (r->fmt == XTTS_META_VCTK) {
            char *txt = xtts_meta_path_join(r->root, "txt");
            if (!txt) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
            if (!xtts_meta_is_dir(txt)) { free(txt); return xtts_error_set(err, XTTS_EINPUT, "%s: not a VCTK tree (no txt/ directory)", path); }
            skipped = xtts_meta_walk(txt, 1, vctk_suf, &r->files, first_skip, sizeof first_skip);
            free(txt);
            /* speakers with audio but no transcripts (p315 in VCTK) */
            const char *wd = xtts_meta_sub_is_dir(r->root, "wav48_silence_trimmed") ? "wav48_silence_trimmed" : "wav48";
            char *wdir = xtts_meta_path_join(r->root, wd);
            DIR *d = wdir ? opendir(wdir) : NULL;
            struct dirent *de;
            while (d && (de = readdir(d))) {
                if (de->d_name[0] == '.') continue;
                char rel[NAME_MAX + 8];
                snprintf(rel, sizeof rel, "txt/%s", de->d_name);
                if (!xtts_meta_sub_is_dir(r->root, rel) && !r->o.quiet)
                    fprintf(stderr, "xtts-tokenize: %s: speaker %s has audio in %s/ but no transcripts: skipped\n", path, de->d_name, wd);
            }
            if (d) closedir(d);
            free(wdir);
        } else if (r->fmt == XTTS_META_LIBRITTS) {
            skipped = xtts_meta_walk(r->root, 4, r->o.original_text ? libri_orig : libri_norm, &r->files, first_skip,
                           sizeof first_skip);
        } else {
            skipped = xtts_meta_walk(r->root, 6, mailabs_suf, &r->files, first_skip, sizeof first_skip);
        }
        if (skipped && !r->o.quiet)
            fprintf(stderr, "xtts-tokenize: %s: skipped %zu link%s into a directory already read (%s%s)\n", path, skipped,
                    skipped == 1 ? "" : "s", first_skip, skipped == 1 ? "" : ", ...");
    } else {
        return xtts_error_set(err, XTTS_EIO, "%s: cannot open: %s", path, strerror(ENOENT));
    }
    if (r->files.failed || !r->root) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    if (!r->files.n) return xtts_error_set(err, XTTS_EINPUT, "%s: no %s transcript files found", path, xtts_meta_formats[r->fmt].name);
    return XTTS_OK;
}

/* lhotse: which manifest (CutSet, SupervisionSet; a RecordingSet is refused) from its first
 * line, and a SupervisionSet's recordings from the *recordings* file beside it */
static xtts_status open_lhotse(xtts_meta_reader *r, const char *path, const char *first, int have_first, xtts_error *err) {
    const xtts_meta_options *o = &r->o;
    /* lhotse paths are relative to the working directory, as lhotse itself reads them */
    free(r->base);
    r->base = xtts_meta_abs_path(o->audio_dir ? o->audio_dir : ".");
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
    const char *b = xtts_meta_base_of(path);
    const char *s = strstr(b, "supervisions");
    if (!s)
        return xtts_error_set(err, XTTS_EINPUT, "%s: a lhotse SupervisionSet must be named *supervisions*.jsonl[.gz] so that its RecordingSet (*recordings*) can be found", path);
    size_t n = strlen(path) + 8;
    char *rp = malloc(n);
    if (!rp) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    snprintf(rp, n, "%.*srecordings%s", (int)(s - path), path, s + strlen("supervisions"));
    xtts_status st = xtts_meta_is_file(rp) ? xtts_meta_lhotse_load_recordings(r, rp, err)
                                 : xtts_error_set(err, XTTS_EINPUT, "%s: its RecordingSet %s is missing", path, rp);
    free(rp);
    return st;
}

/* the split (and Common Voice's language) a file's name gives */
static void splits_from_name(xtts_meta_reader *r, const char *path, int fmt) {
    if (fmt == XTTS_META_COQUI) { /* metadata_train.csv / metadata_eval.csv */
        const char *b = xtts_meta_base_of(path);
        r->split = strstr(b, "eval") ? "val" : strstr(b, "train") ? "train" : strstr(b, "test") ? "test" : NULL;
    }
    if (fmt == XTTS_META_COMMONVOICE) {
        char *st_name = xtts_meta_stem(path);
        r->split = st_name ? xtts_meta_split_of_name(st_name) : NULL;
        if (st_name && !strcmp(st_name, "validated")) r->split = NULL;
        free(st_name);
        const char *b = xtts_meta_base_of(r->base);
        snprintf(r->lang_dir, sizeof r->lang_dir, "%.15s", b);
        if (!xtts_lang_tag_normalize(r->lang_dir)) r->lang_dir[0] = 0;
    }
}

/* the header row of formats that have one; a header where the format has none is refused */
static xtts_status read_header(xtts_meta_reader *r, const char *path, int fmt, const char *first, int have_first,
                               xtts_error *err) {
    if (xtts_meta_formats[fmt].header) {
        char *line;
        size_t len;
        int rc = xtts_meta_ls_next(&r->ls, &line, &len);
        if (rc < 0) return xtts_meta_ls_error(&r->ls, path, err);
        if (rc == 0) return xtts_error_set(err, XTTS_EINPUT, "%s:1: empty input: a header row was expected", path);
        if (r->ls.too_long || r->ls.has_nul) return xtts_error_set(err, XTTS_EINPUT, "%s:%zu: unreadable header row", path, r->ls.line_no);
        return xtts_meta_parse_header(r, line, err);
    }
    if (xtts_meta_formats[fmt].sep == '|' && have_first && xtts_meta_looks_like_header(first, '|'))
        return xtts_error_set(err, XTTS_EINPUT, "%s:%zu: the first line is a header row naming columns (%.80s); --format %s has none: use --format coqui",
                              path, r->ls.line_no, first, xtts_meta_formats[fmt].name);
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
                              xtts_meta_formats[r->fmt].name, has);
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
    if (json_is_object(obj) && !(r->fmt == XTTS_META_NEMO ? xtts_meta_json_str(obj, want) : xtts_meta_sup_text(r, obj))) {
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
    r->base = r->o.audio_dir ? xtts_meta_abs_path(r->o.audio_dir) : strdup(r->root);
    if (!r->base) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    if (r->o.format == XTTS_META_AUTO && !r->o.quiet)
        fprintf(stderr, "xtts-tokenize: %s: reading as --format %s\n", r->o.path, xtts_meta_formats[fmt].name);
    return XTTS_OK;
}

/* a metadata file (or buffer) at path: its first non-empty line decides auto and is read again
 * as data or header */
static xtts_status open_file_format(xtts_meta_reader *r, int fmt, const char *path, xtts_error *err) {
    const xtts_meta_options *o = &r->o;
    char why[200] = "";
    xtts_status st = xtts_meta_ls_open(&r->ls, path, o->data, o->len, err);
    if (st) return st;
    r->ls_open = 1;
    char *first = "";
    size_t flen = 0;
    int rc;
    while ((rc = xtts_meta_ls_next(&r->ls, &first, &flen)) == 1 && flen == 0 && !r->ls.too_long) {}
    if (rc < 0) return xtts_meta_ls_error(&r->ls, path, err);
    if (rc == 1) r->ls.replay = 1;
    else first = "";
    if (fmt == XTTS_META_AUTO) {
        if (rc == 0) return xtts_error_set(err, XTTS_EINPUT, "%s: empty input: cannot tell its format; give --format", path);
        fmt = detect_file(o->data ? "" : path, first, why, sizeof why);
        if (fmt == XTTS_META_AUTO)
            return xtts_error_set(err, XTTS_EINPUT, "%s:%zu: cannot tell the dataset format: %s; give --format", path, r->ls.line_no, why);
        if (!o->quiet) fprintf(stderr, "xtts-tokenize: %s: reading as --format %s\n", path, xtts_meta_formats[fmt].name);
    }
    r->fmt = (xtts_meta_format)fmt;
    if ((st = resolve_text_column(r, path, err)) || (st = check_text_key(r, path, first, rc == 1, err))) return st;
    if (xtts_meta_formats[fmt].kind == KIND_TREE) { /* a buffer in a tree format: one transcript file */
        r->root = xtts_meta_dir_of(path);
        if (!r->root) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
        if (fmt == XTTS_META_LIBRITTS) r->split = xtts_meta_libritts_split(r->root);
    }
    r->base = o->audio_dir ? xtts_meta_abs_path(o->audio_dir) : r->root ? strdup(r->root) : xtts_meta_dir_of(path);
    if (!r->base) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    if (fmt == XTTS_META_LHOTSE && (st = open_lhotse(r, path, first, rc == 1, err))) return st;
    splits_from_name(r, path, fmt);
    return read_header(r, path, fmt, first, rc == 1, err);
}

/* The i-th metadata file of a dataset folder, opened in format fmt (auto for the first), with
 * the split its name stands for. */
static xtts_status open_folder_file(xtts_meta_reader *r, int fmt, size_t i, xtts_error *err) {
    if (r->ls_open) xtts_meta_ls_close(&r->ls);
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
        fprintf(stderr, "%s%s", i == 0 ? "" : i + 1 < r->files.n ? ", " : " and ", xtts_meta_base_of(r->files.v[i]));
        if (r->folder_split[i]) fprintf(stderr, " (%s)", r->folder_split[i]);
    }
    fprintf(stderr, " as --format %s", xtts_meta_formats[r->fmt].name);
    if (r->folder_split[0] && xtts_meta_sub_is_file(r->o.path, "metadata.csv")) fputs("; metadata.csv is not read", stderr);
    fputc('\n', stderr);
}

/* A dataset folder read through its metadata files (folder_files: the split files, else
 * metadata.csv) as one input: the first opened now, the others by next_line in turn. */
static xtts_status open_folder(xtts_meta_reader *r, int fmt, xtts_error *err) {
    const char *dir = r->o.path;
    for (size_t i = 0; i < sizeof folder_files / sizeof *folder_files; i++) {
        if (i == FOLDER_SPLIT_FILES && r->files.n) break;
        char *p = xtts_meta_path_join(dir, folder_files[i].name);
        if (!p) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
        if (!xtts_meta_is_file(p)) { free(p); continue; }
        r->folder_split[r->files.n] = folder_files[i].split;
        xtts_meta_sl_add(&r->files, p);
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
    int path_is_dir = !o->data && strcmp(path, "-") && xtts_meta_is_dir(path);
    r->source = strdup(path);
    if (!r->source) st = xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    if (!st && fmt == XTTS_META_AUTO && path_is_dir) {
        fmt = detect_dir(path, why, sizeof why);
        if (fmt == XTTS_META_AUTO) st = xtts_error_set(err, XTTS_EINPUT, "%s: %s", path, why);
    }
    if (!st) {
        if (fmt == DETECT_FOLDER || (path_is_dir && (fmt == XTTS_META_LJSPEECH || fmt == XTTS_META_COQUI)))
            st = open_folder(r, fmt == DETECT_FOLDER ? XTTS_META_AUTO : fmt, err);
        else if (fmt != XTTS_META_AUTO && xtts_meta_formats[fmt].kind == KIND_TREE && !o->data)
            st = open_tree_format(r, fmt, err);
        else if (path_is_dir)
            st = xtts_error_set(err, XTTS_EINPUT, "%s: is a directory; --format %s reads a file", path, xtts_meta_formats[fmt].name);
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
        int rc = xtts_meta_ls_next(&r->ls, line, &len);
        if (rc < 0) { xtts_meta_ls_error(&r->ls, r->source, err); return -1; }
        if (rc == 1) return 1;
        if (r->folder && r->file_i < r->files.n) { /* a dataset folder's next metadata file */
            if (open_folder_file(r, r->fmt, r->file_i++, err)) return -1;
            continue;
        }
        if (xtts_meta_formats[r->fmt].kind != KIND_TREE || r->o.data) return 0;
        xtts_meta_ls_close(&r->ls);
        r->ls_open = 0;
    }
}

static int is_blank(const char *line) {
    for (const char *q = line; *q; q++)
        if (*q != ' ' && *q != '\t') return 0;
    return 1;
}

/* A one-record file (VCTK, LibriTTS's per-clip text): the whole file, from its first line,
 * is the transcript; the file is done after it. */
static int parse_whole_file(xtts_meta_reader *r, const char *line, xtts_meta_entry *e, xtts_error *err) {
    xtts_sb text = {0};
    xtts_sb_puts(&text, line);
    char *more;
    size_t ml;
    while (xtts_meta_ls_next(&r->ls, &more, &ml) == 1 && !r->ls.too_long && !r->ls.has_nul) {
        xtts_sb_putc(&text, ' ');
        xtts_sb_puts(&text, more);
        if (text.len > XTTS_META_MAX_LINE) break;
    }
    if (text.failed || !text.s) { xtts_sb_free(&text); xtts_error_set(err, XTTS_ENOMEM, "out of memory"); return -1; }
    xtts_meta_trim(text.s);
    e->line = 1;
    if (r->fmt == XTTS_META_VCTK) xtts_meta_vctk_record(r, text.s);
    else xtts_meta_libritts_text_record(r, text.s);
    xtts_sb_free(&text);
    if (r->ls_open) { xtts_meta_ls_close(&r->ls); r->ls_open = 0; }
    if (r->o.data) r->ls_open = 1, r->ls.eof = 1, r->ls.cpos = r->ls.cend = 0;
    return 0;
}

/* One line of a format with a record a line, into the reader's fields. */
static int parse_format_line(xtts_meta_reader *r, char *line, xtts_error *err) {
    switch (r->fmt) {
    case XTTS_META_LJSPEECH: xtts_meta_parse_pipe_line(r, line, r->base); break;
    case XTTS_META_MAILABS: {
        char *dir = r->o.data ? strdup(r->base) : xtts_meta_dir_of(r->source);
        if (!dir) { xtts_error_set(err, XTTS_ENOMEM, "out of memory"); return -1; }
        xtts_meta_parse_pipe_line(r, line, r->o.audio_dir ? r->base : dir);
        free(dir);
        if (!r->reject[0]) {
            if (r->lang_dir[0]) xtts_meta_set(r, C_LANG, r->lang_dir);
            xtts_meta_set(r, C_SPEAKER, r->speaker_dir);
        }
        break;
    }
    case XTTS_META_TSV:
    case XTTS_META_COQUI:
    case XTTS_META_COMMONVOICE: xtts_meta_parse_columns_line(r, line); break;
    case XTTS_META_NEMO: xtts_meta_parse_nemo_line(r, line); break;
    case XTTS_META_LHOTSE: xtts_meta_parse_lhotse_line(r, line); break;
    case XTTS_META_LIBRITTS: {
        char *dir = r->o.data ? strdup(r->root) : xtts_meta_dir_of(r->source);
        if (!dir) { xtts_error_set(err, XTTS_ENOMEM, "out of memory"); return -1; }
        xtts_meta_libritts_tsv_line(r, line, r->o.audio_dir ? r->base : dir);
        free(dir);
        break;
    }
    default: xtts_meta_rejectf(r, "unsupported format%s", "");
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
        if (code) { xtts_meta_set(r, C_LANG, code); e->lang = r->f[C_LANG].s ? r->f[C_LANG].s : ""; }
    }
    if (!r->reject[0] && *e->split) {
        const char *s = e->split;
        const char *norm = !strcmp(s, "train") ? "train"
                         : (!strcmp(s, "val") || !strcmp(s, "dev") || !strcmp(s, "valid") || !strcmp(s, "validation") || !strcmp(s, "eval")) ? "val"
                         : !strcmp(s, "test") ? "test" : NULL;
        if (!norm) xtts_meta_rejectf(r, "unknown split '%.40s' (train, val or test)", s);
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
                        (r->fmt == XTTS_META_LIBRITTS && !xtts_meta_ends_with(r->source, ".trans.tsv") && !r->o.data);
        if (is_blank(line) && !r->ls.too_long && !vctk_like) continue;
        for (int i = 0; i < N_COLS; i++) { xtts_sb_clear(&r->f[i]); r->f[i].failed = 0; }
        r->reject[0] = 0;
        memset(e, 0, sizeof *e);
        e->source = r->source;
        e->line = r->ls.line_no;
        if (r->ls.too_long) xtts_meta_rejectf(r, "line longer than %s bytes", "1048576");
        else if (r->ls.has_nul) xtts_meta_rejectf(r, "NUL byte in the line (not a text file?)%s", "");
        else if (vctk_like ? parse_whole_file(r, line, e, err) : parse_format_line(r, line, err)) return -1;
        if (fill_entry(r, e, err)) return -1;
        return 1;
    }
}
