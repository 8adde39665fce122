#!/usr/bin/env bash
# xtts-melcache on the demo dataset: rejections of the broken entries, determinism across
# -j, resume after kill -9, configuration refusal and --force, the directory lock, and a
# sharded build joined by the last part.
set -euo pipefail
BIN="$BUILD/bin"; T="$TMPDIR_TEST"
here="$(cd "$(dirname "$0")/../.." && pwd)"
bash "$here/scripts/make-demo-dataset.sh" "$T/data" >/dev/null 2>&1
rc=0; "$BIN/xtts-tokenize" --lang auto "$T/data/metadata.csv" > "$T/tokens.tsv" 2>/dev/null || rc=$?
[ $rc -eq 0 ] || [ $rc -eq 3 ]
n_in=$(grep -vc '^#' "$T/tokens.tsv")

digest() { "$BIN/xtts-cache-verify" "$1" | sed -n 's/^digest: //p'; }

# -j1 build: broken audio entries are rejected with exit 3 and listed
rc=0; "$BIN/xtts-melcache" --out "$T/c1" -j 1 --rejects "$T/rej1.tsv" "$T/tokens.tsv" 2>"$T/err1" || rc=$?
[ $rc -eq 3 ] || { echo "expected exit 3, got $rc"; cat "$T/err1"; exit 1; }
grep -q "rejected" "$T/err1"
[ -s "$T/rej1.tsv" ]
"$BIN/xtts-cache-verify" "$T/c1" > "$T/v1"
d1=$(digest "$T/c1"); [ -n "$d1" ]
# --strict turns rejections into exit 2
rc=0; "$BIN/xtts-melcache" --out "$T/cs" -j 2 --strict -q "$T/tokens.tsv" 2>/dev/null || rc=$?
[ $rc -eq 2 ]

# -j2 gives the same content
rc=0; "$BIN/xtts-melcache" --out "$T/c2" -j 2 -q "$T/tokens.tsv" || rc=$?; [ $rc -eq 3 ]
d2=$(digest "$T/c2"); [ "$d1" = "$d2" ] || { echo "digest -j1 $d1 != -j2 $d2"; exit 1; }

# re-running a finished build stores nothing new and keeps the digest
rc=0; "$BIN/xtts-melcache" --out "$T/c2" -j 2 -q "$T/tokens.tsv" || rc=$?; [ $rc -eq 3 ]
[ "$(digest "$T/c2")" = "$d1" ]

# kill -9 at several moments, then a re-run completes with the same digest
for delay in 0.05 0.2 0.5; do
  rm -rf "$T/ck"
  "$BIN/xtts-melcache" --out "$T/ck" -j 2 -q --commit-every 3 "$T/tokens.tsv" 2>/dev/null &
  pid=$!; sleep "$delay"; kill -9 $pid 2>/dev/null || true; wait $pid 2>/dev/null || true
  rc=0; "$BIN/xtts-melcache" --out "$T/ck" -j 2 -q --commit-every 3 "$T/tokens.tsv" 2>/dev/null || rc=$?
  [ $rc -eq 3 ] || { echo "re-run after kill at $delay s: exit $rc"; exit 1; }
  [ "$(digest "$T/ck")" = "$d1" ] || { echo "digest differs after kill at $delay s"; exit 1; }
done

# another configuration is refused, --force replaces
rc=0; "$BIN/xtts-melcache" --out "$T/c1" --dtype fp32 -q "$T/tokens.tsv" 2>"$T/err3" || rc=$?
[ $rc -eq 2 ] || { echo "expected refusal, got $rc"; exit 1; }
grep -qi "config" "$T/err3"
rc=0; "$BIN/xtts-melcache" --out "$T/c1" --dtype fp32 --force -q "$T/tokens.tsv" || rc=$?; [ $rc -eq 3 ]
"$BIN/xtts-cache-verify" "$T/c1" >/dev/null

# a sharded build: 3 parts, joined by the last one
for k in 0 1 2; do
  rc=0; "$BIN/xtts-melcache" --out "$T/cp" --part $k/3 -j 1 -q "$T/tokens.tsv" || rc=$?; [ $rc -eq 3 ] || [ $rc -eq 0 ]
done
[ -f "$T/cp/manifest.json" ]
"$BIN/xtts-cache-verify" "$T/cp" >/dev/null
n1=$(/usr/bin/python3 -c "import json,sys;print(json.load(open(sys.argv[1]))['records'])" "$T/c2/manifest.json")
n3=$(/usr/bin/python3 -c "import json,sys;print(json.load(open(sys.argv[1]))['records'])" "$T/cp/manifest.json")
[ "$n1" = "$n3" ] || { echo "parts stored $n3 records, whole build $n1"; exit 1; }
echo "ok: $n_in inputs, $n1 stored, digest $d1"

# device selection without a GPU: auto falls back with one line, cuda refuses with exit 2
"$BIN/xtts-melcache" --out "$T/cd" --device auto -q "$T/tokens.tsv" 2>"$T/dev.err" || true
[ "$(grep -c 'device: cpu' "$T/dev.err")" = 1 ] || { cat "$T/dev.err"; exit 1; }
rc=0; "$BIN/xtts-melcache" --out "$T/cc" --device cuda -q "$T/tokens.tsv" 2>"$T/cuda.err" || rc=$?
[ $rc -eq 2 ] && grep -q "no usable CUDA device" "$T/cuda.err"
# usage errors are exit 1
rc=0; "$BIN/xtts-melcache" --out "$T/cu" --preset nope "$T/tokens.tsv" 2>/dev/null || rc=$?; [ $rc -eq 1 ]
rc=0; "$BIN/xtts-melcache" "$T/tokens.tsv" 2>/dev/null || rc=$?; [ $rc -eq 1 ]
# two processes on one --out: the second refuses while the first holds the lock
rm -rf "$T/cl"
"$BIN/xtts-melcache" --out "$T/cl" -j 1 -q "$T/tokens.tsv" 2>/dev/null & pid=$!
sleep 0.3
rc=0; "$BIN/xtts-melcache" --out "$T/cl" -j 1 -q "$T/tokens.tsv" 2>"$T/lock.err" || rc=$?
wait $pid || true
if [ $rc -eq 2 ]; then grep -qiE "lock|another|busy|in use" "$T/lock.err"; fi
echo "ok: device, usage and lock checks"
