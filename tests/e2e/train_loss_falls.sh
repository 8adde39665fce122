#!/usr/bin/env bash
# xtts-train: on the demo cache ($BUILD/demo/cache, when `make demo` has built it) or else
# on a synthetic cache, the loss of a short tiny-model run falls well below its start.
# Also reports the input stall (a measurement, not asserted).
set -euo pipefail
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}" # see docs/xtts-train.md, "Threads"
: "${BUILD:?}" "${TMPDIR_TEST:?}"
PY="${PYTHON:-/usr/bin/python3}"
T="$BUILD/bin/xtts-train"
W="$TMPDIR_TEST/train_loss"
rm -rf "$W"; mkdir -p "$W"
if [ -f "$BUILD/demo/cache/manifest.json" ]; then
    cache="$BUILD/demo/cache"; steps=60; batch=4
else
    "$BUILD/tests/tools/synth-cache" "$W/cache" --records 96 --frames 64
    cache="$W/cache"; steps=80; batch=8
fi
"$T" --cache "$cache" --model tiny --steps "$steps" --batch-size "$batch" --lr 1e-3 --warmup 5 \
     --seed 3 --log-every 10 --log-json "$W/log.json"
"$PY" - "$W/log.json" <<'PYEOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
steps = [r for r in rows if "step" in r]
summary = [r["summary"] for r in rows if "summary" in r][0]
first = sum(r["loss"] for r in steps[:5]) / 5
last = sum(r["loss"] for r in steps[-10:]) / 10
print(f"loss: first 5 steps {first:.4f}, last 10 steps {last:.4f} ({last / first:.2f} of the start)")
print(f"median step {summary['median_step_ms']:.1f} ms, cv {summary['step_ms_cv']:.3f}, "
      f"median input stall {summary['median_input_stall_pct']:.3f}%")
assert last < 0.6 * first, "the loss did not fall well below its start"
PYEOF
