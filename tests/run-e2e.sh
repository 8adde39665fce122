#!/usr/bin/env bash
# Run the end-to-end tests in tests/e2e/ (each a bash script that exits 0 on success), each in
# a temporary folder of its own, E2E_JOBS at a time (default: the number of CPUs).
#   run-e2e.sh [short|long|all] [NAME...]
# short (make test): every test but those marked long; long (make test-long): those marked
# long — the kill loops and the other tests of several minutes, a line "# e2e: long" among a
# script's first ten lines; all: both. NAMEs (e.g. cache_merge) pick tests by name.
# A line per test as it ends, with its time; the log's tail of each failure; a summary.
# Environment: BUILD (absolute build dir), PYTHON, E2E_JOBS.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
which=${1:-short}
[ $# -gt 0 ] && shift
jobs=${E2E_JOBS:-$(nproc 2>/dev/null || echo 2)}
# no bytecode written into the source tree by the tests that import the package from it
export PYTHONDONTWRITEBYTECODE=1

is_long() { head -n 10 "$1" | grep -q '^# e2e: long$'; }
tests=()
for t in "$here"/e2e/*.sh; do
  [ -e "$t" ] || continue
  name=$(basename "$t" .sh)
  if [ $# -gt 0 ]; then
    for want in "$@"; do [ "$want" = "$name" ] && tests+=("$t"); done
    continue
  fi
  case $which in
    short) is_long "$t" && continue ;;
    long) is_long "$t" || continue ;;
    all) ;;
    *) echo "run-e2e.sh: short, long or all, not '$which'" >&2; exit 1 ;;
  esac
  tests+=("$t")
done

res=$(mktemp -d)
trap 'rm -rf "$res"' EXIT
run_one() { # SCRIPT: its exit status and seconds in $res/NAME.rc, its log in $res/NAME.log
  local t=$1 name tmp start rc=0
  name=$(basename "$t" .sh)
  tmp=$(mktemp -d)
  start=$(date +%s)
  TMPDIR_TEST="$tmp" bash "$t" > "$res/$name.log" 2>&1 || rc=$?
  rm -rf "$tmp"
  echo "$rc $(( $(date +%s) - start ))" > "$res/$name.rc.tmp"
  mv "$res/$name.rc.tmp" "$res/$name.rc"
}

fail=0; shown=0; t0=$(date +%s)
report() { # print the tests that ended since the last call
  local f name rc secs
  for f in "$res"/*.rc; do
    [ -e "$f" ] || continue
    name=$(basename "$f" .rc)
    read -r rc secs < "$f"
    if [ "$rc" -eq 0 ]; then
      echo "[  PASSED  ] e2e/$name (${secs} s)"
    else
      echo "[  FAILED  ] e2e/$name (exit $rc, ${secs} s)"; tail -n 40 "$res/$name.log" | sed 's/^/    /'
      fail=$((fail + 1))
    fi
    mv "$f" "$f.done"; shown=$((shown + 1))
  done
}
running=0
for t in "${tests[@]}"; do
  while [ $running -ge "$jobs" ]; do wait -n; running=$((running - 1)); report; done
  run_one "$t" &
  running=$((running + 1))
done
wait
report
echo "e2e ($which): ${#tests[@]} run, $fail failed, $(( $(date +%s) - t0 )) s with $jobs at a time"
[ $fail -eq 0 ] && [ $shown -eq ${#tests[@]} ]
