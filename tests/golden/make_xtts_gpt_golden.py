#!/usr/bin/python3
"""Write tests/golden/xtts_gpt/tiny.bin: Coqui's own XTTS GPT (TTS/tts/layers/xtts/gpt.py with
latent_encoder.py's ConditioningEncoder and perceiver_encoder.py's PerceiverResampler, coqui-ai/TTS
dbf1a08a) run at a tiny size on a fixed batch, for tests/test_xtts_gpt.c.

What it runs:
  - GPT(...) built as Xtts.init_models builds it (perceiver resampler on, XTTS-v2's options), tiny:
    2 layers, 16 channels, 2 heads, 24 text tokens, 40 audio tokens;
  - Coqui's initialization (torch.manual_seed), then these changes, so that every backward path is
    exercised: the conditioning encoder's proj_out (zero_module in Coqui) gets N(0, 0.02) weights and
    biases, and every GroupNorm/LayerNorm/RMSNorm weight and bias is moved off 1 and 0 by N(0, 0.1);
    the weights are then rounded to float32 (the C model's precision);
  - GroupNorm32's cast to float32 (there for float16 training) left out, the norm being nn.GroupNorm's;
  - dropout off (every Dropout's p set to 0: a run with dropout cannot be repeated elsewhere), the
    module in training mode, everything in float64 (the oracle's own rounding out of the way);
  - GPT.forward(text_inputs, text_lengths, audio_codes, wav_lengths, cond_mels, cond_idxs) as
    GPTTrainer.train_step calls it: training losses with the masking-gt-prompt approach (cond_idxs,
    of which Coqui's forward masks the last row's targets only), and once with cond_idxs None (the
    evaluation step, GPTTrainer.eval_step); total loss = 0.01 text + 1.0 mel (GPTArgs' weights);
  - every parameter's gradient of that total at the initial weights;
  - three AdamW steps on the same batch with the optimizer GPTTrainer.get_optimizer makes
    (optimizer_wd_only_on_weights: no decay on biases, norms and embeddings), betas 0.9/0.96,
    eps 1e-8, weight decay 1e-2, lr LR below (above the recipe's 5e-6 so that the steps are seen),
    no clipping; the losses before each step and the weights after the third.

Layout (little-endian), read by tests/test_xtts_gpt.c:
  b"XGPG", int32 version (1)
  int32 layers dim heads n_text_tokens n_audio_tokens start_text stop_text start_audio stop_audio
        max_text_tokens max_audio_tokens max_prompt_tokens code_stride perceiver
        B text_stride codes_stride n_mels cond_frames n_steps
  float64 lr beta1 beta2 eps weight_decay text_weight mel_weight
  int32 text_lengths[B] wav_lengths[B] cond_idxs[B][2] text[B][text_stride] codes[B][codes_stride]
  float32 cond_mels[B][n_mels][cond_frames]
  float64 eval_text eval_mel, then per step: text mel (n_steps pairs)
  int32 n_tensors, then per tensor: int32 name_len, name (UTF-8, GPT's state-dict key),
        int32 decay (1: weight decay applies), int32 ndim, int32 shape[ndim]
  float32 init (every tensor in order), float32 grad (same), float32 after (same)
Shapes and values are Coqui's own (HF GPT-2 Conv1D weights (in, out), conv weights (out, in, 1)).

Beside it, for the model-folder readers (config.json, vocab.json, model.pth; tests/test_xtts_gpt.c):
  config.json   an XTTS config whose model_args give this tiny GPT, with gpt_start_text_token and
                gpt_stop_text_token null and tokenizer_file "" as XTTS-v2's released config.json has them,
                and the recipe's optimizer fields
  vocab.json    a tokenizer.json whose [START] is 23 and [STOP] 0 over 24 ids, checked here with Coqui's
                VoiceBpeTokenizer (get_number_tokens, token_to_id) as Xtts.init_models reads it
  model.pth     torch.save({"model": {"gpt." + key: initial float32 weights, plus a tensor of another
                part of Xtts}}) as Xtts's model.pth holds GPT
  cond_mel.bin  the style encoder's conditioning mel as GPTTrainer computes it (TorchMelSpectrogram
                with filter_length 2048, hop 256, win 1024, 80 mels, 0-8000 Hz, divided by mel norms) of
                a zero-padded synthetic clip quantized to int16 as the cache stores it:
                int32 n pad_to n_mels frames, float32 norms[n_mels] wav[n] mel[n_mels][frames]
  trainer.pth   a GPTTrainer checkpoint as coqui-ai/Trainer writes one ({"config": dict, "model":
                {"xtts.gpt." + key: ...}, "step", "epoch"}), its tensors in bfloat16

Regenerate (needs ../shared/coqui-env):
  . /tmp/coqui-env/env.sh && /usr/bin/python3 tests/golden/make_xtts_gpt_golden.py tests/golden/xtts_gpt/tiny.bin
"""
import struct
import sys
import types

