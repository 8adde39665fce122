#!/usr/bin/python3
"""Write tests/golden/train_tiny.bin: a tiny xtts-train model's loss and every gradient,
computed by PyTorch (float64) from the same weights and batch the C test loads.

The model is the one train/model.c implements (docs/xtts-train.md, "The model"):
[language token ; text tokens ; mel frames] per row, padding only at the end; token and
language embedding + text positions; previous-frame projection (learned start frame) +
mel positions; pre-LN blocks with causal attention and a tanh-GELU MLP; final LayerNorm;
a head giving M mel values and a stop logit; loss = mean L1 over real frames and
channels + mean BCE-with-logits (pos_weight) over real frames.

Layout of the file (little-endian), read by tests/test_train_model.c:
  b"XTTG", int32 version (1)
  int32 L C NH M V Pt Pm B T text_stride mel_stride
  float32 pos_weight
  int32 n_text[B], n_frames[B], text[B*text_stride]
  float32 mel[B*mel_stride*M]            time-major frames
  int64 num_params, float32 params[num_params]   (train/model.c tensor order)
  float32 loss, mel_loss, stop_loss
  float32 grads[num_params]

Regenerate: /usr/bin/python3 tests/golden/make_train_golden.py tests/golden/train_tiny.bin
"""
import struct
import sys

import numpy as np
import torch
import torch.nn.functional as F

N_LANGS = 17
L, C, NH, M, V, PT, PM = 2, 16, 2, 8, 20, 8, 12
B = 4
N_TEXT = [5, 8, 3, 2]
N_FRAMES = [12, 6, 9, 0]  # the last row is empty (a skipped record)
LANGS = [0, 3, 16, 1]
POS_WEIGHT = 3.0
TEXT_STRIDE, MEL_STRIDE = PT, PM
T = max(nt + nf for nt, nf in zip(N_TEXT, N_FRAMES))


def param_shapes():
    return [
        ("wte", (V + N_LANGS, C)), ("wpe_text", (PT, C)), ("wpe_mel", (PM, C)),
        ("melin_w", (C, M)), ("melin_b", (C,)), ("mel_start", (M,)),
        ("ln1w", (L, C)), ("ln1b", (L, C)), ("qkvw", (L, 3 * C, C)), ("qkvb", (L, 3 * C)),
        ("attprojw", (L, C, C)), ("attprojb", (L, C)), ("ln2w", (L, C)), ("ln2b", (L, C)),
        ("fcw", (L, 4 * C, C)), ("fcb", (L, 4 * C)), ("fcprojw", (L, C, 4 * C)), ("fcprojb", (L, C)),
        ("lnfw", (C,)), ("lnfb", (C,)), ("headw", (M + 1, C)), ("headb", (M + 1,)),
    ]


def main(out_path):
    rng = np.random.default_rng(20261122)
    params = {}
    for name, shape in param_shapes():
        if name.startswith("ln") and name.endswith("w"):
            a = 1.0 + 0.1 * rng.standard_normal(shape)
        else:
            a = 0.2 * rng.standard_normal(shape)
        params[name] = a.astype(np.float32)
    text = np.zeros((B, TEXT_STRIDE), dtype=np.int32)
    for b in range(B):
        text[b, 0] = V + LANGS[b]
        text[b, 1:N_TEXT[b]] = rng.integers(0, V, N_TEXT[b] - 1)
    mel = rng.standard_normal((B, MEL_STRIDE, M)).astype(np.float32)

    P = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True) for k, v in params.items()}
    melt = torch.tensor(mel, dtype=torch.float64)

    # encoder: one row at a time, padded with zeros to T
    rows = []
    for b in range(B):
        nt, nf = N_TEXT[b], N_FRAMES[b]
        if nf == 0:
            rows.append(torch.zeros(T, C, dtype=torch.float64))
            continue
        tok = torch.tensor(text[b, :nt].astype(np.int64))
        xt = P["wte"][tok] + P["wpe_text"][:nt]
        prev = torch.cat([P["mel_start"][None, :], melt[b, : nf - 1]], dim=0)  # (nf, M)
        xm = prev @ P["melin_w"].T + P["melin_b"] + P["wpe_mel"][:nf]
        pad = torch.zeros(T - nt - nf, C, dtype=torch.float64)
        rows.append(torch.cat([xt, xm, pad], dim=0))
    x = torch.stack(rows)  # (B, T, C)

    hs = C // NH
    mask = torch.tril(torch.ones(T, T, dtype=torch.bool))
    for l in range(L):
        h = F.layer_norm(x, (C,), P["ln1w"][l], P["ln1b"][l], eps=1e-5)
        qkv = h @ P["qkvw"][l].T + P["qkvb"][l]
        q, k, v = qkv.split(C, dim=2)
        q = q.view(B, T, NH, hs).transpose(1, 2)
        k = k.view(B, T, NH, hs).transpose(1, 2)
        v = v.view(B, T, NH, hs).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) / (hs ** 0.5)
        att = att.masked_fill(~mask, float("-inf")).softmax(dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        x = x + y @ P["attprojw"][l].T + P["attprojb"][l]
        h = F.layer_norm(x, (C,), P["ln2w"][l], P["ln2b"][l], eps=1e-5)
        h = F.gelu(h @ P["fcw"][l].T + P["fcb"][l], approximate="tanh")
        x = x + h @ P["fcprojw"][l].T + P["fcprojb"][l]
    x = F.layer_norm(x, (C,), P["lnfw"], P["lnfb"], eps=1e-5)
    head = x @ P["headw"].T + P["headb"]  # (B, T, M+1)

    preds, targets, logits, stops = [], [], [], []
    for b in range(B):
        nt, nf = N_TEXT[b], N_FRAMES[b]
        if nf == 0:
            continue
        preds.append(head[b, nt:nt + nf, :M])
        targets.append(melt[b, :nf])
        logits.append(head[b, nt:nt + nf, M])
        s = torch.zeros(nf, dtype=torch.float64)
        s[-1] = 1.0
        stops.append(s)
    mel_loss = (torch.cat(preds) - torch.cat(targets)).abs().mean()
    stop_loss = F.binary_cross_entropy_with_logits(
        torch.cat(logits), torch.cat(stops), pos_weight=torch.tensor(POS_WEIGHT, dtype=torch.float64))
    loss = mel_loss + stop_loss
    loss.backward()

    with open(out_path, "wb") as f:
        f.write(b"XTTG")
        f.write(struct.pack("<i", 1))
        f.write(struct.pack("<11i", L, C, NH, M, V, PT, PM, B, T, TEXT_STRIDE, MEL_STRIDE))
        f.write(struct.pack("<f", POS_WEIGHT))
        f.write(np.array(N_TEXT, dtype="<i4").tobytes())
        f.write(np.array(N_FRAMES, dtype="<i4").tobytes())
        f.write(text.astype("<i4").tobytes())
        f.write(mel.astype("<f4").tobytes())
        flat = np.concatenate([params[n].ravel() for n, _ in param_shapes()])
        f.write(struct.pack("<q", flat.size))
        f.write(flat.astype("<f4").tobytes())
        f.write(struct.pack("<3f", loss.item(), mel_loss.item(), stop_loss.item()))
        grads = np.concatenate([P[n].grad.numpy().ravel() for n, _ in param_shapes()])
        f.write(grads.astype("<f4").tobytes())
    print(f"{out_path}: {flat.size} parameters, loss {loss.item():.6f} "
          f"(mel {mel_loss.item():.6f}, stop {stop_loss.item():.6f})")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "tests/golden/train_tiny.bin")
