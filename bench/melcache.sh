#!/usr/bin/env bash
# bench/melcache.sh — xtts-melcache end to end (decode, resample, mel, pad, compress,
# write) against the Python pipeline a training script would run (bench/
# peer-pipeline.py: soundfile, torchaudio resample + MelSpectrogram, fp16 pad, zstandard
# level 3, lmdb), twice: 44.1 kHz audio with -j THREADS and THREADS worker processes, and
# 22,050 Hz audio (nothing to resample) on one thread and one worker; runs alternated REPS
# times, medians and ratios, and each against the sum of its stages' floors. Then the
# cache's size per hour of audio against raw fp16, with and without byte-plane shuffling,
# and the storage choices (waveform section, zstd level) by size and build time.
# Env: BUILD, BENCH_DATA (from bench/make-data.sh), THREADS (2), REPS (5), PYTHON.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN="${BUILD:?}/bin"
DATA="${BENCH_DATA:?}"
THREADS=${THREADS:-2}
REPS=${REPS:-5}
PY=${PYTHON:-/usr/bin/python3}
W="$BUILD/bench/melcache"
rm -rf "$W"; mkdir -p "$W"
openblas=/usr/lib/x86_64-linux-gnu/openblas-openmp
peer_env=(env OMP_NUM_THREADS=1)
[ -d $openblas ] && peer_env+=(LD_LIBRARY_PATH=$openblas)

now() { date +%s.%N; }
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
f2() { printf '%.2f' "$1"; }
runs() { local o=""; for x in "$@"; do o+="$(f2 "$x") "; done; echo "${o% }"; }
hours_of() { # DIR: hours of audio in DIR/wavs
  "$PY" -c "
import glob, wave
def dur(p):
    try:
        import soundfile as sf
        return sf.info(p).duration
    except ImportError:  # the standard library reads these WAV files too
        with wave.open(p) as w:
            return w.getnframes() / w.getframerate()
print(sum(dur(p) for p in glob.glob('$1/wavs/*.wav')) / 3600)"
}
for set in ljs44k ljs22k; do
  "$BIN/xtts-tokenize" --lang en -q "$DATA/$set/metadata.csv" > "$W/tokens-$set.tsv"
done
cp "$W/tokens-ljs44k.tsv" "$W/tokens.tsv"
hours=$(hours_of "$DATA/ljs44k")

