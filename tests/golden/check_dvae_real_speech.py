#!/usr/bin/python3
"""check_dvae_real_speech.py — xtts-cache-codes against Coqui's DiscreteVAE and
TorchMelSpectrogram on real recorded speech, each clip alone.

Not a golden file maker: the audio and the ~200 MB of weights stay in a scratch folder; the
result is the summary this prints (docs/model-files.md quotes it).

1. The corpus: scripts/dev/real-speech-corpus.py's clips (LJSpeech from coqui-ai/TTS, speechbrain's
   samples, LibriSpeech clean and other from resemble-ai/Resemblyzer), all of LJSpeech and
   speechbrain and then LibriSpeech clips alternately until --minutes of audio are taken.
2. The cache: xtts-tokenize --format tsv, xtts-melcache --audio int16 (the 22,050 Hz waveform
   stored), xtts-cache-codes with a DVAE of XTTS-v2's configuration (Coqui's DiscreteVAE built
   with gpt_trainer.py's arguments: 80 mels, hidden 512, codebook 512 x 1024) and random
   weights, the whole state dict saved by torch.save as dvae.pth is saved, 80 random positive
   norms as mel_stats.pth. The codebook (--codebook): "speech" (default), 1024 of its own
   latents of the corpus plus 5 % of their spread in noise, so that most latents have close
   competitors (the hard case: many near-ties); "spread", as check_dvae_full.py, Gaussian
   around the latents' mean with their spread per dimension.
3. Coqui: TTS/tts/layers/tortoise/arch_utils.py's TorchMelSpectrogram (the `xtts` preset: n_fft
   1024, hop 256, win 1024, 80 mels, 0-8000 Hz, with mel_norm_file=mel_stats.pth) and
   TTS/tts/layers/xtts/dvae.py's DiscreteVAE.get_codebook_indices, both loaded unmodified from
   the checkout, on the stored waveform (int16 / 32768, float32) of each record alone.
   Stubbed: einops, transformers.LogitsWarper and TTS.tts.layers.tortoise.xtransformers (never
   reached by these two classes), fsspec (its `open` is the builtin open: it only opens the norms
   file for torch.load) and, where torchaudio does not import, torchaudio.transforms.MelSpectrogram
   (torch.stft of the periodic Hann window, centre, reflect padding, |X|^2, times torchaudio's
   melscale_fbanks with norm="slaney", mel_scale="htk", computed as torchaudio computes them).
4. Compared: codes equal n/N; every differing code is a near-tie when its best and second-best
   distances (float64, from Coqui's latent) are within 1e-6 of each other relative to
   |x|^2 + |e|^2 (e the farther of the two entries). The counter-check: Coqui's codes of the
   cache's stored fp16 mel (divided by the norms) instead of the float32 mel of the waveform.
   And the encoder alone: TorchMelSpectrogram's float32 mel through tests/tools/dvae-codes,
   which separates what the C mel contributes to the differences from what the encoder does.
   With --float64 (and --reuse), only Coqui's float32 codes and ours against Coqui's DiscreteVAE
   run in float64: the share of float32 rounding itself.

Exit 0 when every differing code of the float32 path is a near-tie and >= 99.9 % are equal and
the fp16 path does not pass the same test; 1 otherwise.

Run:  /usr/bin/python3 tests/golden/check_dvae_real_speech.py --coqui GIT_DIR \\
        --speechbrain GIT_DIR --resemblyzer GIT_DIR [--minutes 22] [--threads 2]
        [--codebook speech|spread] [--work DIR [--reuse]]
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
import types

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "python"))
from make_dvae_golden import load_dvae_module  # noqa: E402


def coqui_source(coqui: str, path: str) -> str:
    """path of the coqui-ai/TTS checkout (a work tree or a git directory), at HEAD."""
    if os.path.isfile(os.path.join(coqui, path)):
        with open(os.path.join(coqui, path), encoding="utf-8") as f:
            return f.read()
    for gd in (coqui, os.path.join(coqui, ".git")):
        r = subprocess.run(["git", "--git-dir", gd, "show", "HEAD:" + path], capture_output=True, text=True)
        if r.returncode == 0:
            return r.stdout
    raise FileNotFoundError(f"{coqui}: no {path}")


def melscale_fbanks(n_freqs, f_min, f_max, n_mels, sample_rate):
    """torchaudio.functional.melscale_fbanks(norm="slaney", mel_scale="htk"), step by step."""
    import math
    all_freqs = torch.linspace(0, sample_rate // 2, n_freqs)
    m_min = 2595.0 * math.log10(1.0 + f_min / 700.0)
    m_max = 2595.0 * math.log10(1.0 + f_max / 700.0)
    m_pts = torch.linspace(m_min, m_max, n_mels + 2)
    f_pts = 700.0 * (10.0 ** (m_pts / 2595.0) - 1.0)
    f_diff = f_pts[1:] - f_pts[:-1]
    slopes = f_pts.unsqueeze(0) - all_freqs.unsqueeze(1)
    down = (-1.0 * slopes[:, :-2]) / f_diff[:-1]
    up = slopes[:, 2:] / f_diff[1:]
    fb = torch.max(torch.zeros(1), torch.min(down, up))
    enorm = 2.0 / (f_pts[2:n_mels + 2] - f_pts[:n_mels])
    return fb * enorm.unsqueeze(0)


class MelSpectrogramStub(torch.nn.Module):
    """torchaudio.transforms.MelSpectrogram as TorchMelSpectrogram builds it (power 2, not
    normalized, centre with reflect padding, periodic Hann window of win_length)."""

    def __init__(self, n_fft, hop_length, win_length, power, normalized, sample_rate, f_min, f_max, n_mels, norm):
        super().__init__()
        assert power == 2 and not normalized and norm == "slaney"
        self.n_fft, self.hop, self.win = n_fft, hop_length, win_length
        self.register_buffer("window", torch.hann_window(win_length))
        self.register_buffer("fb", melscale_fbanks(n_fft // 2 + 1, float(f_min), float(f_max), n_mels, sample_rate))

    def forward(self, x):
        spec = torch.stft(x, self.n_fft, self.hop, self.win, self.window, center=True, pad_mode="reflect",
                          normalized=False, onesided=True, return_complex=True).abs().pow(2.0)
        return torch.matmul(spec.transpose(-1, -2), self.fb).transpose(-1, -2)


def load_mel_module(coqui: str):
    """arch_utils.py, unmodified, with the stubs the docstring names; returns (module, how)."""
    stubs = {}
    try:
        import torchaudio  # noqa: F401
        how = "torchaudio's MelSpectrogram"
    except ImportError:
        ta = types.ModuleType("torchaudio")
        ta.transforms = types.SimpleNamespace(MelSpectrogram=MelSpectrogramStub)
        stubs["torchaudio"] = ta
        how = "torchaudio absent: MelSpectrogram stubbed with torch.stft and torchaudio's slaney/htk filterbank"
    try:
        import fsspec  # noqa: F401
    except ImportError:
        stubs["fsspec"] = types.SimpleNamespace(open=lambda p, *a, **k: open(p, "rb"))
    tr = types.ModuleType("transformers")
    tr.LogitsWarper = object
    stubs["transformers"] = tr
    for name in ("TTS", "TTS.tts", "TTS.tts.layers", "TTS.tts.layers.tortoise"):
        stubs[name] = types.ModuleType(name)
    xt = types.ModuleType("TTS.tts.layers.tortoise.xtransformers")
    xt.ContinuousTransformerWrapper = xt.RelativePositionBias = object
    stubs["TTS.tts.layers.tortoise.xtransformers"] = xt
    saved = {k: sys.modules.get(k) for k in stubs}
    sys.modules.update(stubs)
    try:
        module = types.ModuleType("coqui_arch_utils")
        path = "TTS/tts/layers/tortoise/arch_utils.py"
        exec(compile(coqui_source(coqui, path), path, "exec"), module.__dict__)
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v
    return module, how


def make_corpus(args, work):
    """Clips of scripts/dev/real-speech-corpus.py up to args.minutes; returns the tokenizer's input TSV."""
    rs = os.path.join(work, "rs")
    subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "dev", "real-speech-corpus.py"), rs,
                    "--coqui", args.coqui, "--speechbrain", args.speechbrain, "--resemblyzer", args.resemblyzer],
                   check=True, stdout=subprocess.DEVNULL)
    groups = {}
    for corpus in ("ljspeech", "speechbrain", "librispeech", "librispeech-other"):
        with open(os.path.join(rs, corpus, "metadata.tsv"), encoding="utf-8") as f:
            rows = [line.rstrip("\n").split("\t") for line in f][1:]
        groups[corpus] = [(corpus, r[0], os.path.join(rs, corpus, r[1]), r[3]) for r in rows]
    order = groups["ljspeech"] + groups["speechbrain"]
    ls, lo = groups["librispeech"], groups["librispeech-other"]
    for k in range(max(len(ls), len(lo))):
        order += ls[k:k + 1] + lo[k:k + 1]
    chosen, seconds = [], 0.0
    for corpus, cid, path, spk in order:
        if seconds >= args.minutes * 60:
            break
        d = float(subprocess.run(["soxi", "-D", path], capture_output=True, text=True, check=True).stdout)
        if d > 40:        # over --max-frames
            continue
        chosen.append((f"{corpus}-{cid}", path, spk))
        seconds += d
    tsv = os.path.join(work, "corpus.tsv")
    with open(tsv, "w", encoding="utf-8") as f:
        f.write("id\taudio\ttext\tspeaker\n")
        for cid, path, spk in chosen:
            f.write(f"{cid}\t{path}\tA sentence of read speech.\t{spk}\n")
    return tsv, chosen, seconds


