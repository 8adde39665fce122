/* device.c — the cost model behind `xtts-melcache --device auto` (see device.h). */
#include "prep/melcache/device.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Fitted to builds on an H100 with a 16-core host (docs/xtts-melcache.md, "Device choice"):
 * the CPU path's 11.4 s for 100 h at -j 16 is 1.8 core-seconds an hour; the CUDA path's
 * 12.9 s and 13.2 s for the same 100 h at -j 8 and -j 16, less its 0.9 s of start-up (a 1-h
 * build: 1.07 s), leave 0.12 s an hour that more threads do not lower; 100 h in 60,000
 * records is 6 s a clip. */
void xtts_melcache_device_model_defaults(xtts_melcache_device_model *m) {
    m->cpu_core_s_per_hour = 1.8;
    m->gpu_s_per_hour = 0.12;
    m->gpu_start_s = 0.9;
    m->clip_seconds = 6.0;
}

/* The next item of a comma-separated "key=value,..." setting: copies it into item (cap bytes)
 * and moves *p past it; *val points at its value, or is NULL when the item has no '='. */
static xtts_status next_item(const char **p, const char *env, char *item, size_t cap, char **val, xtts_error *err) {
    size_t n = strcspn(*p, ",");
    if (n >= cap) return xtts_error_set(err, XTTS_EUSAGE, "%s: '%.40s...' is too long", env, *p);
    memcpy(item, *p, n);
    item[n] = '\0';
    *p += n;
    if (**p == ',') (*p)++;
    char *eq = strchr(item, '=');
    if (eq) *eq = '\0';
    *val = eq ? eq + 1 : NULL;
    return XTTS_OK;
}

xtts_status xtts_melcache_device_model_parse(xtts_melcache_device_model *m, const char *spec, xtts_error *err) {
    if (!spec || !*spec) return XTTS_OK;
    xtts_melcache_device_model t = *m;
    const char *p = spec;
    while (*p) {
        char item[128], *val;
        double v;
        xtts_status st = next_item(&p, XTTS_MELCACHE_AUTO_ENV, item, sizeof item, &val, err);
        if (st) return st;
        if (!val || xtts_parse_double(val, 0.0, 1e9, &v) != 0)
            return xtts_error_set(err, XTTS_EUSAGE, "%s: '%s%s%s': expected key=number (keys: cpu, gpu, start, clip)",
                                  XTTS_MELCACHE_AUTO_ENV, item, val ? "=" : "", val ? val : "");
        if (!strcmp(item, "cpu")) t.cpu_core_s_per_hour = v;
        else if (!strcmp(item, "gpu")) t.gpu_s_per_hour = v;
        else if (!strcmp(item, "start")) t.gpu_start_s = v;
        else if (!strcmp(item, "clip") && v > 0) t.clip_seconds = v;
        else
            return xtts_error_set(err, XTTS_EUSAGE, "%s: '%s=%s': expected cpu, gpu, start or clip (clip above 0)",
                                  XTTS_MELCACHE_AUTO_ENV, item, val);
    }
    *m = t;
    return XTTS_OK;
}

double xtts_melcache_audio_hours_estimate(const xtts_melcache_device_model *m, uint64_t n_records,
                                          double max_clip_seconds) {
    double clip = m->clip_seconds;
    if (max_clip_seconds > 0 && max_clip_seconds < clip) clip = max_clip_seconds;
    return (double)n_records * clip / 3600.0;
}

int xtts_melcache_gpu_pays(const xtts_melcache_device_model *m, int threads, double audio_hours, char *why,
                           size_t why_len) {
    if (threads < 1) threads = 1;
    if (audio_hours < 0) audio_hours = 0;
    double cpu_per_hour = m->cpu_core_s_per_hour / threads;
    double cpu_s = cpu_per_hour * audio_hours;
    double gpu_s = m->gpu_start_s + m->gpu_s_per_hour * audio_hours;
    if (cpu_per_hour <= m->gpu_s_per_hour) {
        /* no build is large enough: the GPU path is no faster an hour than the threads are */
        if (why) snprintf(why, why_len, "%d threads beat the GPU path on this build", threads);
        return 0;
    }
    if (cpu_s <= gpu_s) {
        if (why) snprintf(why, why_len, "~%.2f h of audio is too little to repay the GPU's start-up", audio_hours);
        return 0;
    }
    if (why) snprintf(why, why_len, "%d thread%s, ~%.1f h of audio: the GPU path is faster", threads,
                      threads == 1 ? "" : "s", audio_hours);
    return 1;
}

void xtts_melcache_batch_options_defaults(xtts_melcache_batch_options *b) {
    b->cpu_engine = 0;
    b->sub_batches = 4;
    b->buffer_records = 0;
}

xtts_status xtts_melcache_batch_options_parse(xtts_melcache_batch_options *b, const char *spec, xtts_error *err) {
    if (!spec || !*spec) return XTTS_OK;
    xtts_melcache_batch_options t = *b;
    const char *p = spec;
    while (*p) {
        char item[128], *val;
        long v = 0;
        xtts_status st = next_item(&p, XTTS_MELCACHE_BATCH_ENV, item, sizeof item, &val, err);
        if (st) return st;
        if (val && !strcmp(item, "engine") && !strcmp(val, "cpu")) t.cpu_engine = 1;
        else if (val && !strcmp(item, "sub") && xtts_parse_long(val, 1, 64, &v) == 0) t.sub_batches = (int)v;
        else if (val && !strcmp(item, "buffer") && xtts_parse_long(val, 1, 1024, &v) == 0) t.buffer_records = (int)v;
        else
            return xtts_error_set(err, XTTS_EUSAGE, "%s: '%s%s%s': expected engine=cpu, sub=1..64 or buffer=1..1024",
                                  XTTS_MELCACHE_BATCH_ENV, item, val ? "=" : "", val ? val : "");
    }
    *b = t;
    return XTTS_OK;
}
