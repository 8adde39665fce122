#!/usr/bin/env bash
# xtts-melcache --update reads from the token stream only the inputs it computes: the kept
# ones between them are skipped (the reader returns to where the plan's pass found the next
# input to compute). Records the build leaves out (the test split, ids in --exclude) lie
# between them; after edits spread over the stream and a changed --exclude list, the update
# keeps most records in the old shards and its digest is a fresh build's, and so is a second
# update with nothing changed (which computes only the records a build rejects). An update
# whose stream comes through a pipe (copied as the first reading goes, the plan's pass being
# that reading) gives the same digest. A stream that turns bad near its end stops the update
# with the line named, before it makes its update directory; the cache stays as it was.
set -euo pipefail
source "$(dirname "$0")/faults_lib.bash"

demo_tokens
repeat_tokens "$T/tokens.tsv" "$T/rep.tsv" 6
# a split column: every 5th record of the test split (never in the cache), every 7th val
awk -F'\t' 'BEGIN{OFS="\t"} /^#/ {print $0 "\tfields=split"; next}
  {n++; print $0, (n % 5 == 0 ? "test" : n % 7 == 0 ? "val" : "")}' "$T/rep.tsv" > "$T/v1.tsv"
# v2: every 9th transcript edited (computed again), the rest as they were
awk -F'\t' 'BEGIN{OFS="\t"} /^#/ {print; next} {n++; if (n % 9 == 4) $6 = $6 " edited"; print}' "$T/v1.tsv" > "$T/v2.tsv"
cut -f1 "$T/v1.tsv" | grep -v '^#' | awk 'NR % 11 == 3' > "$T/ex1.txt"
cut -f1 "$T/v1.tsv" | grep -v '^#' | awk 'NR % 13 == 6' > "$T/ex2.txt"
[ -s "$T/ex1.txt" ] && [ -s "$T/ex2.txt" ] || die "exclude lists are empty"

SZ=--shard-size=256K
expect_rc 3 "$BIN/xtts-melcache" --out "$T/c" -j 2 -q $SZ --exclude "$T/ex1.txt" "$T/v1.tsv"
expect_rc 3 "$BIN/xtts-melcache" --out "$T/fresh" -j 2 -q $SZ --exclude "$T/ex2.txt" "$T/v2.tsv"
d2=$(digest "$T/fresh"); [ -n "$d2" ] || die "fresh build of v2 does not verify"
cp -a "$T/c" "$T/piped"

expect_rc 3 "$BIN/xtts-melcache" --out "$T/c" -j 2 $SZ --update --exclude "$T/ex2.txt" "$T/v2.tsv"
grep -q "kept in the old cache's shards" "$T/err.txt" || { cat "$T/err.txt"; die "the update shared nothing"; }
kept=$(grep -o '[0-9][0-9]* kept in the old' "$T/err.txt" | cut -d' ' -f1)
computed=$(grep -o '[0-9][0-9]* computed' "$T/err.txt" | cut -d' ' -f1)
[ "${kept:-0}" -gt $((3 * ${computed:-0})) ] || die "kept $kept, computed $computed: the update kept too little"
[ "$(digest "$T/c")" = "$d2" ] || die "the update's digest differs from a fresh build's"

# nothing changed: every record kept, the digest again a fresh build's
expect_rc 3 "$BIN/xtts-melcache" --out "$T/c" -j 2 $SZ --update --exclude "$T/ex2.txt" "$T/v2.tsv"
# (the records a build rejects are computed again, and rejected again: the only ones)
c0=$(grep -o '[0-9][0-9]* computed' "$T/err.txt" | cut -d' ' -f1)
rej=$(grep -o '[0-9][0-9]* rejected,' "$T/err.txt" | head -1 | cut -d' ' -f1)
[ -n "$c0" ] && [ "$c0" = "$rej" ] || { cat "$T/err.txt"; die "an update with nothing changed computed $c0 records ($rej rejects)"; }
[ "$(digest "$T/c")" = "$d2" ] || die "the second update's digest differs from a fresh build's"
# the stream through a pipe
expect_rc 3 bash -c 'cat "$1" | "$2" --out "$3" -j 2 $4 --update --exclude "$5" -' _ "$T/v2.tsv" "$BIN/xtts-melcache" \
  "$T/piped" "$SZ" "$T/ex2.txt"
grep -q "$kept kept in the old cache's shards" "$T/err.txt" || { cat "$T/err.txt"; die "the piped update kept otherwise"; }
[ "$(digest "$T/piped")" = "$d2" ] || die "the piped update's digest differs from a fresh build's"
# a bad line near the end
{ cat "$T/v2.tsv"; printf 'a broken line\n'; } > "$T/bad.tsv"
expect_rc 2 "$BIN/xtts-melcache" --out "$T/c" -j 2 $SZ --update --exclude "$T/ex2.txt" "$T/bad.tsv"
grep -q "bad.tsv:$(wc -l < "$T/bad.tsv"):" "$T/err.txt" || { cat "$T/err.txt"; die "the error does not name the bad line"; }
[ ! -e "$T/c.update" ] || die "a bad stream left the update directory"
[ "$(digest "$T/c")" = "$d2" ] || die "a failed update changed the cache"
echo "ok: update with test-split and excluded records between the computed ones: $kept kept, $computed computed, digest of a fresh build"
