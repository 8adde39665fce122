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
    bs->keys.to_read = malloc(chunk * sizeof *bs->keys.to_read);
    if (!bs->slots || !bs->sums || !bs->keys.to_read) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
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
    free(bs->keys.to_read);
    xtts_audio_hasher_delete(bs->keys.hasher);
    memset(bs, 0, sizeof *bs);
}

xtts_status xtts_melcache_slot_read(xtts_melcache_inputs *in, xtts_melcache_slot *s, uint64_t input, xtts_error *err) {
    xtts_tokens_reader_tell(in->r, &s->pos);
    xtts_status st = xtts_melcache_inputs_next(in, &s->rec, err);
    s->input = input;
    s->run_end = 0;
    s->reused = s->kept = 0;
    s->n_ent = 0;
    return st;
}

xtts_status xtts_melcache_buffer_fill(xtts_melcache_inputs *in, xtts_melcache_slot *buf, size_t cap, uint64_t *next,
                                      uint64_t end, size_t *m, xtts_error *err) {
    xtts_status st = XTTS_OK;
    *m = 0;
    while (*m < cap && *next < end) {
        if ((st = xtts_melcache_slot_read(in, &buf[*m], *next, err))) break;
        (*next)++;
        (*m)++;
    }
    return st;
}

/* The content key of the slot's input from its audio file's content hash (NULL: the file
 * cannot be read) and the stream's fields. */
static void key_of(const xtts_melcache_keys *k, xtts_melcache_slot *s, const uint8_t *audio) {
    const xtts_melcache_input *x = &s->rec;
    xtts_content_key_input ki = {
        .config_hash = k->cfg_hash, .audio_hash = audio, .id = x->id,
        .speaker = x->speaker, .lang = x->lang, .split = x->split, .tokens = x->tokens,
        .n_tokens = x->n_tokens, .text = x->text, .orig_text = x->orig_text, .reject = x->reject,
    };
    xtts_content_key(&ki, s->key);
}

/* The key of a slot whose file must be read (hashed, not decoded). */
static void key_read(const xtts_melcache_keys *k, xtts_melcache_slot *s) {
    uint8_t audio[32];
    int readable = xtts_audio_hasher_hash(k->hasher, s->rec.audio_path, audio) == 0;
    key_of(k, s, readable ? audio : NULL);
}

void xtts_melcache_slot_key(const xtts_melcache_keys *k, xtts_melcache_slot *s) {
    uint8_t audio[32];
    if (xtts_audio_hasher_known(k->hasher, s->rec.audio_path, audio)) key_of(k, s, audio);
    else key_read(k, s);
}

/* The keys of buf[0..m): those whose files the stat records know on this thread (an update's
 * usual case: a stat and a hash each, too little to wake the workers for), the files to read
 * on the workers. */
static void keys_compute(const xtts_melcache_keys *k, xtts_melcache_slot *buf, size_t m) {
    size_t n_read = 0;
    if (xtts_audio_hasher_empty(k->hasher)) /* a first build: every file is read */
        for (size_t i = 0; i < m; i++) k->to_read[n_read++] = i;
    else
        for (size_t i = 0; i < m; i++) {
            uint8_t audio[32];
            if (xtts_audio_hasher_known(k->hasher, buf[i].rec.audio_path, audio)) key_of(k, &buf[i], audio);
            else k->to_read[n_read++] = i;
        }
    if (n_read == 1) key_read(k, &buf[k->to_read[0]]);
    else if (n_read > 1) {
#pragma omp parallel for num_threads(k->threads) schedule(dynamic, 8)
        for (size_t j = 0; j < n_read; j++) key_read(k, &buf[k->to_read[j]]);
    }
}

void xtts_melcache_buffer_keys(const xtts_melcache_buffers *bs, xtts_melcache_inputs *in, xtts_melcache_slot *buf,
                               size_t m) {
    const xtts_melcache_keys *k = &bs->keys;
    if (!k->planned) keys_compute(k, buf, m);
    for (size_t i = 0; i < m; i++) {
        if (k->planned) { /* the plan's pass computed them: the slot's, or those of its run */
            const uint8_t *key = k->planned + (buf[i].input - k->planned_from) * 32;
            uint64_t n = buf[i].run_end > buf[i].input ? buf[i].run_end - buf[i].input : 1;
            memcpy(buf[i].key, key, 32);
            xtts_melcache_inputs_add_keys(in, key, n);
        } else
            xtts_melcache_inputs_add_key(in, buf[i].key);
        buf[i].keys_upto = in->keys_ctx;
    }
}
