/* record.c — one record through a worker's steps: load, mel, finish (record.h). */
#include "prep/melcache/record.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/record.h"
#include "kernels/mel.h"
#include "prep/audio/audio.h"

/* Characters (code points) of UTF-8 text: the speaking rate's numerator. */
static uint32_t utf8_chars(const char *t) {
    uint32_t n = 0;
    for (; *t; t++) n += ((unsigned char)*t & 0xC0) != 0x80;
    return n;
}

/* The record's quality metrics, from the samples the mel is computed from (after resampling
 * and --trim-db, before the int16 rounding of a stored waveform and before padding), with
 * the source file's rate and the normalized text's length. 0, or -1 with the reason set. */
static int measure_one(xtts_quality_state *qs, xtts_melcache_slot *s, const float *pcm, size_t n, int rate,
                       const xtts_audio_info *info) {
    xtts_error e;
    xtts_error_clear(&e);
    if (xtts_quality_measure(qs, pcm, n, rate, info->source_rate, utf8_chars(s->rec.text), s->rec.n_tokens,
                             &s->quality, &e)) {
        snprintf(s->reason, sizeof s->reason, "%.250s: quality metrics: %.200s", s->rec.audio_path, e.msg);
        return -1;
    }
    return 0;
}

void xtts_melcache_record_load(const xtts_cache_config *c, xtts_record_builder *w, xtts_quality_state *qs,
                               xtts_melcache_slot *s, xtts_melcache_slot_bufs *b, int own) {
    const xtts_melcache_input *x = &s->rec;
    xtts_error e;
    xtts_error_clear(&e);
    s->ok = 0;
    s->len = 0;
    s->n_pcm = 0;
    s->b = b;
    if (x->reject) {
        snprintf(s->reason, sizeof s->reason, "%s", x->reject);
        return;
    }
    if (x->lang_id < 0) {
        snprintf(s->reason, sizeof s->reason, "unknown language '%s'", x->lang);
        return;
    }
    if (x->n_tokens == 0 || x->n_tokens > (uint32_t)c->max_tokens) {
        snprintf(s->reason, sizeof s->reason, "%u tokens, limit %d", x->n_tokens, c->max_tokens);
        return;
    }
    const float *pcm = NULL;
    size_t n = 0;
    xtts_audio_info info;
    if (xtts_audio_load(w->audio, x->audio_path, &pcm, &n, &info, &e)) {
        snprintf(s->reason, sizeof s->reason, "%s", e.msg);
        return;
    }
    size_t frames = xtts_mel_n_frames(&c->mel, n);
    if (frames == 0) {
        snprintf(s->reason, sizeof s->reason, "%.300s: audio shorter than one frame (%zu samples)", x->audio_path, n);
        return;
    }
    int padded = xtts_cache_config_padded_frames(c, (int)frames);
    if (padded <= 0) {
        snprintf(s->reason, sizeof s->reason, "%.300s: %zu frames, longer than the largest padded length %d",
                 x->audio_path, frames, xtts_cache_config_max_padded_frames(c));
        return;
    }
    size_t need_mel = (size_t)c->mel.n_mels * (size_t)padded;
    if (!(b->mel = xtts_renew(b->mel, &b->cap_mel, need_mel, sizeof(float)))) {
        snprintf(s->reason, sizeof s->reason, "out of memory");
        return;
    }
    if (qs && measure_one(qs, s, pcm, n, c->mel.sample_rate, &info)) return;
    s->trim_start = (uint32_t)info.trimmed_head;
    if (c->audio != XTTS_AUDIO_NONE) {
        /* the waveform is stored as int16: round it, and compute the mel from the rounded
         * signal, so that the stored waveform gives back the stored mel exactly */
        b->wave = xtts_renew(b->wave, &b->cap_wave, n, sizeof(int16_t));
        b->pcm = xtts_renew(b->pcm, &b->cap_pcm, n, sizeof(float));
        if (!b->wave || !b->pcm) {
            snprintf(s->reason, sizeof s->reason, "out of memory");
            return;
        }
        xtts_wave_to_int16(pcm, n, b->wave, b->pcm);
        pcm = b->pcm;
    } else if (own) {
        if (!(b->pcm = xtts_renew(b->pcm, &b->cap_pcm, n, sizeof(float)))) {
            snprintf(s->reason, sizeof s->reason, "out of memory");
            return;
        }
        memcpy(b->pcm, pcm, n * sizeof(float));
        pcm = b->pcm;
    }
    s->src = pcm;
    s->n_pcm = n;
    s->padded = padded;
    s->ok = 1;
}

