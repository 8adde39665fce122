#!/usr/bin/env bash
# make-bench-data.sh DEST [HOURS] — inputs for `make bench`, generated, deterministic.
#
#   DEST/demo/           the demo dataset (scripts/make-demo-dataset.sh), the source of all audio
#   DEST/ljs22k/         HOURS hours (default 1) of 22,050 Hz mono 16-bit speech in LJSpeech
#                        layout: clips of 2-12 s made by joining demo clips (resampled with
#                        sox), metadata.csv with generated English transcripts
#   DEST/ljs44k/         the same clips at 44,100 Hz (for resampler benchmarks)
#   DEST/text/           metadata.csv with 13,100 transcripts of 20-180 characters (LJSpeech's
#                        count), ids BENCH-00001..BENCH-13100; its wavs/ links to ljs22k/wavs,
#                        which holds the first clips only: it is for text benchmarks
#                        (xtts-tokenize), not for audio ones
#
# The same DEST and HOURS give the same bytes on every run with the same espeak-ng and sox.
# A finished DEST (DEST/.complete naming the same HOURS) is left as it is.
set -euo pipefail
export LC_ALL=C.UTF-8
if [ $# -lt 1 ] || [ $# -gt 2 ] || [ "$1" = "-h" ] || [ "$1" = "--help" ]; then
  echo "usage: $0 DEST [HOURS]" >&2
  exit 1
fi
DEST=$1
HOURS=${2:-1}
awk -v h="$HOURS" 'BEGIN { exit !(h > 0 && h <= 1000) }' || { echo "$0: HOURS must be a number in (0, 1000]" >&2; exit 1; }
here="$(cd "$(dirname "$0")" && pwd)"
PY=${PYTHON:-/usr/bin/python3}

if [ -f "$DEST/.complete" ] && [ "$(cat "$DEST/.complete")" = "hours=$HOURS" ]; then
  echo "bench data: $DEST is complete ($HOURS h)" >&2
  exit 0
fi
rm -f "$DEST/.complete"
mkdir -p "$DEST"
bash "$here/../scripts/make-demo-dataset.sh" "$DEST/demo"

"$PY" - "$DEST" "$HOURS" <<'PYEOF'
import os, subprocess, sys
from concurrent.futures import ThreadPoolExecutor

dest, hours = sys.argv[1], float(sys.argv[2])
demo = os.path.join(dest, "demo")

class Lcg:
    """64-bit LCG (Knuth MMIX): the same numbers on every Python version."""
    def __init__(self, seed): self.x = seed & (2**64 - 1)
    def next(self):
        self.x = (self.x * 6364136223846793005 + 1442695040888963407) & (2**64 - 1)
        return self.x >> 33
    def below(self, n): return self.next() % n
    def pick(self, seq): return seq[self.below(len(seq))]

# ---- transcripts ---------------------------------------------------------------
SUBJECTS = ["The committee", "Dr. Smith", "Mr. Jones", "Mrs. Brown", "The old sailor", "Prof. Lee",
            "A young clerk", "The witness", "St. John's choir", "The engineer", "Our neighbour",
            "The president", "Capt. Hale", "The printer", "Every student"]
VERBS = ["reported", "paid", "found", "described", "carried", "measured", "announced", "examined",
         "delivered", "recorded", "noticed", "repaired", "counted", "sold", "explained"]
OBJECTS = ["the letter", "a large crate", "the evidence", "twelve lamps", "the old map", "a new engine",
           "the accounts", "the morning papers", "a silver watch", "the final report", "three horses",
           "the broken window", "a short speech", "the harbour lights"]
TAILS = ["on May 3rd, 1984", "at 9:30 a.m.", "for $12.50", "before the 2nd of Jan.", "near St. Louis",
         "with about 75% of the votes", "in 1,200 pages", "at No. 10", "by 4 p.m.", "in the year 1865",
         "for 3.14 dollars", "on the 31st of Dec.", "across 20 miles", "after 7 o'clock", ""]
LINKS = [", and then", "; however,", ", while", ", because", ", although", ". Later,"]

def sentence(r):
    parts = [r.pick(SUBJECTS), r.pick(VERBS), r.pick(OBJECTS)]
    tail = r.pick(TAILS)
    if tail: parts.append(tail)
    return " ".join(parts)

def transcript(r):
    lo, hi = 20, 180
    target = lo + r.below(hi - lo + 1)
    text = sentence(r)
    while len(text) < target:
        s2 = sentence(r)
        if s2.split()[0] in ("The", "A", "Our", "Every"): s2 = s2[0].lower() + s2[1:]
        nxt = r.pick(LINKS) + " " + s2
        if len(text) + len(nxt) + 1 > hi: break
        text += nxt
    if len(text) > hi - 1: text = text[:hi - 1].rstrip(" ,;")
    if len(text) < lo: text = (text + " and so it went on").strip()
    return text if text.endswith(".") else text + "."

r = Lcg(20241122)
N_TEXT = 13100
texts = [transcript(r) for _ in range(N_TEXT)]
assert all(20 <= len(t) <= 180 for t in texts), "transcript length out of range"
ids = ["BENCH-%05d" % (i + 1) for i in range(N_TEXT)]

def write_metadata(path, rows):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        for i, t in rows: f.write("%s|%s|%s\n" % (i, t, t))
    os.replace(tmp, path)

os.makedirs(os.path.join(dest, "text"), exist_ok=True)
write_metadata(os.path.join(dest, "text", "metadata.csv"), zip(ids, texts))
link = os.path.join(dest, "text", "wavs")
if not os.path.islink(link): os.symlink("../ljs22k/wavs", link)

# ---- audio ---------------------------------------------------------------------
# The demo's good clips, as 22,050 Hz mono 16-bit WAV (sox reads FLAC/Ogg content by magic).
pool_dir = os.path.join(dest, "pool")
os.makedirs(pool_dir, exist_ok=True)
with open(os.path.join(demo, "metadata.csv"), encoding="utf-8") as f:
    demo_ids = [line.split("|", 1)[0] for line in f if not line.startswith("bad_")]
def sox(*args):
    subprocess.run(["sox", "-D", "-R", "-V1", *args], check=True)
def to_pool(i):
    out = os.path.join(pool_dir, i + ".wav")
    sox(os.path.join(demo, "wavs", i + ".wav"), "-b", "16", "-c", "1", "-r", "22050", out)
    return out
with ThreadPoolExecutor(os.cpu_count() or 2) as ex:
    pool = list(ex.map(to_pool, demo_ids))
def frames(p):
    return int(subprocess.run(["soxi", "-s", p], check=True, capture_output=True, text=True).stdout)
pool_len = [frames(p) for p in pool]

total = int(hours * 3600 * 22050)
r = Lcg(7)
plan, done, k = [], 0, 0
while done < total:
    want = int((2.0 + r.below(1001) / 100.0) * 22050)          # 2-12 s
    want = min(want, max(total - done, 22050))
    parts, n = [], 0
    while True:
        p = k % len(pool); k += 1
        if parts and n + pool_len[p] > 12 * 22050: break
        parts.append(p); n += pool_len[p]
        if n >= want: break
    plan.append(parts); done += n
n_clips = len(plan)
if n_clips > N_TEXT:
    sys.exit("make-bench-data: %d clips need more than %d transcripts" % (n_clips, N_TEXT))

for rate, name in ((22050, "ljs22k"), (44100, "ljs44k")):
    wavs = os.path.join(dest, name, "wavs")
    os.makedirs(wavs, exist_ok=True)
    for f in os.listdir(wavs):
        if f.endswith(".wav") and f[:-4] not in ids[:n_clips]: os.remove(os.path.join(wavs, f))
    def make(j, rate=rate, wavs=wavs):
        out = os.path.join(wavs, ids[j] + ".wav")
        tmp = out + ".tmp.wav"
        sox(*[pool[p] for p in plan[j]], "-b", "16", "-r", str(rate), tmp)
        os.replace(tmp, out)
    with ThreadPoolExecutor(os.cpu_count() or 2) as ex:
        list(ex.map(make, range(n_clips)))
    write_metadata(os.path.join(dest, name, "metadata.csv"), zip(ids[:n_clips], texts[:n_clips]))

print("bench data: %d clips, %.2f h at 22050 and 44100 Hz; %d transcripts in %s"
      % (n_clips, done / 22050 / 3600, N_TEXT, dest), file=sys.stderr)
PYEOF
rm -rf "$DEST/pool"
echo "hours=$HOURS" >"$DEST/.complete"
