#!/usr/bin/env bash
# xtts-train --model xtts-gpt on the demo cache built with --audio int16 and its codes (a small
# random DVAE written by torch.save, as codes_cache.sh writes one; skips without torch): a few
# steps log finite losses in JSON; --eval-only gives the validation losses, the same twice
# (evaluation slices are fixed); without --config, or on a cache without codes, one line says
# what is missing.
set -euo pipefail
source "$(dirname "$0")/faults_lib.bash"

if ! "$PY" -c "import torch, numpy" 2>/dev/null; then
  echo "skip: $PY lacks torch or numpy (Debian python3-torch python3-numpy): no DVAE checkpoint to write"
  exit 0
fi
demo_tokens
expect_rc 3 "$BIN/xtts-melcache" --out "$T/c" --audio int16 --val-fraction 0.3 -j 2 -q "$T/tokens.tsv"
for i in 0 7; do "$BIN/xtts-cache-inspect" --index $i --npy "$T/m$i.npy" "$T/c" >/dev/null; done
"$PY" - "$T" <<'EOF'
import sys, numpy as np, torch
T = sys.argv[1]
g = torch.Generator().manual_seed(7)
sd = {}
def conv(name, o, i, k):
    sd[name + ".weight"] = torch.randn(o, i, k, generator=g) / (i * k) ** 0.5
    sd[name + ".bias"] = torch.randn(o, generator=g) * 0.1
conv("encoder.0.0", 16, 80, 3)
conv("encoder.1.0", 32, 16, 3)
for b in range(3):
    for k, size in ((0, 3), (2, 3), (4, 1)):
        conv(f"encoder.{2 + b}.net.{k}", 32, 32, size)
conv("encoder.5", 16, 32, 1)
sd["codebook.embed"] = torch.randn(16, 30, generator=g)
torch.save(sd, T + "/dvae.pth")
torch.save(torch.rand(80, generator=g) * 2 + 0.5, T + "/mel_stats.pth")
EOF
cp -r "$T/c" "$T/nocodes"
expect_rc 0 "$BIN/xtts-cache-codes" "$T/c" --dvae "$T/dvae.pth" --mel-norms "$T/mel_stats.pth" -j 2
# a tiny GPT over the bytes tokenizer's ids (288) and the 30 codes (+ start, stop), with short
# conditioning slices; no vocab.json beside it, so the text tokens are the config's
cat > "$T/config.json" <<'EOF'
{"model_args": {"gpt_layers": 1, "gpt_n_model_channels": 16, "gpt_n_heads": 2, "gpt_number_text_tokens": 288,
 "gpt_start_text_token": 1, "gpt_stop_text_token": 2, "gpt_num_audio_tokens": 32, "gpt_start_audio_token": 30,
 "gpt_stop_audio_token": 31, "gpt_use_perceiver_resampler": true, "tokenizer_file": "",
 "min_conditioning_length": 11025, "max_conditioning_length": 22050}, "lr": 1e-3}
EOF
G=(--model xtts-gpt --config "$T/config.json" --cache "$T/c" --batch-size 2 -j 2)
expect_rc 0 "$BIN/xtts-train" "${G[@]}" --steps 3 --log-json "$T/log.jsonl"
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
