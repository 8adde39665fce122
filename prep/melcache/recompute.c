/* recompute.c — one record rebuilt from its source audio (recompute.h): decoded and
 * resampled as the build does (prep/audio/audio.h with the build's audio options), its
 * log-mel computed on the CPU (kernels/mel.h) and compared with the stored frames.
 */
#include "prep/melcache/recompute.h"

#include <math.h>
#include <stdlib.h>

#include "kernels/mel.h"
#include "prep/audio/audio.h"
#include "prep/melcache/builder.h"

xtts_status xtts_recompute_record(const xtts_cache_config *cfg, const char *audio_path, const xtts_record_header *h,
                                  const float *mel, size_t stride, const int16_t *wave, double *max_abs,
                                  size_t *wave_diff, xtts_error *err) {
    *max_abs = 0;
    if (wave_diff) *wave_diff = 0;
    float *rounded = NULL;
    int16_t *q = NULL;
    xtts_record_builder b; /* decodes and computes as the build's workers do */
    xtts_status st = xtts_record_builder_init(&b, cfg, 0, err);
    if (st == XTTS_EUSAGE) { /* the same checks as melcache's options, on values the cache holds */
        char msg[XTTS_ERRMSG_MAX];
        snprintf(msg, sizeof msg, "%s", err ? err->msg : "");
        return xtts_error_set(err, XTTS_EINPUT, "the cache's configuration: %s", msg);
    }
    if (st) return st;
    const float *samples;
    size_t n = 0, frames = 0;
    float *out = NULL;
    st = xtts_audio_load(b.audio, audio_path, &samples, &n, NULL, err);
    if (st) goto done;
    if (n != h->n_samples) {
        st = xtts_error_set(err, XTTS_EMISMATCH, "%s: %zu samples at %d Hz, the record says %u", audio_path, n,
                            cfg->mel.sample_rate, h->n_samples);
        goto done;
    }
    if (wave) { /* the writer computed the mel from the int16-rounded signal */
        rounded = malloc((n ? n : 1) * sizeof *rounded);
        q = malloc((n ? n : 1) * sizeof *q);
        if (!rounded || !q) {
            st = xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", audio_path);
            goto done;
        }
        xtts_wave_to_int16(samples, n, q, rounded);
        size_t diff = 0;
        for (size_t i = 0; i < n; i++) diff += q[i] != wave[i];
        if (wave_diff) *wave_diff = diff;
        samples = rounded;
    }
    size_t want = xtts_mel_n_frames(&cfg->mel, n);
    if (want != h->n_frames) {
        st = xtts_error_set(err, XTTS_EMISMATCH, "%s: %zu frames, the record has %u", audio_path, want, h->n_frames);
        goto done;
    }
    size_t C = (size_t)cfg->mel.n_mels;
    if (!(out = malloc((C * (want ? want : 1)) * sizeof *out))) {
        st = xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", audio_path);
        goto done;
    }
    st = xtts_mel_compute(b.mel, samples, n, out, want ? want : 1, &frames, NULL, err);
    if (st) goto done;
    if (frames != h->n_frames || C != h->n_mels) {
        st = xtts_error_set(err, XTTS_EMISMATCH, "%s: mel [%zu, %zu], the record holds [%u, %u]", audio_path, C,
                            frames, h->n_mels, h->n_frames);
        goto done;
    }
    double worst = 0;
    for (size_t c = 0; c < C; c++)
        for (size_t t = 0; t < frames; t++) {
            double d = fabs((double)out[c * frames + t] - (double)mel[c * stride + t]);
            if (!(d <= worst)) worst = d; /* NaN counts as the worst */
        }
    *max_abs = worst;
done:
    free(rounded);
    free(q);
    free(out);
    xtts_record_builder_free(&b);
    return st;
}
