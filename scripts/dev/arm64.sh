#!/usr/bin/env bash
# make test-arm64: the programs, libxtts-reader.so, the tests and the wheel cross-built for
# aarch64 with Debian's cross compiler (gcc-aarch64-linux-gnu), and run in an arm64 Debian 12
# root under qemu-user (qemu-user-static with binfmt):
#   1. the root (scripts/dev/debian-root.sh): the arm64 -dev packages of every library the build
#      links (it is the cross compiler's sysroot, and what the programs load when they run),
#      python3, numpy and venv
#   2. `make all` cross-built into ARM64_BUILD (default build/arm64) with -march=armv8-a: the
#      kernels' x86 code (cpuid, target clones and pragmas, intrinsics) is left out by its #if
#      guards and their vector code is NEON (the objdump of the mel kernel is counted)
#   3. the unit tests of `make test` (tests/run-unit.sh), inside the root
#   4. the demo (scripts/demo.sh) inside the root, on the dataset made here (espeak-ng and sox
#      of this machine: the same files the arm64 programs would get), with a training run of 2
#      steps and an evaluation (a step of the tiny model takes a minute under qemu)
#   5. the arm64 wheel as make wheel-manylinux builds it (Debian 11's cross compiler and arm64
#      libraries), pip-installed into a venv in the root: backend c from the wheel's own
#      libraries, every public read equal to the pure-Python reader's (scripts/dev/wheel-check.sh)
#
#   arm64.sh [--subset]
#
# --subset (CI, of a budget): the unit tests in ARM64_UNIT_SUBSET only (the mel and DVAE
# kernels, the common helpers with CRC-32, SHA-256 and fp16, the record codec, the reader's C
# interface, the trainer's CPU loops: about 2 minutes under qemu; test_reader and
# test_train_layers take 4 minutes each there, test_quality 2), the demo and the wheel. Environment: BUILD (this
# machine's build, absolute: its tests/test_reader makes the wheel check's cache), PYTHON,
# XTTS_ROOTS. Needs root; where the root or the cross compiler cannot be had here it says
# "skip" and exits 0 (2 with ARM64_STRICT=1).
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$here/build}
B=${ARM64_BUILD:-$BUILD/arm64}
subset=0
[ "${1:-}" = --subset ] && subset=1
SUBSET=${ARM64_UNIT_SUBSET:-test_common test_mel test_dvae test_record test_record_v2 test_reader_api test_train_cpu}
t0=$(date +%s)
step() { echo "test-arm64: $(( $(date +%s) - t0 )) s: $*"; }
die() { echo "test-arm64: FAIL: $*" >&2; exit 1; }
skip() {
  echo "test-arm64: skip: $*"
  [ "${ARM64_STRICT:-0}" = 1 ] && exit 2
  exit 0
}
[ "$(id -u)" -eq 0 ] || skip "the arm64 root needs root (debootstrap, chroot)"

# ---- 1. the cross compiler and the root -------------------------------------------------------
if ! command -v aarch64-linux-gnu-gcc >/dev/null || ! command -v aarch64-linux-gnu-g++ >/dev/null; then
  step "installing gcc-aarch64-linux-gnu g++-aarch64-linux-gnu here"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends gcc-aarch64-linux-gnu \
    g++-aarch64-linux-gnu >/dev/null 2>&1 || skip "Debian's cross compiler cannot be installed here"
fi
step "the arm64 Debian 12 root"
pkgs=(libc6-dev libgomp1 libsndfile1-dev libsoxr-dev libsamplerate0-dev liblmdb-dev libzstd-dev libcmocka-dev
      libfftw3-dev libutf8proc-dev libjansson-dev libespeak-ng-dev libcld2-dev libpng-dev zlib1g-dev libmecab-dev
      python3 python3-numpy python3-venv)
root=$(bash "$here/scripts/dev/debian-root.sh" make bookworm arm64 arm64-bookworm "${pkgs[@]}") ||
  skip "the arm64 root cannot be made here"
