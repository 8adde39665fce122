#!/usr/bin/env bash
# One cache however it was built: the demo stream (x4 under new ids) built whole, as 3
# parts, as 3 parts with other shard sizes, and as 3 parts with part 1 killed (kill -9
# after its first commits) and re-run — every build verifies with the same content digest.
# A part of a stream of another length, and a part written without "part_inputs" (an
# older build), are refused by the merge with one line.
set -euo pipefail
source "$(dirname "$0")/faults_lib.bash"

demo_tokens
repeat_tokens "$T/tokens.tsv" "$T/s.tsv" 4          # 252 records, 12 rejected
mc() { "$BIN/xtts-melcache" -q -j 2 "$@"; }

rc=0; mc --out "$T/whole" "$T/s.tsv" 2>/dev/null || rc=$?; [ $rc -eq 3 ] || die "whole build: exit $rc"
want=$(digest "$T/whole"); [ -n "$want" ] || die "whole build does not verify"

parts() { # DIR ARGS...: build the 3 parts in turn; the last one merges
  local dir=$1; shift
  for k in 0 1 2; do
    rc=0; mc --out "$dir" --part "$k/3" "$@" "$T/s.tsv" 2>/dev/null || rc=$?
    [ $rc -eq 0 ] || [ $rc -eq 3 ] || die "part $k/3 $*: exit $rc"
  done
}
parts "$T/p3"
[ "$(digest "$T/p3")" = "$want" ] || die "3 parts: digest $(digest "$T/p3"), whole $want"
parts "$T/p3small" --shard-size 256K
[ "$(digest "$T/p3small")" = "$want" ] || die "3 parts with 256K shards: another digest"
ls -d "$T"/p3small/shard-00001-0000[1-9] >/dev/null 2>&1 || die "256K shards: part 1 did not rotate shards"

# part 1 killed after its first commits, then re-run; parts 0 and 2 whole
rc=0; mc --out "$T/pk" --part 0/3 "$T/s.tsv" 2>/dev/null || rc=$?
"$BIN/xtts-melcache" -q -j 1 --commit-every 2 --out "$T/pk" --part 1/3 "$T/s.tsv" 2>/dev/null & pid=$!
kill_once_written "$pid" "$T/pk/shard-00001-00000/data.mdb"; echo "part 1 killed while running: $KILLED"
rc=0; mc --out "$T/pk" --part 2/3 "$T/s.tsv" 2>/dev/null || rc=$?
[ ! -f "$T/pk/manifest.json" ] || [ -f "$T/pk/manifest.part-00001.json" ] || die "merged without part 1"
rc=0; mc --out "$T/pk" --part 1/3 "$T/s.tsv" 2>/dev/null || rc=$?
[ $rc -eq 0 ] || [ $rc -eq 3 ] || die "re-run of part 1: exit $rc"
[ "$(digest "$T/pk")" = "$want" ] || die "3 parts, part 1 killed and re-run: another digest"

# a part built from a longer stream does not tile with the others
{ cat "$T/s.tsv"; sed -n 2,4p "$T/tokens.tsv" | awk -F'\t' 'BEGIN{OFS="\t"} {$1 = "extra" NR; print}'; } > "$T/longer.tsv"
cp -r "$T/p3" "$T/mixed"; rm -f "$T/mixed/manifest.json"
rc=0; "$BIN/xtts-melcache" -q --out "$T/mixed" --part 2/3 --force "$T/longer.tsv" 2>"$T/err.txt" || rc=$?
expect_rc 2 "$BIN/xtts-cache-merge" "$T/mixed"
one_line_error "part_inputs|takes records"
# a partial manifest without part_inputs (an older build that took every N-th input)
cp -r "$T/p3" "$T/old"; rm -f "$T/old/manifest.json"
"$PY" - "$T/old/manifest.part-00001.json" <<'PYEOF'
import json, sys
p = sys.argv[1]; m = json.load(open(p)); del m["part_inputs"]; json.dump(m, open(p, "w"), indent=2, sort_keys=True)
PYEOF
expect_rc 2 "$BIN/xtts-cache-merge" "$T/old"
one_line_error "manifest.part-00001.json: no \"part_inputs\""
echo "cache_parts_digest: ok ($want)"
