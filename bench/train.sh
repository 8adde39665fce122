#!/usr/bin/env bash
# bench/train.sh — xtts-train step time against the same model in PyTorch on the CPU.
#
# For the tiny and small models: trains STEPS steps on a synthetic cache with THREADS
# OpenMP threads, then replays the same batch shapes in PyTorch (bench/train-torch.py)
# with the same number of threads; ROUNDS rounds alternate the two, and the medians over
# rounds are printed as a markdown table: median step time, samples/s, their ratio and the
# loader's input stall. Environment: BUILD (default build), THREADS (default: nproc),
# STEPS (default 20), BATCH (default 8), FRAMES (padded frames of the cache, default 160),
# ROUNDS (default 3), PYTHON (default /usr/bin/python3), OUT (a directory for logs;
# default a temporary one).
# OMP_WAIT_POLICY defaults to passive for both sides: on a shared machine, OpenMP threads
# that spin at barriers while their partners are descheduled cost more than the work.
set -euo pipefail
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"
# PyTorch on OpenBLAS whatever the machine's BLAS alternative is (bench/run.sh does the same)
openblas=/usr/lib/x86_64-linux-gnu/openblas-openmp
case ":${LD_LIBRARY_PATH:-}:" in *":$openblas:"*) ;; *) [ -d "$openblas" ] && export LD_LIBRARY_PATH="$openblas${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ;; esac
here="$(cd "$(dirname "$0")" && pwd)"
BUILD="${BUILD:-$here/../build}"
THREADS="${THREADS:-$(nproc)}"
STEPS="${STEPS:-20}"
BATCH="${BATCH:-8}"
FRAMES="${FRAMES:-160}"
ROUNDS="${ROUNDS:-3}"
PY="${PYTHON:-/usr/bin/python3}"
T="$BUILD/bin/xtts-train"
OUT="${OUT:-$(mktemp -d)}"
mkdir -p "$OUT"
[ -x "$T" ] || { echo "bench_train: $T not built (run make)" >&2; exit 2; }

"$BUILD/tests/tools/synth-cache" "$OUT/cache" --records 256 --frames "$FRAMES" 2> /dev/null
have_torch=1
"$PY" -c "import torch" 2> /dev/null || have_torch=0
M=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["config"]["mel"]["n_mels"])' "$OUT/cache/manifest.json")
read -r PT PM V <<< "$("$PY" -c '
import json, sys
c = json.load(open(sys.argv[1]))["config"]
print(c["max_tokens"] + 1, max([c["max_frames"]] + c["buckets"]), c["vocab_size"])' "$OUT/cache/manifest.json")"

echo "xtts-train against the same model in PyTorch on the CPU: $THREADS threads, batch $BATCH, $STEPS steps"
echo "per run on a synthetic cache (up to $FRAMES frames), $ROUNDS alternated rounds, medians;"
echo "OMP_WAIT_POLICY=$OMP_WAIT_POLICY; PyTorch's BLAS: $(PYTHON="$PY" bash "$here/blas.sh")."
echo
echo "| model | xtts-train ms/step | PyTorch ms/step | ratio | xtts-train samples/s | PyTorch samples/s | input stall % |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for model in tiny small; do
    read -r L C NH <<< "$(case $model in tiny) echo 2 128 4;; small) echo 6 384 6;; esac)"
    for r in $(seq 1 "$ROUNDS"); do
        "$T" --cache "$OUT/cache" --model "$model" --steps "$STEPS" --batch-size "$BATCH" --threads "$THREADS" \
             --log-every 1000000 --log-json "$OUT/$model.$r.json" 2> "$OUT/$model.$r.err"
        if [ "$have_torch" = 1 ]; then
            "$PY" "$here/train-torch.py" "$OUT/$model.$r.json" --layers "$L" --width "$C" --heads "$NH" \
                --mels "$M" --vocab "$V" --text-pos "$PT" --mel-pos "$PM" --threads "$THREADS" > "$OUT/$model.$r.torch.json"
        fi
    done
    "$PY" - "$OUT" "$model" "$ROUNDS" "$have_torch" <<'PYEOF'
import json, statistics, sys
out, model, rounds, have_torch = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1"
c_ms, c_sps, stall, t_ms, t_sps = [], [], [], [], []
for r in range(1, rounds + 1):
    s = [json.loads(l)["summary"] for l in open(f"{out}/{model}.{r}.json") if "summary" in l][0]
    c_ms.append(s["median_step_ms"]); c_sps.append(s["samples_per_s"]); stall.append(s["median_input_stall_pct"])
    if have_torch:
        t = json.load(open(f"{out}/{model}.{r}.torch.json"))
        t_ms.append(t["median_step_ms"]); t_sps.append(t["samples_per_s"])
m = statistics.median
if have_torch:
    print(f"| {model} | {m(c_ms):.1f} | {m(t_ms):.1f} | {m(c_ms) / m(t_ms):.2f} | {m(c_sps):.1f} | {m(t_sps):.1f} | {m(stall):.3f} |")
else:
    print(f"| {model} | {m(c_ms):.1f} | (no torch) | | {m(c_sps):.1f} | | {m(stall):.3f} |")
PYEOF
done
echo
echo "Logs: $OUT."
