#!/usr/bin/env bash
# The demo dataset generator is deterministic and produces what the demo relies on:
# two runs give identical bytes; 60 clips + 4 broken entries; every sample rate; one
# stereo clip; FLAC and Ogg content inside .wav-named files; 0.5-12 s clips.
set -euo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
T=${TMPDIR_TEST:-$(mktemp -d)}
fail() { echo "FAIL: $*" >&2; exit 1; }

bash "$here/scripts/make-demo-dataset.sh" "$T/a" 2>/dev/null
bash "$here/scripts/make-demo-dataset.sh" "$T/b" 2>/dev/null

# byte identity of every file
(cd "$T/a" && find . -type f | sort | xargs sha256sum) >"$T/a.sum"
(cd "$T/b" && find . -type f | sort | xargs sha256sum) >"$T/b.sum"
cmp -s "$T/a.sum" "$T/b.sum" || { diff "$T/a.sum" "$T/b.sum" | head; fail "two runs differ"; }
# a re-run into the same directory gives the same bytes too
bash "$here/scripts/make-demo-dataset.sh" "$T/a" 2>/dev/null
(cd "$T/a" && find . -type f | sort | xargs sha256sum) | cmp -s - "$T/b.sum" || fail "re-run into an existing dir differs"

D="$T/a"
lines=$(wc -l <"$D/metadata.csv")
[ "$lines" -eq 64 ] || fail "metadata.csv has $lines lines, expected 64"
tsv_lines=$(wc -l <"$D/metadata.tsv")
[ "$tsv_lines" -eq 65 ] || fail "metadata.tsv has $tsv_lines lines, expected 65 (header + 64)"
[ "$(head -n1 "$D/metadata.tsv")" = "$(printf 'id\taudio\ttext\tspeaker\tlang')" ] || fail "metadata.tsv header"
awk -F'|' 'NF != 3 { exit 1 }' "$D/metadata.csv" || fail "metadata.csv: a line without exactly 3 fields"
awk -F'\t' 'NF != 5 { exit 1 }' "$D/metadata.tsv" || fail "metadata.tsv: a line without exactly 5 fields"
n_files=$(ls "$D/wavs" | wc -l)
[ "$n_files" -eq 63 ] || fail "wavs/ has $n_files files, expected 63 (64 entries, one missing)"
langs=$(tail -n +2 "$D/metadata.tsv" | cut -f5 | sort -u | wc -l)
[ "$langs" -ge 8 ] || fail "only $langs languages"
speakers=$(tail -n +2 "$D/metadata.tsv" | cut -f4 | sort -u | wc -l)
[ "$speakers" -ge 5 ] || fail "only $speakers speakers"
[ "$(cut -d'|' -f1 "$D/metadata.csv")" = "$(tail -n +2 "$D/metadata.tsv" | cut -f1)" ] || fail "csv and tsv list different ids"
[ "$(tail -n +2 "$D/metadata.tsv" | cut -f2 | sort -u | wc -l)" -eq 64 ] || fail "tsv audio paths are not unique"
grep -q '^en_001|Dr\. Smith paid \$12\.50 on May 3rd, 1984\.|Doctor Smith' "$D/metadata.csv" || fail "numbers/abbreviations transcript"

# broken entries
[ ! -e "$D/wavs/bad_missing.wav" ] || fail "bad_missing.wav exists"
[ -f "$D/wavs/bad_empty.wav" ] && [ ! -s "$D/wavs/bad_empty.wav" ] || fail "bad_empty.wav is not a 0-byte file"
grep -q '^bad_notext||$' "$D/metadata.csv" || fail "bad_notext has a transcript"
! soxi "$D/wavs/bad_garbage.wav" >/dev/null 2>&1 || fail "bad_garbage.wav decodes as audio"

# audio properties of the 60 good clips (bad_notext is good audio too)
declare -A rates=()
stereo=0; flac=0; ogg=0; wav=0
for f in "$D"/wavs/*.wav; do
  id=$(basename "$f" .wav)
  case $id in bad_empty|bad_garbage) continue ;; esac
  r=$(soxi -r "$f") || fail "$id: soxi cannot read it"
  rates[$r]=1
  c=$(soxi -c "$f"); [ "$c" -eq 2 ] && stereo=$((stereo + 1))
  d=$(soxi -D "$f")
  awk -v d="$d" 'BEGIN { exit !(d >= 0.5 && d <= 12) }' || fail "$id: duration $d s outside 0.5-12 s"
  case $(head -c 4 "$f") in
    RIFF) wav=$((wav + 1)); [ "$(soxi -b "$f")" -eq 16 ] || fail "$id: WAV not 16-bit" ;;
    fLaC) flac=$((flac + 1)) ;;
    OggS) ogg=$((ogg + 1)) ;;
    *) fail "$id: unknown content" ;;
  esac
done
for r in 16000 22050 24000 44100 48000; do
  [ -n "${rates[$r]:-}" ] || fail "no clip at $r Hz"
done
[ "$stereo" -eq 1 ] || fail "$stereo stereo clips, expected 1"
[ "$flac" -ge 3 ] || fail "$flac FLAC clips"
[ "$ogg" -ge 3 ] || fail "$ogg Ogg clips"
[ "$wav" -ge 30 ] || fail "$wav WAV clips"
grep -q 'FLAC' "$D/README.txt" && grep -q 'by content' "$D/README.txt" || fail "README.txt does not explain the content types"
echo "demo dataset: $lines entries, $wav WAV + $flac FLAC + $ogg Ogg, $stereo stereo, ${#rates[@]} rates, $langs languages, $speakers speakers; deterministic"
