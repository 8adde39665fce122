#!/usr/bin/env bash
# The ```python examples of docs/python-reader.md and README.md run as written, against
# caches built here from the demo dataset (xtts preset and hifigan preset, --audio int16).
#
# Every block is written to a file of its own and run with the package on PYTHONPATH, after
# these changes, and no others:
#   - the cache paths: "cache-xtts/", "cache/" and README's "build/real-use/cache" (where its
#     real-use block writes) name the xtts cache, "cache-hifigan/" the hifigan one (the paths
#     the examples use, relative to where they run)
#   - "for epoch in range(N):" runs one epoch
#   - a prelude defines the names an example leaves to its reader (generator, discriminators
#     and their losses, mel_of, model, the optimizers, VOCAB_SHA256 (the cache's vocab hash),
#     rank, world_size, batches_of_indices) as small torch stand-ins, and without CUDA
#     makes Tensor.cuda() return the tensor, so the GPU examples run on a CPU
#   - an epilogue prints how many optimizer steps ran; a training example must take some
# Blocks that use torch are skipped (with a message) when torch does not import.
set -euo pipefail
: "${BUILD:?}" "${TMPDIR_TEST:?}"
PY=${PYTHON:-/usr/bin/python3}
HERE=$(cd "$(dirname "$0")/../.." && pwd)
T=$TMPDIR_TEST
BIN=$BUILD/bin
if ! "$PY" -c 'import numpy, lmdb, zstandard' 2>/dev/null; then
  echo "skip: $PY lacks numpy, lmdb or zstandard (Debian python3-numpy python3-lmdb python3-zstandard)"
  exit 0
fi
if ! grep -q -- "--audio" <<< "$("$BIN/xtts-melcache" --help 2>&1)"; then
  echo "skip: xtts-melcache has no --audio option (the examples need waveforms)"; exit 0
fi
# the C library of this build, the package's one decoder (a sanitizer build's cannot load)
if [ -f "$BUILD/lib/libxtts-reader.so" ] && ! grep -q 'lib[a-z]*san' <<< "$(ldd "$BUILD/lib/libxtts-reader.so")"; then
  export XTTS_PREP_LIB=$BUILD/lib
else
  echo "skip: no loadable $BUILD/lib/libxtts-reader.so: the package does not import"; exit 0
fi
bash "$HERE/scripts/make-demo-dataset.sh" "$T/data" >/dev/null 2>&1
"$BIN/xtts-tokenize" --tokenizer bytes "$T/data/metadata.csv" > "$T/tok.tsv" 2>/dev/null || [ $? -eq 3 ]
mkdir -p "$T/run"
"$BIN/xtts-melcache" --out "$T/run/cache-xtts" --preset xtts --audio int16 -q "$T/tok.tsv" 2>>"$T/melcache.log" || [ $? -eq 3 ]
"$BIN/xtts-melcache" --out "$T/run/cache-hifigan" --preset hifigan --audio int16 -q "$T/tok.tsv" 2>>"$T/melcache.log" || [ $? -eq 3 ]

PYTHONPATH="$HERE/python" "$PY" - "$HERE" "$T/run" <<'PYEOF'
import os, re, subprocess, sys

here, run = sys.argv[1:3]
try:
    import torch  # noqa: F401
    have_torch = True
except ImportError:
    have_torch = False

