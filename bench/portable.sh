#!/usr/bin/env bash
# bench/portable.sh — the portable build that `make install` installs (x86-64-v2 baseline, the
# hot code choosing AVX2 or AVX-512 at run time; docs/building.md) against the native build
# (-march=native) of the same source, in the same run: xtts-train's median step time (tiny and
# small models, a synthetic cache), and, with the bench data, xtts-melcache's wall time on
# its 22,050 Hz clips and xtts-cache-verify --deep's on the cache it wrote. ROUNDS alternated
# rounds, medians, and the ratio portable / native; the two caches' content digests and the
# two trainers' losses must be equal.
# Env: BUILD (default build), BENCH_DATA (bench/make-data.sh; without it xtts-train
# only), THREADS (default nproc), STEPS (20), BATCH (8), FRAMES (160), ROUNDS (3),
# MELCACHE_CLIPS (default: all), PYTHON. `make portable` builds $BUILD/portable first (PORTABLE_OPT
# passes through).
set -euo pipefail
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}" # see docs/xtts-train.md, "Threads"
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD="${BUILD:-$ROOT/build}"
THREADS="${THREADS:-$(nproc)}"
STEPS="${STEPS:-20}"
BATCH="${BATCH:-8}"
FRAMES="${FRAMES:-160}"
ROUNDS="${ROUNDS:-3}"
CLIPS="${MELCACHE_CLIPS:-}"
PY="${PYTHON:-/usr/bin/python3}"
N="$BUILD/bin"
P="$BUILD/portable/bin"
W="$BUILD/bench/portable"
rm -rf "$W"; mkdir -p "$W"
make -C "$ROOT" --no-print-directory BUILD="$BUILD" ${PORTABLE_OPT:+PORTABLE_OPT="$PORTABLE_OPT"} portable >&2
[ -x "$N/xtts-train" ] && [ -x "$P/xtts-train" ] || { echo "bench_portable: $N or $P not built" >&2; exit 2; }

now() { date +%s.%N; }
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
runs() { local o=""; for x in "$@"; do o+="$(printf "$FMT" "$x") "; done; echo "${o% }"; }
# row WHAT FMT NATIVE... -- PORTABLE...: a table row of medians, runs and the ratio
row() {
  local what=$1; FMT=$2; shift 2
  local nat=() por=()
  while [ "$1" != -- ]; do nat+=("$1"); shift; done; shift
  por=("$@")
  local mn mp; mn=$(median "${nat[@]}"); mp=$(median "${por[@]}")
  echo "| $what | $(printf "$FMT" "$mn") ($(runs "${nat[@]}")) | $(printf "$FMT" "$mp") ($(runs "${por[@]}")) | $(printf '%.2f' "$(echo "scale=4; $mp / $mn" | bc)") |"
}

opt=${PORTABLE_OPT:-$(sed -n 's/^PORTABLE_OPT ?= //p' "$ROOT/Makefile")}
echo "The portable build (\`make portable\`, what \`make install\` installs: $opt) against the native"
echo "build (-march=native), same source, same run; $ROUNDS alternated rounds, medians (the runs in"
echo "parentheses); ratio = portable / native. xtts-train: $THREADS threads, batch $BATCH, $STEPS steps on a synthetic"
echo "cache (up to $FRAMES frames), median step time of each run; OMP_WAIT_POLICY=$OMP_WAIT_POLICY."
echo
echo "| program | native | portable | portable / native |"
echo "|---|---:|---:|---:|"

"$BUILD/tests/tools/synth-cache" "$W/cache" --records 256 --frames "$FRAMES" 2> /dev/null
summary() { grep -o "\"$2\":[^,}]*" "$1" | tail -n 1 | cut -d: -f2 | tr -d '"'; }
losses() { grep -o '"step":[0-9]*,"loss":[^,]*' "$1"; }
for model in tiny small; do
  nat=(); por=()
  for r in $(seq "$ROUNDS"); do
    for b in native portable; do
      bin="$N/xtts-train"; [ $b = native ] || bin="$P/xtts-train"
      "$bin" --cache "$W/cache" --model "$model" --steps "$STEPS" --batch-size "$BATCH" --threads "$THREADS" \
          --device cpu --log-every 1000000 --log-json "$W/$model.$b.$r.json" 2> /dev/null
      ms=$(summary "$W/$model.$b.$r.json" median_step_ms)
      if [ $b = native ]; then nat+=("$ms"); else por+=("$ms"); fi
    done
    cmp -s <(losses "$W/$model.native.$r.json") <(losses "$W/$model.portable.$r.json") ||
      { echo "bench_portable: the portable xtts-train's losses differ from the native one's" >&2; exit 1; }
  done
  row "xtts-train $model, ms/step (CPU loops: $(summary "$W/$model.native.1.json" cpu_loops) / $(summary "$W/$model.portable.1.json" cpu_loops))" \
      '%.1f' "${nat[@]}" -- "${por[@]}"
done

if [ -n "${BENCH_DATA:-}" ] && [ -f "$BENCH_DATA/ljs22k/metadata.csv" ]; then
  if [ -n "$CLIPS" ]; then head -n "$CLIPS" "$BENCH_DATA/ljs22k/metadata.csv"; else cat "$BENCH_DATA/ljs22k/metadata.csv"; fi > "$W/metadata.csv"
  ln -s "$BENCH_DATA/ljs22k/wavs" "$W/wavs"
  "$N/xtts-tokenize" --lang en -q "$W/metadata.csv" > "$W/tokens.tsv"
  mc_n=(); mc_p=(); vf_n=(); vf_p=()
  for r in $(seq "$ROUNDS"); do
    for b in native portable; do
      dir="$N"; [ $b = native ] || dir="$P"
      rm -rf "$W/c-$b"
      t0=$(now); "$dir/xtts-melcache" --out "$W/c-$b" -j "$THREADS" -q "$W/tokens.tsv" 2> /dev/null || [ $? -eq 3 ]
      t=$(echo "$(now) - $t0" | bc)
      if [ $b = native ]; then mc_n+=("$t"); else mc_p+=("$t"); fi
      t0=$(now); "$dir/xtts-cache-verify" --deep "$W/c-$b" > "$W/verify-$b.txt" 2> /dev/null
      t=$(echo "$(now) - $t0" | bc)
      if [ $b = native ]; then vf_n+=("$t"); else vf_p+=("$t"); fi
    done
    cmp -s <(grep '^digest' "$W/verify-native.txt") <(grep '^digest' "$W/verify-portable.txt") ||
      { echo "bench_portable: the portable xtts-melcache's cache differs from the native one's" >&2; exit 1; }
  done
  hours=$("$PY" -c 'import json, sys; m = json.load(open(sys.argv[1]))["config"]["mel"]
print("%.2f" % (int(sys.argv[2]) * m["hop_samples"] / m["sample_rate"] / 3600))' "$W/c-native/manifest.json" \
        "$(grep -o 'frames: [0-9]*' "$W/verify-native.txt" | cut -d' ' -f2)")
  row "xtts-melcache -j $THREADS, s ($(wc -l < "$W/metadata.csv") clips, $hours h of 22,050 Hz speech)" '%.2f' "${mc_n[@]}" -- "${mc_p[@]}"
  row "xtts-cache-verify --deep, s (that cache)" '%.2f' "${vf_n[@]}" -- "${vf_p[@]}"
  echo
  echo "Same bits: the two trainers' losses are equal step for step, and the two caches' content digests are equal."
else
  echo
  echo "Same bits: the two trainers' losses are equal step for step. (No bench data: xtts-melcache not timed.)"
fi
