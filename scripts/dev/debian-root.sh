#!/usr/bin/env bash
# Debian roots for the checks that need another system than this one (the wheel on Debian 11,
# 12 and 13: scripts/dev/wheel-check.sh; the arm64 build and tests: scripts/dev/arm64.sh).
#
#   debian-root.sh make SUITE ARCH NAME [PACKAGE...]   prints the root's path
#   debian-root.sh run [--bind DIR]... ROOT COMMAND...  runs COMMAND inside ROOT (each DIR bound
#                                                       at its own path there)
#
# `make` debootstraps SUITE (bullseye, bookworm, trixie) for ARCH (amd64, arm64) once, minbase,
# into $XTTS_ROOTS/base-SUITE-ARCH (default XTTS_ROOTS=/var/tmp/xtts-roots: kept between runs,
# never inside the source tree), then copies it to $XTTS_ROOTS/NAME and installs PACKAGEs there
# with apt-get (no recommends; PACKAGE:ARCH adds ARCH to the root's dpkg). A root whose packages are already those is reused as it is, so
# a CI run makes each root once and a developer's second run makes none. A foreign ARCH needs
# qemu-user-static with binfmt (its interpreter is registered with the F flag, so nothing is
# copied into the root). `run` enters ROOT with chroot in a mount namespace of its own, with
# /proc and the host's /dev there (gone when COMMAND ends: nothing stays mounted under the root).
#
# Needs root. Where a root cannot be made here (not root, no debootstrap, the mirror not
# reachable, no chroot, no qemu for ARCH) it says why on stderr and exits 2: the callers report
# "skip". MIRROR: Debian's mirror (default http://deb.debian.org/debian, as apt uses here).
set -euo pipefail
ROOTS=${XTTS_ROOTS:-/var/tmp/xtts-roots}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
cannot() { echo "debian-root: $*" >&2; exit 2; }

# run [--bind DIR]... ROOT COMMAND...: chroot into ROOT with /proc and /dev mounted for
# COMMAND's lifetime, and each DIR of this machine at the same path inside
run_in() {
  local binds=""
  while [ "${1:-}" = --bind ]; do binds="$binds $(realpath "$2")"; shift 2; done
  local root=$1; shift
  unshare --mount --propagation private /bin/sh -c '
    r=$1 binds=$2; shift 2
    mount -t proc proc "$r/proc" && mount --rbind /dev "$r/dev" || exit 125
    for d in $binds; do mkdir -p "$r$d" && mount --bind "$d" "$r$d" || exit 125; done
    exec chroot "$r" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
      PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"' sh "$root" "$binds" "$@"
}

make_base() {   # SUITE ARCH: the minbase root, made once
  local suite=$1 arch=$2 base=$ROOTS/base-$1-$2
  [ -f "$base/.xtts-complete" ] && return 0
  command -v debootstrap >/dev/null || {
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null 2>&1 ||
      cannot "debootstrap is not installed and cannot be"
  }
  if [ "$arch" != "$(dpkg --print-architecture)" ]; then
    local qemu
    case $arch in arm64) qemu=aarch64;; *) qemu=$arch;; esac
    [ -e "/proc/sys/fs/binfmt_misc/qemu-$qemu" ] || {
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends qemu-user-static binfmt-support \
        >/dev/null 2>&1 || cannot "qemu-user-static cannot be installed: $arch programs cannot run here"
      [ -e /proc/sys/fs/binfmt_misc/register ] || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc 2>/dev/null || true
      update-binfmts --enable "qemu-$qemu" >/dev/null 2>&1 || true
      [ -e "/proc/sys/fs/binfmt_misc/qemu-$qemu" ] || cannot "no binfmt entry for qemu-$qemu: $arch programs cannot run here"
    }
  fi
  rm -rf --one-file-system "$base"
  mkdir -p "$ROOTS"
  echo "debian-root: debootstrap $suite ($arch, minbase) into $base" >&2
  debootstrap --variant=minbase --arch="$arch" "$suite" "$base" "$MIRROR" > "$base.log" 2>&1 ||
    { tail -n 5 "$base.log" >&2; cannot "debootstrap $suite $arch from $MIRROR failed (log: $base.log)"; }
  touch "$base/.xtts-complete"
}

make_root() {   # SUITE ARCH NAME PACKAGE...
  local suite=$1 arch=$2 name=$3; shift 3
  local root=$ROOTS/$name want
  want="$suite $arch $*"
  if [ -f "$root/.xtts-packages" ] && [ "$(cat "$root/.xtts-packages")" = "$want" ]; then
    echo "$root"; return 0
  fi
  [ "$(id -u)" -eq 0 ] || cannot "making a Debian root needs root (debootstrap, chroot)"
  mkdir -p "$ROOTS"
  # one maker of a base at a time (the wheel check and the arm64 build may start together)
  exec 9> "$ROOTS/.lock-base-$suite-$arch"
  flock 9
  make_base "$suite" "$arch"
  flock -u 9
  rm -rf --one-file-system "$root"
  cp -a "$ROOTS/base-$suite-$arch" "$root"
  rm -f "$root/.xtts-complete"
  cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
  if [ $# -gt 0 ]; then
    echo "debian-root: $name: apt-get install $* (log: $root.log)" >&2
    local foreign
    foreign=$(printf '%s\n' "$@" | sed -n 's/^[^:]*:\([a-z0-9]*\)$/\1/p' | sort -u)   # multiarch: pkg:arm64
    { for a in $foreign; do run_in "$root" dpkg --add-architecture "$a" || exit 1; done &&
      run_in "$root" apt-get update -qq &&
      run_in "$root" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" &&
      run_in "$root" apt-get clean; } > "$root.log" 2>&1 ||
      { tail -n 5 "$root.log" >&2; cannot "$name: apt-get install failed in the $suite root (log: $root.log)"; }
  fi
  echo "$want" > "$root/.xtts-packages"
  echo "$root"
}

case ${1:-} in
  make) shift; [ $# -ge 3 ] || cannot "usage: debian-root.sh make SUITE ARCH NAME [PACKAGE...]"; make_root "$@" ;;
  run) shift; [ $# -ge 2 ] || cannot "usage: debian-root.sh run [--bind DIR]... ROOT COMMAND..."; run_in "$@" ;;
  *) echo "usage: debian-root.sh make SUITE ARCH NAME [PACKAGE...] | run [--bind DIR]... ROOT COMMAND..." >&2; exit 1 ;;
esac
