#!/usr/bin/env bash
# Splits and languages: --val-list/--test-list carried in the token stream and honoured by
# xtts-melcache (--val-fraction only for records without a split, with a warning when it
# selects none); --format auto refuses what it cannot tell; a header row is never data;
# any language the tokenizer serves, and with an XTTS vocabulary the [xx] tokens it has
# (the rejection names the missing ones).
set -euo pipefail
BIN="$BUILD/bin"
HERE="$(cd "$(dirname "$0")/.." && pwd)"
T="${TMPDIR_TEST:-$(mktemp -d)}"
cd "$T"
fail() { echo "FAIL: $*" >&2; exit 1; }
mkdir -p data/wavs
for i in 1 2 3 4 5 6; do
  sox -R -n -r 22050 -b 16 -c 1 "data/wavs/u$i.wav" synth 0.3 sine $((300 + 50 * i)) vol 0.3
  printf 'u%d|Sentence number %d is here.|\n' "$i" "$i" >> data/metadata.csv
done

# ---- splits from id lists
printf 'u2\n# a comment\n\nu3\n' > val.txt
printf 'u6\r\n' > test.txt
"$BIN/xtts-tokenize" -q --lang en --val-list val.txt --test-list test.txt data/metadata.csv > s.tsv 2>/dev/null
head -1 s.tsv | grep -q '	fields=split' || fail "no fields=split: $(head -1 s.tsv)"
[ "$(tail -n +2 s.tsv | cut -f1,7 | tr '\t\n' ':,')" = "u1:,u2:val,u3:val,u4:,u5:,u6:test," ] ||
  fail "splits: $(tail -n +2 s.tsv | cut -f1,7)"
# no lists, no split field: the six-field stream of before
"$BIN/xtts-tokenize" -q --lang en data/metadata.csv > plain.tsv 2>/dev/null
head -1 plain.tsv | grep -vq 'fields=' || fail "plain stream has fields="
[ "$(tail -n +2 plain.tsv | awk -F'\t' '{print NF}' | sort -u)" = "6" ] || fail "plain stream is not six fields"
# an id in both lists is rejected
printf 'u2\n' > both.txt
rc=0; "$BIN/xtts-tokenize" -q --lang en --val-list val.txt --test-list both.txt --rejects r.tsv data/metadata.csv > /dev/null 2>&1 || rc=$?
[ $rc -eq 3 ] && grep -q '^u2	id in both --val-list and --test-list$' r.tsv || fail "id in both lists: rc $rc $(cat r.tsv)"

# melcache: the stream's splits win, test is held out, --val-fraction for the rest
"$BIN/xtts-melcache" --out c1 -q --val-fraction 0.000001 s.tsv 2> c1.err
grep -q '1 records of the test split held out' c1.err || fail "test held out: $(cat c1.err)"
grep -q 'warning: --val-fraction 1e-06 selected no record' c1.err || fail "no val-fraction warning: $(cat c1.err)"
"$BIN/xtts-cache-verify" c1 > /dev/null
"$PYTHON" -c "
import json; m = json.load(open('c1/manifest.json'))
assert m['records'] == 5 and m['splits'] == {'train': 3, 'val': 2}, m['splits']"
grep -q '^split: val$' <<< "$("$BIN/xtts-cache-inspect" c1 --id u2)" || fail "u2 not val"
grep -q '^split: train$' <<< "$("$BIN/xtts-cache-inspect" c1 --id u1)" || fail "u1 not train"
# --val-fraction 0.999 puts (nearly) every record without a split in val, no warning
"$BIN/xtts-melcache" --out c2 -q --val-fraction 0.999 s.tsv 2> c2.err
grep -q warning c2.err && fail "unexpected warning: $(cat c2.err)"
"$PYTHON" -c "
import json; m = json.load(open('c2/manifest.json'))
assert m['splits'] == {'train': 0, 'val': 5}, m['splits']"

# ---- auto refuses when unsure; a header row is never data
printf 'a\tb\n1\t2\n' > odd.tsv
rc=0; "$BIN/xtts-tokenize" odd.tsv > /dev/null 2> e1 || rc=$?
[ $rc -eq 2 ] && grep -q "odd.tsv:1: cannot tell the dataset format: .*give --format" e1 || fail "auto unsure: rc $rc $(cat e1)"
printf 'audio_file|text|speaker_name\nwavs/u1.wav|Hello there.|anna\n' > data/metadata_train.csv
rc=0; "$BIN/xtts-tokenize" --format ljspeech data/metadata_train.csv > /dev/null 2> e2 || rc=$?
[ $rc -eq 2 ] && grep -q "metadata_train.csv:1: the first line is a header row .* use --format coqui" e2 || fail "header as data: rc $rc $(cat e2)"
rc=0; "$BIN/xtts-tokenize" --format coqui --lang en data/metadata.csv > /dev/null 2> e3 || rc=$?
[ $rc -eq 2 ] && grep -q "the header row must name the columns 'audio_file' and 'text'" e3 || fail "coqui without header: $(cat e3)"
rc=0; "$BIN/xtts-tokenize" --format nosuch data/metadata.csv > /dev/null 2> e4 || rc=$?
[ $rc -eq 1 ] || fail "--format nosuch: rc $rc"

