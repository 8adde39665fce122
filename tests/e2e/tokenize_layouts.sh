#!/usr/bin/env bash
# xtts-tokenize on the layouts a new user meets first: Coqui's CSV with both `text` and
# `transcription` (text read, as Coqui's formatter reads it, unquoted as pandas reads it;
# --text-column picks the other;
# a column the header lacks is exit 1 naming the columns), a dataset folder given as
# METADATA (LJSpeech's metadata.csv; Coqui's metadata_train.csv and metadata_eval.csv as the
# train and val splits, carried into the cache; a folder with neither is exit 2 naming what
# was looked for), the files read said once on stderr, and --vocab alone meaning bpe.
set -euo pipefail
BIN="$BUILD/bin"
HERE="$(cd "$(dirname "$0")/.." && pwd)"
T="${TMPDIR_TEST:-$(mktemp -d)}"
cd "$T"
fail() { echo "FAIL: $*" >&2; exit 1; }
tone() { mkdir -p "$(dirname "$1")"; sox -R -n -r 22050 -b 16 -c 1 "$1" synth 0.3 sine "$2" vol 0.3; }
tok() { "$BIN/xtts-tokenize" "$@"; }
# the id and the text tokenized (fields 1 and 6) of each record, as id:text,...
texts() { tail -n +2 "$1" | cut -f1,6 | tr '\t\n' ':,'; }

# ---- Coqui's CSV with both text and transcription
mkdir -p ho/wavs
{
  printf 'audio_file|text|transcription|speaker_name\n'
  printf 'wavs/a1.wav|apples are red|pears are green|anna\n'
  printf 'wavs/a2.wav|the sky is blue|the sea is grey|anna\n'
  printf 'wavs/a3.wav|"she said ""yes"""|she said no|anna\n'   # quoted as pandas quotes it
} > ho/metadata.csv
tok --lang en --normalize none ho/metadata.csv > c1.tsv 2> c1.err
[ "$(texts c1.tsv)" = 'a1:apples are red,a2:the sky is blue,a3:she said "yes",' ] || fail "text column not read: $(texts c1.tsv)"
grep -qx anna <<< "$(tail -n +2 c1.tsv | cut -f2 | sort -u)" || fail "speaker_name lost"
"$PYTHON" - c1.tsv <<'PY'
import sys
for l in open(sys.argv[1], encoding="utf-8").read().split("\n")[1:-1]:
    f = l.split("\t")
    ids = [int(x) for x in f[4].split()]
    assert bytes(i - 32 for i in ids[2:-1]).decode("utf-8") == f[5], f   # the ids are the text's
print("ids ok")
PY
tok --lang en --normalize none --text-column transcription ho/metadata.csv > c2.tsv 2>/dev/null
[ "$(texts c2.tsv)" = "a1:pears are green,a2:the sea is grey,a3:she said no," ] || fail "--text-column transcription: $(texts c2.tsv)"
rc=0; tok --lang en --text-column trans ho/metadata.csv > c3.tsv 2> c3.err || rc=$?
[ $rc -eq 1 ] || fail "a column the header lacks: exit $rc, not 1"
grep -q "metadata.csv:1: no column 'trans' (--text-column); the header names: audio_file, text, transcription, speaker_name" c3.err ||
  fail "bad column message: $(cat c3.err)"
[ "$(grep -vc 'reading as --format' c3.err)" -eq 1 ] || fail "bad column: not one line: $(cat c3.err)"
# ljspeech: the raw text column instead of the normalized one
mkdir -p ljs
printf 'LJ1|It cost $5.|it cost five dollars.\nLJ2|plain words|\n' > ljs/metadata.csv
tok --lang en --normalize none --text-column text ljs/metadata.csv > l0.tsv 2>/dev/null
[ "$(texts l0.tsv)" = 'LJ1:it cost $5.,LJ2:plain words,' ] || fail "ljspeech --text-column text: $(texts l0.tsv)"
rc=0; tok --lang en --text-column sentence ljs/metadata.csv > /dev/null 2> l0.err || rc=$?
[ $rc -eq 1 ] && grep -q "no text column 'sentence' in --format ljspeech (--text-column); it has: text, normalized_text" l0.err ||
  fail "ljspeech bad column: rc $rc $(cat l0.err)"

# ---- an LJSpeech folder as METADATA
tok --lang en ljs > l1.tsv 2> l1.err
tok --lang en ljs/metadata.csv > l2.tsv 2>/dev/null
cmp -s l1.tsv l2.tsv || fail "the folder and its metadata.csv differ"
[ "$(tail -n +2 l1.tsv | cut -f4 | head -1)" = "$T/ljs/wavs/LJ1.wav" ] || fail "audio path: $(tail -n +2 l1.tsv | cut -f4 | head -1)"
[ "$(grep -c 'reading' l1.err)" -eq 1 ] && grep -q '^xtts-tokenize: ljs: reading metadata.csv as --format ljspeech$' l1.err ||
  fail "folder notice not said once: $(cat l1.err)"
tok --lang en --format ljspeech ljs > l3.tsv 2>/dev/null
cmp -s l1.tsv l3.tsv || fail "--format ljspeech on the folder differs"

