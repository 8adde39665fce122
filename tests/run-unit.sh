#!/usr/bin/env bash
# Run every cmocka test binary given, UNIT_JOBS at a time (default: the number of CPUs), each
# from the repository's folder; print each one's output whole, in the order given; fail if any
# fails.
set -u
root="$(cd "$(dirname "$0")/.." && pwd)"
jobs=${UNIT_JOBS:-$(nproc 2>/dev/null || echo 2)}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
i=0
for t in "$@"; do
  i=$((i + 1))
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
  ( cd "$root" && "$t" > "$out/$i.log" 2>&1; echo $? > "$out/$i.rc" ) &
done
wait
fail=0; i=0
for t in "$@"; do
  i=$((i + 1))
  echo "== $(basename "$t")"
  cat "$out/$i.log"
  if [ "$(cat "$out/$i.rc" 2>/dev/null || echo 1)" != 0 ]; then
    echo "FAILED: $t" >&2
    fail=1
  fi
done
exit $fail
