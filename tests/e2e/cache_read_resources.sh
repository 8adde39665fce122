#!/usr/bin/env bash
# Readers and resources: every reader (xtts-cache-verify, xtts-cache-inspect, xtts-train and
# its loader, the Python reader with the C library and without) against
# 1. a descriptor limit (ulimit -n 24) and a cache of more shards than that: all read it whole,
#    with the digest of an unlimited run (shards are opened on demand from a bounded pool);
# 2. an address-space limit (ulimit -v 300M): a small cache reads (shards map the data file,
#    not the size a writer may grow it to);
# 3. a resource that cannot be had (a shard larger than the address-space limit; a data.mdb
#    the user may not read): exit 2 with the errno's words, never "damaged";
# 4. a manifest whose record count is forged to billions (the last shard's count raised to
#    match): each reader ends at once, exit 2, naming the shard (a count its data.mdb cannot
#    hold);
# 5. a manifest whose speakers table is emptied: verify exits 2 naming each record, the
#    readers refuse the record, naming it;
# 6. a build that has just taken its lock (no manifest, no shard yet), whole and in parts,
#    and one starting over a finished cache: every reader says a build is running, exit 2.
set -euo pipefail
source "$(dirname "$0")/faults_lib.bash"
export PYTHONPATH="$HERE/python:$HERE/python/tests"   # xtts_oracle: the pure-Python reader

demo_tokens
repeat_tokens "$T/tokens.tsv" "$T/t3.tsv" 3
# 64 KiB shards: about two records each, some 90 shards
expect_rc 3 "$BIN/xtts-melcache" --out "$T/many" --shard-size 64K -q "$T/t3.tsv"
n_shards=$(ls -d "$T/many"/shard-* | wc -l)
[ "$n_shards" -ge 80 ] || die "want at least 80 shards, got $n_shards"
d_ref=$(digest "$T/many"); [ -n "$d_ref" ] || die "the many-shard cache does not verify"

cat > "$T/pyread.py" <<'PYEOF'
import sys
import numpy as np
import xtts_oracle
backend = sys.argv[2]
c = xtts_oracle.cache(sys.argv[1], backend)
ids = [c.get(i)["id"] for i in range(len(c) - 1, -1, -1)]   # backwards: every shard reopened
assert len(set(ids)) == len(c), "ids"
assert len(c.lengths()) == len(c)
b = c.read_batch(np.arange(len(c))[::-1].copy())
assert (b["index"] == np.arange(len(c))[::-1]).all()
print(len(c), backend)
PYEOF

# ---- 1. ulimit -n 24, a cache of more shards than descriptors ------------------------------
lim() { (ulimit -n 24; "$@"); }
expect_rc 0 lim "$BIN/xtts-cache-verify" "$T/many"
grep -q "^digest: $d_ref" "$T/out.txt" || die "verify under ulimit -n 24: another digest"
grep -q "^result: OK" "$T/out.txt" || die "verify under ulimit -n 24: not OK"
expect_rc 0 lim "$BIN/xtts-cache-inspect" "$T/many"
grep -q "^unreadable" "$T/out.txt" && die "inspect under ulimit -n 24 finds unreadable records"
expect_rc 0 lim "$BIN/xtts-cache-inspect" --index 170 --npy "$T/r.npy" "$T/many"
expect_rc 0 lim "$BIN/xtts-train" --cache "$T/many" --steps 3 --batch-size 16 --loader-threads 3
expect_rc 0 lim "$BIN/xtts-train" --cache "$T/many" --loader-only --steps 20 --batch-size 16
for backend in c python; do
  expect_rc 0 lim "$PY" "$T/pyread.py" "$T/many" $backend
done
echo "1: ulimit -n 24, $n_shards shards: verify, inspect, train, loader, Python (C and pure) read it whole"

# ---- 2. ulimit -v 300M, a small cache --------------------------------------------------------
expect_rc 3 "$BIN/xtts-melcache" --out "$T/small" -q "$T/tokens.tsv"
d_small=$(digest "$T/small")
# AddressSanitizer reserves terabytes of shadow address space at start: a sanitizer build
# cannot run under ulimit -v at all, so parts 2 and 3's address-space cases skip there
if sanitizer_build; then
  echo "skip: sanitizer build (cannot start under ulimit -v): address-space cases not run"
