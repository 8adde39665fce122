#!/usr/bin/python3
"""real_speech_labels.py — an independent look at the edges of real clips, to label which
cut_start / cut_end flags are right (tests/data/quality_real_labels.tsv; docs/quality.md,
"Real recordings").

A method unlike the one xtts_quality_measure uses (a recursive 200 Hz high-pass run towards
the edge, against the speech frames' level): the clip is cut into 2.5 ms windows, and each
window's best-fitting quadratic is taken out before its level is read (envelope_db), which
removes what is below the speech band (DC, drift, rumble, hum) from that window's own samples,
with nothing leaking in from neighbouring windows or the boundary; the speech level is the
median of the 10 ms frames (four windows) in the loudest half, the floor the 10th percentile
of the 10 ms frames. An edge is printed as its first (last) eight 2.5 ms windows
in dB against the speech level, and judged:

  cut        the first window stands within 15 dB of the speech level and 10 dB over the
             floor: speech at speech level from the first sample on
  trimmed    otherwise: the edge is at the floor or rising from it (a tight trim)

Also, by other estimators than the metrics': an SNR, the mean power of the loudest half of
the 10 ms frames (broadband, about the mean) over that of the quietest 10 %, low_snr under
15 dB; the loudest half's level, too_quiet under -40 dBFS; the mean, dc_offset over 0.02.

These verdicts were then checked by eye against the printed envelope; where the eye
disagreed, the label file says so in its note. Usage: real_speech_labels.py METADATA.tsv
[--rate HZ] [--corpus NAME] prints label rows: corpus, id, flags ("-" none) and what was
measured (the edges' envelopes in dB against the speech level, the end's read backwards).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys

import numpy as np
import numpy.typing as npt

WIN_S = 0.0025
CUT_WITHIN_DB = 15.0
OVER_FLOOR_DB = 10.0


def load(path: str, rate: int) -> npt.NDArray[np.float64]:
    raw = subprocess.run(["sox", path, "-t", "raw", "-e", "floating-point", "-b", "32", "-c", "1", "-r", str(rate),
                          "-"], capture_output=True, check=True).stdout
    return np.frombuffer(raw, "<f4").astype(np.float64)


def envelope_db(x: npt.NDArray[np.float64], rate: int, win: int) -> npt.NDArray[np.float64]:
    """The level of each win-sample window after taking out the window's own best-fitting
    quadratic: within 2.5 ms, DC, drift, rumble and mains hum (at most an eighth of a period
    of 50 Hz) are nearly a parabola and vanish (50 Hz by some 30 dB), while speech above a few
    hundred Hz stays. Each window is judged on its own samples only: nothing leaks into the
    edge window from beyond it or from the clip's boundary, as it would through any filter."""
    nw = len(x) // win
    t = np.linspace(-1.0, 1.0, win)
    v = np.stack([np.ones(win), t, t * t], axis=1)
    proj = np.eye(win) - v @ np.linalg.pinv(v)
    res = x[: nw * win].reshape(nw, win) @ proj.T
    return np.asarray(10 * np.log10((res ** 2).mean(1) + 1e-12))


def levels(x: npt.NDArray[np.float64], rate: int) -> tuple[float, float]:
    """(SNR, speech level in dBFS): the loudest half of the 10 ms frames (about the mean) over
    the quietest 10 %, and the loudest half's level."""
    w = int(round(0.010 * rate))
    y = x - x.mean()
    p = np.sort((y[: len(y) // w * w].reshape(-1, w) ** 2).mean(1))
    loud, quiet = p[len(p) // 2:].mean(), p[: max(1, len(p) // 10)].mean()
    return (float(10 * np.log10(max(loud - quiet, 1e-20) / max(quiet, 1e-20))),
            float(10 * np.log10(max(loud, 1e-20))))


def verdicts(x: npt.NDArray[np.float64], rate: int) -> tuple[list[str], str]:
    """The flags this look gives the clip, and what it measured (for the label's note)."""
    start, end, s_env, e_env = judge(x, rate)
    snr, level = levels(x, rate)
    dc = float(x.mean())
    flags = [f for f, on in (("cut_start", start == "cut"), ("cut_end", end == "cut"), ("low_snr", snr < 15),
                             ("too_quiet", level < -40), ("dc_offset", abs(dc) > 0.02)) if on]
    return flags, f"snr {snr:.1f} dB, level {level:.1f} dBFS, dc {dc:+.4f}; start: {s_env}; end: {e_env}"


def judge(x: npt.NDArray[np.float64], rate: int) -> tuple[str, str, str, str]:
    win = int(round(WIN_S * rate))
    env = envelope_db(x, rate, win)
    frames = env[: len(env) // 4 * 4].reshape(-1, 4)
    frame_db = 10 * np.log10((10 ** (frames / 10)).mean(1))
    speech = float(np.median(np.sort(frame_db)[len(frame_db) // 2:]))
    floor = float(np.percentile(frame_db, 10))
    out = []
    end_env = envelope_db(x[::-1].copy(), rate, win)[:8]   # windows ending at the last sample
    for edge in (env[:8], end_env):
        cut = edge[0] >= speech - CUT_WITHIN_DB and edge[0] >= floor + OVER_FLOOR_DB
        out.append("cut" if cut else "trimmed")
    show = [" ".join(f"{v - speech:4.0f}" for v in e) for e in (env[:8], end_env)]
    return out[0], out[1], show[0], show[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("metadata")
    ap.add_argument("--rate", type=int, default=22050)
    ap.add_argument("--corpus", default="-", help="the corpus name to put in the first column")
    a = ap.parse_args()
    base = os.path.dirname(a.metadata)
    with open(a.metadata, encoding="utf-8") as f:
        rows = [line.rstrip("\n").split("\t") for line in f][1:]
    for row in rows:
        flags, note = verdicts(load(os.path.join(base, row[1]), a.rate), a.rate)
        print(f"{a.corpus}\t{row[0]}\t{','.join(flags) or '-'}\t{note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
