#!/usr/bin/python3
"""quality_corpus.py — a speech corpus with known injected defects, for measuring the quality
report's precision and recall (docs/quality.md).

Clean clips are espeak-ng speech (six speakers: voice, pitch and a speaking rate of their own,
one of them fast), trimmed, given natural lead and trail silences of 0.1-0.5 s, a level of
-18 to -26 dBFS and a white noise floor 40-55 dB below the speech. Each defect clip is a clean
clip with exactly one defect injected at a known strength:

  lead_silence   1.6-3.0 s of silence before the speech
  trail_silence  1.6-3.0 s after it
  cut_start      no lead silence and the first 8-20 % of the speech cut off at a loud frame
  cut_end        the same at the end
  clipped        gain 10-18 dB over the peak, then hard clipping at full scale
  low_snr        white noise 0-10 dB below the speech
  upsampled      down to 8 or 16 kHz and back up (sox), as telephone or 16 kHz recordings
  too_quiet      speech at -60 to -48 dBFS
  dup_audio      a byte copy of an earlier clean clip's file, later in the list
  rate_outlier   spoken at 1.8-2.1x or 0.45-0.55x the speaker's rate, same transcript
  dc_offset      a constant 0.04-0.10 (either sign) added
  too_short      30-80 ms of speech

Writes DEST/wavs/*.wav (16-bit; some at 44.1 kHz, most at 22.05 kHz), DEST/metadata.tsv
(columns id, audio, text, speaker: the tsv layout xtts-tokenize reads) and DEST/labels.tsv
(id, defect or "clean", strength, source id of a duplicate). The same seed gives the same
corpus with the same espeak-ng and sox.

Usage: quality_corpus.py DEST [--seed N] [--clean-per-speaker N] [--per-defect N]
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import tempfile
import wave
from dataclasses import dataclass

import numpy as np

SR = 22050
WORDS = (
    "the of and to in is was that for on are with as his they be at one have this from or had by "
    "hot word but what some we can out other were all there when up use your how said an each she "
    "which do their time if will way about many then them write would like so these her long make "
    "thing see him two has look more day could go come did number sound no most people my over "
    "know water than call first who may down side been now find any new work part take get place "
    "made live where after back little only round man year came show every good me give our under "
    "name very through just form sentence great think say help low line differ turn cause much "
    "mean before move right boy old too same tell does set three want air well also play small end "
    "put home read hand port large spell add even land here must big high such follow act why ask "
    "men change went light kind off need house picture try us again animal point mother world near "
    "build self earth father head stand own page should country found answer school grow study still "
    "learn plant cover food sun four between state keep eye never last let thought city tree cross "
    "farm hard start might story saw far sea draw left late run while press close night real life few"
).split()
SPEAKERS = [  # id, espeak voice, words per minute, pitch
    ("spk1", "en-us+m3", 165, 45),
    ("spk2", "en+f3", 175, 62),
    ("spk3", "en-gb+m1", 150, 38),
    ("spk4", "en+f2", 190, 70),
    ("spk5", "en-us+m7", 160, 32),
    ("spk6", "en+f4", 255, 55),  # the fast speaker: fast for everyone, normal for herself
]
DEFECTS = ["lead_silence", "trail_silence", "cut_start", "cut_end", "clipped", "low_snr", "upsampled",
           "too_quiet", "dup_audio", "rate_outlier", "dc_offset", "too_short"]


@dataclass
class Clip:
    """One record: its audio (float, at rate), text, speaker and injected defect."""
    id: str
    speaker: str
    text: str
    defect: str
    strength: str
    audio: np.ndarray | None = None
    rate: int = SR
    source: str = "-"


def sentence(rng: np.random.Generator) -> str:
    n = int(rng.integers(6, 19))
    words = [WORDS[int(i)] for i in rng.integers(0, len(WORDS), n)]
    if n > 10 and rng.random() < 0.5:
        words[int(rng.integers(3, n - 3))] += ","
    s = " ".join(words)
    return s[0].upper() + s[1:] + "."


def espeak(text: str, voice: str, wpm: int, pitch: int, tmp: str) -> np.ndarray:
    path = os.path.join(tmp, "e.wav")
    subprocess.run(["espeak-ng", "-v", voice, "-s", str(wpm), "-p", str(pitch), "-w", path, text],
                   check=True, capture_output=True)
    with wave.open(path, "rb") as w:
        assert w.getframerate() == SR and w.getsampwidth() == 2
        x = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(np.float64) / 32768.0
    loud = np.nonzero(np.abs(x) > 0.002)[0]
    return x[loud[0]:loud[-1] + 1] if len(loud) else x


def frame_rms_db(x: np.ndarray, frame: int = 220) -> np.ndarray:
    n = len(x) // frame
    p = (x[: n * frame].reshape(n, frame) ** 2).mean(axis=1)
    return 10 * np.log10(p + 1e-20)


def active_db(x: np.ndarray) -> float:
    db = frame_rms_db(x)
    act = db[db > db.max() - 40]
    return float(10 * np.log10(np.mean(10 ** (act / 10))))


def finish(x: np.ndarray, rng: np.random.Generator, level_db: float, snr_db: float, lead: float,
           trail: float) -> np.ndarray:
    """Speech x at an active level, padded with silence, over a white noise floor."""
    x = x * 10 ** ((level_db - active_db(x)) / 20)
    if np.abs(x).max() > 0.8:
        x *= 0.8 / np.abs(x).max()
    level = active_db(x)
    y = np.concatenate([np.zeros(int(lead * SR)), x, np.zeros(int(trail * SR))])
    return y + rng.normal(0, 10 ** ((level - snr_db) / 20), len(y))


def loud_cut(x: np.ndarray, fraction: float) -> int:
    """A sample index from fraction of x on where a 20 ms window is within 10 dB of the
    loudest, or else the loudest window of the next 15 %: a cut inside a word, not in a
    pause."""
    db = frame_rms_db(x, 441)
    start = int(fraction * len(db))
    end = min(len(db), start + max(2, int(0.15 * len(db))))
    for k in range(start, end):
        if db[k] > db.max() - 10:
            return k * 441
    return (start + int(np.argmax(db[start:end]))) * 441


def make_clean(c: Clip, spk: tuple, rng: np.random.Generator, tmp: str, speed: float = 1.0) -> np.ndarray:
    wpm = int(round(spk[2] * speed * rng.uniform(0.96, 1.04)))
    x = espeak(c.text, spk[1], max(80, min(450, wpm)), spk[3], tmp)
    return x


def inject(c: Clip, spk: tuple, rng: np.random.Generator, tmp: str) -> None:
    """Fill c.audio (and c.rate, c.strength) with its clean rendering and its defect."""
    d = c.defect
    level, snr = rng.uniform(-26, -18), rng.uniform(40, 55)
    lead, trail = rng.uniform(0.1, 0.45), rng.uniform(0.1, 0.5)
    speed = 1.0
    if d == "rate_outlier":
        speed = rng.uniform(1.8, 2.1) if (rng.random() < 0.5 and spk[2] * 2.1 <= 450) else rng.uniform(0.45, 0.55)
        c.strength = f"x{speed:.2f}"
    x = make_clean(c, spk, rng, tmp, speed)
    if d == "lead_silence":
        lead = rng.uniform(1.6, 3.0); c.strength = f"{lead:.2f}s"
    elif d == "trail_silence":
        trail = rng.uniform(1.6, 3.0); c.strength = f"{trail:.2f}s"
    elif d == "cut_start":
        k = loud_cut(x, rng.uniform(0.08, 0.2)); c.strength = f"{k / len(x):.2f}"; x = x[k:]; lead = 0
    elif d == "cut_end":
        k = loud_cut(x[::-1], rng.uniform(0.08, 0.2)); c.strength = f"{k / len(x):.2f}"; x = x[: len(x) - k]; trail = 0
    elif d == "low_snr":
        snr = rng.uniform(0, 10); c.strength = f"{snr:.1f}dB"
    elif d == "too_quiet":
        level = rng.uniform(-60, -48); c.strength = f"{level:.1f}dBFS"
    elif d == "too_short":
        k = int(rng.uniform(0.03, 0.08) * SR); s = loud_cut(x, rng.uniform(0.2, 0.6))
        x = x[s:s + k]; lead = trail = 0; c.strength = f"{k / SR * 1000:.0f}ms"
    y = finish(x, rng, level, snr, lead, trail)
    if d == "clipped":
        g = rng.uniform(10, 18); y = np.clip(y * 10 ** (g / 20) / np.abs(y).max(), -1, 1); c.strength = f"+{g:.1f}dB"
    elif d == "dc_offset":
        v = rng.uniform(0.04, 0.10) * rng.choice([-1, 1]); y = y + v; c.strength = f"{v:+.3f}"
    c.audio = y
    if d == "upsampled":
        c.strength = f"{int(rng.choice([8000, 16000]))}Hz"
    elif rng.random() < 0.2:
        c.rate = 44100


def write_wav(path: str, x: np.ndarray, rate: int) -> None:
    q = np.clip(np.round(x * 32768.0), -32768, 32767).astype("<i2")
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(q.tobytes())


def store(c: Clip, wavs: str, tmp: str, rng: np.random.Generator) -> None:
    """Write c's file; upsampled clips go down to their source rate and up again with sox."""
    path = os.path.join(wavs, c.id + ".wav")
    assert c.audio is not None
    if c.defect == "upsampled":
        src = os.path.join(tmp, "u.wav")
        low = os.path.join(tmp, "low.wav")
        write_wav(src, c.audio, SR)
        subprocess.run(["sox", "-V1", src, "-r", c.strength[:-2], low], check=True)
        c.rate = int(rng.choice([SR, 44100]))
        subprocess.run(["sox", "-V1", low, "-r", str(c.rate), path], check=True)
    elif c.rate != SR:
        src = os.path.join(tmp, "r.wav")
        write_wav(src, c.audio, SR)
        subprocess.run(["sox", "-V1", src, "-r", str(c.rate), path], check=True)
    else:
        write_wav(path, c.audio, SR)


