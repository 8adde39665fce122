"""Checks of XttsGptDataset's audio codes and conditioning mels, run by tests/e2e/codes_cache.sh.

argv: CACHE (a demo cache built with --audio int16 holding one codes directory),
DVAE, MEL_NORMS (the files the codes were computed with).

- style_mel: the xtts preset's golden mels (tests/golden/mel, from make_mel_golden.py's
  reference, checked there against torchaudio) within 1e-4 at n_fft 1024; at the style
  encoder's n_fft 2048 / win 1024, equal within 1e-4 to torchaudio's MelSpectrogram as
  Coqui's TorchMelSpectrogram runs it (when torchaudio imports), and to torch.stft framing
  with the same filters (when torch imports);
- items: audio_codes are the codes directory's under the record's content key, as many as
  the waveform gives; cond_mels is the style mel of the item's own zero-padded conditioning
  slice, divided by the norms the codes directory holds (equal to the files'); the random
  draws are those of the dataset without codes under the same seed;
- collate: audio_codes int64 [B, codes of the longest wav] zero-padded, cond_mels
  [B, 1, 80, T]; the dataset pickles and works in DataLoader workers;
- xtts_prep.coqui over a stand-in GPTTrainer: the DVAE dropped, batches holding exactly the
  keys train_step reads, nothing computed on the device.
"""

import os
import pickle
import random
import sys
import unittest

import numpy as np

from xtts_prep import AudioCodes, CacheError, XttsCache, XttsGptDataset, codes_count, style_mel
from xtts_prep.style_mel import mel_filters_htk_slaney

CACHE, DVAE, NORMS = sys.argv[1:4]
HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(HERE, "..", "..", "tests", "golden")

try:
    import torch
except ImportError:
    torch = None
try:
    import torchaudio
except ImportError:
    torchaudio = None


