"""The conditioning mel of XTTS's GPT trainer in numpy: what Coqui's TorchMelSpectrogram
(TTS/tts/layers/tortoise/arch_utils.py) gives for the style encoder (gpt_trainer.py:
filter_length 2048, hop 256, win 1024, 80 mels, 0-8000 Hz at 22,050 Hz), so that a data
loader worker computes it and the trainer's step does not.

TorchMelSpectrogram is torchaudio's MelSpectrogram (a periodic Hann window of win samples
centred in n_fft, center=True with reflect padding, power 2, slaney-normalized filters on the
HTK mel scale), then log(clamp(x, 1e-5)), divided channel by channel by the mel norms. This
computes the same in float64 and returns float32.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Optional

import numpy as np
if TYPE_CHECKING:   # numpy.typing is numpy 1.20 or later (Debian 11 has 1.19): for annotations only
    import numpy.typing as npt

__all__ = ["style_mel", "mel_filters_htk_slaney"]


@functools.lru_cache(maxsize=8)
def mel_filters_htk_slaney(sample_rate: int, n_fft: int, n_mels: int, f_min: float,
                           f_max: float) -> npt.NDArray[np.float64]:
    """torchaudio.functional.melscale_fbanks(n_fft // 2 + 1, f_min, f_max, n_mels, sample_rate,
    norm="slaney", mel_scale="htk"), transposed: [n_mels, n_freqs]."""
    n_freqs = n_fft // 2 + 1
    all_freqs = np.linspace(0, sample_rate // 2, n_freqs)
    m_min, m_max = (2595.0 * np.log10(1.0 + f / 700.0) for f in (float(f_min), float(f_max)))   # HTK
    m_pts = np.linspace(m_min, m_max, n_mels + 2)
    f_pts = 700.0 * (10.0 ** (m_pts / 2595.0) - 1.0)
    f_diff = f_pts[1:] - f_pts[:-1]
    slopes = f_pts[None, :] - all_freqs[:, None]
    down = -slopes[:, :-2] / f_diff[:-1]
    up = slopes[:, 2:] / f_diff[1:]
    fb = np.maximum(0.0, np.minimum(down, up))
    fb *= (2.0 / (f_pts[2:n_mels + 2] - f_pts[:n_mels]))[None, :]
    out: npt.NDArray[np.float64] = np.ascontiguousarray(fb.T)
    return out


@functools.lru_cache(maxsize=8)
def _window(n_fft: int, win: int) -> npt.NDArray[np.float64]:
    """torch.hann_window(win) (periodic), zero-padded to n_fft on both sides as torch.stft does.
    Computed in float32 as torch computes it (arange * (2 pi / win), cos rounded to float32,
    * -0.5, + 0.5; equal to torch's but for a few values one float32 step apart): at the
    bins of a frame far below its loudest, the window's float32 rounding leaks more than the
    FFT's, so a float64 window would not match TorchMelSpectrogram there."""
    n = np.arange(win, dtype=np.float32) * np.float32(2.0 * np.pi / win)
    w = np.float32(-0.5) * np.cos(n.astype(np.float64)).astype(np.float32) + np.float32(0.5)
    left = (n_fft - win) // 2
    out = np.zeros(n_fft)
    out[left:left + win] = w.astype(np.float64)
    return out


def style_mel(wav: npt.ArrayLike, mel_norms: Optional[npt.ArrayLike] = None, sample_rate: int = 22050,
              n_fft: int = 2048, hop: int = 256, win: int = 1024, n_mels: int = 80, f_min: float = 0.0,
              f_max: float = 8000.0) -> npt.NDArray[np.float32]:
    """The log-mel [n_mels, len(wav) // hop + 1] of a mono waveform (float, [-1, 1]) as Coqui's
    TorchMelSpectrogram computes it, divided by mel_norms ([n_mels]) when given."""
    x = np.asarray(wav, dtype=np.float64).reshape(-1)
    pad = n_fft // 2
    if x.shape[0] <= pad:
        raise ValueError("a waveform of %d samples is too short for reflect padding of %d" % (x.shape[0], pad))
    x = np.pad(x, (pad, pad), mode="reflect")
    n_frames = 1 + (x.shape[0] - n_fft) // hop
    frames = np.lib.stride_tricks.as_strided(x, shape=(n_frames, n_fft), strides=(x.strides[0] * hop, x.strides[0]))
    spec = np.fft.rfft(frames * _window(n_fft, win)[None, :], axis=1)
    power = spec.real ** 2 + spec.imag ** 2                                  # [frames, n_freqs]
    mel = mel_filters_htk_slaney(sample_rate, n_fft, n_mels, f_min, f_max) @ power.T   # [n_mels, frames]
    out = np.log(np.maximum(mel, 1e-5))
    if mel_norms is not None:
        out = out / np.asarray(mel_norms, dtype=np.float64).reshape(-1, 1)
    result: npt.NDArray[np.float32] = out.astype(np.float32)
    return result
