#!/usr/bin/env bash
# xtts-melcache --update under faults (docs/reliability.md, "Updates under faults"):
# 1. two updates at once: the second, started while the first holds its locks (the first is
#    frozen with SIGSTOP once its update directory exists), exits 2 at once naming the lock;
#    the first, resumed, ends with the digest of a fresh build of its stream;
# 2. an update while a reader holds the cache open (the Python package, and the tests' pure-Python
#    oracle, under ulimit -n 24 so that shards are closed and opened again): every
#    record read after the swap is the one read before it (a shard still open), or the
#    reader says the cache was replaced; never another record's data under an id, never
#    "damaged";
# 3. an update over a cache whose source audio vanished (some files deleted, the same
#    stream): the records whose audio is gone are rejected as a fresh build rejects them
#    (exit 3), and the result is a fresh build's of the same stream over the same files;
# 4. disk full in the middle of an update (root: a tmpfs with room for the old cache and
#    part of the new one): exit 2 with one line, the old cache untouched (same digest,
#    verifies), and after the room grows the same command finishes with a fresh build's
#    digest.
set -euo pipefail
source "$(dirname "$0")/faults_lib.bash"
export PYTHONPATH="$HERE/python:$HERE/python/tests"   # xtts_oracle: the pure-Python reader

demo_tokens
repeat_tokens "$T/tokens.tsv" "$T/v1.tsv" 6
# v2: every 5th text edited, every 9th record dropped
awk -F'\t' 'BEGIN{OFS="\t"} /^#/ {print; next} {n++} n % 9 == 0 {next}
  n % 5 == 0 {sub(/ [0-9]+$/, "", $5); $6 = $6 " edited"} {print}' "$T/v1.tsv" > "$T/v2.tsv"
expect_rc 3 "$BIN/xtts-melcache" --out "$T/fresh2" -j 2 -q "$T/v2.tsv"
d2=$(digest "$T/fresh2"); [ -n "$d2" ] || die "the fresh build of v2 does not verify"
# (small shards: many, more than a reader under ulimit -n 24 keeps open, so section 2's readers
# close and open shards again after the swap)
expect_rc 3 "$BIN/xtts-melcache" --out "$T/c1" -j 2 -q --commit-every 2 --shard-size 128K "$T/v1.tsv"
[ "$(ls -d "$T/c1"/shard-* | wc -l)" -ge 30 ] || die "want at least 30 shards in the v1 cache"
d1=$(digest "$T/c1"); [ -n "$d1" ] && [ "$d1" != "$d2" ] || die "the v1 build: digest '$d1'"

# ---- 1. two updates at once ---------------------------------------------------------------------
cp -a "$T/c1" "$T/c"
caught=0
for attempt in 1 2 3 4 5; do
  "$BIN/xtts-melcache" --out "$T/c" -j 1 -q --commit-every 1 --update "$T/v2.tsv" > /dev/null 2>&1 &
  first=$!
  for _ in $(seq 20000); do [ -e "$T/c.update/.xtts-update" ] && break; kill -0 $first 2>/dev/null || break; done
  if kill -STOP $first 2>/dev/null && [ -e "$T/c.update/.xtts-update" ]; then caught=1; break; fi
  wait $first || true
  rm -rf "$T/c" "$T/c.update"; cp -a "$T/c1" "$T/c"
done
[ $caught -eq 1 ] || die "the first update was never caught while it ran"
expect_rc 2 timeout 60 "$BIN/xtts-melcache" --out "$T/c" -j 1 -q --update "$T/v2.tsv"
one_line_error "lock .xtts-lock is held by another process"
kill -CONT $first
rc=0; wait $first || rc=$?
[ $rc -eq 3 ] || die "the first update, resumed: exit $rc"
[ "$(digest "$T/c")" = "$d2" ] || die "two updates at once: the first's result is not a fresh build's"
[ ! -e "$T/c.update" ] || die "the update directory is left behind"
echo "1: a second update at once exits 2; the first ends with a fresh build's digest"

# ---- 2. an update while a reader holds the cache open ----------------------------------------
cat > "$T/hold.py" <<'PYEOF'
import hashlib, os, sys, time
from xtts_prep import CacheError; import xtts_oracle
path, backend, ready, go = sys.argv[1:5]
c = xtts_oracle.cache(path, backend)
def fp(i):
    r = c[i]
    return r["id"], hashlib.sha256(r["mel"].tobytes() + r["tokens"].tobytes()).hexdigest()
before = [fp(i) for i in range(len(c))]
open(ready, "w").close()
while not os.path.exists(go):
    time.sleep(0.05)
