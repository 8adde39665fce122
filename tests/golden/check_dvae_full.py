#!/usr/bin/python3
"""check_dvae_full.py — the C DVAE encoder against Coqui's DiscreteVAE at XTTS-v2's sizes.

Not a golden file maker: the weights are ~100 MB, so everything is written to a scratch
folder and compared at once. Builds Coqui's DiscreteVAE (dvae.py loaded unmodified, as in
make_dvae_golden.py) with gpt_trainer.py's arguments and XTTS-v2's sizes (80 mel channels,
hidden_dim 512, codebook 512 x 1024), random weights from a seed with the codebook spread
over the encoder's outputs, saves the state dict as dvae.pth is saved (encoder and codebook
keys) and 80 norms as mel_stats.pth, makes synthetic log-mel clips of varied lengths
(random walks per channel), takes each clip's codes alone from Coqui
(get_codebook_indices) and from build/tests/tools/dvae-codes, and reports how many codes
are equal and whether every differing one is a near-tie (best and second-best distances
within 1e-6 of each other relative to |x|^2 + |e|^2). Exit 1 when a code differs that is not.

Run:  /usr/bin/python3 tests/golden/check_dvae_full.py --coqui /path/to/TTS [--clips 12]
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_dvae_golden import load_dvae_module  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--coqui", required=True, help="coqui-ai/TTS checkout or its git directory")
    ap.add_argument("--clips", type=int, default=12)
    ap.add_argument("--tool", default=os.path.join(ROOT, "build", "tests", "tools", "dvae-codes"))
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    mod = load_dvae_module(args.coqui)
    torch.manual_seed(2024)
    dvae = mod.DiscreteVAE(channels=80, normalization=None, positional_dims=1, num_tokens=1024,
                           codebook_dim=512, hidden_dim=512, num_resnet_blocks=3, kernel_size=3,
                           num_layers=2, use_transposed_convs=False).eval()
    g = torch.Generator().manual_seed(11)
    norms = torch.rand(80, generator=g) * 2 + 0.5
    frames = [int(f) for f in torch.randint(80, 1000, (args.clips,), generator=g)]
    clips = [torch.cumsum(torch.randn(80, n, generator=g) * 0.3, dim=1) - 4.0 for n in frames]
    work = tempfile.mkdtemp(prefix="dvae-full-")
    with torch.no_grad():
        lat = dvae.encoder((clips[0] / norms.unsqueeze(1)).unsqueeze(0))[0]
        emb = lat.mean(1, keepdim=True) + lat.std(1, keepdim=True) * torch.randn(512, 1024, generator=g)
        dvae.codebook.embed.copy_(emb)
        sd = dvae.state_dict()
        for key in [k for k in sd if k.startswith(("decoder.", "discrete_loss."))]:
            del sd[key]
        torch.save(sd, os.path.join(work, "dvae.pth"))
        torch.save(norms.clone(), os.path.join(work, "mel_stats.pth"))
        want, margins = [], []
        t0 = time.time()
        for k, mel in enumerate(clips):
            x = (mel / norms.unsqueeze(1)).unsqueeze(0)
            want.append(dvae.get_codebook_indices(x)[0].tolist())
            flat = dvae.encoder(x)[0].t().double()
            e = emb.double()
            dist = flat.pow(2).sum(1, keepdim=True) - 2 * flat @ e + e.pow(2).sum(0, keepdim=True)
            top2 = dist.topk(2, dim=1, largest=False).values
            margins.append(((top2[:, 1] - top2[:, 0]) / (flat.pow(2).sum(1) + e.pow(2).sum(0).max())).tolist())
            mel.numpy().astype("<f4").tofile(os.path.join(work, f"clip{k}.f32"))
        torch_s = time.time() - t0
    with open(os.path.join(work, "clips.tsv"), "w", encoding="utf-8") as f:
        for k, n in enumerate(frames):
            f.write(f"clip{k}\t{n}\t{os.path.join(work, f'clip{k}.f32')}\n")
    run = subprocess.run([args.tool, os.path.join(work, "dvae.pth"), os.path.join(work, "mel_stats.pth"),
                          os.path.join(work, "clips.tsv")], capture_output=True, text=True,
                         env=dict(os.environ, OMP_NUM_THREADS=str(args.threads)))
    if run.returncode != 0:
        print(run.stderr, file=sys.stderr)
        shutil.rmtree(work, ignore_errors=True)
        return 1
    got = [[int(c) for c in line.split("\t")[1].split()] for line in run.stdout.splitlines()]
    total = equal = ties = 0
    bad = []
    for k, (w, c, m) in enumerate(zip(want, got, margins)):
        if len(w) != len(c):
            bad.append(f"clip{k}: {len(c)} codes, Coqui {len(w)}")
            continue
        for j, (a, b) in enumerate(zip(w, c)):
            total += 1
            if a == b:
                equal += 1
            elif m[j] < 1e-6:
                ties += 1
            else:
                bad.append(f"clip{k} code {j}: {b}, Coqui {a}, margin {m[j]:.2e}")
    seconds = sum(frames) * 256 / 22050
    print(f"{args.clips} clips, {seconds:.1f} s of (synthetic) mel: codes equal {equal}/{total}; "
          f"{ties} differ as near-ties; {len(bad)} differ otherwise")
    print(f"Coqui (torch {torch.__version__}, {args.threads} threads, with a second encoder pass for the margins): "
          f"{torch_s:.2f} s; {run.stderr.strip()}")
    for line in bad[:10]:
        print("  " + line)
    shutil.rmtree(work, ignore_errors=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
