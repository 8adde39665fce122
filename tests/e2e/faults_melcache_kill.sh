#!/usr/bin/env bash
# e2e: long
# Fault injection: kill -9 of xtts-melcache at random moments spread over whole builds,
# in chains (kill, re-run killed again, ... then a re-run left to finish), with commits
# after every 1, 3 and 16 inputs, -j 1 and -j 2, and for a part build joined by the last
# part. Every chain must end with exit 3 (the demo's broken entries) and the digest of
# an uninterrupted build; no re-run may fail. Kill moments come from a seed printed in
# the log (FAULTS_SEED=N to replay); the assertions do not depend on where kills land.
set -euo pipefail
source "$(dirname "$0")/faults_lib.bash"

seed=${FAULTS_SEED:-$(( $(date +%s) % 100000 ))}
echo "seed $seed"
RANDOM=$seed

demo_tokens
repeat_tokens "$T/tokens.tsv" "$T/many.tsv" 8
n=$(grep -vc '^#' "$T/many.tsv")

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
t0=$(now_ms)
expect_rc 3 "$BIN/xtts-melcache" --out "$T/ref" -j 2 -q "$T/many.tsv"
span=$(( $(now_ms) - t0 + 50 ))   # a whole build's wall time (ms), as measured here
d_ref=$(digest "$T/ref"); [ -n "$d_ref" ] || die "reference build does not verify"
echo "$n records, uninterrupted build $span ms, digest $d_ref"

sleep_ms() { sleep "$(printf '%d.%03d' $(( $1 / 1000 )) $(( $1 % 1000 )))"; }

# chain DIR EXPECTED_DIGEST KILLS SCALE MELCACHE-ARGS...: KILLS builds killed at random
# moments, then one re-run that must finish. Kill k lands within the first
# (KILLS-k+1)/(KILLS+1) of SCALE whole-build spans, roughly what is left of the build.
chain() {
  local dir=$1 want=$2 kills=$3 scale=$4; shift 4
  rm -rf "$dir"
  local k at rc landed=""
  for k in $(seq 1 "$kills"); do
    at=$(( RANDOM % (span * scale * (kills - k + 1) / (kills + 1)) ))
    "$BIN/xtts-melcache" --out "$dir" -q "$@" 2>"$T/killed.err" & local pid=$!
    sleep_ms "$at"
    if kill -9 "$pid" 2>/dev/null; then landed="$landed ${at}ms"; else landed="$landed (${at}ms: done)"; fi
    rc=0; wait "$pid" 2>/dev/null || rc=$?
    # a finished build exits 3; a killed one 137; anything else is a failure of its own
    [ $rc -eq 137 ] || [ $rc -eq 3 ] || [ $rc -eq 0 ] || { cat "$T/killed.err"; die "$* killed at ${at}ms: exit $rc"; }
    # what a killed build leaves is not a cache yet: readers refuse it cleanly
    rc=0; "$BIN/xtts-cache-verify" "$dir" >/dev/null 2>&1 || rc=$?
    [ $rc -eq 2 ] || [ $rc -eq 0 ] || die "verify of a killed build: exit $rc"
  done
  rc=0; "$BIN/xtts-melcache" --out "$dir" -q "$@" 2>"$T/rerun.err" || rc=$?
  [ $rc -eq 3 ] || { cat "$T/rerun.err"; die "re-run after kills at$landed ($*): exit $rc"; }
  local d; d=$(digest "$dir")
  [ "$d" = "$want" ] || { "$BIN/xtts-cache-verify" "$dir" | tail -n 5; die "digest after kills at$landed ($*): '$d', want '$want'"; }
  echo "ok: $* killed at$landed"
}

