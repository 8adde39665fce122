#!/usr/bin/env bash
# make bench: build what is needed, generate the inputs, run every comparison side by side
# in this one run and write docs/benchmarks.md. Never part of make test.
#   BENCH_HOURS (default 1)  hours of generated speech
#   BENCH_ONLY="mel melcache tokenize reader train"  a subset of the sections
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
export BUILD="${BUILD:-$ROOT/build}"
export PYTHON=${PYTHON:-/usr/bin/python3}
bash "$ROOT/scripts/install-deps.sh" --bench
# Every peer process (PyTorch, torchaudio, numpy) runs on OpenBLAS whatever the machine's BLAS
# alternative says: the reference BLAS makes PyTorch's figures meaningless (a step 40x slower).
openblas=/usr/lib/x86_64-linux-gnu/openblas-openmp
[ -d "$openblas" ] && export LD_LIBRARY_PATH="$openblas${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export BENCH_DATA="$BUILD/bench/data"
bash "$ROOT/scripts/make-bench-data.sh" "$BENCH_DATA" "${BENCH_HOURS:-1}" >&2
only=" ${BENCH_ONLY:-mel melcache tokenize reader train} "
out="$BUILD/bench/benchmarks.md"
mkdir -p "$BUILD/bench"
{
  echo "# Benchmarks"
  echo
  echo "Written by \`make bench\` ($(date -u +%Y-%m-%d)). Every ratio compares runs taken side by side in"
  echo "the same run of the script, alternated, on this machine; medians are quoted. Re-run with"
  echo "\`make bench\` (or \`BENCH_ONLY=melcache make bench\` for one section)."
  echo
  echo "Machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')),"
  echo "$(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo) RAM, $(. /etc/os-release; echo "$PRETTY_NAME"), gcc $(gcc -dumpversion)."
  echo "Peers: $("$PYTHON" -c 'import torch, torchaudio; print(f"PyTorch {torch.__version__}, torchaudio {torchaudio.__version__}")' 2>/dev/null || echo 'torch not installed')"
  echo "BLAS of the peers' processes: $(bash "$ROOT/scripts/bench_blas.sh")."
  echo
} > "$out"
section() { # name script
  local name=$1 script=$2
  case "$only" in *" $name "*) ;; *) return 0 ;; esac
  if [ ! -f "$ROOT/scripts/$script" ]; then echo "bench: $script missing; skipping $name" >&2; return 0; fi
  echo "bench: $name ..." >&2
  local tmp; tmp=$(mktemp)
  bash "$ROOT/scripts/$script" > "$tmp" || echo "(the $name benchmark failed: exit $?)" >> "$tmp"
  cp "$tmp" "$BUILD/bench/$name.txt" # later sections may use earlier figures (floors)
  {
    echo "## $name"; echo
    if grep -q '^|' "$tmp"; then cat "$tmp"; else echo '```text'; cat "$tmp"; echo '```'; fi
    echo
  } >> "$out"
  rm -f "$tmp"
}
section mel bench_mel.sh
section melcache bench_melcache.sh
section tokenize bench_tokenize.sh
section reader bench_reader.sh
section train bench_train.sh
cp "$out" "$ROOT/docs/benchmarks.md"
cat "$out"
echo "bench: wrote docs/benchmarks.md" >&2
