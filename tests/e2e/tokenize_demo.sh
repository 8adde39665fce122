#!/usr/bin/env bash
# xtts-tokenize on the demo dataset (scripts/make-demo-dataset.sh): the csv and tsv forms
# give the same records, language detection agrees with the tsv's lang column, only the
# broken transcript is rejected, and every tokenizer gives the same bytes whatever -j is.
set -euo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
BIN="$BUILD/bin/xtts-tokenize"
T="${TMPDIR_TEST:-$(mktemp -d)}"
fail() { echo "FAIL: $*" >&2; exit 1; }
bash "$here/scripts/make-demo-dataset.sh" "$T/demo" > /dev/null 2>&1 || fail "demo dataset generator"
D="$T/demo"

rc=0; "$BIN" --lang auto --rejects "$T/rej.tsv" "$D/metadata.csv" > "$T/csv.tsv" 2> "$T/err.txt" || rc=$?
[ $rc -eq 3 ] || fail "csv: expected exit 3 (one broken transcript), got $rc"
[ "$(cat "$T/rej.tsv")" = "$(printf 'bad_notext\tempty text after normalization')" ] || fail "rejects: $(cat "$T/rej.tsv")"
rc=0; "$BIN" --format tsv "$D/metadata.tsv" > "$T/tsv.tsv" 2> "$T/err2.txt" || rc=$?
[ $rc -eq 3 ] || fail "tsv: expected exit 3, got $rc"
head -1 "$T/tsv.tsv" | grep -q '	lang=column	' || fail "tsv header lang mode"
# the tsv's text column keeps digits; languages without number words say so
grep -q 'records in languages without number expansion kept their digits' "$T/err2.txt" || fail "digits warning"

# the same ids and audio paths; detected languages (csv) equal the lang column (tsv)
"$PYTHON" - "$T/csv.tsv" "$T/tsv.tsv" "$D" <<'PY'
import sys
rows = lambda p: [l.split("\t") for l in open(p, encoding="utf-8").read().split("\n")[1:] if l]
a, b = rows(sys.argv[1]), rows(sys.argv[2])
assert len(a) == len(b) == 63, (len(a), len(b))
wrong = [(x[0], x[2], y[2]) for x, y in zip(a, b) if x[2] != y[2]]
assert not wrong, f"detected language differs from the lang column: {wrong}"
for x, y in zip(a, b):
    assert x[0] == y[0] and x[3] == y[3] == f"{sys.argv[3]}/wavs/{x[0]}.wav", (x[:4], y[:4])
print(f"demo: {len(a)} records, languages detected as the lang column says")
PY

# -j does not change a byte, for every tokenizer
for tok in bytes phonemes "bpe --allow-unk --vocab $here/tests/golden/bpe_xtts.json"; do
  "$BIN" -q --tokenizer $tok -j 1 --format tsv "$D/metadata.tsv" > "$T/j1.tsv" 2>/dev/null || true
  "$BIN" -q --tokenizer $tok -j 3 --format tsv "$D/metadata.tsv" > "$T/j3.tsv" 2>/dev/null || true
  [ "$(wc -l < "$T/j1.tsv")" -gt 50 ] || fail "$tok: too few records"
  cmp -s "$T/j1.tsv" "$T/j3.tsv" || fail "$tok: -j 1 and -j 3 differ"
done
echo "tokenize_demo: ok"
