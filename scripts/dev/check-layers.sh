#!/usr/bin/env bash
# check-layers.sh [ROOT [OBJ]] — `make layers`: no include and no call goes up a layer.
#
# Layers, bottom to top: common (0); kernels (1); formats (2); cache (3); prep/* and
# train (4), which never reach each other; programs (5), the mains (programs/xtts-*.c), which
# may use every layer and which no layer uses. A library folder holds no main.
# cache/ is two rooms: the store (cache/store/) and the audit tools (cache/audit/); the store's
# read side (cache/store/read/, what libxtts-reader.so is built from) is a room of its own:
#   cache/store/read: no other room of cache/
#   cache/store:      cache/store/read
#   cache/audit:      cache/store, cache/store/read   (the store never uses the audit tools)
# Tests are not checked.
# prep/ is cut by job into rooms, and a room uses only itself, the layers below and the rooms
# PREP_ALLOW names for it (docs/design.md, "Parts and where they live"):
#   dataset, audio, codes, text/num2words, text/romanize, text/langid, text/tokenizer: no other room
#   text/normalize: text/num2words, text/romanize   (Coqui's cleaners spell numbers, romanize)
#   tokenize: dataset and every text/ room           (the xtts-tokenize driver)
#   melcache: audio                                  (the xtts-melcache driver)
#   segment: text/normalize and the rooms it uses, text/langid   (the xtts-segment driver)
#   includes: every `#include "DIR/..."` of every .c/.h/.cc/.cu under ROOT's layer folders;
#   calls:    every undefined symbol of every object under OBJ (default ROOT/build/obj) must
#             be defined by an object of the same or a lower layer (or an allowed room), or
#             outside the project.
# One line per violation; exit 1 when there is any, 0 otherwise.
set -euo pipefail
ROOT=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
OBJ=${2:-$ROOT/build/obj}
cd "$ROOT"

bad=0
# ---- mains -------------------------------------------------------------------------------
out=$(find common kernels formats cache prep train -name 'xtts-*.c' 2>/dev/null | sort |
      sed 's|^\(.*\)$|layers: \1: a main in a library folder (it belongs in programs/)|' || true)
if [ -n "$out" ]; then echo "$out"; bad=1; fi

# ---- includes ----------------------------------------------------------------------------
AWK_LAYERS='
  BEGIN { allow["text/normalize"] = " text/num2words text/romanize ";
          allow["tokenize"] = " dataset text/normalize text/num2words text/romanize text/langid text/tokenizer ";
          allow["melcache"] = " audio ";
          allow["segment"] = " text/normalize text/num2words text/romanize text/langid ";
          callow["store/read"] = " "; callow["store"] = " store/read "; callow["audit"] = " store store/read " }
  function croom(p) { if (p ~ /^cache\/store\/read\//) return "store/read"; if (p ~ /^cache\/store\//) return "store";
                      if (p ~ /^cache\/audit\//) return "audit"; return "" }
  function room(p,   r, n, c) { r = substr(p, 6); n = split(r, c, "/"); if (n < 2) return "";
                                if (c[1] == "text" && n >= 3) return "text/" c[2]; return c[1] }
  function layer(p) { if (p ~ /^common\//) return "0"; if (p ~ /^kernels\//) return "1"; if (p ~ /^formats\//) return "2";
                      if (p ~ /^cache\//) return "3c:" croom(p); if (p ~ /^prep\//) return "4p:" room(p); if (p ~ /^train\//) return "4t";
                      if (p ~ /^programs\//) return "5"; return "" }
  function lname(l) { if (l ~ /^4p:./) return "prep/" substr(l, 4); if (l ~ /^4p/) return "prep";
                      if (l ~ /^3c:./) return "cache/" substr(l, 4); if (l ~ /^3c/) return "cache";
                      return l == "0" ? "common" : l == "1" ? "kernels" : l == "2" ? "formats" : l == "5" ? "programs" : "train" }
  function ok(f, t) { if (f == t) return 1;
                      if (f ~ /^4p:/ && t ~ /^4p:/) return index(allow[substr(f, 4)], " " substr(t, 4) " ") > 0;
                      if (f ~ /^3c:./ && t ~ /^3c:./) return index(callow[substr(f, 4)], " " substr(t, 4) " ") > 0;
                      if (substr(f, 1, 1) == "4" && substr(t, 1, 1) == "4") return 0; return substr(t, 1, 1) + 0 <= substr(f, 1, 1) + 0 }'
files=$(find common kernels formats cache prep train programs \( -name '*.c' -o -name '*.h' -o -name '*.cc' -o -name '*.cu' -o -name '*.cuh' \) 2>/dev/null | sort || true)
out=$(awk "$AWK_LAYERS"'
  /^[ \t]*#[ \t]*include[ \t]*"/ { if (!match($0, /"[^"]*"/)) next; inc = substr($0, RSTART + 1, RLENGTH - 2);
      f = layer(FILENAME); t = layer(inc); if (f == "" || t == "") next;
      if (!ok(f, t)) printf "layers: %s:%d: includes \"%s\" (%s may not use %s)\n", FILENAME, FNR, inc, lname(f), lname(t) }' $files)
if [ -n "$out" ]; then echo "$out"; bad=1; fi

# ---- calls -------------------------------------------------------------------------------
if [ -d "$OBJ" ]; then
  # (an object whose source is gone, left by a build before a file moved, is not the tree's)
  objs=$(cd "$OBJ" && find common kernels formats cache prep train programs -name '*.o' ! -name '*.cu.pic.o' 2>/dev/null | sort |
         while read -r o; do if [ -e "$ROOT/${o%.o}.c" ] || [ -e "$ROOT/${o%.o}.cc" ]; then echo "$o"; fi; done || true)
  if [ -n "$objs" ]; then
    out=$(cd "$OBJ" && { nm -A --defined-only -g $objs 2>/dev/null | awk '{split($1, p, ":"); if (NF == 3) print "D", $3, p[1]}'
                          nm -A -u $objs 2>/dev/null | awk '{split($1, p, ":"); print "U", $NF, p[1]}'
          } | awk "$AWK_LAYERS"'
      $1 == "D" { if (!($2 in def)) def[$2] = $3; next }
      { u[++n] = $2; uo[n] = $3 }
      END { for (i = 1; i <= n; i++) { s = u[i]; if (!(s in def)) continue; f = layer(uo[i]); t = layer(def[s]);
              if (!ok(f, t)) printf "layers: %s calls %s, defined in %s (%s may not use %s)\n", uo[i], s, def[s], lname(f), lname(t) } }')
    if [ -n "$out" ]; then echo "$out"; bad=1; fi
  fi
fi
[ $bad -eq 0 ] && echo "layers: ok (includes and calls go down only)"
exit $bad
