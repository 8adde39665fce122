/* fmt_libritts.c — LibriTTS: .trans.tsv lines, per-utterance text files, splits by part name. */
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

/* The split that a directory name stands for (LibriTTS parts, Common Voice files). */
const char *xtts_meta_split_of_name(const char *name) {
    if (!strncmp(name, "train", 5)) return "train";
    if (!strncmp(name, "dev", 3) || !strncmp(name, "val", 3)) return "val";
    if (!strncmp(name, "test", 4)) return "test";
    return NULL;
}

const char *xtts_meta_libritts_split(const char *path) {
    const char *split = NULL;
    char *c = strdup(path);
    if (!c) return NULL;
    char *save = NULL;
    for (char *t = strtok_r(c, "/", &save); t; t = strtok_r(NULL, "/", &save))
        if (strchr(t, '-') && xtts_meta_split_of_name(t) && !strstr(t, ".")) split = xtts_meta_split_of_name(t);
    free(c);
    return split;
}

void xtts_meta_libritts_tsv_line(xtts_meta_reader *r, char *line, const char *dir) {
    char *q = line, *f[4];
    int nf = 0;
    while (nf < 4 && (f[nf] = xtts_meta_next_field(&q, '\t'))) nf++;
    if (nf < 2 || nf > 3) { xtts_meta_rejectf(r, "expected id<TAB>original text<TAB>normalized text (a LibriTTS .trans.tsv line)%s", ""); return; }
    xtts_meta_set(r, C_ID, f[0]);
    if (!*f[0]) { xtts_meta_rejectf(r, "missing id%s", ""); return; }
    const char *text = r->o.original_text || nf < 3 || !*f[2] ? f[1] : f[2];
    xtts_meta_set(r, C_TEXT, text);
    char spk[64];
    snprintf(spk, sizeof spk, "%.63s", f[0]);
    char *us = strchr(spk, '_');
    if (us) *us = 0;
    xtts_meta_set(r, C_SPEAKER, spk);
    xtts_meta_set(r, C_LANG, "en");
    if (r->split) xtts_meta_set(r, C_SPLIT, r->split);
    char rel[PATH_MAX];
    snprintf(rel, sizeof rel, "%s.wav", f[0]);
    xtts_meta_set_audio(r, dir, rel);
}

int xtts_meta_dir_has_libritts(const char *dir) {
    static const char *const suf[] = {".trans.tsv", ".normalized.txt", NULL};
    strlist l = {0};
    xtts_meta_walk(dir, 3, suf, &l, NULL, 0);
    int yes = l.n > 0;
    xtts_meta_sl_free(&l);
    return yes;
}

/* A LibriTTS <id>.normalized.txt: its text as the record of a transcript line "id, text, text". */
void xtts_meta_libritts_text_record(xtts_meta_reader *r, const char *text) {
    char *id = xtts_meta_stem(r->source);
    char *dot = id ? strchr(id, '.') : NULL; /* <id>.normalized.txt */
    if (dot) *dot = 0;
    xtts_sb l2 = {0};
    xtts_sb_puts(&l2, id ? id : "");
    xtts_sb_putc(&l2, '\t');
    xtts_sb_puts(&l2, text);
    xtts_sb_putc(&l2, '\t');
    xtts_sb_puts(&l2, text);
    char *dir = xtts_meta_dir_of(r->source);
    if (l2.s && dir && !l2.failed) xtts_meta_libritts_tsv_line(r, l2.s, dir);
    free(dir);
    free(id);
    xtts_sb_free(&l2);
}
