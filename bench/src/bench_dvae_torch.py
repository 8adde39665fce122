#!/usr/bin/python3
"""bench_dvae_torch.py — the peers of bench_dvae.c in the same run: Coqui's DiscreteVAE
(TTS/tts/layers/xtts/dvae.py from a coqui-ai/TTS checkout, loaded unmodified as
tests/golden/make_dvae_golden.py loads it) at XTTS-v2's sizes running get_codebook_indices in
PyTorch, and the single-precision GEMM rate of numpy's BLAS on the encoder's own products
(each convolution's im2col product, W (out, in*k) x columns (in*k, T), and the codebook's)
and on a square 2048 product.

Usage: bench_dvae_torch.py COQUI_DIR SECONDS_AUDIO CLIP_SECONDS THREADS [REPEATS]
  (COQUI_DIR "-" skips PyTorch.) Output lines "name value": torch_s (best of REPEATS),
  gemm_shapes_gflops, gemm_square_gflops, torch_version, blas.
"""
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "golden"))


def best_of(fn, repeats):
    best = 1e30
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def encoder_shapes(frames):
    """(M, K, N) of every product the encoder and the search compute for one clip."""
    t1 = (frames + 1) // 2
    t2 = (t1 + 1) // 2
    shapes = [(512, 80 * 3, t1), (1024, 512 * 3, t2)]
    for _ in range(3):
        shapes += [(1024, 1024 * 3, t2), (1024, 1024 * 3, t2), (1024, 1024, t2)]
    return shapes + [(512, 1024, t2), (1024, 512, t2)]


def gemm_rates(frames, nclips, repeats):
    rng = np.random.default_rng(1)
    mats = [(rng.standard_normal((m, k), dtype=np.float32), rng.standard_normal((k, n), dtype=np.float32))
            for m, k, n in encoder_shapes(frames)]
    flops = nclips * sum(2.0 * a.shape[0] * a.shape[1] * b.shape[1] for a, b in mats)

    def shapes():
        for _ in range(nclips):
            for a, b in mats:
                np.matmul(a, b)
    s = best_of(shapes, repeats)
    a = rng.standard_normal((2048, 2048), dtype=np.float32)
    sq = best_of(lambda: np.matmul(a, a), repeats + 2)
    return flops / s * 1e-9, 2.0 * 2048 ** 3 / sq * 1e-9


def torch_rate(coqui, frames, nclips, threads, repeats):
    import torch
    # Coqui's DiscreteVAE is loaded the way the golden files' script loads it (tests/golden)
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "golden"))
    from make_dvae_golden import load_dvae_module
    torch.set_num_threads(threads)
    mod = load_dvae_module(coqui)
    torch.manual_seed(38)
    dvae = mod.DiscreteVAE(channels=80, normalization=None, positional_dims=1, num_tokens=1024,
                           codebook_dim=512, hidden_dim=512, num_resnet_blocks=3, kernel_size=3,
                           num_layers=2, use_transposed_convs=False).eval()
    mel = torch.randn(1, 80, frames) * 2

    def run():
        with torch.no_grad():
            for _ in range(nclips):
                dvae.get_codebook_indices(mel)
    run()  # warm-up
    return best_of(run, repeats), torch.__version__


def main():
    coqui, total, clip, threads = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
    repeats = int(sys.argv[5]) if len(sys.argv) > 5 else 3
    frames = int(clip * 22050 / 256)
    nclips = max(1, int(total / clip + 0.5))
    if coqui != "-":
        s, version = torch_rate(coqui, frames, nclips, threads, repeats)
        print(f"torch_s {s:.4f}\ntorch_version {version}")
    shapes, square = gemm_rates(frames, nclips, repeats)
    print(f"gemm_shapes_gflops {shapes:.3f}\ngemm_square_gflops {square:.3f}")
    try:
        cfg = np.show_config("dicts")["Build Dependencies"]["blas"]["name"]  # numpy >= 1.25
    except Exception:
        cfg = "numpy's BLAS"
    print(f"blas {cfg}")


if __name__ == "__main__":
    main()