# end_to_end SET THREADS: xtts-melcache -j THREADS and the Python pipeline with THREADS workers
# on DATA/SET, alternated REPS times; then the stages' floors for the same input: soxr HQ
# 44.1 -> 22.05 kHz when SET is 44.1 kHz, FFTW r2c + window + power (from the mel section of
# this run), and zstd at the build's level (ZSTD_LEVEL, default 1 as xtts-melcache) over the
# payload bytes the records hold.
end_to_end() {
  local set=$1 th=$2 h ours=() peer=() rate
  h=$(hours_of "$DATA/$set")
  rate=$("$PY" -c "
import glob, wave
p = sorted(glob.glob('$DATA/$set/wavs/*.wav'))[0]
with wave.open(p) as w: print(w.getframerate())")
  for r in $(seq "$REPS"); do
    rm -rf "$W/c-$set"; local t0; t0=$(now)
    "$BIN/xtts-melcache" --out "$W/c-$set" -j "$th" -q "$W/tokens-$set.tsv" 2>/dev/null || [ $? -eq 3 ]
    ours+=("$(echo "$(now) - $t0" | bc)")
    rm -rf "$W/p"; mkdir -p "$W/p"
    local out; out=$("${peer_env[@]}" "$PY" "$ROOT/bench/peer-pipeline.py" "$DATA/$set/metadata.csv" "$W/p" "$th")
    peer+=("${out##*seconds=}")
  done
  local mo mp; mo=$(median "${ours[@]}"); mp=$(median "${peer[@]}")
  per_h() { printf "%.3f" "$(echo "scale=4; $1 / $h" | bc)"; }
  echo "### End to end: $(echo "scale=2; $rate / 1000" | bc | sed 's/0*$//; s/\.$//') kHz audio to a finished cache, $th thread$([ "$th" = 1 ] || echo s)"
  echo
  echo "Input: $(printf '%.2f' "$h") h of $rate Hz speech ($(ls "$DATA/$set/wavs" | wc -l) clips); medians of $REPS alternated runs."
  echo
  echo "| pipeline | wall s (runs) | s per hour of audio | ratio |"
  echo "|---|---|---|---|"
  echo "| xtts-melcache -j $th | $(f2 "$mo") ($(runs "${ours[@]}")) | $(per_h "$mo") | 1.00 |"
  echo "| Python: soundfile + torchaudio + zstandard + lmdb, $th worker$([ "$th" = 1 ] || echo s) | $(f2 "$mp") ($(runs "${peer[@]}")) | $(per_h "$mp") | $(echo "scale=2; $mp / $mo" | bc)x slower |"
  echo
  local melt="$BUILD/bench/mel.txt"
  [ -f "$melt" ] || return 0
  local soxr=0 stft zs bytes
  [ "$rate" = 22050 ] || soxr=$(awk '$1=="soxr" && $2=="hq" && $3=="22050" {print $4; exit}' "$melt")
  stft=$(awk '$1=="xtts" {print $4; exit}' "$melt")
  PYTHONPATH="$ROOT/python" "$PY" - "$W/c-$set" "$W/payload.bin" <<'PY'
import struct, sys, zstandard
from xtts_prep.cache import XttsCache, parse_header
c = XttsCache(sys.argv[1])
d = zstandard.ZstdDecompressor()
with open(sys.argv[2], "wb") as f:
    for i in range(len(c)):
        buf = bytes(c.raw(i)[2])  # (index, shard, stored bytes)
        h = parse_header(buf)
        if h["version"] == 1:
            f.write(d.decompress(buf[64 + h["id_len"]:]))  # the payload the record's zstd frame holds
        else:  # the zstd sections: tokens, the mel's true frames, text (and a waveform)
            for s in h["sections"]:
                if s["codec"] == 1:
                    f.write(d.decompress(buf[s["offset"]:s["offset"] + s["stored"]]))
PY
  zs=$(zstd -b"${ZSTD_LEVEL:-1}" -i2 "$W/payload.bin" 2>&1 | tr '\r' '\n' | grep -o '[0-9.]* MB/s' | head -1 | cut -d' ' -f1)
  bytes=$(stat -c %s "$W/payload.bin")
  [ -n "$soxr" ] && [ -n "$stft" ] && [ -n "$zs" ] || return 0
  local zfloor sum par
  zfloor=$(printf '%.3f' "$(echo "scale=4; $bytes / 1000000 / $zs / $h" | bc)")
  sum=$(printf '%.3f' "$(echo "scale=4; ($soxr + $stft + $zfloor)" | bc)")
  par=$(printf '%.3f' "$(echo "scale=4; $sum / $th" | bc)")
  local what="STFT (r2c, window, power) $stft s"
  [ "$rate" = 22050 ] || what="soxr HQ $soxr s + $what"
  echo "Floors, one core, per hour of audio: $what + zstd -${ZSTD_LEVEL:-1} of the"
  echo "stored payload ($(echo "scale=1; $bytes / 1000000 / $h" | bc) MB/h at $zs MB/s) $zfloor s = $sum s$([ "$th" = 1 ] || echo "; over $th cores $par s")."
  echo "xtts-melcache takes $(per_h "$mo") s per hour: $(echo "scale=2; $(per_h "$mo") / $par" | bc)x the floors' sum."
  echo
}

# MELCACHE_STORAGE_ONLY=1: only the storage tables (no Python peer, no floors)
if [ "${MELCACHE_STORAGE_ONLY:-0}" != 1 ]; then
end_to_end ljs44k "$THREADS"
end_to_end ljs22k 1
# where the time goes: perf samples by stage (skipped without perf or permission to sample)
for set in ljs44k ljs22k; do
  prof=$(bash "$ROOT/bench/profile-melcache.sh" "$W/tokens-$set.tsv" 1 2>/dev/null || true)
  [ -n "$prof" ] || continue
  echo "### Where xtts-melcache's time goes: $set, one thread (perf, share of CPU samples)"
  echo
  echo "$prof"
  echo
done
rm -rf "$W/c"; mv "$W/c-ljs44k" "$W/c"

# sizes: shuffled (default) vs plain, against raw fp16 (padded and unpadded)
rm -rf "$W/c2"
"$BIN/xtts-melcache" --out "$W/c2" -j "$THREADS" -q --no-shuffle "$W/tokens.tsv" 2>/dev/null || [ $? -eq 3 ]
"$PY" - "$W/c" "$W/c2" "$hours" <<'PY'
import json, sys
def info(d):
    m = json.load(open(d + "/manifest.json"))
    b = sum(s["bytes"] for s in m["shards"])
    return m, b
m, b = info(sys.argv[1]); _, b2 = info(sys.argv[2]); h = float(sys.argv[3])
nm = m["config"]["mel"]["n_mels"]; frames = m["stats"]["frames"]
padded = m["records"] * m["config"]["max_frames"]
print("### Cache size per hour of audio (xtts preset, fp16, zstd level 3, lossless)")
print()
print("| form | MB per hour | vs raw fp16 unpadded |")
print("|---|---|---|")
raw = nm * frames * 2
print(f"| raw fp16 mel, unpadded | {raw/h/1e6:.1f} | 1.00 |")
print(f"| raw fp16 mel, padded to {m['config']['max_frames']} | {nm*padded*2/h/1e6:.1f} | {nm*padded*2/raw:.2f} |")
print(f"| cache records, plain fp16 + zstd | {b2/h/1e6:.1f} | {b2/raw:.2f} |")
print(f"| cache records, byte-shuffled fp16 + zstd (default) | {b/h/1e6:.1f} | {b/raw:.2f} |")
print()
PY
fi # MELCACHE_STORAGE_ONLY

# Storage choices: the waveform section (--audio none|int16|flac) and the zstd level
# (1..3) of a whole build, bytes per hour of audio and build time (medians of REPS runs,
# -j THREADS). The mel holds only its true frames (the decoder writes the padding), so
# the bytes zstd sees are the real content.
storage_build() { # NAME ARGS...: prints "seconds bytes"
  local name=$1; shift
  local ts=()
  for r in $(seq "$REPS"); do
    rm -rf "$W/s-$name"; local t0; t0=$(now)
    "$BIN/xtts-melcache" --out "$W/s-$name" -j "$THREADS" -q "$@" "$W/tokens.tsv" 2>/dev/null || [ $? -eq 3 ]
    ts+=("$(echo "$(now) - $t0" | bc)")
  done
  local b; b=$("$PY" -c "import json,sys; m=json.load(open(sys.argv[1])); print(sum(s['bytes'] for s in m['shards']))" "$W/s-$name/manifest.json")
  echo "$(median "${ts[@]}") $b"
}
echo "### Storage: waveform section and zstd level ($THREADS threads, medians of $REPS runs)"
echo
echo "| build | MB per hour | s per hour of audio | bytes vs mel only | time vs mel only |"
echo "|---|---|---|---|---|"
read -r t0 b0 <<<"$(storage_build none)"
row() { printf '| %s | %.1f | %.3f | %.2f | %.2f |\n' "$1" "$(echo "$3 / $hours / 1000000" | bc -l)" \
  "$(echo "$2 / $hours" | bc -l)" "$(echo "$3 / $b0" | bc -l)" "$(echo "$2 / $t0" | bc -l)"; }
row "--audio none (mel only; zstd 1, the default)" "$t0" "$b0"
read -r t b <<<"$(storage_build int16 --audio int16)"; row "--audio int16 (shuffled + zstd 1)" "$t" "$b"
read -r t b <<<"$(storage_build flac --audio flac)"; row "--audio flac" "$t" "$b"
for lvl in 2 3; do
  read -r t b <<<"$(storage_build z$lvl --zstd-level $lvl)"; row "--audio none, --zstd-level $lvl" "$t" "$b"
  read -r t b <<<"$(storage_build i$lvl --audio int16 --zstd-level $lvl)"; row "--audio int16, --zstd-level $lvl" "$t" "$b"
done
echo
