#!/usr/bin/env bash
# xtts-tokenize --normalize xtts|spoken|none and its defaults (recorded in the header), and
# the rejection of records whose XTTS BPE ids would hold [UNK] (unless --allow-unk).
set -euo pipefail
BIN="$BUILD/bin/xtts-tokenize"
HERE="$(cd "$(dirname "$0")/.." && pwd)"
VOCAB="$HERE/golden/bpe_xtts.json"
T="${TMPDIR_TEST:-$(mktemp -d)}"
cd "$T"
fail() { echo "FAIL: $*" >&2; exit 1; }
hdr() { head -1 "$1" | tr '\t' '\n' | grep "^$2=" | cut -d= -f2; }

printf 'n1|the 3 dogs sleep|\n' > num.csv
# defaults: spoken without an XTTS vocabulary, xtts with one
"$BIN" -l en num.csv > bytes.tsv 2>/dev/null
[ "$(hdr bytes.tsv normalize)" = spoken-1 ] || fail "bytes default: $(head -1 bytes.tsv)"
"$BIN" -l en -t bpe --vocab "$VOCAB" --allow-unk num.csv > bpe.tsv 2>/dev/null
[ "$(hdr bpe.tsv normalize)" = xtts-2 ] || fail "xtts vocabulary default: $(head -1 bpe.tsv)"
[ "$(hdr bpe.tsv lowercase)" = 1 ] || fail "xtts mode lowercases"
# explicit modes and the --no-expand alias
for m in spoken-1 none-1 xtts-2; do
  "$BIN" -l en --normalize ${m%-*} num.csv > ${m%-*}.tsv 2>/dev/null
  [ "$(hdr ${m%-*}.tsv normalize)" = $m ] || fail "--normalize ${m%-*}: $(head -1 ${m%-*}.tsv)"
done
"$BIN" -l en --no-expand num.csv > noexp.tsv 2>/dev/null
cmp -s noexp.tsv none.tsv || fail "--no-expand differs from --normalize none"
[ "$(tail -1 spoken.tsv | cut -f6)" = "the three dogs sleep" ] || fail "spoken text: $(tail -1 spoken.tsv | cut -f6)"
[ "$(tail -1 none.tsv | cut -f6)" = "the 3 dogs sleep" ] || fail "none text: $(tail -1 none.tsv | cut -f6)"
set +e
"$BIN" --normalize loud num.csv > /dev/null 2> e.txt; rc=$?
set -e
[ $rc -eq 1 ] || fail "--normalize loud: expected 1, got $rc"
grep -q 'xtts, spoken or none' e.txt || fail "usage message: $(cat e.txt)"

# [UNK]: rejected with the characters, kept with --allow-unk
printf 'u1|the ☃ dog|\nu2|the lazy dog|\nu3|the ☃ dog ☂ and ☃|\n' > unk.csv
set +e
"$BIN" -l en -t bpe --vocab "$VOCAB" --normalize spoken --rejects rej.tsv unk.csv > out.tsv 2> err.txt; rc=$?
set -e
[ $rc -eq 3 ] || fail "expected 3 (rejected records), got $rc"
grep -q "^u1	characters not in the vocabulary: '☃' U+2603 (--allow-unk keeps such records)$" rej.tsv || fail "u1: $(cat rej.tsv)"
grep -q "^u3	characters not in the vocabulary: '☃' U+2603, '☂' U+2602 " rej.tsv || fail "u3: $(cat rej.tsv)"
grep -q "unk.csv:3: record 3 (u3): rejected: characters not in the vocabulary" err.txt || fail "stderr names file and line: $(cat err.txt)"
[ "$(tail -n +2 out.tsv | cut -f1)" = u2 ] || fail "only u2 is written"
"$BIN" -l en -t bpe --vocab "$VOCAB" --normalize spoken --allow-unk unk.csv > allow.tsv 2>/dev/null
[ "$(tail -n +2 allow.tsv | wc -l)" -eq 3 ] || fail "--allow-unk keeps all three"
unk=$(hdr allow.tsv unk_id)
grep -qx "$unk" <<< "$(tail -n +2 allow.tsv | head -1 | cut -f5 | tr ' ' '\n')" || fail "u1 holds [UNK] with --allow-unk"
# the bytes tokenizer has no unknown characters
"$BIN" -l en unk.csv > b.tsv 2>/dev/null || fail "bytes rejects nothing"
echo "tokenize_normalize_unk: ok"
