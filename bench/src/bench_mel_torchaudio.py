#!/usr/bin/python3
"""bench_mel_torchaudio.py — the peer for bench_mel: torchaudio's MelSpectrogram (xtts preset)
plus log(clamp(x, 1e-5)) on the same amount of audio in the same clip length, one thread.
Prints: torchaudio_mel_xtts <seconds per hour of audio>
Usage: bench_mel_torchaudio.py [SECONDS_OF_AUDIO [CLIP_SECONDS]]
Run with LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-openmp so torch's matrix products
use OpenBLAS rather than the reference BLAS (bench/mel.sh does)."""
import sys
import time

import torch
import torchaudio

seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 600.0
clip_seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 10.0
torch.set_num_threads(1)
sr = 22050
clip = int(clip_seconds * sr)
n_clips = int(seconds * sr) // clip
g = torch.Generator().manual_seed(0)
clips = [0.1 * torch.randn(clip, generator=g) for _ in range(n_clips)]
ms = torchaudio.transforms.MelSpectrogram(sample_rate=sr, n_fft=1024, win_length=1024, hop_length=256, f_min=0.0,
                                          f_max=8000.0, n_mels=80, power=2.0, center=True, pad_mode="reflect",
                                          norm="slaney", mel_scale="htk")
best = 1e30
with torch.inference_mode():
    for _ in range(15):
        t0 = time.perf_counter()
        for x in clips:
            torch.log(torch.clamp(ms(x), min=1e-5))
        best = min(best, time.perf_counter() - t0)
print(f"torchaudio_mel_xtts {best * 3600.0 / (n_clips * clip / sr):.3f}")