in_root() { bash "$here/scripts/dev/debian-root.sh" run --bind "$here" --bind "$B" "$root" "$@"; }

# ---- 2. the cross build -----------------------------------------------------------------------
step "make all for aarch64 into $B"
mkdir -p "$B"
cross=(CC="aarch64-linux-gnu-gcc --sysroot=$root" CXX="aarch64-linux-gnu-g++ --sysroot=$root" CUDA=0
       CFLAGS_OPT="-O2 -march=armv8-a -mtune=generic")
PKG_CONFIG_LIBDIR=$root/usr/lib/aarch64-linux-gnu/pkgconfig:$root/usr/share/pkgconfig PKG_CONFIG_SYSROOT_DIR=$root \
  env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -j"$(nproc)" -C "$here" BUILD="$B" "${cross[@]}" all > "$B/build.log" 2>&1 ||
  { tail -n 30 "$B/build.log" >&2; die "the aarch64 build (log: $B/build.log)"; }
for f in "$B"/bin/xtts-* "$B"/lib/libxtts-reader.so; do
  readelf -h "$f" | grep -q 'Machine: *AArch64' || die "$f is not an aarch64 file"
done
neon=$(aarch64-linux-gnu-objdump -d "$B/obj/kernels/mel.o" | grep -cE '\s(fmla|fmul|fadd)\s+v[0-9]+\.4s' || true)
[ "$neon" -gt 0 ] || die "the mel kernel has no NEON arithmetic (fmla/fmul/fadd on v.4s)"
step "built: $(ls "$B"/bin | wc -l) programs, libxtts-reader.so, $(ls "$B"/tests/test_* | wc -l) unit tests (the mel kernel: $neon NEON instructions)"

# ---- 3. the unit tests ------------------------------------------------------------------------
tests=()
if [ $subset = 1 ]; then for t in $SUBSET; do tests+=("$B/tests/$t"); done; else tests=("$B"/tests/test_*); fi
step "${#tests[@]} unit tests under qemu-user"
in_root env UNIT_JOBS="$(nproc)" bash "$here/tests/run-unit.sh" "${tests[@]}" > "$B/unit.log" 2>&1 ||
  { grep -E 'FAILED|\[  FAILED|ERROR' "$B/unit.log" | head -n 30 >&2; die "unit tests on aarch64 (log: $B/unit.log)"; }
step "unit tests passed: $(grep -h 'PASSED' "$B/unit.log" | awk '{s += $4} END {print s}') tests in ${#tests[@]} programs"

# ---- 4. the demo ------------------------------------------------------------------------------
step "the demo under qemu-user"
rm -rf "$B/demo-data"
bash "$here/scripts/make-demo-dataset.sh" "$B/demo-data" > "$B/demo-data.log" 2>&1 ||
  { tail -n 5 "$B/demo-data.log" >&2; die "the demo dataset (here: espeak-ng, sox)"; }
in_root env BUILD="$B" DEMO_DIR="$B/demo" DEMO_DATA="$B/demo-data" DEMO_STEPS=2 OMP_NUM_THREADS="$(nproc)" \
  bash "$here/scripts/demo.sh" > "$B/demo.log" 2>&1 || { tail -n 30 "$B/demo.log" >&2; die "the demo on aarch64 (log: $B/demo.log)"; }
grep -q 'demo done' "$B/demo.log" || die "the demo on aarch64 did not finish (log: $B/demo.log)"
step "demo passed: tokenize, melcache, verify, inspect and a training run"

# ---- 5. the wheel -----------------------------------------------------------------------------
step "the arm64 wheel (Debian 11 cross build) and its read check in the root"
whl=$(bash "$here/scripts/dev/wheel-manylinux.sh" "$B/wheel-manylinux" arm64) || die "the arm64 wheel"
BUILD=$BUILD bash "$here/scripts/dev/wheel-check.sh" --root "$root" "$whl"
step "test-arm64: ok"
