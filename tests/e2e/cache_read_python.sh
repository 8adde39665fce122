#!/usr/bin/env bash
# The xtts_prep package (python/) against the C reader: the same records as xtts-cache-inspect's
# .npy/JSON exports, the same digest as xtts-cache-verify, and correct reads from several
# forked processes (multiprocessing with the fork start method, the cache opened in the
# parent first), and fixed-shape batches of the package's C library (libxtts-reader.so) equal to
# the tests' oracle's (python/tests/xtts_oracle, the pure-Python reader). The torch Dataset wrapper is checked too when torch imports.
set -euo pipefail
: "${BUILD:?}" "${TMPDIR_TEST:?}"
PY=${PYTHON:-/usr/bin/python3}
HERE=$(cd "$(dirname "$0")/../.." && pwd)
V=$BUILD/bin/xtts-cache-verify
I=$BUILD/bin/xtts-cache-inspect
MK=$BUILD/tests/test_reader
T=$TMPDIR_TEST
die() { echo "FAIL: $*" >&2; exit 1; }
if ! "$PY" -c 'import numpy, lmdb, zstandard' 2>/dev/null; then
  echo "skip: $PY lacks numpy, lmdb or zstandard (Debian python3-numpy python3-lmdb python3-zstandard)"
  exit 0
fi
LIBDIR=$BUILD/lib   # the package's one decoder: a sanitizer build's cannot load into the interpreter
if [ ! -f "$LIBDIR/libxtts-reader.so" ] || grep -q 'lib[a-z]*san' <<< "$(ldd "$LIBDIR/libxtts-reader.so")"; then
  echo "skip: no loadable $LIBDIR/libxtts-reader.so (not built, or a sanitizer build): the package does not import"
  exit 0
fi

for dt in fp16 fp32 fp16s fp32s; do
  case $dt in
    fp16|fp32) "$MK" --make-cache "$T/$dt" 40 15 $dt ;;
    *) "$MK" --make-cache "$T/$dt" 40 15 ${dt%s} 1024 16 48 shuffle ;;   # byte-plane shuffled
  esac
  digest=$("$V" "$T/$dt" | sed -n 's/^digest: \([0-9a-f]\{64\}\)$/\1/p')
  [ -n "$digest" ] || die "no digest from verify"
  mkdir -p "$T/$dt-npy"
  for i in 0 7 14 15 29 39; do
    "$I" --index $i --npy "$T/$dt-npy/$i.npy" "$T/$dt"
    "$I" --index $i --json "$T/$dt" > "$T/$dt-npy/$i.json"
  done
  PYTHONPATH="$HERE/python:$HERE/python/tests" XTTS_PREP_LIB="$LIBDIR" "$PY" - "$T/$dt" "$T/$dt-npy" "$digest" "$LIBDIR" <<'PYEOF'
import json, multiprocessing as mp, sys, zlib
import numpy as np
import xtts_prep
from xtts_prep import XttsCache, CacheError

path, npy, digest = sys.argv[1:4]
c = XttsCache(path)
assert len(c) == 40
for i in (0, 7, 14, 15, 29, 39):
    r = c[i]
    want = np.load("%s/%d.npy" % (npy, i))
    meta = json.load(open("%s/%d.json" % (npy, i)))
    assert r["mel"].dtype == np.float32 and r["mel"].shape == want.shape, (r["mel"].shape, want.shape)
    assert np.array_equal(r["mel"], want), i
    assert r["tokens"].tolist() == meta["tokens"], i
    for k in ("id", "n_tokens", "n_frames", "speaker_id", "lang_id", "split", "speaker", "lang", "index"):
        assert r[k] == meta[k], (k, r[k], meta[k])
    assert c.index_of(meta["id"]) == i
    p = c.get(i, padded=True)
    assert p["tokens"].shape == (c.max_tokens,) and p["mel"].shape == (c.n_mels, c.max_frames)
    assert np.array_equal(p["mel"][:, :r["n_frames"]], want)
    # padding: the pad value (as stored, so fp16-rounded inside the stored frames)
    assert np.allclose(p["mel"][:, r["n_frames"]:], meta["pad_value"], atol=1e-2)
    assert np.all(p["tokens"][r["n_tokens"]:] == 0)
assert c[-1]["id"] == "utt-00039"
for bad in (40, -41):
    try:
        c[bad]
        raise SystemExit("index %d should raise IndexError" % bad)
    except IndexError:
        pass
try:
    c.index_of("nope")
    raise SystemExit("unknown id should raise KeyError")
except KeyError:
    pass
assert c.digest() == digest, (c.digest(), digest)
assert c.shard_of(15) == "shard-00001"

# fixed-shape batches: the C library against the tests' oracle
import xtts_oracle
want = xtts_oracle.XttsCache(path).read_batch(list(range(40)))
for i in (0, 7, 39):
    assert np.array_equal(want["mel"][i, :, :want["n_frames"][i]], np.load("%s/%d.npy" % (npy, i))), i
cb = XttsCache(path, backend="c")
for th in (1, 2):
    got = cb.read_batch(list(range(40)), threads=th)
    for k in want:
        assert got[k].dtype == want[k].dtype and np.array_equal(got[k], want[k]), (k, th)

# Forked readers: the parent has opened its LMDB handles already.
def fingerprint(i):
    r = c[i]
    return i, r["id"], zlib.crc32(r["mel"].tobytes()), zlib.crc32(r["tokens"].tobytes())

parent = [fingerprint(i) for i in range(len(c))]
ctx = mp.get_context("fork")
with ctx.Pool(4) as pool:
    for _ in range(3):
        got = pool.map(fingerprint, list(range(len(c)))[::-1], chunksize=3)
        assert sorted(got) == parent
# and the parent still reads after the children are gone
assert [fingerprint(i) for i in range(len(c))] == parent

try:
    import torch  # noqa: F401
except ImportError:
    print("torch not importable: Dataset wrapper not checked")
else:
    from torch.utils.data import DataLoader
    ds = xtts_prep.CacheDataset(path)
    for mpctx in ("fork",):   # spawn needs a main module file: python/tests/test_package.py checks it
        dl = DataLoader(ds, batch_size=8, num_workers=2, multiprocessing_context=mpctx, collate_fn=ds.collate())
        n = 0
        for b in dl:
            assert b["mel"].shape[1] == c.n_mels and b["tokens"].dtype == torch.int64
            for j in range(b["mel"].shape[0]):
                i = int(b["index"][j])
                nf = int(b["mel_lengths"][j])
                assert np.array_equal(b["mel"][j, :, :nf].numpy(), c[i]["mel"])
            n += b["mel"].shape[0]
        assert n == 40, (mpctx, n)
    assert len(xtts_prep.CacheDataset(path, split="val")) == 8
print("ok")
PYEOF
done
# the module's command line prints the same digest line as verify
grep -q "^digest: $("$V" "$T/fp16" | sed -n 's/^digest: //p')$" <<< "$(PYTHONPATH="$HERE/python" XTTS_PREP_LIB="$LIBDIR" "$PY" -m xtts_prep --digest "$T/fp16")" \
  || die "python --digest differs"
echo ok
