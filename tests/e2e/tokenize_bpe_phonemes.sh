#!/usr/bin/env bash
# xtts-tokenize with --tokenizer bpe (XTTS-style tokenizer.json from tests/golden) and
# --tokenizer phonemes; malformed vocabularies stop the run with exit 2 and the reason.
set -euo pipefail
BIN="$BUILD/bin/xtts-tokenize"
HERE="$(cd "$(dirname "$0")/.." && pwd)"
VOCAB="$HERE/golden/bpe_xtts.json"
T="${TMPDIR_TEST:-$(mktemp -d)}"
cd "$T"
fail() { echo "FAIL: $*" >&2; exit 1; }

printf 'a1|The quick brown fox jumps over the lazy dog.|\na2|Der schnelle braune Fuchs.|\na3|तेज़ भूरी लोमड़ी|\n' > meta.csv
set +e
"$BIN" --tokenizer bpe --vocab "$VOCAB" --normalize spoken --rejects rej.tsv meta.csv > bpe.tsv 2> err.txt; rc=$?
set -e
[ $rc -eq 3 ] || fail "expected 3 (no [hi] token), got $rc: $(cat err.txt)"
hash=$(sha256sum "$VOCAB" | cut -d' ' -f1)
head -1 bpe.tsv | grep -q "tokenizer=bpe	vocab_hash=sha256:$hash	" || fail "bpe header: $(head -1 bpe.tsv)"
head -1 bpe.tsv | grep -q "bpe_format=xtts" || fail "xtts vocabulary not recognized"
grep -q '^a3	the vocabulary has no token for language hi (\[hi\]; it has: en es fr de it pt pl tr ru nl cs ar zh-cn hu ko ja)$' rej.tsv ||
  fail "hi reject: $(cat rej.tsv)"
[ "$(tail -n +2 bpe.tsv | wc -l)" -eq 2 ] || fail "expected 2 bpe records"
# [en] first, [SPACE] (id 2) between words
grep -q '^4 .* 2 ' <<< "$(tail -n +2 bpe.tsv | head -1 | cut -f5)" || fail "bpe ids: $(tail -n +2 bpe.tsv | head -1 | cut -f5)"

# broken vocabularies: exit 2 and a reason naming the file
printf '{"model": {"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": ["a x"]}}' > badmerge.json
printf '{"model": {"type": "Unigram", "vocab": []}}' > unigram.json
printf '{"model": {' > broken.json
for v in badmerge unigram broken; do
  set +e
  "$BIN" --tokenizer bpe --vocab $v.json meta.csv > /dev/null 2> e.txt; rc=$?
  set -e
  [ $rc -eq 2 ] || fail "$v: expected 2, got $rc"
  grep -q "$v.json" e.txt || fail "$v: message lacks the file: $(cat e.txt)"
done
grep -q 'not valid JSON' e.txt || fail "broken json reason"
set +e
"$BIN" --tokenizer bpe meta.csv > /dev/null 2>&1; rc=$?
set -e
[ $rc -eq 1 ] || fail "bpe without --vocab: expected 1, got $rc"

# phonemes: espeak-ng IPA ids, the same output whatever -j is
"$BIN" --tokenizer phonemes -j 1 meta.csv > ph1.tsv 2>/dev/null
"$BIN" --tokenizer phonemes -j 3 meta.csv > ph3.tsv 2>/dev/null
cmp ph1.tsv ph3.tsv || fail "phonemes differ with -j"
head -1 ph1.tsv | grep -q 'tokenizer=phonemes' || fail "phonemes header"
[ "$(tail -n +2 ph1.tsv | wc -l)" -eq 3 ] || fail "expected 3 phoneme records"
grep -q '^en de hi $' <<< "$(tail -n +2 ph1.tsv | cut -f3 | tr '\n' ' ')" || fail "phoneme languages"
echo "tokenize_bpe_phonemes: ok"