else
vlim() { (ulimit -v 307200; "$@"); }
expect_rc 0 vlim "$BIN/xtts-cache-verify" "$T/small"
grep -q "^digest: $d_small" "$T/out.txt" || die "verify under ulimit -v: another digest"
expect_rc 0 vlim "$BIN/xtts-cache-inspect" "$T/small"
expect_rc 0 vlim "$BIN/xtts-train" --cache "$T/small" --steps 1 --batch-size 2 -j 1 --loader-threads 1
for backend in c python; do
  expect_rc 0 vlim "$PY" "$T/pyread.py" "$T/small" $backend
done
echo "2: ulimit -v 300M: verify, inspect, train, Python read a small cache"

# ---- 3. a resource that cannot be had: named, exit 2, never "damaged" ------------------------
cp -r "$T/small" "$T/big"
truncate -s 1G "$T/big/shard-00000/data.mdb"   # a sparse tail: the shard is sound, but large
for prog in verify inspect train; do
  case $prog in
    verify) cmd=("$BIN/xtts-cache-verify" "$T/big") ;;
    inspect) cmd=("$BIN/xtts-cache-inspect" "$T/big") ;;
    train) cmd=("$BIN/xtts-train" --cache "$T/big" --steps 1 --batch-size 2 -j 1 --loader-threads 1) ;;
  esac
  expect_rc 2 vlim "${cmd[@]}"
  grep -q "shard-00000: cannot open .*data.mdb: Cannot allocate memory" "$T/out.txt" "$T/err.txt" ||
    { cat "$T/out.txt" "$T/err.txt"; die "$prog: ENOMEM not named"; }
  grep -qi "damaged\|corrupt" "$T/out.txt" "$T/err.txt" && die "$prog: a resource error called damage"
done
expect_rc 2 vlim "$PY" -c 'import sys; from xtts_prep import CacheResourceError; import xtts_oracle
try:
    xtts_oracle.XttsCache(sys.argv[1])[0]
except CacheResourceError as e:
    print(e, file=sys.stderr); sys.exit(2)' "$T/big"
grep -q "Cannot allocate memory" "$T/err.txt" || die "Python: ENOMEM not named"
fi
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null && setpriv --reuid=nobody --regid=nogroup --clear-groups true 2>/dev/null; then
  nobody_tools
  cp -r "$T/small" "$T/noperm"; chmod -R a+rX "$T/noperm"; chmod 755 "$T"
  chmod 000 "$T/noperm/shard-00000/data.mdb"
  as_nobody="setpriv --reuid=nobody --regid=nogroup --clear-groups"
  expect_rc 2 $as_nobody "$NBIN/xtts-cache-verify" "$T/noperm"
  grep -q "cannot open .*shard-00000/data.mdb: Permission denied" "$T/out.txt" || die "verify: EACCES not named"
  grep -qi "damaged" "$T/out.txt" && die "verify: a permission error called damage"
  expect_rc 2 $as_nobody "$NBIN/xtts-cache-inspect" "$T/noperm"
  grep -q "Permission denied" "$T/err.txt" || die "inspect: EACCES not named"
  if [ "${NPY_OK:-0}" = 1 ]; then
    expect_rc 2 $as_nobody env PYTHONPATH="$NPYTHONPATH" "$PY" -c 'import sys; from xtts_prep import CacheResourceError; import xtts_oracle
try:
    xtts_oracle.XttsCache(sys.argv[1])[0]
except CacheResourceError as e:
    print(e, file=sys.stderr); sys.exit(2)' "$T/noperm"
    grep -q "Permission denied" "$T/err.txt" || die "Python: EACCES not named"
  fi
  # a shard directory that may not be searched: not a "missing" shard either
  chmod 644 "$T/noperm/shard-00000/data.mdb"; chmod 000 "$T/noperm/shard-00000"
  expect_rc 2 $as_nobody "$NBIN/xtts-cache-verify" "$T/noperm"
  grep -q "cannot open .*shard-00000/data.mdb: Permission denied" "$T/out.txt" || die "verify: EACCES on the directory not named"
  grep -qi "missing\|damaged" "$T/out.txt" && die "verify: a permission error called missing or damaged"
  chmod 755 "$T/noperm/shard-00000"
