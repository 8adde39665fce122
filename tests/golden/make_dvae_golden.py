#!/usr/bin/python3
"""make_dvae_golden.py — Coqui's own DiscreteVAE encoder on a short clip, for tests/test_dvae.c.

Loads TTS/tts/layers/xtts/dvae.py unmodified from a coqui-ai/TTS checkout (or its git
directory), with stub modules only for the imports the encoder never reaches (torchaudio:
dvae_wav_to_mel; einops: the normalization and decoder paths). Builds DiscreteVAE with the
arguments gpt_trainer.py gives it (positional_dims=1, num_layers=2, num_resnet_blocks=3,
kernel_size=3, use_transposed_convs=False, normalization=None) at small sizes (16 mel
channels, hidden_dim 4, codebook 8 x 32), random weights from a fixed seed, the codebook
scaled to the encoder output's spread so that the codes vary, and writes:

  tests/golden/dvae/dvae_small.pth  torch.save(dvae.state_dict()) as XTTS-v2's dvae.pth is saved,
                                    less the decoder and loss buffers (kept small)
  tests/golden/dvae/mel_stats.pth   torch.save(tensor) of 16 positive norms, as mel_stats.pth
  tests/golden/dvae/mel.f32         a clip's log-mel, (16, 61) float32, before the norms
  tests/golden/dvae/latent.f32      the encoder's output on mel / norms, (8, 16) float32
  tests/golden/dvae/codes.txt       get_codebook_indices: 16 codes, and each code's margin
                                    (second-best minus best distance, relative)

Run:  /usr/bin/python3 tests/golden/make_dvae_golden.py --coqui /path/to/TTS-checkout-or-git-dir
"""
import argparse
import os
import subprocess
import sys
import types

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "dvae")
FRAMES = 61


def dvae_source(coqui: str) -> str:
    """dvae.py's text from a checkout or a git directory, unmodified."""
    path = os.path.join(coqui, "TTS", "tts", "layers", "xtts", "dvae.py")
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            return f.read()
    return subprocess.run(["git", "--git-dir", coqui, "show", "HEAD:TTS/tts/layers/xtts/dvae.py"],
                          check=True, capture_output=True, text=True).stdout


def load_dvae_module(coqui: str) -> types.ModuleType:
    """Import dvae.py with stubs for torchaudio and einops, which the encoder never calls."""
    for name in ("torchaudio", "einops"):
        if name not in sys.modules:
            stub = types.ModuleType(name)
            stub.rearrange = lambda *a, **k: (_ for _ in ()).throw(RuntimeError("stub: not reached"))
            sys.modules[name] = stub
    module = types.ModuleType("coqui_dvae")
    exec(compile(dvae_source(coqui), "TTS/tts/layers/xtts/dvae.py", "exec"), module.__dict__)
    return module


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--coqui", required=True, help="coqui-ai/TTS checkout or its git directory")
    args = ap.parse_args()
    dvae_mod = load_dvae_module(args.coqui)
    torch.manual_seed(38)
    dvae = dvae_mod.DiscreteVAE(channels=16, normalization=None, positional_dims=1, num_tokens=32,
                                codebook_dim=8, hidden_dim=4, num_resnet_blocks=3, kernel_size=3,
                                num_layers=2, use_transposed_convs=False)
    dvae.eval()
    g = torch.Generator().manual_seed(7)
    norms = torch.rand(16, generator=g) * 2 + 0.5
    # a log-mel-like clip: a slow random walk per channel
    mel = torch.cumsum(torch.randn(16, FRAMES, generator=g) * 0.3, dim=1) - 4.0
    x = (mel / norms.unsqueeze(1)).unsqueeze(0)
    with torch.no_grad():
        latent = dvae.encoder(x)[0]  # (8, T2)
        # spread the codebook over the latents so that the search has real choices
        emb = latent.mean(1, keepdim=True) + latent.std(1, keepdim=True) * torch.randn(8, 32, generator=g)
        dvae.codebook.embed.copy_(emb)
        dvae.codebook.embed_avg.copy_(emb)
        codes = dvae.get_codebook_indices(x)[0]
        flat = latent.t()
        dist = flat.pow(2).sum(1, keepdim=True) - 2 * flat @ emb + emb.pow(2).sum(0, keepdim=True)
        top2 = dist.double().topk(2, dim=1, largest=False).values
        scale = flat.pow(2).sum(1).double() + emb.pow(2).sum(0).double().max()
        margin = (top2[:, 1] - top2[:, 0]) / scale
    os.makedirs(OUT, exist_ok=True)
    # the encoder's and the codebook's keys, in the state dict's order and OrderedDict form; the
    # decoder and the loss buffers (unused by the encoder; the full layout is in
    # tests/golden/torch_pth/dvae_tiny.pth) are left out to keep the file small
    sd = dvae.state_dict()
    for key in [k for k in sd if k.startswith(("decoder.", "discrete_loss."))]:
        del sd[key]
    torch.save(sd, os.path.join(OUT, "dvae_small.pth"))
    torch.save(norms.clone(), os.path.join(OUT, "mel_stats.pth"))
    mel.numpy().astype("<f4").tofile(os.path.join(OUT, "mel.f32"))
    latent.numpy().astype("<f4").tofile(os.path.join(OUT, "latent.f32"))
    with open(os.path.join(OUT, "codes.txt"), "w", encoding="utf-8") as f:
        f.write(f"# DiscreteVAE.get_codebook_indices on mel.f32 ({16} x {FRAMES}) / mel_stats.pth: "
                "code and relative margin (second-best minus best distance) per column\n")
        for c, m in zip(codes.tolist(), margin.tolist()):
            f.write(f"{c}\t{m:.3e}\n")
    print(f"codes: {codes.tolist()} ({len(set(codes.tolist()))} distinct); smallest margin {margin.min():.3e}")
    for name in sorted(os.listdir(OUT)):
        print(f"{name}: {os.path.getsize(os.path.join(OUT, name))} bytes")


if __name__ == "__main__":
    main()
