#!/usr/bin/env bash
# xtts-tokenize and XTTS's character limits (Coqui's char_limits, measured as Python's len()
# of the raw text: code points): the summary always counts the records over their language's
# limit, -v names each, --max-chars auto|N rejects them (exit 3, 2 with --strict). And
# --normalize xtts on the text as given, with --unify for the old unification first.
set -euo pipefail
BIN="$BUILD/bin/xtts-tokenize"
T="${TMPDIR_TEST:-$(mktemp -d)}"
cd "$T"
fail() { echo "FAIL: $*" >&2; exit 1; }
rep() { local i; for ((i = 0; i < $2; i++)); do printf '%s' "$1"; done; }

a249=$(rep a 249)
{
  printf 'id\taudio\ttext\tlang\n'
  # en 250: 249 letters and an NFC é (251 bytes, 250 code points): not over
  printf 'e250\ta.wav\t%s\xc3\xa9\ten\n' "$a249"
  # en 251: 249 letters and e + U+0301 (NFD): 251 code points, over
  printf 'e251\ta.wav\t%se\xcc\x81\ten\n' "$a249"
  # zh 82 and 83 characters (limit 82, the code before the '-' of zh-cn)
  printf 'z82\ta.wav\t%s\tzh-cn\n' "$(rep 你 82)"
  printf 'z83\ta.wav\t%s\tzh-cn\n' "$(rep 你 83)"
  # de 253 is within de's limit though over en's
  printf 'd253\ta.wav\t%s\tde\n' "$(rep b 253)"
  # hi is not in Coqui's table: 250
  printf 'h251\ta.wav\t%s\thi\n' "$(rep x 251)"
  printf 'short\ta.wav\tHello there.\ten\n'
} > list.tsv

# counted, not rejected: exit 0, the summary says 3, no per-record line without -v
"$BIN" --format tsv list.tsv > out.tsv 2> err.txt || fail "no --max-chars: exit $?: $(cat err.txt)"
[ "$(tail -n +2 out.tsv | wc -l)" -eq 7 ] || fail "all 7 written"
grep -q "7 records read, 7 written, 0 rejected, 3 over XTTS's character limit of their language (-v names them" err.txt \
  || fail "summary: $(cat err.txt)"
grep -q "warning: " err.txt && fail "warning lines without -v: $(cat err.txt)"

# -v: one warning line per record, in input order, naming file, line, id, length and limit
"$BIN" --format tsv -v list.tsv > outv.tsv 2> errv.txt || fail "-v: exit $?"
cmp -s out.tsv outv.tsv || fail "-v changes the output"
[ "$(grep -c 'warning: ' errv.txt)" -eq 3 ] || fail "3 warnings: $(cat errv.txt)"
grep -q "list.tsv:3: record 2 (e251): warning: 251 characters, more than XTTS's limit of 250 for 'en' (this might cause truncated audio)" errv.txt \
  || fail "e251 warning: $(cat errv.txt)"
grep -q "list.tsv:5: record 4 (z83): warning: 83 characters, more than XTTS's limit of 82 for 'zh-cn'" errv.txt || fail "z83 warning"
grep -q "list.tsv:7: record 6 (h251): warning: 251 characters, more than XTTS's limit of 250 for 'hi'" errv.txt || fail "h251 warning"
[ "$(grep 'warning: ' errv.txt | sed 's/.*(\([^)]*\)): warning:.*/\1/' | tr '\n' ,)" = "e251,z83,h251," ] || fail "order: $(cat errv.txt)"

