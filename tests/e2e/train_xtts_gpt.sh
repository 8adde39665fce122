#!/usr/bin/env bash
# xtts-train --model xtts-gpt on the demo cache built with --audio int16 and its codes (a small
# random DVAE written by torch.save, as codes_cache.sh writes one; skips without torch): a few
# steps log finite losses in JSON; --eval-only gives the validation losses, the same twice
# (evaluation slices are fixed); without --config, or on a cache without codes, one line says
# what is missing.
set -euo pipefail
source "$(dirname "$0")/faults_lib.bash"
source "$(dirname "$0")/xtts_gpt_lib.bash"

gpt_need_torch
gpt_cache
G=(--model xtts-gpt --config "$T/config.json" --cache "$T/c" --batch-size 2 -j 2)
expect_rc 0 "$BIN/xtts-train" "${G[@]}" --steps 3 --grad-accum 2 --log-json "$T/log.jsonl"
[ "$(grep -c '"step"' "$T/log.jsonl")" -eq 3 ] || { cat "$T/log.jsonl"; die "want 3 step lines"; }
"$PY" - "$T/log.jsonl" <<'EOF' || die "the JSON log"
import json, math, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert all(math.isfinite(r["loss"]) and r["loss"] > 0 and abs(r["loss"] - r["loss_text_ce"] - r["loss_mel_ce"]) < 1e-5
           for r in rows), rows
EOF
grep -q "step 3/3 loss" "$T/err.txt" || { cat "$T/err.txt"; die "no step line"; }
expect_rc 0 "$BIN/xtts-train" "${G[@]}" --eval-only
grep -E "eval step 0: loss [0-9.]+ .* over [0-9]+ batches" "$T/err.txt" > "$T/eval1.txt" || { cat "$T/err.txt"; die "no eval line"; }
expect_rc 0 "$BIN/xtts-train" "${G[@]}" --eval-only
grep -E "eval step 0" "$T/err.txt" | cmp -s - "$T/eval1.txt" || die "two evaluations of the same weights differ"
expect_rc 1 "$BIN/xtts-train" --model xtts-gpt --cache "$T/c"
one_line_error "needs --config"
expect_rc 2 "$BIN/xtts-train" --model xtts-gpt --config "$T/config.json" --cache "$T/nocodes" --steps 1
one_line_error "no codes directory"
echo ok
