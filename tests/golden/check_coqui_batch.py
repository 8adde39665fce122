#!/usr/bin/python3
"""check_coqui_batch.py — XttsGptDataset's batch against Coqui's own collate_fn and
format_batch_on_device, for the same items and random draws.

Takes from a coqui-ai/TTS checkout (or its git directory), unmodified:
  XTTSDataset.collate_fn       TTS/tts/layers/xtts/trainer/dataset.py
  GPTTrainer.format_batch_on_device  TTS/tts/layers/xtts/trainer/gpt_trainer.py
  TorchMelSpectrogram          TTS/tts/layers/tortoise/arch_utils.py
  DiscreteVAE                  TTS/tts/layers/xtts/dvae.py
each function or class cut out of its file by name (ast) and run on a stand-in `self` that
holds what the function touches (config.audio's two rates, the two mel extractors, the DVAE);
nothing else of those modules is imported. torchaudio is not in Debian: when it does not
import, transforms.MelSpectrogram is stood in by torch.stft and the HTK/slaney filters of
xtts_prep.style_mel (the filters are checked against torchaudio's by tests/golden/mel).

For batches of one clip and of four, it prints how many codes equal Coqui's and how many
differ, and where (the last codes of clips shorter than their batch's longest, which Coqui
computes from the zero-padded batch), the largest cond_mels difference, and whether
text_inputs, text_lengths, wav_lengths and cond_idxs are equal. Exit 1 when a batch of one
clip differs in its codes (beyond near-ties) or cond_mels differ by more than 1e-3 (torch's float32 FFT leaves up to about 1e-4 at mel
powers near the 1e-5 floor, which this float64 rendition does not share).

Run: PYTHONPATH=python /usr/bin/python3 tests/golden/check_coqui_batch.py --coqui DIR CACHE DVAE.pth MEL_NORMS.pth
     (CACHE: built with --audio int16 and xtts-cache-codes for that DVAE)
"""
import argparse
import ast
import os
import random
import subprocess
import sys
import types

import numpy as np
import torch

from xtts_prep import XttsGptDataset
from xtts_prep.style_mel import mel_filters_htk_slaney


def source(coqui: str, rel: str) -> str:
    path = os.path.join(coqui, rel)
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            return f.read()
    return subprocess.run(["git", "--git-dir", coqui, "show", "HEAD:" + rel], check=True, capture_output=True,
                          text=True).stdout


def cut(text: str, name: str, cls: str = "") -> str:
    """The source of function or class `name` (inside class `cls` when given), dedented."""
    tree = ast.parse(text)
    body = tree.body
    if cls:
        body = next(n for n in body if isinstance(n, ast.ClassDef) and n.name == cls).body
    node = next(n for n in body if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == name)
    lines = text.splitlines()[node.lineno - 1 - len(node.decorator_list):node.end_lineno]
    indent = len(lines[0]) - len(lines[0].lstrip())
    return "\n".join(l[indent:] for l in lines)


class MelSpectrogramStandIn(torch.nn.Module):
    """torchaudio.transforms.MelSpectrogram for the arguments TorchMelSpectrogram passes."""

    def __init__(self, n_fft, hop_length, win_length, power, normalized, sample_rate, f_min, f_max, n_mels, norm):
        super().__init__()
        assert power == 2 and not normalized and norm == "slaney"
        self.n_fft, self.hop, self.win = n_fft, hop_length, win_length
        fb = mel_filters_htk_slaney(sample_rate, n_fft, n_mels, float(f_min), float(f_max)).T
        self.register_buffer("fb", torch.from_numpy(fb.astype(np.float32)))
        self.register_buffer("window", torch.hann_window(win_length))

    def forward(self, x):
        spec = torch.stft(x, n_fft=self.n_fft, hop_length=self.hop, win_length=self.win, window=self.window,
                          center=True, pad_mode="reflect", normalized=False, onesided=True, return_complex=True)
        power = spec.abs().pow(2.0)
        return torch.matmul(power.transpose(-1, -2), self.fb).transpose(-1, -2)


def load_coqui(coqui: str) -> dict:
    """Coqui's four pieces, each executed from its own source text."""
    try:
        import torchaudio  # noqa: F401
    except ImportError:
        ta = types.ModuleType("torchaudio")
        ta.transforms = types.SimpleNamespace(MelSpectrogram=MelSpectrogramStandIn)
        sys.modules["torchaudio"] = ta
    if "einops" not in sys.modules:   # the DVAE's normalization and decoder paths only
        einops = types.ModuleType("einops")
        einops.rearrange = lambda *a, **k: (_ for _ in ()).throw(RuntimeError("stub: not reached"))
        sys.modules["einops"] = einops
    fsspec = types.ModuleType("fsspec")
    fsspec.open = lambda path, *a, **k: open(path, "rb")
    ns = {"torch": torch, "nn": torch.nn, "fsspec": fsspec, "torchaudio": sys.modules["torchaudio"],
          "DEFAULT_MEL_NORM_FILE": None}
    arch = source(coqui, "TTS/tts/layers/tortoise/arch_utils.py")
    exec(compile(cut(arch, "TorchMelSpectrogram"), "arch_utils.py", "exec"), ns)
    dvae = types.ModuleType("coqui_dvae")
    exec(compile(source(coqui, "TTS/tts/layers/xtts/dvae.py"), "dvae.py", "exec"), dvae.__dict__)
    gpt = source(coqui, "TTS/tts/layers/xtts/trainer/gpt_trainer.py")
    exec(compile(cut(gpt, "format_batch_on_device", "GPTTrainer"), "gpt_trainer.py", "exec"), ns)
    ds = source(coqui, "TTS/tts/layers/xtts/trainer/dataset.py")
    exec(compile(cut(ds, "collate_fn", "XTTSDataset"), "dataset.py", "exec"), ns)
    return {"mel": ns["TorchMelSpectrogram"], "dvae": dvae.DiscreteVAE, "format": ns["format_batch_on_device"],
            "collate": ns["collate_fn"]}