def make_dvae(coqui, mels, norms, work, codebook):
    """Coqui's DiscreteVAE at XTTS-v2's sizes, random weights, codebook over its latents."""
    mod = load_dvae_module(coqui)
    torch.manual_seed(2038)
    dvae = mod.DiscreteVAE(channels=80, normalization=None, positional_dims=1, num_tokens=1024,
                           codebook_dim=512, hidden_dim=512, num_resnet_blocks=3, kernel_size=3,
                           num_layers=2, use_transposed_convs=False).eval()
    g = torch.Generator().manual_seed(5)
    with torch.no_grad():
        lat = torch.cat([dvae.encoder((m / norms.unsqueeze(1)).unsqueeze(0))[0] for m in mels], 1)
        if codebook == "speech":   # entries near latents of speech: many close competitors
            emb = lat[:, torch.randint(0, lat.shape[1], (1024,), generator=g)]
            emb = emb + 0.05 * lat.std(1, keepdim=True) * torch.randn(512, 1024, generator=g)
        else:                      # "spread", as check_dvae_full.py: around the latents' mean and spread
            emb = lat.mean(1, keepdim=True) + lat.std(1, keepdim=True) * torch.randn(512, 1024, generator=g)
        dvae.codebook.embed.copy_(emb)
        dvae.codebook.embed_avg.copy_(emb)
    torch.save(dvae.state_dict(), os.path.join(work, "dvae.pth"))
    torch.save(norms.clone(), os.path.join(work, "mel_stats.pth"))
    return dvae


