#!/usr/bin/env bash
# xtts-tokenize on Japanese: --normalize xtts romanizes as XTTS does (cutlet's Hepburn over
# MeCab + UniDic, lowercased) before BPE with [ja]; spoken mode and the bytes tokenizer keep
# the native script; without a dictionary each ja record is rejected with the reason, and
# nothing else is affected. The romanization itself is checked against the reference in
# tests/test_romanize.c.
set -euo pipefail
BIN="$BUILD/bin/xtts-tokenize"
HERE="$(cd "$(dirname "$0")/.." && pwd)"
VOCAB="$HERE/golden/bpe_xtts.json"
T="${TMPDIR_TEST:-$(mktemp -d)}"
cd "$T"
fail() { echo "FAIL: $*" >&2; exit 1; }

printf 'id\taudio\ttext\tlang\nj1\ta.wav\t東京タワーの高さは333mです。\tja\nj2\tb.wav\tカツカレーは美味しい\tja\ne1\tc.wav\tThe 3 dogs.\ten\n' > meta.tsv

# without a dictionary: the ja records are rejected, saying how to get one; en is written
set +e
XTTS_UNIDIC="$T/none" "$BIN" --format tsv -t bpe --vocab "$VOCAB" --rejects rej0.tsv meta.tsv > out0.tsv 2> err0.txt; rc=$?
set -e
[ $rc -eq 3 ] || fail "no dictionary: expected 3 (rejected records), got $rc: $(cat err0.txt)"
grep -q "^j1	--normalize xtts: no romanization for 'ja': no UniDic dictionary at $T/none (install Debian's unidic-mecab, or set XTTS_UNIDIC to a UniDic directory)$" rej0.tsv ||
  fail "no-dictionary reason: $(cat rej0.tsv)"
[ "$(tail -n +2 out0.tsv | cut -f1)" = e1 ] || fail "only e1 is written without a dictionary"

if [ -z "${XTTS_UNIDIC:-}" ] && [ ! -f /var/lib/mecab/dic/unidic/sys.dic ]; then
  echo "tokenize_ja: skipped the romanization checks (no UniDic: apt-get install unidic-mecab)"
  exit 0
fi
"$BIN" --format tsv -t bpe --vocab "$VOCAB" --allow-unk meta.tsv > bpe.tsv 2> err.txt || fail "bpe: $(cat err.txt)"
[ "$(awk -F'\t' '$1 == "j1" {print $6}' bpe.tsv)" = "tokyo tower no takasa wa 333m desu." ] || fail "j1 text: $(grep '^j1' bpe.tsv)"
[ "$(awk -F'\t' '$1 == "j2" {print $6}' bpe.tsv)" = "cutlet curry wa oishii" ] || fail "j2 text: $(grep '^j2' bpe.tsv)"
ja=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["model"]["vocab"]["[ja]"])' "$VOCAB")
[ "$(awk -F'\t' '$1 == "j1" {split($5, a, " "); print a[1]}' bpe.tsv)" = "$ja" ] || fail "j1 ids start with [ja] ($ja): $(grep '^j1' bpe.tsv)"
# spoken (and the bytes tokenizer's default) keep the Japanese script
"$BIN" --format tsv --normalize spoken meta.tsv > spoken.tsv 2>/dev/null
[ "$(awk -F'\t' '$1 == "j2" {print $6}' spoken.tsv)" = "カツカレーは美味しい" ] || fail "spoken j2: $(grep '^j2' spoken.tsv)"
# the same with 2 threads
"$BIN" --format tsv -t bpe --vocab "$VOCAB" --allow-unk -j 2 meta.tsv > bpe2.tsv 2>/dev/null
cmp -s bpe.tsv bpe2.tsv || fail "-j 2 differs from -j 1"
echo "tokenize_ja: ok"
