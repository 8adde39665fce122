#!/usr/bin/env bash
# Reading a cache at a build's first instant (docs/reliability.md, round five): a build makes a
# new directory locked under a temporary name beside it (DIR.xtts-new.PID) and renames it into
# place, so for an instant DIR does not exist while a build is making it. xtts-cache-verify,
# xtts-cache-inspect and xtts-train --loader-only then say "a build is running" (exit 2), not
# "DIR/manifest.json: cannot open: No such file or directory"; a temporary directory of a
# process that is gone is not a build. Then builds raced by reads: each read says a build is
# running, or reads the finished cache, never "cannot open".
set -euo pipefail
source "$(dirname "$0")/faults_lib.bash"

sleep 60 & holder=$!
trap 'kill $holder 2>/dev/null || true' EXIT
mkdir "$T/c.xtts-new.$holder"
for cmd in "$BIN/xtts-cache-verify $T/c" "$BIN/xtts-cache-inspect $T/c" "$BIN/xtts-train --cache $T/c --loader-only --steps 1"; do
  expect_rc 2 $cmd
  grep -q "$T/c: a build is running in this directory (pid $holder is making it)" "$T/out.txt" "$T/err.txt" \
    || { cat "$T/out.txt" "$T/err.txt"; die "$cmd: not 'a build is running'"; }
done
kill $holder; wait $holder 2>/dev/null || true
expect_rc 2 "$BIN/xtts-cache-verify" "$T/c"
grep -q "a build is running" "$T/out.txt" "$T/err.txt" && die "a dead process's temporary directory taken for a build"
rmdir "$T/c.xtts-new.$holder"
echo "1: DIR being made as DIR.xtts-new.PID: a build is running; the same of a dead PID: not"

demo_tokens
head -n 12 "$T/tokens.tsv" > "$T/small.tsv"
for i in $(seq 1 12); do
  rm -rf "$T/r"
  "$BIN/xtts-melcache" --out "$T/r" -q "$T/small.tsv" 2>/dev/null & pid=$!
  # the read fires as soon as anything of the build appears
  while [ ! -e "$T/r" ] && ! compgen -G "$T/r.xtts-new.*" > /dev/null && kill -0 $pid 2>/dev/null; do :; done
  rc=0; "$BIN/xtts-cache-verify" "$T/r" > "$T/out.txt" 2> "$T/err.txt" || rc=$?
  wait $pid || [ $? -eq 3 ]
  if [ $rc -ne 0 ]; then
    grep -q "a build is running" "$T/out.txt" "$T/err.txt" || { cat "$T/out.txt" "$T/err.txt"; die "read $i at a build's start: exit $rc"; }
  fi
done
echo "2: 12 reads raced with builds: a build is running, or the finished cache"
echo ok
