#!/usr/bin/env bash
# xtts-segment's memory is flat in the recording's length: the same speech (espeak-ng
# sentences joined by scripts/dev/segment-truth.py with pauses) repeated to 4 and to 40
# minutes, with its text repeated as often; the peak resident memory (ru_maxrss) of the 40
# minutes must be within 6 MB of the 4 minutes' (holding the feature vectors whole grew it by
# about 20 MB an hour: 13 MB here). No wall-clock is asserted.
set -euo pipefail
BIN="$BUILD/bin"; T="${TMPDIR_TEST:-$(mktemp -d)}"; PY=${PYTHON:-python3}
here="$(cd "$(dirname "$0")/../.." && pwd)"
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v espeak-ng >/dev/null && command -v sox >/dev/null || { echo "skip: espeak-ng or sox missing"; exit 0; }
# (a sanitizer's runtime holds freed memory in quarantine and adds its own: its peak says nothing
# of the program's)
if grep -q 'lib[a-z]*san' <<< "$(ldd "$BIN/xtts-segment" 2>/dev/null)"; then
  echo "skip: a sanitizer build (its peak memory is the runtime's)"; exit 0
fi
cd "$T"

say() { # say ID TEXT -> units/ID.wav, a line of the list
  espeak-ng -v en-gb -s 140 -p 65 -w "units/$1.wav" "$2"
  printf '%s\tunits/%s.wav\t%s\n' "$1" "$1" "$2"
}
mkdir -p units
{
  printf 'id\taudio\ttext\n'
  say m1 "The old lighthouse stood at the edge of the cliff for two hundred years."
  say m2 "Every night its keeper climbed the narrow stairs to light the lamp."
  say m3 "Ships passing in the storm could see the beam from miles away."
  say m4 "One winter the keeper fell ill, and his daughter took his place."
  say m5 "She had never done it before, but she knew every step by heart."
  say m6 "By spring the keeper was well again."
} > units.tsv
"$PY" "$here/scripts/dev/segment-truth.py" unit --units units.tsv --seed 7
sox unit/rec-00.wav -r 16000 unit.wav
secs=$(soxi -D unit.wav)
# repeats for about 4 and 40 minutes
short=$("$PY" -c "import math; print(max(1, round(240 / $secs)))"); long=$((short * 10))
for k in $short $long; do
  sox $(for i in $(seq $k); do echo unit.wav; done) "rec$k.wav"
  for i in $(seq $k); do cat unit/text-00.txt; echo; done > "rec$k.txt"
done

peak() { # peak KB of xtts-segment on recN
  "$PY" - "$BIN/xtts-segment" "$1" <<'PY'
import resource, subprocess, sys
b, k = sys.argv[1], sys.argv[2]
r = subprocess.run([b, "-j", "2", "--out", "out" + k, "rec%s.wav" % k, "rec%s.txt" % k], stderr=subprocess.DEVNULL)
if r.returncode not in (0, 3): sys.exit("xtts-segment exit %d" % r.returncode)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
PY
}
ps=$(peak $short) || fail "the short recording"
pl=$(peak $long) || fail "the long recording"
cs=$(wc -l < "out$short/metadata.csv"); cl=$(wc -l < "out$long/metadata.csv")
echo "$short x ${secs}s: peak $ps KB, $cs clips; $long x: peak $pl KB, $cl clips"
[ "$cs" -ge 2 ] || fail "only $cs clips from the short recording"
[ "$cl" -ge $((cs * 9)) ] || fail "the long recording gave $cl clips, the short $cs"
[ "$pl" -le $((ps + 6144)) ] || fail "peak memory grew with the recording: $ps KB at $short repeats, $pl KB at $long"
echo OK
