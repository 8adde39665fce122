#!/usr/bin/env bash
# Build one cache with GNU parallel: N parts, each a separate xtts-melcache process (on one
# machine, or on several with parallel's --sshlogin over a shared filesystem).
#   scripts/parallel-melcache.sh tokens.tsv cache/ 8
set -euo pipefail
TOKENS="$1"; OUT="$2"; N="${3:-$(nproc)}"
seq 0 $((N-1)) | parallel -j "$N" --halt now,fail=1 \
  "xtts-melcache --out '$OUT' --part {}/$N -j 1 --quiet '$TOKENS' || [ \$? -eq 3 ]"
[ -f "$OUT/manifest.json" ] || xtts-cache-merge "$OUT"
