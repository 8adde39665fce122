#!/usr/bin/env bash
# The Python package's handle of a cache (docs/python-reader.md, "Processes and handles"):
# 1. a reader opened before `xtts-melcache --update` and read after it: the process that opened
#    it reads the cache it opened (every record as before, never another record's data), and a
#    process that must open it again (a forked worker, an unpickled copy) stops with "the cache
#    was replaced while it was read ... open it again", never calling it damaged; a new reader
#    reads the new cache;
# 2. a cache is mapped once per process however many objects read it: with data.mdb grown
#    sparse to 1.3 GB, under an address-space limit of the interpreter's size + 2 GiB, two
#    XttsCache objects, a CacheDataset and an XttsGptDataset with codes read it (each mapping
#    its own would need 2.6 GB), as xtts-cache-inspect does under the same limit.
set -euo pipefail
source "$(dirname "$0")/faults_lib.bash"
LIB=$BUILD/lib/libxtts-reader.so
if [ ! -f "$LIB" ] || grep -q 'lib[a-z]*san' <<< "$(ldd "$LIB")"; then
  echo "skip: no loadable $LIB (not built, or a sanitizer build): the package does not import"; exit 0
fi
export PYTHONPATH="$HERE/python:$HERE/python/tests" XTTS_PREP_LIB=$BUILD/lib

demo_tokens
# v2: every 5th text edited, every 9th record dropped: another record count
awk -F'\t' 'BEGIN{OFS="\t"} /^#/ {print; next} {n++} n % 9 == 0 {next}
  n % 5 == 0 {sub(/ [0-9]+$/, "", $5); $6 = $6 " edited"} {print}' "$T/tokens.tsv" > "$T/v2.tsv"
expect_rc 3 "$BIN/xtts-melcache" --out "$T/c" --audio int16 -j 2 -q "$T/tokens.tsv"
"$PY" "$HERE/python/tests/backend_reads.py" --make-codes "$T/c" > /dev/null

# ---- 1. replaced under a reader ----------------------------------------------------------------
cat > "$T/hold.py" <<'PYEOF'
import hashlib, multiprocessing as mp, os, pickle, subprocess, sys
from xtts_prep import CacheDataset, CacheError, XttsCache
path, update = sys.argv[1], sys.argv[2:]
c = XttsCache(path)          # opened, not read yet: its first read comes after the update
ds = CacheDataset(path)
n_before = len(c)
subprocess.run(update, check=False)
assert len(XttsCache(path)) != n_before, "the update did not change the record count"

def fp(cache, i):
    r = cache[i]
    return r["id"], hashlib.sha256(r["mel"].tobytes() + r["tokens"].tobytes()).hexdigest()

def replaced(e):
    s = str(e)
    assert "the cache was replaced while it was read" in s and "open it again" in s, s
    assert "damaged" not in s and "the C reader sees" not in s, s
    return s

# the opening process reads the cache it opened, whole and unmixed
import xtts_oracle
old = [fp(c, i) for i in range(n_before)]
assert len({r[0] for r in old}) == n_before
assert [ds[i]["id"] for i in range(len(ds))] == [r[0] for r in old]

def child(q):
    try:
        c[0]
        q.put("read")
    except CacheError as e:
        q.put(replaced(e))

ctx = mp.get_context("fork")
q = ctx.Queue()
p = ctx.Process(target=child, args=(q,))
p.start(); p.join()
print("fork:", q.get())
try:
    pickle.loads(pickle.dumps(c))[0]
    raise SystemExit("an unpickled reader read the replaced cache")
except CacheError as e:
    print("pickle:", replaced(e))
new = XttsCache(path)
assert [fp(new, i) for i in range(len(new))] == [fp(xtts_oracle.XttsCache(path), i) for i in range(len(new))]
print("ok", n_before, len(new))
PYEOF
"$PY" "$T/hold.py" "$T/c" "$BIN/xtts-melcache" --out "$T/c" --audio int16 -j 2 -q --update "$T/v2.tsv" \
  > "$T/hold.out" 2> "$T/hold.err" || { cat "$T/hold.err"; die "a reader across an update"; }
grep -q "^fork: .*was replaced while it was read" "$T/hold.out" || { cat "$T/hold.out"; die "fork: not said replaced"; }
grep -q "^ok " "$T/hold.out" || { cat "$T/hold.out" "$T/hold.err"; die "a reader across an update"; }
echo "1: $(grep '^ok' "$T/hold.out"): the opener reads what it opened; a reopening says replaced"

# ---- 2. one map per process --------------------------------------------------------------------
if sanitizer_build; then echo "skip: sanitizer build (cannot start under a limit)"; exit 0; fi
cp -r "$T/c" "$T/big"
truncate -s 1300M "$T/big/shard-00000/data.mdb"   # a sparse tail: the shard is sound, but large
cat > "$T/maps.py" <<'PYEOF'
import os, resource, sys
from xtts_prep import CacheDataset, XttsCache, XttsGptDataset
size = int(open("/proc/self/statm").read().split()[0]) * os.sysconf("SC_PAGESIZE")
resource.setrlimit(resource.RLIMIT_AS, (size + (2 << 30), size + (2 << 30)))
path = sys.argv[1]
readers = [XttsCache(path), XttsCache(path), CacheDataset(path, audio=True), XttsGptDataset(path, codes=True)]
readers[0][0], readers[1].read_batch([1, 2]), readers[2][3], readers[3][0]
print("ok", len(readers[0]))
PYEOF
expect_rc 0 "$PY" "$T/maps.py" "$T/big"
vsize=$(awk '/^VmSize:/ {print $2}' /proc/$$/status)   # kB (procps's ps is not in a minimal Debian)
expect_rc 0 vlimit $((vsize + 2 * 1024 * 1024)) "$BIN/xtts-cache-inspect" --index 3 "$T/big"
echo "2: a 1.3 GB data.mdb under an address-space limit of +2 GiB: four Python readers share one map"