PRELUDE = '''\
# the names the example leaves to its reader (tests/e2e/python_docs.sh)
import os as _os
STEPS = [0]
try:
    import torch as _torch
except ImportError:
    _torch = None
from xtts_prep import XttsCache as _XttsCache
_xc = _XttsCache("cache-xtts/")
VOCAB_SHA256 = _xc.config["vocab_hash"]
rank, world_size = 0, 1
batches_of_indices = [[(k + i) % len(_xc) for i in range(32)] for k in (0, 7)]
if _torch is not None:
    if not _torch.cuda.is_available():
        _torch.Tensor.cuda = lambda self, *a, **k: self

    class _SGD(_torch.optim.SGD):
        def step(self, *a, **k):
            STEPS[0] += 1
            return super().step(*a, **k)

    _hc = _XttsCache("cache-hifigan/")
    _C, _HOP = _hc.n_mels, _hc.hop

    class _Generator(_torch.nn.Module):   # mel [B, C, L] -> wav [B, 1, L * hop]
        def __init__(self):
            super().__init__()
            self.conv = _torch.nn.Conv1d(_C, _HOP, 1)

        def forward(self, mel):
            return self.conv(mel).transpose(1, 2).reshape(mel.shape[0], 1, -1)

    generator = _Generator()
    discriminators = _torch.nn.Conv1d(1, 1, 9, padding=4)
    discriminator_loss = lambda real, fake: ((real - 1) ** 2).mean() + (fake ** 2).mean()
    generator_loss = lambda fake: ((fake - 1) ** 2).mean()
    mel_of = lambda wav: wav.reshape(wav.shape[0], -1, _HOP).abs().mean(-1).unsqueeze(1).expand(-1, _C, -1)
    opt_g, opt_d = _SGD(generator.parameters(), lr=1e-3), _SGD(discriminators.parameters(), lr=1e-3)

    class _Gpt(_torch.nn.Module):   # Coqui's GPT model's two calls the example makes
        def __init__(self):
            super().__init__()
            self.w = _torch.nn.Parameter(_torch.zeros(1))

        def format_batch_on_device(self, b):
            return {"text_inputs": b["padded_text"], "text_lengths": b["text_lengths"], "audio_codes": b["mel"],
                    "wav_lengths": b["wav_lengths"], "cond_mels": b["conditioning"], "cond_idxs": b["cond_idxs"],
                    "cond_lens": b["cond_lens"]}

        def forward(self, text_inputs, text_lengths, audio_codes, wav_lengths, cond_mels=None, cond_idxs=None,
                    cond_lens=None):
            assert text_inputs.shape[0] == audio_codes.shape[0] == cond_mels.shape[0] == len(wav_lengths)
            return (self.w * text_inputs.float().mean()) ** 2, (self.w - audio_codes.float().mean()) ** 2, None

    model = _Gpt()
    opt = _SGD(model.parameters(), lr=1e-3)
# ---- the example
'''
EPILOGUE = '''
# ---- (tests/e2e/python_docs.sh)
if __name__ == "__main__":
    print("steps: %d" % STEPS[0])
'''


def blocks(path):
    text = open(os.path.join(here, path), encoding="utf-8").read()
    return [(path, m.group(1)) for m in re.finditer(r"^```python\n(.*?)^```", text, re.S | re.M)]


todo = blocks("docs/python-reader.md") + blocks("README.md")
assert len(todo) >= 4, "expected the examples of docs/python-reader.md and README.md, found %d" % len(todo)
failed = 0
for k, (src, code) in enumerate(todo):
    first = code.strip().splitlines()[0]
    name = "%s block %d (%s)" % (src, k + 1, first)
    if "torch" in code and not have_torch:
        print("skip: %s: torch is not installed" % name)
        continue
    body = re.sub(r'"(cache/|build/real-use/cache)"', '"cache-xtts/"', code)
    body = re.sub(r"(for epoch in range\()\d+(\):)", r"\g<1>1\g<2>", body)
    script = os.path.join(run, "example_%d.py" % (k + 1))
    with open(script, "w", encoding="utf-8") as f:
        f.write(PRELUDE + body + EPILOGUE)
    r = subprocess.run([sys.executable, script], cwd=run, capture_output=True, text=True, timeout=600,
                       env=dict(os.environ, PYTHONPATH=os.path.join(here, "python")))
    steps = re.findall(r"^steps: (\d+)$", r.stdout, re.M)
    trains = ".step()" in code
    if r.returncode != 0 or not steps or (trains and int(steps[-1]) == 0):
        failed += 1
        print("FAIL: %s: exit %d, %s\n%s" % (name, r.returncode, steps, r.stderr[-3000:]))
    else:
        print("ok: %s%s" % (name, ": %s optimizer steps" % steps[-1] if trains else ""))
sys.exit(1 if failed else 0)
PYEOF