# --max-chars auto: the three are rejected records (exit 3; --strict: 2)
set +e
"$BIN" --format tsv --max-chars auto --rejects rej.tsv list.tsv > outa.tsv 2> erra.txt; rc=$?
"$BIN" --format tsv --max-chars auto --strict list.tsv > /dev/null 2>&1; rcs=$?
set -e
[ $rc -eq 3 ] || fail "--max-chars auto: expected 3, got $rc: $(cat erra.txt)"
[ $rcs -eq 2 ] || fail "--max-chars auto --strict: expected 2, got $rcs"
[ "$(tail -n +2 outa.tsv | cut -f1 | tr '\n' ,)" = "e250,z82,d253,short," ] || fail "written: $(tail -n +2 outa.tsv | cut -f1)"
grep -q "^e251	251 characters, more than XTTS's limit of 250 for 'en' (--max-chars auto)$" rej.tsv || fail "e251: $(cat rej.tsv)"
grep -q "^z83	83 characters, more than XTTS's limit of 82 for 'zh-cn' (--max-chars auto)$" rej.tsv || fail "z83: $(cat rej.tsv)"
grep -q "^h251	" rej.tsv || fail "h251: $(cat rej.tsv)"
grep -q "7 records read, 4 written, 3 rejected, 3 over XTTS's character limit of their language$" erra.txt \
  || fail "summary with --max-chars: $(cat erra.txt)"

# --max-chars N: one limit for every language, still counted against XTTS's own
set +e
"$BIN" --format tsv --max-chars 252 --rejects rej2.tsv list.tsv > out2.tsv 2> err2.txt; rc=$?
set -e
[ $rc -eq 3 ] || fail "--max-chars 252: expected 3, got $rc"
[ "$(cut -f1 rej2.tsv)" = d253 ] || fail "only d253 is over 252: $(cat rej2.tsv)"
grep -q "^d253	253 characters, more than --max-chars 252$" rej2.tsv || fail "reason: $(cat rej2.tsv)"
grep -q "6 written, 1 rejected, 3 over XTTS's character limit" err2.txt || fail "summary: $(cat err2.txt)"

# bad values are usage errors
for bad in 0 -3 x auto2; do
  set +e
  "$BIN" --format tsv --max-chars "$bad" list.tsv > /dev/null 2> eb.txt; rc=$?
  set -e
  [ $rc -eq 1 ] || fail "--max-chars $bad: expected 1, got $rc"
  grep -q -- "--max-chars must be auto or in 1..1048576" eb.txt || fail "message: $(cat eb.txt)"
done

# --normalize xtts reads the text as given; --unify unifies first (NFC, quotes, dashes,
# ellipses, invisible characters), as the mode did before, and the header says which
printf 'q1|\xc2\xabSolo\xc2\xbb \xe2\x80\x94 \xe2\x80\x9chola\xe2\x80\x9d\xe2\x80\xa6 s\xc2\xadi|\n' > q.csv
"$BIN" -l es --normalize xtts q.csv > raw.tsv 2>/dev/null
"$BIN" -l es --normalize xtts --unify q.csv > uni.tsv 2>/dev/null
[ "$(tail -1 raw.tsv | cut -f6)" = "$(printf '\xc2\xabsolo\xc2\xbb \xe2\x80\x94 \xe2\x80\x9chola\xe2\x80\x9d\xe2\x80\xa6 s\xc2\xadi')" ] \
  || fail "xtts text: $(tail -1 raw.tsv | cut -f6)"
[ "$(tail -1 uni.tsv | cut -f6)" = "solo - hola... si" ] || fail "--unify text: $(tail -1 uni.tsv | cut -f6)"
head -1 raw.tsv | grep -q '	normalize=xtts-2	' || fail "header: $(head -1 raw.tsv)"
head -1 uni.tsv | grep -q '	normalize=xtts-unify-2	' || fail "--unify header: $(head -1 uni.tsv)"
# spoken and none always unify: --unify changes nothing there
"$BIN" -l es q.csv > sp.tsv 2>/dev/null
"$BIN" -l es --unify q.csv > sp2.tsv 2>/dev/null
cmp -s sp.tsv sp2.tsv || fail "--unify changes spoken mode"
echo "tokenize_max_chars: ok"
