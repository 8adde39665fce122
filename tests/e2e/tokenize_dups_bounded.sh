#!/usr/bin/env bash
# Duplicate ids over more records than xtts-tokenize keeps in memory at once (its id hashes
# spill to sorted runs past 262,144 records): 270,000 lines holding 135,001 ids, each id
# twice (the second time 135,001 lines later). The first occurrence of every id is written,
# in input order; every second one is rejected as a duplicate.
set -euo pipefail
: "${BUILD:?}" "${TMPDIR_TEST:?}"
T=$TMPDIR_TEST
die() { echo "FAIL: $*" >&2; exit 1; }
awk 'BEGIN { OFS = "\t"; print "id", "audio", "text", "speaker", "lang";
             for (i = 0; i < 270000; i++) print "u" (i % 135001), "/none/c.wav", "Text number " (i % 97) ".", "s" (i % 7), "en" }' > "$T/m.tsv"
rc=0; "$BUILD/bin/xtts-tokenize" --format tsv -q --rejects "$T/rej.tsv" "$T/m.tsv" > "$T/out.tsv" 2> "$T/err.txt" || rc=$?
[ $rc -eq 3 ] || { cat "$T/err.txt"; die "exit $rc, want 3"; }
[ "$(grep -vc '^#' "$T/out.tsv")" -eq 135001 ] || die "want 135001 records written"
grep -v '^#' "$T/out.tsv" | cut -f1 | awk '$1 != "u" (NR - 1) { bad = 1; exit } END { exit bad }' || die "written ids out of input order"
[ "$(wc -l < "$T/rej.tsv")" -eq 134999 ] || die "want 134999 rejections"
[ "$(cut -f2 "$T/rej.tsv" | sort -u)" = "duplicate id" ] || die "rejections other than duplicate id"
echo "tokenize_dups_bounded: ok"
