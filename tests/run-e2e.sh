#!/usr/bin/env bash
# Run every end-to-end test in tests/e2e/ (each a bash script that exits 0 on success).
# Environment: BUILD (absolute build dir), PYTHON.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
fail=0; n=0
for t in "$here"/e2e/*.sh; do
  [ -e "$t" ] || continue
  n=$((n+1))
  name=$(basename "$t" .sh)
  tmp=$(mktemp -d)
  if TMPDIR_TEST="$tmp" bash "$t" >"$tmp/log" 2>&1; then
    echo "[  PASSED  ] e2e/$name"
  else
    echo "[  FAILED  ] e2e/$name"; tail -n 40 "$tmp/log" | sed 's/^/    /'
    fail=$((fail+1))
  fi
  rm -rf "$tmp"
done
echo "e2e: $n run, $fail failed"
[ $fail -eq 0 ]
