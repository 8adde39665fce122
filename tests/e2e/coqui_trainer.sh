#!/usr/bin/env bash
# e2e: long
# xtts_prep.coqui.CachedGPTTrainer under Coqui's own trainer.Trainer (python/tests/test_coqui_trainer.py):
# fit, Trainer's samples and small_run, continue_path, checkpoints that GPTTrainer and ours restore
# from each other with the optimizer state, per-clip eval losses equal to GPTTrainer's on the same
# weights, and the per-step times of both data paths. Runs in the environment that
# ../shared/coqui-env/setup.sh builds (coqui-ai/TTS with coqui-ai/Trainer, and the idiap fork when it
# was built too), found at $COQUI_ENV or /tmp/coqui-env; skips where there is none (CI).
# The data: 30 sentences spoken by espeak-ng at 22,050 Hz, tokenized with the XTTS-style vocabulary of
# tests/golden/bpe_xtts.json, cached with --audio int16 --val-fraction 0.2, and the codes of a DVAE
# of XTTS's size (Coqui's DiscreteVAE, 256 entries drawn from its own latents of the clips).
set -euo pipefail
source "$(dirname "$0")/faults_lib.bash"

ENVDIR=${COQUI_ENV:-/tmp/coqui-env}
if [ ! -f "$ENVDIR/env.sh" ]; then
  echo "skip: no Coqui environment at $ENVDIR (build one with ../shared/coqui-env/setup.sh, or set COQUI_ENV)"
  exit 0
fi
command -v espeak-ng >/dev/null || { echo "skip: espeak-ng is not installed (it speaks the test's clips)"; exit 0; }
PY=/usr/bin/python3    # the environment is built on Debian's python3-torch
if [ -f "$BUILD/lib/libxtts-reader.so" ] && ! grep -q 'lib[a-z]*san' <<< "$(ldd "$BUILD/lib/libxtts-reader.so")"; then
  export XTTS_PREP_LIB="$BUILD/lib"
