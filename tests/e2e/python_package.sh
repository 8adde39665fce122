#!/usr/bin/env bash
# The xtts_prep package (python/): python/tests/test_package.py on version-1-shaped caches
# from test_reader, against xtts-cache-inspect's exports, with the C library of this build,
# the package's one decoder (its reads against the tests' oracle, python/tests/xtts_oracle, and
# the one-line ImportError when the library is hidden); the damaged manifests are the
# ones the C loader refuses (tests/test_manifest.c, cache_read_damage.sh). The --audio
# int16 cases run when xtts-melcache knows --audio, and skip with a message otherwise.
set -euo pipefail
: "${BUILD:?}" "${TMPDIR_TEST:?}"
PY=${PYTHON:-/usr/bin/python3}
HERE=$(cd "$(dirname "$0")/../.." && pwd)
T=$TMPDIR_TEST
if ! "$PY" -c 'import numpy, lmdb, zstandard' 2>/dev/null; then
  echo "skip: $PY lacks numpy, lmdb or zstandard (Debian python3-numpy python3-lmdb python3-zstandard)"
  exit 0
fi
# the C-backed batches (libxtts-reader.so) are checked against the pure-Python reader when built
# (a sanitizer build cannot be loaded into an uninstrumented interpreter: tests/test_reader_api.c
# covers its interface there)
if [ ! -f "$BUILD/lib/libxtts-reader.so" ]; then
  echo "skip: $BUILD/lib/libxtts-reader.so not built (the package's one decoder: it does not import without)"; exit 0
elif grep -q 'lib[a-z]*san' <<< "$(ldd "$BUILD/lib/libxtts-reader.so")"; then
  echo "skip: $BUILD/lib/libxtts-reader.so is a sanitizer build (it cannot load into the interpreter)"; exit 0
else export XTTS_PREP_LIB="$BUILD/lib"; fi
"$BUILD/tests/test_reader" --make-cache "$T/c" 40 15 fp16 >/dev/null
mkdir -p "$T/npy" "$T/work"
for i in 0 7 14 15 29 39; do
  "$BUILD/bin/xtts-cache-inspect" --index $i --npy "$T/npy/$i.npy" "$T/c"
  "$BUILD/bin/xtts-cache-inspect" --index $i --json "$T/c" > "$T/npy/$i.json"
done
audio=()
if grep -q -- "--audio" <<< "$("$BUILD/bin/xtts-melcache" --help 2>&1)"; then
  bash "$HERE/scripts/make-demo-dataset.sh" "$T/data" >/dev/null 2>&1
  "$BUILD/bin/xtts-tokenize" --tokenizer bytes "$T/data/metadata.csv" > "$T/tok.tsv" 2>/dev/null || [ $? -eq 3 ]
  "$BUILD/bin/xtts-melcache" --out "$T/audio" --audio int16 -q "$T/tok.tsv" || [ $? -eq 3 ]
  audio=("$T/audio")
  # version-2 records against the C exports: mel, waveform (inspect --wav), digest
  for i in 0 13; do
    "$BUILD/bin/xtts-cache-inspect" --index $i --npy "$T/a$i.npy" "$T/audio"
    "$BUILD/bin/xtts-cache-inspect" --index $i --wav "$T/a$i.wav" "$T/audio"
  done
  digest=$("$BUILD/bin/xtts-cache-verify" "$T/audio" | sed -n 's/^digest: //p')
  PYTHONPATH="$HERE/python" "$PY" - "$T" "$digest" <<'PYEOF'
import sys, wave
import numpy as np
from xtts_prep import XttsCache
t, digest = sys.argv[1:3]
c = XttsCache(t + "/audio")
for i in (0, 13):
    assert np.array_equal(c[i]["mel"], np.load("%s/a%d.npy" % (t, i))), i
    with wave.open("%s/a%d.wav" % (t, i)) as w:
        a = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2")
    assert np.array_equal(a, c.waveform(i)), i
    L = c.lengths()[i]
    assert (int(L["n_frames"]), int(L["n_samples"])) == (c[i]["n_frames"], len(a))
assert c.digest() == digest
PYEOF
else
  echo "skip: xtts-melcache has no --audio option yet (audio cases of test_package.py not run)"
fi
PYTHONPATH="$HERE/python" "$PY" "$HERE/python/tests/test_package.py" "$T/c" "$T/npy" "$T/work" "${audio[@]}"