# ---- a Coqui fine-tuning folder: metadata_train.csv and metadata_eval.csv are the splits
mkdir -p ft/wavs
{
  printf 'audio_file|text|speaker_name\n'
  printf 'wavs/t1.wav|one for training|coqui\n'
  printf 'wavs/t2.wav|two for training|coqui\n'
} > ft/metadata_train.csv
{
  printf 'audio_file|text|speaker_name\n'
  printf 'wavs/e1.wav|one for evaluation|coqui\n'
} > ft/metadata_eval.csv
tone ft/wavs/t1.wav 300; tone ft/wavs/t2.wav 400; tone ft/wavs/e1.wav 500
tok --lang en --normalize none ft > f1.tsv 2> f1.err
head -1 f1.tsv | grep -q '	fields=split' || fail "no split field: $(head -1 f1.tsv)"
[ "$(tail -n +2 f1.tsv | cut -f1,6,7 | tr '\t\n' ':,')" = "t1:one for training:train,t2:two for training:train,e1:one for evaluation:val," ] ||
  fail "folder splits: $(tail -n +2 f1.tsv | cut -f1,6,7)"
[ "$(grep -c reading f1.err)" -eq 1 ] &&
  grep -q '^xtts-tokenize: ft: reading metadata_train.csv (train) and metadata_eval.csv (val) as --format coqui$' f1.err ||
  fail "folder notice: $(cat f1.err)"
# --val-list still wins over the folder's split
printf 't2\n' > val.txt
tok -q --lang en --val-list val.txt ft > f2.tsv 2>/dev/null
[ "$(tail -n +2 f2.tsv | cut -f1,7 | tr '\t\n' ':,')" = "t1:train,t2:val,e1:val," ] || fail "--val-list over the folder"
# a record's messages name its own file
printf 'wavs/e2.wav|one|two|three\n' >> ft/metadata_eval.csv
rc=0; tok --lang en ft > /dev/null 2> f3.err || rc=$?
[ $rc -eq 3 ] && grep -q 'ft/metadata_eval.csv:3: record 4: rejected: expected 3 |-separated fields, found 4' f3.err || fail "reject names the file: $(cat f3.err)"
sed -i '$d' ft/metadata_eval.csv
# the splits reach the cache
"$BIN/xtts-melcache" -q --out cache f1.tsv 2>/dev/null
"$BIN/xtts-cache-verify" cache > /dev/null || fail "cache from the folder does not verify"
"$PYTHON" -c "
import json; m = json.load(open('cache/manifest.json'))
assert m['records'] == 3 and m['splits'] == {'train': 2, 'val': 1}, m['splits']"
# metadata.csv beside the split files is not read, and the notice says so
printf 'audio_file|text|speaker_name\nwavs/t1.wav|whole|coqui\n' > ft/metadata.csv
grep -qx 't1 t2 e1 ' <<< "$(tok --lang en ft 2> f4.err | tail -n +2 | cut -f1 | tr '\n' ' ')" || fail "split files not preferred"
grep -q 'as --format coqui; metadata.csv is not read$' f4.err || fail "metadata.csv notice: $(cat f4.err)"

# ---- a folder without metadata: one line naming what was looked for, exit 2
mkdir -p nothing/wavs
rc=0; tok --lang en nothing > /dev/null 2> n1.err || rc=$?
[ $rc -eq 2 ] || fail "empty folder: exit $rc"
[ "$(wc -l < n1.err)" -eq 1 ] &&
  grep -q '^xtts-tokenize: nothing: no dataset metadata found: looked for metadata_train.csv, metadata_eval.csv, metadata_val.csv, metadata.csv, a VCTK tree' n1.err ||
  fail "empty folder message: $(cat n1.err)"
rc=0; tok --lang en --format coqui nothing > /dev/null 2> n2.err || rc=$?
[ $rc -eq 2 ] && [ "$(wc -l < n2.err)" -eq 1 ] && grep -q 'metadata.csv' n2.err || fail "empty folder, --format coqui: rc $rc $(cat n2.err)"

# ---- --vocab alone means --tokenizer bpe
V="$HERE/golden/bpe_xtts.json"
tok --lang en --vocab "$V" ljs > b1.tsv 2>/dev/null
tok --lang en --tokenizer bpe --vocab "$V" ljs > b2.tsv 2>/dev/null
head -1 b1.tsv | grep -q '	tokenizer=bpe	' || fail "--vocab alone: not bpe: $(head -1 b1.tsv)"
cmp -s b1.tsv b2.tsv || fail "--vocab alone differs from --tokenizer bpe --vocab"
[ "$(tail -n +2 b1.tsv | cut -f5 | head -1 | cut -d' ' -f1)" != 1 ] || fail "bpe ids look like bytes ids"
rc=0; tok --lang en --tokenizer bytes --vocab "$V" ljs > /dev/null 2> b3.err || rc=$?
[ $rc -eq 1 ] && grep -q 'the bytes tokenizer takes no --vocab' b3.err || fail "--tokenizer bytes --vocab: rc $rc $(cat b3.err)"
echo "tokenize_layouts: ok"
