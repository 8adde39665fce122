#!/usr/bin/env bash
# make fresh-check: README's two commands, the first time, on a really fresh Debian 12.
# A minimal Debian 12 is debootstrap'ed into a temporary root (Debian's packages must be
# reachable); only what a newcomer has before reading the README is added to it (make, gcc,
# g++, git, pkg-config); a clone of this repository's HEAD goes into root's home (mode 700,
# as on a real machine: what the tests run as nobody must not need to read it); then, inside,
# `make demo` and `make test`, each once, as README.md says. Prints each step's time; exit 0
# only when both pass. Needs root. Where the fresh root cannot be made here (no debootstrap
# from the mirror, no mount or chroot allowed) it says so and exits 0 ("skip"), or 2 with
# FRESH_STRICT=1; a failure of the README's commands is always exit 1. Environment: FRESH_ROOT
# (default a new folder under /var/tmp, removed afterwards unless KEEP=1), MIRROR (default
# Debian's, as apt uses here).
set -euo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
[ "$(id -u)" -eq 0 ] || { echo "fresh-check: needs root (debootstrap, chroot)" >&2; exit 2; }
MIRROR=${MIRROR:-http://deb.debian.org/debian}
root=${FRESH_ROOT:-$(mktemp -d /var/tmp/xtts-fresh.XXXXXX)}
log=${FRESH_LOG:-$root.log}
t0=$(date +%s)
step() { echo "fresh-check: $(( $(date +%s) - t0 )) s: $*"; }
cannot() { # WHY: the fresh root cannot be made here
  echo "fresh-check: skip: $* (not a failure of README's commands)" >&2
  [ "${FRESH_STRICT:-0}" = 1 ] && exit 2
  exit 0
}

cleanup() {
  for m in dev/pts dev proc sys; do umount -l "$root/$m" 2>/dev/null || true; done
  if [ "${KEEP:-0}" != 1 ] && [ -z "${FRESH_ROOT:-}" ]; then rm -rf --one-file-system "$root"; fi
}
trap cleanup EXIT

command -v debootstrap >/dev/null || {
  step "installing debootstrap here"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null ||
    cannot "debootstrap cannot be installed"
}
step "debootstrap bookworm (minbase) into $root (log: $log)"
debootstrap --variant=minbase bookworm "$root" "$MIRROR" > "$log" 2>&1 ||
  { tail -n 5 "$log" >&2; cannot "debootstrap from $MIRROR failed"; }
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
mount -t proc proc "$root/proc" 2>/dev/null || cannot "cannot mount /proc in the fresh root"
mount --bind /dev "$root/dev" 2>/dev/null || cannot "cannot bind /dev into the fresh root"
mount --bind /dev/pts "$root/dev/pts" 2>/dev/null || true
mount -t sysfs sysfs "$root/sys" 2>/dev/null || true
chroot "$root" /bin/true 2>/dev/null || cannot "cannot chroot"
in_root() { chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  LANG=C.UTF-8 TERM=dumb "$@"; }
step "adding make gcc g++ git pkg-config"
in_root apt-get update -qq >> "$log" 2>&1 || cannot "apt-get update fails in the fresh root"
in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends make gcc g++ git pkg-config \
  ca-certificates >> "$log" 2>&1 || cannot "the newcomer's tools cannot be installed in the fresh root"
step "cloning HEAD into /root/xtts-prep"
chmod 700 "$root/root"
git clone -q --no-local "$here" "$root/root/xtts-prep"
rc=0
step "make demo"
in_root bash -c 'cd /root/xtts-prep && make demo' >> "$log" 2>&1 || rc=$?
if [ $rc -ne 0 ]; then tail -n 30 "$log" >&2; step "make demo FAILED (exit $rc)"; exit 1; fi
step "make demo passed; make test"
in_root bash -c 'cd /root/xtts-prep && make test' >> "$log" 2>&1 || rc=$?
if [ $rc -ne 0 ]; then grep -E 'FAILED|Error|error:' "$log" | tail -n 30 >&2; step "make test FAILED (exit $rc)"; exit 1; fi
step "make test passed: README's two commands work the first time on a fresh Debian 12"
