/* recompute.h — rebuild one stored record's mel (and waveform) from its source audio with
 * the cache's configuration, for `xtts-cache-verify --recompute`. It lives with the cache
 * build (it decodes audio as prep/audio does and computes the mel as the build does); the
 * verifier in cache/ reaches it through the hook the program sets
 * (xtts_verify_options.recompute), so cache/ includes nothing above it.
 */
#ifndef XTTS_PREP_RECOMPUTE_H
#define XTTS_PREP_RECOMPUTE_H

#include <stddef.h>
#include <stdint.h>

#include "common/xtts_common.h"
#include "formats/manifest.h"
#include "formats/record.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Recompute one record's mel from its source audio with the cache configuration and
 * compare it with the stored one (float32 [n_mels][stride], real frames first).
 * *max_abs receives the largest absolute difference over the real frames; a sample- or
 * frame-count difference is XTTS_EMISMATCH; errors of decoding the audio are passed on
 * (XTTS_ENOTFOUND, XTTS_EINPUT, XTTS_EIO, XTTS_EUNSUPPORTED), XTTS_ENOMEM. When wave is not
 * NULL (the record's stored waveform, h->n_samples values) the recomputed signal is rounded
 * as the writer rounds it (xtts_wave_to_int16), the mel computed from the rounded signal,
 * and *wave_diff receives the number of samples that differ from the stored ones. The
 * signature is xtts_verify_recompute_fn's (cache/audit/verify.h).
 * Errors: XTTS_EMISMATCH (sample, frame or mel shape counts differ), XTTS_EINPUT for a
 * configuration the build's option checks refuse (it was read from the cache, so it is the
 * input's fault, not the command line's), XTTS_ENOMEM, those of xtts_audio_load (XTTS_ENOTFOUND,
 * XTTS_EIO, XTTS_EINPUT, XTTS_ENOMEM), XTTS_EINPUT/XTTS_ERANGE from xtts_mel_compute,
 * XTTS_ENOMEM. XTTS_EUNSUPPORTED, named above, is not returned by anything it calls. */
xtts_status xtts_recompute_record(const xtts_cache_config *cfg, const char *audio_path, const xtts_record_header *h,
                                  const float *mel, size_t stride, const int16_t *wave, double *max_abs,
                                  size_t *wave_diff, xtts_error *err);

#ifdef __cplusplus
}
#endif
#endif
