#!/usr/bin/env bash
# The quality flags on real clean speech: on each corpus that scripts/dev/real-speech-corpus.py
# wrote into $XTTS_REAL_SPEECH (ljspeech, speechbrain, librispeech, librispeech-other, and the
# -low copies with hum, rumble and DC drift added), at most 5 % of the clips carry a flag that
# the committed labels (tests/data/quality_real_labels.tsv, an independent look) do not
# confirm, and the -low copies carry the clean ones' edge flags but on at most 2 % of the
# clips. Skips when the corpus is absent (the audio is not part of the repository): e.g.
#   git clone --depth 1 https://github.com/coqui-ai/TTS /tmp/TTS
#   python3 scripts/dev/real-speech-corpus.py /tmp/rs --coqui /tmp/TTS --low-noise
#   XTTS_REAL_SPEECH=/tmp/rs bash tests/e2e/quality_real_speech.sh
set -euo pipefail
T="${TMPDIR_TEST:-$(mktemp -d)}"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
EVAL="${QUALITY_EVAL:-$BUILD/tests/tools/quality-eval}" # QUALITY_EVAL: another build's, to compare
LABELS="$ROOT/tests/data/quality_real_labels.tsv"
fail() { echo "FAIL: $*" >&2; exit 1; }
R="${XTTS_REAL_SPEECH:-}"
if [ -z "$R" ] || ! ls "$R"/*/metadata.tsv >/dev/null 2>&1; then
  echo "skip: no real-speech corpus (set XTTS_REAL_SPEECH to a folder written by scripts/dev/real-speech-corpus.py)"
  exit 0
fi
ran=0
for meta in "$R"/*/metadata.tsv; do
  corpus=$(basename "$(dirname "$meta")")
  base=${corpus%-low}
  grep -q "^$base	" "$LABELS" || { echo "$corpus: no labels, not judged"; continue; }
  rate=16000
  [ "$base" = ljspeech ] && rate=22050
  "$EVAL" --rate "$rate" "$meta" > "$T/$corpus.flags.tsv"
  # clips with a flag the labels do not name; the rate over the corpus
  awk -F'\t' -v c="$base" -v name="$corpus" '
    FNR == NR { if ($1 == c) want[$2] = $3; next }
    FNR == 1 { next }
    { n++; if (!($1 in want)) { print name ": " $1 " has no label" > "/dev/stderr"; bad++; next }
      split($2, got, ","); extra = ""
      for (i in got) if (got[i] != "-" && index("," want[$1] ",", "," got[i] ",") == 0) extra = extra " " got[i]
      if (extra != "") { bad++; print "  unconfirmed:" extra " on " $1 }
      if (want[$1] != "-" && $2 == "-") print "  missed: " want[$1] " on " $1 }
    END { printf "%s: %d of %d clips carry an unconfirmed flag (%.1f %%)\n", name, bad, n, 100 * bad / n
          exit (bad * 100 > 5 * n) }' "$LABELS" "$T/$corpus.flags.tsv" ||
    fail "$corpus: more than 5 % of clean clips carry a flag the labels do not confirm"
  ran=$((ran + 1))
done
[ $ran -gt 0 ] || fail "no corpus under $R has labels"
# hum, rumble and drift below the speech band change the edge flags of at most 2 % of the clips
# (an edge a fraction of a dB from the threshold may cross it)
for low in "$T"/*-low.flags.tsv; do
  [ -f "$low" ] || continue
  clean="${low%-low.flags.tsv}.flags.tsv"
  [ -f "$clean" ] || continue
  edges() { awk -F'\t' 'NR > 1 { s = $2; c = (s ~ /cut_start/) (s ~ /cut_end/); print $1, c }' "$1"; }
  changed=$(diff <(edges "$clean") <(edges "$low") | grep -c '^>' || true)
  total=$(($(wc -l < "$clean") - 1))
  echo "$(basename "${low%.flags.tsv}"): edge flags changed on $changed of $total clips"
  [ $((changed * 100)) -le $((2 * total)) ] || fail "$(basename "$low"): edge flags changed with low-frequency noise added"
done
echo "quality real speech: ok"
