/* builder.h — what one build thread needs to turn an input record into a stored record:
 * the audio front end (decode, mix down, resample, trim, as the cache's configuration says),
 * the mel kernel and the record encoder, plus a token buffer. xtts-melcache gives one to
 * each worker thread; `xtts-cache-verify --recompute` (recompute.c) uses one, without the
 * encoder, to rebuild a record from its source the same way.
 */
#ifndef XTTS_PREP_BUILDER_H
#define XTTS_PREP_BUILDER_H

#include <stdint.h>

#include "common/xtts_common.h"
#include "formats/manifest.h"
#include "formats/record.h"
#include "kernels/mel.h"
#include "prep/audio/audio.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    xtts_audio *audio;
    xtts_mel *mel;
    xtts_record_encoder *enc; /* NULL when made without one */
    int32_t *tok_buf;         /* [max_tokens], with the encoder */
} xtts_record_builder;

/* The audio front end's options for a cache configuration: its rate, resampler and trim,
 * and a decoding bound just past the largest padded length (longer clips are rejected
 * anyway; not when trimming, which may shorten them). */
void xtts_record_builder_audio_options(const xtts_cache_config *c, xtts_audio_options *ao);

/* Make a builder for configuration c (with_encoder: also the record encoder and the token
 * buffer). XTTS_ENOMEM, or the audio front end's or the mel kernel's error (XTTS_EUSAGE for
 * parameters they refuse). On error *b holds nothing to free.
 * Errors: XTTS_EUSAGE (audio options or mel parameters refused), XTTS_ENOMEM (also an FFTW
 * plan that cannot be made). */
xtts_status xtts_record_builder_init(xtts_record_builder *b, const xtts_cache_config *c, int with_encoder,
                                     xtts_error *err);
/* NULL is allowed. */
void xtts_record_builder_free(xtts_record_builder *b);

#ifdef __cplusplus
}
#endif
#endif
