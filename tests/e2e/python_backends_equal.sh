#!/usr/bin/env bash
# Every public read of the xtts_prep package (python/tests/backend_reads.py: get, c[i],
# padded get, header, text, waveform, content_key, metrics, metrics_bytes, flags,
# quality_flags, index_of, lengths, meta, digest, read_batch, iteration, CacheDataset,
# XttsGptDataset with and without codes=, VocoderSegmentDataset, AudioCodes) through its one
# decoder, the C library, in an interpreter where `import lmdb` and `import zstandard` fail, as
# in a venv holding numpy and the wheel alone, gives what the tests' oracle, the independent
# pure-Python reader (python/tests/xtts_oracle), gives with them: on a
# cache of test_reader (no waveform, keys or metrics: the errors must agree too) and on the
# demo dataset built with --audio int16, with a codes directory beside it. The same check in a
# clean Debian root is python_wheel_clean_root.sh, which skips where chroot is not allowed.
# Then the same reads through the C library on copies with bit flips in a shard's data.mdb
# and in the codes directory's: no crash (the library's fault guard), and nothing raised but
# CacheError, KeyError and IndexError.
set -euo pipefail
source "$(dirname "$0")/faults_lib.bash"
need_py_reader_modules "the reference reads are the oracle's (python/tests/xtts_oracle)"
if [ ! -f "$BUILD/lib/libxtts-reader.so" ] || grep -q 'lib[a-z]*san' <<< "$(ldd "$BUILD/lib/libxtts-reader.so")"; then
  echo "skip: no loadable $BUILD/lib/libxtts-reader.so (not built, or a sanitizer build)"; exit 0
fi
export PYTHONPATH="$HERE/python"
READS=$HERE/python/tests/backend_reads.py

"$BUILD/tests/test_reader" --make-cache "$T/c" 40 15 fp16 >/dev/null
bash "$HERE/scripts/make-demo-dataset.sh" "$T/data" >/dev/null 2>&1
"$BUILD/bin/xtts-tokenize" --tokenizer bytes "$T/data/metadata.csv" > "$T/tok.tsv" 2>/dev/null || [ $? -eq 3 ]
"$BUILD/bin/xtts-melcache" --out "$T/audio" --audio int16 -q "$T/tok.tsv" 2>/dev/null || [ $? -eq 3 ]
codes=$("$PY" "$READS" --make-codes "$T/audio")
"$BUILD/bin/xtts-cache-verify" "$T/audio" > "$T/verify.txt" || { cat "$T/verify.txt"; die "verify refuses the codes made here"; }

# the blocker works: without it the package would quietly use the modules
out=$("$PY" "$READS" --without-fallback --python-get "$T/c" 2>&1)
grep -q "tests' oracle.*needs the Python module" <<< "$out" || die "the oracle read without py-lmdb: $out"

XTTS_PREP_LIB="$BUILD/lib" "$PY" "$READS" --oracle "$T/python.json" "$T/c" "$T/audio" > "$T/python.out"
grep -qx "reader: oracle" "$T/python.out" || die "the reference was not read by the oracle"
XTTS_PREP_LIB="$BUILD/lib" "$PY" "$READS" --without-fallback "$T/c.json" "$T/c" "$T/audio" > "$T/c.out"
grep -qx "reader: library" "$T/c.out" || die "the C library was not used: $(cat "$T/c.out")"
if ! cmp -s "$T/python.json" "$T/c.json"; then
  diff "$T/python.json" "$T/c.json" > "$T/diff.txt" || true; head -n 20 "$T/diff.txt" >&2
  die "the package (the C library, without py-lmdb and zstandard) reads otherwise than the oracle"
fi
grep -q '"audio_codes"' "$T/c.json" || die "no audio codes were read (${codes##*/})"
grep -q '"raised": "CacheError"' "$T/c.json" || die "no error case was compared"
# damage through the per-record calls and the codes reader
cat > "$T/raised.py" <<'PYEOF'
import json, sys
seen = set()
def walk(x):
    if isinstance(x, dict):
        if "raised" in x:
            seen.add(x["raised"])
        for v in x.values():
            walk(v)
    elif isinstance(x, list):
        for v in x:
            walk(v)
walk(json.load(open(sys.argv[1])))
print(" ".join(sorted(seen)))
PYEOF
errors=0
for seed in 1 2 3 4 5 6; do
  rm -rf "$T/dmg"; cp -r "$T/audio" "$T/dmg"
  "$PY" - "$seed" "$T/dmg/shard-00000/data.mdb" "$T/dmg/${codes##*/}/data.mdb" <<'PYEOF'
import random, sys
r = random.Random(int(sys.argv[1]))
for p in sys.argv[2:]:
    data = bytearray(open(p, "rb").read())
    for _ in range(int(sys.argv[1]) * 4):
        data[r.randrange(len(data))] ^= 1 << r.randrange(8)
    open(p, "wb").write(data)
PYEOF
  set +e
  XTTS_PREP_LIB="$BUILD/lib" "$PY" "$READS" --without-fallback "$T/dmg.json" "$T/dmg" > "$T/dmg.out" 2>&1
  rc=$?
  set -e
  [ $rc -eq 0 ] || { tail -n 5 "$T/dmg.out" >&2; die "reading a damaged cache (seed $seed) exited $rc"; }
  raised=$("$PY" "$T/raised.py" "$T/dmg.json")
  for r in $raised; do
    case $r in CacheError|KeyError|IndexError) ;; *) die "a damaged cache (seed $seed) raised $r" ;; esac
  done
  grep -q CacheError <<< "$raised" && errors=$((errors + 1))
done
[ $errors -gt 0 ] || die "no damage was found in 6 damaged copies"
echo "python_backends_equal: ok ($(grep -c sha256 "$T/c.json") arrays and every value equal to the oracle's; ${codes##*/})"
