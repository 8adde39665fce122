/* fmt_nemo.c — a NeMo manifest line (JSON: audio_filepath, text, duration, ...). */
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

/* nemo: one JSON object a line. */
void xtts_meta_parse_nemo_line(xtts_meta_reader *r, const char *line) {
    json_error_t je;
    json_t *o = json_loads(line, 0, &je);
    if (!o || !json_is_object(o)) { json_decref(o); xtts_meta_rejectf(r, "not a JSON object (NeMo manifests hold one object a line)%s", ""); return; }
    const char *audio = xtts_meta_json_str(o, "audio_filepath");
    const char *key = r->o.text_column ? r->o.text_column : "text";
    const char *text = xtts_meta_json_str(o, key);
    if (!text && !r->o.text_column) text = xtts_meta_json_str(o, "normalized_text");
    if (!audio || !*audio) { json_decref(o); xtts_meta_rejectf(r, "no \"audio_filepath\" string%s", ""); return; }
    if (!text) { xtts_meta_set(r, C_AUDIO, audio); xtts_meta_set_id_from_audio(r); json_decref(o); xtts_meta_rejectf(r, "no \"%.200s\" string", key); return; }
    xtts_meta_set_audio(r, r->base, audio);
    xtts_meta_set_id_from_audio(r);
    xtts_meta_set(r, C_TEXT, text);
    json_t *spk = json_object_get(o, "speaker");
    if (json_is_string(spk)) xtts_meta_set(r, C_SPEAKER, json_string_value(spk));
    else if (json_is_integer(spk)) {
        char b[32];
        snprintf(b, sizeof b, "%lld", (long long)json_integer_value(spk));
        xtts_meta_set(r, C_SPEAKER, b);
    }
    const char *lang = xtts_meta_json_str(o, "lang");
    if (!lang) lang = xtts_meta_json_str(o, "language");
    if (lang) xtts_meta_set(r, C_LANG, lang);
    const char *split = xtts_meta_json_str(o, "split");
    if (split) xtts_meta_set(r, C_SPLIT, split);
    json_decref(o);
}
