#!/usr/bin/python3
"""segment-truth.py — long recordings with known truth for xtts-segment (docs/xtts-segment.md,
"Measured"): real clips with known transcripts concatenated with random pauses, their texts
written as prose, and what a reader does to a script: a paragraph not read, speech not in the
text, noise.

Usage: segment-truth.py OUT --units LIST.tsv [--extra LIST.tsv] [--files N] [--seed S]
                        [--snr DB] [--unread K] [--unwritten K] [--rate HZ] [--lang L]
  --units   id<TAB>audio<TAB>text lines (a header line starting "id" is skipped; audio relative
            to the list's folder): the sentences that are read. Each unit's text becomes one
            sentence (marks ending a sentence inside it become ';', an end mark is added).
  --extra   the same layout, texts ignored: speech put into the recordings without its text.
  --files N recordings (each a new shuffle of the units; default 1)
  --snr DB  white noise at DB below the speech's mean power (0: none, the default)
  --unread K    per recording, K units whose text is in the text (a paragraph of its own) but
                whose audio is not in the recording
  --unwritten K per recording, K clips of --extra inserted between units, not in the text
Writes OUT/rec-NN.wav (16-bit mono at --rate, default 22050), OUT/text-NN.txt, OUT/pairs.tsv
(AUDIO<TAB>TEXT<TAB>LANG) and OUT/truth.tsv: file, unit, kind (read, unread, unwritten), start,
end (seconds of the unit's speech in the recording, its clip's silent ends left out; -1 for
unread), text.
Uses sox (to bring every clip to one rate) and nothing outside the standard library.
"""
from __future__ import annotations

import argparse
import array
import math
import os
import random
import re
import subprocess
import sys
import textwrap


def read_list(path: str) -> list[tuple[str, str, str]]:
    base = os.path.dirname(os.path.abspath(path))
    out = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f):
            cols = line.rstrip("\n").split("\t")
            if n == 0 and cols[0] == "id":
                continue
            if len(cols) < 2:
                continue
            text = cols[2] if len(cols) > 2 else ""
            out.append((cols[0], os.path.join(base, cols[1]), text))
    return out


def load(path: str, rate: int) -> array.array:
    raw = subprocess.run(["sox", path, "-t", "raw", "-e", "signed", "-b", "16", "-c", "1", "-r", str(rate), "-"],
                         capture_output=True, check=True).stdout
    a = array.array("h")
    a.frombytes(raw)
    return a


def speech_extent(s: array.array) -> tuple[int, int]:
    """First and one past the last sample louder than 50 dB under the clip's peak: the truth
    is where the speech is, not the clip's own silence at its ends."""
    peak = max((abs(v) for v in s), default=0)
    thr = max(1, peak * 0.003)
    first = next((i for i, v in enumerate(s) if abs(v) > thr), 0)
    last = next((i for i in range(len(s) - 1, -1, -1) if abs(s[i]) > thr), len(s) - 1)
    return first, last + 1


def one_sentence(text: str) -> str:
    t = " ".join(text.split())
    t = re.sub(r"([.!?])(\s+)(?=\S)", r";\2", t)
    if not re.search(r"[.!?]['\")\]]*$", t):
        t = t.rstrip(",;: ") + "."
    return t[:1].upper() + t[1:]


def prose(units: list[str], rng: random.Random) -> str:
    paras, cur = [], []
    for u in units:
        cur.append(u)
        if len(cur) >= rng.randint(2, 4):
            paras.append(cur)
            cur = []
    if cur:
        paras.append(cur)
    return "\n\n".join(textwrap.fill(" ".join(p), width=rng.randint(60, 78)) for p in paras) + "\n"


def write_wav(path: str, x: list[float], rate: int) -> None:
    import wave
    a = array.array("h", (max(-32768, min(32767, int(round(v)))) for v in x))
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(a.tobytes())