import numpy as np
import torch
from torch import nn

from TTS.tts.layers.xtts import latent_encoder
from TTS.tts.layers.xtts.gpt import GPT
from TTS.tts.layers.xtts.trainer.gpt_trainer import GPTTrainer

LAYERS, DIM, HEADS = 2, 16, 2
N_TEXT, N_AUDIO = 24, 40
START_TEXT, STOP_TEXT = 23, 0
START_AUDIO, STOP_AUDIO = 38, 39
MAX_TEXT, MAX_AUDIO, MAX_PROMPT = 12, 30, 70
CODE_STRIDE = 1024
B = 3
TEXT_LENGTHS = [7, 4, 6]
WAV_LENGTHS = [20000, 11000, 16384]
COND_IDXS = [[0, 3000], [1000, 5000], [2048, 4096]]
N_MELS, COND_FRAMES = 80, 24
LR, BETAS, EPS, WD = 1e-4, (0.9, 0.96), 1e-8, 1e-2
TEXT_W, MEL_W = 0.01, 1.0
N_STEPS = 3


# GroupNorm32 runs the norm in float32 whatever the input (for float16 training); in this float64
# run it is nn.GroupNorm itself, in float64
latent_encoder.GroupNorm32.forward = nn.GroupNorm.forward


def build_model(dtype=torch.float64):
    torch.manual_seed(48)
    gpt = GPT(layers=LAYERS, model_dim=DIM, start_text_token=START_TEXT, stop_text_token=STOP_TEXT,
              heads=HEADS, max_text_tokens=MAX_TEXT, max_mel_tokens=MAX_AUDIO, max_prompt_tokens=MAX_PROMPT,
              number_text_tokens=N_TEXT, num_audio_tokens=N_AUDIO, start_audio_token=START_AUDIO,
              stop_audio_token=STOP_AUDIO, use_perceiver_resampler=True, code_stride_len=CODE_STRIDE)
    g = torch.Generator().manual_seed(4848)
    with torch.no_grad():
        for name, p in gpt.named_parameters():
            if ".proj_out." in name:
                p.copy_(0.02 * torch.randn(p.shape, generator=g))
        for m in gpt.modules():
            if isinstance(m, (nn.GroupNorm, nn.LayerNorm)):
                m.weight.add_(0.1 * torch.randn(m.weight.shape, generator=g))
                m.bias.add_(0.1 * torch.randn(m.bias.shape, generator=g))
        gpt.conditioning_perceiver.norm.gamma.add_(0.1 * torch.randn(DIM, generator=g))
        for m in gpt.modules():
            if isinstance(m, nn.modules.dropout._DropoutNd):
                m.p = 0.0
    gpt.train()
    return gpt.to(dtype)


