/* fmt_lhotse.c — lhotse's cuts and supervisions (JSON lines) and the recordings they name. */
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

/* lhotse: the audio file of a recording object, or NULL (reject set). */
static const char *lhotse_source(xtts_meta_reader *r, json_t *rec) {
    json_t *sources = json_object_get(rec, "sources");
    if (!json_is_array(sources) || json_array_size(sources) != 1) {
        xtts_meta_rejectf(r, "recording without exactly one source (multi-file recordings are not read)%s", "");
        return NULL;
    }
    json_t *s = json_array_get(sources, 0);
    const char *type = xtts_meta_json_str(s, "type"), *src = xtts_meta_json_str(s, "source");
    if (!type || strcmp(type, "file") || !src || !*src) {
        xtts_meta_rejectf(r, "recording source of type '%.40s' (only \"file\" sources are read)", type ? type : "?");
        return NULL;
    }
    return src;
}

static int lhotse_whole(xtts_meta_reader *r, double start, double dur, double rec_dur) {
    if (fabs(start) > 1e-3 || (rec_dur > 0 && fabs(dur - rec_dur) > 0.02)) {
        char b[160];
        snprintf(b, sizeof b, "a segment (start %.3f s, duration %.3f s) of a %.3f s recording: only whole recordings are read",
                 start, dur, rec_dur);
        xtts_meta_rejectf(r, "%s", b);
        return 0;
    }
    return 1;
}

/* A supervision's text: its "text", or --text-column's key at its top level or in its "custom"
 * object ("custom.KEY" names only the latter). */
const char *xtts_meta_sup_text(const xtts_meta_reader *r, json_t *sup) {
    const char *key = r->o.text_column ? r->o.text_column : "text";
    if (!strncmp(key, "custom.", 7)) return xtts_meta_json_str(json_object_get(sup, "custom"), key + 7);
    const char *t = xtts_meta_json_str(sup, key);
    return t || !r->o.text_column ? t : xtts_meta_json_str(json_object_get(sup, "custom"), key);
}

static void lhotse_fill_supervision(xtts_meta_reader *r, json_t *sup) {
    const char *text = xtts_meta_sup_text(r, sup);
    if (!text) { xtts_meta_rejectf(r, "supervision without \"%.200s\"", r->o.text_column ? r->o.text_column : "text"); return; }
    xtts_meta_set(r, C_TEXT, text);
    const char *spk = xtts_meta_json_str(sup, "speaker");
    if (spk) xtts_meta_set(r, C_SPEAKER, spk);
    const char *lang = xtts_meta_json_str(sup, "language");
    if (lang) xtts_meta_set(r, C_LANG, lang);
}

static size_t rec_slot(const xtts_meta_reader *r, const char *key) {
    size_t i = xtts_fnv1a64(XTTS_FNV64_INIT, key, strlen(key)) & (r->recs_cap - 1);
    while (r->recs[i].key && strcmp(r->recs[i].key, key)) i = (i + 1) & (r->recs_cap - 1);
    return i;
}