def tool(name):
    return os.path.join(ROOT, "build", "bin", name)


def build_cache(args, work, tsv):
    tokens = os.path.join(work, "tokens.tsv")
    with open(tokens, "w") as out:
        r = subprocess.run([tool("xtts-tokenize"), "--format", "tsv", "--lang", "en", tsv], stdout=out,
                           stderr=subprocess.PIPE, text=True)
    if r.returncode not in (0, 3):
        raise SystemExit("xtts-tokenize: " + r.stderr)
    cache = os.path.join(work, "cache")
    r = subprocess.run([tool("xtts-melcache"), "--out", cache, "--audio", "int16", "--max-frames", "3500",
                        "-j", str(args.threads), "-q", tokens], capture_output=True, text=True)
    if r.returncode not in (0, 3):
        raise SystemExit("xtts-melcache: " + r.stderr)
    return cache


def margins_of(dvae, x):
    """Coqui's latent of x, its codes, and each code's best/second-best relative gap."""
    flat = dvae.encoder(x)[0].t().double()
    e = dvae.codebook.embed.double()
    d = flat.pow(2).sum(1, keepdim=True) - 2 * flat @ e + e.pow(2).sum(0, keepdim=True)
    top2 = d.topk(2, dim=1, largest=False)
    far = e.pow(2).sum(0)[top2.indices].max(1).values
    return ((top2.values[:, 1] - top2.values[:, 0]) / (flat.pow(2).sum(1) + far)).tolist()


