#!/usr/bin/env bash
# The xtts_prep wheel with the reader's library inside (make wheel; docs/python-reader.md,
# "Install"), built offline: Debian's setuptools and wheel, no build isolation, no index.
#   scripts/build-wheel.sh PYTHON LIBRARY OUTDIR STAGE
# copies python/ (pyproject.toml, setup.py, xtts_prep/) into STAGE, puts LIBRARY (without
# its debug sections) next to the modules as xtts_prep/libxtts-reader.so and every library it
# needs beyond glibc into xtts_prep/_libs/ (LIBRARY finds them there: its RUNPATH is
# $ORIGIN/_libs, as auditwheel repairs a wheel), builds the wheel into OUTDIR (replacing an
# older xtts_prep wheel there) and checks that it carries the library and a manylinux tag for
# this machine's glibc (python/setup.py). Prints the wheel's path.
set -euo pipefail
PY=$1 LIB=$2 OUT=$3 STAGE=$4
HERE=$(cd "$(dirname "$0")/.." && pwd)
die() { echo "build-wheel: $*" >&2; exit 1; }
[ -f "$LIB" ] || die "$LIB not built"
"$PY" -c 'import setuptools, wheel' 2>/dev/null ||
  die "$PY lacks setuptools or wheel (Debian: apt-get install python3-setuptools python3-wheel)"
rm -rf "$STAGE"
mkdir -p "$STAGE/xtts_prep" "$OUT"
cp "$HERE/python/pyproject.toml" "$HERE/python/setup.py" "$STAGE/"
cp "$HERE"/python/xtts_prep/*.py "$HERE/python/xtts_prep/py.typed" "$STAGE/xtts_prep/"
objcopy --strip-debug "$LIB" "$STAGE/xtts_prep/libxtts-reader.so"
chmod 755 "$STAGE/xtts_prep/libxtts-reader.so"
# the NEEDED entries of a file, one a line
needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }
is_glibc() { case $1 in libc.so.*|libm.so.*|libpthread.so.*|libdl.so.*|librt.so.*|ld-linux*.so.*) return 0;; esac; return 1; }
resolved=$(ldd "$LIB")
for so in $(needed "$LIB"); do
  is_glibc "$so" && continue
  path=$(awk -v n="$so" '$1 == n && $2 == "=>" { print $3 }' <<<"$resolved")
  [ -n "$path" ] && [ -f "$path" ] || die "$LIB needs $so, which ldd does not find"
  for dep in $(needed "$path"); do is_glibc "$dep" || die "$so needs $dep besides glibc: not bundled"; done
  mkdir -p "$STAGE/xtts_prep/_libs"
  objcopy --strip-debug "$path" "$STAGE/xtts_prep/_libs/$so"
  chmod 755 "$STAGE/xtts_prep/_libs/$so"
done
rm -f "$OUT"/xtts_prep-*.whl
"$PY" -m pip wheel -q --no-build-isolation --no-deps --no-index --no-cache-dir -w "$OUT" "$STAGE" >&2
shopt -s nullglob
whl=("$OUT"/xtts_prep-*.whl)
[ ${#whl[@]} -eq 1 ] || die "expected one wheel in $OUT, found ${#whl[@]}"
case $(basename "${whl[0]}") in
  *-py3-none-manylinux_2_*.whl) ;;
  *) die "${whl[0]}: not tagged py3-none-manylinux_2_NN_<arch>" ;;
esac
"$PY" - "${whl[0]}" <<'PYEOF' || die "${whl[0]}: xtts_prep/libxtts-reader.so missing"
import sys, zipfile
sys.exit("xtts_prep/libxtts-reader.so" not in zipfile.ZipFile(sys.argv[1]).namelist())
PYEOF
echo "${whl[0]}"
