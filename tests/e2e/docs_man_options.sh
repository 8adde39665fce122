#!/usr/bin/env bash
# Every long option a program's --help lists is described in its man page (docs/man/*.1);
# every program takes -h, --help, -V and --version (exit 0, the usage text or
# "PROGRAM VERSION" on stdout), and its man page names all four.
set -euo pipefail
: "${BUILD:?}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
version=$(cat "$root/VERSION")
fail=0
for p in xtts-tokenize xtts-melcache xtts-cache-verify xtts-cache-merge xtts-cache-inspect xtts-cache-report xtts-cache-codes xtts-train xtts-segment; do
  page="$root/docs/man/$p.1"
  [ -f "$page" ] || { echo "FAIL: $page missing"; fail=1; continue; }
  text=$(man -l "$page" 2>/dev/null || sed 's/\\-/-/g' "$page")
  for o in $("$BUILD/bin/$p" --help | grep -o -- '--[a-z][a-z0-9-]*' | sort -u); do
    grep -q -- "$o\b" <<<"$text" || { echo "FAIL: $p: $o is in --help but not in $page"; fail=1; }
  done
  for o in -h --help; do
    out=$("$BUILD/bin/$p" $o </dev/null 2>&1) || { echo "FAIL: $p $o exits $?"; fail=1; continue; }
    grep -qi "usage: $p" <<<"$out" || { echo "FAIL: $p $o: no usage text"; fail=1; }
  done
  for o in -V --version; do
    out=$("$BUILD/bin/$p" $o </dev/null 2>&1) || { echo "FAIL: $p $o exits $?"; fail=1; continue; }
    [ "$out" = "$p $version" ] || { echo "FAIL: $p $o printed '$out', not '$p $version'"; fail=1; }
  done
  for o in -h -V --help --version; do
    grep -q -- "$o\b" <<<"$text" || { echo "FAIL: $page does not name $o"; fail=1; }
  done
done
exit $fail
