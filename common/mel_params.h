/* mel_params.h — what a log-mel spectrogram is, apart from how it is computed: the parameter
 * set, the preset table (names, parameters, reflect padding), the checks and the frame count.
 *
 * The kernels (kernels/mel.h) compute with these values, the manifest (formats/manifest.h)
 * stores them, the readers read them back: none of these needs FFTW or an audio library, so
 * this table sits below them all. The value a padded frame takes depends on the kernel's own
 * log and is the kernel's to give (xtts_mel_pad_value, kernels/mel.h).
 */
#ifndef XTTS_MEL_PARAMS_H
#define XTTS_MEL_PARAMS_H

#include <stddef.h>
#include <stdint.h>

#include "common/xtts_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* LINEAR: no mel filterbank, the n_fft/2+1 linear-frequency bins as they are (n_mels must
 * equal n_fft/2+1; the "linear" preset, VITS's spectrogram_torch). */
typedef enum { XTTS_MEL_SCALE_HTK = 0, XTTS_MEL_SCALE_SLANEY = 1, XTTS_MEL_SCALE_LINEAR = 2 } xtts_mel_scale;
typedef enum { XTTS_MEL_NORM_NONE = 0, XTTS_MEL_NORM_SLANEY = 1 } xtts_mel_norm;
/* NONE: values stored as computed (no log, no floor). */
typedef enum { XTTS_LOG_LN = 0, XTTS_LOG_LOG10 = 1, XTTS_LOG_NONE = 2 } xtts_log_kind;

typedef struct {
    char preset[16];       /* name of the preset these fields started from */
    int sample_rate;       /* Hz */
    int n_fft;
    int hop_samples;
    int win_samples;       /* <= n_fft; the window is centered in n_fft, zero outside */
    int n_mels;
    double fmin_hz, fmax_hz;
    int mel_scale;         /* xtts_mel_scale */
    int mel_norm;          /* xtts_mel_norm */
    int center;            /* 1: reflect-pad n_fft/2 both sides (torch center=True) */
    int pad_samples;       /* when center == 0: reflect pad each side ((n_fft-hop)/2 for hifigan) */
    int power;             /* 1: magnitude, 2: power */
    double mag_eps;        /* magnitude = sqrt(re^2 + im^2 + mag_eps) when power == 1 */
    int log_kind;          /* xtts_log_kind */
    double log_floor;      /* log(clamp(x, log_floor)) */
    int drop_last_frame;   /* whisper: stft[..., :-1] */
    int whisper_post;      /* whisper: max(x, max(x) - 8), then (x + 4) / 4 */
} xtts_mel_params;

/* Fill p with a preset: "xtts", "hifigan", "vits", "tacotron2", "whisper", "linear".
 * Returns XTTS_EUSAGE for an unknown name.
 * Errors: XTTS_EUSAGE only (name NULL or unknown). */
xtts_status xtts_mel_preset(const char *name, xtts_mel_params *p, xtts_error *err);

/* Check a parameter set for consistency (positive sizes, win <= n_fft, fmax <= sr/2 ...).
 * Errors: XTTS_EUSAGE only (the first field out of range, named). */
xtts_status xtts_mel_params_check(const xtts_mel_params *p, xtts_error *err);

/* Values given on a command line over a preset; a field <= 0 (fmin < 0) keeps the preset's. */
typedef struct {
    long sample_rate, n_fft, hop, win, n_mels;
    double fmin, fmax;
} xtts_mel_overrides;

void xtts_mel_overrides_defaults(xtts_mel_overrides *ov); /* nothing overridden */

/* A preset with overrides, the dependent values following them: a new sample rate caps fmax
 * at its Nyquist frequency unless fmax is given; a smaller n_fft caps the window unless the
 * window is given; a preset without centering re-derives its reflect padding from n_fft and
 * hop. Then checked (xtts_mel_params_check). XTTS_EUSAGE for an unknown preset or parameters
 * that do not fit together, with the reason.
 * Errors: XTTS_EUSAGE only. */
xtts_status xtts_mel_params_derive(const char *preset, const xtts_mel_overrides *ov, xtts_mel_params *p,
                                   xtts_error *err);

/* Number of frames for n_samples of audio under p (0 when too short for one frame). */
size_t xtts_mel_n_frames(const xtts_mel_params *p, size_t n_samples);

/* The padded length a cache uses for this preset when the user gives none: whisper's 3000
 * frames (30 s, pad_or_trim's N_FRAMES), 1024 for the others. */
int xtts_mel_default_max_frames(const xtts_mel_params *p);

#ifdef __cplusplus
}
#endif
#endif