def tally(want, got, margins, tally_d, label):
    if len(want) != len(got):
        tally_d["bad"].append(f"{label}: {len(got)} codes, Coqui {len(want)}")
        return
    for j, (a, b) in enumerate(zip(want, got)):
        tally_d["n"] += 1
        if a == b:
            tally_d["eq"] += 1
        elif margins[j] < 1e-6:
            tally_d["ties"] += 1
            tally_d["tie_gaps"].append(margins[j])
        else:
            tally_d["bad"].append(f"{label} code {j}: {b}, Coqui {a}, relative gap {margins[j]:.2e}")


def compare(args, work, cache_dir, dvae, mel_mod):
    from xtts_prep import AudioCodes, XttsCache
    cache, codes = XttsCache(cache_dir), AudioCodes(cache_dir)
    tmel = mel_mod.TorchMelSpectrogram(mel_norm_file=os.path.join(work, "mel_stats.pth"))
    norms = tmel.mel_norms
    f32 = {"n": 0, "eq": 0, "ties": 0, "tie_gaps": [], "bad": []}
    f16 = {"n": 0, "eq": 0, "ties": 0, "tie_gaps": [], "bad": []}
    torch_s, mel_err = 0.0, 0.0
    alone = {"n": 0, "eq": 0, "ties": 0, "tie_gaps": [], "bad": []}
    kept, lines = [], []
    for i in range(len(cache)):
        rec = cache.get(i)
        wav = torch.from_numpy(cache.waveform(i).astype(np.float32) / 32768.0)
        ours = codes.get(cache.content_key(i)).astype(np.int64).tolist()
        with torch.no_grad():
            t0 = time.time()
            x = tmel(wav.unsqueeze(0))
            want = dvae.get_codebook_indices(x)[0].tolist()
            torch_s += time.time() - t0
            margins = margins_of(dvae, x)
            tally(want, ours, margins, f32, rec["id"])
            stored = torch.from_numpy(rec["mel"])[:, :x.shape[2]]
            mel_err = max(mel_err, float((stored - x[0] * norms.unsqueeze(1)).abs().max()))
            x16 = (stored / norms.unsqueeze(1)).unsqueeze(0)
            c16 = dvae.get_codebook_indices(x16)[0].tolist()
            tally(want, c16, margins, f16, rec["id"] + " (fp16 mel)")
            path = os.path.join(work, f"mel{i}.f32")
            (x[0] * norms.unsqueeze(1)).numpy().astype("<f4").tofile(path)
            lines.append(f"c{i}\t{x.shape[2]}\t{path}\n")
            kept.append((want, margins, rec["id"]))
    with open(os.path.join(work, "mels.tsv"), "w") as f:
        f.writelines(lines)
    run = subprocess.run([os.path.join(ROOT, "build", "tests", "tools", "dvae-codes"), os.path.join(work, "dvae.pth"),
                          os.path.join(work, "mel_stats.pth"), os.path.join(work, "mels.tsv")],
                         capture_output=True, text=True, check=True, env=dict(os.environ, OMP_NUM_THREADS=str(args.threads)))
    for line, (want, margins, rid) in zip(run.stdout.splitlines(), kept):
        tally(want, [int(c) for c in line.split("\t")[1].split()], margins, alone, rid + " (encoder alone)")
    for i in range(len(cache)):
        os.remove(os.path.join(work, f"mel{i}.f32"))
    return len(cache), f32, f16, alone, torch_s, mel_err


