#!/usr/bin/env bash
# xtts-tokenize --format tsv: header row, optional id/speaker/lang columns, relative audio
# paths made absolute, lang column over detection, malformed rows and headers.
set -euo pipefail
BIN="$BUILD/bin/xtts-tokenize"
T="${TMPDIR_TEST:-$(mktemp -d)}"
cd "$T"
mkdir -p corpus/audio
fail() { echo "FAIL: $*" >&2; exit 1; }

printf 'speaker\taudio\ttext\tlang\textra\n' > corpus/list.tsv
printf 'anna\taudio/a1.wav\tHello there, how are you today?\t\tx\n' >> corpus/list.tsv
printf 'anna\t/abs/path/a2.flac\tIt is 10:30.\ten\tx\n' >> corpus/list.tsv
printf 'bruno\taudio/b1.ogg\tBuongiorno a tutti, come state?\tit\tx\n' >> corpus/list.tsv
printf 'carla\taudio/c1.wav\tDas ist gut.\tde\tx\n' >> corpus/list.tsv
printf 'dora\taudio/d1.wav\tKlingon text\txx\tx\n' >> corpus/list.tsv
printf 'eve\taudio/e1.wav\ttoo\tfew\n' >> corpus/list.tsv
printf 'fred\t\tno audio\ten\tx\n' >> corpus/list.tsv
printf 'gus\taudio/g1.wav\t...!!!\ten\tx\n' >> corpus/list.tsv

set +e
"$BIN" --format tsv --rejects rej.tsv corpus/list.tsv > out.tsv 2> err.txt
rc=$?
set -e
[ $rc -eq 3 ] || fail "expected 3, got $rc: $(cat err.txt)"
head -1 out.tsv | grep -q '	lang=column	' || fail "header lang mode: $(head -1 out.tsv)"
abs="$(cd corpus && pwd)"
"$PYTHON" - out.tsv "$abs" <<'PY'
import sys
rows = [l.split("\t") for l in open(sys.argv[1], encoding="utf-8").read().split("\n")[1:] if l]
d = sys.argv[2]
got = [(r[0], r[1], r[2], r[3], r[5]) for r in rows]
want = [
    ("a1", "anna", "en", f"{d}/audio/a1.wav", "hello there, how are you today?"),
    ("a2", "anna", "en", "/abs/path/a2.flac", "it is ten thirty."),
    ("b1", "bruno", "it", f"{d}/audio/b1.ogg", "buongiorno a tutti, come state?"),
    ("c1", "carla", "de", f"{d}/audio/c1.wav", "das ist gut."),
    ("g1", "gus", "en", f"{d}/audio/g1.wav", "...!!!"),
]
assert got == want, got
print("tsv rows ok")
PY
grep -q '^d1	unknown language in the lang column' rej.tsv || fail "bad lang column: $(cat rej.tsv)"
grep -q 'expected 5 tab-separated fields, found 4' rej.tsv || fail "short row"
grep -q 'missing audio path' rej.tsv || fail "missing audio"

# --audio-dir resolves relative paths elsewhere; ids from the id column
printf 'id\taudio\ttext\nu1\tx.wav\tGood morning.\n' > list2.tsv
"$BIN" --format tsv --lang en --audio-dir /srv/audio list2.tsv > out2.tsv 2>/dev/null
grep -q '^u1	/srv/audio/x.wav$' <<< "$(tail -1 out2.tsv | cut -f1,4)" || fail "--audio-dir: $(tail -1 out2.tsv)"

# a header without the required columns stops the run (exit 2, names the file and line)
printf 'path\ttranscript\nx.wav\thello\n' > bad.tsv
set +e
"$BIN" --format tsv bad.tsv > /dev/null 2> e.txt; rc=$?
set -e
[ $rc -eq 2 ] || fail "bad header: expected 2, got $rc"
grep -q "bad.tsv:1: the header row must name the columns 'audio' and 'text'" e.txt || fail "bad header message: $(cat e.txt)"
# empty text after normalization
printf 'audio\ttext\nq.wav\t   \n' > empty.tsv
set +e
"$BIN" --format tsv --lang en --rejects r3.tsv empty.tsv > /dev/null 2>&1; rc=$?
set -e
[ $rc -eq 3 ] || fail "empty text: expected 3"
grep -q '^q	empty text after normalization$' r3.tsv || fail "empty text reason: $(cat r3.tsv)"
echo "tokenize_tsv: ok"