else
  echo "skip: cannot switch to nobody (permission case not run)"
fi
echo "3: ENOMEM (and EACCES) named as such, exit 2"

# ---- 4. a forged record count ------------------------------------------------------------------
cp -r "$T/many" "$T/forged"
"$PY" - "$T/forged/manifest.json" <<'PYEOF'
import json, sys
m = json.load(open(sys.argv[1]))
big = 4_000_000_000
m["shards"][-1]["records"] += big - m["records"]
m["records"] = big
json.dump(m, open(sys.argv[1], "w"))
PYEOF
last=$(basename "$(ls -d "$T/forged"/shard-* | tail -1)")
for prog in verify inspect train; do
  case $prog in
    verify) cmd=("$BIN/xtts-cache-verify" "$T/forged") ;;
    inspect) cmd=("$BIN/xtts-cache-inspect" "$T/forged") ;;
    train) cmd=("$BIN/xtts-train" --cache "$T/forged" --steps 1) ;;
  esac
  expect_rc 2 timeout 60 "${cmd[@]}"
  grep -q "$last: the manifest says [0-9]* records, data.mdb of [0-9]* bytes holds at most" "$T/out.txt" "$T/err.txt" ||
    { cat "$T/out.txt" "$T/err.txt"; die "$prog: forged count not named"; }
done
grep -q "^unreadable records: " "$T/out.txt" || true
expect_rc 2 timeout 60 "$PY" -c 'import sys; from xtts_prep import XttsCache, CacheError
try:
    XttsCache(sys.argv[1])
except CacheError as e:
    print(e, file=sys.stderr); sys.exit(2)' "$T/forged"
grep -q "$last: the manifest says" "$T/err.txt" || die "Python: forged count not named"
echo "4: a forged record count: every reader ends at once, exit 2"

# ---- 5. a speakers table emptied -----------------------------------------------------------------
cp -r "$T/small" "$T/nospk"
"$PY" - "$T/nospk/manifest.json" <<'PYEOF'
import json, sys
m = json.load(open(sys.argv[1]))
m["speakers"] = []
json.dump(m, open(sys.argv[1], "w"))
PYEOF
expect_rc 2 "$BIN/xtts-cache-verify" "$T/nospk"
grep -q "^fault: shard-00000: index 0: id 'en_001': speaker id 0 outside the manifest's 0 speakers" "$T/out.txt" ||
  die "verify: an empty speakers table accepted"
expect_rc 2 "$BIN/xtts-cache-inspect" --index 0 "$T/nospk"
one_line_error "index 0, id 'en_001': speaker id 0 outside the manifest's 0 speakers"
expect_rc 2 "$BIN/xtts-train" --cache "$T/nospk" --steps 1
grep -q "speaker id 0 outside the manifest's 0 speakers" "$T/err.txt" || die "train: an empty speakers table accepted"
for backend in c python; do
  expect_rc 2 "$PY" -c 'import sys, numpy as np; from xtts_prep import CacheError; import xtts_oracle
c = xtts_oracle.cache(sys.argv[1], sys.argv[2])
try:
    c.read_batch(np.arange(2))
except CacheError as e:
    print(e, file=sys.stderr); sys.exit(2)' "$T/nospk" $backend
  grep -q "speaker id 0 outside the manifest's 0 speakers" "$T/err.txt" || die "Python ($backend): accepted"
done
echo "5: an emptied speakers table: verify exit 2 naming the records, readers refuse them"

