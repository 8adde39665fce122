#!/usr/bin/env bash
# make_numbers_spoken_golden.sh — writes tests/golden/numbers_spoken_golden.tsv, the spoken
# number words (prep/text/normalize/numbers.h) of a small fixed sample, from `numbers-compare
# --golden` (tests/tools/numbers-compare.c) built at revision REV, so that the file records
# what that revision said (tests/test_numbers_spoken.c checks the current code against it).
# It was made from the revision before the spoken words moved into prep/text/num2words/.
# Usage: tests/golden/make_numbers_spoken_golden.sh [REV]   (default: the working tree's build)
set -eu
cd "$(dirname "$0")/../.."
golden=tests/golden/numbers_spoken_golden.tsv
if [ $# -eq 0 ]; then
    make --no-print-directory -j"${JOBS:-2}" build/tests/tools/numbers-compare >/dev/null
    build/tests/tools/numbers-compare --golden > "$golden"
else
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    git archive "$1" | tar -x -C "$tmp"
    make --no-print-directory -C "$tmp" -j"${JOBS:-2}" CUDA=0 build/tests/tools/numbers-compare >/dev/null
    "$tmp/build/tests/tools/numbers-compare" --golden > "$golden"
fi
echo "$golden: $(wc -l < "$golden") lines"
