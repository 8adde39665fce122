/* fmt_columns.c — the lines of the formats with named columns: tsv, coqui and commonvoice. */
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

/* tsv, coqui, commonvoice: columns named by the header row. */
void xtts_meta_parse_columns_line(xtts_meta_reader *r, char *line) {
    char sep = xtts_meta_formats[r->fmt].sep;
    char *q = line, *f[64], *x;
    int nf = 0;
    while ((x = xtts_meta_next_field(&q, sep))) { if (nf < 64) f[nf] = x; nf++; }
    if (nf != r->n_cols) {
        snprintf(r->reject, sizeof r->reject, "expected %d %s fields, found %d", r->n_cols,
                 sep == '\t' ? "tab-separated" : "|-separated", nf);
        if (r->col[C_ID] >= 0 && r->col[C_ID] < nf && nf <= 64) xtts_meta_set(r, C_ID, f[r->col[C_ID]]);
        return;
    }
    if (r->fmt == XTTS_META_COMMONVOICE || r->fmt == XTTS_META_COQUI) for (int i = 0; i < nf; i++) xtts_meta_unquote(f[i]);
    for (int c = 0; c < N_COLS; c++)
        if (r->col[c] >= 0) xtts_meta_set(r, c, f[r->col[c]]);
    const char *audio = f[r->col[C_AUDIO]];
    if (!*audio) { xtts_meta_rejectf(r, "missing audio path%s", ""); return; }
    if (r->fmt == XTTS_META_COMMONVOICE) {
        char *p = r->o.audio_dir ? strdup(audio) : xtts_meta_path_join("clips", audio); /* --audio-dir: the clips directory */
        if (!p) { r->f[C_AUDIO].failed = 1; return; }
        xtts_meta_set_audio(r, r->base, p);
        free(p);
        if (r->col[C_LANG] < 0 && r->lang_dir[0]) xtts_meta_set(r, C_LANG, r->lang_dir);
    } else {
        xtts_meta_set_audio(r, r->base, audio);
    }
    if (r->col[C_ID] < 0 || !r->f[C_ID].s || !*r->f[C_ID].s) xtts_meta_set_id_from_audio(r);
    if (r->col[C_SPLIT] < 0 && r->split) xtts_meta_set(r, C_SPLIT, r->split);
}
