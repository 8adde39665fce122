#!/usr/bin/env bash
# make gpu-check: on a machine with a usable CUDA device, check the CUDA log-mel against the
# CPU path — the unit test that compares batches for every preset, then the demo dataset
# built into two caches (--device cpu and --device cuda, fp32) compared record by record
# within the golden tolerance (1e-3 in the log domain). On a machine without one it says so
# and exits 0 without pretending to have checked anything.
# Environment: BUILD (absolute build dir), PYTHON (default /usr/bin/python3), GPU_CHECK_DIR
# (scratch, default $BUILD/gpu-check), DEVICE (default 0).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
BUILD="${BUILD:-$here/../build}"
PYTHON="${PYTHON:-/usr/bin/python3}"
DIR="${GPU_CHECK_DIR:-$BUILD/gpu-check}"
DEVICE="${DEVICE:-0}"
BIN="$BUILD/bin"
t="$BUILD/tests/test_mel_cuda"
[ -x "$t" ] || { echo "gpu-check: $t not built; run make first" >&2; exit 2; }

out=$("$t" 2>&1) || { echo "$out" >&2; echo "gpu-check: FAILED: test_mel_cuda" >&2; exit 1; }
line=$(printf '%s\n' "$out" | grep -m1 'cuda:0 ' || true)
if ! printf '%s\n' "$line" | grep -q 'cuda:0 usable'; then
  why=${line#*cuda:0 }; why=${why#not usable: }
  echo "gpu-check: no usable CUDA device here: ${why:-unknown}; nothing was checked" >&2
  exit 0
fi
printf '%s\n' "$out" | grep -E 'max \|cuda - cpu\||PASSED|FAILED|SKIPPED' >&2
if printf '%s\n' "$out" | grep -q SKIPPED; then
  echo "gpu-check: FAILED: the CUDA comparison was skipped on a machine with a device" >&2
  exit 1
fi

if [ ! -x "$BIN/xtts-melcache" ] || ! "$BIN/xtts-melcache" --help 2>&1 | grep -q -- '--device'; then
  echo "gpu-check: unit comparison passed; xtts-melcache with --device is not built, demo comparison skipped" >&2
  exit 0
fi
rm -rf "$DIR"; mkdir -p "$DIR"
bash "$here/make-demo-dataset.sh" "$DIR/data" >&2
rc=0; "$BIN/xtts-tokenize" --lang auto "$DIR/data/metadata.csv" > "$DIR/tokens.tsv" || rc=$?
[ $rc -eq 0 ] || [ $rc -eq 3 ] || { echo "gpu-check: tokenize failed ($rc)" >&2; exit 1; }
for dev in cpu "cuda:$DEVICE"; do
  rc=0; "$BIN/xtts-melcache" --out "$DIR/cache-${dev%%:*}" --device "$dev" --dtype fp32 -q "$DIR/tokens.tsv" || rc=$?
  [ $rc -eq 0 ] || [ $rc -eq 3 ] || { echo "gpu-check: melcache --device $dev failed ($rc)" >&2; exit 1; }
done
PYTHONPATH="$here" "$PYTHON" - "$DIR/cache-cpu" "$DIR/cache-cuda" <<'PY'
import sys
import numpy as np
from xtts_cache import XttsCache
a, b = XttsCache(sys.argv[1]), XttsCache(sys.argv[2])
if len(a) != len(b):
    sys.exit(f"gpu-check: FAILED: {len(a)} records on cpu, {len(b)} on cuda")
worst, bad = 0.0, 0
for i in range(len(a)):
    ra, rb = a.get(i), b.get(i)
    if ra["id"] != rb["id"] or ra["n_frames"] != rb["n_frames"]:
        print(f"record {i}: id/frames differ: {ra['id']}/{ra['n_frames']} vs {rb['id']}/{rb['n_frames']}", file=sys.stderr)
        bad += 1
        continue
    d = float(np.abs(ra["mel"] - rb["mel"]).max()) if ra["n_frames"] else 0.0
    worst = max(worst, d)
    if d > 1e-3:
        print(f"record {i} ({ra['id']}): max |cuda - cpu| {d:.2e}", file=sys.stderr)
        bad += 1
print(f"gpu-check: {len(a)} records compared, max |cuda - cpu| {worst:.2e}, {bad} over 1e-3", file=sys.stderr)
sys.exit(1 if bad else 0)
PY
echo "gpu-check: passed" >&2