def speech_like(n, seed=3):
    """A clip with silence, tones and noise, zero-padded at the end as a conditioning slice is."""
    rng = np.random.default_rng(seed)
    t = np.arange(n) / 22050.0
    x = 0.3 * np.sin(2 * np.pi * 180 * t) * (0.5 + 0.5 * np.sin(2 * np.pi * 3 * t)) + 0.02 * rng.standard_normal(n)
    x[: n // 10] = 0.0
    out = np.zeros(n + n // 3, dtype=np.float32)
    out[:n] = x
    return out


class StyleMel(unittest.TestCase):
    def test_xtts_preset_golden(self):
        sys.path.insert(0, GOLDEN)
        import make_mel_golden as g
        for name, clip in (("xtts_a", "a"), ("xtts_b", "b")):
            seed, n = g.CLIPS[clip]
            want = np.fromfile(os.path.join(GOLDEN, "mel", name + ".f32"), dtype="<f4").reshape(80, -1)
            got = style_mel(g.make_clip(seed, n, 22050), None, n_fft=1024, win=1024)
            self.assertEqual(got.shape, want.shape)
            self.assertLess(float(np.abs(got - want).max()), 1e-4, name)

    def norms(self):
        return np.linspace(2.0, 4.5, 80).astype(np.float32)

    @unittest.skipIf(torchaudio is None, "torchaudio does not import: TorchMelSpectrogram not run")
    def test_equal_to_torchaudio(self):
        x = speech_like(40000)
        mel = torchaudio.transforms.MelSpectrogram(n_fft=2048, hop_length=256, win_length=1024, power=2,
                                                   normalized=False, sample_rate=22050, f_min=0, f_max=8000,
                                                   n_mels=80, norm="slaney")
        norms = torch.from_numpy(self.norms())
        want = (torch.log(torch.clamp(mel(torch.from_numpy(x)[None]), min=1e-5)) / norms[None, :, None])[0].numpy()
        got = style_mel(x, self.norms())
        self.assertEqual(got.shape, want.shape)
        self.assertLess(float(np.abs(got - want).max()), 1e-4)

    @unittest.skipIf(torch is None, "torch does not import: torch.stft framing not compared")
    def test_framing_equal_to_torch_stft(self):
        x = speech_like(40000)
        spec = torch.stft(torch.from_numpy(x)[None], n_fft=2048, hop_length=256, win_length=1024,
                          window=torch.hann_window(1024), center=True, pad_mode="reflect", normalized=False,
                          onesided=True, return_complex=True)
        power = spec.abs().pow(2.0)
        fb = torch.from_numpy(mel_filters_htk_slaney(22050, 2048, 80, 0.0, 8000.0).T.astype(np.float32))
        mel = torch.matmul(power.transpose(-1, -2), fb).transpose(-1, -2)
        want = (torch.log(torch.clamp(mel, min=1e-5)) / torch.from_numpy(self.norms())[None, :, None])[0].numpy()
        got = style_mel(x, self.norms())
        self.assertEqual(got.shape, (80, x.shape[0] // 256 + 1))
        self.assertLess(float(np.abs(got - want).max()), 1e-4)


class Items(unittest.TestCase):
    def test_codes_and_cond_mels(self):
        cache = XttsCache(CACHE)
        codes = AudioCodes(CACHE, (DVAE, NORMS))
        self.assertEqual(codes.path, AudioCodes(CACHE).path)            # the only directory
        if torch is not None:
            self.assertTrue(np.array_equal(codes.mel_norms, torch.load(NORMS).numpy()))
        ds = XttsGptDataset(CACHE, codes=True, max_conditioning_length=44100, min_conditioning_length=22050)
        plain = XttsGptDataset(CACHE, max_conditioning_length=44100, min_conditioning_length=22050)
        for i in (0, 3, len(ds) - 1):
            random.seed(i)
            it = ds[i]
            random.seed(i)
            ref = plain[i]
            self.assertTrue(np.array_equal(it["cond_idxs"], ref["cond_idxs"]))     # Coqui's draws, unchanged
            gi = int(ds.indices[i])
            n = int(it["wav_lengths"])
            self.assertEqual(it["audio_codes"].dtype, np.uint16)
            self.assertEqual(it["audio_codes"].shape, (codes_count(n),))
            self.assertTrue(np.array_equal(it["audio_codes"], codes.get(cache.content_key(gi))))
            self.assertEqual(it["cond_mels"].shape, (1, 80, 44100 // 256 + 1))
            want = style_mel(it["conditioning"][0, 0], codes.mel_norms)
            self.assertTrue(np.array_equal(it["cond_mels"][0], want))

    def test_collate_shapes(self):
        ds = XttsGptDataset(CACHE, codes=True)
        items = [ds[i] for i in (0, 1, 2, 5)]
        b = ds.collate(to_torch=False)(items)
        wmax = int(b["wav_lengths"].max())
        self.assertEqual(b["audio_codes"].shape, (4, codes_count(wmax)))
        self.assertEqual(b["audio_codes"].dtype, np.int64)
        for k, it in enumerate(items):
            n = it["audio_codes"].shape[0]
            self.assertTrue(np.array_equal(b["audio_codes"][k, :n], it["audio_codes"]))
            self.assertFalse(b["audio_codes"][k, n:].any())
            # gpt.py's code_lengths - 3: every code it keeps is a stored one
            self.assertLessEqual(-(-int(b["wav_lengths"][k]) // 1024), n)
        self.assertEqual(b["cond_mels"].shape, (4, 1, 80, 132300 // 256 + 1))
        self.assertEqual(b["audio_codes_lengths"].tolist(), [it["audio_codes"].shape[0] for it in items])

    def test_missing_codes_named(self):
        with self.assertRaises(CacheError) as e:
            XttsGptDataset(CACHE, codes="codes-0000000000000000")
        self.assertIn("not a codes directory", str(e.exception))

    def test_pickles_and_workers(self):
        ds = pickle.loads(pickle.dumps(XttsGptDataset(CACHE, codes=True)))
        self.assertEqual(ds[2]["audio_codes"].shape[0], codes_count(int(ds[2]["wav_lengths"])))
        if torch is None:
            return
        loader = torch.utils.data.DataLoader(ds, batch_size=3, num_workers=2, collate_fn=ds.collate())
        n = 0
        for b in loader:
            self.assertEqual(b["audio_codes"].dtype, torch.int64)
            n += b["audio_codes"].shape[0]
        self.assertEqual(n, len(ds))


class CoquiDropIn(unittest.TestCase):
    """xtts_prep.coqui over a stand-in of Coqui's GPTTrainer (Coqui TTS is not installed
    here): the DVAE and mel extractors dropped, the loader's batches carrying exactly what
    GPTTrainer.train_step reads, format_batch_on_device computing nothing."""

    def setUp(self):
        if torch is None:
            self.skipTest("torch does not import")
        import types
        names = ["TTS", "TTS.tts", "TTS.tts.layers", "TTS.tts.layers.xtts", "TTS.tts.layers.xtts.trainer",
                 "TTS.tts.layers.xtts.trainer.gpt_trainer"]
        self.saved = {n: sys.modules.get(n) for n in names + ["xtts_prep.coqui"]}
        for n in names:
            sys.modules[n] = types.ModuleType(n)

        class GPTTrainer(torch.nn.Module):
            def __init__(self, config):
                super().__init__()
                self.config = config
                self.dvae = torch.nn.Linear(2, 2)
                self.torch_mel_spectrogram_dvae = torch.nn.Identity()
                self.torch_mel_spectrogram_style_encoder = torch.nn.Identity()

            def get_sampler(self, dataset, num_gpus=1):
                return None

        sys.modules["TTS.tts.layers.xtts.trainer.gpt_trainer"].GPTTrainer = GPTTrainer
        sys.modules.pop("xtts_prep.coqui", None)

    def tearDown(self):
        for n, m in getattr(self, "saved", {}).items():
            if m is None:
                sys.modules.pop(n, None)
            else:
                sys.modules[n] = m

    def test_batches_hold_what_train_step_reads(self):
        from types import SimpleNamespace as NS
        from xtts_prep.coqui import CachedGPTTrainer
        args = NS(dvae_checkpoint=DVAE, mel_norm_file=NORMS, min_conditioning_length=22050,
                  max_conditioning_length=44100, gpt_use_masking_gt_prompt_approach=True, max_wav_length=255995,
                  max_text_length=200)
        config = NS(model_args=args, audio=NS(sample_rate=22050), run_eval=False, batch_size=4,
                    num_loader_workers=0, training_seed=1)
        model = CachedGPTTrainer.init_from_config(config, cache=CACHE)
        self.assertFalse(hasattr(model, "dvae"))
        # the dropped modules' tensors stay in the state dict, and a state dict without them loads too
        state = model.state_dict()
        self.assertEqual(sorted(state), ["dvae.bias", "dvae.weight"])
        model.load_state_dict({})
        model.load_state_dict(state)
        samples = model.samples("train")
        self.assertEqual(len(samples), len(XttsGptDataset(CACHE, split="train")))
        self.assertIsNone(model.get_data_loader(config, None, True, [], False, 1))
        # the records the samples name, each once an epoch
        chosen = samples[1::3]
        loader = model.get_data_loader(config, None, False, chosen, False, 1)
        self.assertEqual(sum(b["wav_lengths"].shape[0] for b in loader), len(chosen))
        batch = next(iter(model.get_data_loader(config, None, False, samples, False, 1)))
        batch = model.format_batch_on_device(model.format_batch(batch))
        self.assertEqual(set(batch), {"text_inputs", "text_lengths", "audio_codes", "wav_lengths", "cond_mels",
                                      "cond_idxs", "cond_lens"})
        self.assertEqual(batch["audio_codes"].dtype, torch.int64)
        self.assertEqual(tuple(batch["cond_mels"].shape), (4, 1, 80, 44100 // 256 + 1))


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=1)
