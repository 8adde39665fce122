/* synth.c — the synthetic cache of the tests (see synth.h). */
#include "tests/synth.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/store/writer.h"
#include "formats/manifest.h"
#include "formats/record.h"

void xtts_synth_options_defaults(xtts_synth_options *o) {
    memset(o, 0, sizeof *o);
    o->n_records = 64;
    o->n_mels = 80;
    o->vocab_size = 256;
    o->min_tokens = 4;
    o->max_tokens = 24;
    o->frames_per_token = 3;
    o->max_frames = 96;
    o->val_every = 8;
    o->seed = 1;
}

static uint64_t next_u64(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* The log-mel value of token tok at channel c. */
static float pattern(int tok, int c, int n_mels) {
    double x = (double)c / n_mels;
    double f1 = 0.1 + 0.8 * ((tok * 37) % 97) / 97.0, f2 = 0.1 + 0.8 * ((tok * 61) % 89) / 89.0;
    double v = -9.0 + 6.0 * exp(-60.0 * (x - f1) * (x - f1)) + 4.0 * exp(-90.0 * (x - f2) * (x - f2)) - 2.0 * x;
    return (float)v;
}

xtts_status xtts_synth_cache_write(const char *dir, const xtts_synth_options *o, xtts_error *err) {
    if (o->n_records < 1 || o->n_mels < 1 || o->vocab_size < 1 || o->min_tokens < 1 ||
        o->max_tokens < o->min_tokens || o->frames_per_token < 1)
        return xtts_error_set(err, XTTS_EUSAGE, "synthetic cache: bad options");
    int max_frames = o->max_frames;
    for (int i = 0; i < o->n_buckets; i++)
        if (o->buckets[i] > max_frames) max_frames = o->buckets[i];
    if (o->max_tokens * o->frames_per_token > max_frames)
        return xtts_error_set(err, XTTS_EUSAGE, "synthetic cache: %d tokens x %d frames exceed %d frames",
                              o->max_tokens, o->frames_per_token, max_frames);
    xtts_cache_config cfg;
    xtts_cache_config_defaults(&cfg);
    cfg.mel.n_mels = o->n_mels;
    snprintf(cfg.tokenizer, sizeof cfg.tokenizer, "bytes");
    {
        xtts_sha256 h;
        uint8_t digest[32];
        xtts_sha256_init(&h);
        xtts_sha256_update(&h, "xtts-train synthetic vocabulary", 31);
        xtts_sha256_final(&h, digest);
        xtts_hex(digest, 32, cfg.vocab_hash);
    }
    cfg.vocab_size = o->vocab_size;
    cfg.max_tokens = o->max_tokens;
    cfg.max_frames = max_frames;
    cfg.n_buckets = o->n_buckets;
    for (int i = 0; i < o->n_buckets; i++) cfg.buckets[i] = o->buckets[i];
    cfg.dtype = XTTS_DTYPE_F16;
    cfg.val_fraction = o->val_every > 0 ? 1.0 / o->val_every : 0.0;

    xtts_cache_writer_options wo;
    xtts_cache_writer_options_defaults(&wo, dir);
    wo.force = 1;
    xtts_cache_writer *w = NULL;
    xtts_status st = xtts_cache_writer_open(&wo, &cfg, &w, err);
    if (st) return st;
    xtts_record_encoder *enc;
    xtts_record_encoder_new(XTTS_DTYPE_F16, 3, 0, &enc);
    int32_t *tokens = calloc(o->max_tokens, sizeof(int32_t));
    float *mel = malloc((size_t)o->n_mels * max_frames * sizeof(float));
    double *sum = calloc(o->n_mels, sizeof(double)), *sumsq = calloc(o->n_mels, sizeof(double));
    if (!enc || !tokens || !mel || !sum || !sumsq) {
        st = xtts_error_set(err, XTTS_ENOMEM, "synthetic cache: out of memory");
        goto fail;
    }
    uint64_t s = o->seed * 0x9e3779b97f4a7c15ULL + 0x1234567ULL, total_frames = 0;
    const float pad = logf(1e-5f);
    for (int i = 0; i < o->n_records; i++) {
        int nt = o->min_tokens + (int)(next_u64(&s) % (uint64_t)(o->max_tokens - o->min_tokens + 1));
        for (int k = 0; k < o->max_tokens; k++)
            tokens[k] = k < nt ? (int32_t)(1 + next_u64(&s) % (uint64_t)(o->vocab_size > 1 ? o->vocab_size - 1 : 1)) : 0;
        int nf = nt * o->frames_per_token;
        int padded = xtts_cache_config_padded_frames(&cfg, nf);
        if (padded <= 0) padded = max_frames;
        for (int c = 0; c < o->n_mels; c++) {
            for (int j = 0; j < padded; j++) {
                float v = pad;
                if (j < nf) {
                    int t = j / o->frames_per_token;
                    float a = (float)(j % o->frames_per_token) / o->frames_per_token;
                    int next = t + 1 < nt ? tokens[t + 1] : tokens[t];
                    v = (1.0f - 0.5f * a) * pattern(tokens[t], c, o->n_mels) + 0.5f * a * pattern(next, c, o->n_mels);
                    sum[c] += v;
                    sumsq[c] += (double)v * v;
                }
                mel[(size_t)c * padded + j] = v;
            }
        }
        total_frames += nf;
        if ((uint64_t)i < xtts_cache_writer_next_input(w)) continue; /* stored by an earlier run */
        char id[32];
        snprintf(id, sizeof id, "synth%05d", i);
        xtts_record_input in = {.id = id,
                                .split = (uint8_t)(o->val_every > 0 && i % o->val_every == o->val_every - 1),
                                .speaker_id = 0,
                                .lang_id = (uint32_t)(i % 3),
                                .n_samples = (uint32_t)nf * 256,
                                .n_tokens = (uint32_t)nt,
                                .tokens_padded = (uint32_t)o->max_tokens,
                                .n_frames = (uint32_t)nf,
                                .frames_padded = (uint32_t)padded,
                                .n_mels = (uint16_t)o->n_mels,
                                .pad_value = pad,
                                .tokens = tokens,
                                .mel = mel};
        const uint8_t *rec;
        size_t len;
        st = xtts_record_encode(enc, &in, &rec, &len, err);
        if (!st) st = xtts_cache_writer_put(w, (uint64_t)i, id, rec, len, err);
        if (st) goto fail;
    }
    /* the sums become the mean and the std, in place */
    for (int c = 0; c < o->n_mels; c++) {
        double m = sum[c] / (double)total_frames, var = sumsq[c] / (double)total_frames - m * m;
        sum[c] = m;
        sumsq[c] = sqrt(var > 1e-12 ? var : 1e-12);
    }
    xtts_manifest_extra extra = {.stats_frames = total_frames, .n_mels = (size_t)o->n_mels, .mel_mean = sum,
                                 .mel_std = sumsq};
    st = xtts_cache_writer_finish(w, &extra, err);
    w = NULL;
fail:
    if (w) xtts_cache_writer_abort(w);
    xtts_record_encoder_delete(enc);
    free(tokens);
    free(mel);
    free(sum);
    free(sumsq);
    return st;
}
