#!/usr/bin/python3
"""The xtts-train model in PyTorch: the reference for bench/train.sh (CPU) and
scripts/gpu-bench.sh (CUDA).

Replays the batch shapes (rows, sequence length, real frames) that an xtts-train run wrote
to its --log-json, so both sides compute on the same shapes, and times forward + backward
+ clipping + AdamW per step: on the CPU with the given number of threads, or on a CUDA
device (synchronized around each step) in fp32, tf32 (TF32 matrix products) or bf16
(autocast; the weights and AdamW stay fp32).

usage: bench_train_torch.py LOG.json --layers L --width C --heads NH --mels M --vocab V
                            --text-pos PT --mel-pos PM [--threads N] [--device cpu|cuda]
                            [--precision fp32|tf32|bf16[,...]] [--max-steps N]
prints one JSON object per precision: median_step_ms, samples_per_s, steps (or error).
"""
import argparse
import json
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

N_LANGS = 17


class Block(nn.Module):
    def __init__(self, C, NH):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(C), nn.LayerNorm(C)
        self.qkv, self.proj = nn.Linear(C, 3 * C), nn.Linear(C, C)
        self.fc, self.fcproj = nn.Linear(C, 4 * C), nn.Linear(4 * C, C)
        self.NH = NH

    def forward(self, x, mask):
        B, T, C = x.shape
        hs = C // self.NH
        q, k, v = self.qkv(self.ln1(x)).split(C, dim=2)
        q = q.view(B, T, self.NH, hs).transpose(1, 2)
        k = k.view(B, T, self.NH, hs).transpose(1, 2)
        v = v.view(B, T, self.NH, hs).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (hs ** -0.5)
        att = att.masked_fill(~mask[:T, :T], float("-inf")).softmax(dim=-1)
        y = (att @ v).transpose(1, 2).reshape(B, T, C)
        x = x + self.proj(y)
        return x + self.fcproj(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class Model(nn.Module):
    def __init__(self, L, C, NH, M, V, PT, PM):
        super().__init__()
        self.wte = nn.Embedding(V + N_LANGS, C)
        self.wpe_text = nn.Embedding(PT, C)
        self.wpe_mel = nn.Embedding(PM, C)
        self.melin = nn.Linear(M, C)
        self.mel_start = nn.Parameter(torch.zeros(M))
        self.blocks = nn.ModuleList([Block(C, NH) for _ in range(L)])
        self.lnf = nn.LayerNorm(C)
        self.head = nn.Linear(C, M + 1)
        self.M = M
        self.register_buffer("mask", torch.tril(torch.ones(PT + PM, PT + PM, dtype=torch.bool)))

    def forward(self, text, mel, nt, nf, pos_weight=5.0):
        # every row: nt text positions then nf mel positions (the shapes of the replayed batch)
        B = text.shape[0]
        xt = self.wte(text) + self.wpe_text.weight[:nt]
        prev = torch.cat([self.mel_start.expand(B, 1, self.M), mel[:, :nf - 1]], dim=1)
        xm = self.melin(prev) + self.wpe_mel.weight[:nf]
        x = torch.cat([xt, xm], dim=1)
        for blk in self.blocks:
            x = blk(x, self.mask)
        h = self.head(self.lnf(x))[:, nt:]
        mel_loss = (h[..., :self.M] - mel).abs().mean()
        stop = torch.zeros(B, nf, device=h.device)
        stop[:, -1] = 1.0
        stop_loss = F.binary_cross_entropy_with_logits(h[..., self.M].float(), stop,
                                                       pos_weight=torch.tensor(pos_weight, device=h.device))
        return mel_loss + stop_loss


def replay(a, shapes, precision):
    """Time forward + backward + clipping + AdamW on each replayed shape; the summary dict."""
    dev = torch.device(a.device)
    if a.device == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
        torch.backends.cudnn.allow_tf32 = precision == "tf32"
    sync = torch.cuda.synchronize if a.device == "cuda" else (lambda: None)
    torch.manual_seed(0)
    model = Model(a.layers, a.width, a.heads, a.mels, a.vocab, a.text_pos, a.mel_pos).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, betas=(0.9, 0.95), weight_decay=0.01)
    times = []
    samples = 0
    for B, T, frames in shapes:
        nf = min(max(frames, 1), T - 1, a.mel_pos)
        nt = min(T - nf, a.text_pos)
        text = torch.randint(0, a.vocab, (B, nt), device=dev)
        mel = torch.randn(B, nf, a.mels, device=dev)
        sync()
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        with torch.autocast(a.device, dtype=torch.bfloat16, enabled=precision == "bf16"):
            loss = model(text, mel, nt, nf)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sync()
        times.append(time.perf_counter() - t0)
        samples += B
    steady = times[1:] if len(times) > 1 else times
    return {"median_step_ms": 1e3 * statistics.median(steady), "samples_per_s": samples / sum(times),
            "steps": len(times), "threads": torch.get_num_threads(), "device": a.device, "precision": precision}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("log")
    for k in ("layers", "width", "heads", "mels", "vocab", "text_pos", "mel_pos"):
        ap.add_argument("--" + k.replace("_", "-"), type=int, required=True)
    ap.add_argument("--threads", type=int, default=0, help="CPU threads (default: PyTorch's)")
    ap.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    ap.add_argument("--precision", default="fp32",
                    help="fp32, tf32 or bf16, or several separated by commas (one JSON line each)")
    ap.add_argument("--max-steps", type=int, default=0, help="replay at most N logged steps (default all)")
    a = ap.parse_args()
    precisions = a.precision.split(",")
    for p in precisions:
        if p not in ("fp32", "tf32", "bf16"):
            ap.error(f"--precision {p}: expected fp32, tf32 or bf16")
    if a.threads > 0:
        torch.set_num_threads(a.threads)
    shapes = []
    for line in open(a.log):
        r = json.loads(line)
        if "step" in r:
            shapes.append((r["batch"], r["seq_len"], max(1, r["frames"] // r["batch"])))
    if a.max_steps > 0:
        shapes = shapes[:a.max_steps]
    for p in precisions:
        try:
            result = replay(a, shapes, p)
        except RuntimeError as e:  # e.g. out of device memory: the other precisions still run
            result = {"error": str(e).splitlines()[0], "device": a.device, "precision": p}
        print(json.dumps(result), flush=True)
        if a.device == "cuda":
            torch.cuda.empty_cache()

if __name__ == "__main__":
    main()
