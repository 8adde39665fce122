#!/usr/bin/env bash
# e2e: long
# Damaged caches: bit flips (inside a record and at random places), truncated data.mdb,
# a missing shard, a manifest from another build, a record whose lengths exceed its
# padded shape under a valid CRC. xtts-cache-verify reports each (exit 2, naming the
# shard, index and id); neither verify, inspect nor the Python module crashes (the
# module raises CacheError, never another exception).
set -euo pipefail
: "${BUILD:?}" "${TMPDIR_TEST:?}"
PY=${PYTHON:-/usr/bin/python3}
HERE=$(cd "$(dirname "$0")/../.." && pwd)
export PYTHONPATH="$HERE/python"
V=$BUILD/bin/xtts-cache-verify
I=$BUILD/bin/xtts-cache-inspect
MK=$BUILD/tests/test_reader
T=$TMPDIR_TEST
die() { echo "FAIL: $*" >&2; exit 1; }

"$MK" --make-cache "$T/good" 40 15 fp16
"$MK" --make-cache "$T/other" 40 15 fp16 512   # another configuration (n_fft)
"$MK" --make-cache "$T/big" 120 60 fp32 1024 80 400  # records on overflow pages, 2-level trees

fresh() { rm -rf "$T/$1"; cp -r "$T/${2:-good}" "$T/$1"; }

# run CMD...: exit status, which must be 0 or 2 (a crash is >= 128, an uncaught Python
# exception is 1)
run() {
  set +e; "$@" >"$T/out.txt" 2>"$T/err.txt"; local rc=$?; set -e
  if [ $rc -ne 0 ] && [ $rc -ne 2 ]; then
    echo "---- $* exited $rc" >&2; tail -n 5 "$T/out.txt" "$T/err.txt" >&2; die "exit $rc from $1"
  fi
  return $rc
}

# Every record through the Python module (get, index_of, then header, text, content_key,
# metrics_bytes, lengths, digest, meta: with the C library, its per-record calls): only
# CacheError may come out. Prints the first error; exits 2 when any, 0 when none.
cat > "$T/pyread.py" <<'PYEOF'
import sys
from xtts_prep import XttsCache, CacheError
errors = []
try:
    c = XttsCache(sys.argv[1])
    for i in range(len(c)):
        try:
            c.get(i)
            c.get(i, padded=True)
        except CacheError as e:
            errors.append(str(e))
    for i in range(0, len(c), 7):
        try:
            c.index_of("utt-%05d" % i)
        except (CacheError, KeyError) as e:
            errors.append(str(e))
    # the other reads (through the C library's per-record calls where it loads)
    for i in range(len(c)):
        for read in (c.header, c.text, c.content_key, c.metrics_bytes):
            try:
                read(i)
            except CacheError as e:
                errors.append(str(e))
    for read in [c.lengths, c.digest, c.has_metrics] + [lambda s=s: c.meta(s, "format") for s in range(len(c.shards))]:
        try:
            read()
        except CacheError as e:
            errors.append(str(e))
except CacheError as e:
    errors.append(str(e))
if errors:
    print(errors[0])
    sys.exit(2)
PYEOF

expect_fault() { # dir, pattern...
  local d=$1; shift
  if run "$V" "$d"; then die "verify passed a damaged cache ($d)"; fi
  grep -q '^result: FAILED$' "$T/out.txt" || die "no FAILED result"
  for p in "$@"; do grep -q -- "$p" "$T/out.txt" || { cat "$T/out.txt" >&2; die "verify output lacks '$p'"; }; done
  run "$V" --deep --json "$d" || true
  run "$I" "$d" || true
  run "$PY" "$T/pyread.py" "$d" || true
}

# 1. a bit flip inside record 20's zstd frame and one in record 5's header
fresh flip
"$PY" - "$T/flip" <<'PYEOF'
import lmdb, sys
d = sys.argv[1]
def flip_in(shard, local, where):
    env = lmdb.open("%s/%s" % (d, shard), readonly=True, lock=False, max_dbs=4)
    db = env.open_db(b"records", create=False)
    with env.begin(db=db) as txn:
        val = bytes(txn.get(local.to_bytes(8, "big")))
    env.close()
    path = "%s/%s/data.mdb" % (d, shard)
    data = bytearray(open(path, "rb").read())
    # LMDB may keep stale copies of a page (copy-on-write): damage every copy
    at = data.find(val)
    assert at >= 0
    while at >= 0:
        data[at + where(len(val))] ^= 0x10
        at = data.find(val, at + 1)
    open(path, "wb").write(data)
flip_in("shard-00001", 5, lambda n: n - 12)   # index 20, inside the frame
flip_in("shard-00000", 5, lambda n: 30)       # index 5, inside the header
PYEOF
expect_fault "$T/flip" "shard-00001: index 20: id 'utt-00020'" "shard-00000: index 5: id 'utt-00005': record header checksum mismatch" '^faults: 2$'
run "$PY" "$T/pyread.py" "$T/flip" && die "python read a damaged record without error"
grep -q "index 5, id 'utt-00005'" "$T/out.txt" || die "python error lacks shard/index/id: $(cat "$T/out.txt")"
run "$I" --index 20 --npy "$T/x.npy" "$T/flip" && die "inspect exported a damaged record"
grep -q "shard-00001: index 20" "$T/err.txt" || die "inspect error lacks shard/index"

