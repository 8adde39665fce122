#!/usr/bin/python3
"""real_speech_corpus.py — a small corpus of real, clean recorded speech taken from the test
data of public speech repositories, for judging the quality flags on real recordings
(docs/quality.md, "Real recordings"; tests/e2e/quality_real_speech.sh).

The audio is not part of this repository. Give the repositories' git directories (a clone's
.git, a bare mirror, or a work tree) and the script copies the clips named below out of the
commit HEAD and writes per corpus:

    OUT/<corpus>/metadata.tsv   id, audio, text, speaker (the layout quality-eval reads)
    OUT/<corpus>/wavs/<id>.<ext>

Corpora: ljspeech (coqui-ai/TTS tests/data/ljspeech: 32 LJSpeech clips, 22,050 Hz, one
speaker, tightly trimmed) and speechbrain (speechbrain/speechbrain tests/samples: 19 clips
of read speech at 16 kHz from several sources and speakers, one LJSpeech clip at 22,050 Hz),
librispeech and librispeech-other (resemble-ai/Resemblyzer audio_data: 251 LibriSpeech
train-clean-100 clips, the first of each of 251 speakers, and 100 test-other clips of 10
speakers; 16 kHz).

With --low-noise, also OUT/<corpus>-low: the same clips with mains hum, rumble and a slow DC
drift added below the speech band (add_low_noise), on which the edge flags must not change.

Usage: real_speech_corpus.py OUT [--coqui GIT_DIR] [--speechbrain GIT_DIR] [--resemblyzer GIT_DIR]
                             [--low-noise]
  e.g. git clone --depth 1 https://github.com/coqui-ai/TTS; real_speech_corpus.py /tmp/rs --coqui TTS
OUT/<corpus>/sources.txt names each clip's git blob id and path, so a result can be traced to
the exact files. Exit: 0 when every named corpus was written, 2 when a source lacks a clip.
"""
from __future__ import annotations

import argparse
import hashlib
import math
import os
import random
import struct
import subprocess
import sys
import wave

# (path in the repository, speaker); texts come from the repository where it has them
COQUI_WAVS = [f"tests/data/ljspeech/wavs/LJ001-{i:04d}.wav" for i in range(1, 33)]
SPEECHBRAIN_CLIPS = (
    [(f"tests/samples/ASR/spk{s}_snt{k}.wav", f"asr_spk{s}") for s in (1, 2) for k in range(1, 7)]
    + [(f"tests/samples/single-mic/example{k}", "single_mic") for k in ("1.wav", "2.flac", "5.wav", "6.wav")]
    + [("tests/samples/TTS/LJ050-0131.wav", "ljspeech"), ("tests/samples/VAD/train.wav", "vad"),
       ("tests/samples/VAD/valid.wav", "vad")]
)


def resemblyzer_clips(git_dir: str, folder: str) -> list[tuple[str, str]]:
    """The LibriSpeech clips resemble-ai/Resemblyzer keeps under audio_data/<folder>, with
    their speakers (the number the file name starts with)."""
    r = subprocess.run(["git", "--git-dir", git_dir, "ls-tree", "-r", "--name-only", "HEAD", "audio_data/" + folder],
                       capture_output=True, text=True)
    if r.returncode != 0 and os.path.isdir(os.path.join(git_dir, ".git")):
        return resemblyzer_clips(os.path.join(git_dir, ".git"), folder)
    paths = sorted(p for p in r.stdout.splitlines() if p.endswith(".flac"))
    if not paths:
        raise FileNotFoundError(f"{git_dir}: no audio_data/{folder}/*.flac at HEAD")
    return [(p, "ls" + os.path.basename(p).split("-")[0]) for p in paths]


def git_blob(git_dir: str, path: str) -> bytes:
    """The bytes of path at HEAD in git_dir (a .git, a bare repository or a work tree)."""
    r = subprocess.run(["git", "--git-dir", git_dir, "show", f"HEAD:{path}"], capture_output=True)
    if r.returncode != 0 and os.path.isdir(os.path.join(git_dir, ".git")):
        r = subprocess.run(["git", "--git-dir", os.path.join(git_dir, ".git"), "show", f"HEAD:{path}"],
                           capture_output=True)
    if r.returncode != 0:
        raise FileNotFoundError(f"{git_dir}: no {path} at HEAD: {r.stderr.decode(errors='replace').strip()}")
    return r.stdout


