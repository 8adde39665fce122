#!/usr/bin/env bash
# e2e: long
# A newcomer's path, end to end, on a clean copy of the committed tree: `make demo` (README's
# first command) → README's "Real use" block as pasted, from the copy's folder, on the demo
# data it wrote → `make wheel` → the wheel into a fresh venv → a PyTorch DataLoader over the
# cache the block wrote, with fork and with spawn workers, on the C backend.
# The copy is `git clone` of this repository's HEAD (what a user clones), built with CUDA=0
# (nvcc is not part of the path); the block runs with STEPS=2 (its default trains for 20000
# steps) and OMP_NUM_THREADS=2. Skipped under a sanitizer build (the copy is a normal build,
# and this path is the same there), without git, torch or a git checkout.
set -euo pipefail
source "$(dirname "$0")/faults_lib.bash"
PY=${PYTHON:-/usr/bin/python3}
if [ -f "$BUILD/lib/libxtts-reader.so" ] && grep -q 'lib[a-z]*san' <<< "$(ldd "$BUILD/lib/libxtts-reader.so")"; then
  echo "skip: a sanitizer build (the newcomer's path builds its own copy)"; exit 0
fi
command -v git >/dev/null && git -C "$HERE" rev-parse --git-dir >/dev/null 2>&1 || { echo "skip: not a git checkout"; exit 0; }
"$PY" -c 'import torch' 2>/dev/null || { echo "skip: $PY has no torch (Debian python3-torch)"; exit 0; }

src=$T/xtts-prep
git clone -q "$HERE" "$src"
cd "$src"
nb() { env -u BUILD -u DEMO_DIR -u MAKEFLAGS -u MFLAGS -u MAKELEVEL "$@"; }   # as a newcomer's shell: no build of ours
nb make -j2 CUDA=0 demo > "$T/demo.log" 2>&1 || { tail -n 30 "$T/demo.log" >&2; die "make demo failed on a clean clone"; }
[ -f build/demo/data/metadata.csv ] || die "make demo wrote no demo dataset where the README's block looks"

readme_real_use_script README.md
nb env -u DATA -u VOCAB -u OUT STEPS=2 OMP_NUM_THREADS=2 bash "$T/run.sh" > "$T/block.out" 2> "$T/block.err" \
  || { tail -n 30 "$T/block.err" >&2; die "README's real-use block failed as pasted after make demo"; }
cache=$src/build/real-use/cache
[ -f "$cache/manifest.json" ] || die "the block wrote no cache at build/real-use/cache"
grep -q '^result: OK$' "$T/block.out" || die "xtts-cache-verify did not say OK"

nb make -j2 CUDA=0 wheel > "$T/wheel.log" 2>&1 || { tail -n 30 "$T/wheel.log" >&2; die "make wheel failed"; }
whl=$(ls build/wheel/*.whl)
"$PY" -m venv --system-site-packages "$T/venv"
"$T/venv/bin/pip" install -q --no-index --no-deps "$whl" > "$T/pip.log" 2>&1 || { cat "$T/pip.log" >&2; die "pip install of $whl failed"; }

cd "$T"   # away from the clone, so that only the venv's package can be imported
cat > "$T/loader.py" <<'EOF'
import sys
import torch
from torch.utils.data import DataLoader
import xtts_prep
from xtts_prep import XttsCache, XttsGptDataset


def main(cache_dir: str) -> None:
    assert "site-packages" in xtts_prep.__file__, xtts_prep.__file__
    assert XttsCache(cache_dir).backend == "c", XttsCache(cache_dir).backend
    ds = XttsGptDataset(cache_dir)
    for method in ("fork", "spawn"):
        dl = DataLoader(ds, batch_size=4, num_workers=2, collate_fn=ds.collate(),
                        multiprocessing_context=method)
        n = 0
        for batch in dl:
            assert isinstance(batch["padded_text"], torch.Tensor), type(batch["padded_text"])
            n += len(batch["text_lengths"])
        assert n > 0, (method, n, len(ds))
        print(method, "ok", n, "of", len(ds), "records")


if __name__ == "__main__":
    main(sys.argv[1])
EOF
"$T/venv/bin/python" "$T/loader.py" "$cache" > "$T/loader.out" 2>&1 || { cat "$T/loader.out" >&2; die "DataLoader over the wheel's package failed"; }
grep -q '^fork ok' "$T/loader.out" && grep -q '^spawn ok' "$T/loader.out" || { cat "$T/loader.out" >&2; die "fork or spawn did not run"; }
"$T/venv/bin/python" -m xtts_prep --about > "$T/about.txt"
grep -q '^backend: c$' "$T/about.txt" || { cat "$T/about.txt" >&2; die "--about does not say backend c in the venv"; }
echo ok