def plan(rng: np.random.Generator, clean_per_speaker: int, per_defect: int) -> list[Clip]:
    clips: list[Clip] = []
    for spk in SPEAKERS:
        clips += [Clip("", spk[0], sentence(rng), "clean", "-") for _ in range(clean_per_speaker)]
    for d in DEFECTS:
        if d != "dup_audio":
            clips += [Clip("", SPEAKERS[int(rng.integers(len(SPEAKERS)))][0], sentence(rng), d, "-")
                      for _ in range(per_defect)]
    order = rng.permutation(len(clips))
    clips = [clips[i] for i in order]
    for i, c in enumerate(clips):
        c.id = f"q{i:05d}"
    clean = [i for i, c in enumerate(clips) if c.defect == "clean"]
    sources = sorted(rng.choice(clean, per_defect, replace=False).tolist(), reverse=True)
    for k, s in enumerate(sources):  # a copy somewhere after its source
        src = clips[s]
        at = int(rng.integers(s + 1, len(clips) + 1))
        clips.insert(at, Clip(f"d{k:05d}", src.speaker, src.text, "dup_audio", "copy", source=src.id))
    return clips


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dest")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--clean-per-speaker", type=int, default=40)
    ap.add_argument("--per-defect", type=int, default=30)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    wavs = os.path.join(a.dest, "wavs")
    os.makedirs(wavs, exist_ok=True)
    clips = plan(rng, a.clean_per_speaker, a.per_defect)
    by_id = {c.id: c for c in clips}
    spk_of = {s[0]: s for s in SPEAKERS}
    with tempfile.TemporaryDirectory() as tmp:
        for c in clips:
            if c.defect == "dup_audio":
                continue
            inject(c, spk_of[c.speaker], rng, tmp)
            store(c, wavs, tmp, rng)
    for c in clips:
        if c.defect == "dup_audio":
            shutil.copyfile(os.path.join(wavs, by_id[c.source].id + ".wav"), os.path.join(wavs, c.id + ".wav"))
    with open(os.path.join(a.dest, "metadata.tsv"), "w", encoding="utf-8") as f:
        f.write("id\taudio\ttext\tspeaker\n")
        for c in clips:
            f.write(f"{c.id}\twavs/{c.id}.wav\t{c.text}\t{c.speaker}\n")
    with open(os.path.join(a.dest, "labels.tsv"), "w", encoding="utf-8") as f:
        f.write("id\tdefect\tstrength\tsource\n")
        for c in clips:
            f.write(f"{c.id}\t{c.defect}\t{c.strength}\t{c.source}\n")
    print(f"quality corpus: {len(clips)} clips in {a.dest} (seed {a.seed})")


if __name__ == "__main__":
    main()
