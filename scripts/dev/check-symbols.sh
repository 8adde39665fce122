#!/usr/bin/env bash
# check-symbols.sh [LIB] — `make layers`: every symbol that LIB (default build/lib/libxtts.a)
# exports carries the library's prefix, so that linking it never clashes with a caller's own
# names (docs/design.md: "every exported symbol prefixed").
#
# Exported: defined, bound GLOBAL, WEAK or UNIQUE, with default or protected visibility. A name
# passes when it starts with xtts_ (C++: an extern "C" function of that name); a static
# function, one in an anonymous namespace or one with hidden visibility is not exported. Weak
# instantiations of the C++ standard library's templates (std::, __gnu_cxx::), which g++ emits
# into any object that uses them, and the sanitizers' own symbols (__asan_*, __odr_asan*) are
# not ours and pass.
# One line per offending symbol, naming its object; exit 1 when there is any, 0 otherwise.
set -euo pipefail
LIB=${1:-$(cd "$(dirname "$0")/../.." && pwd)/build/lib/libxtts.a}
[ -f "$LIB" ] || { echo "symbols: $LIB: no such file" >&2; exit 2; }

out=$(readelf -W -s "$LIB" | awk '
  /^File: / { obj = $2; sub(/^.*\(/, "", obj); sub(/\)$/, "", obj); next }
  NF >= 8 && ($5 == "GLOBAL" || $5 == "WEAK" || $5 == "UNIQUE") && $7 != "UND" &&
      ($6 == "DEFAULT" || $6 == "PROTECTED") { print $5, obj, $8 }' |
  while read -r bind obj name; do
    case $name in xtts_*|__asan_*|__odr_asan*) continue ;; esac
    # weak: a name in std:: or __gnu_cxx:: (with its typeinfo and vtable), or <new>'s inline operators
    if [ "$bind" != GLOBAL ] && [[ $name =~ ^_Z(T[ISV])?N?K?(S[tabsiod]|9__gnu_cxx)|^_Z(nw|na|dl|da) ]]; then continue; fi
    plain=$(printf '%s\n' "$name" | c++filt)
    [ "$plain" = "$name" ] && shown=$name || shown="$plain ($name)"
    echo "symbols: $obj: $shown is exported by $(basename "$LIB") without the xtts_ prefix (prefix it, or make it static or hidden)"
  done)
if [ -n "$out" ]; then echo "$out"; exit 1; fi
echo "symbols: ok (every symbol $(basename "$LIB") exports starts with xtts_)"
