#!/usr/bin/env bash
# Directories given with a trailing slash (cache/, ckpt/) are joined to the names inside them
# with one slash in every message (ckpt/train.ckpt, not ckpt//train.ckpt); and the build keeps
# the test programs' objects, which GNU make used to delete as intermediate files (so that
# every make after `make demo` compiled the tests again).
set -euo pipefail
source "$(dirname "$0")/faults_lib.bash"
demo_tokens
log="$T/all.txt"
: > "$log"
run() { local rc=0; "$@" >>"$log" 2>&1 || rc=$?; echo "$rc"; }
[ "$(run "$BIN/xtts-melcache" --out "$T/cache/" --val-fraction 0.1 "$T/tokens.tsv")" = 3 ] || die "melcache"
# another configuration on it: the refusal names the manifest
[ "$(run "$BIN/xtts-melcache" --out "$T/cache/" --val-fraction 0.2 "$T/tokens.tsv")" = 2 ] || die "melcache refusal"
grep -q "$T/cache/manifest.json has config_hash" "$log" || { cat "$log" >&2; die "refusal does not name $T/cache/manifest.json"; }
[ "$(run "$BIN/xtts-cache-verify" "$T/cache/")" = 0 ] || die "verify"
[ "$(run "$BIN/xtts-cache-inspect" "$T/cache/" --index 0)" = 0 ] || die "inspect"
[ "$(run "$BIN/xtts-train" --cache "$T/cache/" --steps 2 --batch-size 4 --ckpt "$T/ckpt/")" = 0 ] || die "train"
grep -q "checkpoint $T/ckpt/train.ckpt at step 2" "$log" || { cat "$log" >&2; die "checkpoint line"; }
[ "$(run "$BIN/xtts-train" --cache "$T/cache/" --steps 3 --batch-size 4 --resume "$T/ckpt/" --ckpt "$T/ckpt/")" = 0 ] || die "resume"
grep -q "resumed $T/ckpt/train.ckpt at step 2" "$log" || { cat "$log" >&2; die "resume line"; }
[ "$(run "$BIN/xtts-cache-merge" "$T/cache/")" = 2 ] || die "merge of a whole build"
if grep -n '[^:]//' "$log"; then die "a doubled slash in the messages above"; fi

# every test program's object is kept beside it
n=0
for t in "$BUILD"/tests/test_* "$BUILD"/tests/tools/*; do
  [ -x "$t" ] && [ -f "$t" ] || continue
  rel=${t#"$BUILD"/tests/}
  [ -f "$BUILD/obj/tests/$rel.o" ] || die "$BUILD/obj/tests/$rel.o was deleted after linking $t"
  n=$((n + 1))
done
[ $n -gt 0 ] || die "no test programs in $BUILD/tests"
echo ok
