#!/usr/bin/python3
"""make_mel_golden.py — golden log-mel spectrograms for tests/test_mel.c.

Computes every mel preset (DESIGN.md "Mel presets") with an implementation written here
from the reference formulas in numpy float64 (librosa's slaney filter construction,
torch.stft framing), on short clips generated deterministically by the same formula as
tests/test_mel.c (sines under an envelope plus LCG noise), and writes:

  tests/golden/mel/index.txt      one line per case: name preset clip n_samples n_mels frames file
  tests/golden/mel/<name>.f32     little-endian float32 [n_mels][frames]
  tests/golden/mel/fb_<scale>.txt sparse filterbank rows (first bin, weights) for the C test

It checks itself, when torch/torchaudio are importable, against
torchaudio.transforms.MelSpectrogram (xtts preset), torchaudio.functional.melscale_fbanks
(htk and slaney scales, slaney norm) and a torch.stft rendition of hifi-gan's mel code.

Run:  /usr/bin/python3 tests/golden/make_mel_golden.py
"""
import math
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "mel")

# ---- deterministic test clips (mirrored in tests/test_mel.c: make_clip) ----------------


def make_clip(seed, n, sr):
    """Float32 clip: three sines under a slow envelope plus uniform LCG noise."""
    state = seed & 0xFFFFFFFF
    x = np.empty(n, dtype=np.float32)
    for i in range(n):
        state = (state * 1664525 + 1013904223) & 0xFFFFFFFF
        noise = (state >> 8) / 16777216.0 - 0.5
        t = i / sr
        env = 0.1 + 0.9 * (0.5 + 0.5 * math.sin(2.0 * math.pi * 2.5 * t))
        v = env * (0.3 * math.sin(2.0 * math.pi * 220.0 * t)
                   + 0.2 * math.sin(2.0 * math.pi * 1375.5 * t + 0.3)
                   + 0.1 * math.sin(2.0 * math.pi * 5000.0 * t)) + 0.04 * noise
        x[i] = v
    return x


CLIPS = {"a": (1, 7000), "b": (2, 1800)}

# ---- presets -----------------------------------------------------------------------------

BASE = dict(sr=22050, n_fft=1024, hop=256, win=1024, n_mels=80, fmin=0.0, fmax=8000.0,
            scale="slaney", norm="slaney", center=False, pad=0, power=1, eps=0.0,
            log="ln", floor=1e-5, drop_last=False, whisper=False)
PRESETS = {
    "xtts": dict(BASE, scale="htk", center=True, power=2),
    "hifigan": dict(BASE, pad=384, power=1, eps=1e-9),
    "vits": dict(BASE, pad=384, power=1, eps=1e-6, fmax=11025.0),
    "tacotron2": dict(BASE, center=True, power=1, eps=0.0),
    "whisper": dict(BASE, sr=16000, n_fft=400, hop=160, win=400, center=True, power=2,
                    log="log10", floor=1e-10, drop_last=True, whisper=True),
    # VITS mel_processing.spectrogram_torch: reflect pad (n_fft-hop)/2, center False,
    # sqrt(re^2 + im^2 + 1e-6), no filterbank, no log: 513 linear bins
    "linear": dict(BASE, pad=384, power=1, eps=1e-6, fmax=11025.0, scale="linear", norm="none", n_mels=513,
                   log="none"),
}
# presets whose golden is kept to the short clip (a linear spectrogram is large)
SHORT_ONLY = {"linear"}

# ---- the reference, from the formulas ----------------------------------------------------


def hz_to_mel(f, scale):
    f = np.asarray(f, dtype=np.float64)
    if scale == "htk":
        return 2595.0 * np.log10(1.0 + f / 700.0)
    f_sp, min_log_hz = 200.0 / 3, 1000.0
    min_log_mel, logstep = min_log_hz / f_sp, np.log(6.4) / 27.0
    return np.where(f >= min_log_hz, min_log_mel + np.log(np.maximum(f, 1e-300) / min_log_hz) / logstep, f / f_sp)


def mel_to_hz(m, scale):
    m = np.asarray(m, dtype=np.float64)
    if scale == "htk":
        return 700.0 * (10.0 ** (m / 2595.0) - 1.0)
    f_sp, min_log_hz = 200.0 / 3, 1000.0
    min_log_mel, logstep = min_log_hz / f_sp, np.log(6.4) / 27.0
    return np.where(m >= min_log_mel, min_log_hz * np.exp(logstep * (m - min_log_mel)), f_sp * m)