def blob_id(data: bytes) -> str:
    """git's blob id of data, to name the exact file a clip was."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def clip_id(path: str, with_folder: bool) -> str:
    """The file's name without extension, after its folder's where names repeat across folders."""
    parts = path.split("/")
    name = parts[-2] + "_" + parts[-1] if with_folder else parts[-1]
    return name.rsplit(".", 1)[0]


def write_corpus(out: str, name: str, git_dir: str, clips: list[tuple[str, str]], texts: dict[str, str]) -> int:
    """Copies clips (path, speaker) of git_dir into out/name; returns the number written."""
    wavs = os.path.join(out, name, "wavs")
    os.makedirs(wavs, exist_ok=True)
    rows = ["id\taudio\ttext\tspeaker"]
    sums = []
    for path, speaker in clips:
        data = git_blob(git_dir, path)
        cid = clip_id(path, name == "speechbrain")
        ext = path.rsplit(".", 1)[1]
        with open(os.path.join(wavs, f"{cid}.{ext}"), "wb") as f:
            f.write(data)
        rows.append(f"{cid}\twavs/{cid}.{ext}\t{texts.get(cid, '')}\t{speaker}")
        sums.append(f"{blob_id(data)}  {path}")
    with open(os.path.join(out, name, "metadata.tsv"), "w", encoding="utf-8") as f:
        f.write("\n".join(rows) + "\n")
    with open(os.path.join(out, name, "sources.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(sums) + "\n")
    return len(clips)


def ljspeech_texts(git_dir: str) -> dict[str, str]:
    """The transcripts coqui-ai/TTS ships with its clips (8 of the 32), keyed like clip_id."""
    try:
        meta = git_blob(git_dir, "tests/data/ljspeech/metadata.csv").decode("utf-8")
    except FileNotFoundError:
        return {}
    texts = {}
    for line in meta.splitlines():
        cols = line.split("|")
        if len(cols) >= 2:
            texts[cols[0]] = cols[-1].replace("\t", " ")
    return texts


def read_mono(path: str) -> tuple[list[float], int]:
    """The clip as floats at its own rate, through sox (any format sox reads)."""
    rate = int(subprocess.run(["soxi", "-r", path], capture_output=True, text=True, check=True).stdout)
    raw = subprocess.run(["sox", path, "-t", "raw", "-e", "signed", "-b", "16", "-c", "1", "-"],
                         capture_output=True, check=True).stdout
    return [v / 32768 for v in struct.unpack("<%dh" % (len(raw) // 2), raw)], rate


def add_low_noise(x: list[float], rate: int, rng: random.Random) -> list[float]:
    """x with what lies below the speech band added: mains hum (50 or 60 Hz and its 2nd and
    3rd harmonics), rumble (noise low-passed at about 40 Hz) and a slow DC drift. The hum's
    fundamental is 20-26 dB under the clip's RMS and each harmonic 6 dB under the one before;
    the rumble is as strong as the hum; the drift moves by up to 0.008."""
    n = len(x)
    rms = math.sqrt(sum(v * v for v in x) / max(n, 1)) or 1e-4
    amp = rms * 10 ** (-rng.uniform(20, 26) / 20) * math.sqrt(2)
    f0, ph = rng.choice((50.0, 60.0)), rng.uniform(0, 2 * math.pi)
    drift, a, low = rng.uniform(-0.008, 0.008), 1 - math.exp(-2 * math.pi * 40 / rate), 0.0
    out, rumble = [], []
    for i in range(n):
        low += a * (rng.gauss(0, 1) - low)
        rumble.append(low)
    r_rms = math.sqrt(sum(v * v for v in rumble) / max(n, 1)) or 1.0
    for i, v in enumerate(x):
        t = i / rate
        hum = sum(amp * 0.5 ** k * math.sin(2 * math.pi * f0 * (k + 1) * t + ph * (k + 1)) for k in range(3))
        out.append(v + hum + rumble[i] / r_rms * amp / math.sqrt(2) + drift * i / max(n - 1, 1))
    return out


def write_low_noise_corpus(out: str, name: str, seed: int) -> int:
    """out/name-low: every clip of out/name with add_low_noise, as 16-bit WAV at its rate."""
    rng = random.Random(seed)
    src, dst = os.path.join(out, name), os.path.join(out, name + "-low")
    os.makedirs(os.path.join(dst, "wavs"), exist_ok=True)
    with open(os.path.join(src, "metadata.tsv"), encoding="utf-8") as f:
        rows = [line.rstrip("\n").split("\t") for line in f]
    meta = ["\t".join(rows[0])]
    for cid, audio, text, speaker in rows[1:]:
        x, rate = read_mono(os.path.join(src, audio))
        y = add_low_noise(x, rate, rng)
        with wave.open(os.path.join(dst, "wavs", cid + ".wav"), "wb") as w:
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(rate)
            w.writeframes(struct.pack("<%dh" % len(y), *(max(-32768, min(32767, round(v * 32768))) for v in y)))
        meta.append(f"{cid}\twavs/{cid}.wav\t{text}\t{speaker}")
    with open(os.path.join(dst, "metadata.tsv"), "w", encoding="utf-8") as f:
        f.write("\n".join(meta) + "\n")
    return len(rows) - 1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--coqui", help="git directory of coqui-ai/TTS")
    ap.add_argument("--speechbrain", help="git directory of speechbrain/speechbrain")
    ap.add_argument("--resemblyzer", help="git directory of resemble-ai/Resemblyzer")
    ap.add_argument("--low-noise", action="store_true",
                    help="also write <corpus>-low: the same clips with hum, rumble and DC drift added")
    a = ap.parse_args()
    if not a.coqui and not a.speechbrain and not a.resemblyzer:
        ap.error("name at least one source (--coqui, --speechbrain, --resemblyzer)")
    try:
        if a.coqui:
            n = write_corpus(a.out, "ljspeech", a.coqui, [(p, "lj") for p in COQUI_WAVS], ljspeech_texts(a.coqui))
            print(f"ljspeech: {n} clips", file=sys.stderr)
        if a.speechbrain:
            n = write_corpus(a.out, "speechbrain", a.speechbrain, SPEECHBRAIN_CLIPS, {})
            print(f"speechbrain: {n} clips", file=sys.stderr)
        if a.resemblyzer:
            for name, folder in (("librispeech", "librispeech_train-clean-100"),
                                 ("librispeech-other", "librispeech_test-other")):
                n = write_corpus(a.out, name, a.resemblyzer, resemblyzer_clips(a.resemblyzer, folder), {})
                print(f"{name}: {n} clips", file=sys.stderr)
        for name in ("ljspeech", "speechbrain", "librispeech") if a.low_noise else ():
            if os.path.isdir(os.path.join(a.out, name)):
                print(f"{name}-low: {write_low_noise_corpus(a.out, name, 1)} clips", file=sys.stderr)
    except FileNotFoundError as e:
        print(f"real_speech_corpus: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
