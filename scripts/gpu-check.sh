#!/usr/bin/env bash
# make gpu-check: on a machine with a CUDA device, build the demo cache with --device cuda
# (with the default buffers, and through the batch pipeline with buffers of 7 records in 3
# sub-batches) and with --device cpu (fp32) and compare every record within the golden tolerance
# (1e-3 absolute in the log domain). Without a usable device it says so and exits 0,
# having checked nothing.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
BIN="${BUILD:?}/bin"
work="${BUILD}/gpu-check"
rm -rf "$work"; mkdir -p "$work"
bash "$here/make-demo-dataset.sh" "$work/data" >/dev/null
"$BIN/xtts-tokenize" --lang auto -q "$work/data/metadata.csv" > "$work/tokens.tsv" 2>/dev/null || [ $? -eq 3 ]
rc=0
"$BIN/xtts-melcache" --out "$work/gpu" --device cuda --dtype fp32 -q "$work/tokens.tsv" 2>"$work/gpu.err" || rc=$?
if [ $rc -ne 0 ] && [ $rc -ne 3 ]; then
  if grep -q "no usable CUDA device" "$work/gpu.err"; then
    echo "gpu-check: $(tail -n1 "$work/gpu.err" | sed 's/^xtts-melcache: //')"
    echo "gpu-check: no GPU here; nothing was checked"
    exit 0
  fi
  cat "$work/gpu.err" >&2; exit 2
fi
# the batch pipeline with small buffers: many sub-batches, rejects inside them
XTTS_MELCACHE_BATCH=buffer=7,sub=3 "$BIN/xtts-melcache" --out "$work/gpu-sub" --device cuda --dtype fp32 -q \
  "$work/tokens.tsv" 2>"$work/gpu-sub.err" || [ $? -eq 3 ] || { cat "$work/gpu-sub.err" >&2; exit 2; }
echo "gpu-check: per-preset comparison of the CUDA and CPU kernels (test_mel_cuda)"
"$BUILD/tests/test_mel_cuda"
"$BIN/xtts-melcache" --out "$work/cpu" --device cpu --dtype fp32 -q "$work/tokens.tsv" || [ $? -eq 3 ]
for gpu in gpu gpu-sub; do
PYTHONPATH="$here/../python" /usr/bin/python3 - "$work/cpu" "$work/$gpu" <<'PY'
import sys
from xtts_prep import XttsCache
import numpy as np
a, b = XttsCache(sys.argv[1]), XttsCache(sys.argv[2])
assert len(a) == len(b), f"record counts differ: cpu {len(a)} gpu {len(b)}"
worst = 0.0
for i in range(len(a)):
    ra, rb = a[i], b[i]
    assert ra["id"] == rb["id"] and ra["mel"].shape == rb["mel"].shape, f"record {i}: shape or id differs"
    d = float(np.max(np.abs(ra["mel"] - rb["mel"])))
    worst = max(worst, d)
    assert d <= 1e-3, f"record {i} ({ra['id']}): max |cpu - gpu| = {d:.2e} > 1e-3"
print(f"gpu-check: {sys.argv[2]}: {len(a)} records, CUDA vs CPU max abs difference {worst:.2e} (tolerance 1e-3): OK")
PY
done
