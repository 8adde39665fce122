#!/usr/bin/env bash
# The clips xtts-segment cuts feed the pipeline as they are (README's step 0): xtts-tokenize
# reads DIR/metadata.csv, xtts-melcache builds the cache with its quality metrics, and
# xtts-cache-report finds no cut end (cut_start, cut_end) on any clip: the cuts lie in pauses.
set -euo pipefail
BIN="$BUILD/bin"; T="${TMPDIR_TEST:-$(mktemp -d)}"
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v espeak-ng >/dev/null && command -v sox >/dev/null || { echo "skip: espeak-ng or sox missing"; exit 0; }
cd "$T"

# a recording: six sentences said slower and higher than the reference, pauses between them
text="The river ran fast after the rain. Two boys watched it from the bridge.
One of them dropped a stick into the water. They ran to the other side to see it come out.
The stick never came. Perhaps it is still under the bridge today."
i=0; parts=()
while read -r s; do
  i=$((i + 1))
  espeak-ng -v en-gb -s 140 -p 60 -w "s$i.wav" "$s"
  sox -n -r 22050 -c 1 "p$i.wav" trim 0 "0.$((3 + i % 5))"
  sox "s$i.wav" -r 22050 "t$i.wav"
  parts+=("p$i.wav" "t$i.wav")
done < <(echo "$text" | sed 's/\. /.\n/g')
sox "${parts[@]}" rec.wav
printf '%s\n' "$text" > rec.txt

rc=0; "$BIN/xtts-segment" --out seg rec.wav rec.txt 2> seg.err || rc=$?
[ "$rc" = 0 ] || fail "xtts-segment: exit $rc: $(cat seg.err)"
n=$(wc -l < seg/metadata.csv)
[ "$n" -ge 2 ] || fail "only $n clips"
"$BIN/xtts-tokenize" --lang en seg/metadata.csv 2> tok.err | "$BIN/xtts-melcache" --out cache 2> mel.err ||
  fail "tokenize | melcache: $(cat tok.err mel.err)"
"$BIN/xtts-cache-report" cache --tsv report.tsv > summary.txt 2> rep.err || fail "report: $(cat rep.err)"
[ "$(tail -n +2 report.tsv | wc -l)" = "$n" ] || fail "the cache does not hold the $n clips"
if cut -f2 report.tsv | grep -q 'cut_'; then fail "a clip has a cut end: $(grep cut_ report.tsv | cut -f1,2)"; fi
echo "segment_cache_report: $n clips, no cut end"
