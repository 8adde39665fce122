#!/usr/bin/env bash
# A value read from a file is an input error (exit 2, the file named) even where the code
# that checks it also checks command-line values (exit 1). xtts-train took a cache's
# vocabulary size through the model's option check and exited 1 (usage) with a message
# naming no file.
# 1. a cache whose manifest says vocab_size 1000000000 (built from a token stream whose
#    header says so): xtts-train exits 2 naming DIR/manifest.json, also with --resume,
#    --loader-only is unaffected (it builds no model).
# 2. the same check on command-line values stays a usage error: --heads 3 with --width 128
#    (exit 1), --layers 0 (exit 1).
# 3. a checkpoint whose header names an impossible model: exit 2 naming the checkpoint.
set -euo pipefail
source "$(dirname "$0")/faults_lib.bash"

demo_tokens
grep -v $'^bad_' "$T/tokens.tsv" | sed '1s/vocab_size=[0-9]*/vocab_size=1000000000/' > "$T/bigvocab.tsv"
expect_rc 0 "$BIN/xtts-melcache" -q --out "$T/big" "$T/bigvocab.tsv"
grep -v $'^bad_' "$T/tokens.tsv" > "$T/good.tsv"
expect_rc 0 "$BIN/xtts-melcache" -q --out "$T/c" "$T/good.tsv"
tr=("$BIN/xtts-train" --steps 2 --batch-size 4 --model tiny)

# ---- 1. from the cache -----------------------------------------------------------------------
expect_rc 2 "${tr[@]}" --cache "$T/big"
one_line_error "^xtts-train: $T/big/manifest.json: vocabulary size 1000000[0-9]* not in 1\.\.1048576"
expect_rc 0 "${tr[@]}" --cache "$T/c" --ckpt "$T/ck"
expect_rc 2 "${tr[@]}" --cache "$T/big" --resume "$T/ck"
one_line_error "^xtts-train: $T/big/manifest.json: vocabulary size"
expect_rc 0 "$BIN/xtts-train" --cache "$T/big" --loader-only --steps 2 --batch-size 4

# ---- 2. the same check on the command line ----------------------------------------------------
expect_rc 1 "${tr[@]}" --cache "$T/c" --width 128 --heads 3
one_line_error "heads do not divide width 128"
expect_rc 1 "${tr[@]}" --cache "$T/c" --layers 0
one_line_error "^xtts-train: --layers 0: expected an integer in 1\.\.256$"

# ---- 3. from a checkpoint ---------------------------------------------------------------------
# the header's model fields (little-endian i32 at 16..43): n_layer set to 100000, then
# vocab_size (at 32) to 1000000000, the header's CRC-32 (of bytes 0..251, at 252) made good
for field in "16 100000 layers 100000 not in 1..256" "32 1000000000 vocabulary size 1000000000 not in"; do
  set -- $field
  "$PY" - "$T/ck/train.ckpt" "$T/bad.ckpt" "$1" "$2" <<'PY'
import struct, sys, zlib
b = bytearray(open(sys.argv[1], "rb").read())
b[int(sys.argv[3]):int(sys.argv[3]) + 4] = struct.pack("<i", int(sys.argv[4]))
b[252:256] = struct.pack("<I", zlib.crc32(bytes(b[:252])) & 0xffffffff)
open(sys.argv[2], "wb").write(b)
PY
  shift 2
  expect_rc 2 "${tr[@]}" --cache "$T/c" --resume "$T/bad.ckpt"
  one_line_error "^xtts-train: $T/bad.ckpt: (model: )?$*"
done
echo "inputs_exit_from_files: ok"