changed = same = 0
first = ""
for i in range(len(before)):
    try:
        now = fp(i)
    except CacheError as e:
        if "the cache was replaced while it was read" not in str(e):
            print(f"record {i}: {e}", file=sys.stderr)
            sys.exit(1)
        changed += 1
        first = first or str(e)
        continue
    if now != before[i]:
        print(f"record {i}: {before[i][0]} read as {now[0]} with other data after the update", file=sys.stderr)
        sys.exit(1)
    same += 1
print(f"{backend}: {same} records as before, {changed} refused" + (f" ({first})" if first else ""))
PYEOF
for backend in c python; do
  rm -rf "$T/c" "$T/ready" "$T/go"; cp -a "$T/c1" "$T/c"
  (ulimit -n 24; exec "$PY" "$T/hold.py" "$T/c" $backend "$T/ready" "$T/go" > "$T/hold.out" 2> "$T/hold.err") &
  reader=$!
  for _ in $(seq 600); do [ -e "$T/ready" ] && break; kill -0 $reader 2>/dev/null || break; sleep 0.1; done
  [ -e "$T/ready" ] || { cat "$T/hold.err"; die "$backend reader did not start"; }
  expect_rc 3 "$BIN/xtts-melcache" --out "$T/c" -j 2 -q --update "$T/v2.tsv"
  touch "$T/go"
  rc=0; wait $reader || rc=$?
  [ $rc -eq 0 ] || { cat "$T/hold.err"; die "$backend reader across an update: exit $rc"; }
  [ "$(digest "$T/c")" = "$d2" ] || die "the update under a $backend reader: not a fresh build's digest"
  echo "2: $(cat "$T/hold.out")"
done

# ---- 3. an update over a cache whose source audio vanished -----------------------------------
cp -r "$T/data" "$T/data3"
sed "s|$T/data/|$T/data3/|g" "$T/v1.tsv" > "$T/w1.tsv"
expect_rc 3 "$BIN/xtts-melcache" --out "$T/c3" -j 2 -q "$T/w1.tsv"
gone=$(ls "$T/data3/wavs" | sed -n '2p;7p;11p')
for f in $gone; do rm "$T/data3/wavs/$f"; done
expect_rc 3 "$BIN/xtts-melcache" --out "$T/fresh3" -j 2 -q "$T/w1.tsv"
d3=$(digest "$T/fresh3"); [ -n "$d3" ] || die "the fresh build without the vanished files does not verify"
expect_rc 3 "$BIN/xtts-melcache" --out "$T/c3" -j 2 --update "$T/w1.tsv"
for f in $gone; do grep -q "${f%.*}" "$T/err.txt" || { cat "$T/err.txt"; die "the vanished $f is not named"; }; done
[ "$(digest "$T/c3")" = "$d3" ] || die "an update over vanished audio is not a fresh build's"
echo "3: vanished audio rejected as a fresh build rejects it; same digest"

# ---- 4. disk full in the middle of an update -------------------------------------------------
if [ "$(id -u)" -ne 0 ]; then echo "skip: not root (disk-full case not run)"; echo ok; exit 0; fi
mnt="$T/mnt"; mkdir -p "$mnt"
kb=$(du -sk "$T/c1" | cut -f1)
# room for the old cache and a third of a compacting update's new one
if ! mount -t tmpfs -o size=$(( kb + kb / 3 ))k tmpfs "$mnt" 2>/dev/null; then
  echo "skip: cannot mount a tmpfs (disk-full case not run)"; echo ok; exit 0
fi
trap 'umount -l "$mnt" 2>/dev/null || true' EXIT
cp -a "$T/c1" "$mnt/c"
expect_rc 2 "$BIN/xtts-melcache" --out "$mnt/c" -j 2 -q --compact --update "$T/v2.tsv"
one_line_error "No space left on device|disk full"
[ "$(digest "$mnt/c")" = "$d1" ] || die "a failed update changed the old cache"
mount -o remount,size=$(( kb * 3 + 8192 ))k "$mnt"
expect_rc 3 "$BIN/xtts-melcache" --out "$mnt/c" -j 2 -q --compact --update "$T/v2.tsv"
[ "$(digest "$mnt/c")" = "$d2" ] || die "the update re-run after a full disk: not a fresh build's digest"
[ ! -e "$mnt/c.update" ] || die "the update directory is left behind after the re-run"
umount "$mnt"; trap - EXIT
echo "4: disk full mid-update: exit 2, the old cache whole; the re-run finishes it"
echo ok
