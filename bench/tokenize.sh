#!/usr/bin/env bash
# Tokenizer benchmark (called by `make bench`; not a test): lines/s of xtts-tokenize with
# each tokenizer on an LJSpeech-sized input (13,100 generated lines of 20-180 characters),
# with normalization and language identification (--lang auto), and the same lines encoded
# by Hugging Face tokenizers alone (npm `tokenizers`, when installed in tests/golden).
# XTTS_VOCAB: XTTS's tokenizer.json for the BPE rows (default tests/golden/xtts_vocab.json).
# Environment: BUILD (build dir, default build), THREADS (default: all cores), LINES,
# METADATA (use this metadata.csv instead of generating one; default under bench/run.sh:
# $BENCH_DATA/text/metadata.csv from bench/make-data.sh).
# Prints a markdown table; each time is the median of 3 runs. With the peer installed, the
# row of the whole `--lang auto` run with BPE on all cores is measured alternated with the
# peer's encodeBatch (3 pairs) and carries the ratio ours / HF encodeBatch.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${BUILD:-$root/build}"
BIN="$BUILD/bin/xtts-tokenize"
PY=/usr/bin/python3
LINES="${LINES:-13100}"
THREADS="${THREADS:-$(nproc)}"
# BPE on XTTS's real vocabulary (coqui-ai/TTS tests/inputs/xtts_vocab.json, at XTTS_VOCAB
# or tests/golden/xtts_vocab.json) when present, else on the small test vocabulary.
VOCAB="${XTTS_VOCAB:-$root/tests/golden/xtts_vocab.json}"
VOCAB_NAME="XTTS's vocabulary ($(basename "$VOCAB"))"
if [ ! -f "$VOCAB" ]; then
  VOCAB="$root/tests/golden/bpe_xtts.json"
  VOCAB_NAME="the small test vocabulary (tests/golden/bpe_xtts.json; XTTS's own was not found)"
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
if [ -z "${METADATA:-}" ] && [ -n "${BENCH_DATA:-}" ] && [ -f "$BENCH_DATA/text/metadata.csv" ]; then
  METADATA="$BENCH_DATA/text/metadata.csv"
fi
if [ -n "${METADATA:-}" ]; then
  cp "$METADATA" "$work/metadata.csv"
  LINES=$(grep -c . "$work/metadata.csv")
else
  $PY "$root/bench/tokenize-gen.py" "$work/metadata.csv" "$LINES"
fi

median_of_3() { # median wall-clock seconds of 3 runs of a command
  local t=()
  for _ in 1 2 3; do
    local t0 t1
    t0=$(date +%s.%N); "$@" > /dev/null 2>&1 || true; t1=$(date +%s.%N)
    t+=("$(echo "$t1 - $t0" | bc -l)")
  done
  printf '%s\n' "${t[@]}" | sort -g | sed -n 2p | xargs printf '%.3f'
}

echo "xtts-tokenize on $LINES LJSpeech-sized lines ($(nproc) cores), median of 3 runs; the peer is"
echo "Hugging Face tokenizers (Rust, npm binding) encoding the same lines with the same tokenizer.json."
echo "BPE rows use $VOCAB_NAME, the default --normalize (xtts with an XTTS vocabulary) and"
echo "--allow-unk, so that every line is written."
echo
peer=0
if command -v node > /dev/null && [ -d "$root/tests/golden/node_modules/tokenizers" ]; then peer=1; fi
run_peer() { NODE_PATH="$root/tests/golden/node_modules" node "$root/bench/tokenize-peer.js" "$VOCAB" "$work/metadata.csv"; }
median() { printf '%s\n' "$@" | sort -g | sed -n "$(( ($# + 1) / 2 ))p"; }
# the whole xtts-tokenize --lang auto with BPE on all cores, and the peer, alternated
pair_ours=() pair_seq=() pair_batch=()
if [ "$peer" = 1 ]; then
  for _ in 1 2 3; do
    t0=$(date +%s.%N)
    "$BIN" -q -j "$THREADS" --lang auto --tokenizer bpe --allow-unk --vocab "$VOCAB" "$work/metadata.csv" > /dev/null 2>&1 || true
    t1=$(date +%s.%N)
    pair_ours+=("$(echo "$t1 - $t0" | bc -l)")
    out=$(run_peer)
    pair_seq+=("$(echo "$out" | sed 's/.*peer_seq_s=\([0-9.]*\).*/\1/')")
    pair_batch+=("$(echo "$out" | sed 's/.*peer_batch_s=\([0-9.]*\).*/\1/')")
  done
  ours_auto=$(printf '%.3f' "$(median "${pair_ours[@]}")")
  hf_seq=$(printf '%.3f' "$(median "${pair_seq[@]}")")
  hf_batch=$(printf '%.3f' "$(median "${pair_batch[@]}")")
