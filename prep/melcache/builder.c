/* builder.c — the per-thread context of the cache build (builder.h). */
#include "prep/melcache/builder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void xtts_record_builder_audio_options(const xtts_cache_config *c, xtts_audio_options *ao) {
    memset(ao, 0, sizeof *ao);
    ao->target_rate = c->mel.sample_rate;
    snprintf(ao->resampler, sizeof ao->resampler, "%s", c->resampler);
    snprintf(ao->quality, sizeof ao->quality, "%s", c->resample_quality);
    ao->trim_db = c->trim_db;
    ao->max_seconds = c->trim_db > 0 ? 0.0
                                      : ((double)xtts_cache_config_max_padded_frames(c) + 2.0) * c->mel.hop_samples / c->mel.sample_rate +
                                            (double)c->mel.n_fft / c->mel.sample_rate + 1.0;
}

void xtts_record_builder_free(xtts_record_builder *b) {
    if (!b) return;
    xtts_audio_delete(b->audio);
    xtts_mel_delete(b->mel);
    xtts_record_encoder_delete(b->enc);
    free(b->tok_buf);
    memset(b, 0, sizeof *b);
}

xtts_status xtts_record_builder_init(xtts_record_builder *b, const xtts_cache_config *c, int with_encoder,
                                     xtts_error *err) {
    memset(b, 0, sizeof *b);
    xtts_audio_options ao;
    xtts_record_builder_audio_options(c, &ao);
    xtts_status st = xtts_audio_new(&ao, &b->audio, err);
    if (st) return st;
    st = xtts_mel_new(&c->mel, &b->mel, err);
    if (st) {
        xtts_record_builder_free(b);
        return st;
    }
    if (!with_encoder) return XTTS_OK;
    xtts_record_encoder_new((xtts_dtype)c->dtype, c->zstd_level, c->shuffle ? XTTS_RECORD_SHUFFLED : 0, &b->enc);
    if (b->enc) xtts_record_encoder_set_audio(b->enc, (xtts_audio_store)c->audio);
    b->tok_buf = malloc((size_t)(c->max_tokens > 0 ? c->max_tokens : 1) * sizeof(int32_t));
    if (!b->enc || !b->tok_buf) {
        xtts_record_builder_free(b);
        return xtts_error_set(err, XTTS_ENOMEM, "out of memory for the build's buffers");
    }
    return XTTS_OK;
}