def mel_filters(sr, n_fft, n_mels, fmin, fmax, scale, norm):
    """librosa.filters.mel's construction (float64), either scale."""
    fftfreqs = np.linspace(0, sr / 2.0, 1 + n_fft // 2)
    mel_f = mel_to_hz(np.linspace(hz_to_mel(fmin, scale), hz_to_mel(fmax, scale), n_mels + 2), scale)
    fdiff = np.diff(mel_f)
    ramps = np.subtract.outer(mel_f, fftfreqs)
    weights = np.zeros((n_mels, len(fftfreqs)))
    for i in range(n_mels):
        lower = -ramps[i] / fdiff[i]
        upper = ramps[i + 2] / fdiff[i + 1]
        weights[i] = np.maximum(0, np.minimum(lower, upper))
    if norm == "slaney":
        weights *= (2.0 / (mel_f[2:n_mels + 2] - mel_f[:n_mels]))[:, None]
    return weights


def reference_mel(x, p):
    x = x.astype(np.float64)
    pad = p["n_fft"] // 2 if p["center"] else p["pad"]
    xp = np.pad(x, (pad, pad), mode="reflect") if pad else x
    n_fft, hop, win = p["n_fft"], p["hop"], p["win"]
    n_frames = (len(xp) - n_fft) // hop + 1
    w = 0.5 - 0.5 * np.cos(2.0 * np.pi * np.arange(win) / win)
    window = np.zeros(n_fft)
    left = (n_fft - win) // 2
    window[left:left + win] = w
    idx = np.arange(n_fft)[None, :] + hop * np.arange(n_frames)[:, None]
    spec = np.fft.rfft(xp[idx] * window[None, :], axis=-1)  # (frames, bins)
    if p["drop_last"]:
        spec = spec[:-1]
    pw = spec.real ** 2 + spec.imag ** 2
    s = pw if p["power"] == 2 else np.sqrt(pw + p["eps"])
    if p["scale"] == "linear":  # the spectrogram itself
        assert p["n_mels"] == n_fft // 2 + 1 and p["log"] == "none"
        return s.T
    fb = mel_filters(p["sr"], n_fft, p["n_mels"], p["fmin"], p["fmax"], p["scale"], p["norm"])
    mel = fb @ s.T  # (n_mels, frames)
    mel = np.maximum(mel, p["floor"])
    out = np.log10(mel) if p["log"] == "log10" else np.log(mel)
    if p["whisper"]:
        out = np.maximum(out, out.max() - 8.0)
        out = (out + 4.0) / 4.0
    return out


# ---- cross-checks against torch/torchaudio ----------------------------------------------


def cross_check():
    try:
        import torch
        import torchaudio
    except Exception as e:  # pragma: no cover
        print(f"torch/torchaudio not importable ({e}); skipping cross-checks", file=sys.stderr)
        return
    torch.set_num_threads(1)
    worst = 0.0
    for scale in ("htk", "slaney"):
        for (sr, n_fft, n_mels, fmax) in ((22050, 1024, 80, 8000.0), (16000, 400, 80, 8000.0), (22050, 1024, 80, 11025.0)):
            ta = torchaudio.functional.melscale_fbanks(n_fft // 2 + 1, 0.0, fmax, n_mels, sr, norm="slaney",
                                                      mel_scale=scale).numpy().T
            ours = mel_filters(sr, n_fft, n_mels, 0.0, fmax, scale, "slaney")
            d = np.abs(ta - ours).max() / np.abs(ours).max()
            assert d < 1e-5, f"filterbank {scale} sr {sr} differs from torchaudio by {d}"
            worst = max(worst, d)
    print(f"filterbanks vs torchaudio.functional.melscale_fbanks: max relative diff {worst:.2e}")
    p = PRESETS["xtts"]
    ms = torchaudio.transforms.MelSpectrogram(sample_rate=22050, n_fft=1024, win_length=1024, hop_length=256,
                                              f_min=0.0, f_max=8000.0, n_mels=80, power=2.0, center=True,
                                              pad_mode="reflect", norm="slaney", mel_scale="htk")
    for name, (seed, n) in CLIPS.items():
        x = make_clip(seed, n, p["sr"])
        ta = torch.log(torch.clamp(ms(torch.from_numpy(x)), min=1e-5)).numpy()
        ref = reference_mel(x, p)
        assert ta.shape == ref.shape, (ta.shape, ref.shape)
        d = np.abs(ta - ref).max()
        assert d < 1e-3, f"xtts clip {name}: torchaudio differs by {d}"
        print(f"xtts clip {name}: torchaudio MelSpectrogram vs reference max |diff| {d:.2e}")
    # hifi-gan's meldataset.mel_spectrogram, transcribed with torch.stft.
    for preset in ("hifigan", "vits", "whisper"):
        p = PRESETS[preset]
        x = torch.from_numpy(make_clip(1, 7000, p["sr"]))
        fb = torch.from_numpy(mel_filters(p["sr"], p["n_fft"], p["n_mels"], p["fmin"], p["fmax"], "slaney",
                                          "slaney")).float()
        win = torch.hann_window(p["win"])
        if preset == "whisper":
            st = torch.stft(x, p["n_fft"], p["hop"], window=win, return_complex=True)
            mag = st[..., :-1].abs() ** 2
            ls = torch.clamp(fb @ mag, min=1e-10).log10()
            ls = torch.maximum(ls, ls.max() - 8.0)
            t = ((ls + 4.0) / 4.0).numpy()
        else:
            y = torch.nn.functional.pad(x[None, None], (p["pad"], p["pad"]), mode="reflect")[0, 0]
            st = torch.stft(y, p["n_fft"], hop_length=p["hop"], win_length=p["win"], window=win, center=False,
                            normalized=False, onesided=True, return_complex=True)
            spec = torch.sqrt(st.real ** 2 + st.imag ** 2 + p["eps"])
            t = torch.log(torch.clamp(fb @ spec, min=1e-5)).numpy()
        ref = reference_mel(x.numpy(), p)
        assert t.shape == ref.shape, (preset, t.shape, ref.shape)
        d = np.abs(t - ref).max()
        assert d < 1e-3, f"{preset}: torch rendition differs by {d}"
        print(f"{preset}: torch.stft rendition vs reference max |diff| {d:.2e}")
    # VITS's spectrogram_torch, transcribed with torch.stft
    p = PRESETS["linear"]
    x = torch.from_numpy(make_clip(2, 1800, p["sr"]))
    y = torch.nn.functional.pad(x[None, None], (p["pad"], p["pad"]), mode="reflect")[0, 0]
    st = torch.stft(y, p["n_fft"], hop_length=p["hop"], win_length=p["win"], window=torch.hann_window(p["win"]),
                    center=False, normalized=False, onesided=True, return_complex=True)
    t = torch.sqrt(st.real ** 2 + st.imag ** 2 + 1e-6).numpy()
    d = np.abs(t - reference_mel(x.numpy(), p)).max()
    assert d < 1e-3, f"linear: torch rendition differs by {d}"
    print(f"linear: torch.stft rendition vs reference max |diff| {d:.2e}")


def write_sparse_fb(path, fb):
    with open(path, "w") as f:
        f.write(f"# n_mels {fb.shape[0]} n_bins {fb.shape[1]}: per row first_bin count weights...\n")
        for row in fb:
            nz = np.nonzero(row)[0]
            first, last = (int(nz[0]), int(nz[-1])) if len(nz) else (0, -1)
            vals = " ".join(f"{v:.9e}" for v in row[first:last + 1])
            f.write(f"{first} {last - first + 1} {vals}\n")


def main():
    os.makedirs(OUT, exist_ok=True)
    cross_check()
    cases = [(preset, clip, PRESETS[preset]) for preset in PRESETS for clip in CLIPS
             if preset not in SHORT_ONLY or clip == "b"]
    cases.append(("whisper", "a", dict(PRESETS["whisper"], n_mels=128)))
    lines = ["# name preset clip seed n_samples n_mels frames file (float32 LE [n_mels][frames])"]
    for preset, clip, p in cases:
        seed, n = CLIPS[clip]
        x = make_clip(seed, n, p["sr"])
        mel = reference_mel(x, p).astype("<f4")
        name = f"{preset}{p['n_mels'] if p['n_mels'] != 80 and preset != 'linear' else ''}_{clip}"
        fn = f"{name}.f32"
        mel.tofile(os.path.join(OUT, fn))
        lines.append(f"{name} {preset} {clip} {seed} {n} {p['n_mels']} {mel.shape[1]} {fn}")
        print(f"{name}: {mel.shape[0]} x {mel.shape[1]} frames")
    with open(os.path.join(OUT, "index.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    write_sparse_fb(os.path.join(OUT, "fb_xtts.txt"), mel_filters(22050, 1024, 80, 0.0, 8000.0, "htk", "slaney"))
    write_sparse_fb(os.path.join(OUT, "fb_whisper.txt"), mel_filters(16000, 400, 80, 0.0, 8000.0, "slaney", "slaney"))


if __name__ == "__main__":
    main()
