#!/usr/bin/env bash
# Per-language agreement of xtts-tokenize's ids with Hugging Face tokenizers' on XTTS's
# vocabulary, for sentences with languages (default tests/golden/xtts_sentences.tsv:
# "lang<TAB>text" lines). xtts-tokenize normalizes (--normalize MODE, default xtts) and
# encodes with --allow-unk, so every record that has a language token is compared;
# eval_xtts_ids.js encodes the same normalized text with the Rust library.
# Usage: tests/golden/eval_xtts_ids.sh [SENTENCES.tsv]
# Environment: BUILD (default ./build), XTTS_VOCAB (default tests/golden/xtts_vocab.json),
# MODE (xtts|spoken|none). Needs `cd tests/golden && npm install --no-save tokenizers`.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
BUILD="${BUILD:-$root/build}"
VOCAB="${XTTS_VOCAB:-$here/xtts_vocab.json}"
SENT="${1:-$here/xtts_sentences.tsv}"
[ -f "$VOCAB" ] || { echo "eval_xtts_ids: no vocabulary at $VOCAB (set XTTS_VOCAB)" >&2; exit 2; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
awk -F'\t' 'BEGIN { OFS = "\t"; print "id", "audio", "lang", "text" }
            { n[$1]++; print $1 "_" n[$1], "a.wav", $1, $2 }' "$SENT" > "$T/meta.tsv"
set +e
"$BUILD/bin/xtts-tokenize" -q -f tsv -t bpe --vocab "$VOCAB" --normalize "${MODE:-xtts}" --allow-unk \
  --rejects "$T/rej.tsv" "$T/meta.tsv" > "$T/tokens.tsv"
rc=$?
set -e
[ $rc -eq 0 ] || [ $rc -eq 3 ] || exit $rc
node "$here/eval_xtts_ids.js" "$T/tokens.tsv" "$VOCAB" "$T/rej.tsv"
