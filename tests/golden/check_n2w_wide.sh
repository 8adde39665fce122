#!/usr/bin/env bash
# check_n2w_wide.sh — compares the C number words (prep/text/num2words/n2w_*.c) with num2words 0.5.12 itself
# on many random inputs (tests/golden/make_n2w_golden.py --wide), beyond the committed golden.
# Usage: tests/golden/check_n2w_wide.sh NUM2WORDS_SRC [SEED [LANG...]]
#   NUM2WORDS_SRC: a tree of tag v0.5.12 (git archive v0.5.12 | tar x -C DIR)
# Needs build/lib/libxtts.a (make all). Prints the differing lines; exit status 1 if any.
set -eu
cd "$(dirname "$0")/../.."
src=$1
seed=${2:-1}
shift $(($# >= 2 ? 2 : $#))
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
${CC:-gcc} -I. -O1 tests/golden/n2w_dump.c build/lib/libxtts.a -lm -o "$tmp/n2w_dump"
${PYTHON:-/usr/bin/python3} tests/golden/make_n2w_golden.py "$src" --wide "$seed" "$@" > "$tmp/ref.tsv"
cut -f1-3 "$tmp/ref.tsv" | "$tmp/n2w_dump" > "$tmp/c.tsv"
n=$(wc -l < "$tmp/ref.tsv")
if diff "$tmp/ref.tsv" "$tmp/c.tsv" > "$tmp/diff"; then
    echo "check_n2w_wide: $n cases, no difference"
else
    grep '^[<>]' "$tmp/diff" | head -40
    echo "check_n2w_wide: $n cases, $(grep -c '^<' "$tmp/diff") differ"
    exit 1
fi