else export XTTS_PREP_LIB=none; fi
imports() { # ENV_SCRIPT: Coqui's trainer and GPTTrainer, and the package, import there
  (export XTTS_PREP_PYTHON="$HERE/python"; . "$1"; cd "$T" && "$PY" -c 'import os
if os.environ.get("COQUI_ENV_PRELOAD"): __import__(os.environ["COQUI_ENV_PRELOAD"])
import torch, trainer, TTS.tts.layers.xtts.trainer.gpt_trainer, xtts_prep' 2>"$T/import.txt")
}
if ! imports "$ENVDIR/env.sh"; then
  echo "skip: the Coqui environment at $ENVDIR does not import ($(tail -n 1 "$T/import.txt"))"
  exit 0
fi

W=$T/w
mkdir -p "$W/data/wavs"
cp "$HERE/tests/golden/bpe_xtts.json" "$W/vocab.json"
i=0
while IFS= read -r s; do
  i=$((i + 1)); id=$(printf 'clip%03d' $i)
  espeak-ng -v en -s $((140 + (i * 7) % 60)) -w "$W/data/wavs/$id.wav" "$s"
  echo "$id|$s|$s" >> "$W/data/metadata.csv"
done <<'EOF'
The quick brown fox jumps over the lazy dog near the river bank.
She sells sea shells by the sea shore every summer morning.
A journey of a thousand miles begins with a single step forward.
The weather today is cloudy with a chance of rain in the evening.
Please remember to close the window before you leave the house.
Reading books is one of the best ways to learn new things.
The train to the city leaves at seven in the morning every day.
He painted the old fence white and then sat down to rest.
Our team worked late into the night to finish the project.
The children played in the park until the sun went down.
Fresh bread from the bakery smells wonderful in the morning.
The museum opens its doors to visitors at nine o'clock sharp.
She wrote a long letter to her grandmother who lives abroad.
The mountain trail was steep, but the view from the top was worth it.
Music can change the mood of a room in just a few seconds.
The cat slept on the warm windowsill for most of the afternoon.
We planted tomatoes, beans and carrots in the garden this spring.
The library has a quiet room where students can study alone.
A gentle breeze moved the leaves of the tall oak tree.
He forgot his umbrella at the station and got wet on the way home.
The recipe calls for two eggs, a cup of flour and some sugar.
The lighthouse guided the ships safely through the stormy night.
Learning to play the piano takes patience and daily practice.
The market was full of people buying fruit and vegetables.
They watched the stars from the roof of their small cabin.
The old clock in the hall still keeps perfect time.
A good night's sleep helps the mind and the body recover.
The river flows slowly past the village toward the sea.
She smiled and waved as the boat left the harbor.
The first snow of winter covered the streets in white.
EOF

"$BIN/xtts-tokenize" --lang en --vocab "$W/vocab.json" "$W/data/metadata.csv" > "$W/tokens.tsv" 2>/dev/null ||
  die "xtts-tokenize"
"$BIN/xtts-melcache" --out "$W/cache" --audio int16 --val-fraction 0.2 -q "$W/tokens.tsv" || die "xtts-melcache"

# a DVAE of the size GPTTrainer builds (hidden 512, codebook 512 wide) with 256 entries (the GPT's
# gpt_num_audio_tokens 258 less start and stop), its codebook drawn from its own latents of six clips
(export XTTS_PREP_PYTHON="$HERE/python"; . "$ENVDIR/env.sh"; cd "$T" && "$PY" - "$W" <<'PYEOF'
import glob, os, sys
import torch, torchaudio
from TTS.tts.layers.tortoise.arch_utils import TorchMelSpectrogram
from TTS.tts.layers.xtts.dvae import DiscreteVAE
W = sys.argv[1]
torch.manual_seed(7)
torch.save(torch.rand(80) * 2 + 0.5, os.path.join(W, "mel_stats.pth"))
dvae = DiscreteVAE(channels=80, normalization=None, positional_dims=1, num_tokens=256, codebook_dim=512,
                   hidden_dim=512, num_resnet_blocks=3, kernel_size=3, num_layers=2, use_transposed_convs=False).eval()
mel = TorchMelSpectrogram(mel_norm_file=os.path.join(W, "mel_stats.pth"), sampling_rate=22050)
with torch.no_grad():
    lat = torch.cat([dvae.encoder(mel(torchaudio.load(f)[0]))[0]
                     for f in sorted(glob.glob(os.path.join(W, "data", "wavs", "*.wav")))[:6]], 1)
    dvae.codebook.embed.copy_(lat[:, torch.randperm(lat.shape[1])[:256]])
torch.save(dvae.state_dict(), os.path.join(W, "dvae.pth"))
PYEOF
) > "$T/dvae.txt" 2>&1 || { cat "$T/dvae.txt"; die "writing the DVAE"; }
"$BIN/xtts-cache-codes" "$W/cache" --dvae "$W/dvae.pth" --mel-norms "$W/mel_stats.pth" -q || die "xtts-cache-codes"

run() { # ENV_SCRIPT NAME: the test in that environment, its own work folder
  rm -rf "$W/runs"
  (export XTTS_PREP_PYTHON="$HERE/python"; . "$1"; cd "$T" && "$PY" "$HERE/python/tests/test_coqui_trainer.py" "$W") \
    > "$T/$2.log" 2>&1 || { tail -n 40 "$T/$2.log"; die "test_coqui_trainer.py in $2"; }
  grep '^coqui-trainer:' "$T/$2.log"
}
run "$ENVDIR/env.sh" coqui-ai
if [ ! -f "$ENVDIR/env-idiap.sh" ]; then
  echo "skip: no idiap fork in $ENVDIR (env-idiap.sh): the fork's Trainer not checked"
elif ! imports "$ENVDIR/env-idiap.sh"; then
  echo "skip: the idiap fork in $ENVDIR does not import ($(tail -n 1 "$T/import.txt")): the fork's Trainer not checked"
else
  run "$ENVDIR/env-idiap.sh" idiap
fi
echo "coqui_trainer: ok"
