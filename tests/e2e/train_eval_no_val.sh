#!/usr/bin/env bash
# xtts-train --eval-every on a cache without validation records warns once (naming how to get
# some) and trains on; with validation records it says nothing and reports val losses.
set -euo pipefail
source "$(dirname "$0")/faults_lib.bash"
demo_tokens
"$BIN/xtts-melcache" -q --out "$T/noval" "$T/tokens.tsv" 2>/dev/null || [ $? -eq 3 ] || die "melcache"
expect_rc 0 "$BIN/xtts-train" --cache "$T/noval" --steps 4 --batch-size 4 --eval-every 2
n=$(grep -c "warning: --eval-every 2: $T/noval has no validation records" "$T/err.txt" || true)
[ "$n" -eq 1 ] || { cat "$T/err.txt" >&2; die "want the warning once, got $n"; }
grep -q -- "--val-fraction" "$T/err.txt" && grep -q -- "--val-list" "$T/err.txt" || die "the warning names no way to get validation records"
! grep -q "| val " "$T/err.txt" || die "a val loss without validation records"
# without --eval-every: no warning
expect_rc 0 "$BIN/xtts-train" --cache "$T/noval" --steps 1 --batch-size 4
! grep -q "eval-every" "$T/err.txt" || die "warning without --eval-every"
# with validation records: no warning, val losses
"$BIN/xtts-melcache" -q --out "$T/val" --val-fraction 0.2 "$T/tokens.tsv" 2>/dev/null || [ $? -eq 3 ] || die "melcache"
expect_rc 0 "$BIN/xtts-train" --cache "$T/val" --steps 2 --batch-size 4 --eval-every 2
! grep -q "no validation records" "$T/err.txt" || die "warning with validation records"
grep -q "| val " "$T/err.txt" || die "no val loss"
echo ok
