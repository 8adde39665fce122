#!/usr/bin/env bash
# make bench: build what is needed, generate the inputs, run every comparison side by side
# in this one run and write docs/benchmarks.md. Never part of make test.
#   BENCH_HOURS (default 1)  hours of generated speech
#   BENCH_ONLY="mel melcache quality tokenize reader train portable dvae segment"  a subset of the sections
#   COQUI_TTS  a coqui-ai/TTS checkout (or its git directory): the DVAE section's PyTorch peer
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
bash "$ROOT/bench/make-data.sh" "$BENCH_DATA" "${BENCH_HOURS:-1}" >&2
only=" ${BENCH_ONLY:-mel melcache quality tokenize reader train portable dvae segment} "
out="$BUILD/bench/benchmarks.md"
simd=$(grep -qw avx512f /proc/cpuinfo && echo "AVX-512" || { grep -qw avx2 /proc/cpuinfo && echo "AVX2, no AVX-512" || echo "no AVX2"; })
machine="$(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'); $simd)"
mkdir -p "$BUILD/bench"
{
  echo "# Benchmarks"
  echo
  echo "Written by \`make bench\` ($(date -u +%Y-%m-%d)). Every ratio compares runs taken side by side in"
  echo "the same run of the script, alternated, on this machine; medians are quoted. Re-run with"
  echo "\`make bench\` (or \`BENCH_ONLY=melcache make bench\` for one section; sections not re-run keep"
  echo "the figures of their own run, and \"Scale\" is written by \`make scale\`)."
  echo
  echo "Machine of the latest run: $machine,"
  echo "$(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo) RAM, $(. /etc/os-release; echo "$PRETTY_NAME"), gcc $(gcc -dumpversion)."
  echo "Each section names the machine and day it was measured on."
  echo "Peers: $("$PYTHON" -c 'import torch, torchaudio; print(f"PyTorch {torch.__version__}, torchaudio {torchaudio.__version__}")' 2>/dev/null || echo 'torch not installed')"
  echo "BLAS of the peers' processes: $(bash "$ROOT/bench/blas.sh")."
  echo "GPU figures are not measured here: \`make gpu-bundle DIR=...\` and \`bash DIR/gpu-bench.sh\` on a GPU machine"
  echo "(docs/gpu.md, \"The GPU check\")."
  echo
} > "$out"
section() { # name script
  local name=$1 script=$2
  case "$only" in *" $name "*) ;; *) return 0 ;; esac
  if [ ! -f "$ROOT/bench/$script" ]; then echo "bench: $script missing; skipping $name" >&2; return 0; fi
  echo "bench: $name ..." >&2
  local tmp; tmp=$(mktemp)
  bash "$ROOT/bench/$script" > "$tmp" || echo "(the $name benchmark failed: exit $?)" >> "$tmp"
  cp "$tmp" "$BUILD/bench/$name.txt" # later sections may use earlier figures (floors)
  {
    echo "## $name"; echo
    echo "Measured $(date -u +%Y-%m-%d) on $machine."; echo
    if grep -q '^|' "$tmp"; then cat "$tmp"; else echo '```text'; cat "$tmp"; echo '```'; fi
    echo
  } >> "$out"
  rm -f "$tmp"
}
section mel mel.sh
section melcache melcache.sh
section quality quality.sh
section tokenize tokenize.sh
section reader reader.sh
section train train.sh
section portable portable.sh
section dvae dvae.sh
section segment segment.sh
# Into docs/benchmarks.md: the sections of this run replace those of the same name; the others
# (sections not run this time, "Scale" from make scale, the profile) stay where they are.
"$PYTHON" - "$out" "$ROOT/docs/benchmarks.md" <<'PY'
import os, re, sys
def split(text):
    parts = re.split(r"(?m)^(?=## )", text)
    head, secs = parts[0], parts[1:]
    return head, [(s.split("\n", 1)[0], s) for s in secs]
new_head, new = split(open(sys.argv[1], encoding="utf-8").read())
old = open(sys.argv[2], encoding="utf-8").read() if os.path.exists(sys.argv[2]) else ""
_, kept = split(old)
fresh = dict(new)
out, done = [new_head], set()
for name, body in kept:
    if name in fresh:
        out.append(fresh[name]); done.add(name)
    else:
        out.append(body if body.endswith("\n\n") else body.rstrip("\n") + "\n\n")
out += [body for name, body in new if name not in done]
open(sys.argv[2], "w", encoding="utf-8").write("".join(out).rstrip("\n") + "\n")
PY
cat "$out"
echo "bench: wrote docs/benchmarks.md" >&2
