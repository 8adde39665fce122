#!/usr/bin/env bash
# make demo: generate the demo dataset and run every stage of the pipeline on it.
# Environment: BUILD (absolute build dir), DEMO_DIR (output folder, default $BUILD/demo),
# DEMO_DATA (a dataset make-demo-dataset.sh made before, copied instead of made again: the
# arm64 demo under qemu, scripts/dev/arm64.sh, takes the one made on the build machine),
# DEMO_STEPS (the training run's steps, default 40; under qemu a step takes a minute).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
BUILD="${BUILD:-$here/../build}"
DEMO_DIR="${DEMO_DIR:-$BUILD/demo}"
BIN="$BUILD/bin"
data="$DEMO_DIR/data"
cache="$DEMO_DIR/cache"
step() { printf '\n\033[1m== %s\033[0m\n' "$*" >&2; }
run() { printf '$ %s\n' "$*" >&2; "$@"; }

step "1. demo dataset (espeak-ng + sox) -> $data"
rm -rf "$data"
if [ -n "${DEMO_DATA:-}" ]; then
  mkdir -p "$DEMO_DIR"
  run cp -r "$DEMO_DATA" "$data"
else
  run bash "$here/make-demo-dataset.sh" "$data"
fi
echo "$(wc -l < "$data/metadata.csv") transcripts, $(ls "$data/wavs" | wc -l) audio files" >&2

step "2. tokenize (normalize, detect language, bytes tokenizer)"
rc=0
run "$BIN/xtts-tokenize" --lang auto --rejects "$DEMO_DIR/tokenize-rejects.tsv" "$data/metadata.csv" \
    > "$DEMO_DIR/tokens.tsv" || rc=$?
[ $rc -eq 0 ] || [ $rc -eq 3 ] || { echo "tokenize failed ($rc)" >&2; exit $rc; }
head -c 600 "$DEMO_DIR/tokens.tsv" | cut -c1-160 >&2; echo "..." >&2

step "3. melcache (decode, resample, log-mel, pad, compress, store)"
rm -rf "$cache"
rc=0
run "$BIN/xtts-melcache" --out "$cache" --buckets 256,512,1024 --val-fraction 0.1 --progress \
    --rejects "$DEMO_DIR/melcache-rejects.tsv" "$DEMO_DIR/tokens.tsv" || rc=$?
[ $rc -eq 0 ] || [ $rc -eq 3 ] || { echo "melcache failed ($rc)" >&2; exit $rc; }

if [ -x "$BIN/xtts-cache-verify" ]; then
  step "4. verify"
  run "$BIN/xtts-cache-verify" --deep "$cache"
fi

if [ -x "$BIN/xtts-cache-inspect" ]; then
  step "5. inspect"
  run "$BIN/xtts-cache-inspect" "$cache"
  run "$BIN/xtts-cache-inspect" "$cache" --index 0 --npy "$DEMO_DIR/first.npy" --png "$DEMO_DIR/first.png"
  echo "wrote $DEMO_DIR/first.npy and $DEMO_DIR/first.png" >&2
fi

if [ -x "$BIN/xtts-train" ]; then
  step "6. a short training run (tiny model, CPU)"
  OMP_WAIT_POLICY=passive run "$BIN/xtts-train" --cache "$cache" --model tiny --steps "${DEMO_STEPS:-40}" --batch-size 8 --lr 1e-3 \
      --eval-every "$(( ${DEMO_STEPS:-40} < 20 ? ${DEMO_STEPS:-40} : 20 ))" --ckpt "$DEMO_DIR/ckpt" --log-json "$DEMO_DIR/train.jsonl"
fi
step "demo done: outputs in $DEMO_DIR"