fi

echo "| run | seconds | lines/s | ours / HF encodeBatch |"
echo "|---|---|---|---|"
row() { printf '| %s | %s | %.0f | %s |\n' "$1" "$2" "$(echo "$LINES / $2" | bc -l)" "${3:-}"; }
for j in 1 "$THREADS"; do
  s=$(median_of_3 "$BIN" -q -j "$j" --lang auto "$work/metadata.csv"); row "bytes, normalize + language id, -j $j" "$s"
  if [ "$peer" = 1 ] && [ "$j" = "$THREADS" ]; then
    row "bpe, normalize + language id, -j $j (alternated with the peer)" "$ours_auto" \
      "$(printf '%.2f (%s s / %s s)' "$(echo "$ours_auto / $hf_batch" | bc -l)" "$ours_auto" "$hf_batch")"
  else
    s=$(median_of_3 "$BIN" -q -j "$j" --lang auto --tokenizer bpe --allow-unk --vocab "$VOCAB" "$work/metadata.csv"); row "bpe, normalize + language id, -j $j" "$s"
  fi
  s=$(median_of_3 "$BIN" -q -j "$j" --lang en --tokenizer bpe --allow-unk --vocab "$VOCAB" "$work/metadata.csv"); row "bpe, normalize, --lang en, -j $j" "$s"
  s=$(median_of_3 "$BIN" -q -j "$j" --lang auto --tokenizer phonemes "$work/metadata.csv"); row "phonemes, normalize + language id, -j $j" "$s"
  [ "$THREADS" = 1 ] && break
done
# Chinese: 13,100 lines with numbers (tests/golden/make_zh_bench_lines.py), Coqui's number
# reading and pinyin, BPE-encoded with [zh-cn]
$PY "$root/tests/golden/make_zh_bench_lines.py" > "$work/zh.csv"
for j in 1 "$THREADS"; do
  s=$(median_of_3 "$BIN" -q -j "$j" --format ljspeech --lang zh-cn --tokenizer bpe --allow-unk --vocab "$VOCAB" --max-tokens 100000 "$work/zh.csv"); row "bpe, Chinese with numbers romanized (--lang zh-cn), -j $j" "$s"
  [ "$THREADS" = 1 ] && break
done
# Japanese: the golden sentences (tests/golden/romanize_ja*_in.txt) repeated to $LINES lines,
# romanized as XTTS does (MeCab + UniDic + cutlet's rules) and BPE-encoded with [ja]
if [ -n "${XTTS_UNIDIC:-}" ] || [ -f /var/lib/mecab/dic/unidic/sys.dic ]; then
  cat "$root/tests/golden/romanize_ja_in.txt" "$root/tests/golden/romanize_ja_heldout_in.txt" | grep . |
    awk -v n="$LINES" '{l[NR] = $0} END {print "id\taudio\ttext\tlang"; for (i = 0; i < n; i++) printf "j%d\tj.wav\t%s\tja\n", i, l[i % NR + 1]}' > "$work/ja.tsv"
  for j in 1 "$THREADS"; do
    s=$(median_of_3 "$BIN" -q -j "$j" --format tsv --tokenizer bpe --allow-unk --vocab "$VOCAB" "$work/ja.tsv"); row "bpe, Japanese romanized (--lang ja), -j $j" "$s"
    [ "$THREADS" = 1 ] && break
  done
else
  echo "| bpe, Japanese romanized: skipped (no UniDic; apt-get install unidic-mecab) | - | - |"
fi
if [ "$peer" = 1 ]; then
  row "HF tokenizers encode(), one call per line (peer)" "$hf_seq"
  row "HF tokenizers encodeBatch(), all cores (peer)" "$hf_batch" "1"
  "$BIN" -q --lang auto --tokenizer bpe --allow-unk --vocab "$VOCAB" "$work/metadata.csv" > "$work/bpe.tsv" 2>/dev/null || true
  chk=$(NODE_PATH="$root/tests/golden/node_modules" node "$root/bench/tokenize-peer.js" "$VOCAB" --check "$work/bpe.tsv" || true)
  echo
  echo "BPE ids equal to HF tokenizers': $(echo "$chk" | sed 's/check_rows=\([0-9]*\) check_differ=\([0-9]*\)/\1 records checked, \2 differ/')"
else
  echo
  echo "Peer skipped: run 'cd tests/golden && npm install tokenizers' to compare with HF tokenizers."
fi