void xtts_melcache_record_mel(xtts_record_builder *w, xtts_melcache_slot *s) {
    if (!s->ok) return;
    xtts_error e;
    xtts_error_clear(&e);
    if (xtts_mel_compute(w->mel, s->src, s->n_pcm, s->b->mel, (size_t)s->padded, &s->n_frames, &s->pad_value, &e)) {
        snprintf(s->reason, sizeof s->reason, "%.200s: %.300s", s->rec.audio_path, e.msg);
        s->ok = 0;
    }
}

void xtts_melcache_record_finish(const xtts_cache_config *c, xtts_record_builder *w, xtts_melcache_slot *s) {
    if (!s->ok) return;
    const xtts_melcache_input *x = &s->rec;
    xtts_error e;
    xtts_error_clear(&e);
    s->ok = 0;
    size_t got = s->n_frames;
    int padded = s->padded;
    int nm = c->mel.n_mels;
    for (int ch = 0; ch < nm; ch++) {
        float *row = s->b->mel + (size_t)ch * padded;
        /* four running sums (in a fixed order, so the same on every run), not one chain of
         * dependent additions; a NaN or infinite value makes its sums non-finite (a finite
         * float squared stays finite in double), so the sums are the check */
        double sm[4] = {0, 0, 0, 0}, sq[4] = {0, 0, 0, 0};
        size_t t = 0;
        for (; t + 4 <= got; t += 4)
            for (int l = 0; l < 4; l++) {
                sm[l] += row[t + l];
                sq[l] += (double)row[t + l] * row[t + l];
            }
        for (; t < got; t++) {
            sm[0] += row[t];
            sq[0] += (double)row[t] * row[t];
        }
        double sum = (sm[0] + sm[1]) + (sm[2] + sm[3]), sumsq = (sq[0] + sq[1]) + (sq[2] + sq[3]);
        if (!isfinite(sum) || !isfinite(sumsq)) {
            snprintf(s->reason, sizeof s->reason, "%.300s: non-finite mel value", x->audio_path);
            return;
        }
        s->sum[ch] = sum;
        s->sumsq[ch] = sumsq;
        /* format 1 stores the padded frames; format 2 only the true ones (its decoder pads) */
        if (c->format_version < 2)
            for (t = got; t < (size_t)padded; t++) row[t] = s->pad_value;
    }
    memcpy(w->tok_buf, x->tokens, x->n_tokens * sizeof(int32_t));
    for (int t = (int)x->n_tokens; t < c->max_tokens; t++) w->tok_buf[t] = c->pad_token;
    s->split = x->split >= 0 ? (uint8_t)x->split
                             : (uint8_t)(xtts_melcache_is_val(x->id, c->val_fraction) ? XTTS_SPLIT_VAL : XTTS_SPLIT_TRAIN);
    xtts_record_input ri = {
        .id = x->id, .split = s->split, .speaker_id = (uint32_t)x->speaker_id, .lang_id = (uint32_t)x->lang_id,
        .n_samples = (uint32_t)s->n_pcm, .n_tokens = x->n_tokens, .tokens_padded = (uint32_t)c->max_tokens,
        .n_frames = (uint32_t)got, .frames_padded = (uint32_t)padded, .n_mels = (uint16_t)nm,
        .pad_value = s->pad_value, .tokens = w->tok_buf, .mel = s->b->mel,
        .pad_token = (uint32_t)c->pad_token, .trim_start = s->trim_start, .text = x->orig_text,
        .text_norm = x->text, .wave = s->b->wave, .sample_rate = (uint32_t)c->mel.sample_rate,
    };
    const uint8_t *bytes;
    size_t len;
    if (xtts_record_encode(w->enc, &ri, &bytes, &len, &e)) {
        snprintf(s->reason, sizeof s->reason, "%s", e.msg);
        return;
    }
    uint8_t *copy = realloc(s->bytes, len);
    if (!copy) {
        snprintf(s->reason, sizeof s->reason, "out of memory");
        return;
    }
    memcpy(copy, bytes, len);
    s->bytes = copy;
    s->len = len;
    s->n_tokens = x->n_tokens;
    s->ok = 1;
}

