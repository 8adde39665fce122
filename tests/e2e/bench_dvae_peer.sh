#!/usr/bin/env bash
# bench/dvae.sh's PyTorch peer (bench/src/bench_dvae_torch.py) finds tests/golden's loader of
# Coqui's dvae.py itself (docs/reliability.md, round five): run from anywhere, without
# PYTHONPATH, on a stand-in checkout whose dvae.py is a tiny DiscreteVAE, it prints its timing.
# Was: "No module named 'make_dvae_golden'" unless PYTHONPATH held tests/golden.
set -euo pipefail
source "$(dirname "$0")/faults_lib.bash"
"$PY" -c 'import torch, numpy' 2>/dev/null || { echo "skip: $PY lacks torch or numpy"; echo ok; exit 0; }

mkdir -p "$T/coqui/TTS/tts/layers/xtts"
cat > "$T/coqui/TTS/tts/layers/xtts/dvae.py" <<'PYEOF'
import torch
class DiscreteVAE(torch.nn.Module):
    def __init__(self, channels=80, **kw):
        super().__init__()
        self.conv = torch.nn.Conv1d(channels, 4, 3, padding=1)
    def get_codebook_indices(self, mel):
        return self.conv(mel).argmax(1)
PYEOF
cd "$T"
env -u PYTHONPATH "$PY" "$HERE/bench/src/bench_dvae_torch.py" "$T/coqui" 1 1 1 1 > "$T/out.txt" 2> "$T/err.txt" \
  || { cat "$T/err.txt"; die "bench_dvae_torch.py failed"; }
grep -q '^torch_s [0-9.]*$' "$T/out.txt" || { cat "$T/out.txt" "$T/err.txt"; die "no torch_s line"; }
echo "the PyTorch peer runs without PYTHONPATH"
echo ok