def coqui_trainer(c: dict, dvae_path: str, norms_path: str):
    """The stand-in self of format_batch_on_device, built as GPTTrainer.__init__ builds it."""
    sd = torch.load(dvae_path)
    hidden, dim, tokens = sd["encoder.0.0.weight"].shape[0], sd["codebook.embed"].shape[0], sd["codebook.embed"].shape[1]
    dvae = c["dvae"](channels=80, normalization=None, positional_dims=1, num_tokens=tokens, codebook_dim=dim,
                     hidden_dim=hidden, num_resnet_blocks=3, kernel_size=3, num_layers=2, use_transposed_convs=False)
    dvae.load_state_dict(sd, strict=False)
    dvae.eval()
    return types.SimpleNamespace(
        config=types.SimpleNamespace(audio=types.SimpleNamespace(sample_rate=22050, dvae_sample_rate=22050)),
        torch_mel_spectrogram_style_encoder=c["mel"](filter_length=2048, hop_length=256, win_length=1024,
                                                     normalize=False, sampling_rate=22050, mel_fmin=0, mel_fmax=8000,
                                                     n_mel_channels=80, mel_norm_file=norms_path),
        torch_mel_spectrogram_dvae=c["mel"](mel_norm_file=norms_path, sampling_rate=22050),
        dvae=dvae)


def as_coqui_item(it: dict) -> dict:
    """Our item in the types Coqui's XTTSDataset.__getitem__ returns."""
    return {"text": torch.from_numpy(it["text"]), "text_lengths": torch.tensor(int(it["text_lengths"])),
            "wav": torch.from_numpy(it["wav"]), "wav_lengths": torch.tensor(int(it["wav_lengths"])),
            "filenames": it["filenames"], "conditioning": torch.from_numpy(it["conditioning"]),
            "cond_lens": torch.from_numpy(np.asarray(it["cond_lens"], dtype=np.float64)),
            "cond_idxs": torch.from_numpy(np.asarray(it["cond_idxs"]))}


def compare(c: dict, trainer, ds: XttsGptDataset, positions: list, seed: int) -> tuple:
    random.seed(seed)
    items = [ds[p] for p in positions]
    ours = ds.collate(to_torch=True)(items)
    with torch.no_grad():
        theirs = c["format"](trainer, c["collate"](None, [as_coqui_item(it) for it in items]))
    same = lambda k: bool(torch.equal(ours[k].to(theirs[k].dtype), theirs[k]))  # noqa: E731
    assert same("text_lengths") and same("wav_lengths") and same("cond_idxs"), "lengths or cond_idxs"
    assert torch.equal(ours["padded_text"], theirs["text_inputs"]), "text_inputs"
    d = (ours["cond_mels"] - theirs["cond_mels"]).abs()
    cond = (float(d.max()), int((d > 1e-4).sum()), d.numel())
    codes_equal = codes_total = 0
    tails = []
    for b, it in enumerate(items):
        n = -(-int(it["wav_lengths"]) // 1024)        # the codes gpt.py keeps: ceil(wav / 1024)
        a, t = ours["audio_codes"][b, :n], theirs["audio_codes"][b, :n].to(torch.int64)
        diff = (a != t).nonzero().flatten().tolist()
        codes_equal += n - len(diff)
        codes_total += n
        if diff:
            tails.append((it["filenames"], n, diff))
    return codes_equal, codes_total, cond, tails


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--coqui", required=True)
    ap.add_argument("cache")
    ap.add_argument("dvae")
    ap.add_argument("norms")
    a = ap.parse_args()
    c = load_coqui(a.coqui)
    trainer = coqui_trainer(c, a.dvae, a.norms)
    ds = XttsGptDataset(a.cache, codes=(a.dvae, a.norms), max_wav_length=10 ** 9, max_text_length=10 ** 6)
    bad = 0
    eq = tot = over = values = 0
    worst = 0.0
    for p in range(len(ds)):
        e, t, cond, tails = compare(c, trainer, ds, [p], seed=p)
        eq, tot, worst, over, values = eq + e, tot + t, max(worst, cond[0]), over + cond[1], values + cond[2]
        bad += bool(tails)
    print("batches of one clip: %d clips, codes equal %d/%d; cond_mels: max |diff| %.3g, %d of %d values over 1e-4"
          % (len(ds), eq, tot, worst, over, values))
    eq = tot = 0
    shorter_tails = []
    for p in range(0, len(ds) - 3, 4):
        e, t, cond, tails = compare(c, trainer, ds, list(range(p, p + 4)), seed=p)
        eq, tot, worst = eq + e, tot + t, max(worst, cond[0])
        shorter_tails += tails
    print("batches of four: codes equal %d/%d; %d clips with differing codes" % (eq, tot, len(shorter_tails)))
    for name, n, diff in shorter_tails[:8]:
        print("  %s: %d codes, differing at %s (from its end: %s)" % (name, n, diff, [n - i for i in diff]))
    return 1 if bad or worst > 1e-3 else 0


if __name__ == "__main__":
    sys.exit(main())
