#!/usr/bin/env bash
# The wheel of `make wheel` on a machine with Python and numpy and nothing else: in a root made
# here of python3, its standard library, numpy and the libraries those load (no liblmdb0,
# libzstd1, libjansson4, libsndfile1 or libfftw3, no py-lmdb, no zstandard), entered with
# chroot, the wheel's package (installed with pip --target) imports, reads the caches with
# backend "c", and every public read (python/tests/backend_reads.py: records, headers, text,
# waveforms, content keys, metrics and flags, ids, lengths, meta, digest, batches, the
# datasets, XttsGptDataset with codes=, AudioCodes) equals the pure-Python reader's outside,
# on a test_reader cache and on the demo dataset built with --audio int16 with a codes
# directory beside it; the pure-Python reader itself raises CacheError naming the "fallback"
# extra there.
set -euo pipefail
: "${BUILD:?}" "${TMPDIR_TEST:?}"
if [ -f "$BUILD/lib/libxtts-reader.so" ] && grep -q 'lib[a-z]*san' <<< "$(ldd "$BUILD/lib/libxtts-reader.so")"; then
  echo "skip: a sanitizer build (its library cannot be loaded into an uninstrumented interpreter; no wheel is made of it)"; exit 0
fi
PY=${PYTHON:-/usr/bin/python3}
HERE=$(cd "$(dirname "$0")/../.." && pwd)
T=$TMPDIR_TEST/clean-root
R=$T/root
die() { echo "FAIL: $*" >&2; exit 1; }
if ! "$PY" -c 'import numpy, lmdb, zstandard' 2>/dev/null; then
  echo "skip: $PY lacks numpy, lmdb or zstandard (the reference batches are read with them)"; exit 0
fi
mkdir -p "$R"
probe=$(chroot "$R" /nonexistent 2>&1 || true)   # entered: the command is what is missing
if [ "$(id -u)" != 0 ] || ! grep -q 'No such file' <<<"$probe"; then
  echo "skip: chroot is not permitted here (root with CAP_SYS_CHROOT needed)"; exit 0
