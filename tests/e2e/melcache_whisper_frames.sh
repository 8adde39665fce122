#!/usr/bin/env bash
# The whisper preset pads to 3000 frames (30 s, Whisper's pad_or_trim) unless --max-frames
# says otherwise: a 10.5 s clip is stored, a 31 s clip is rejected; other presets keep 1024.
set -euo pipefail
BIN="$BUILD/bin"; T="$TMPDIR_TEST"
mkdir -p "$T/wavs"
sox -n -r 16000 -c 1 -b 16 "$T/wavs/a.wav" synth 10.5 sine 440 vol 0.3
sox -n -r 16000 -c 1 -b 16 "$T/wavs/b.wav" synth 31 sine 330 vol 0.3
printf 'a|hello there|hello there\nb|a long one|a long one\n' > "$T/metadata.csv"
"$BIN/xtts-tokenize" --lang en "$T/metadata.csv" > "$T/tokens.tsv"
rc=0; "$BIN/xtts-melcache" --out "$T/w" --preset whisper -q --rejects "$T/rej.tsv" "$T/tokens.tsv" || rc=$?
[ $rc -eq 3 ] || { echo "expected exit 3 (one rejection), got $rc"; exit 1; }
grep -q '"max_frames": *3000' "$T/w/manifest.json" || { echo "whisper max_frames is not 3000"; grep max_frames "$T/w/manifest.json"; exit 1; }
grep -q '^b' "$T/rej.tsv" && ! grep -q '^a' "$T/rej.tsv"
"$BIN/xtts-cache-verify" "$T/w" >/dev/null
# --max-frames still wins, and the xtts preset keeps 1024
rc=0; "$BIN/xtts-melcache" --out "$T/w2" --preset whisper --max-frames 1100 -q "$T/tokens.tsv" || rc=$?
[ $rc -eq 3 ]
grep -q '"max_frames": *1100' "$T/w2/manifest.json"
rc=0; "$BIN/xtts-melcache" --out "$T/x" -q "$T/tokens.tsv" || rc=$?
grep -q '"max_frames": *1024' "$T/x/manifest.json"
