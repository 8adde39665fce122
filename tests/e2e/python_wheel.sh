#!/usr/bin/env bash
# The xtts_prep package finds libxtts-reader.so wherever it is installed, and says so when it
# cannot (docs/python-reader.md, "Install" and "The C library"):
#   1. the wheel of `make wheel` (built here when $BUILD/wheel has none) installed into a
#      fresh venv made with --system-site-packages: carries the library, a manylinux tag for
#      the newest glibc symbol version its files need, and
#      `python -m xtts_prep --about` says backend c with the library inside the venv;
#      read_batch there equals the tests' oracle's (python/tests/xtts_oracle)
#   2. the source tree (PYTHONPATH=python, nothing else): backend c from build/lib (when BUILD
#      is the source tree's build/)
#   3. make install's recipe into DESTDIR=... PREFIX=/opt/xtts (install-built, on this build):
#      backend c from PREFIX/lib; of the C headers only xtts-prep/reader_api.h, with
#      xtts-reader.pc, and a C program built with them reads the cache
#   4. no library: XTTS_PREP_LIB at an empty directory, XTTS_PREP_LIB=none, and a copy of the
#      package outside the source tree with no library anywhere: `import xtts_prep` fails with
#      one line naming why, where it looked and what to build or install (the package has no
#      second decoder to fall back to); backend="python" is refused
set -euo pipefail
source "$(dirname "$0")/faults_lib.bash"
need_py_reader_modules "Debian python3-numpy python3-lmdb python3-zstandard"
LIB=$BUILD/lib/libxtts-reader.so
[ -f "$LIB" ] || { echo "skip: $LIB not built"; exit 0; }
if grep -q 'lib[a-z]*san' <<< "$(ldd "$LIB")"; then
  echo "skip: $LIB is a sanitizer build (an uninstrumented interpreter cannot load it)"; exit 0
fi
# a make run from this test starts clean, not with the options of the make that runs the tests
clean_make() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MAKEOVERRIDES make -s --no-print-directory -C "$HERE" "$@"; }
# the --about line KEY: VALUE of a run; runs in $T, without the caller's PYTHONPATH and XTTS_PREP_LIB
field() { sed -n "s/^$1: //p"; }
run_py() { (cd "$T" && env -u PYTHONPATH -u XTTS_PREP_LIB -u LD_LIBRARY_PATH "$@"); }
"$BUILD/tests/test_reader" --make-cache "$T/c" 40 15 fp16 >/dev/null
cat > "$T/same.py" <<'PYEOF'
import sys, warnings
import numpy as np
warnings.simplefilter("error")   # no FallbackWarning where the library is found
from xtts_prep import XttsCache
sys.path.insert(0, sys.argv[2])
import xtts_oracle   # the tests' pure-Python reader
c, p = XttsCache(sys.argv[1]), xtts_oracle.XttsCache(sys.argv[1])
assert c.backend == "c", c.backend
idx = [3, 0, 39, 17, 3]
a, b = c.read_batch(idx), p.read_batch(idx)
assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
print("same")
PYEOF

