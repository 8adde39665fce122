#!/usr/bin/env bash
# bench/quality.sh — what the quality metrics (kernels/quality.h) add to a cache build: their
# CPU time per hour of audio beside the xtts log-mel's on the same clips (one core, clip by
# clip, bench/src/bench_quality.c), and beside xtts-melcache's whole per-record work
# (decode, mel, pad, fp16, zstd, LMDB) on the same 22,050 Hz speech, -j 1. CPU time (user +
# system), not wall time, for all three: on a shared machine the wall clock also counts other
# processes. Medians of REPS runs.
# Env: BUILD, BENCH_DATA (bench/make-data.sh; without it the clips are generated
# speech-like audio and the melcache row is left out), REPS (5), SECONDS_AUDIO (600), PYTHON.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
PY=${PYTHON:-/usr/bin/python3}
REPS=${REPS:-5}
SECONDS_AUDIO=${SECONDS_AUDIO:-600}
CC=${CC:-gcc}
BIN=$BUILD/bin
LIB=$BUILD/lib/libxtts.a
[ -f "$LIB" ] || { echo "bench_quality: $LIB not found; run make first" >&2; exit 2; }
W=$BUILD/bench/quality
rm -rf "$W"; mkdir -p "$W"
$CC -std=c17 -O2 -march=native -fopenmp -fno-math-errno -D_GNU_SOURCE -I"$ROOT" "$ROOT/bench/src/bench_quality.c" \
    "$LIB" $(pkg-config --libs sndfile soxr samplerate fftw3f) -lpthread -lm -o "$W/bench_quality"
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
set22="${BENCH_DATA:-}/ljs22k"
args=("$SECONDS_AUDIO" 10)
if [ -n "${BENCH_DATA:-}" ] && [ -d "$set22/wavs" ]; then
  ls "$set22"/wavs/*.wav > "$W/list.txt"
  args=(--wavs "$W/list.txt" "$SECONDS_AUDIO")
  "$BIN/xtts-tokenize" --lang en -q "$set22/metadata.csv" > "$W/tokens.tsv"
  hours=$("$PY" -c "
import glob, wave
t = 0.0
for p in glob.glob('$set22/wavs/*.wav'):
    with wave.open(p) as w:
        t += w.getnframes() / w.getframerate()
print(t / 3600)")
fi
mels=(); qs=(); mcs=()
for r in $(seq "$REPS"); do
  out=$("$W/bench_quality" "${args[@]}")
  head=$(echo "$out" | grep '^#')
  mels+=("$(echo "$out" | awk '$1 == "mel_xtts" {print $2}')")
  qs+=("$(echo "$out" | awk '$1 == "quality" {print $2}')")
  if [ -f "$W/tokens.tsv" ]; then
    rm -rf "$W/cache"
    TIMEFORMAT='%U %S'
    t=$( { time "$BIN/xtts-melcache" --out "$W/cache" -j 1 -q "$W/tokens.tsv" >/dev/null 2>&1 || [ $? -eq 3 ]; } 2>&1 | tail -1)
    mcs+=("$(echo "$t $hours" | awk '{printf "%.4f", ($1 + $2) / $3}')")
  fi
done
mel=$(median "${mels[@]}"); q=$(median "${qs[@]}")
echo "${head#\# }"
echo
echo "| work | CPU s per hour of audio (runs) | quality metrics as a share |"
echo "|---|---|---|"
echo "| quality metrics (xtts_quality_measure) | $q (${qs[*]}) | - |"
echo "| xtts log-mel (xtts_mel_compute) | $mel (${mels[*]}) | $(echo "$q $mel" | awk '{printf "%.1f %%", 100 * $1 / $2}') |"
if [ ${#mcs[@]} -gt 0 ]; then
  mc=$(median "${mcs[@]}")
  echo "| xtts-melcache -j 1, whole build ($(printf '%.2f' "$hours") h at 22,050 Hz) | $mc (${mcs[*]}) | $(echo "$q $mc" | awk '{printf "%.1f %%", 100 * $1 / $2}') |"
fi
