#!/usr/bin/env bash
# xtts-segment's exit codes and its one line for each bad input: usage errors (1), a file that
# is not audio, a missing file, an empty text, a text in Latin-1 and in UTF-16, a long
# silence, a bad pairs list (2), and a text with no sentence end (its lines taken as
# sentences, said once). A refused pair in a list does not stop the others.
set -euo pipefail
BIN="$BUILD/bin"; T="${TMPDIR_TEST:-$(mktemp -d)}"
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v espeak-ng >/dev/null && command -v sox >/dev/null || { echo "skip: espeak-ng or sox missing"; exit 0; }
cd "$T"
S="$BIN/xtts-segment"

expect() { # expect CODE PATTERN -- ARGS...: exit CODE, stderr has PATTERN, and one line that is not the summary
  local code=$1 pat=$2; shift 3
  local rc=0
  "$S" "$@" > out.txt 2> err.txt || rc=$?
  [ "$rc" = "$code" ] || fail "$*: exit $rc, expected $code: $(cat err.txt)"
  grep -q -- "$pat" err.txt || fail "$*: no '$pat' in: $(cat err.txt)"
  [ "$(grep -vc '^xtts-segment: [0-9]* of [0-9]* sentences\|Try ' err.txt)" = 1 ] || fail "$*: not one line: $(cat err.txt)"
}

espeak-ng -v en-gb -s 140 -w a.wav "The ship left the harbour at dawn. The sea was calm and grey." 
printf 'The ship left the harbour at dawn.\nThe sea was calm and grey.\n' > a.txt

expect 1 'expected AUDIO and TEXT' -- --out o a.wav
expect 1 '--out DIR is required' -- a.wav a.txt
expect 1 'min-seconds' -- --out o --min-seconds 5 --max-seconds 3 a.wav a.txt
expect 1 'not a language code' -- --out o --lang 'e n' a.wav a.txt
expect 1 'expected a number' -- --out o --pad x a.wav a.txt

cp a.txt notaudio.wav
expect 2 'not audio libsndfile can decode' -- --out o notaudio.wav a.txt
expect 2 'No such file' -- --out o missing.wav a.txt
: > empty.txt
expect 2 'no text' -- --out o a.wav empty.txt
printf 'The ship left the harbour at dawn. Caf\xe9.\n' > latin1.txt
expect 2 'not UTF-8' -- --out o a.wav latin1.txt
printf '\xff\xfeT\0h\0e\0' > utf16.txt
expect 2 'UTF-16' -- --out o a.wav utf16.txt
sox -n -r 16000 -b 16 -c 1 silence.flac trim 0 600   # ten minutes of digital silence
expect 2 'no speech found' -- --out o silence.flac a.txt
printf 'a.wav\ta.txt\nno tab here\n' > bad.tsv
expect 2 'bad.tsv:2:' -- --out o --pairs bad.tsv

# no sentence end: said once, the lines are the sentences, the clip is written
printf 'The ship left the harbour at dawn\nThe sea was calm and grey\n' > noend.txt
rc=0; "$S" --out o2 a.wav noend.txt 2> err.txt || rc=$?
[ "$rc" = 0 ] || [ "$rc" = 3 ] || fail "no sentence end: exit $rc: $(cat err.txt)"
[ "$(grep -c 'no sentence end' err.txt)" = 1 ] || fail "no sentence end not said once: $(cat err.txt)"
[ -s o2/metadata.csv ] || fail "no sentence end: nothing written"

# a refused pair among good ones: the others are written, the run exits 2
printf 'notaudio.wav\ta.txt\na.wav\ta.txt\n' > mixed.tsv
rc=0; "$S" --out o3 --pairs mixed.tsv 2> err.txt || rc=$?
[ "$rc" = 2 ] || fail "mixed list: exit $rc"
[ -s o3/metadata.csv ] || fail "mixed list: the good pair was not written"
"$S" --help | grep -q -- '--pairs' || fail "--help"
"$S" --version | grep -q '^xtts-segment ' || fail "--version"
echo "segment_inputs: ok"
