#!/usr/bin/env bash
# The xtts_prep package (python/): python/tests/test_package.py on version-1-shaped caches
# from test_reader, against xtts-cache-inspect's exports; the damaged manifests are the
# ones the C loader refuses (tests/test_manifest.c, cache_read_damage.sh). The --audio
# int16 cases run when xtts-melcache knows --audio, and skip with a message otherwise.
set -euo pipefail
: "${BUILD:?}" "${TMPDIR_TEST:?}"
PY=${PYTHON:-/usr/bin/python3}
HERE=$(cd "$(dirname "$0")/../.." && pwd)
T=$TMPDIR_TEST
"$BUILD/tests/test_reader" --make-cache "$T/c" 40 15 fp16 >/dev/null
mkdir -p "$T/npy" "$T/work"
for i in 0 7 14 15 29 39; do
  "$BUILD/bin/xtts-cache-inspect" --index $i --npy "$T/npy/$i.npy" "$T/c"
  "$BUILD/bin/xtts-cache-inspect" --index $i --json "$T/c" > "$T/npy/$i.json"
done
audio=()
if "$BUILD/bin/xtts-melcache" --help 2>&1 | grep -q -- "--audio"; then
  bash "$HERE/scripts/make-demo-dataset.sh" "$T/data" >/dev/null 2>&1
  "$BUILD/bin/xtts-tokenize" --tokenizer bytes "$T/data/metadata.csv" > "$T/tok.tsv" 2>/dev/null
  "$BUILD/bin/xtts-melcache" --out "$T/audio" --audio int16 -q "$T/tok.tsv" || [ $? -eq 3 ]
  audio=("$T/audio")
else
  echo "skip: xtts-melcache has no --audio option yet (audio cases of test_package.py not run)"
fi
PYTHONPATH="$HERE/python" "$PY" "$HERE/python/tests/test_package.py" "$T/c" "$T/npy" "$T/work" "${audio[@]}"