# ---- languages
# bytes: any ISO 639 code; a language past XTTS's 17 has no language token
"$BIN/xtts-tokenize" -q --lang sw data/metadata.csv > sw.tsv 2>/dev/null
head -1 sw.tsv | grep -q '	lang=sw	' || fail "lang=sw header: $(head -1 sw.tsv)"
[ "$(sed -n 2p sw.tsv | cut -f3)" = sw ] && grep -q '^1 147 ' <<< "$(sed -n 2p sw.tsv | cut -f5)" || fail "sw record: $(sed -n 2p sw.tsv)"
rc=0; "$BIN/xtts-tokenize" -q --lang xx data/metadata.csv > /dev/null 2> e5 || rc=$?
[ $rc -eq 1 ] && grep -q -- "--lang xx is not a BCP-47/ISO 639 language code" e5 || fail "--lang xx: rc $rc $(cat e5)"
# phonemes: an espeak-ng voice language past XTTS's 17
"$BIN/xtts-tokenize" -q --tokenizer phonemes --lang sv data/metadata.csv > sv.tsv 2>/dev/null
[ "$(sed -n 2p sv.tsv | cut -f3)" = sv ] || fail "phonemes sv: $(sed -n 2p sv.tsv)"
rc=0; "$BIN/xtts-tokenize" -q --tokenizer phonemes --lang ab data/metadata.csv > /dev/null 2> e6 || rc=$?
[ $rc -eq 1 ] && grep -q "not served by the tokenizer (phonemes" e6 || fail "phonemes ab: rc $rc $(cat e6)"
# an XTTS vocabulary: its [xx] tokens; this one (v1-style) has no [hi], one with [hi] and [sw] does
V1="$HERE/golden/bpe_xtts.json"
rc=0; "$BIN/xtts-tokenize" -q --tokenizer bpe --vocab "$V1" --lang hi data/metadata.csv > /dev/null 2> e7 || rc=$?
[ $rc -eq 1 ] && grep -q "not served by the tokenizer (the vocabulary has a \[xx\] token for: en .* ja; missing: hi)" e7 ||
  fail "v1 hi: rc $rc $(cat e7)"
"$PYTHON" - "$V1" v2.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
n = max(max(d["model"]["vocab"].values()), max(t["id"] for t in d["added_tokens"])) + 1
for i, tok in enumerate(["[hi]", "[sw]"]):
    d["added_tokens"].append({"id": n + i, "content": tok, "single_word": False, "lstrip": False,
                              "rstrip": False, "normalized": False, "special": True})
json.dump(d, open(sys.argv[2], "w", encoding="utf-8"))
PY
"$BIN/xtts-tokenize" -q --tokenizer bpe --vocab v2.json --allow-unk --lang sw data/metadata.csv > v2.tsv 2>/dev/null
[ "$(sed -n 2p v2.tsv | cut -f3)" = sw ] || fail "v2 sw: $(sed -n 2p v2.tsv)"
# a lang column: a code the vocabulary lacks is rejected per record, naming what it has
printf 'audio\ttext\tlang\nwavs/u1.wav\tHello.\ten\nwavs/u2.wav\tHola.\tsw\nwavs/u3.wav\tHi.\tEN_us\n' > data/l.tsv
rc=0; "$BIN/xtts-tokenize" -q --tokenizer bpe --vocab "$V1" --allow-unk --rejects r2.tsv data/l.tsv > l.tsv 2>/dev/null || rc=$?
[ $rc -eq 3 ] || fail "lang column rc $rc"
grep -q "^u2	language 'sw' in the lang column is not served by the tokenizer (.*missing: hi)" r2.tsv || fail "sw rejected: $(cat r2.tsv)"
[ "$(tail -n +2 l.tsv | cut -f1,3 | tr '\t\n' ':,')" = "u1:en,u3:en," ] || fail "en_US to en: $(tail -n +2 l.tsv | cut -f1,3)"
echo "formats_splits_langs: ok"