def against_float64(args, work, cache_dir, dvae, mel_mod):
    """Coqui's float32 codes and ours, each against Coqui's DiscreteVAE run in float64 (the same
    weights) on TorchMelSpectrogram's mel: how far float32 rounding alone moves codes. Near-ties
    here are measured on the float64 latent."""
    import copy
    from xtts_prep import AudioCodes, XttsCache
    cache, codes = XttsCache(cache_dir), AudioCodes(cache_dir)
    tmel = mel_mod.TorchMelSpectrogram(mel_norm_file=os.path.join(work, "mel_stats.pth"))
    dvae64 = copy.deepcopy(dvae).double()
    coqui32 = {"n": 0, "eq": 0, "ties": 0, "tie_gaps": [], "bad": []}
    ours32 = {"n": 0, "eq": 0, "ties": 0, "tie_gaps": [], "bad": []}
    for i in range(len(cache)):
        wav = torch.from_numpy(cache.waveform(i).astype(np.float32) / 32768.0)
        with torch.no_grad():
            x = tmel(wav.unsqueeze(0))
            x64 = x.double()
            truth = dvae64.get_codebook_indices(x64)[0].tolist()
            margins = margins_of(dvae64, x64)
            tally(truth, dvae.get_codebook_indices(x)[0].tolist(), margins, coqui32, f"{i} (Coqui float32)")
        tally(truth, codes.get(cache.content_key(i)).astype(np.int64).tolist(), margins, ours32, f"{i} (ours)")
    for name, t in (("Coqui's DVAE in float32", coqui32), ("ours (xtts-cache-codes)", ours32)):
        print(f"{name} against Coqui's in float64: codes equal {t['eq']}/{t['n']}; {t['ties']} differ as near-ties; "
              f"{len(t['bad'])} differ otherwise")
        for line in t["bad"][:5]:
            print("  " + line)


def passes(t):
    return not t["bad"] and t["n"] > 0 and t["eq"] >= 0.999 * t["n"]


def report(args, clips, seconds, count, f32, f16, torch_s, mel_err, how, codes_s):
    print(f"{count} clips of real speech ({len(clips)} taken), {seconds / 60:.1f} min; Coqui's mel: {how}")
    print(f"float32 mel of the stored waveform (xtts-cache-codes): codes equal {f32['eq']}/{f32['n']} "
          f"({100.0 * f32['eq'] / max(f32['n'], 1):.3f} %); {f32['ties']} differ as near-ties"
          + (f" (relative gaps {', '.join(f'{g:.1e}' for g in f32['tie_gaps'][:8])})" if f32["ties"] else "")
          + f"; {len(f32['bad'])} differ otherwise: {'PASS' if passes(f32) else 'FAIL'}")
    print(f"the cache's fp16 mel through Coqui's DVAE instead: codes equal {f16['eq']}/{f16['n']} "
          f"({100.0 * f16['eq'] / max(f16['n'], 1):.3f} %); {f16['ties']} differ as near-ties; "
          f"{len(f16['bad'])} differ otherwise: {'passes (unexpected)' if passes(f16) else 'does not pass'}")
    print(f"largest |stored fp16 log-mel - TorchMelSpectrogram's|: {mel_err:.2e}")
    print(f"Coqui mel + DVAE (torch {torch.__version__}, {args.threads} threads): {torch_s:.1f} s; "
          f"xtts-cache-codes -j {args.threads}: {codes_s:.1f} s")
    for line in f32["bad"][:10]:
        print("  " + line)


