#!/usr/bin/env bash
# `make layers` (scripts/dev/check-symbols.sh): the real libxtts.a exports only xtts_ names, and a
# crafted archive with an unprefixed C function, an unprefixed variable and an unprefixed C++
# function fails with one line naming each; a static function, a hidden one, a C++ function in
# an anonymous namespace, an extern "C" xtts_ one and the weak std:: instantiations g++ emits
# pass.
set -euo pipefail
: "${BUILD:?}" "${TMPDIR_TEST:?}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
T=$TMPDIR_TEST/symbols
die() { echo "FAIL: $*" >&2; exit 1; }

bash "$root/scripts/dev/check-symbols.sh" "$BUILD/lib/libxtts.a" > "$T.out" || { cat "$T.out"; die "libxtts.a exports unprefixed symbols"; }

mkdir -p "$T"
cat > "$T/a.c" <<'EOF'
static int helper(void) { return 1; }
__attribute__((visibility("hidden"))) int hidden_fn(void) { return 2; }
int leaked_var = 3;
int leak(void) { return helper() + hidden_fn(); }
int xtts_fine(void) { return leaked_var; }
EOF
cat > "$T/b.cc" <<'EOF'
#include <vector>
namespace { int anon(int x) { return x + 1; } }
int cpp_leak(int x) { std::vector<int> v; v.push_back(x); return anon(v.back()); }
extern "C" int xtts_cc(int x) { return anon(x); }
EOF
gcc -O0 -c "$T/a.c" -o "$T/a.o"
g++ -O0 -c "$T/b.cc" -o "$T/b.o"
rm -f "$T/lib.a"
ar rcs "$T/lib.a" "$T/a.o" "$T/b.o"
rc=0; bash "$root/scripts/dev/check-symbols.sh" "$T/lib.a" > "$T.out" || rc=$?
[ $rc -eq 1 ] || { cat "$T.out"; die "unprefixed symbols not found (exit $rc)"; }
want() { grep -qxF "$1" "$T.out" || { cat "$T.out"; die "missing: $1"; }; }
want "symbols: a.o: leaked_var is exported by lib.a without the xtts_ prefix (prefix it, or make it static or hidden)"
want "symbols: a.o: leak is exported by lib.a without the xtts_ prefix (prefix it, or make it static or hidden)"
want "symbols: b.o: cpp_leak(int) (_Z8cpp_leaki) is exported by lib.a without the xtts_ prefix (prefix it, or make it static or hidden)"
[ "$(grep -c . "$T.out")" -eq 3 ] || { cat "$T.out"; die "want exactly 3 lines"; }
echo "symbols_check: ok"
