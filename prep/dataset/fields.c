/* fields.c — columns and header rows, and the helpers that fill an entry's fields. */
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

char *xtts_meta_next_field(char **p, char sep) {
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

xtts_status xtts_meta_parse_header(xtts_meta_reader *r, char *line, xtts_error *err) {
    const char *name = r->source;
    char sep = xtts_meta_formats[r->fmt].sep;
    for (int i = 0; i < N_COLS; i++) r->col[i] = -1;
    r->n_cols = 0;
    char *p = line, *f, *names[64];
    while ((f = xtts_meta_next_field(&p, sep))) {
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
int xtts_meta_looks_like_header(const char *line, char sep) {
    char buf[512];
    snprintf(buf, sizeof buf, "%s", line);
    char *p = buf, *f;
    int named = 0, audio = 0, text = 0;
    while ((f = xtts_meta_next_field(&p, sep))) {
        int c = column_of(f);
        if (c >= 0) named++;
        if (c == C_AUDIO) audio = 1;
        if (c == C_TEXT || !strcmp(f, "normalized_text")) text = 1;
    }
    return (audio && text) || (named >= 2 && text);
}

void xtts_meta_set(xtts_meta_reader *r, int c, const char *s) {
    xtts_sb_clear(&r->f[c]);
    xtts_sb_puts(&r->f[c], s);
}

void xtts_meta_rejectf(xtts_meta_reader *r, const char *fmt, const char *a) {
    snprintf(r->reject, sizeof r->reject, fmt, a);
}

/* Common Voice, and pandas' to_csv that writes Coqui's CSVs, write a field holding quotes
 * CSV-style: "..." with inner quotes doubled. */
void xtts_meta_unquote(char *s) {
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

char *xtts_meta_stem(const char *path) {
    const char *b = xtts_meta_base_of(path);
    const char *dot = strrchr(b, '.');
    size_t n = dot && dot != b ? (size_t)(dot - b) : strlen(b);
    char *s = malloc(n + 1);
    if (s) { memcpy(s, b, n); s[n] = 0; }
    return s;
}

void xtts_meta_set_audio(xtts_meta_reader *r, const char *dir, const char *rel) {
    char *p = xtts_meta_path_join(dir, rel);
    xtts_meta_set(r, C_AUDIO, p ? p : "");
    if (!p) r->f[C_AUDIO].failed = 1;
    free(p);
}

void xtts_meta_set_id_from_audio(xtts_meta_reader *r) {
    char *s = xtts_meta_stem(r->f[C_AUDIO].s ? r->f[C_AUDIO].s : "");
    xtts_meta_set(r, C_ID, s ? s : "");
    if (!s) r->f[C_ID].failed = 1;
    free(s);
}

void xtts_meta_trim(char *s) {
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n')) s[--n] = 0;
    size_t i = 0;
    while (s[i] == ' ' || s[i] == '\t') i++;
    if (i) memmove(s, s + i, n - i + 1);
}

const char *xtts_meta_json_str(json_t *o, const char *key) {
    json_t *v = json_object_get(o, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

double xtts_meta_json_num(json_t *o, const char *key, double dflt) {
    json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : dflt;
}