chain "$T/k1" "$d_ref" 4 2 -j 1 --commit-every 1 "$T/many.tsv"
chain "$T/k2" "$d_ref" 4 1 -j 2 --commit-every 3 "$T/many.tsv"
chain "$T/k3" "$d_ref" 3 1 -j 2 --commit-every 16 "$T/many.tsv"
# small shards: kills also land around shard rotations (a new shard without a commit)
expect_rc 3 "$BIN/xtts-melcache" --out "$T/ref_small" -j 2 -q --shard-size 256K "$T/many.tsv"
d_small=$(digest "$T/ref_small")
[ "$(ls -d "$T"/ref_small/shard-* | wc -l)" -gt 2 ] || die "--shard-size 256K did not give several shards"
chain "$T/k4" "$d_small" 4 1 -j 2 --commit-every 2 --shard-size 256K "$T/many.tsv"

# a part build: part 1 is killed in chains, part 0 is whole; the last to finish merges
rm -rf "$T/pref"
expect_rc 3 "$BIN/xtts-melcache" --out "$T/pref" --part 0/2 -j 2 -q "$T/many.tsv"
expect_rc 3 "$BIN/xtts-melcache" --out "$T/pref" --part 1/2 -j 2 -q "$T/many.tsv"
d_parts=$(digest "$T/pref"); [ -n "$d_parts" ] || die "part build does not verify"
rm -rf "$T/kp"
expect_rc 3 "$BIN/xtts-melcache" --out "$T/kp" --part 0/2 -j 2 -q "$T/many.tsv"
cp -r "$T/kp" "$T/kp0"
chain_keep() { # like chain, without removing DIR first
  rm -rf "$T/kp"; cp -r "$T/kp0" "$T/kp"
  local at pid
  for k in 1 2 3; do
    at=$(( RANDOM % (span / 2) ))
    "$BIN/xtts-melcache" --out "$T/kp" -q --part 1/2 -j 2 --commit-every 2 "$T/many.tsv" 2>/dev/null & pid=$!
    sleep_ms "$at"; kill -9 "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true
  done
}
chain_keep
rc=0; "$BIN/xtts-melcache" --out "$T/kp" -q --part 1/2 -j 2 --commit-every 2 "$T/many.tsv" 2>"$T/rerun.err" || rc=$?
[ $rc -eq 3 ] || { cat "$T/rerun.err"; die "part re-run after kills: exit $rc"; }
if [ ! -f "$T/kp/manifest.json" ]; then
  # killed between the part's manifest and the merge: the merge is separate and idempotent
  expect_rc 0 "$BIN/xtts-cache-merge" "$T/kp"
fi
[ "$(digest "$T/kp")" = "$d_parts" ] || die "part build after kills: digest differs"
echo "ok: part build killed 3 times, merged digest $d_parts"

# xtts-cache-merge killed at random moments (it writes only manifest.json, atomically):
# a second merge always completes with the same digest
rm -f "$T/kp/manifest.json"; cp -r "$T/kp" "$T/kp_base"
for k in 1 2 3 4 5; do
  rm -rf "$T/kp"; cp -r "$T/kp_base" "$T/kp"
  at=$(( RANDOM % 15 ))
  "$BIN/xtts-cache-merge" "$T/kp" >/dev/null 2>&1 & pid=$!
  sleep_ms "$at"; kill -9 "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true
  expect_rc 0 "$BIN/xtts-cache-merge" "$T/kp"
  [ "$(digest "$T/kp")" = "$d_parts" ] || die "merge killed at ${at}ms: digest differs"
  ! grep -q '\.tmp\.' <<< "$(ls "$T/kp")" || die "merge killed at ${at}ms: a temporary file is left: $(ls "$T/kp")"
done
# a temporary manifest of a killed build is removed by the next build of the directory
touch "$T/k1/manifest.json.tmp.999999"
expect_rc 3 "$BIN/xtts-melcache" --out "$T/k1" -q -j 2 "$T/many.tsv"
[ ! -e "$T/k1/manifest.json.tmp.999999" ] || die "a build left a stale temporary manifest"
echo "ok: xtts-cache-merge killed 5 times, merged again"
