#!/usr/bin/env bash
# e2e: long
# The model.pth xtts-train --model xtts-gpt --ckpt writes is Coqui's: from an Xtts model.pth made
# by Coqui's own Xtts (tiny GPT, XTTS's HiFi-GAN decoder and speaker encoder, random weights),
# two steps on the demo cache, then torch.load(weights_only=True) reads DIR/model.pth, every
# tensor but GPT's equal to the input's (keys, order, dtypes, values), and Xtts.load_checkpoint
# (strict=True) loads it. Skips without ../shared/coqui-env's environment (COQUI_ENV, by default
# /tmp/coqui-env).
set -euo pipefail
source "$(dirname "$0")/faults_lib.bash"
source "$(dirname "$0")/xtts_gpt_lib.bash"
ENV_DIR=${COQUI_ENV:-/tmp/coqui-env}
if [ ! -f "$ENV_DIR/env.sh" ]; then
  echo "skip: no Coqui environment at $ENV_DIR (../shared/coqui-env/setup.sh builds it)"
  exit 0
fi
PY=/usr/bin/python3
gpt_cache
( . "$ENV_DIR/env.sh"; "$PY" - "$T/config.json" "$T/model.pth" <<'EOF'
import json, sys, torch
from TTS.tts.configs.xtts_config import XttsConfig
from TTS.tts.models.xtts import Xtts
config = XttsConfig()
for k, v in json.load(open(sys.argv[1]))["model_args"].items():
    setattr(config.model_args, k, v)
torch.manual_seed(3)
x = Xtts.init_from_config(config)
x.init_models()
torch.save({"model": x.state_dict()}, sys.argv[2])
EOF
) || die "Coqui's Xtts model.pth"
expect_rc 0 "$BIN/xtts-train" --model xtts-gpt --config "$T/config.json" --init "$T/model.pth" --cache "$T/c" \
  --batch-size 2 -j 2 --steps 2 --ckpt "$T/out"
grep -q "wrote $T/out/model.pth" "$T/err.txt" || { cat "$T/err.txt"; die "no model.pth written"; }
( . "$ENV_DIR/env.sh"; "$PY" - "$T/config.json" "$T/model.pth" "$T/out/model.pth" <<'EOF'
import json, sys, torch
from TTS.tts.configs.xtts_config import XttsConfig
from TTS.tts.models.xtts import Xtts
cfg, src, out = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
a = torch.load(src, map_location="cpu")["model"]
b = torch.load(out, map_location="cpu", weights_only=True)["model"]
assert list(a) == list(b), "keys or order differ"
assert all(a[k].dtype == b[k].dtype and a[k].shape == b[k].shape for k in a)
changed = [k for k in a if not torch.equal(a[k], b[k])]
assert changed and all(k.startswith("gpt.") for k in changed), changed[:5]
config = XttsConfig()
for k, v in cfg["model_args"].items():
    setattr(config.model_args, k, v)
x = Xtts.init_from_config(config)
x.load_checkpoint(config, checkpoint_path=out, vocab_path="/nonexistent/vocab.json", eval=True, strict=True)
assert all(torch.equal(v, b[k]) for k, v in x.state_dict().items() if k in b)
print(f"{len(b)} tensors: {len(changed)} of GPT trained, {len(a) - len(changed)} carried unchanged; strict load ok")
EOF
) || die "Coqui reading the model.pth xtts-train wrote"
echo ok
