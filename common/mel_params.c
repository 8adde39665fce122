/* mel_params.c — the mel presets, their reference implementations named beside each
 * (DESIGN.md "Mel presets"), the parameter checks, the overrides of a command line, and the
 * frame count of a clip. No FFT here: see common/mel_params.h. */
#include "common/mel_params.h"

#include <stdio.h>
#include <string.h>

xtts_status xtts_mel_preset(const char *name, xtts_mel_params *p, xtts_error *err) {
    xtts_mel_params q;
    memset(&q, 0, sizeof q);
    if (!name) return xtts_error_set(err, XTTS_EUSAGE, "mel preset: no name given");
    /* Shared defaults: the 22.05 kHz vocoder family. */
    q.sample_rate = 22050;
    q.n_fft = 1024;
    q.hop_samples = 256;
    q.win_samples = 1024;
    q.n_mels = 80;
    q.fmin_hz = 0.0;
    q.fmax_hz = 8000.0;
    q.mel_scale = XTTS_MEL_SCALE_SLANEY;
    q.mel_norm = XTTS_MEL_NORM_SLANEY;
    q.log_kind = XTTS_LOG_LN;
    q.log_floor = 1e-5;
    if (strcmp(name, "xtts") == 0) {
        /* torchaudio MelSpectrogram(norm='slaney', mel_scale='htk'), log(clamp(x, 1e-5)) */
        q.mel_scale = XTTS_MEL_SCALE_HTK;
        q.center = 1;
        q.power = 2;
    } else if (strcmp(name, "hifigan") == 0) {
        /* jik876/hifi-gan meldataset.mel_spectrogram */
        q.center = 0;
        q.pad_samples = (q.n_fft - q.hop_samples) / 2;
        q.power = 1;
        q.mag_eps = 1e-9;
    } else if (strcmp(name, "vits") == 0) {
        /* jaywalnut310/vits mel_processing.mel_spectrogram_torch */
        q.center = 0;
        q.pad_samples = (q.n_fft - q.hop_samples) / 2;
        q.power = 1;
        q.mag_eps = 1e-6;
        q.fmax_hz = q.sample_rate / 2.0;
    } else if (strcmp(name, "tacotron2") == 0) {
        /* NVIDIA tacotron2 layers.TacotronSTFT */
        q.center = 1;
        q.power = 1;
        q.mag_eps = 0.0;
    } else if (strcmp(name, "whisper") == 0) {
        /* openai/whisper audio.log_mel_spectrogram */
        q.sample_rate = 16000;
        q.n_fft = 400;
        q.hop_samples = 160;
        q.win_samples = 400;
        q.fmax_hz = 8000.0;
        q.center = 1;
        q.power = 2;
        q.log_kind = XTTS_LOG_LOG10;
        q.log_floor = 1e-10;
        q.drop_last_frame = 1;
        q.whisper_post = 1;
    } else if (strcmp(name, "linear") == 0) {
        /* jaywalnut310/vits mel_processing.spectrogram_torch: the linear magnitude */
        q.n_mels = q.n_fft / 2 + 1;
        q.fmax_hz = q.sample_rate / 2.0;
        q.mel_scale = XTTS_MEL_SCALE_LINEAR;
        q.mel_norm = XTTS_MEL_NORM_NONE;
        q.center = 0;
        q.pad_samples = (q.n_fft - q.hop_samples) / 2;
        q.power = 1;
        q.mag_eps = 1e-6;
        q.log_kind = XTTS_LOG_NONE;
    } else {
        return xtts_error_set(err, XTTS_EUSAGE,
                              "mel preset '%s' is unknown (use xtts, hifigan, vits, tacotron2, whisper or linear)", name);
    }
    snprintf(q.preset, sizeof q.preset, "%s", name);
    *p = q;
    return XTTS_OK;
}

