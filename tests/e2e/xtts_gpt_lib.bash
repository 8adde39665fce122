# xtts_gpt_lib.bash — sourced by the xtts-gpt end-to-end tests (after faults_lib.bash):
# gpt_cache builds $T/c, the demo cache with --audio int16 and a validation split, and its codes
# from a small random DVAE written by torch.save (as codes_cache.sh writes one); $T/nocodes, the
# same cache without codes; $T/config.json, a tiny XTTS config over the bytes tokenizer's ids and
# the DVAE's 30 codes. The caller calls gpt_need_torch first.

# gpt_need_torch: exit 0 with a skip line where $PY has no torch or numpy (gpt_cache's DVAE is
# written by torch.save)
gpt_need_torch() {
  if ! "$PY" -c "import torch, numpy" 2>/dev/null; then
    echo "skip: $PY lacks torch or numpy (Debian python3-torch python3-numpy): no DVAE checkpoint to write"
    exit 0
  fi
}

gpt_cache() {
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
}
