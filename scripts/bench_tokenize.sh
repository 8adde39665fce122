#!/usr/bin/env bash
# Tokenizer benchmark (called by `make bench`; not a test): lines/s of xtts-tokenize with
# each tokenizer on an LJSpeech-sized input (13,100 generated lines of 20-180 characters),
# with normalization and language identification (--lang auto), and the same lines encoded
# by Hugging Face tokenizers alone (npm `tokenizers`, when installed in tests/golden).
# Environment: BUILD (build dir, default build), THREADS (default: all cores), LINES,
# METADATA (use this metadata.csv instead of generating one, e.g. the text/metadata.csv of
# scripts/make-bench-data.sh).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${BUILD:-$root/build}"
BIN="$BUILD/bin/xtts-tokenize"
PY=/usr/bin/python3
LINES="${LINES:-13100}"
THREADS="${THREADS:-$(nproc)}"
VOCAB="$root/tests/golden/bpe_xtts.json"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
if [ -n "${METADATA:-}" ]; then
  cp "$METADATA" "$work/metadata.csv"
  LINES=$(grep -c . "$work/metadata.csv")
else
  $PY "$root/scripts/bench_tokenize_gen.py" "$work/metadata.csv" "$LINES"
fi

best_of() { # best of 3 wall-clock seconds of a command
  local best=""
  for _ in 1 2 3; do
    local t0 t1 s
    t0=$(date +%s.%N); "$@" > /dev/null 2>&1 || true; t1=$(date +%s.%N)
    s=$(echo "$t1 - $t0" | bc -l)
    if [ -z "$best" ] || [ "$(echo "$s < $best" | bc -l)" = 1 ]; then best=$s; fi
  done
  printf '%.3f' "$best"
}

echo "xtts-tokenize benchmark: $LINES lines, $(nproc) cores, -j $THREADS"
printf '%-34s %9s %12s\n' "run" "seconds" "lines/s"
row() { printf '%-34s %9s %12.0f\n' "$1" "$2" "$(echo "$LINES / $2" | bc -l)"; }
for j in 1 "$THREADS"; do
  s=$(best_of "$BIN" -q -j "$j" --lang auto "$work/metadata.csv"); row "bytes, auto lang, -j $j" "$s"
  s=$(best_of "$BIN" -q -j "$j" --lang auto --tokenizer bpe --vocab "$VOCAB" "$work/metadata.csv"); row "bpe, auto lang, -j $j" "$s"
  s=$(best_of "$BIN" -q -j "$j" --lang en --tokenizer bpe --vocab "$VOCAB" "$work/metadata.csv"); row "bpe, --lang en, -j $j" "$s"
  s=$(best_of "$BIN" -q -j "$j" --lang auto --tokenizer phonemes "$work/metadata.csv"); row "phonemes, auto lang, -j $j" "$s"
  [ "$THREADS" = 1 ] && break
done
if command -v node > /dev/null && [ -d "$root/tests/golden/node_modules/tokenizers" ]; then
  out=$(NODE_PATH="$root/tests/golden/node_modules" node "$root/scripts/bench_tokenize_peer.js" "$VOCAB" "$work/metadata.csv")
  seq=$(echo "$out" | sed 's/.*peer_seq_s=\([0-9.]*\).*/\1/')
  batch=$(echo "$out" | sed 's/.*peer_batch_s=\([0-9.]*\).*/\1/')
  row "HF tokenizers encode() (peer)" "$seq"
  row "HF tokenizers encodeBatch() (peer)" "$batch"
  "$BIN" -q --lang auto --tokenizer bpe --vocab "$VOCAB" "$work/metadata.csv" > "$work/bpe.tsv" 2>/dev/null || true
  chk=$(NODE_PATH="$root/tests/golden/node_modules" node "$root/scripts/bench_tokenize_peer.js" "$VOCAB" --check "$work/bpe.tsv" || true)
  echo "ids equal to HF tokenizers: $(echo "$chk" | sed 's/check_rows=\([0-9]*\) check_differ=\([0-9]*\)/\1 records checked, \2 differ/')"
else
  echo "peer skipped: run 'cd tests/golden && npm install tokenizers' to compare with HF tokenizers"
fi
