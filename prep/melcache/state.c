/* state.c — the state a build saves with every commit (state.h). */
#include "prep/melcache/state.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define STATS_MAGIC 0x58535431u /* "XST1" */

xtts_status xtts_melcache_inputs_save(xtts_cache_writer *w, const uint8_t digest[32], const char *id, xtts_error *err) {
    uint8_t buf[32 + 1024];
    memcpy(buf, digest, 32);
    size_t n = strlen(id);
    if (n > sizeof buf - 32) n = sizeof buf - 32;
    memcpy(buf + 32, id, n);
    return xtts_cache_writer_set_state(w, XTTS_MELCACHE_INPUTS_KEY, buf, 32 + n, err);
}

void xtts_melcache_stats_add(xtts_melcache_stats *s, uint64_t frames, uint32_t tokens, uint64_t n_pcm, int split,
                             const double *sum, const double *sumsq, int sample_rate) {
    s->frames += frames;
    s->tokens += tokens;
    s->audio_seconds += (double)n_pcm / sample_rate;
    if (split == XTTS_SPLIT_VAL) s->val++; else s->train++;
    for (uint32_t c = 0; c < s->n_mels; c++) {
        s->sum[c] += sum[c];
        s->sumsq[c] += sumsq[c];
    }
}

xtts_status xtts_melcache_stats_save(xtts_cache_writer *w, const xtts_melcache_stats *s, xtts_error *err) {
    /* sum[] is full-size in the struct; pack sum[0..n) and sumsq[0..n) contiguously */
    size_t head = offsetof(xtts_melcache_stats, sum);
    size_t n = s->n_mels;
    uint8_t buf[sizeof(xtts_melcache_stats)];
    memcpy(buf, s, head);
    memcpy(buf + head, s->sum, n * sizeof(double));
    memcpy(buf + head + n * sizeof(double), s->sumsq, n * sizeof(double));
    return xtts_cache_writer_set_state(w, XTTS_MELCACHE_STATS_KEY, buf, head + 2 * n * sizeof(double), err);
}

xtts_status xtts_melcache_stats_load(xtts_cache_writer *w, xtts_melcache_stats *s, int n_mels, xtts_error *err) {
    memset(s, 0, sizeof *s);
    s->magic = STATS_MAGIC;
    s->n_mels = (uint32_t)n_mels;
    void *data = NULL;
    size_t len = 0;
    xtts_error e2;
    xtts_status st = xtts_cache_writer_get_state(w, XTTS_MELCACHE_STATS_KEY, &data, &len, &e2);
    if (st == XTTS_ENOTFOUND) return XTTS_OK;
    if (st) { if (err) *err = e2; return st; }
    size_t head = offsetof(xtts_melcache_stats, sum);
    size_t need = head + 2 * (size_t)n_mels * sizeof(double);
    xtts_melcache_stats t;
    if (len != need) { free(data); return xtts_error_set(err, XTTS_ECORRUPT, "saved build statistics have the wrong size"); }
    memcpy(&t, data, head);
    if (t.magic != STATS_MAGIC || t.n_mels != (uint32_t)n_mels) {
        free(data);
        return xtts_error_set(err, XTTS_ECORRUPT, "saved build statistics do not match this configuration");
    }
    memcpy(s, &t, head);
    memcpy(s->sum, (uint8_t *)data + head, (size_t)n_mels * sizeof(double));
    memcpy(s->sumsq, (uint8_t *)data + head + (size_t)n_mels * sizeof(double), (size_t)n_mels * sizeof(double));
    free(data);
    return XTTS_OK;
}

int xtts_melcache_state_has(xtts_cache_writer *w, const char *key) {
    void *data = NULL;
    size_t len = 0;
    xtts_error e;
    int has = xtts_cache_writer_get_state(w, key, &data, &len, &e) != XTTS_ENOTFOUND;
    free(data);
    return has;
}

