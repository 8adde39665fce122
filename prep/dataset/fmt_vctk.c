/* fmt_vctk.c — a VCTK text file: one record, its audio beside it by speaker. */
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

void xtts_meta_vctk_record(xtts_meta_reader *r, const char *text) {
    char *id = xtts_meta_stem(r->source);
    if (!id) { r->f[C_ID].failed = 1; return; }
    xtts_meta_set(r, C_ID, id);
    char spk[64];
    snprintf(spk, sizeof spk, "%.63s", id);
    char *us = strchr(spk, '_');
    if (us) *us = 0;
    xtts_meta_set(r, C_SPEAKER, spk);
    xtts_meta_set(r, C_TEXT, text);
    xtts_meta_set(r, C_LANG, "en");
    char rel[PATH_MAX];
    if (xtts_meta_sub_is_dir(r->root, "wav48_silence_trimmed"))
        snprintf(rel, sizeof rel, "wav48_silence_trimmed/%s/%s_%s.flac", spk, id, r->o.vctk_mic ? r->o.vctk_mic : "mic1");
    else
        snprintf(rel, sizeof rel, "wav48/%s/%s.wav", spk, id);
    xtts_meta_set_audio(r, r->root, rel);
    free(id);
    if (!xtts_meta_is_file(r->f[C_AUDIO].s)) xtts_meta_rejectf(r, "no audio file %.280s", r->f[C_AUDIO].s);
}