# 2. random bit flips anywhere in data.mdb (meta, branch, leaf and overflow pages)
for seed in 1 2 3 4 5 6 7 8 9 10 11 12; do
  if [ $seed -le 6 ]; then fresh rnd; else fresh rnd big; fi
  "$PY" - "$T/rnd/shard-00001/data.mdb" $seed <<'PYEOF'
import random, sys
p, seed = sys.argv[1], int(sys.argv[2])
data = bytearray(open(p, "rb").read())
r = random.Random(seed)
for _ in range(seed * 3):
    data[r.randrange(len(data))] ^= 1 << r.randrange(8)
open(p, "wb").write(data)
PYEOF
  run "$V" "$T/rnd" || true
  run "$V" --deep "$T/rnd" || true
  run "$I" "$T/rnd" || true
  run "$I" --index 17 --png "$T/x.png" "$T/rnd" || true
  run "$PY" "$T/pyread.py" "$T/rnd" || true
done

# 3. truncated data.mdb
for cut in half page; do
  fresh trunc
  f=$T/trunc/shard-00002/data.mdb
  if [ $cut = half ]; then truncate -s $(( $(stat -c %s "$f") / 2 )) "$f"; else truncate -s 4100 "$f"; fi
  expect_fault "$T/trunc" "shard-00002"
  run "$PY" "$T/pyread.py" "$T/trunc" && die "python read a truncated shard"
  grep -q "shard-00002" "$T/out.txt" || die "python error lacks the shard: $(cat "$T/out.txt")"
done

# 4. a missing shard
fresh miss
rm -rf "$T/miss/shard-00001"
expect_fault "$T/miss" "fault: shard-00001: shard missing"
run "$PY" "$T/pyread.py" "$T/miss" && die "python read a missing shard"
grep -q "shard-00001: shard missing" "$T/out.txt" || die "python: $(cat "$T/out.txt")"

# 5. a manifest from another build
fresh mani
cp "$T/other/manifest.json" "$T/mani/manifest.json"
expect_fault "$T/mani" "built with another configuration"
run "$PY" "$T/pyread.py" "$T/mani" && die "python read a cache under another build's manifest"
grep -q "another configuration" "$T/out.txt" || die "python: $(cat "$T/out.txt")"
# and a manifest that is not JSON at all
fresh junk
printf '{"format_version": 1, "records": ' > "$T/junk/manifest.json"
expect_fault "$T/junk" "manifest.json"
# manifests both readers refuse by the same rules (formats/cache.md section 4): a shard
# listed twice, a configuration changed without its hash, a manifest that is /dev/zero
for case in twice nohash zero; do
  fresh "m$case"
  "$PY" - "$T/m$case/manifest.json" "$case" <<'PYEOF'
import json, os, sys
path, case = sys.argv[1:3]
m = json.load(open(path))
if case == "twice":
    m["shards"].append(dict(m["shards"][0], first_index=m["records"]))
    m["records"] += m["shards"][0]["records"]
elif case == "nohash":
    m["config"]["max_tokens"] = 65536
if case == "zero":
    os.remove(path)
    os.symlink("/dev/zero", path)
else:
    json.dump(m, open(path, "w"))
PYEOF
  want=$(case $case in twice) echo "shard listed twice";; nohash) echo "does not match the config";; zero) echo "manifest.json";; esac)
  expect_fault "$T/m$case" "$want"
  run "$PY" "$T/pyread.py" "$T/m$case" && die "python read the $case manifest"
  grep -q "$want" "$T/out.txt" || die "python ($case): $(cat "$T/out.txt")"
done

# 6. lengths beyond the padded shape under a valid CRC (record 33 = shard-00002 local 3)
fresh len
"$PY" - "$T/len/shard-00002" <<'PYEOF'
import lmdb, struct, sys, zlib
env = lmdb.open(sys.argv[1], max_dbs=4)
db = env.open_db(b"records", create=False)
key = (3).to_bytes(8, "big")
with env.begin(write=True, db=db) as txn:
    rec = bytearray(txn.get(key))
    frames_padded = struct.unpack_from("<I", rec, 28)[0]
    struct.pack_into("<I", rec, 24, frames_padded + 7)        # n_frames > frames_padded
    id_len = struct.unpack_from("<H", rec, 12)[0]
    struct.pack_into("<I", rec, 60, zlib.crc32(bytes(rec[64:64 + id_len]), zlib.crc32(bytes(rec[:60]))))
    txn.put(key, bytes(rec))
env.close()
PYEOF
expect_fault "$T/len" "shard-00002: index 33: id 'utt-00033': lengths (.*) exceed padded shape" '^faults: 1$'
run "$PY" "$T/pyread.py" "$T/len" && die "python read an impossible record"
grep -q "shard-00002: index 33, id 'utt-00033': \(record 'utt-00033': \)\?lengths .* exceed padded shape" "$T/out.txt" || die "python: $(cat "$T/out.txt")"
echo ok
