#!/usr/bin/env bash
# e2e: long
# Fault injection: kill -9 of xtts-melcache --update at random moments (while the update is
# built beside the cache, around the exchange, while the old cache is removed), in chains
# of kills then a re-run left to finish. After every kill the cache verifies and is either
# the old one or the new one, whole (digest of the old stream's build or of the new's);
# every chain ends with the digest of a fresh build of the new stream and no update
# directory left; a last chain kills an update that shares the old shards (few edits: long
# runs). Kill moments come from a seed printed in the log (FAULTS_SEED=N).
set -euo pipefail
source "$(dirname "$0")/faults_lib.bash"

seed=${FAULTS_SEED:-$(( $(date +%s) % 100000 ))}
echo "seed $seed"
RANDOM=$seed

demo_tokens
repeat_tokens "$T/tokens.tsv" "$T/v1.tsv" 6
# v2: every 7th record's text edited, every 11th dropped
awk -F'\t' 'BEGIN{OFS="\t"} /^#/ {print; next} {n++} n % 11 == 0 {next}
  {if (n % 7 == 0) $6 = $6 " edited"; print}' "$T/v1.tsv" > "$T/v2.tsv"

expect_rc 3 "$BIN/xtts-melcache" --out "$T/ref1" -j 2 -q "$T/v1.tsv"
d1=$(digest "$T/ref1")
expect_rc 3 "$BIN/xtts-melcache" --out "$T/ref2" -j 2 -q "$T/v2.tsv"
d2=$(digest "$T/ref2"); [ -n "$d1" ] && [ -n "$d2" ] && [ "$d1" != "$d2" ] || die "reference builds"
# an uninterrupted update's wall time (ms), as measured here: kills land within it
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
cp -r "$T/ref1" "$T/u"
t0=$(now_ms)
expect_rc 3 "$BIN/xtts-melcache" --out "$T/u" -j 1 -q --update --commit-every 1 "$T/v2.tsv"
span=$(( $(now_ms) - t0 + 20 ))
[ "$(digest "$T/u")" = "$d2" ] || die "uninterrupted update"
sleep_ms() { sleep "$(printf '%d.%03d' $(( $1 / 1000 )) $(( $1 % 1000 )))"; }

# chain KILLS ARGS...: a copy of the v1 cache updated to $V2 (default v2) with KILLS kills,
# then a re-run; the new stream's digest is $D2
V2=$T/v2.tsv
chain() {
  local kills=$1; shift
  rm -rf "$T/c" "$T/c.update"; cp -r "$T/ref1" "$T/c"
  local k at rc d landed=""
  for k in $(seq 1 "$kills"); do
    at=$(( RANDOM % span ))
    "$BIN/xtts-melcache" --out "$T/c" -q --update "$@" "$V2" 2>"$T/killed.err" & local pid=$!
    sleep_ms "$at"
    if kill -9 "$pid" 2>/dev/null; then landed="$landed ${at}ms"; else landed="$landed (${at}ms: done)"; fi
    rc=0; wait "$pid" 2>/dev/null || rc=$?
    [ $rc -eq 137 ] || [ $rc -eq 3 ] || { cat "$T/killed.err"; die "update killed at ${at}ms: exit $rc"; }
    d=$(digest "$T/c")
    [ "$d" = "$d1" ] || [ "$d" = "$d2" ] || die "after a kill at ${at}ms the cache is neither the old nor the new one ('$d')"
  done
  rc=0; "$BIN/xtts-melcache" --out "$T/c" -q --update "$@" "$V2" 2>"$T/rerun.err" || rc=$?
  [ $rc -eq 3 ] || { cat "$T/rerun.err"; die "re-run after kills at$landed: exit $rc"; }
  [ "$(digest "$T/c")" = "$d2" ] || die "digest after kills at$landed ($*)"
  [ ! -e "$T/c.update" ] || die "update directory left after kills at$landed"
  echo "ok: --update $* killed at$landed"
}

chain 4 -j 1 --commit-every 1
chain 4 -j 2 --commit-every 3
chain 3 -j 2 --commit-every 2 --shard-size 256K

# an update that shares the old shards from its start (every 40th text edited: long runs)
awk -F'\t' 'BEGIN{OFS="\t"} /^#/ {print; next} {n++} {if (n % 40 == 0) $6 = $6 " edited"; print}' "$T/v1.tsv" > "$T/v3.tsv"
expect_rc 3 "$BIN/xtts-melcache" --out "$T/ref3" -j 2 -q "$T/v3.tsv"
d2=$(digest "$T/ref3"); V2=$T/v3.tsv
rm -rf "$T/u" "$T/u.update"; cp -r "$T/ref1" "$T/u"
expect_rc 3 "$BIN/xtts-melcache" --out "$T/u" -j 1 -q --update --commit-every 1 "$V2"
grep -q "kept in the old cache's shards" "$T/err.txt" || { cat "$T/err.txt"; die "the sparse update did not share"; }
chain 4 -j 1 --commit-every 1
