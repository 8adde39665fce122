#!/usr/bin/env bash
# The xtts_prep wheel with the reader's library inside (make wheel; docs/python-reader.md,
# "Install"), built offline: Debian's setuptools and wheel, no build isolation, no index.
#   scripts/build-wheel.sh PYTHON LIBRARY OUTDIR STAGE
# copies python/ (pyproject.toml, setup.py, xtts_prep/) into STAGE, puts LIBRARY (without
# its debug sections) next to the modules as xtts_prep/libxtts-reader.so and every library it
# needs beyond glibc into xtts_prep/_libs/ (LIBRARY finds them there: its RUNPATH is
# $ORIGIN/_libs, as auditwheel repairs a wheel), then checks what auditwheel checks: every
# library the staged files need is glibc's or carried, and the newest glibc symbol version they
# need (GLIBC_2.NN, from their version-needs sections) names the tag, with the architecture
# from LIBRARY's ELF header, not this machine's: py3-none-manylinux_2_NN_<arch> (never below
# 2_17, the oldest tag pip knows for aarch64; there it also carries the legacy alias
# manylinux2014_<arch> that pip before 20.3 reads). It builds the wheel into OUTDIR (replacing
# an older xtts_prep wheel there) and prints its path.
# Environment: CC, the compiler LIBRARY was built with (default gcc): a cross compiler
# (aarch64-linux-gnu-gcc) finds the carried libraries in its own search path and names the
# objcopy for that architecture; LIBDIRS, directories (colon-separated) to take the carried
# libraries from instead, where LIBRARY was built in another root (make wheel-manylinux builds
# it on Debian 11 and packs it here: Debian 11's setuptools predates pyproject.toml's metadata).
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
CC=${CC:-gcc}
OBJCOPY=$($CC -print-prog-name=objcopy)
"$OBJCOPY" --strip-debug "$LIB" "$STAGE/xtts_prep/libxtts-reader.so"
chmod 755 "$STAGE/xtts_prep/libxtts-reader.so"
# the NEEDED entries of a file, one a line
needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }
is_glibc() { case $1 in libc.so.*|libm.so.*|libpthread.so.*|libdl.so.*|librt.so.*|ld-linux*.so.*) return 0;; esac; return 1; }
for so in $(needed "$LIB"); do
  is_glibc "$so" && continue
  if [ -n "${LIBDIRS:-}" ]; then
    path=; IFS=: read -ra dirs <<<"$LIBDIRS"
    for d in "${dirs[@]}"; do [ -f "$d/$so" ] && { path=$d/$so; break; }; done
  else
    path=$($CC -print-file-name="$so")   # the library the link used (the bare name when none)
  fi
  [ "${path#/}" != "$path" ] && [ -f "$path" ] || die "$LIB needs $so, which $CC does not find"
  for dep in $(needed "$path"); do is_glibc "$dep" || die "$so needs $dep besides glibc: not bundled"; done
  mkdir -p "$STAGE/xtts_prep/_libs"
  "$OBJCOPY" --strip-debug "$path" "$STAGE/xtts_prep/_libs/$so"
  chmod 755 "$STAGE/xtts_prep/_libs/$so"
done

# ---- what auditwheel checks: the libraries needed, the glibc symbol versions, the architecture
elfs=("$STAGE/xtts_prep/libxtts-reader.so")
if [ -d "$STAGE/xtts_prep/_libs" ]; then elfs+=("$STAGE"/xtts_prep/_libs/*); fi
glibc_minor=17
for f in "${elfs[@]}"; do
  for so in $(needed "$f"); do
    is_glibc "$so" || [ -f "$STAGE/xtts_prep/_libs/$so" ] || die "$(basename "$f") needs $so: neither glibc's nor carried"
  done
  # the version-needs section: "Name: GLIBC_2.34  Flags: none  Version: 5" under "File: libc.so.6"
  for v in $(readelf -V -W "$f" | sed -n 's/.*Name: GLIBC_2\.\([0-9][0-9]*\).*/\1/p'); do
    if [ "$v" -gt "$glibc_minor" ]; then glibc_minor=$v; fi
  done
  if readelf -V -W "$f" | grep -Eq 'Name: (GLIBCXX|CXXABI)_'; then die "$(basename "$f") needs libstdc++: not carried"; fi
done
case $(readelf -h "$LIB" | sed -n 's/^ *Machine: *//p') in
  "Advanced Micro Devices X86-64") arch=x86_64 ;;
  AArch64) arch=aarch64 ;;
  *) die "$LIB: an architecture this script does not tag ($(readelf -h "$LIB" | sed -n 's/^ *Machine: *//p'))" ;;
esac
platform=manylinux_2_${glibc_minor}_$arch
if [ "$glibc_minor" -le 17 ]; then platform=$platform.manylinux2014_$arch; fi
echo "build-wheel: $(basename "$LIB") and its carried libraries need glibc 2.$glibc_minor ($arch): $platform" >&2

rm -f "$OUT"/xtts_prep-*.whl
XTTS_WHEEL_PLATFORM=$platform "$PY" -m pip wheel -q --no-build-isolation --no-deps --no-index --no-cache-dir -w "$OUT" "$STAGE" >&2
shopt -s nullglob
whl=("$OUT"/xtts_prep-*.whl)
[ ${#whl[@]} -eq 1 ] || die "expected one wheel in $OUT, found ${#whl[@]}"
[ "$(basename "${whl[0]}")" = "xtts_prep-$(cat "$HERE/VERSION")-py3-none-$platform.whl" ] ||
  die "${whl[0]}: not tagged py3-none-$platform"
"$PY" - "${whl[0]}" <<'PYEOF' || die "${whl[0]}: xtts_prep/libxtts-reader.so missing"
import sys, zipfile
sys.exit("xtts_prep/libxtts-reader.so" not in zipfile.ZipFile(sys.argv[1]).namelist())
PYEOF
echo "${whl[0]}"
