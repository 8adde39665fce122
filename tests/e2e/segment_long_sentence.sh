#!/usr/bin/env bash
# xtts-segment cuts a sentence longer than --max-seconds at its own pauses where the alignment
# is sure: an espeak-ng sentence of about 16 s with three commas among short ones (joined with
# pauses by scripts/dev/segment-truth.py). Its pieces must give its text back joined with
# spaces, cover its speech from its start to its end, each fit --max-seconds, and each cut lie
# where the sentence's text up to that comma ends (the same voice speaking that prefix alone);
# the other clips are right (scripts/dev/segment-score.py). With a --max-seconds no cut can
# meet, it is left out and named as before.
set -euo pipefail
BIN="$BUILD/bin"; T="${TMPDIR_TEST:-$(mktemp -d)}"; PY=${PYTHON:-python3}
here="$(cd "$(dirname "$0")/../.." && pwd)"
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v espeak-ng >/dev/null && command -v sox >/dev/null || { echo "skip: espeak-ng or sox missing"; exit 0; }
cd "$T"

long="When the storm had passed, the fishermen came down to the harbour one by one, counting the boats that had come home, and mending the nets that the wind had torn, while their children ran along the wall and shouted the names of the ships."
say() { espeak-ng -v en-gb -s 140 -p 65 -w "units/$1.wav" "$2"; printf '%s\tunits/%s.wav\t%s\n' "$1" "$1" "$2"; }
mkdir -p units
{
  printf 'id\taudio\ttext\n'
  say l1 "The old lighthouse stood at the edge of the cliff for two hundred years."
  say l2 "$long"
  say l3 "Ships passing in the storm could see the beam from miles away."
  say l4 "By spring the keeper was well again."
} > units.tsv
"$PY" "$here/scripts/dev/segment-truth.py" c --units units.tsv --seed 3

rc=0; "$BIN/xtts-segment" --out out --pairs c/pairs.tsv 2> err || rc=$?
cat err
[ "$rc" = 0 ] || fail "exit $rc"
# the prefixes' spoken lengths (speech only: espeak-ng's trailing silence trimmed)
for p in "When the storm had passed," "When the storm had passed, the fishermen came down to the harbour one by one," \
         "When the storm had passed, the fishermen came down to the harbour one by one, counting the boats that had come home," \
         "When the storm had passed, the fishermen came down to the harbour one by one, counting the boats that had come home, and mending the nets that the wind had torn,"; do
  espeak-ng -v en-gb -s 140 -p 65 -w p.wav "$p"; sox p.wav p2.wav reverse silence 1 0.05 0.5% reverse; soxi -D p2.wav
done > prefixes.txt
"$PY" - "$long" <<'PY'
import sys
long = sys.argv[1]
truth = [l.rstrip("\n").split("\t") for l in open("c/truth.tsv")][1:]
u = next(t for t in truth if t[1] == "l2")
u0, u1 = float(u[3]), float(u[4])
rows = [l.rstrip("\n").split("\t") for l in open("out/segments.tsv")][1:]
pieces = [r for r in rows if r[4] in long and r[4] != long]
assert len(pieces) >= 2, "the long sentence was not cut: %s" % [r[4] for r in rows]
assert " ".join(p[4] for p in pieces) == long, "its pieces do not give its text back"
assert float(pieces[0][2]) <= u0 + 0.02 and float(pieces[-1][3]) >= u1 - 0.02, "its speech is cut"
prefix = [float(x) for x in open("prefixes.txt")]
marks = [long.index(p[4]) for p in pieces[1:]]
commas = [i + 2 for i, ch in enumerate(long) if ch == ","]
for p, m in zip(pieces[1:], marks):
    assert m in commas, "cut not at a comma"
    want = u0 + prefix[commas.index(m)]
    assert abs(float(p[2]) - want) < 0.5, "cut at %.2f s, the prefix ends at %.2f s" % (float(p[2]), want)
for p in pieces:
    assert float(p[3]) - float(p[2]) <= 11.5, "a piece over --max-seconds"
print("cut into %d pieces: %s" % (len(pieces), [(p[2], p[3]) for p in pieces]))
PY
# the other clips are right (the pieces match no whole unit: the scorer counts them apart)
grep -v "one by one\|counting the boats\|and mending\|while their" out/segments.tsv > rest.tsv
mkdir -p rest && cp rest.tsv rest/segments.tsv
score=$("$PY" "$here/scripts/dev/segment-score.py" c rest -v); echo "$score"
echo "$score" | grep -q 'wrong attachment 0, cut 0 ' || fail "the other clips: $score"
# no cut can meet --max-seconds 4: left out and named, exit 3
rc=0; "$BIN/xtts-segment" --out out2 --max-seconds 4 --pairs c/pairs.tsv 2> err2 || rc=$?
[ "$rc" = 3 ] || fail "--max-seconds 4: exit $rc"
grep -q 'longer than --max-seconds.*When the storm' err2 || { cat err2; fail "the long sentence not named"; }
! grep -q "one by one" out2/metadata.csv || fail "a piece written though no cut fits"
echo OK
