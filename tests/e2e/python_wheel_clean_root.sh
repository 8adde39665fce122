#!/usr/bin/env bash
# The wheel of `make wheel` on a machine with Python and numpy and nothing else: in a root made
# here of python3, its standard library, numpy and the libraries those load (no liblmdb0,
# libzstd1, libjansson4, libsndfile1 or libfftw3, no py-lmdb, no zstandard), entered with
# chroot, the wheel's package (installed with pip --target) imports, reads the cache with
# backend "c", and its batches equal those of the pure-Python reader outside; a record read by
# index (the pure-Python reader's job) raises CacheError naming the "fallback" extra.
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
idx="3,0,39,17,3"
env -u XTTS_PREP_LIB PYTHONPATH="$HERE/python" "$PY" -c '
import sys, numpy as np
from xtts_prep import XttsCache
b = XttsCache(sys.argv[1], backend="python").read_batch([int(i) for i in sys.argv[2].split(",")])
np.savez(sys.argv[3], **{k: np.asarray(v) for k, v in b.items()})' "$R/c" "$idx" "$R/ref.npz"

cat > "$R/check.py" <<'PYEOF'
import sys
import numpy as np
for m in ("lmdb", "zstandard"):
    try:
        __import__(m)
        sys.exit("module %s imports in the clean root" % m)
    except ImportError:
        pass
import xtts_prep
from xtts_prep import CacheError, XttsCache
c = XttsCache("/c")
assert c.backend == "c", c.backend
a = c.read_batch([int(i) for i in sys.argv[1].split(",")])
ref = np.load("/ref.npz")
assert sorted(a) == sorted(ref.files), (sorted(a), ref.files)
assert all(np.array_equal(np.asarray(a[k]), ref[k]) for k in a)
try:
    c.get(0)
    sys.exit("get() read a record without py-lmdb")
except CacheError as e:
    assert "xtts_prep[fallback]" in str(e), str(e)
print("backend", c.backend, xtts_prep.__name__)
PYEOF
out=$(env -i PATH=/usr/bin PYTHONPATH=/site PYTHONDONTWRITEBYTECODE=1 "$(command -v chroot)" "$R" /usr/bin/python3 /check.py "$idx" 2>&1) \
  || { echo "$out"; die "the wheel in the clean root"; }
[ "$out" = "backend c xtts_prep" ] || { echo "$out"; die "the wheel in the clean root: $out"; }
lib=$R/site/xtts_prep/libxtts-reader.so
needed=$(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
echo "python_wheel_clean_root: ok ($(basename "${whl[0]}"): backend c in a root without LMDB, zstd, jansson, libsndfile, FFTW; NEEDED $needed)"