def make_file(k: int, a, units, extra, rng: random.Random, truth: list[str]) -> tuple[str, str]:
    order = units[:]
    rng.shuffle(order)
    n_unread = min(a.unread, max(0, len(order) - 2))
    unread_at = rng.randint(1, len(order) - n_unread - 1) if n_unread else -1
    unread = set(range(unread_at, unread_at + n_unread)) if n_unread else set()
    extras = rng.sample(extra, min(a.unwritten, len(extra))) if extra else []
    extra_at = {rng.randint(0, len(order)): e for e in extras}
    x: list[float] = [0.0] * int(0.5 * a.rate)
    power, speech_n = 0.0, 0
    texts, rows = [], []
    for i, unit in enumerate(order + [("", "", "")]):
        uid, audio, text = unit
        if i in extra_at:
            eid, eaudio, _ = extra_at[i]
            x.extend([0.0] * int(rng.uniform(0.12, 1.5) * a.rate))
            s = load(eaudio, a.rate)
            b, e = speech_extent(s)
            rows.append(f"{k}\t{eid}\tunwritten\t{(len(x) + b) / a.rate:.3f}\t{(len(x) + e) / a.rate:.3f}\t")
            x.extend(s)
        if not uid:
            break
        t = one_sentence(text)
        texts.append(t)
        if i in unread:
            rows.append(f"{k}\t{uid}\tunread\t-1\t-1\t{t}")
            continue
        x.extend([0.0] * int(rng.uniform(0.12, 1.5) * a.rate))
        s = load(audio, a.rate)
        power += sum(v * v for v in s)
        speech_n += len(s)
        b, e = speech_extent(s)
        rows.append(f"{k}\t{uid}\tread\t{(len(x) + b) / a.rate:.3f}\t{(len(x) + e) / a.rate:.3f}\t{t}")
        x.extend(s)
    x.extend([0.0] * int(0.5 * a.rate))
    if a.snr > 0 and speech_n:
        sigma = math.sqrt(power / speech_n / 10 ** (a.snr / 10))
        x = [v + rng.gauss(0, sigma) for v in x]
    # the unread units make a paragraph of their own
    body = [t for i, t in enumerate(texts) if i not in unread]
    skipped = [t for i, t in enumerate(texts) if i in unread]
    at = unread_at if unread else len(body)
    text = prose(body[:at], rng) + ("\n" + prose(skipped, rng) if skipped else "") + ("\n" + prose(body[at:], rng) if body[at:] else "")
    wav, txt = os.path.join(a.out, f"rec-{k:02d}.wav"), os.path.join(a.out, f"text-{k:02d}.txt")
    write_wav(wav, x, a.rate)
    with open(txt, "w", encoding="utf-8") as f:
        f.write(text)
    truth.extend(rows)
    return wav, txt


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--units", required=True)
    ap.add_argument("--extra")
    ap.add_argument("--files", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--snr", type=float, default=0)
    ap.add_argument("--unread", type=int, default=0)
    ap.add_argument("--unwritten", type=int, default=0)
    ap.add_argument("--rate", type=int, default=22050)
    ap.add_argument("--lang", default="en")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    units = [u for u in read_list(a.units) if u[2].strip()]
    extra = read_list(a.extra) if a.extra else []
    if len(units) < 3:
        print(f"segment-truth: {a.units}: fewer than 3 units with text", file=sys.stderr)
        return 2
    rng = random.Random(a.seed)
    truth = ["file\tunit\tkind\tstart\tend\ttext"]
    pairs = []
    for k in range(a.files):
        wav, txt = make_file(k, a, units, extra, rng, truth)
        pairs.append(f"{os.path.abspath(wav)}\t{os.path.abspath(txt)}\t{a.lang}")
    with open(os.path.join(a.out, "truth.tsv"), "w", encoding="utf-8") as f:
        f.write("\n".join(truth) + "\n")
    with open(os.path.join(a.out, "pairs.tsv"), "w", encoding="utf-8") as f:
        f.write("\n".join(pairs) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
