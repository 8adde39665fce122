#!/usr/bin/env bash
# One record numbering in every program's messages (docs/design.md, "Naming records"):
# `record N (ID)`, N counting the records of the program's input from 1. xtts-melcache's
# rejection lines and xtts-cache-inspect's list of the cache's rejects give the same N for the
# same record, N being its place in the token stream; xtts-tokenize gives FILE:LINE and the
# record's N in the metadata; a stored record is `index N` from 0, as --index takes it.
set -euo pipefail
source "$(dirname "$0")/faults_lib.bash"
bash "$HERE/scripts/make-demo-dataset.sh" "$T/data" >/dev/null 2>&1
expect_rc 3 "$BIN/xtts-tokenize" --lang auto "$T/data/metadata.csv"
mv "$T/out.txt" "$T/tokens.tsv"
line=$(grep -n '^bad_notext|' "$T/data/metadata.csv" | cut -d: -f1)
grep -q "^xtts-tokenize: $T/data/metadata.csv:$line: record $line (bad_notext): rejected: empty text after normalization$" "$T/err.txt" ||
  { cat "$T/err.txt" >&2; die "xtts-tokenize does not name record $line (bad_notext)"; }

expect_rc 3 "$BIN/xtts-melcache" --out "$T/cache" "$T/tokens.tsv"
grep 'rejected: ' "$T/err.txt" | sed -n 's/^xtts-melcache: [^ ]*: record \([0-9]*\) (\([^)]*\)): rejected: .*/\1 \2/p' > "$T/melcache.txt"
[ "$(wc -l < "$T/melcache.txt")" -eq 3 ] || { cat "$T/err.txt" >&2; die "want 3 rejection lines 'record N (ID): rejected: ...'"; }
expect_rc 0 "$BIN/xtts-cache-inspect" --no-lengths "$T/cache"
sed -n 's/^  record \([0-9]*\) (\([^)]*\)): .*/\1 \2/p' "$T/out.txt" > "$T/inspect.txt"
cmp -s "$T/melcache.txt" "$T/inspect.txt" || { paste "$T/melcache.txt" "$T/inspect.txt" >&2; die "melcache and inspect number the rejects differently"; }
# N is the record's place in the token stream (the header is line 1)
while read -r n id; do
  at=$(awk -F'\t' -v id="$id" 'NR > 1 && $1 == id {print NR - 1}' "$T/tokens.tsv")
  [ "$at" = "$n" ] || die "$id is record $at of the token stream, the messages say $n"
done < "$T/melcache.txt"
# --json keeps the manifest's 0-based input
expect_rc 0 "$BIN/xtts-cache-inspect" --no-lengths --json "$T/cache"
"$PY" - "$T/out.txt" "$T/melcache.txt" <<'PYEOF'
import json, sys
rej = json.load(open(sys.argv[1]))["rejects"]
want = [l.split() for l in open(sys.argv[2])]
assert [(r["input"] + 1, r["id"]) for r in rej] == [(int(n), i) for n, i in want], (rej, want)
PYEOF
# a stored record: index N from 0, as --index takes it
expect_rc 0 "$BIN/xtts-cache-inspect" "$T/cache" --index 0
grep -q "^index: 0 (shard-00000)$" "$T/out.txt" || die "inspect --index 0"
echo ok
