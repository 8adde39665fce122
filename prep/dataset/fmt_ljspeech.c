/* fmt_ljspeech.c — the ljspeech line (id|text|normalized_text), also M-AILABS's metadata.csv lines. */
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

/* ljspeech and mailabs: id|text|normalized_text, audio at <dir>/wavs/<id>.wav; the text is the
 * normalized_text where it is given, else the text, unless --text-column names one. */
void xtts_meta_parse_pipe_line(xtts_meta_reader *r, char *line, const char *dir) {
    char *q = line, *f[4];
    int nf = 0;
    while (nf < 4 && (f[nf] = xtts_meta_next_field(&q, '|'))) nf++;
    if (nf < 2 || nf > 3) { xtts_meta_rejectf(r, "expected id|text|normalized_text (2 or 3 |-separated fields)%s", ""); return; }
    xtts_meta_set(r, C_ID, f[0]);
    int norm = nf == 3 && *f[2];
    if (r->text_pick == PICK_NORMALIZED && !norm) {
        xtts_meta_rejectf(r, "no normalized_text (its third field is empty or missing; --text-column normalized_text)%s", "");
        return;
    }
    xtts_meta_set(r, C_TEXT, norm && r->text_pick != PICK_TEXT ? f[2] : f[1]);
    if (!*f[0]) { xtts_meta_rejectf(r, "missing id%s", ""); return; }
    if (r->split) xtts_meta_set(r, C_SPLIT, r->split); /* a dataset folder's metadata_train.csv, ... */
    if (r->o.audio_dir && r->fmt == XTTS_META_LJSPEECH) {
        char *p = malloc(strlen(f[0]) + 5);
        if (p) { sprintf(p, "%s.wav", f[0]); xtts_meta_set_audio(r, r->base, p); free(p); }
        else r->f[C_AUDIO].failed = 1;
        return;
    }
    char *p = malloc(strlen(f[0]) + 10);
    if (!p) { r->f[C_AUDIO].failed = 1; return; }
    sprintf(p, "wavs/%s.wav", f[0]);
    xtts_meta_set_audio(r, dir, p);
    free(p);
}
