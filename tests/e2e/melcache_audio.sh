#!/usr/bin/env bash
# xtts-melcache --audio int16|flac on the demo dataset, with the original text kept
# (xtts-tokenize --keep-text): the two builds store the same waveform and the same mels
# (the codec differs, not the content); xtts-cache-verify --recompute finds every stored
# waveform equal to the source decoded again; xtts-cache-inspect --wav writes a WAV whose
# samples libsndfile reads back as the stored ones; a mel-only build (--audio none) keeps
# the mel digest of a build without waveforms; the text is the metadata's.
set -euo pipefail
BIN="$BUILD/bin"; T="$TMPDIR_TEST"
here="$(cd "$(dirname "$0")/../.." && pwd)"
die() { echo "FAIL: $*"; exit 1; }
bash "$here/scripts/make-demo-dataset.sh" "$T/data" >/dev/null 2>&1
rc=0; "$BIN/xtts-tokenize" --lang en --keep-text -q "$T/data/metadata.csv" > "$T/tokens.tsv" 2>/dev/null || rc=$?
[ $rc -eq 0 ] || [ $rc -eq 3 ]
[ "$(sed -n 2p "$T/tokens.tsv" | awk -F'\t' '{print NF}')" -eq 7 ] || die "--keep-text wrote no seventh field"
digest() { "$BIN/xtts-cache-verify" "$@" | sed -n 's/^digest: //p'; }
for a in none int16 flac; do
  rc=0; "$BIN/xtts-melcache" --out "$T/$a" --audio $a -j 2 -q "$T/tokens.tsv" 2>/dev/null || rc=$?
  [ $rc -eq 3 ] || die "--audio $a: exit $rc"
done
grep -q '"audio": "flac"' "$T/flac/manifest.json" || die "manifest lacks the audio key"
[ "$(digest "$T/int16")" = "$(digest "$T/flac")" ] || die "int16 and flac builds hold different mels"
"$BIN/xtts-cache-verify" --recompute 1000 "$T/flac" > "$T/v.txt" || { cat "$T/v.txt"; die "verify --recompute"; }
grep -q '^faults: 0$' "$T/v.txt" || die "faults in the flac build"
# the int16-rounded signal gives slightly different mels than the float signal
[ "$(digest "$T/none")" != "$(digest "$T/int16")" ] || die "the int16 build's mels equal the float build's"
# the text: original and normalized
"$BIN/xtts-cache-inspect" --index 0 --json "$T/int16" > "$T/r.json"
first_text=$(head -1 "$T/data/metadata.csv" | cut -d'|' -f3)  # the column xtts-tokenize reads for ljspeech
"$PYTHON" - "$T/r.json" "$first_text" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["record_version"] == 2 and r["audio"] == "int16", r
assert r["text"] == sys.argv[2], (r["text"], sys.argv[2])
assert r["normalized_text"] and r["normalized_text"] != r["text"] or r["text"] == r["normalized_text"]
PY
# --wav: a WAV of n_samples at the mel rate, the same from both codecs
n=$("$PYTHON" -c "import json,sys; print(json.load(open(sys.argv[1]))['n_samples'])" "$T/r.json")
"$BIN/xtts-cache-inspect" --index 0 --wav "$T/a.wav" "$T/int16"
"$BIN/xtts-cache-inspect" --index 0 --wav "$T/b.wav" "$T/flac"
cmp -s "$T/a.wav" "$T/b.wav" || die "int16 and flac give different WAV files"
"$PYTHON" - "$T/a.wav" "$n" <<'PY'
import sys, wave
w = wave.open(sys.argv[1])
assert w.getnchannels() == 1 and w.getsampwidth() == 2 and w.getframerate() == 22050, w.getparams()
assert w.getnframes() == int(sys.argv[2]), (w.getnframes(), sys.argv[2])
PY
rc=0; "$BIN/xtts-cache-inspect" --index 0 --wav "$T/c.wav" "$T/none" 2>"$T/err" || rc=$?
[ $rc -eq 2 ] && grep -q "no waveform" "$T/err" || die "--wav on a cache without waveforms: exit $rc"
echo "ok"