# 1. the wheel in a fresh venv
shopt -s nullglob
whl=("$BUILD"/wheel/xtts_prep-*.whl)
if [ ${#whl[@]} -eq 0 ]; then
  clean_make BUILD="$BUILD" PYTHON="$PY" wheel >/dev/null
  whl=("$BUILD"/wheel/xtts_prep-*.whl)
fi
[ ${#whl[@]} -eq 1 ] || die "expected one wheel in $BUILD/wheel, found ${#whl[@]}"
name=$(basename "${whl[0]}")
case $name in
  xtts_prep-*-py3-none-manylinux_2_*.whl) ;;
  *) die "$name: not tagged py3-none-manylinux_2_NN_<arch>" ;;
esac
# the listing is taken whole first: grep -q stops reading at its match, and under pipefail
# the lister's broken pipe would fail the line
listing=$("$PY" -m zipfile -l "${whl[0]}")
grep -q '^xtts_prep/libxtts-reader.so ' <<<"$listing" || die "$name lacks xtts_prep/libxtts-reader.so"
# the tag names the newest glibc symbol version that the wheel's files need (auditwheel's rule,
# from their version-needs sections; 2_17 at the least), not the glibc of the machine
mkdir -p "$T/unzipped"
"$PY" -m zipfile -e "${whl[0]}" "$T/unzipped"
need=$(for f in "$T"/unzipped/xtts_prep/libxtts-reader.so "$T"/unzipped/xtts_prep/_libs/*; do
         [ -f "$f" ] && readelf -V -W "$f"; done | sed -n 's/.*Name: GLIBC_2\.\([0-9]*\).*/\1/p' | sort -n | tail -n 1)
[ "${need:-0}" -ge 17 ] || need=17
case $name in *-manylinux_2_"$need"_*) ;; *) die "$name: its files need glibc 2.$need, the tag says otherwise" ;; esac
"$PY" -m venv --system-site-packages "$T/venv" 2>/dev/null ||
  { rm -rf "$T/venv"; "$PY" -m venv --system-site-packages --without-pip "$T/venv"; }   # no ensurepip: Debian's pip
run_py "$T/venv/bin/python" -m pip install -q --no-index --no-deps "${whl[0]}"
about=$(run_py "$T/venv/bin/python" -m xtts_prep --about)
echo "$about"
[ "$(echo "$about" | field backend)" = c ] || die "wheel in a venv: backend is not c"
vlib=$(echo "$about" | field library)
case $vlib in "$T"/venv/lib/python3*/site-packages/xtts_prep/libxtts-reader.so) ;; *) die "wheel: library $vlib";; esac
if ldd "$vlib" | grep 'not found'; then die "$vlib: a dependency is missing"; fi
[ "$(echo "$about" | field 'library version')" = "$(cat "$HERE/VERSION") (ABI 1)" ] || die "wheel: library version"
[ "$(run_py "$T/venv/bin/python" "$T/same.py" "$T/c" "$HERE/python/tests")" = same ]

# 2. the source tree
if [ "$BUILD" -ef "$HERE/build" ]; then
  about=$(run_py env PYTHONPATH="$HERE/python" "$PY" -m xtts_prep --about)
  [ "$(echo "$about" | field backend)" = c ] || { echo "$about"; die "source tree: backend is not c"; }
  [ "$(echo "$about" | field library)" -ef "$LIB" ] || { echo "$about"; die "source tree: not build/lib's library"; }
  [ "$(run_py env PYTHONPATH="$HERE/python" "$PY" "$T/same.py" "$T/c" "$HERE/python/tests")" = same ]
else
  echo "skip: BUILD=$BUILD is not the source tree's build/ (the package looks in build/lib)"
fi

