#!/usr/bin/env bash
# xtts-melcache --part K/N --update: each part builds its block of the new stream in the
# update directory beside the cache, carrying records over from the cache; the last part
# joins the parts (the merge as for any build in parts) and the joined cache takes the old
# one's place, with the digest of a fresh build. Until then the old cache stays as it was.
# Also: an unfinished build is not updated (exit 2, finish it first).
set -euo pipefail
source "$(dirname "$0")/faults_lib.bash"

demo_tokens
cp "$T/tokens.tsv" "$T/v1.tsv"
# v2: en_003 dropped, the last record's text edited, a record added at the end
awk -F'\t' 'BEGIN{OFS="\t"} /^#/ {print; next} $1 != "en_003" {body[++n] = $0}
  END {for (i = 1; i <= n; i++) { split(body[i], f, "\t"); if (i == n) f[6] = f[6] " more"
         print f[1], f[2], f[3], f[4], f[5], f[6] }
       split(body[1], f, "\t"); print "added_1", f[2], f[3], f[4], f[5], f[6] }' "$T/v1.tsv" > "$T/v2.tsv"

expect_rc 3 "$BIN/xtts-melcache" --out "$T/c" -j 2 -q "$T/v1.tsv"
d1=$(digest "$T/c")
expect_rc 3 "$BIN/xtts-melcache" --out "$T/fresh2" -j 2 -q "$T/v2.tsv"
d2=$(digest "$T/fresh2"); [ -n "$d2" ] && [ "$d2" != "$d1" ] || die "fresh build of v2"

rc=0; "$BIN/xtts-melcache" --out "$T/c" -j 2 -q --part 0/2 --update "$T/v2.tsv" 2>"$T/p0.err" || rc=$?
[ $rc -eq 0 ] || [ $rc -eq 3 ] || { cat "$T/p0.err"; die "part 0 update: exit $rc"; }
grep -q 'reused' "$T/p0.err" || die "part 0 says nothing of reuse"
[ "$(digest "$T/c")" = "$d1" ] || die "the cache changed before the last part finished"
[ -e "$T/c.update/manifest.part-00000.json" ] || die "part 0 did not build beside the cache"
expect_rc 3 "$BIN/xtts-melcache" --out "$T/c" -j 2 --part 1/2 --update "$T/v2.tsv"
grep -q 'parts merged' "$T/err.txt" && grep -q 'the update replaced the old cache' "$T/err.txt" || { cat "$T/err.txt"; die "part 1 did not join and switch"; }
[ "$(digest "$T/c")" = "$d2" ] || die "digest after an update in parts"
[ ! -e "$T/c.update" ] || die "the update directory was left behind"
# the joined cache merges again by hand to the same digest
"$BIN/xtts-cache-merge" -q "$T/c" >/dev/null 2>&1 || die "xtts-cache-merge on the updated cache"
[ "$(digest "$T/c")" = "$d2" ] || die "digest after merging again"
# and a whole update of the cache that parts built: every record carried over
expect_rc 3 "$BIN/xtts-melcache" --out "$T/c" -j 2 --update "$T/v2.tsv"
grep -q '60 reused, 3 computed, 0 dropped' "$T/err.txt" || { cat "$T/err.txt"; die "whole update of a parts cache"; }
[ "$(digest "$T/c")" = "$d2" ] || die "digest after a whole update of a parts cache"

# an unfinished build is finished first
expect_rc 0 "$BIN/xtts-melcache" --out "$T/u" -j 2 -q --part 0/2 "$T/v2.tsv"
expect_rc 2 "$BIN/xtts-melcache" --out "$T/u" -j 2 -q --update "$T/v2.tsv"
grep -q 'unfinished build.*finish it first' "$T/err.txt" || { cat "$T/err.txt"; die "unfinished message"; }
echo "ok: update in parts, joined and switched; unfinished build refused"
