#!/usr/bin/env bash
# Run every cmocka test binary given; print each summary; fail if any fails.
set -u
fail=0
for t in "$@"; do
  echo "== $(basename "$t")"
  if ! (cd "$(dirname "$0")/.." && "$t"); then
    echo "FAILED: $t" >&2
    fail=1
  fi
done
exit $fail
