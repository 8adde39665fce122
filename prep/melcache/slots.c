/* slots.c — a run's buffers of records in flight: filled from the stream, keyed (slots.h). */
#include "prep/melcache/slots.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void xtts_melcache_slot_bufs_free(xtts_melcache_slot_bufs *b) {
    free(b->pcm);
    free(b->wave);
    free(b->mel);
    memset(b, 0, sizeof *b);
}

xtts_status xtts_melcache_buffers_init(xtts_melcache_buffers *bs, size_t chunk, int n_mels, const char *cfg_hash,
                                       int threads, xtts_error *err) {
    size_t nm = (size_t)n_mels;
    bs->chunk = chunk;
    snprintf(bs->keys.cfg_hash, sizeof bs->keys.cfg_hash, "%s", cfg_hash);
    bs->keys.threads = threads;
    bs->slots = calloc(2 * chunk, sizeof *bs->slots);
    bs->sums = calloc(2 * chunk * 2 * nm, sizeof(double));
    if (!bs->slots || !bs->sums) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    for (size_t k = 0; k < 2 * chunk; k++) {
        bs->slots[k].sum = bs->sums + k * 2 * nm;
        bs->slots[k].sumsq = bs->slots[k].sum + nm;
    }
    return xtts_audio_hasher_new(&bs->keys.hasher, err);
}

void xtts_melcache_buffers_free(xtts_melcache_buffers *bs) {
    if (bs->slots)
        for (size_t k = 0; k < 2 * bs->chunk; k++) {
            free(bs->slots[k].bytes);
            xtts_melcache_input_free(&bs->slots[k].rec);
        }
    free(bs->slots);
    free(bs->sums);
    xtts_audio_hasher_delete(bs->keys.hasher);
    memset(bs, 0, sizeof *bs);
}

xtts_status xtts_melcache_buffer_fill(const xtts_melcache_buffers *bs, xtts_melcache_inputs *in, xtts_melcache_slot *buf,
                                      uint64_t *next, uint64_t end, size_t *m, xtts_error *err) {
    xtts_status st = XTTS_OK;
    *m = 0;
    while (*m < bs->chunk && *next < end) {
        if ((st = xtts_melcache_inputs_next(in, &buf[*m].rec, err))) break;
        buf[*m].input = (*next)++;
        buf[*m].reused = 0;
        buf[*m].n_ent = 0;
        (*m)++;
    }
    return st;
}

/* The content key of the slot's input: its audio file's content hash (read, not decoded)
 * and the stream's fields. */
static void key_one(const xtts_melcache_keys *k, const xtts_melcache_inputs *in, xtts_melcache_slot *s) {
    const xtts_melcache_input *x = &s->rec;
    uint8_t audio[32];
    int readable = xtts_audio_hasher_hash(k->hasher, x->audio_path, audio) == 0;
    xtts_content_key_input ki = {
        .config_hash = k->cfg_hash, .audio_hash = readable ? audio : NULL, .id = x->id,
        .speaker = in->speakers[x->speaker_id], .lang = x->lang, .split = x->split, .tokens = x->tokens,
        .n_tokens = x->n_tokens, .text = x->text, .orig_text = x->orig_text, .reject = x->reject,
    };
    xtts_content_key(&ki, s->key);
}

void xtts_melcache_buffer_keys(const xtts_melcache_buffers *bs, xtts_melcache_inputs *in, xtts_melcache_slot *buf,
                               size_t m) {
    const xtts_melcache_keys *k = &bs->keys;
    if (k->planned) /* the plan's pass computed them */
        for (size_t i = 0; i < m; i++) memcpy(buf[i].key, k->planned + (buf[i].input - k->planned_from) * 32, 32);
    else {
#pragma omp parallel for num_threads(k->threads) schedule(dynamic, 8)
        for (size_t i = 0; i < m; i++) key_one(k, in, &buf[i]);
    }
    for (size_t i = 0; i < m; i++) {
        xtts_melcache_inputs_add_key(in, buf[i].key);
        buf[i].keys_upto = in->keys_ctx;
    }
}