# 3. make install's recipe, into a DESTDIR
clean_make BUILD="$BUILD" DESTDIR="$T/root" PREFIX=/opt/xtts install-built >/dev/null
site=$(echo "$T"/root/opt/xtts/lib/python3*/dist-packages)
[ -f "$site/xtts_prep/__init__.py" ] || die "make install: no package in $site"
about=$(run_py env PYTHONPATH="$site" "$PY" -m xtts_prep --about)
[ "$(echo "$about" | field backend)" = c ] || { echo "$about"; die "make install: backend is not c"; }
[ "$(echo "$about" | field library)" = "$T/root/opt/xtts/lib/libxtts-reader.so" ] || { echo "$about"; die "make install: library"; }
[ "$(run_py env PYTHONPATH="$site" "$PY" "$T/same.py" "$T/c" "$HERE/python/tests")" = same ]
# the C face it installs: reader_api.h alone, and xtts-reader.pc, enough to build a C reader
inc=$(cd "$T/root/opt/xtts/include" && find . -type f | sort | tr '\n' ' ')
[ "$inc" = "./xtts-prep/reader_api.h " ] || die "make install: headers $inc, want xtts-prep/reader_api.h alone"
[ ! -e "$T/root/opt/xtts/lib/libxtts.a" ] || die "make install: installs libxtts.a"
pc=$T/root/opt/xtts/lib/pkgconfig/xtts-reader.pc
[ -f "$pc" ] || die "make install: no $pc"
printf '#include <stdio.h>\n#include <xtts-prep/reader_api.h>\nint main(int c, char **v) { (void)c;\n'\
'  xtts_api_cache *h = xtts_api_open(v[1]); if (!h || xtts_api_abi_version() != XTTS_API_ABI_VERSION) return 1;\n'\
'  printf("%%llu\\n", (unsigned long long)xtts_api_count(h)); xtts_api_close(h); return 0; }\n' > "$T/count.c"
flags=$(PKG_CONFIG_PATH="$(dirname "$pc")" pkg-config --define-variable=prefix="$T/root/opt/xtts" --cflags --libs xtts-reader)
gcc -std=c17 -Wall -Werror "$T/count.c" $flags -o "$T/count" || die "a C reader does not build against the installed face"
[ "$(LD_LIBRARY_PATH="$T/root/opt/xtts/lib" "$T/count" "$T/c")" = 40 ] || die "the C reader built against the install"

# 4. no library: import fails in one line saying what to build or install
mkdir -p "$T/empty" "$T/outside"
cp -r "$HERE/python/xtts_prep" "$T/outside/"
rm -f "$T/outside/xtts_prep/libxtts-reader.so"
check_missing() {   # WHAT env...
  local what=$1; shift
  if run_py env "$@" "$PY" -c 'import xtts_prep' > "$T/out" 2> "$T/err"; then die "$what: the package imported"; fi
  last=$(tail -n 1 "$T/err")
  case $last in "ImportError: xtts_prep needs the C reader library libxtts-reader.so, which "*) ;;
    *) cat "$T/err"; die "$what: not the one line saying what is missing" ;; esac
  grep -q 'make wheel' <<< "$last" && grep -q 'XTTS_PREP_LIB' <<< "$last" && grep -q '`make`' <<< "$last" ||
    die "$what: the line names no fix: $last"
}
check_missing "XTTS_PREP_LIB=empty dir" PYTHONPATH="$HERE/python" XTTS_PREP_LIB="$T/empty"
grep -q "not found in $T/empty/libxtts-reader.so" "$T/err" || die "the message does not name $T/empty"
check_missing "XTTS_PREP_LIB=none" PYTHONPATH="$HERE/python" XTTS_PREP_LIB=none
grep -q "XTTS_PREP_LIB disables" "$T/err" || die "XTTS_PREP_LIB=none: not said"
if run_py env PYTHONPATH="$T/outside" "$PY" -c 'import xtts_prep' 2>/dev/null; then
  echo "skip: a libxtts-reader.so is installed on this machine: the package outside the tree is not checked"
else
  check_missing "outside the source tree" PYTHONPATH="$T/outside"
  for p in "$T/outside/xtts_prep/libxtts-reader.so" /usr/lib/libxtts-reader.so /usr/local/lib/libxtts-reader.so "the loader's search path"; do
    grep -qF "$p" "$T/err" || die "the message does not name $p"
  done
fi
# backend="python" is refused: the pure-Python reader is the tests' oracle, not the package's
run_py env PYTHONPATH="$HERE/python" "$PY" -c \
  'import sys; from xtts_prep import XttsCache; XttsCache(sys.argv[1], backend="python")' "$T/c" > "$T/out" 2> "$T/err" &&
  die "backend=python was accepted"
grep -q "ValueError: backend 'python'.*oracle" "$T/err" || { cat "$T/err"; die "backend=python: not said why"; }
echo "ok: $name"
