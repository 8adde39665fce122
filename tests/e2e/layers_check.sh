#!/usr/bin/env bash
# `make layers` (scripts/dev/check-layers.sh): the real tree passes, and a crafted tree with an
# include going up, an include between prep and train, an include between two rooms of prep
# that may not use each other, a call going up, and an include and a call from the cache's
# store into its audit tools, a main in a library folder and an include of programs/ from a
# library fail with one line naming each; allowed uses between rooms (tokenize -> dataset,
# audit -> the store's read side, a program -> any layer) pass.
set -euo pipefail
: "${BUILD:?}" "${TMPDIR_TEST:?}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
T=$TMPDIR_TEST/layers
die() { echo "FAIL: $*" >&2; exit 1; }

bash "$root/scripts/dev/check-layers.sh" "$root" "$BUILD/obj" > "$T.out" || { cat "$T.out"; die "the tree breaks its layers"; }

mkdir -p "$T"/{common,cache,prep,train,programs,obj/common,obj/cache} "$T"/prep/{text/num2words,melcache,tokenize,dataset} \
         "$T"/cache/{store/read,audit} "$T"/obj/cache/{store,audit}
printf '#include "cache/b.h"\nint cache_fn(void);\nint common_fn(void) { return cache_fn(); }\n' > "$T/common/a.c"
printf 'int cache_fn(void);\n' > "$T/cache/b.h"
printf 'int cache_fn(void) { return 1; }\n' > "$T/cache/b.c"
printf '#include "prep/x.h"\n' > "$T/train/t.c"
printf '#include "common/a.h"\n' > "$T/prep/x.h"
printf '#include "prep/x.h"\n#include "train/t.h"\nint main(void) { return 0; }\n' > "$T/programs/xtts-ok.c"   # a program may use all
printf 'int main(void) { return 0; }\n' > "$T/train/xtts-bad.c"
printf '#include "programs/p.h"\n' > "$T/train/t.h"
printf 'int p;\n' > "$T/programs/p.h"
printf '#include "prep/melcache/m.h"\n' > "$T/prep/text/num2words/n.c"
printf 'int m;\n' > "$T/prep/melcache/m.h"
printf '#include "prep/dataset/d.h"\n' > "$T/prep/tokenize/t.c"     # allowed: tokenize reads datasets
printf 'int d;\n' > "$T/prep/dataset/d.h"
printf '#include "cache/audit/v.h"\nint store_fn(void) { return audit_fn(); }\n' > "$T/cache/store/s.c"
printf 'int audit_fn(void);\n' > "$T/cache/audit/v.h"
printf '#include "cache/store/read/r.h"\nint audit_fn(void) { return r; }\n' > "$T/cache/audit/v.c"  # allowed
printf 'extern int r;\n' > "$T/cache/store/read/r.h"
gcc -c "$T/common/a.c" -I"$T" -o "$T/obj/common/a.o"
gcc -c "$T/cache/store/s.c" -I"$T" -o "$T/obj/cache/store/s.o"
gcc -c "$T/cache/audit/v.c" -I"$T" -o "$T/obj/cache/audit/v.o"
gcc -c "$T/cache/b.c" -o "$T/obj/cache/b.o"
rc=0; bash "$root/scripts/dev/check-layers.sh" "$T" "$T/obj" > "$T.out" || rc=$?
[ $rc -eq 1 ] || { cat "$T.out"; die "violations not found (exit $rc)"; }
grep -q '^layers: common/a.c:1: includes "cache/b.h" (common may not use cache)$' "$T.out" || { cat "$T.out"; die "include up"; }
grep -q '^layers: train/t.c:1: includes "prep/x.h" (train may not use prep)$' "$T.out" || { cat "$T.out"; die "train -> prep"; }
grep -q '^layers: prep/text/num2words/n.c:1: includes "prep/melcache/m.h" (prep/text/num2words may not use prep/melcache)$' "$T.out" \
  || { cat "$T.out"; die "room -> room"; }
grep -q '^layers: common/a.o calls cache_fn, defined in cache/b.o (common may not use cache)$' "$T.out" || { cat "$T.out"; die "call up"; }
grep -q '^layers: cache/store/s.c:1: includes "cache/audit/v.h" (cache/store may not use cache/audit)$' "$T.out" \
  || { cat "$T.out"; die "store -> audit include"; }
grep -q '^layers: cache/store/s.o calls audit_fn, defined in cache/audit/v.o (cache/store may not use cache/audit)$' "$T.out" \
  || { cat "$T.out"; die "store -> audit call"; }
grep -q '^layers: train/xtts-bad.c: a main in a library folder (it belongs in programs/)$' "$T.out" \
  || { cat "$T.out"; die "main in a library folder"; }
grep -q '^layers: train/t.h:1: includes "programs/p.h" (train may not use programs)$' "$T.out" || { cat "$T.out"; die "library -> programs"; }
[ "$(grep -c . "$T.out")" -eq 8 ] || { cat "$T.out"; die "want exactly 8 lines"; }
echo "layers_check: ok"
