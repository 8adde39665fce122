#!/usr/bin/python3
"""make_torch_pth_golden.py — small model files written by torch.save, for tests/test_torch_pth.c.

Writes, with the PyTorch it runs under (Debian's python3-torch), files in the shapes the
model-file reader meets in Coqui's XTTS-v2 folder, at tiny sizes:

  tests/golden/torch_pth/dvae_tiny.pth   an OrderedDict state dict with every key of Coqui's
                                         DiscreteVAE in XTTS's configuration (positional_dims=1,
                                         num_layers=2, num_resnet_blocks=3, kernel_size=3,
                                         use_transposed_convs=False; TTS/tts/layers/xtts/dvae.py),
                                         channels shrunk (2 mels, hidden 2, codebook 4x3), with
                                         torch's _metadata, int64 buffers included
  tests/golden/torch_pth/mel_stats.pth   a single tensor, torch.save(tensor) as mel_stats.pth is
  tests/golden/torch_pth/fp16.pth        float16 and bfloat16 tensors, one a view at an offset
  tests/golden/torch_pth/nested.pth      {"model": state dict, "step": 7, "config": {...}}, as
                                         trainer checkpoints nest it
  tests/golden/torch_pth/expected.tsv    file, key, stored dtype, shape, every value (%.9g)

Values are small integers over 8 or k/16, exact in float16, bfloat16 and float32. The C test
reads each file and compares every tensor with expected.tsv.

Run:  /usr/bin/python3 tests/golden/make_torch_pth_golden.py
"""
import collections
import os

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "torch_pth")


def dvae_keys(channels, hidden, codebook_dim, num_tokens):
    """The state-dict keys and shapes of Coqui's DiscreteVAE in XTTS's configuration.

    encoder: conv(channels->hidden, k3, s2), conv(hidden->2*hidden, k3, s2), 3 ResBlocks of
    2*hidden (conv k3, conv k3, conv k1 at net.0, net.2, net.4), conv(2*hidden->codebook_dim, k1);
    decoder mirrored (UpsampledConv's conv at .0.conv); codebook (Quantize) buffers; the
    DiscretizationLoss buffers.
    """
    inner = 2 * hidden
    keys = []

    def conv(name, cout, cin, k):
        keys.append((name + ".weight", (cout, cin, k)))
        keys.append((name + ".bias", (cout,)))

    conv("encoder.0.0", hidden, channels, 3)
    conv("encoder.1.0", inner, hidden, 3)
    for b in (2, 3, 4):
        conv(f"encoder.{b}.net.0", inner, inner, 3)
        conv(f"encoder.{b}.net.2", inner, inner, 3)
        conv(f"encoder.{b}.net.4", inner, inner, 1)
    conv("encoder.5", codebook_dim, inner, 1)
    conv("decoder.0", inner, codebook_dim, 1)
    for b in (1, 2, 3):
        conv(f"decoder.{b}.net.0", inner, inner, 3)
        conv(f"decoder.{b}.net.2", inner, inner, 3)
        conv(f"decoder.{b}.net.4", inner, inner, 1)
    conv("decoder.4.0.conv", inner, inner, 3)
    conv("decoder.5.0.conv", hidden, inner, 3)
    conv("decoder.6", channels, hidden, 1)
    keys.append(("codebook.embed", (codebook_dim, num_tokens)))
    keys.append(("codebook.cluster_size", (num_tokens,)))
    keys.append(("codebook.embed_avg", (codebook_dim, num_tokens)))
    return keys


def filled(shape, seed, dtype=torch.float32):
    """A tensor of shape with values ((i * 7 + seed) % 33 - 16) / 8: exact in every float type."""
    n = 1
    for s in shape:
        n *= s
    v = [((i * 7 + seed) % 33 - 16) / 8.0 for i in range(n)]
    return torch.tensor(v, dtype=dtype).reshape(shape)


def dvae_state_dict():
    sd = collections.OrderedDict()
    # DiscretizationLoss buffers come first: discrete_loss is DiscreteVAE's first submodule
    sd["discrete_loss.accumulator_index"] = torch.zeros(1, dtype=torch.long) + 3
    sd["discrete_loss.accumulator_filled"] = torch.zeros(1, dtype=torch.long)
    sd["discrete_loss.accumulator"] = filled((2, 4), 99)
    for k, (name, shape) in enumerate(dvae_keys(2, 2, 3, 4)):
        sd[name] = filled(shape, k)
    sd._metadata = collections.OrderedDict([("", {"version": 1}), ("encoder", {"version": 1})])
    return sd


def write_expected(rows):
    with open(os.path.join(OUT, "expected.tsv"), "w", encoding="utf-8") as f:
        f.write("# file\tkey\tstored dtype\tshape\tvalues — written by make_torch_pth_golden.py\n")
        for file, key, t in rows:
            dtype = str(t.dtype).replace("torch.", "")
            shape = "x".join(str(s) for s in t.shape) or "scalar"
            values = " ".join("%.9g" % float(v) for v in t.detach().float().flatten().tolist())
            f.write(f"{file}\t{key}\t{dtype}\t{shape}\t{values}\n")


def main():
    os.makedirs(OUT, exist_ok=True)
    rows = []
    sd = dvae_state_dict()
    torch.save(sd, os.path.join(OUT, "dvae_tiny.pth"))
    rows += [("dvae_tiny.pth", k, v) for k, v in sd.items()]

    mel_stats = filled((8,), 5) + 4.0
    torch.save(mel_stats, os.path.join(OUT, "mel_stats.pth"))
    rows.append(("mel_stats.pth", "", mel_stats))

    base = filled((10,), 1, torch.float16)
    half = collections.OrderedDict()
    half["half"] = base[:6].reshape(2, 3)
    half["half_view"] = base[6:]  # a view: same storage, offset 6
    half["bf16"] = filled((3, 1), 2, torch.bfloat16)
    half["scalar"] = torch.tensor(2.5)
    torch.save(half, os.path.join(OUT, "fp16.pth"))
    rows += [("fp16.pth", k, v) for k, v in half.items()]

    inner = collections.OrderedDict([("w", filled((2, 2), 3)), ("b", filled((2,), 4))])
    nested = {"model": inner, "step": 7, "lr": 0.5, "config": {"name": "tiny", "dims": [1, 2]}}
    torch.save(nested, os.path.join(OUT, "nested.pth"))
    rows += [("nested.pth", "model." + k, v) for k, v in inner.items()]
    write_expected(rows)
    for name in sorted(os.listdir(OUT)):
        print(f"{name}: {os.path.getsize(os.path.join(OUT, name))} bytes")


if __name__ == "__main__":
    main()
