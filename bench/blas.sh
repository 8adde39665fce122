#!/usr/bin/env bash
# bench/blas.sh — prints which BLAS library a PyTorch process of this environment loads (the
# file mapped after a matrix product), so each benchmark states what its peers ran on.
PY=${PYTHON:-/usr/bin/python3}
"$PY" - <<'PYEOF' 2>/dev/null || echo "none (torch not importable)"
import os, torch
torch.ones(64, 64) @ torch.ones(64, 64)
libs = sorted({l.split()[-1] for l in open("/proc/self/maps") if "blas" in l.lower() and "/" in l})
print(", ".join(os.path.realpath(x) for x in libs) or "none found (torch's built-in)")
PYEOF