fi
shopt -s nullglob
whl=("$BUILD"/wheel/xtts_prep-*.whl)
if [ ${#whl[@]} -eq 0 ]; then
  env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s --no-print-directory -C "$HERE" BUILD="$BUILD" PYTHON="$PY" wheel >/dev/null
  whl=("$BUILD"/wheel/xtts_prep-*.whl)
fi
[ ${#whl[@]} -eq 1 ] || die "expected one wheel in $BUILD/wheel, found ${#whl[@]}"

# ---- the root: python3, its standard library, numpy, and what their ELF files load ----------
pybin=$(readlink -f "$PY")
stdlib=$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])')
numpy_dir=$("$PY" -c 'import numpy, os; print(os.path.dirname(numpy.__file__))')
numpy_site=$(dirname "$numpy_dir")
numpy_libs=$(ls -d "$numpy_site"/numpy.libs 2>/dev/null || true)
mkdir -p "$R/usr/bin" "$R$stdlib" "$R$numpy_site" "$R/site" "$R/tmp"
cp "$pybin" "$R/usr/bin/python3"
(cd "$stdlib" && tar --exclude=__pycache__ --exclude=./test --exclude=./idlelib --exclude=./tkinter \
    --exclude=./site-packages --exclude=./dist-packages -cf - .) | (cd "$R$stdlib" && tar -xf -)
cp -a "$numpy_dir" "$R$numpy_site/"
[ -z "$numpy_libs" ] || cp -a "$numpy_libs" "$R$numpy_site/"
copy_deps() {   # the shared libraries ELF file $1 loads, at the same paths in the root
  local f=$1 lib
  for lib in $(ldd "$f" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'); do
    [ -e "$R$lib" ] && continue
    mkdir -p "$R$(dirname "$lib")"
    cp -L "$lib" "$R$lib"
  done
}
copy_deps "$pybin"
# and the whole C library (libc6 is on every Debian machine: libpthread.so.0, libdl.so.2 ...)
for lib in $(dpkg -L libc6 2>/dev/null | grep -E '/lib[^/]*\.so(\.[0-9]+)*$' || true) /lib64/ld-linux-x86-64.so.2; do
  [ -e "$lib" ] && [ ! -e "$R$lib" ] || continue
  mkdir -p "$R$(dirname "$lib")"; cp -L "$lib" "$R$lib"
done
while IFS= read -r f; do copy_deps "$f"; done < <(find "$R$stdlib" "$R$numpy_site" -name '*.so*' -type f | sed "s|^$R||")
# what the root must not hold (the point of the test)
found=$(find "$R" \( -name 'liblmdb*' -o -name 'libzstd*' -o -name 'libjansson*' -o -name 'libsndfile*' \
                     -o -name 'libfftw*' -o -name 'lmdb' -o -name 'zstandard' \) -print | sed "s|^$R||" | tr '\n' ' ')
[ -z "$found" ] || die "the root holds $found (copied as a dependency of python3 or numpy): not a clean root"

# ---- the wheel, a cache, and the reference batches --------------------------------------------
"$PY" -m pip install -q --root-user-action=ignore --no-index --no-deps --target "$R/site" "${whl[0]}"
"$BUILD/tests/test_reader" --make-cache "$R/c" 40 15 fp16 >/dev/null
bash "$HERE/scripts/make-demo-dataset.sh" "$T/data" >/dev/null 2>&1
"$BUILD/bin/xtts-tokenize" --tokenizer bytes "$T/data/metadata.csv" > "$T/tok.tsv" 2>/dev/null || [ $? -eq 3 ]
"$BUILD/bin/xtts-melcache" --out "$R/audio" --audio int16 -q "$T/tok.tsv" 2>/dev/null || [ $? -eq 3 ]
READS=$HERE/python/tests/backend_reads.py
PYTHONPATH="$HERE/python" "$PY" "$READS" --make-codes "$R/audio" >/dev/null
PYTHONPATH="$HERE/python" "$PY" "$READS" --oracle "$T/ref.json" "$R/c" "$R/audio" >/dev/null   # the tests' oracle
cp "$READS" "$R/backend_reads.py"

cat > "$R/check.py" <<'PYEOF'
import sys
for m in ("lmdb", "zstandard"):
    try:
        __import__(m)
        sys.exit("module %s imports in the clean root" % m)
    except ImportError:
        pass
import xtts_prep
from xtts_prep import CacheError, XttsCache
assert XttsCache("/c").backend == "c"
try:
    XttsCache("/c", backend="python")
    sys.exit("backend='python' accepted: the package has one decoder")
except ValueError as e:
    assert "oracle" in str(e), str(e)
print("backend", XttsCache("/audio").backend, xtts_prep.__name__)
PYEOF
in_root() { env -i PATH=/usr/bin PYTHONPATH=/site PYTHONDONTWRITEBYTECODE=1 "$(command -v chroot)" "$R" "$@"; }
out=$(in_root /usr/bin/python3 /check.py 2>&1) || { echo "$out"; die "the wheel in the clean root"; }
[ "$out" = "backend c xtts_prep" ] || { echo "$out"; die "the wheel in the clean root: $out"; }
out=$(in_root /usr/bin/python3 /backend_reads.py /reads.json /c /audio 2>&1) || { echo "$out"; die "the reads in the clean root"; }
[ "$out" = "reader: library" ] || die "the reads in the clean root: $out"
if ! cmp -s "$T/ref.json" "$R/reads.json"; then
  diff "$T/ref.json" "$R/reads.json" > "$T/diff.txt" || true; head -n 20 "$T/diff.txt" >&2
  die "the wheel in the clean root reads otherwise than the tests' oracle outside"
fi
grep -q '"audio_codes"' "$R/reads.json" || die "no audio codes were read in the clean root"
lib=$R/site/xtts_prep/libxtts-reader.so
needed=$(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
echo "python_wheel_clean_root: ok ($(basename "${whl[0]}"): backend c in a root without LMDB, zstd, jansson, libsndfile, FFTW, every read equal to the tests' oracle's; NEEDED $needed)"