def batch():
    """text (zero-padded ids of TEXT_LENGTHS), codes (ceil(max wav / stride) per row), cond mels."""
    rng = np.random.default_rng(20261128)
    L = max(TEXT_LENGTHS)
    text = np.zeros((B, L), dtype=np.int32)  # padded with 0 as XTTSDataset.collate_fn pads
    for b, n in enumerate(TEXT_LENGTHS):
        text[b, :n] = rng.integers(1, N_TEXT - 1, n)
    mc = -(-max(WAV_LENGTHS) // CODE_STRIDE)
    codes = rng.integers(0, START_AUDIO, (B, mc)).astype(np.int32)
    cond = (1.5 * rng.standard_normal((B, N_MELS, COND_FRAMES)) - 2.0).astype(np.float32)
    return text, codes, cond


def forward(gpt, text, codes, cond, train):
    dtype = next(gpt.parameters()).dtype
    loss_text, loss_mel, _ = gpt(
        torch.tensor(text, dtype=torch.long), torch.tensor(TEXT_LENGTHS, dtype=torch.long),
        torch.tensor(codes, dtype=torch.long), torch.tensor(WAV_LENGTHS, dtype=torch.long),
        cond_mels=torch.tensor(cond, dtype=dtype).unsqueeze(1),
        cond_idxs=torch.tensor(COND_IDXS, dtype=torch.long) if train else None, cond_lens=None)
    return loss_text, loss_mel


def optimizer(gpt):
    cfg = types.SimpleNamespace(optimizer_wd_only_on_weights=True, optimizer="AdamW", lr=LR,
                                optimizer_params={"betas": list(BETAS), "eps": EPS, "weight_decay": WD})
    return GPTTrainer.get_optimizer(types.SimpleNamespace(xtts=types.SimpleNamespace(gpt=gpt), config=cfg))


def write_bin(path, text, codes, cond, eval_losses, step_losses, names, decay, tables):
    """The golden file (layout above): version 1 with the three tables (initial weights,
    gradients, weights after the steps), version 2 with the initial weights only (inputs for
    check_xtts_gpt_full.py)."""
    with open(path, "wb") as f:
        f.write(b"XGPG" + struct.pack("<i", 1 if len(tables) == 3 else 2))
        f.write(struct.pack("<20i", LAYERS, DIM, HEADS, N_TEXT, N_AUDIO, START_TEXT, STOP_TEXT, START_AUDIO,
                            STOP_AUDIO, MAX_TEXT, MAX_AUDIO, MAX_PROMPT, CODE_STRIDE, 1, B, text.shape[1],
                            codes.shape[1], N_MELS, cond.shape[2], N_STEPS))
        f.write(struct.pack("<7d", LR, BETAS[0], BETAS[1], EPS, WD, TEXT_W, MEL_W))
        f.write(np.array(TEXT_LENGTHS, "<i4").tobytes() + np.array(WAV_LENGTHS, "<i4").tobytes())
        f.write(np.array(COND_IDXS, "<i4").tobytes() + text.astype("<i4").tobytes() + codes.astype("<i4").tobytes())
        f.write(cond.astype("<f4").tobytes())
        f.write(struct.pack("<2d", *[float(x) for x in eval_losses]))
        f.write(struct.pack(f"<{2 * N_STEPS}d", *(list(step_losses) + [0.0] * (2 * N_STEPS - len(step_losses)))))
        f.write(struct.pack("<i", len(names)))
        for n in names:
            shape = tables[0][n].shape
            f.write(struct.pack("<i", len(n)) + n.encode() + struct.pack("<2i", int(decay[n]), len(shape)))
            f.write(struct.pack(f"<{len(shape)}i", *shape))
        for table in tables:
            for n in names:
                f.write(np.ascontiguousarray(table[n], dtype="<f4").tobytes())


def main(out_path):
    gpt = build_model()
    text, codes, cond = batch()
    names = [n for n, _ in gpt.named_parameters()]
    params = dict(gpt.named_parameters())
    with torch.no_grad():
        for p in params.values():
            p.copy_(p.float().double())
    init = {n: params[n].detach().float().numpy().copy() for n in names}

    with torch.no_grad():
        eval_losses = forward(gpt, text, codes, cond, train=False)
    opt = optimizer(gpt)
    decay = {}
    for group in opt.param_groups:
        for p in group["params"]:
            decay[id(p)] = group["weight_decay"] > 0
    step_losses, grads = [], None
    for step in range(N_STEPS):
        opt.zero_grad()
        lt, lm = forward(gpt, text, codes, cond, train=True)
        (TEXT_W * lt + MEL_W * lm).backward()
        step_losses += [lt.item(), lm.item()]
        if step == 0:
            grads = {n: params[n].grad.detach().float().numpy().copy() for n in names}
        opt.step()
    after = {n: params[n].detach().float().numpy().copy() for n in names}

    write_bin(out_path, text, codes, cond, eval_losses, step_losses, names,
              {n: decay[id(params[n])] for n in names}, (init, grads, after))
    import os
    write_model_folder(os.path.dirname(os.path.abspath(out_path)), init)
    write_cond_mel(os.path.join(os.path.dirname(os.path.abspath(out_path)), "cond_mel.bin"))
    total = sum(init[n].size for n in names)
    print(f"{out_path}: {len(names)} tensors, {total} parameters; eval text {eval_losses[0].item():.9g} "
          f"mel {eval_losses[1].item():.9g}; train steps " + " ".join(f"{x:.9g}" for x in step_losses))


def write_model_folder(folder, init):
    """config.json, vocab.json, model.pth and trainer.pth of the tiny model (see the docstring)."""
    import json
    import os
    from TTS.tts.layers.xtts.tokenizer import VoiceBpeTokenizer
    args = {"gpt_layers": LAYERS, "gpt_n_model_channels": DIM, "gpt_n_heads": HEADS,
            "gpt_number_text_tokens": 6681, "gpt_start_text_token": None, "gpt_stop_text_token": None,
            "gpt_num_audio_tokens": N_AUDIO, "gpt_start_audio_token": START_AUDIO, "gpt_stop_audio_token": STOP_AUDIO,
            "gpt_max_text_tokens": MAX_TEXT, "gpt_max_audio_tokens": MAX_AUDIO, "gpt_max_prompt_tokens": MAX_PROMPT,
            "gpt_code_stride_len": CODE_STRIDE, "gpt_use_masking_gt_prompt_approach": True,
            "gpt_use_perceiver_resampler": True, "tokenizer_file": "", "kv_cache": True}
    config = {"model": "xtts", "model_args": args, "lr": LR, "optimizer": "AdamW",
              "optimizer_wd_only_on_weights": True,
              "optimizer_params": {"betas": list(BETAS), "eps": EPS, "weight_decay": WD},
              "lr_scheduler": "MultiStepLR", "lr_scheduler_params": {"milestones": [900000, 2700000, 5400000],
                                                                     "gamma": 0.5, "last_epoch": -1}}
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    vocab = {"[STOP]": STOP_TEXT, "[UNK]": 1, "[SPACE]": 2, "[START]": START_TEXT}
    for i, ch in enumerate("abcdefghijklmnopqrs"):
        vocab[ch] = 3 + i
    added = [{"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False,
              "special": True} for t, i in sorted(vocab.items(), key=lambda kv: kv[1]) if t.startswith("[")]
    tok = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": added, "normalizer": None,
           "pre_tokenizer": {"type": "Whitespace"}, "post_processor": None, "decoder": None,
           "model": {"type": "BPE", "dropout": None, "unk_token": "[UNK]", "continuing_subword_prefix": None,
                     "end_of_word_suffix": None, "fuse_unk": False, "vocab": vocab, "merges": []}}
    vpath = os.path.join(folder, "vocab.json")
    with open(vpath, "w") as f:
        json.dump(tok, f, indent=1)
    t = VoiceBpeTokenizer(vpath)
    got = (t.get_number_tokens(), t.tokenizer.token_to_id("[START]"), t.tokenizer.token_to_id("[STOP]"))
    assert got == (N_TEXT, START_TEXT, STOP_TEXT), got
    state = {"gpt." + n: torch.tensor(v) for n, v in init.items()}
    state["hifigan_decoder.waveform_decoder.conv_post.bias"] = torch.zeros(1)
    torch.save({"model": state}, os.path.join(folder, "model.pth"))
    trainer = {"config": config, "model": {"xtts.gpt." + n: torch.tensor(v).bfloat16() for n, v in init.items()},
               "step": 3, "epoch": 0, "date": "November 28, 2026", "model_loss": 3.9}
    torch.save(trainer, os.path.join(folder, "trainer.pth"))


