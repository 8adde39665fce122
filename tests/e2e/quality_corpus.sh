#!/usr/bin/env bash
# The quality flags on a small corpus with known injected defects (scripts/dev/quality-corpus.py,
# espeak-ng speech, one defect per clip): every flag at precision and recall >= 0.95 and at
# most 2 % of the clean clips flagged (scripts/dev/quality-eval.py --check); the metrics read
# through the audio front end by build/tests/tools/quality-eval. A thresholds file that
# names an unknown key stops the helper with exit 1 and the file and line.
set -euo pipefail
T="${TMPDIR_TEST:-$(mktemp -d)}"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
PY=${PYTHON:-/usr/bin/python3}
EVAL="$BUILD/tests/tools/quality-eval"
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v espeak-ng >/dev/null && command -v sox >/dev/null || fail "espeak-ng and sox are needed (make deps)"

"$PY" "$ROOT/scripts/dev/quality-corpus.py" "$T/c" --seed 7 --clean-per-speaker 10 --per-defect 6 >/dev/null
"$EVAL" "$T/c/metadata.tsv" > "$T/flags.tsv"
[ "$(wc -l < "$T/flags.tsv")" -eq "$(wc -l < "$T/c/metadata.tsv")" ] || fail "a row per record"
"$PY" "$ROOT/scripts/dev/quality-eval.py" "$T/c/labels.tsv" "$T/flags.tsv" --check > "$T/eval.txt" ||
  { cat "$T/eval.txt"; fail "precision, recall or clean clips flagged off target"; }
cat "$T/eval.txt"
# a duplicate names its source, the source is not flagged
awk -F'\t' '$2 == "dup_audio" { print $1, $4 }' "$T/c/labels.tsv" | head -3 | while read -r id src; do
  grep -q "^$id	dup_audio	$src	" "$T/flags.tsv" || fail "$id should be dup_audio of $src"
  grep -q "^$src	-	-	" "$T/flags.tsv" || fail "$src (the earlier copy) should carry no flag"
done

printf 'snr_db = 10\n# comment\nsnr = 3\n' > "$T/q.conf"
set +e
"$EVAL" --thresholds "$T/q.conf" "$T/c/metadata.tsv" > /dev/null 2> "$T/err.txt"
rc=$?
set -e
[ $rc -eq 1 ] || fail "unknown threshold key: exit $rc, expected 1"
grep -q "q.conf:3: unknown key 'snr'" "$T/err.txt" || fail "message: $(cat "$T/err.txt")"
echo "quality corpus: ok"
