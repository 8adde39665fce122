#!/usr/bin/env bash
# bench/segment.sh — xtts-segment on long recordings with known truth, beside aeneas when it is
# installed: every recording is read once by each, one aeneas process per recording (its espeak
# extension hangs on a second task in one process). The recordings: sentences spoken by
# espeak-ng in another voice and pace than the reference (en-gb, 140 words a minute, higher),
# joined with random pauses (scripts/dev/segment-truth.py), clean and at 20 dB SNR, and with an
# unread paragraph and unwritten speech. Prints per condition the clips' figures of
# scripts/dev/segment-score.py and the speed (audio seconds per wall second, -j THREADS).
# aeneas is run with its boundaries moved to the middle of the pauses it finds
# (task_adjust_boundary_algorithm=percent, 50), sentence per line; without aeneas
# (python3 -c 'import aeneas' fails: pip install numpy aeneas, built from its source,
# github.com/readbeyond/aeneas) its rows say so.
# Env: BUILD, PYTHON, THREADS (default 2), FILES (recordings per condition, default 4).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
PYTHON=${PYTHON:-/usr/bin/python3}
THREADS=${THREADS:-2}
FILES=${FILES:-4}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
cd "$W"
mkdir -p units
say() { espeak-ng -v "$2" -s 140 -p 65 -w "units/$1.wav" "$3"; printf '%s\tunits/%s.wav\t%s\n' "$1" "$1" "$3"; }
{
  printf 'id\taudio\ttext\n'
  n=0
  while read -r s; do n=$((n + 1)); say "s$n" en-gb "$s"; done <<'TXT'
The old lighthouse stood at the edge of the cliff for two hundred years.
Every night its keeper climbed the narrow stairs to light the lamp.
Ships passing in the storm could see the beam from miles away.
One winter the keeper fell ill, and his daughter took his place.
She had never done it before, but she knew every step by heart.
Mr. Hale, the doctor, came by boat on the third day.
By spring the keeper was well again.
The town still tells the story of the girl who kept the light burning.
A new lamp was brought from the city in the summer of that year.
It was brighter than the old one, and it turned on its own.
The keeper kept the old lamp in a box under his bed.
On stormy nights his daughter would take it out and polish it.
TXT
} > units.tsv
{ printf 'id\taudio\ttext\n'; say x1 fr "Ceci est un passage en francais qui ne figure pas dans le texte."; say x2 de "Dieser Abschnitt steht nicht im Text."; } > extra.tsv

have_aeneas=0
"$PYTHON" -c 'import aeneas.tools.execute_task' 2>/dev/null && have_aeneas=1

aeneas_run() { # PAIRS OUT: one process per recording; segments.tsv as xtts-segment writes it
  mkdir -p "$2"; printf 'id\tsource\tstart\tend\ttext\tscore\n' > "$2/segments.tsv"
  while IFS=$'\t' read -r audio text lang; do
    "$PYTHON" - "$text" > "$2/lines.txt" <<'PY'
import sys, re
t = " ".join(open(sys.argv[1], encoding="utf-8").read().split())
print("\n".join(s for s in re.split(r"(?<=[.!?])\s+(?=[A-Z])", t) if s))
PY
    "$PYTHON" -m aeneas.tools.execute_task "$audio" "$2/lines.txt" \
      "task_language=eng|is_text_type=plain|os_task_file_format=tsv|task_adjust_boundary_algorithm=percent|task_adjust_boundary_percent_value=50" \
      "$2/map.tsv" >/dev/null 2>&1 || continue
    paste "$2/map.tsv" "$2/lines.txt" | awk -F'\t' -v src="$audio" '{printf "a%d\t%s\t%s\t%s\t%s\t1\n", NR, src, $1, $2, $4}' >> "$2/segments.tsv"
  done < "$1"
}

echo "| condition | program | clips | right | wrong attachment | speech cut | coverage | speed |"
echo "|---|---|---|---|---|---|---|---|"
for c in "clean 0 0 0" "20 dB 20 0 0" "unread + unwritten 0 2 2"; do
  name=${c% * * *}; set -- ${c##"$name" }
  "$PYTHON" "$ROOT/scripts/dev/segment-truth.py" "t" --units units.tsv --extra extra.tsv --files "$FILES" --seed 7 \
    --snr "$1" --unread "$2" --unwritten "$3" >/dev/null
  secs=$(for f in t/rec-*.wav; do soxi -D "$f"; done | awk '{s += $1} END {print s}')
  t0=$(date +%s.%N)
  "$BUILD/bin/xtts-segment" -j "$THREADS" --out seg --pairs t/pairs.tsv 2>/dev/null || true
  t1=$(date +%s.%N)
  fig=$("$PYTHON" "$ROOT/scripts/dev/segment-score.py" t seg)
  row() { echo "$1" | awk -v c="$name" -v p="$2" -v sp="$3" '{gsub(",", ""); printf "| %s | %s | %s | %s %% | %s | %s | %s %% | %s |\n", c, p, $2, $4, $8, $10, $14, sp}'; }
  row "$fig" xtts-segment "$(awk -v s="$secs" -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0fx", s / (b - a) }')"
  if [ $have_aeneas = 1 ]; then
    t0=$(date +%s.%N); aeneas_run t/pairs.tsv aen; t1=$(date +%s.%N)
    row "$("$PYTHON" "$ROOT/scripts/dev/segment-score.py" t aen)" aeneas "$(awk -v s="$secs" -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0fx", s / (b - a) }')"
  else
    echo "| $name | aeneas | not installed | | | | | |"
  fi
  rm -rf t seg aen
done
