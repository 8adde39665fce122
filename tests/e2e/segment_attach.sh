#!/usr/bin/env bash
# xtts-segment never gives a sentence the speech before it that is not in the text, where that
# speech starts quietly (its onset under the silence threshold, so the pause before it looks
# longer) and ends a short pause (0.18 s) before the sentence: the case where reading on from
# the last sentence's pause would take it in. Speech of the same voice and of another language,
# faded in; the truth is written here and scripts/dev/segment-score.py checks every clip.
set -euo pipefail
BIN="$BUILD/bin"; T="${TMPDIR_TEST:-$(mktemp -d)}"; PY=${PYTHON:-python3}
here="$(cd "$(dirname "$0")/../.." && pwd)"
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v espeak-ng >/dev/null && command -v sox >/dev/null || { echo "skip: espeak-ng or sox missing"; exit 0; }
cd "$T"

A="The old lighthouse stood at the edge of the cliff for two hundred years."
B="Every night its keeper climbed the narrow stairs to light the lamp."
trimmed() { # VOICE TEXT OUT: spoken at 16 kHz, its silences at both ends trimmed
  espeak-ng -v "$1" -s 140 -p 65 -w raw.wav "$2"
  sox raw.wav -r 16000 "$3" silence 1 0.02 0.5% reverse silence 1 0.02 0.5% reverse
}
trimmed en-gb "$A" a.wav; trimmed en-gb "$B" b.wav
sox -n -r 16000 -c 1 s1.wav trim 0 0.6; sox -n -r 16000 -c 1 s2.wav trim 0 0.18
printf 'The old lighthouse stood at the edge of the cliff for two\nhundred years. %s\n' "$B" > text.txt
mkdir -p truth
: > truth/pairs.tsv
printf 'file\tunit\tkind\tstart\tend\ttext\n' > truth/truth.tsv
i=0
for extra in "en-gb|Yes, that is what she said to him." "fr|Ceci ne figure pas dans le texte."; do
  trimmed "${extra%%|*}" "${extra#*|}" f.wav; sox f.wav fq.wav fade q 0.4 0 0
  sox s1.wav a.wav s1.wav fq.wav s2.wav b.wav s1.wav "truth/rec-0$i.wav"
  cp text.txt "truth/text-0$i.txt"
  printf '%s/truth/rec-0%s.wav\t%s/truth/text-0%s.txt\ten\n' "$T" $i "$T" $i >> truth/pairs.tsv
  "$PY" - $i "$(soxi -D a.wav)" "$(soxi -D fq.wav)" "$(soxi -D b.wav)" "$A" "$B" >> truth/truth.tsv <<'PY'
import sys
i, a, f, b, ta, tb = sys.argv[1], *map(float, sys.argv[2:5]), sys.argv[5], sys.argv[6]
t = 0.6
print(f"{i}\tA\tread\t{t:.3f}\t{t + a:.3f}\t{ta}"); t += a + 0.6
print(f"{i}\tX\tunwritten\t{t:.3f}\t{t + f:.3f}\t"); t += f + 0.18
print(f"{i}\tB\tread\t{t:.3f}\t{t + b:.3f}\t{tb}")
PY
  i=$((i + 1))
done
rc=0; "$BIN/xtts-segment" --out out --pairs truth/pairs.tsv 2> err || rc=$?
cat err
[ "$rc" = 0 ] || [ "$rc" = 3 ] || fail "exit $rc"
score=$("$PY" "$here/scripts/dev/segment-score.py" truth out -v); echo "$score"
echo "$score" | grep -q 'wrong attachment 0, cut 0 ' || fail "a clip is wrong: $score"
echo "$score" | grep -q 'unwritten used 0' || fail "the speech not in the text was used: $score"
grep -q 'speech left out' err || fail "the speech not in the text is not named"
echo OK
