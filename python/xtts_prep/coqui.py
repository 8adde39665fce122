"""Coqui's XTTS GPT trainer over an xtts-prep cache (docs/python-reader.md, "Coqui's recipe").

Imported only by those who have Coqui TTS installed (``from xtts_prep.coqui import
CachedGPTTrainer``; ``import xtts_prep`` never imports it). CachedGPTTrainer is Coqui's
GPTTrainer (TTS/tts/layers/xtts/trainer/gpt_trainer.py) whose data loader reads the cache
through XttsGptDataset with the audio codes that xtts-cache-codes stored for the DVAE and
mel norms the config names, and whose format_batch_on_device computes nothing: the
conditioning mels come from the loader's workers, the codes from the cache, and the DVAE
is dropped after GPTTrainer builds it, so it never reaches the GPU.

Under Coqui's Trainer (coqui-ai/Trainer and the idiap fork): the loader reads the records
the samples Trainer hands it name (small_run and any filtering of model.samples() hold),
in a new random order every epoch drawn from Trainer's seed (DistributedSampler, one rank
or num_gpus), the eval split in the order given; the item settings are kept from the config
given to __init__, as Trainer(continue_path=...) replaces config.model_args with the class
its config.json names; and state_dict carries the DVAE's and the two mel extractors'
tensors that GPTTrainer's own has, so a checkpoint of either class restores into the other
with its optimizer state.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from typing import Any, Mapping, Optional, Union

import numpy as np
import torch
from torch.utils.data import DataLoader, Subset
from torch.utils.data.distributed import DistributedSampler
from TTS.tts.layers.xtts.trainer.gpt_trainer import GPTTrainer  # ImportError without Coqui TTS

from .data import XttsGptDataset

__all__ = ["CachedGPTTrainer"]

# what Coqui's format_batch_on_device deletes, and the cache's own mel, which no step reads
_NOT_FOR_THE_DEVICE = ("wav", "conditioning", "mel", "mel_lengths", "filenames", "text", "audio_codes_lengths")

# the modules GPTTrainer.__init__ builds for format_batch_on_device, which this class drops;
# their tensors stay in the state dict, where GPTTrainer's checkpoints have them
_DROPPED = ("dvae", "torch_mel_spectrogram_dvae", "torch_mel_spectrogram_style_encoder")


class CachedGPTTrainer(GPTTrainer):  # type: ignore[misc]
    """GPTTrainer reading an xtts-prep cache: build it with init_from_config(config, cache=DIR)
    and give Trainer model.samples("train") and model.samples("val") (or any selection of
    them) for the samples."""

    def __init__(self, config: Any, cache: Union[str, os.PathLike[str]], codes: Any = None) -> None:
        super().__init__(config)
        # the codes are in the cache and the conditioning mels come from the workers: the
        # modules go, their tensors stay for the checkpoints (on the CPU, never trained)
        self.dropped_state: dict[str, torch.Tensor] = {}
        for name in _DROPPED:
            module = getattr(self, name, None)
            if module is not None:
                for k, v in module.state_dict().items():
                    self.dropped_state[name + "." + k] = v.detach().cpu()
                delattr(self, name)
        self.cache_path = os.fspath(cache)
        a = config.model_args
        self.codes_source = codes if codes is not None else (a.dvae_checkpoint, a.mel_norm_file)
        # read here, not at each loader: Trainer(continue_path=...) reloads config.json into the
        # same config object, and coqui-ai/TTS's GPTTrainerConfig then holds an XttsArgs,
        # which has none of these
        self.item_settings: dict[str, Any] = dict(
            min_conditioning_length=a.min_conditioning_length, max_conditioning_length=a.max_conditioning_length,
            use_masking_gt_prompt_approach=a.gpt_use_masking_gt_prompt_approach,
            max_wav_length=a.max_wav_length, max_text_length=a.max_text_length)
        self.sample_rate = int(config.audio.sample_rate)
        self.train_sampler: Optional[DistributedSampler[int]] = None

    @staticmethod
    def init_from_config(config: Any, samples: Any = None, cache: Optional[Union[str, os.PathLike[str]]] = None,
                         codes: Any = None) -> "CachedGPTTrainer":
        """As GPTTrainer.init_from_config, with the cache directory (required)."""
        if cache is None:
            raise ValueError("CachedGPTTrainer.init_from_config: give cache= (an xtts-prep cache directory)")
        return CachedGPTTrainer(config, cache, codes)

    def dataset(self, is_eval: bool, split: Optional[str] = "auto") -> XttsGptDataset:
        """The cache's records as Coqui's XTTSDataset would give them: split "auto" (the val
        split when is_eval, else the train split), "train", "val", or None (every record)."""
        if split == "auto":
            split = "val" if is_eval else "train"
        return XttsGptDataset(self.cache_path, split=split,
                              expect={"preset": "xtts", "sample_rate": self.sample_rate},
                              is_eval=is_eval, codes=self.codes_source, **self.item_settings)

    def samples(self, split: str) -> list[dict[str, Any]]:
        """Placeholders for Trainer's train_samples/eval_samples, one per record of the split
        that the dataset keeps: cache_index (what the loader reads), wav_length (samples at
        22,050 Hz) and text_length (tokens), for those who select among them."""
        ds = self.dataset(split != "train", split=split)
        return [{"cache_index": int(i), "wav_length": int(n), "text_length": int(t)}
                for i, n, t in zip(ds.indices, ds.lengths["n_samples"], ds.lengths["n_tokens"])]

    def selection(self, dataset: XttsGptDataset, samples: list[Mapping[str, Any]]) -> list[int]:
        """The positions in dataset (built over every record) of the samples' cache_index, in
        the samples' order; records the dataset leaves out (too short, or past max_wav_length
        or max_text_length) are skipped, as Coqui's XTTSDataset skips them."""
        n_records = len(dataset.cache)
        wanted = np.empty(len(samples), dtype=np.int64)
        for k, s in enumerate(samples):
            if not isinstance(s, Mapping) or "cache_index" not in s:
                raise ValueError("CachedGPTTrainer: sample %d is %r, not one of model.samples()'s placeholders "
                                 "(a dict with cache_index): the loader reads the cache, not audio files" % (k, s))
            wanted[k] = int(s["cache_index"])
            if not 0 <= wanted[k] < n_records:
                raise ValueError("CachedGPTTrainer: sample %d has cache_index %d, but %s holds %d records"
                                 % (k, wanted[k], self.cache_path, n_records))
        order = np.argsort(dataset.indices, kind="stable")
        kept = dataset.indices[order]
        at = np.minimum(np.searchsorted(kept, wanted), max(len(kept) - 1, 0))
        found = kept[at] == wanted if len(kept) else np.zeros(len(wanted), dtype=bool)
        return [int(p) for p in order[at[found]]]

    def get_sampler(self, dataset: Any, num_gpus: int = 1, seed: int = 0) -> DistributedSampler[int]:
        """The training order: a permutation of the dataset drawn from seed and the epoch that
        on_train_epoch_start sets, split among num_gpus ranks (DistributedSampler, as Coqui's
        GPTTrainer uses with several GPUs; one rank of one here otherwise)."""
        if num_gpus > 1:
            return DistributedSampler(dataset, shuffle=True, seed=seed)
        return DistributedSampler(dataset, num_replicas=1, rank=0, shuffle=True, seed=seed)

    def get_data_loader(self, config: Any, assets: Any, is_eval: bool, samples: Any, verbose: bool, num_gpus: int,
                        rank: Optional[int] = None) -> Optional[DataLoader[Any]]:
        """The loader of the records samples names (the whole split when samples is None):
        training in a new random order every epoch, evaluation in the samples' order."""
        if is_eval and not config.run_eval:
            return None
        if samples is None:
            dataset: Any = self.dataset(is_eval)
            collate = dataset.collate(to_torch=True)
        else:
            everything = self.dataset(is_eval, split=None)
            positions = self.selection(everything, samples)
            if verbose and len(positions) < len(samples):
                print(" > CachedGPTTrainer: %d of %d %s samples left out (shorter than 0.5 s, or past max_wav_length "
                      "or max_text_length)" % (len(samples) - len(positions), len(samples),
                                               "eval" if is_eval else "train"))
            dataset, collate = Subset(everything, positions), everything.collate(to_torch=True)
        if num_gpus > 1:
            torch.distributed.barrier()
        sampler = None
        if not is_eval:
            sampler = self.train_sampler = self.get_sampler(dataset, num_gpus, seed=int(config.training_seed))
        return DataLoader(dataset, sampler=sampler, batch_size=config.eval_batch_size if is_eval else config.batch_size,
                          shuffle=False, drop_last=False, collate_fn=collate,
                          num_workers=config.num_eval_loader_workers if is_eval else config.num_loader_workers,
                          pin_memory=False)

    def on_train_epoch_start(self, trainer: Any) -> None:
        """GPTTrainer's (the GPT alone in training mode), and the epoch's order: keyed by the
        steps done so far, so every epoch, and every epoch of a continued run, gets its own."""
        super().on_train_epoch_start(trainer)
        if self.train_sampler is not None:
            self.train_sampler.set_epoch(int(trainer.total_steps_done))

    def state_dict(self, *args: Any, destination: Any = None, prefix: str = "",
                   keep_vars: bool = False) -> Any:
        """GPTTrainer's state dict: the model's, with the DVAE's and the mel extractors'
        tensors under the names GPTTrainer gives them."""
        state = super().state_dict(*args, destination=destination, prefix=prefix, keep_vars=keep_vars)
        for k, v in self.dropped_state.items():
            state[prefix + k] = v
        return state

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True) -> Any:
        """Loads a state dict of this class or of GPTTrainer, with or without the DVAE's and
        the mel extractors' tensors (which are kept for the next state_dict)."""
        own = OrderedDict(state_dict)
        metadata = getattr(state_dict, "_metadata", None)
        if metadata is not None:
            setattr(own, "_metadata", metadata)   # as Module.load_state_dict keeps it
        for k in list(own):
            if k.split(".", 1)[0] in _DROPPED:
                self.dropped_state[k] = own.pop(k)
        return super().load_state_dict(own, strict=strict)

    def format_batch(self, batch: dict[str, Any]) -> dict[str, Any]:
        """On the CPU, before Trainer moves the batch: only what train_step reads stays."""
        batch["text_inputs"] = batch.pop("padded_text")
        for k in _NOT_FOR_THE_DEVICE:
            batch.pop(k, None)
        return batch

    def format_batch_on_device(self, batch: dict[str, Any]) -> dict[str, Any]:
        """Nothing to compute: cond_mels and audio_codes came with the batch."""
        return batch
