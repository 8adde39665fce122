"""Coqui's XTTS GPT trainer over an xtts-prep cache (docs/python-reader.md, "Coqui's recipe").

Imported only by those who have Coqui TTS installed (``from xtts_prep.coqui import
CachedGPTTrainer``; ``import xtts_prep`` never imports it). CachedGPTTrainer is Coqui's
GPTTrainer (TTS/tts/layers/xtts/trainer/gpt_trainer.py) whose data loader reads the cache
through XttsGptDataset with the audio codes that xtts-cache-codes stored for the DVAE and
mel norms the config names, and whose format_batch_on_device computes nothing: the
conditioning mels come from the loader's workers, the codes from the cache, and the DVAE
is dropped after GPTTrainer builds it, so it never reaches the GPU.
"""

from __future__ import annotations

import os
from typing import Any, Optional, Union

import torch
from torch.utils.data import DataLoader
from TTS.tts.layers.xtts.trainer.gpt_trainer import GPTTrainer  # ImportError without Coqui TTS

from .data import XttsGptDataset

__all__ = ["CachedGPTTrainer"]

# what Coqui's format_batch_on_device deletes, and the cache's own mel, which no step reads
_NOT_FOR_THE_DEVICE = ("wav", "conditioning", "mel", "mel_lengths", "filenames", "text", "audio_codes_lengths")


class CachedGPTTrainer(GPTTrainer):  # type: ignore[misc]
    """GPTTrainer reading an xtts-prep cache: build it with init_from_config(config, cache=DIR)
    and give Trainer model.samples("train") and model.samples("val") for the samples."""

    def __init__(self, config: Any, cache: Union[str, os.PathLike[str]], codes: Any = None) -> None:
        super().__init__(config)
        # the codes are in the cache and the conditioning mels come from the workers
        for name in ("dvae", "torch_mel_spectrogram_dvae", "torch_mel_spectrogram_style_encoder"):
            if hasattr(self, name):
                delattr(self, name)
        self.cache_path = os.fspath(cache)
        args = config.model_args
        self.codes_source = codes if codes is not None else (args.dvae_checkpoint, args.mel_norm_file)

    @staticmethod
    def init_from_config(config: Any, samples: Any = None, cache: Optional[Union[str, os.PathLike[str]]] = None,
                         codes: Any = None) -> "CachedGPTTrainer":
        """As GPTTrainer.init_from_config, with the cache directory (required)."""
        if cache is None:
            raise ValueError("CachedGPTTrainer.init_from_config: give cache= (an xtts-prep cache directory)")
        return CachedGPTTrainer(config, cache, codes)

    def dataset(self, is_eval: bool) -> XttsGptDataset:
        """The cache's train (or val) split as Coqui's XTTSDataset would give it."""
        a = self.config.model_args
        return XttsGptDataset(self.cache_path, split="val" if is_eval else "train",
                              expect={"preset": "xtts", "sample_rate": self.config.audio.sample_rate},
                              min_conditioning_length=a.min_conditioning_length,
                              max_conditioning_length=a.max_conditioning_length,
                              use_masking_gt_prompt_approach=a.gpt_use_masking_gt_prompt_approach,
                              is_eval=is_eval, max_wav_length=a.max_wav_length, max_text_length=a.max_text_length,
                              codes=self.codes_source)

    def samples(self, split: str) -> list[dict[str, Any]]:
        """Placeholders for Trainer's train_samples/eval_samples (one per record of the split;
        the loader reads the cache, not these)."""
        ds = self.dataset(split != "train")
        return [{"cache_index": int(i)} for i in ds.indices]

    def get_data_loader(self, config: Any, assets: Any, is_eval: bool, samples: Any, verbose: bool, num_gpus: int,
                        rank: Optional[int] = None) -> Optional[DataLoader[Any]]:
        if is_eval and not config.run_eval:
            return None
        dataset = self.dataset(is_eval)
        if num_gpus > 1:
            torch.distributed.barrier()
        sampler = self.get_sampler(dataset, num_gpus)
        return DataLoader(dataset, sampler=None if is_eval else sampler,
                          batch_size=config.eval_batch_size if is_eval else config.batch_size,
                          shuffle=False, drop_last=False, collate_fn=dataset.collate(to_torch=True),
                          num_workers=config.num_eval_loader_workers if is_eval else config.num_loader_workers,
                          pin_memory=False)

    def format_batch(self, batch: dict[str, Any]) -> dict[str, Any]:
        """On the CPU, before Trainer moves the batch: only what train_step reads stays."""
        batch["text_inputs"] = batch.pop("padded_text")
        for k in _NOT_FOR_THE_DEVICE:
            batch.pop(k, None)
        return batch

    def format_batch_on_device(self, batch: dict[str, Any]) -> dict[str, Any]:
        """Nothing to compute: cond_mels and audio_codes came with the batch."""
        return batch
