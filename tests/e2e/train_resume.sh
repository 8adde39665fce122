#!/usr/bin/env bash
# xtts-train: a run of N steps and a run of N/2 steps resumed for N/2 more give
# bit-identical per-step losses (compared as printed in --log-json, 9 significant digits,
# which round-trip float32); checkpoints of another model size or cache are refused.
set -euo pipefail
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}" # see docs/xtts-train.md, "Threads"
: "${BUILD:?}" "${TMPDIR_TEST:?}"
T="$BUILD/bin/xtts-train"
W="$TMPDIR_TEST/train_resume"
rm -rf "$W"; mkdir -p "$W"

"$BUILD/tests/tools/synth-cache" "$W/cache" --records 40 --frames 48
common=(--cache "$W/cache" --model tiny --width 64 --heads 4 --steps 8 --batch-size 4 --lr 1e-3 --warmup 2
        --threads 2 --loader-threads 2 --seed 7 --eval-every 3 --log-every 4)

"$T" "${common[@]}" --log-json "$W/straight.json" --ckpt "$W/ckpt_straight"
"$T" "${common[@]}" --log-json "$W/first.json" --ckpt "$W/ckpt_half" --stop-after 4
test -f "$W/ckpt_half/train.ckpt"
"$T" "${common[@]}" --log-json "$W/second.json" --ckpt "$W/ckpt_half" --resume "$W/ckpt_half"

losses() { grep -o '"step":[0-9]*,"loss":[^,]*' "$1"; }
losses "$W/straight.json" > "$W/a.txt"
{ losses "$W/first.json"; losses "$W/second.json"; } > "$W/b.txt"
test "$(wc -l < "$W/a.txt")" -eq 8
if ! diff "$W/a.txt" "$W/b.txt"; then echo "resumed losses differ from the uninterrupted run" >&2; exit 1; fi
# validation losses too
grep -o '"val_loss":[^,}]*' "$W/straight.json" > "$W/va.txt"
{ grep -o '"val_loss":[^,}]*' "$W/first.json"; grep -o '"val_loss":[^,}]*' "$W/second.json"; } > "$W/vb.txt"
test -s "$W/va.txt"
diff "$W/va.txt" "$W/vb.txt"
# the final checkpoints are byte-identical too
cmp "$W/ckpt_straight/train.ckpt" "$W/ckpt_half/train.ckpt"

# another model size is refused, naming the reason
set +e
"$T" "${common[@]}" --width 32 --resume "$W/ckpt_half" 2> "$W/err1.txt"; rc=$?
set -e
test "$rc" -eq 2
grep -q "another model size" "$W/err1.txt"

# a cache of another configuration is refused
"$BUILD/tests/tools/synth-cache" "$W/cache2" --records 40 --frames 64
set +e
"$T" "${common[@]}" --cache "$W/cache2" --resume "$W/ckpt_half" 2> "$W/err2.txt"; rc=$?
set -e
test "$rc" -eq 2
grep -q "another cache" "$W/err2.txt"
echo "resume: bit-identical over $(wc -l < "$W/a.txt") steps; mismatched checkpoints refused"