void xtts_meta_parse_lhotse_line(xtts_meta_reader *r, const char *line) {
    json_error_t je;
    json_t *o = json_loads(line, 0, &je);
    if (!o || !json_is_object(o)) { json_decref(o); xtts_meta_rejectf(r, "not a JSON object (lhotse manifests hold one object a line)%s", ""); return; }
    const char *id = xtts_meta_json_str(o, "id");
    if (!id || !*id) { json_decref(o); xtts_meta_rejectf(r, "no \"id\" string%s", ""); return; }
    xtts_meta_set(r, C_ID, id);
    if (r->lhotse_kind == 1) {
        json_t *rec = json_object_get(o, "recording");
        json_t *sups = json_object_get(o, "supervisions");
        if (!json_is_object(rec)) { xtts_meta_rejectf(r, "cut without a \"recording\" object%s", ""); goto done; }
        size_t ns = json_is_array(sups) ? json_array_size(sups) : 0;
        if (!ns || ns > 256) { xtts_meta_rejectf(r, "cut without supervisions (or more than 256)%s", ""); goto done; }
        const char *src = lhotse_source(r, rec);
        if (!src) goto done;
        if (!lhotse_whole(r, xtts_meta_json_num(o, "start", 0), xtts_meta_json_num(o, "duration", 0), xtts_meta_json_num(rec, "duration", 0))) goto done;
        xtts_meta_set_audio(r, r->base, src);
        lhotse_fill_supervision(r, json_array_get(sups, 0));
        if (ns > 1 && !r->reject[0]) {
            /* several supervisions: their texts joined in order of start time */
            size_t order[256];
            for (size_t i = 0; i < ns; i++) order[i] = i;
            for (size_t i = 1; i < ns; i++)
                for (size_t j = i; j > 0 && xtts_meta_json_num(json_array_get(sups, order[j]), "start", 0) <
                                                xtts_meta_json_num(json_array_get(sups, order[j - 1]), "start", 0); j--) {
                    size_t t = order[j]; order[j] = order[j - 1]; order[j - 1] = t;
                }
            xtts_sb_clear(&r->f[C_TEXT]);
            for (size_t i = 0; i < ns; i++) {
                const char *t = xtts_meta_sup_text(r, json_array_get(sups, order[i]));
                if (!t) { xtts_meta_rejectf(r, "supervision without \"%.200s\"", r->o.text_column ? r->o.text_column : "text"); break; }
                if (i) xtts_sb_putc(&r->f[C_TEXT], ' ');
                xtts_sb_puts(&r->f[C_TEXT], t);
            }
        }
    } else {
        const char *rid = xtts_meta_json_str(o, "recording_id");
        if (!rid) { xtts_meta_rejectf(r, "supervision without \"recording_id\"%s", ""); goto done; }
        size_t i = rec_slot(r, rid);
        if (!r->recs[i].key) { xtts_meta_rejectf(r, "recording '%.200s' is not in the RecordingSet", rid); goto done; }
        if (!lhotse_whole(r, xtts_meta_json_num(o, "start", 0), xtts_meta_json_num(o, "duration", 0), r->recs[i].duration)) goto done;
        xtts_meta_set_audio(r, r->base, r->recs[i].path);
        lhotse_fill_supervision(r, o);
    }
done:
    json_decref(o);
}

/* Load a RecordingSet (id -> file) for a SupervisionSet. */
xtts_status xtts_meta_lhotse_load_recordings(xtts_meta_reader *r, const char *path, xtts_error *err) {
    linesrc ls;
    xtts_status st = xtts_meta_ls_open(&ls, path, NULL, 0, err);
    if (st) return st;
    size_t n = 0;
    char *line;
    size_t len;
    int rc;
    r->recs_cap = 1024;
    r->recs = calloc(r->recs_cap, sizeof *r->recs);
    if (!r->recs) { xtts_meta_ls_close(&ls); return xtts_error_set(err, XTTS_ENOMEM, "out of memory"); }
    while ((rc = xtts_meta_ls_next(&ls, &line, &len)) == 1) {
        if (!len) continue;
        if (ls.too_long || ls.has_nul) continue;
        json_error_t je;
        json_t *o = json_loads(line, 0, &je);
        const char *id = o ? xtts_meta_json_str(o, "id") : NULL;
        if (!id) { json_decref(o); continue; }
        r->reject[0] = 0;
        const char *src = lhotse_source(r, o);
        if (!src) { json_decref(o); continue; }
        if ((n + 1) * 2 > r->recs_cap) {
            size_t oc = r->recs_cap;
            rec_entry *old = r->recs;
            r->recs_cap *= 2;
            r->recs = calloc(r->recs_cap, sizeof *r->recs);
            if (!r->recs) { r->recs = old; r->recs_cap = oc; json_decref(o); xtts_meta_ls_close(&ls); return xtts_error_set(err, XTTS_ENOMEM, "out of memory"); }
            for (size_t i = 0; i < oc; i++)
                if (old[i].key) r->recs[rec_slot(r, old[i].key)] = old[i];
            free(old);
        }
        size_t i = rec_slot(r, id);
        if (!r->recs[i].key) {
            r->recs[i].key = strdup(id);
            r->recs[i].path = strdup(src);
            r->recs[i].duration = xtts_meta_json_num(o, "duration", 0);
            if (!r->recs[i].key || !r->recs[i].path) { json_decref(o); xtts_meta_ls_close(&ls); return xtts_error_set(err, XTTS_ENOMEM, "out of memory"); }
            n++;
        }
        json_decref(o);
    }
    r->reject[0] = 0;
    xtts_meta_ls_close(&ls);
    if (rc < 0) return xtts_meta_ls_error(&ls, path, err);
    return XTTS_OK;
}
