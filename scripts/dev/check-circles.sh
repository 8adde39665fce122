#!/usr/bin/env bash
# check-circles.sh [ROOT [OBJ [FOLDER...]]] — `make layers`: no circle of calls between the
# files of one folder. check-layers.sh sees that calls go down between layers and rooms; inside
# a room the files call one another, and this sees that they do so in one direction: file A
# calls B (A's object leaves a symbol undefined that B's object defines), and no chain of such
# calls leads from B back to A. A room whose files call round in a circle is one job cut in
# pieces, read only all at once (docs/design.md, "Parts and where they live").
#
# FOLDERs (default: every folder under OBJ that holds objects) are relative to OBJ (default
# ROOT/build/obj). One line
# per circle found, naming files of it in call order; exit 1 when there is any, 0 otherwise.
# CIRCLES_KNOWN: folders whose circles are known and being opened (e.g. "cache"): theirs are
# listed as notes and do not fail the check.
set -euo pipefail
ROOT=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
OBJ=${2:-$ROOT/build/obj}
shift $(( $# > 2 ? 2 : $# ))
cd "$OBJ"
if [ $# -gt 0 ]; then
  folders=$(for f in "$@"; do find "$f" -name '*.o' ! -name '*.pic.o' -printf '%h\n' 2>/dev/null; done | sort -u)
else
  folders=$(find . -name '*.o' ! -name '*.pic.o' ! -path './pic/*' ! -path './cuda-plugin/*' ! -path './tests/*' \
              -printf '%h\n' | sed 's|^\./||' | sort -u)
fi

bad=0
for dir in $folders; do
  # (an object whose source is gone, left by a build before a file moved, is not the tree's)
  objs=$(find "$dir" -maxdepth 1 -name '*.o' ! -name '*.pic.o' | sort |
         while read -r o; do o=${o#./}; if [ -e "$ROOT/${o%.o}.c" ] || [ -e "$ROOT/${o%.o}.cc" ]; then echo "$o"; fi; done || true)
  [ "$(printf '%s\n' "$objs" | grep -c .)" -ge 2 ] || continue
  # the edges "caller callee" between the folder's objects
  edges=$({ nm -A --defined-only -g $objs 2>/dev/null | awk '{split($1, p, ":"); if (NF == 3) print "D", $3, p[1]}'
            nm -A -u $objs 2>/dev/null | awk '{split($1, p, ":"); print "U", $NF, p[1]}'
          } | awk '$1 == "D" { def[$2] = $3; next } { u[++n] = $2; uo[n] = $3 }
                   END { for (i = 1; i <= n; i++) if ((u[i] in def) && def[u[i]] != uo[i]) print uo[i], def[u[i]] }' | sort -u)
  [ -n "$edges" ] || continue
  # tsort names the files of each loop it finds, one a line after "input contains a loop:"
  loops=$(printf '%s\n' "$edges" | { tsort 2>&1 >/dev/null || true; } |
          awk '/input contains a loop/ { if (c) print c; c = ""; next } { sub(/^tsort: /, ""); c = c (c ? " -> " : "") $0 }
               END { if (c) print c }')
  [ -n "$loops" ] || continue
  if [[ " ${CIRCLES_KNOWN:-} " == *" $dir "* ]]; then
    while IFS= read -r l; do echo "circles: note: $dir: $l (known, not yet opened)"; done <<< "$loops"
    continue
  fi
  while IFS= read -r l; do echo "circles: $dir: $l (a circle of calls between files of one folder)"; done <<< "$loops"
  bad=1
done
[ $bad -eq 0 ] && echo "circles: ok (no circle of calls between the files of a folder)"
exit $bad
