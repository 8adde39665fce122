#!/usr/bin/env bash
# bench_train.sh — xtts-train step time against the same model in PyTorch on the CPU.
#
# For the tiny and small models: trains STEPS steps on a synthetic cache with THREADS
# OpenMP threads, then replays the same batch shapes in PyTorch (scripts/bench_train_torch.py)
# with the same number of threads, and prints median step time, samples/s, their ratio and
# the loader's input stall. Environment: BUILD (default build), THREADS (default: nproc),
# STEPS (default 20), BATCH (default 8), FRAMES (padded frames of the cache, default 160),
# PYTHON (default /usr/bin/python3), OUT (a directory for logs; default a temporary one).
# OMP_WAIT_POLICY defaults to passive for both sides: on a shared machine, OpenMP threads
# that spin at barriers while their partners are descheduled cost more than the work.
set -euo pipefail
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"
here="$(cd "$(dirname "$0")" && pwd)"
BUILD="${BUILD:-$here/../build}"
THREADS="${THREADS:-$(nproc)}"
STEPS="${STEPS:-20}"
BATCH="${BATCH:-8}"
FRAMES="${FRAMES:-160}"
PY="${PYTHON:-/usr/bin/python3}"
T="$BUILD/bin/xtts-train"
OUT="${OUT:-$(mktemp -d)}"
mkdir -p "$OUT"
[ -x "$T" ] || { echo "bench_train: $T not built (run make)" >&2; exit 2; }

"$T" --synth-cache "$OUT/cache" --synth-records 256 --synth-frames "$FRAMES" 2> /dev/null
have_torch=1
"$PY" -c "import torch" 2> /dev/null || have_torch=0

printf '%-6s %8s %14s %14s %12s %12s %8s %9s\n' model threads "C ms/step" "torch ms/step" "C samples/s" "torch s/s" "C/torch" "stall %"
for model in tiny small; do
    "$T" --cache "$OUT/cache" --model "$model" --steps "$STEPS" --batch-size "$BATCH" --threads "$THREADS" \
         --log-every 1000000 --log-json "$OUT/$model.json" 2> "$OUT/$model.err"
    read -r c_ms c_sps stall <<< "$("$PY" -c '
import json, sys
s = [json.loads(l)["summary"] for l in open(sys.argv[1]) if "summary" in l][0]
print(s["median_step_ms"], s["samples_per_s"], s["median_input_stall_pct"])' "$OUT/$model.json")"
    t_ms=NA; t_sps=NA; ratio=NA
    if [ "$have_torch" = 1 ]; then
        read -r L C NH <<< "$(case $model in tiny) echo 2 128 4;; small) echo 6 384 6;; esac)"
        M=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["config"]["mel"]["n_mels"])' "$OUT/cache/manifest.json")
        read -r PT PM V <<< "$("$PY" -c '
import json, sys
c = json.load(open(sys.argv[1]))["config"]
print(c["max_tokens"] + 1, max([c["max_frames"]] + c["buckets"]), c["vocab_size"])' "$OUT/cache/manifest.json")"
        "$PY" "$here/bench_train_torch.py" "$OUT/$model.json" --layers "$L" --width "$C" --heads "$NH" --mels "$M" \
            --vocab "$V" --text-pos "$PT" --mel-pos "$PM" --threads "$THREADS" > "$OUT/$model.torch.json"
        read -r t_ms t_sps <<< "$("$PY" -c '
import json, sys
r = json.load(open(sys.argv[1])); print(r["median_step_ms"], r["samples_per_s"])' "$OUT/$model.torch.json")"
        ratio=$("$PY" -c "print(f'{$c_ms / $t_ms:.2f}')")
    fi
    printf '%-6s %8s %14.1f %14s %12.1f %12s %8s %9.3f\n' "$model" "$THREADS" "$c_ms" "$t_ms" "$c_sps" "$t_sps" "$ratio" "$stall"
done
echo "logs: $OUT (OMP_WAIT_POLICY=$OMP_WAIT_POLICY)"
