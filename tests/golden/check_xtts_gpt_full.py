#!/usr/bin/python3
"""Coqui's XTTS GPT against ours at XTTS-v2's full size (30 layers, 1024 channels, 16 heads, 6681
text and 1026 audio tokens, perceiver resampler; 441,018,563 parameters) with random weights:
the same batch (2 rows, 60 and 45 text tokens, up to 120 codes, 300 conditioning frames, prompt
masking) through Coqui's GPT (float32, as GPTTrainer trains it; dropout off) and through
build/tests/tools/xtts-gpt-grads; prints both losses' relative differences, the worst gradient
difference relative to its tensor's largest, and the forward+backward seconds of each; exits 1
when a loss is off by more than 1e-5 relative or a gradient by more than 1e-3 of its tensor's
largest (issue 48).

Needs ../shared/coqui-env and about 8 GB of memory (the two runs one after the other), and
writes about 3.5 GB under TMPDIR. Run:
  . /tmp/coqui-env/env.sh && /usr/bin/python3 tests/golden/check_xtts_gpt_full.py [BUILD]
"""
import gc
import os
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_xtts_gpt_golden as mk  # noqa: E402  (Coqui's GPT, the batch and the file layout)

mk.LAYERS, mk.DIM, mk.HEADS = 30, 1024, 16
mk.N_TEXT, mk.N_AUDIO, mk.START_TEXT, mk.STOP_TEXT, mk.START_AUDIO, mk.STOP_AUDIO = 6681, 1026, 261, 0, 1024, 1025
mk.MAX_TEXT, mk.MAX_AUDIO, mk.MAX_PROMPT = 402, 605, 70
mk.B, mk.TEXT_LENGTHS, mk.WAV_LENGTHS = 2, [60, 45], [117 * 1024, 90000]
mk.COND_IDXS, mk.COND_FRAMES = [[0, 66150], [1024, 80000]], 300


def main(build):
    threads = int(os.environ.get("OMP_NUM_THREADS", "2"))
    torch.set_num_threads(threads)
    tmp = tempfile.mkdtemp(prefix="xtts_gpt_full_")
    inp, ref, out = (os.path.join(tmp, n) for n in ("in.bin", "ref.f32", "out.bin"))
    gpt = mk.build_model(torch.float32)
    text, codes, cond = mk.batch()
    names = [n for n, _ in gpt.named_parameters()]
    params = dict(gpt.named_parameters())
    opt = mk.optimizer(gpt)
    by_id = {id(p): g["weight_decay"] > 0 for g in opt.param_groups for p in g["params"]}
    decay = {n: by_id[id(params[n])] for n in names}
    del opt, by_id
    with torch.no_grad():
        ev = [x.item() for x in mk.forward(gpt, text, codes, cond, train=False)]
    mk.write_bin(inp, text, codes, cond, ev, [], names, decay, ({n: params[n].detach().numpy() for n in names},))
    t0 = time.time()
    lt, lm = mk.forward(gpt, text, codes, cond, train=True)
    (mk.TEXT_W * lt + mk.MEL_W * lm).backward()
    coqui_s = time.time() - t0
    train = [lt.item(), lm.item()]
    with open(ref, "wb") as f:
        for n in names:
            f.write(params[n].grad.detach().numpy().astype("<f4").tobytes())
    sizes = [params[n].numel() for n in names]
    del gpt, params, lt, lm
    gc.collect()
    subprocess.run([os.path.join(build, "tests/tools/xtts-gpt-grads"), inp, out], check=True,
                   env=dict(os.environ, OMP_NUM_THREADS=str(threads)))
    with open(out, "rb") as f:
        head = f.read(44)
    assert head[:4] == b"XGPR"
    ours = struct.unpack("<5d", head[4:])
    rel = [abs(a - b) / abs(b) for a, b in zip(ours[:4], ev + train)]
    g_ours = np.memmap(out, dtype="<f4", mode="r", offset=44)
    g_ref = np.memmap(ref, dtype="<f4", mode="r")
    worst, worst_name, off = 0.0, "", 0
    for n, k in zip(names, sizes):
        a, b = g_ours[off:off + k], g_ref[off:off + k]
        mx = float(np.abs(b).max())
        e = float(np.abs(a.astype(np.float64) - b).max()) / (mx if mx > 0 else 1.0)
        if e > worst:
            worst, worst_name = e, n
        off += k
    print(f"parameters {off}; losses (eval text, eval mel, train text, train mel): Coqui "
          + " ".join(f"{x:.7g}" for x in ev + train) + ", ours " + " ".join(f"{x:.7g}" for x in ours[:4]))
    print("relative loss differences " + " ".join(f"{x:.2g}" for x in rel)
          + f"; worst gradient difference {worst:.2g} of its tensor's largest ({worst_name})")
    print(f"forward+backward on {threads} threads: Coqui {coqui_s:.2f} s, ours {ours[4]:.2f} s")
    for p in (inp, ref, out):
        os.remove(p)
    os.rmdir(tmp)
    return 0 if max(rel) <= 1e-5 and worst <= 1e-3 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "build"))
