#!/usr/bin/python3
"""real_speech_labels.py — an independent look at the edges of real clips, to label which
cut_start / cut_end flags are right (tests/data/quality_real_labels.tsv; docs/quality.md,
"Real recordings").

A method unlike the one xtts_quality_measure uses (a recursive high-pass over 5 ms at the
edge against the speech frames' level): the whole clip goes through a zero-phase brick-wall
band of 250-5000 Hz (one FFT of the clip padded with a quarter second of zeros on each side,
bins outside the band zeroed), so nothing below the speech band reaches the edge; its envelope is taken in 2.5 ms windows;
the speech level is the median of the 10 ms frames in the loudest half, the floor the 10th
percentile of the 10 ms frames. An edge is printed as its first (last) eight 2.5 ms windows
in dB against the speech level, and judged:

  cut        the first window stands within 15 dB of the speech level and 10 dB over the
             floor: speech at speech level from the first sample on
  trimmed    otherwise: the edge is at the floor or rising from it (a tight trim)

These verdicts were then checked by eye against the printed envelope; where the eye
disagreed, the label file says so in its note. Usage: real_speech_labels.py METADATA.tsv
[--rate HZ] prints, per clip, id, the two verdicts and both edges' envelopes.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys

import numpy as np
import numpy.typing as npt

BAND_HZ = (250.0, 5000.0)
WIN_S = 0.0025
CUT_WITHIN_DB = 15.0
OVER_FLOOR_DB = 10.0


def load(path: str, rate: int) -> npt.NDArray[np.float64]:
    raw = subprocess.run(["sox", path, "-t", "raw", "-e", "floating-point", "-b", "32", "-c", "1", "-r", str(rate),
                          "-"], capture_output=True, check=True).stdout
    return np.frombuffer(raw, "<f4").astype(np.float64)


def envelope_db(x: npt.NDArray[np.float64], rate: int, win: int) -> npt.NDArray[np.float64]:
    pad = rate // 4  # zeros on both sides, so the FFT's wrap-around puts neither end into the other
    spec = np.fft.rfft(np.concatenate([np.zeros(pad), x - x.mean(), np.zeros(pad)]))
    f = np.fft.rfftfreq(len(x) + 2 * pad, 1.0 / rate)
    spec[(f < BAND_HZ[0]) | (f > BAND_HZ[1])] = 0
    y = np.fft.irfft(spec, len(x) + 2 * pad)[pad: pad + len(x)]
    nw = len(y) // win
    return np.asarray(10 * np.log10((y[: nw * win].reshape(nw, win) ** 2).mean(1) + 1e-12))


def judge(x: npt.NDArray[np.float64], rate: int) -> tuple[str, str, str, str]:
    win = int(round(WIN_S * rate))
    env = envelope_db(x, rate, win)
    frames = env[: len(env) // 4 * 4].reshape(-1, 4)
    frame_db = 10 * np.log10((10 ** (frames / 10)).mean(1))
    speech = float(np.median(np.sort(frame_db)[len(frame_db) // 2:]))
    floor = float(np.percentile(frame_db, 10))
    out = []
    for edge in (env[:8], env[::-1][:8]):
        cut = edge[0] >= speech - CUT_WITHIN_DB and edge[0] >= floor + OVER_FLOOR_DB
        out.append("cut" if cut else "trimmed")
    show = [" ".join(f"{v - speech:4.0f}" for v in e) for e in (env[:8], env[::-1][:8])]
    return out[0], out[1], show[0], show[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("metadata")
    ap.add_argument("--rate", type=int, default=22050)
    a = ap.parse_args()
    base = os.path.dirname(a.metadata)
    with open(a.metadata, encoding="utf-8") as f:
        rows = [line.rstrip("\n").split("\t") for line in f][1:]
    for row in rows:
        x = load(os.path.join(base, row[1]), a.rate)
        start, end, s_env, e_env = judge(x, a.rate)
        print(f"{row[0]}\t{start}\t{end}\tstart: {s_env}\tend (backwards): {e_env}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
