#!/usr/bin/env bash
# numbers-compare.sh — the number-word code's outputs for a large fixed-seed sample
# (tests/tools/numbers-compare.c): writes them to OUT and prints their line count and SHA-256,
# so that a change to prep/text/num2words/ or the normalizers can be checked to keep every
# output byte for byte: run it before and after, compare the hashes, diff the two files.
# Usage: scripts/dev/numbers-compare.sh [OUT [SEED [SCALE]]]   (defaults /tmp/numbers-compare.txt 1 100)
set -eu
cd "$(dirname "$0")/../.."
out=${1:-/tmp/numbers-compare.txt}
make --no-print-directory -j"${JOBS:-2}" build/tests/tools/numbers-compare >/dev/null
build/tests/tools/numbers-compare "${2:-1}" "${3:-100}" > "$out"
echo "numbers-compare: $(wc -l < "$out") lines, sha256 $(sha256sum < "$out" | cut -d' ' -f1) ($out)"
