#!/usr/bin/env bash
# Fault injection: two writers on one cache directory. A first xtts-melcache is caught
# holding the directory lock and frozen there with SIGSTOP (deterministic: it cannot
# finish while we look). Meanwhile a second whole build, a --force build, a part build and
# xtts-cache-merge must each refuse with exit 2 and one line naming the lock and the
# holder's pid, and xtts-cache-verify names the build in progress. Resumed
# with SIGCONT, the first build finishes with the content of an undisturbed build.
set -euo pipefail
source "$(dirname "$0")/faults_lib.bash"

demo_tokens
repeat_tokens "$T/tokens.tsv" "$T/many.tsv" 6

pid=
cleanup() { if [ -n "$pid" ]; then kill -CONT "$pid" 2>/dev/null || true; kill -9 "$pid" 2>/dev/null || true; fi; }
trap cleanup EXIT

# start a build and freeze it once it holds the lock (it writes its pid there after
# flock); a build that ended before it was caught is tried again (bounded)
caught=0
for attempt in 1 2 3 4 5; do
  rm -rf "$T/held"
  "$BIN/xtts-melcache" --out "$T/held" -j 1 --commit-every 8 -q "$T/many.tsv" 2>"$T/first.err" &
  pid=$!
  for _ in $(seq 1 1000); do
    if [ "$(tr -d '\n' 2>/dev/null < "$T/held/.xtts-lock")" = "$pid" ]; then
      kill -STOP "$pid" 2>/dev/null && caught=1
      break
    fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.01
  done
  [ $caught -eq 1 ] && break
  wait "$pid" 2>/dev/null || true; pid=
done
[ $caught -eq 1 ] || die "never caught a build holding its lock"

second() { # pattern-of-what, command...
  local what=$1; shift
  expect_rc 2 "$@"
  one_line_error "$what: lock \.xtts-lock is held by another process \(pid $pid\)"
}
second "another build or merge is running in this directory" \
  "$BIN/xtts-melcache" --out "$T/held" -j 1 -q "$T/tokens.tsv"
second "another build or merge is running in this directory" \
  "$BIN/xtts-melcache" --out "$T/held" -j 1 -q --force --dtype fp32 "$T/tokens.tsv"
second "a whole build or a merge is running in this directory" \
  "$BIN/xtts-melcache" --out "$T/held" --part 0/2 -j 1 -q "$T/tokens.tsv"
second "or another merge is running in this directory" "$BIN/xtts-cache-merge" "$T/held"
# a reader of the directory being built: exit 2, naming the build and its pid
expect_rc 2 "$BIN/xtts-cache-verify" "$T/held"
grep -q "a build is running in this directory (lock .xtts-lock held by pid $pid)" "$T/out.txt" "$T/err.txt" ||
  die "verify does not name the build in progress"
kill -0 "$pid" || die "the first build is gone"

kill -CONT "$pid"
rc=0; wait "$pid" || rc=$?
p=$pid; pid=
[ $rc -eq 3 ] || { cat "$T/first.err"; die "first build: exit $rc, want 3 (the broken demo entries)"; }
expect_rc 3 "$BIN/xtts-melcache" --out "$T/plain" -j 2 -q "$T/many.tsv"
d_plain=$(digest "$T/plain"); d_held=$(digest "$T/held")
[ -n "$d_plain" ] && [ "$d_plain" = "$d_held" ] || die "held build digest '$d_held' != undisturbed '$d_plain'"
# the lock is released: a re-run on the directory resumes (nothing left to do)
expect_rc 3 "$BIN/xtts-melcache" --out "$T/held" -j 1 -q "$T/many.tsv"
[ "$(digest "$T/held")" = "$d_plain" ] || die "digest changed on re-run"
echo "ok: a build holding the lock (pid $p) refused a build, a --force build, a part build and a merge"
