#!/usr/bin/env bash
# make wheel-check: the xtts_prep wheels where people install them. For each Debian root named
# (default: 11 "bullseye" with Python 3.9, 12 "bookworm" with 3.11, 13 "trixie" with 3.13; all
# amd64), made fresh once by scripts/dev/debian-root.sh with python3, python3-numpy and
# python3-venv and nothing else, and for each WHEEL of the root's architecture: a venv
# (--system-site-packages, for Debian's numpy), `pip install --no-index WHEEL`, and pip's
# answer printed. pip must install a wheel exactly when its manylinux_2_NN tag is at most the
# root's glibc; where it installs, every module of the package must import on the root's Python,
# the package must read with backend "c" with its own library and the libraries the wheel
# carries (the process's maps say from where), and every public read
# (python/tests/backend_reads.py) must equal the pure-Python reader's here, on a test_reader
# cache.
#
#   wheel-check.sh [--roots "SUITE:ARCH ..." | --root ROOT] WHEEL...
#
# --root: one root made before, with python3, python3-numpy and python3-venv (make test-arm64's,
# which also holds the arm64 -dev packages: there the maps show the wheel's own libraries used).
#
# Environment: BUILD (absolute; its tests/test_reader makes the cache), PYTHON (here; with
# py-lmdb and zstandard for the reference reads), XTTS_ROOTS (debian-root.sh). Needs root:
# where a root cannot be made it says "skip" and exits 0 (2 with WHEEL_CHECK_STRICT=1).
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
roots="bullseye:amd64 bookworm:amd64 trixie:amd64"
if [ "${1:-}" = --roots ]; then roots=$2; shift 2; fi
if [ "${1:-}" = --root ]; then roots=path:$2; shift 2; fi
[ $# -gt 0 ] || { echo "usage: wheel-check.sh [--roots \"SUITE:ARCH ...\" | --root ROOT] WHEEL..." >&2; exit 1; }
BUILD=${BUILD:-$here/build}
PY=${PYTHON:-/usr/bin/python3}
die() { echo "wheel-check: FAIL: $*" >&2; exit 1; }
skip() {
  echo "wheel-check: skip: $*"
  [ "${WHEEL_CHECK_STRICT:-0}" = 1 ] && exit 2
  exit 0
}
[ "$(id -u)" -eq 0 ] || skip "the Debian roots need root (debootstrap, chroot)"
[ -x "$BUILD/tests/test_reader" ] || die "$BUILD/tests/test_reader not built (make all)"
"$PY" -c 'import numpy, lmdb, zstandard' 2>/dev/null || die "$PY lacks numpy, lmdb or zstandard (the reference reads)"

T=$(mktemp -d /var/tmp/xtts-wheel-check.XXXXXX)
trap 'rm -rf "$T"' EXIT
"$BUILD/tests/test_reader" --make-cache "$T/c" 40 15 fp16 >/dev/null
PYTHONPATH="$here/python" "$PY" "$here/python/tests/backend_reads.py" --oracle "$T/ref.json" "$T/c" >/dev/null
cat > "$T/where.py" <<'PYEOF'
"""backend c, and the reader's library and the libraries the wheel carries mapped from the venv."""
import os, sys
import xtts_prep
from xtts_prep import XttsCache
c = XttsCache(sys.argv[1])
assert c.backend == "c", c.backend
c.read_batch([0, 1])
pkg = os.path.dirname(os.path.realpath(xtts_prep.__file__))
carried = ["libxtts-reader.so"] + sorted(os.listdir(os.path.join(pkg, "_libs")))
maps = {line.split()[-1] for line in open("/proc/self/maps") if "/" in line}
for name in carried:
    where = sorted(p for p in maps if os.path.basename(p) == name)
    assert where and all(os.path.realpath(p).startswith(pkg + "/") for p in where), (name, where)
# every module of the package imports on this Python (only torch and Coqui's TTS may be absent)
import importlib, pkgutil
mods = sorted(m.name for m in pkgutil.iter_modules(xtts_prep.__path__) if m.name.isidentifier() and m.name != "__main__")
for m in mods:
    try:
        importlib.import_module("xtts_prep." + m)
    except ModuleNotFoundError as e:
        assert e.name in ("torch", "TTS"), (m, e)
print("python %d.%d.%d, backend c, %d records, %d modules import; maps %s from the wheel"
      % (sys.version_info[:3] + (len(c), len(mods), " ".join(carried))))
PYEOF

glibc_of_tag() {   # WHEEL: the NN of its manylinux_2_NN tag
  basename "$1" | sed -n 's/.*-manylinux_2_\([0-9]*\)_.*/\1/p'
}
arch_of_tag() { basename "$1" .whl | sed -n 's/.*_\(x86_64\|aarch64\)$/\1/p'; }

for r in $roots; do
  in_root() { bash "$here/scripts/dev/debian-root.sh" run "$root" "$@"; }
  if [ "${r#path:}" != "$r" ]; then   # --root: a root made before (it has python3, numpy and venv)
    root=${r#path:}
    suite=$(. "$root/etc/os-release" && echo "$VERSION_CODENAME") arch=$(in_root dpkg --print-architecture)
  else
    suite=${r%%:*} arch=${r#*:}
    root=$(bash "$here/scripts/dev/debian-root.sh" make "$suite" "$arch" "wheel-check-$suite-$arch" \
             python3 python3-numpy python3-venv) || skip "the Debian $suite ($arch) root cannot be made here"
  fi
  case $arch in amd64) march=x86_64 ;; arm64) march=aarch64 ;; *) die "$r: arch amd64 or arm64" ;; esac
  glibc=$(in_root /usr/bin/python3 -c 'import os; print(os.confstr("CS_GNU_LIBC_VERSION").split()[1])')
  pyver=$(in_root /usr/bin/python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
  rm -rf "$root/check"; mkdir -p "$root/check"
  cp -r "$T/c" "$T/where.py" "$here/python/tests/backend_reads.py" "$root/check/"
  for whl in "$@"; do
    [ "$(arch_of_tag "$whl")" = "$march" ] || continue
    name=$(basename "$whl")
    cp "$whl" "$root/check/"
    rm -rf "$root/check/venv"
    in_root /usr/bin/python3 -m venv --system-site-packages /check/venv || die "$suite: python3 -m venv failed"
    rc=0
    answer=$(in_root /check/venv/bin/python -m pip install --no-index --disable-pip-version-check "/check/$name" 2>&1) || rc=$?
    answer=$(grep -E 'Successfully installed|ERROR' <<<"$answer" | head -n 1 || true)
    echo "Debian $suite ($arch, glibc $glibc, Python $pyver): pip install --no-index $name: ${answer:-exit $rc}"
    want=$(glibc_of_tag "$whl")
    if [ "$want" -le "${glibc#2.}" ]; then
      [ $rc -eq 0 ] || die "$suite: pip refused $name, which needs glibc 2.$want only"
      out=$(in_root /check/venv/bin/python /check/where.py /check/c 2>&1) || { echo "$out"; die "$suite: $name does not read"; }
      echo "  $out"
      out=$(in_root /check/venv/bin/python /check/backend_reads.py --without-fallback /check/reads.json /check/c 2>&1) ||
        { echo "$out"; die "$suite: the reads of $name"; }
      [ "$out" = "reader: library" ] || die "$suite: the reads of $name: $out"
      cmp -s "$T/ref.json" "$root/check/reads.json" ||
        { diff "$T/ref.json" "$root/check/reads.json" | head -n 20 >&2; die "$suite: $name reads otherwise than the tests' oracle (the pure-Python reader)"; }
      echo "  every public read equal to the tests' oracle's (the pure-Python reader)"
    else
      [ $rc -ne 0 ] || die "$suite: pip installed $name, tagged for glibc 2.$want, on glibc $glibc"
      in_root /check/venv/bin/python -c 'import xtts_prep' 2>/dev/null && die "$suite: xtts_prep imports after pip refused"
      echo "  refused, as its tag says (it needs glibc 2.$want)"
    fi
  done
done
echo "wheel-check: ok"
