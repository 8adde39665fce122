#!/usr/bin/env bash
# make wheel-manylinux: the xtts_prep wheel for older systems. Its library is built on Debian 11
# "bullseye" (glibc 2.31), in a debootstrap'ed root (scripts/dev/debian-root.sh) with the
# reader's three libraries (LMDB, zstd, jansson): `make wheel-library` there. The wheel is then
# packed here by scripts/build-wheel.sh (Debian 11's setuptools predates pyproject.toml's
# metadata; the package's Python files do not depend on the system), carrying Debian 11's
# liblmdb and libjansson, and tagged for the newest glibc symbol version they all need.
#
#   wheel-manylinux.sh OUTDIR [ARCH...]      ARCH: amd64 (default) and/or arm64
#
# arm64 is cross-built in the same root with Debian 11's cross compiler (gcc-aarch64-linux-gnu)
# and its arm64 libraries (multiarch liblmdb-dev:arm64 ...). The source is the working tree's
# files that git knows or does not ignore, copied into the root. The wheels go to OUTDIR
# (replacing the xtts_prep wheels there); their paths are printed. Environment: PYTHON (default
# /usr/bin/python3, with setuptools and wheel). Needs root; exit 2 where the root cannot be made
# (debian-root.sh says why).
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
out=$1; shift
arches=("$@"); [ ${#arches[@]} -gt 0 ] || arches=(amd64)
die() { echo "wheel-manylinux: $*" >&2; exit 1; }
py=${PYTHON:-/usr/bin/python3}
# one root for both architectures (the cross compiler and the arm64 libraries are there even
# when only amd64 is asked for: CI builds both, and a root is made once)
pkgs=(make gcc libc6-dev pkg-config liblmdb-dev libzstd-dev libjansson-dev
      gcc-aarch64-linux-gnu libc6-dev-arm64-cross liblmdb-dev:arm64 libzstd-dev:arm64 libjansson-dev:arm64)
for a in "${arches[@]}"; do
  case $a in amd64|arm64) ;; *) die "ARCH $a: amd64 or arm64" ;; esac
done
root=$(bash "$here/scripts/dev/debian-root.sh" make bullseye amd64 wheel-build-bullseye "${pkgs[@]}")
in_root() { bash "$here/scripts/dev/debian-root.sh" run "$root" "$@"; }

rm -rf "$root/src"
mkdir -p "$root/src"
(cd "$here" && git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf -) | tar -xf - -C "$root/src"
mkdir -p "$out"
rm -f "$out"/xtts_prep-*.whl
for a in "${arches[@]}"; do
  case $a in
    amd64) cc=gcc; triplet=x86_64-linux-gnu; env=() ;;
    arm64) cc=aarch64-linux-gnu-gcc; triplet=aarch64-linux-gnu
           env=(PKG_CONFIG_LIBDIR=/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig) ;;
  esac
  # PKGS_CHECK: the root holds the reader's libraries only (no FFT or audio library)
  in_root env "${env[@]}" make -s -C /src BUILD="/build-$a" CC="$cc" CUDA=0 PKGS_CHECK="libzstd jansson" \
    wheel-library >&2 || die "make wheel-library ($a) failed in the Debian 11 root $root"
  stage=$(mktemp -d)
  whl=$(CC=$cc LIBDIRS="$root/usr/lib/$triplet:$root/lib/$triplet" \
    bash "$here/scripts/build-wheel.sh" "$py" "$root/build-$a/portable/lib/wheel/libxtts-reader.so" "$stage/wheel" "$stage/stage")
  cp "$whl" "$out/"
  rm -rf "$stage"
  echo "$out/$(basename "$whl")"
done
