#!/usr/bin/env bash
# xtts-tokenize reads its input in three passes; the notices about the input (the format
# --format auto recognised, a VCTK speaker without transcripts) are said once a run.
set -euo pipefail
: "${BUILD:?}" "${TMPDIR_TEST:?}"
BIN="$BUILD/bin"
HERE="$(cd "$(dirname "$0")/.." && pwd)"
T="$TMPDIR_TEST"
fail() { echo "FAIL: $*" >&2; exit 1; }
bash "$HERE/make-format-trees.sh" "$T/d" >/dev/null
once() { # once FILE PATTERN
  local n
  n=$(grep -c -- "$2" "$1" || true)
  [ "$n" -eq 1 ] || { cat "$1" >&2; fail "$1: '$2' said $n times, not once"; }
}
for input in "$T/d/ljspeech/metadata.csv" "$T/d/vctk/VCTK-Corpus-0.92" "$T/d/tsv/list.tsv"; do
  rc=0
  "$BIN/xtts-tokenize" "$input" > "$T/out.tsv" 2> "$T/err.txt" || rc=$?
  [ $rc -eq 0 ] || [ $rc -eq 3 ] || { cat "$T/err.txt" >&2; fail "$input: exit $rc"; }
  once "$T/err.txt" "reading as --format"
done
once "$T/err.txt" "reading as --format tsv"
"$BIN/xtts-tokenize" "$T/d/vctk/VCTK-Corpus-0.92" > /dev/null 2> "$T/err.txt" || true
once "$T/err.txt" "speaker p315 has audio in wav48_silence_trimmed/ but no transcripts: skipped"
# -q keeps them all quiet, as before
"$BIN/xtts-tokenize" -q "$T/d/ljspeech/metadata.csv" > /dev/null 2> "$T/err.txt" || true
! grep -q "reading as" "$T/err.txt" || fail "-q: $(cat "$T/err.txt")"
echo ok