xtts_status xtts_mel_params_check(const xtts_mel_params *p, xtts_error *err) {
    if (p->sample_rate < 1000 || p->sample_rate > 384000)
        return xtts_error_set(err, XTTS_EUSAGE, "mel: sample rate %d Hz is outside 1000..384000", p->sample_rate);
    if (p->n_fft < 16 || p->n_fft > 65536)
        return xtts_error_set(err, XTTS_EUSAGE, "mel: n_fft %d is outside 16..65536", p->n_fft);
    if (p->hop_samples < 1 || p->hop_samples > p->n_fft * 4)
        return xtts_error_set(err, XTTS_EUSAGE, "mel: hop %d is outside 1..4*n_fft", p->hop_samples);
    if (p->win_samples < 1 || p->win_samples > p->n_fft)
        return xtts_error_set(err, XTTS_EUSAGE, "mel: window %d is outside 1..n_fft (%d)", p->win_samples, p->n_fft);
    if (p->n_mels < 1 || p->n_mels > 1024)
        return xtts_error_set(err, XTTS_EUSAGE, "mel: n_mels %d is outside 1..1024", p->n_mels);
    if (!(p->fmin_hz >= 0.0) || !(p->fmax_hz > p->fmin_hz) || p->fmax_hz > p->sample_rate / 2.0)
        return xtts_error_set(err, XTTS_EUSAGE, "mel: need 0 <= fmin < fmax <= sample_rate/2 (fmin %g, fmax %g, sr %d)",
                              p->fmin_hz, p->fmax_hz, p->sample_rate);
    if (p->mel_scale != XTTS_MEL_SCALE_HTK && p->mel_scale != XTTS_MEL_SCALE_SLANEY && p->mel_scale != XTTS_MEL_SCALE_LINEAR)
        return xtts_error_set(err, XTTS_EUSAGE, "mel: mel scale %d is not htk (0), slaney (1) or linear (2)", p->mel_scale);
    if (p->mel_scale == XTTS_MEL_SCALE_LINEAR && p->n_mels != p->n_fft / 2 + 1)
        return xtts_error_set(err, XTTS_EUSAGE, "mel: a linear spectrogram has n_fft/2+1 = %d bins, not %d",
                              p->n_fft / 2 + 1, p->n_mels);
    if (p->mel_norm != XTTS_MEL_NORM_NONE && p->mel_norm != XTTS_MEL_NORM_SLANEY)
        return xtts_error_set(err, XTTS_EUSAGE, "mel: mel norm %d is not none (0) or slaney (1)", p->mel_norm);
    if (p->center != 0 && p->center != 1)
        return xtts_error_set(err, XTTS_EUSAGE, "mel: center must be 0 or 1");
    if (!p->center && (p->pad_samples < 0 || p->pad_samples >= p->n_fft))
        return xtts_error_set(err, XTTS_EUSAGE, "mel: pad %d is outside 0..n_fft-1", p->pad_samples);
    if (p->power != 1 && p->power != 2)
        return xtts_error_set(err, XTTS_EUSAGE, "mel: power must be 1 (magnitude) or 2 (power)");
    if (!(p->mag_eps >= 0.0) || p->mag_eps > 1.0)
        return xtts_error_set(err, XTTS_EUSAGE, "mel: magnitude epsilon %g is outside 0..1", p->mag_eps);
    if (p->log_kind != XTTS_LOG_LN && p->log_kind != XTTS_LOG_LOG10 && p->log_kind != XTTS_LOG_NONE)
        return xtts_error_set(err, XTTS_EUSAGE, "mel: log kind %d is not ln (0), log10 (1) or none (2)", p->log_kind);
    if (p->log_kind == XTTS_LOG_NONE && p->whisper_post)
        return xtts_error_set(err, XTTS_EUSAGE, "mel: whisper post-processing needs log10");
    if (!(p->log_floor >= 1e-30) || p->log_floor > 1.0)
        return xtts_error_set(err, XTTS_EUSAGE, "mel: log floor %g is outside 1e-30..1", p->log_floor);
    if ((p->drop_last_frame != 0 && p->drop_last_frame != 1) || (p->whisper_post != 0 && p->whisper_post != 1))
        return xtts_error_set(err, XTTS_EUSAGE, "mel: drop_last_frame and whisper_post must be 0 or 1");
    return XTTS_OK;
}

size_t xtts_mel_n_frames(const xtts_mel_params *p, size_t n_samples) {
    size_t pad = (size_t)(p->center ? p->n_fft / 2 : p->pad_samples);
    /* Reflect padding needs more samples than it pads (torch refuses otherwise). */
    if (n_samples == 0 || (pad > 0 && n_samples <= pad)) return 0;
    size_t padded = n_samples + 2 * pad;
    if (padded < (size_t)p->n_fft) return 0;
    size_t frames = (padded - (size_t)p->n_fft) / (size_t)p->hop_samples + 1;
    if (p->drop_last_frame) frames = frames > 0 ? frames - 1 : 0;
    return frames;
}

void xtts_mel_overrides_defaults(xtts_mel_overrides *ov) {
    ov->sample_rate = ov->n_fft = ov->hop = ov->win = ov->n_mels = -1;
    ov->fmin = ov->fmax = -1;
}

xtts_status xtts_mel_params_derive(const char *preset, const xtts_mel_overrides *ov, xtts_mel_params *p,
                                   xtts_error *err) {
    xtts_status st = xtts_mel_preset(preset, p, err);
    if (st) return st;
    if (ov->sample_rate > 0) p->sample_rate = (int)ov->sample_rate;
    if (ov->n_fft > 0) p->n_fft = (int)ov->n_fft;
    if (ov->hop > 0) p->hop_samples = (int)ov->hop;
    if (ov->win > 0) p->win_samples = (int)ov->win;
    if (ov->n_mels > 0) p->n_mels = (int)ov->n_mels;
    if (ov->fmin >= 0) p->fmin_hz = ov->fmin;
    if (ov->fmax > 0) p->fmax_hz = ov->fmax;
    else if (ov->sample_rate > 0 && p->fmax_hz > ov->sample_rate / 2.0) p->fmax_hz = ov->sample_rate / 2.0;
    if (ov->n_fft > 0 && ov->win <= 0 && p->win_samples > p->n_fft) p->win_samples = p->n_fft;
    if (!p->center && (ov->n_fft > 0 || ov->hop > 0)) p->pad_samples = (p->n_fft - p->hop_samples) / 2;
    return xtts_mel_params_check(p, err);
}

int xtts_mel_default_max_frames(const xtts_mel_params *p) {
    return !strcmp(p->preset, "whisper") ? 3000 : 1024;
}
