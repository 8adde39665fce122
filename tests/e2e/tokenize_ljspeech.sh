#!/usr/bin/env bash
# xtts-tokenize on LJSpeech-style metadata: output format, rejects and exit codes, order
# independent of -j, shards that partition the records, usage errors.
set -euo pipefail
BIN="$BUILD/bin/xtts-tokenize"
T="${TMPDIR_TEST:-$(mktemp -d)}"
cd "$T"
mkdir -p data/wavs
fail() { echo "FAIL: $*" >&2; exit 1; }

# 300 records in six languages, with numbers, plus three bad lines
{
  printf '\xEF\xBB\xBF'
  for i in $(seq 1 50); do
    printf 'EN%03d|Mr. Smith bought %d apples for $%d.50 on May %dth, 1984.|\r\n' "$i" "$i" "$i" "$((i % 28 + 1))"
    printf 'ES%03d|El Sr. García tiene %d años y vive en Madrid.|\n' "$i" "$i"
    printf 'FR%03d|Il est %d:15 et nous sommes le %d mai.|\n' "$i" "$((i % 24))" "$((i % 28 + 1))"
    printf 'DE%03d|Die Katze schläft seit %d Stunden auf dem Sofa.|\n' "$i" "$i"
    printf 'IT%03d|Il treno per Roma parte alle %d:30 dal binario %d.|\n' "$i" "$((i % 24))" "$i"
    printf 'PT%03d|A prefeitura abriu %d novas escolas este ano.|\n' "$i" "$i"
  done
  printf '\n'
  printf 'BAD001|caf\xC3|\n'
  printf 'EN001|duplicate id here|\n'
  printf 'BAD002\n'
} > data/metadata.csv

set +e
"$BIN" --lang auto --rejects rejects.tsv data/metadata.csv > out1.tsv 2> err1.txt
rc=$?
set -e
[ $rc -eq 3 ] || fail "expected exit 3 with rejects, got $rc"
head -1 out1.tsv | grep -q '^#xtts-tokens 1	tokenizer=bytes	vocab_hash=sha256:[0-9a-f]\{64\}	vocab_size=288	lang=auto	max_tokens=512	pad_id=0' || fail "bad header: $(head -1 out1.tsv)"
[ "$(tail -n +2 out1.tsv | wc -l)" -eq 300 ] || fail "expected 300 records"
[ "$(wc -l < rejects.tsv)" -eq 3 ] || fail "expected 3 rejects"
grep -q '^BAD001	invalid UTF-8$' rejects.tsv || fail "invalid UTF-8 not rejected"
grep -q '^EN001	duplicate id$' rejects.tsv || fail "duplicate not rejected"
grep -q '^line:304	expected id|text' rejects.tsv || fail "short line not rejected: $(cat rejects.tsv)"
grep -q 'metadata.csv:302: record 301 (BAD001): rejected: invalid UTF-8' err1.txt || fail "stderr lacks file:line: record N (id): rejected: reason"

"$PYTHON" - out1.tsv "$T/data" <<'PY'
import sys
path, d = sys.argv[1], sys.argv[2]
lines = open(path, encoding="utf-8").read().split("\n")
assert lines[-1] == ""
want = {"EN": "en", "ES": "es", "FR": "fr", "DE": "de", "IT": "it", "PT": "pt"}
for l in lines[1:-1]:
    f = l.split("\t")
    assert len(f) == 6, f
    rid, spk, lang, audio, ids, text = f
    assert lang == want[rid[:2]], (rid, lang, text)
    assert audio == f"{d}/wavs/{rid}.wav", audio
    ids = [int(x) for x in ids.split()]
    assert ids[0] == 1 and ids[-1] == 2 and ids[1] == 4 + ["en","es","fr","de","it","pt"].index(lang)
    assert bytes(i - 32 for i in ids[2:-1]).decode("utf-8") == text
    assert text == text.lower() and not any(c.isdigit() for c in text), text
    if rid == "EN001":
        assert text == "mister smith bought one apples for one dollar and fifty cents on may second, nineteen eighty-four.", text
print("records ok")
PY

# the same bytes whatever -j is
set +e
"$BIN" -j 1 -q data/metadata.csv > j1.tsv 2>/dev/null
"$BIN" -j 4 -q data/metadata.csv > j4.tsv 2>/dev/null
set -e
cmp j1.tsv j4.tsv || fail "-j 1 and -j 4 differ"
cmp j1.tsv out1.tsv || fail "default run differs from -j 1"

# shards partition the records and keep their order
for k in 0 1 2; do
  set +e; "$BIN" -q --shard $k/3 data/metadata.csv > shard$k.tsv 2>/dev/null; set -e
  head -1 shard$k.tsv | grep -q "shard=$k/3" || fail "shard header"
done
"$PYTHON" - <<'PY'
full = [l for l in open("out1.tsv", encoding="utf-8").read().split("\n")[1:] if l]
shards = [[l for l in open(f"shard{k}.tsv", encoding="utf-8").read().split("\n")[1:] if l] for k in range(3)]
assert sorted(sum(shards, [])) == sorted(full), "shards do not partition the records"
for s in shards:
    assert s == [l for l in full if l in set(s)], "shard order differs from input order"
print("shards ok")
PY

# --strict turns rejects into exit 2; a clean input exits 0
set +e
"$BIN" -q --strict data/metadata.csv > /dev/null 2>&1; rc=$?
set -e
[ $rc -eq 2 ] || fail "--strict: expected 2, got $rc"
head -5 data/metadata.csv | tail -4 > data/clean.csv
"$BIN" --lang en data/clean.csv > clean.tsv 2>/dev/null || fail "clean input did not exit 0"
grep -q '	lang=en	' clean.tsv || fail "forced language not in header"

# max tokens: longer records rejected, not truncated
set +e
"$BIN" -q --max-tokens 20 --rejects r2.tsv data/clean.csv > /dev/null 2>&1; rc=$?
set -e
[ $rc -eq 3 ] || fail "--max-tokens: expected 3, got $rc"
grep -q 'more than --max-tokens 20' r2.tsv || fail "--max-tokens reason"

# environment and usage errors
set +e
"$BIN" /nonexistent/metadata.csv > /dev/null 2> e.txt; rc=$?
[ $rc -eq 2 ] || fail "unreadable input: expected 2, got $rc"
grep -q '/nonexistent/metadata.csv' e.txt || fail "unreadable input message"
"$BIN" --lang xx data/clean.csv > /dev/null 2>&1; rc=$?
[ $rc -eq 1 ] || fail "bad --lang: expected 1, got $rc"
"$BIN" --shard 3/3 data/clean.csv > /dev/null 2>&1; rc=$?
[ $rc -eq 1 ] || fail "bad --shard: expected 1, got $rc"
"$BIN" --bogus > /dev/null 2>&1; rc=$?
[ $rc -eq 1 ] || fail "unknown option: expected 1, got $rc"
set -e
"$BIN" --help > help.txt || fail "--help exit"   # whole: grep -q may stop reading a long help early
grep -q 'normalized_text' help.txt || fail "--help"
"$BIN" --version | grep -q '^xtts-tokenize ' || fail "--version"
# stdin input
grep -q 'ES001 FR001 DE001 IT001' <<< "$("$BIN" --lang en - < data/clean.csv | tail -n +2 | cut -f1 | tr '\n' ' ')" || fail "stdin input"
echo "tokenize_ljspeech: ok"
