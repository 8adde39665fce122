#!/usr/bin/env bash
# README.md's "Real use" block works as pasted. The first ```sh block after "## Real use" is
# run by bash from the repository's folder, as a user pastes it after `make demo`, with this
# convention: DATA points at a demo dataset made here (the block's default is make demo's,
# build/demo/data/metadata.csv), OUT at a folder of this test, STEPS=2 (the block's default
# trains for 20000 steps), and $PWD/build/bin is read as $BUILD/bin (the build under test).
# VOCAB keeps the block's default, tests/golden/bpe_xtts.json. Every command must succeed;
# exit status 3 (finished with rejected records) counts as success, as the README says.
set -euo pipefail
source "$(dirname "$0")/faults_lib.bash"
readme="$HERE/README.md"
readme_real_use_script "$readme" "s|\$PWD/build/bin|$BUILD/bin|g"
grep -q 'export PATH=\$PWD/build/bin:\$PATH' "$T/block.sh" || die "the block does not put build/bin on PATH first"
for v in DATA VOCAB OUT; do grep -q "^$v=\${$v:-" "$T/block.sh" || die "the block does not set $v with a default"; done
grep -q -- '--vocab "\$VOCAB"' "$T/block.sh" || die "the block does not tokenize with \$VOCAB"
bash "$HERE/scripts/make-demo-dataset.sh" "$T/data" >/dev/null 2>&1
touch "$T/stamp"
(cd "$HERE" && env DATA="$T/data/metadata.csv" OUT="$T/out" STEPS=2 OMP_NUM_THREADS=2 bash "$T/run.sh") \
  > "$T/stdout.txt" 2> "$T/stderr.txt" || { tail -n 30 "$T/stderr.txt" >&2; die "the README block failed"; }
o="$T/out"
[ "$(head -c 14 "$o/tokens.tsv")" = "#xtts-tokens 1" ] || die "no token stream"
grep -q "tokenizer=bpe" "$o/tokens.tsv" || die "not tokenized with the BPE vocabulary"
[ "$(tail -n +2 "$o/tokens.tsv" | wc -l)" -ge 30 ] || die "too few records tokenized"
grep -q '^result: OK$' "$T/stdout.txt" || die "xtts-cache-verify did not say OK"
[ "$(head -c 4 "$o/first.png" | tail -c 3)" = "PNG" ] || die "no PNG"
[ "$(head -c 4 "$o/first.wav")" = "RIFF" ] || die "no WAV"
[ -s "$o/ckpt/train.ckpt" ] || die "no checkpoint"
[ "$(grep -c '"step"' "$o/train.jsonl")" -ge 2 ] || die "no training log"
# nothing written into the repository's folder (OUT was this test's; build/ is the build's)
new=$(cd "$HERE" && find . \( -path ./build -o -path './build-*' -o -path ./.git \) -prune -o -newer "$T/stamp" -print)
[ -z "$new" ] || die "the block wrote into the source tree: $new"
echo ok