def prepare(args, work, mel_mod):
    """The corpus, the cache, the model files and xtts-cache-codes' run."""
    tsv, clips, seconds = make_corpus(args, work)
    with open(os.path.join(work, "seconds.txt"), "w") as f:
        f.write(f"{seconds}\n")
    cache_dir = build_cache(args, work, tsv)
    from xtts_prep import XttsCache
    c = XttsCache(cache_dir)
    g = torch.Generator().manual_seed(9)
    norms = torch.rand(80, generator=g) * 2 + 0.5
    plain = mel_mod.TorchMelSpectrogram(mel_norm_file=None)
    with torch.no_grad():
        mels = [plain(torch.from_numpy(c.waveform(i).astype(np.float32) / 32768.0).unsqueeze(0))[0]
                for i in range(0, len(c), max(1, len(c) // 6))]
    dvae = make_dvae(args.coqui, mels, norms, work, args.codebook)
    t0 = time.time()
    subprocess.run([tool("xtts-cache-codes"), cache_dir, "--dvae", os.path.join(work, "dvae.pth"),
                    "--mel-norms", os.path.join(work, "mel_stats.pth"), "-j", str(args.threads), "-q"], check=True)
    return cache_dir, clips, seconds, dvae, time.time() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--coqui", required=True)
    ap.add_argument("--speechbrain", required=True)
    ap.add_argument("--resemblyzer", required=True)
    ap.add_argument("--minutes", type=float, default=22.0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--work", help="scratch folder (default: a temporary one, removed)")
    ap.add_argument("--codebook", choices=("speech", "spread"), default="speech",
                    help="entries drawn near latents of the corpus (default), or spread around their mean")
    ap.add_argument("--float64", action="store_true",
                    help="only compare Coqui's float32 codes and ours with Coqui's DVAE run in float64")
    ap.add_argument("--reuse", action="store_true", help="compare again on the cache and codes of --work")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    work = args.work or tempfile.mkdtemp(prefix="dvae-real-")
    os.makedirs(work, exist_ok=True)
    try:
        mel_mod, how = load_mel_module(args.coqui)
        if args.reuse:   # the corpus, cache, model files and codes of an earlier run in --work
            cache_dir = os.path.join(work, "cache")
            with open(os.path.join(work, "corpus.tsv"), encoding="utf-8") as f:
                clips = f.read().splitlines()[1:]
            seconds = float(open(os.path.join(work, "seconds.txt")).read())
            dvae = load_dvae_module(args.coqui).DiscreteVAE(
                channels=80, normalization=None, positional_dims=1, num_tokens=1024, codebook_dim=512, hidden_dim=512,
                num_resnet_blocks=3, kernel_size=3, num_layers=2, use_transposed_convs=False).eval()
            dvae.load_state_dict(torch.load(os.path.join(work, "dvae.pth")))
            codes_s = float("nan")
        else:
            cache_dir, clips, seconds, dvae, codes_s = prepare(args, work, mel_mod)
        if args.float64:
            against_float64(args, work, cache_dir, dvae, mel_mod)
            return 0
        count, f32, f16, alone, torch_s, mel_err = compare(args, work, cache_dir, dvae, mel_mod)
        report(args, clips, seconds, count, f32, f16, torch_s, mel_err, how, codes_s)
        print(f"the encoder alone (TorchMelSpectrogram's float32 mel through tests/tools/dvae-codes): codes equal "
              f"{alone['eq']}/{alone['n']}; {alone['ties']} differ as near-ties; {len(alone['bad'])} differ otherwise")
        for line in alone["bad"][:10]:
            print("  " + line)
        return 0 if passes(f32) and not passes(f16) else 1
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