def write_cond_mel(path):
    """cond_mel.bin (see the docstring): Coqui's TorchMelSpectrogram on a padded clip."""
    from TTS.tts.layers.tortoise.arch_utils import TorchMelSpectrogram
    n, pad_to, sr = 20000, 24000, 22050
    t = np.arange(n) / sr
    f0 = 120 + 40 * np.sin(2 * np.pi * 1.3 * t)
    phase = 2 * np.pi * np.cumsum(f0) / sr
    x = sum(np.sin(k * phase) / k for k in range(1, 12)) * (0.5 + 0.5 * np.sin(2 * np.pi * 3 * t)) ** 2
    x = 0.3 * x + 0.01 * np.random.default_rng(7).standard_normal(n)
    wav = (np.round(np.clip(x, -1, 1) * 32767) / 32768).astype(np.float32)
    norms = (0.5 + np.random.default_rng(8).random(80) * 2).astype(np.float32)
    mel_fn = TorchMelSpectrogram(filter_length=2048, hop_length=256, win_length=1024, normalize=False,
                                 sampling_rate=sr, mel_fmin=0, mel_fmax=8000, n_mel_channels=80, mel_norm_file=None)
    mel_fn.mel_norms = torch.tensor(norms)
    padded = np.zeros(pad_to, dtype=np.float32)
    padded[:n] = wav
    with torch.no_grad():
        mel = mel_fn(torch.tensor(padded)[None, None])[0].numpy().astype(np.float32)
    with open(path, "wb") as f:
        f.write(struct.pack("<4i", n, pad_to, 80, mel.shape[1]))
        f.write(norms.astype("<f4").tobytes() + wav.astype("<f4").tobytes() + mel.astype("<f4").tobytes())


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "tests/golden/xtts_gpt/tiny.bin")
