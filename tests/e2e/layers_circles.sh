#!/usr/bin/env bash
# `make layers` (scripts/dev/check-circles.sh): the real tree has no circle of calls between the
# files of a folder outside the folders still listed as known, and a crafted folder whose a.c
# calls b.c, which calls a.c back, fails with one line naming both; a folder whose calls go
# one way (c.c -> d.c) passes, and a known folder's circle is a note, not a failure.
set -euo pipefail
: "${BUILD:?}" "${TMPDIR_TEST:?}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
T=$TMPDIR_TEST/circles
die() { echo "FAIL: $*" >&2; exit 1; }

CIRCLES_KNOWN="prep/text/num2words" bash "$root/scripts/dev/check-circles.sh" "$root" "$BUILD/obj" > "$T.out" \
  || { cat "$T.out"; die "the tree has a circle of calls"; }
bash "$root/scripts/dev/check-circles.sh" "$root" "$BUILD/obj" prep/melcache > "$T.out" \
  || { cat "$T.out"; die "prep/melcache has a circle of calls"; }

# (sources where the objects say they come from: objects without a source are not the tree's)
mkdir -p "$T"/obj/room "$T"/obj/oneway "$T"/room "$T"/oneway
printf 'int b_fn(void);\nint a_fn(void) { return b_fn(); }\nint a_two(void) { return 2; }\n' > "$T/room/a.c"
printf 'int a_two(void);\nint b_fn(void) { return a_two(); }\n' > "$T/room/b.c"
printf 'int d_fn(void);\nint c_fn(void) { return d_fn(); }\n' > "$T/oneway/c.c"
printf 'int d_fn(void) { return 1; }\n' > "$T/oneway/d.c"
gcc -c "$T/room/a.c" -o "$T/obj/room/a.o"; gcc -c "$T/room/b.c" -o "$T/obj/room/b.o"
gcc -c "$T/oneway/c.c" -o "$T/obj/oneway/c.o"; gcc -c "$T/oneway/d.c" -o "$T/obj/oneway/d.o"
rc=0; bash "$root/scripts/dev/check-circles.sh" "$T" "$T/obj" > "$T.out" || rc=$?
[ $rc -eq 1 ] || { cat "$T.out"; die "the circle was not found (exit $rc)"; }
grep -q '^circles: room: room/[ab].o -> room/[ab].o (a circle of calls between files of one folder)$' "$T.out" \
  || { cat "$T.out"; die "the line does not name the circle"; }
[ "$(grep -c . "$T.out")" -eq 1 ] || { cat "$T.out"; die "want exactly 1 line"; }
rc=0; CIRCLES_KNOWN=room bash "$root/scripts/dev/check-circles.sh" "$T" "$T/obj" > "$T.out" || rc=$?
[ $rc -eq 0 ] || { cat "$T.out"; die "a known folder's circle failed the check"; }
grep -q '^circles: note: room: ' "$T.out" || { cat "$T.out"; die "no note for the known circle"; }
echo "layers_circles: ok"
