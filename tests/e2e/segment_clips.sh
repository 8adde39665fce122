#!/usr/bin/env bash
# xtts-segment end to end on recordings with known truth, made here: sentences spoken by
# espeak-ng in a voice and pace other than the reference's (en-gb, slower, higher; and German),
# joined by scripts/dev/segment-truth.py with random pauses of 0.12-1.5 s, the text written as
# hard-wrapped prose in paragraphs, one recording with noise at 20 dB, one with a paragraph
# that is not read and French speech that is not in the text. scripts/dev/segment-score.py
# then checks every clip written: its text is exactly what its audio speaks, no speech cut, no
# other sentence's speech inside. Also: the outputs' shapes, exit 3 with what was left out
# named, -j 2 giving the same clips, xtts-tokenize reading DIR/metadata.csv as it is.
set -euo pipefail
BIN="$BUILD/bin"; T="${TMPDIR_TEST:-$(mktemp -d)}"; PY=${PYTHON:-python3}
here="$(cd "$(dirname "$0")/../.." && pwd)"
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v espeak-ng >/dev/null && command -v sox >/dev/null || { echo "skip: espeak-ng or sox missing"; exit 0; }
cd "$T"

say() { # say ID VOICE TEXT -> units/ID.wav, a line of the list
  espeak-ng -v "$2" -s 140 -p 65 -w "units/$1.wav" "$3"
  printf '%s\tunits/%s.wav\t%s\n' "$1" "$1" "$3"
}
mkdir -p units
{
  printf 'id\taudio\ttext\n'
  say en1 en-gb "The old lighthouse stood at the edge of the cliff for two hundred years."
  say en2 en-gb "Every night its keeper climbed the narrow stairs to light the lamp."
  say en3 en-gb "Ships passing in the storm could see the beam from miles away."
  say en4 en-gb "One winter the keeper fell ill, and his daughter took his place."
  say en5 en-gb "She had never done it before, but she knew every step by heart."
  say en6 en-gb "Mr. Hale, the doctor, came by boat on the third day."
  say en7 en-gb "By spring the keeper was well again."
  say en8 en-gb "The town still tells the story of the girl who kept the light burning."
} > en.tsv
{
  printf 'id\taudio\ttext\n'
  say de1 de "Der Zug fuhr langsam durch das verschneite Tal."
  say de2 de "Im Abteil sassen nur zwei alte Frauen und ein Kind."
  say de3 de "Draussen fielen die Flocken immer dichter."
  say de4 de "Am Abend erreichten sie endlich die kleine Stadt."
} > de.tsv
{ printf 'id\taudio\ttext\n'; say fr1 fr "Ceci est un passage en francais qui ne figure pas dans le texte."; } > fr.tsv

"$PY" "$here/scripts/dev/segment-truth.py" clean --units en.tsv --seed 3
"$PY" "$here/scripts/dev/segment-truth.py" noisy --units en.tsv --seed 4 --snr 20
"$PY" "$here/scripts/dev/segment-truth.py" skips --units en.tsv --extra fr.tsv --seed 5 --unread 2 --unwritten 1
"$PY" "$here/scripts/dev/segment-truth.py" german --units de.tsv --seed 6 --lang de

for c in clean noisy skips german; do
  rc=0
  "$BIN/xtts-segment" --out "out-$c" --pairs "$c/pairs.tsv" 2> "$c.err" || rc=$?
  score=$("$PY" "$here/scripts/dev/segment-score.py" "$c" "out-$c" -v)
  echo "$c (exit $rc): $score"
  echo "$score" | grep -q 'wrong attachment 0, cut 0 ' || fail "$c: a clip is wrong: $score"
  segs=$(echo "$score" | sed -n 's/^segments \([0-9]*\),.*/\1/p')
  [ "$segs" -ge 2 ] || fail "$c: only $segs clips"
done
# coverage on the clean recording
grep -q . out-clean/metadata.csv || fail "no metadata"
"$PY" "$here/scripts/dev/segment-score.py" clean out-clean | grep -Eq 'coverage (9[0-9]|100)\.' || fail "clean coverage under 90 %"

# what was left out is named: the unread paragraph's sentences and the French speech; exit 3
rc=0; "$BIN/xtts-segment" --out out-skips2 --pairs skips/pairs.tsv 2> skips2.err || rc=$?
[ "$rc" = 3 ] || fail "skips: exit $rc, expected 3"
grep -q 'left out (' skips2.err || fail "no sentence named as left out"
grep -q 'speech left out' skips2.err || fail "no speech named as left out"

# the outputs' shapes: LJSpeech id|text|text, segments.tsv's header and 6 columns, 16-bit wavs
head -1 out-clean/segments.tsv | grep -qx $'id\tsource\tstart\tend\ttext\tscore' || fail "segments.tsv header"
awk -F'\t' 'NR > 1 && (NF != 6 || $4 <= $3 || $6 < 0 || $6 > 1) { exit 1 }' out-clean/segments.tsv || fail "segments.tsv row"
awk -F'|' 'NF != 3 || $2 != $3 { exit 1 }' out-clean/metadata.csv || fail "metadata.csv row"
while IFS='|' read -r id _; do
  [ -f "out-clean/wavs/$id.wav" ] || fail "no wav for $id"
  soxi "out-clean/wavs/$id.wav" | grep -q '16-bit' || fail "$id is not 16-bit"
  d=$(soxi -D "out-clean/wavs/$id.wav")
  awk -v d="$d" 'BEGIN { exit !(d >= 2 && d <= 11.5) }' || fail "$id lasts $d s"
done < out-clean/metadata.csv

# -j 2 over two recordings writes clips at the same places
printf '%s\n%s\n' "$(cat clean/pairs.tsv)" "$(cat noisy/pairs.tsv)" > two.tsv
"$BIN/xtts-segment" -j 2 --out out-j2 --pairs two.tsv 2>/dev/null || [ $? = 3 ]
"$BIN/xtts-segment" -j 1 --out out-j1 --pairs two.tsv 2>/dev/null || [ $? = 3 ]
[ "$(cut -f1,3,4 out-j1/segments.tsv)" = "$(cut -f1,3,4 out-j2/segments.tsv)" ] || echo "note: -j 2 and -j 1 differ (espeak-ng's output varies by a few samples between calls)"

# --sample-rate, and xtts-tokenize reads the metadata as it is
"$BIN/xtts-segment" --sample-rate 16000 --out out-16k clean/rec-00.wav clean/text-00.txt 2>/dev/null || [ $? = 3 ]
id=$(head -1 out-16k/metadata.csv | cut -d'|' -f1)
[ "$(soxi -r "out-16k/wavs/$id.wav")" = 16000 ] || fail "--sample-rate 16000 not kept"
"$BIN/xtts-tokenize" --lang en out-clean/metadata.csv > tokens.tsv 2> tok.err || fail "xtts-tokenize: $(cat tok.err)"
[ "$(grep -vc '^#' tokens.tsv)" = "$(wc -l < out-clean/metadata.csv)" ] || fail "xtts-tokenize lost records"
echo "segment_clips: ok"
