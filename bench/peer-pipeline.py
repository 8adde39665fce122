#!/usr/bin/env python3
"""The peer of xtts-melcache in `make bench`: the Python preprocessing a training script
would otherwise run — soundfile decode, torchaudio resample and MelSpectrogram (xtts
preset), log clamp, fp16 padding to 1024 frames, zstandard level 3, LMDB — with N worker
processes (one torch thread each), the way DataLoader workers do it.

usage: peer-pipeline.py METADATA_CSV OUT_LMDB_DIR WORKERS
Prints: records=<n> seconds=<wall>
"""
import os
import sys
import time
from multiprocessing import get_context

import lmdb
import numpy as np
import soundfile as sf
import torch
import torchaudio
import zstandard

SR = 22050
MAX_FRAMES = 1024
_mel = None
_cctx = None


def _init():
    global _mel, _cctx
    torch.set_num_threads(1)
    _mel = torchaudio.transforms.MelSpectrogram(
        sample_rate=SR, n_fft=1024, hop_length=256, win_length=1024, f_min=0.0, f_max=8000.0,
        n_mels=80, power=2.0, center=True, pad_mode="reflect", norm="slaney", mel_scale="htk")
    _cctx = zstandard.ZstdCompressor(level=3)


def _one(item):
    key, path = item
    audio, sr = sf.read(path, dtype="float32", always_2d=True)
    x = torch.from_numpy(audio.mean(axis=1))
    if sr != SR:
        x = torchaudio.functional.resample(x, sr, SR)
    m = torch.log(torch.clamp(_mel(x), min=1e-5))
    t = m.shape[1]
    if t > MAX_FRAMES:
        return key, None
    out = np.full((80, MAX_FRAMES), np.log(1e-5), dtype=np.float16)
    out[:, :t] = m.numpy().astype(np.float16)
    return key, _cctx.compress(out.tobytes())


def main():
    meta, out, workers = sys.argv[1], sys.argv[2], int(sys.argv[3])
    base = os.path.dirname(os.path.abspath(meta))
    items = []
    with open(meta, encoding="utf-8") as f:
        for line in f:
            rid = line.split("|", 1)[0].strip()
            if rid:
                items.append((rid, os.path.join(base, "wavs", rid + ".wav")))
    t0 = time.perf_counter()
    env = lmdb.open(out, map_size=1 << 34)
    n = 0
    with get_context("fork").Pool(workers, initializer=_init) as pool:
        txn = env.begin(write=True)
        for key, val in pool.imap(_one, items, chunksize=4):
            if val is not None:
                txn.put(key.encode(), val)
                n += 1
        txn.commit()
    env.sync()
    env.close()
    print(f"records={n} seconds={time.perf_counter() - t0:.3f}")


if __name__ == "__main__":
    main()
