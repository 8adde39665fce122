#!/usr/bin/env bash
# Every long option a program's --help lists is described in its man page (docs/man/*.1).
set -euo pipefail
: "${BUILD:?}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
fail=0
for p in xtts-tokenize xtts-melcache xtts-cache-verify xtts-cache-merge xtts-cache-inspect xtts-train; do
  page="$root/docs/man/$p.1"
  [ -f "$page" ] || { echo "FAIL: $page missing"; fail=1; continue; }
  text=$(man -l "$page" 2>/dev/null || sed 's/\\-/-/g' "$page")
  for o in $("$BUILD/bin/$p" --help | grep -o -- '--[a-z][a-z0-9-]*' | sort -u); do
    grep -q -- "$o\b" <<<"$text" || { echo "FAIL: $p: $o is in --help but not in $page"; fail=1; }
  done
done
exit $fail