# ---- 6. a build that has just taken its lock -----------------------------------------------------
readers_say_building() { # DIR LOCKNAME
  local dir=$1 lock=$2
  for prog in verify inspect train python; do
    case $prog in
      verify) cmd=("$BIN/xtts-cache-verify" "$dir") ;;
      inspect) cmd=("$BIN/xtts-cache-inspect" "$dir") ;;
      train) cmd=("$BIN/xtts-train" --cache "$dir" --steps 1) ;;
      python) cmd=("$PY" -c 'import sys; from xtts_prep import XttsCache, CacheError
try:
    XttsCache(sys.argv[1])
except CacheError as e:
    print(e, file=sys.stderr); sys.exit(2)' "$dir") ;;
    esac
    expect_rc 2 "${cmd[@]}"
    grep -q "$dir: a build is running in this directory (lock $lock held by pid [0-9]*)" "$T/out.txt" "$T/err.txt" ||
      { cat "$T/out.txt" "$T/err.txt"; die "$prog: a build in progress not recognised ($lock)"; }
  done
}
# hold LOCK (exclusive, or shared with "sh") in DIR as a build does, until killed; the pid
# is the holder's once $T/held exists
hold_locks() { # DIR NAME:ex|sh...
  rm -f "$T/held"
  "$PY" - "$T/held" "$@" <<'PYEOF' &
import fcntl, os, sys, time
ready, d = sys.argv[1], sys.argv[2]
fds = []
for spec in sys.argv[3:]:
    name, mode = spec.split(":")
    fd = os.open(os.path.join(d, name), os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX if mode == "ex" else fcntl.LOCK_SH)
    fds.append(fd)
open(ready, "w").close()
time.sleep(120)
PYEOF
  holder=$!
  for _ in $(seq 200); do [ -e "$T/held" ] && return; sleep 0.05; done
  die "the lock holder did not start"
}
mkdir "$T/starting"
hold_locks "$T/starting" .xtts-lock:ex
readers_say_building "$T/starting" .xtts-lock
grep -q "held by pid $holder)" "$T/out.txt" "$T/err.txt" || die "the holder's pid not named"
kill $holder; wait $holder 2>/dev/null || true
# the same directory once the lock is free: no longer "running"
expect_rc 2 "$BIN/xtts-cache-verify" "$T/starting"
grep -q "a build is running" "$T/out.txt" && die "a free lock taken for a build in progress"
# ... and says what it is: an empty directory, not "manifest.json: cannot open"
grep -q "$T/starting: no cache here: the directory is empty" "$T/out.txt" || { cat "$T/out.txt"; die "an empty directory not named as such"; }
# a real build's first instant: its directory appears already locked (made under a temporary
# name, locked, renamed into place), so a reader started as soon as it exists never finds it
# unlocked and empty; and no temporary name is left behind
for k in $(seq 12); do
  d="$T/fresh$k"
  "$BIN/xtts-melcache" -q --out "$d" "$T/tokens.tsv" > /dev/null 2>&1 &
  b=$!
  for _ in $(seq 200000); do [ -e "$d" ] && break; done
  rc=0; "$BIN/xtts-cache-verify" "$d" > "$T/out.txt" 2>&1 || rc=$?
  wait $b || true
  [ $rc -eq 0 ] || grep -q "$d: a build is running in this directory" "$T/out.txt" ||
    { cat "$T/out.txt"; die "a reader at a build's first instant: exit $rc without 'a build is running'"; }
done
[ -z "$(ls -d "$T"/*.xtts-new.* 2>/dev/null)" ] || die "a build left its directory's temporary name"
# a part build: the directory lock shared, the part's own lock exclusive
mkdir "$T/part"
hold_locks "$T/part" .xtts-lock:sh .xtts-lock-part-00001:ex
readers_say_building "$T/part" '.xtts-lock[-a-z0-9]*'
kill $holder; wait $holder 2>/dev/null || true
# a build starting over a finished cache (--force, --update): its shards may be changing
cp -r "$T/small" "$T/rebuilt"
hold_locks "$T/rebuilt" .xtts-lock:ex
readers_say_building "$T/rebuilt" .xtts-lock
kill $holder; wait $holder 2>/dev/null || true
expect_rc 0 "$BIN/xtts-cache-verify" "$T/rebuilt"
echo "6: a build holding its lock is a build in progress for every reader"
echo ok
