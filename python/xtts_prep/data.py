"""Datasets, a length-bucketing batch sampler and collates over an xtts-prep cache.

Every class here is defined at module level and holds only picklable state (an XttsCache
pickles without its LMDB handles and reopens them lazily in each process), so they work in
DataLoader workers started by fork or by spawn. torch is optional: items are numpy arrays,
and the collates return torch tensors when torch imports (numpy arrays otherwise, or
always with to_torch=False).
"""

from __future__ import annotations

import math
import os
import random
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, Mapping, Optional, Protocol, Sequence, Union, cast

import numpy as np
if TYPE_CHECKING:   # numpy.typing is numpy 1.20 or later (Debian 11 has 1.19): for annotations only
    import numpy.typing as npt

from ._clib import F
from .cache import Item, ItemBuffers, XttsCache, CacheError
from .codes import AudioCodes, codes_count
from .quality import flag_mask
from .style_mel import style_mel

__all__ = ["CacheDataset", "BucketingBatchSampler", "Collate", "XttsGptDataset", "XttsGptCollate",
           "VocoderSegmentDataset", "check_expect"]

# expect= keys and where the cache keeps each value
_EXPECT: dict[str, Callable[[XttsCache], Any]] = {
    "preset": lambda c: c.config["mel"]["preset"],
    "sample_rate": lambda c: c.config["mel"]["sample_rate"],
    "n_mels": lambda c: c.config["mel"]["n_mels"],
    "hop_samples": lambda c: c.config["mel"]["hop_samples"],
    "tokenizer": lambda c: c.config["tokenizer"],
    "tokenizer_hash": lambda c: c.config["vocab_hash"],
    "audio": lambda c: c.audio,
    "format_version": lambda c: c.format_version,
}


def check_expect(cache: XttsCache, expect: Optional[Mapping[str, Any]]) -> None:
    """Raise CacheError naming the first field (in sorted order) whose value in the cache
    differs from expect[field]. tokenizer_hash compares config.vocab_hash, with or without
    its "sha256:" prefix."""
    fields = expect or {}
    for k in sorted(fields):
        if k not in _EXPECT:
            raise ValueError("expect: unknown field %r (known: %s)" % (k, ", ".join(sorted(_EXPECT))))
        have, want = _EXPECT[k](cache), fields[k]
        if k == "tokenizer_hash":
            have, want = str(have).replace("sha256:", ""), str(want).replace("sha256:", "")
        if have != want:
            raise CacheError("%s: expect %s=%r, the cache has %r" % (cache.path, k, want, have))


def _torch(to_torch: Optional[bool]) -> Any:
    """The torch module, or None: to_torch False never imports it, None imports it when
    it is installed, True insists."""
    if to_torch is False:
        return None
    try:
        import torch
        return torch
    except ImportError:
        if to_torch:
            raise
        return None


# what the collates are: a list of items in, a batch out
CollateFn = Callable[[Sequence[Mapping[str, Any]]], Dict[str, Any]]


class _HasFrameLengths(Protocol):
    def frame_lengths(self) -> npt.ArrayLike: ...


class CacheDataset:
    """Map-style dataset over a cache: item i is a dict of numpy arrays and scalars:
    index, id, speaker_id, lang_id, tokens (int64 [n_tokens]), mel (float32 [n_mels,
    n_frames]), and with audio=True wav (float32 [n_samples], the stored int16 / 32768),
    with text=True text (the normalized transcript).

    split "train" or "val" keeps that split only; expect= checks the cache's fields
    (check_expect); exclude_flags= (quality flag names, e.g. ["cut_start", "clipped"]) leaves
    out the records that carry any of them, as xtts-cache-report flags them
    (XttsCache.quality_flags, with quality_thresholds= changing its thresholds). lengths (numpy structured array, see XttsCache.lengths) come from
    the lengths index, or from the record headers of a version-1 cache."""

    def __init__(self, path: Union[str, os.PathLike[str]], split: Optional[str] = None,
                 expect: Optional[Mapping[str, Any]] = None, audio: bool = False, text: bool = False,
                 backend: str = "auto", threads: int = 1, exclude_flags: Optional[Sequence[str]] = None,
                 quality_thresholds: Optional[Dict[str, float]] = None) -> None:
        self.cache = XttsCache(path, backend=backend, threads=threads)
        check_expect(self.cache, expect)
        if audio and self.cache.audio == "none":
            raise CacheError("%s: audio=True, but the cache stores no waveforms (built with --audio none)"
                             % self.cache.path)
        self.audio, self.text = audio, text
        all_lengths = self.cache.lengths()
        if split is None:
            self.indices = np.arange(len(self.cache))
        else:
            want = {"train": 0, "val": 1}[split]
            self.indices = np.nonzero(all_lengths["split"] == want)[0]
        if exclude_flags:
            mask = flag_mask(exclude_flags)
            flags = self.cache.quality_flags(quality_thresholds)[0]
            self.indices = self.indices[(flags[self.indices] & np.uint32(mask)) == 0]
        self.lengths = all_lengths[self.indices]
        self.pad_token = self.cache.pad_token
        self.pad_value: Optional[float] = None   # read from the first record on demand
        self._buffers: Optional[ItemBuffers] = None   # __getitems__' reused buffers, made on its first call

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_buffers"] = None   # a worker makes its own
        return state

    def __len__(self) -> int:
        return len(self.indices)

    def frame_lengths(self) -> npt.NDArray[np.int64]:
        """n_frames of every item, for BucketingBatchSampler."""
        frames: npt.NDArray[np.int64] = self.lengths["n_frames"].astype(np.int64)
        return frames

    def mel_pad_value(self) -> float:
        """The pad value of the mel (the first record's), 0.0 for an empty dataset."""
        if self.pad_value is None:
            self.pad_value = float(self.cache.header(int(self.indices[0]))["pad_value"]) if len(self) else 0.0
        return self.pad_value

    def _read(self, i: int, wave: bool, codes: Optional[AudioCodes] = None) -> tuple[int, Item]:
        """Item i's record: (global index, what the library gives of it in one call: fields, id,
        tokens, mel, and the waveform and codes when asked)."""
        gi = int(self.indices[i])
        i = i + len(self) if i < 0 else i            # its row of lengths, as indices[i] counts from the end
        flac = wave and self.cache.audio == "flac"   # decoded apart (soundfile): the library has no FLAC codec
        it = self.cache._items([gi], tokens=True, mel=True, wave=wave and not flac,
                               codes=codes._reader() if codes is not None else None, sizes=self.lengths[i:i + 1])[0]
        if flac:
            it["wave"] = self.cache.waveform(gi)
        return gi, it

    def _read_many(self, positions: Sequence[int], wave: bool, codes: Optional[AudioCodes] = None
                   ) -> Optional[tuple[list[int], list[Item]]]:
        """The records at positions read as _read reads one, all in one call into the library
        (ItemBuffers: what the items hold points into buffers reused by the next call); None
        when that call fails, and the caller reads them one by one, which raises the error."""
        pos = np.asarray(positions, dtype=np.int64).reshape(-1)
        gis = self.indices[pos]
        flac = wave and self.cache.audio == "flac"
        if self._buffers is None:
            self._buffers = ItemBuffers()
        its = self._buffers.read(self.cache, gis, self.lengths[pos], tokens=True, mel=True, wave=wave and not flac,
                                 codes=codes._reader() if codes is not None else None)
        if its is None:
            return None
        gi_list = [int(g) for g in gis]
        if flac:
            for gi, it in zip(gi_list, its):
                it["wave"] = self.cache.waveform(gi)
        return gi_list, its

    def __getitem__(self, i: int) -> dict[str, Any]:
        gi, it = self._read(i, self.audio)
        return self._item(gi, it, False)

    def __getitems__(self, positions: Sequence[int]) -> list[dict[str, Any]]:
        """[self[i] for i in positions], the records read with one call into the library into
        reused buffers (torch's DataLoader calls it for each batch)."""
        if not len(positions):
            return []
        got = self._read_many(positions, self.audio)
        if got is None:
            return [self[int(i)] for i in positions]
        return [self._item(gi, it, True) for gi, it in zip(*got)]

    def _item(self, gi: int, it: Item, borrowed: bool) -> dict[str, Any]:
        """The item of record gi from what the library gave; borrowed: its arrays are
        ItemBuffers', copied out."""
        f = it["fields"]
        mel = it["mel"].copy() if borrowed else it["mel"]
        item: dict[str, Any] = dict(index=gi, id=it["id"], speaker_id=int(f[F.SPEAKER_ID]),
                                    lang_id=int(f[F.LANG_ID]), tokens=it["tokens"].astype(np.int64), mel=mel)
        if self.audio:
            item["wav"] = it["wave"].astype(np.float32) / np.float32(32768)
        if self.text:
            item["text"] = self.cache.text(gi)[1]
        return item

    def read_batch(self, positions: npt.ArrayLike, to_torch: Optional[bool] = None, pin_memory: Optional[bool] = None,
                   out: Optional[dict[str, Any]] = None, threads: Optional[int] = None,
                   mel_dtype: npt.DTypeLike = np.float32) -> dict[str, Any]:
        """Items at positions as one fixed-shape batch (XttsCache.read_batch: tokens
        [B, max_tokens], mel [B, n_mels, max_frames], n_tokens, n_frames, speaker_id,
        lang_id, split, index), decoded by the C reader when its library is loaded.
        Torch tensors when torch imports (to_torch=None; pinned when CUDA is available,
        or as pin_memory says), numpy arrays with to_torch=False."""
        torch = _torch(to_torch)
        gi = self.indices[np.asarray(positions, dtype=np.int64).reshape(-1)]
        return self.cache.read_batch(gi, out=out, threads=threads, mel_dtype=mel_dtype, to_torch=torch is not None,
                                     pin_memory=pin_memory)

    def collate(self, to_torch: Optional[bool] = None) -> CollateFn:
        """A Collate for this dataset's pad token and mel pad value."""
        return Collate(pad_token=self.pad_token, mel_pad_value=self.mel_pad_value(), to_torch=to_torch)


class Collate:
    """Pads a list of CacheDataset items to the batch's own maxima and returns a dict:
    tokens [B, Lt] int64 (pad_token), token_lengths [B], token_mask [B, Lt] bool (True on
    real tokens); mel [B, C, T] float32 (mel_pad_value), mel_lengths [B], mel_mask [B, T];
    with waveforms wav [B, N] float32 (zeros), wav_lengths [B], wav_mask [B, N]; index,
    speaker_id, lang_id [B] int64; id (list of str), text (list, when present). Tensors
    when torch imports (to_torch=None), numpy arrays with to_torch=False."""

    def __init__(self, pad_token: int = 0, mel_pad_value: float = 0.0, to_torch: Optional[bool] = None) -> None:
        self.pad_token, self.mel_pad_value, self.to_torch = pad_token, mel_pad_value, to_torch

    @staticmethod
    def pad(arrays: Sequence[npt.NDArray[Any]], value: float, dtype: npt.DTypeLike
            ) -> tuple[npt.NDArray[Any], npt.NDArray[np.int64], npt.NDArray[np.bool_]]:
        """Stack 1-D or 2-D arrays padded along their last axis to the longest; returns
        (padded, lengths, mask)."""
        lengths = np.array([a.shape[-1] for a in arrays], dtype=np.int64)
        n = int(lengths.max()) if len(arrays) else 0
        out = np.full((len(arrays),) + arrays[0].shape[:-1] + (n,), value, dtype=dtype)
        for b, a in enumerate(arrays):
            out[b, ..., :a.shape[-1]] = a
        mask = np.arange(n)[None, :] < lengths[:, None]
        return out, lengths, mask

    def __call__(self, items: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, lname, mname, value, dtype in (("tokens", "token_lengths", "token_mask", self.pad_token, np.int64),
                                                ("mel", "mel_lengths", "mel_mask", self.mel_pad_value, np.float32),
                                                ("wav", "wav_lengths", "wav_mask", 0.0, np.float32)):
            if key in items[0]:
                out[key], out[lname], out[mname] = self.pad([it[key] for it in items], value, dtype)
        for key in ("index", "speaker_id", "lang_id"):
            out[key] = np.array([it[key] for it in items], dtype=np.int64)
        out["id"] = [it["id"] for it in items]
        if "text" in items[0]:
            out["text"] = [it["text"] for it in items]
        torch = _torch(self.to_torch)
        if torch is not None:
            out = {k: torch.from_numpy(v) if isinstance(v, np.ndarray) else v for k, v in out.items()}
        return out


class BucketingBatchSampler:
    """Length-bucketing batch sampler (in the manner of Lhotse's DynamicBucketingSampler).

    lengths: one length per dataset item (frames, say; a dataset with frame_lengths() may
    be passed). Items are split into num_buckets buckets of similar length (boundaries at
    the length quantiles); each epoch every bucket is shuffled, cut into batches that hold
    at most max_frames padded frames (batch size times the longest item) and at most
    max_batch_size items, and the batches of all buckets are shuffled together. The order
    depends only on seed and the epoch (set_epoch). With world_size > 1 every rank builds
    the same batch list, drops the tail that does not divide evenly (unless drop_last is
    False, in which case the list is padded by repeating its first batches) and takes
    batches rank, rank + world_size, ...: ranks get disjoint batches and the same count.
    An item longer than max_frames gets a batch of its own.

    num_buckets is an upper bound: on a small dataset it is lowered (down to one bucket)
    until every bucket holds at least one full batch, so that splitting into buckets
    never makes batches smaller than they need to be (8 items with max_batch_size=4 give
    two batches of 4, not eight of 1). The buckets depend only on the lengths and the
    limits, so the order stays a function of seed and epoch."""

    def __init__(self, lengths: Union[npt.ArrayLike, _HasFrameLengths], max_frames: Optional[int] = None,
                 max_batch_size: Optional[int] = None, num_buckets: int = 10, shuffle: bool = True, seed: int = 0,
                 drop_last: bool = False, rank: int = 0, world_size: int = 1) -> None:
        if hasattr(lengths, "frame_lengths"):
            lengths = cast(_HasFrameLengths, lengths).frame_lengths()
        self.lengths = np.asarray(lengths, dtype=np.int64)
        if max_frames is None and max_batch_size is None:
            raise ValueError("BucketingBatchSampler: give max_frames, max_batch_size or both")
        if world_size < 1 or not 0 <= rank < world_size:
            raise ValueError("BucketingBatchSampler: rank %d outside world_size %d" % (rank, world_size))
        self.max_frames, self.max_batch_size = max_frames, max_batch_size
        self.shuffle, self.seed, self.drop_last = shuffle, int(seed), drop_last
        self.rank, self.world_size = rank, world_size
        self.epoch = 0
        self.num_buckets = max(1, int(num_buckets))
        self.bucket_of: npt.NDArray[np.intp] = np.zeros(len(self.lengths), dtype=np.intp)
        for k in range(self.num_buckets, 0, -1):
            self.num_buckets, self.bucket_of = k, self._buckets(k)
            if self._buckets_fill_a_batch():
                break

    def _buckets(self, k: int) -> npt.NDArray[np.intp]:
        """Each item's bucket among k with boundaries at the length quantiles."""
        if k == 1 or not len(self.lengths):
            return np.zeros(len(self.lengths), dtype=np.intp)
        qs = np.quantile(self.lengths, np.linspace(0, 1, k + 1)[1:-1])
        return np.searchsorted(np.unique(qs), self.lengths, side="left")

    def _buckets_fill_a_batch(self) -> bool:
        """Whether every bucket holds at least as many items as one batch of its longest
        item can take (max_batch_size, max_frames // longest)."""
        for b in np.unique(self.bucket_of):
            members = self.lengths[self.bucket_of == b]
            cap = len(self.lengths)
            if self.max_batch_size is not None:
                cap = min(cap, self.max_batch_size)
            if self.max_frames is not None:
                cap = min(cap, self.max_frames // max(1, int(members.max())))
            if len(members) < cap:
                return False
        return True

    def set_epoch(self, epoch: int) -> None:
        self.epoch = int(epoch)

    def _fits(self, count: int, longest: int) -> bool:
        if self.max_batch_size is not None and count > self.max_batch_size:
            return False
        return self.max_frames is None or count * longest <= self.max_frames

    def batches(self) -> list[list[int]]:
        """The whole batch list of this epoch (all ranks)."""
        rng = np.random.default_rng([self.seed, self.epoch])
        out: list[list[int]] = []
        for b in np.unique(self.bucket_of):
            idx = np.nonzero(self.bucket_of == b)[0]
            if self.shuffle:
                idx = rng.permutation(idx)
            cur: list[int] = []
            longest = 0
            for i in idx.tolist():
                L = int(self.lengths[i])
                if cur and not self._fits(len(cur) + 1, max(longest, L)):
                    out.append(cur)
                    cur, longest = [], 0
                cur.append(i)
                longest = max(longest, L)
            if cur:
                out.append(cur)
        if self.shuffle:
            out = [out[k] for k in rng.permutation(len(out))]
        ws = self.world_size
        if ws > 1 and len(out) % ws:
            if self.drop_last:
                out = out[:len(out) - len(out) % ws]
            else:
                out = out + out[:ws - len(out) % ws]
        return out

    def __iter__(self) -> Iterator[list[int]]:
        return iter(self.batches()[self.rank::self.world_size])

    def __len__(self) -> int:
        return len(self.batches()[self.rank::self.world_size])


# ---- XTTS GPT -------------------------------------------------------------------------------

XTTS_SAMPLE_RATE = 22050


def prompt_slice(n: int, min_len: int, max_len: int, is_eval: bool, rng: Any = random) -> tuple[int, int]:
    """(start, end) of the conditioning slice of a clip of n samples, chosen as Coqui's
    get_prompt_slice chooses it (TTS/tts/layers/xtts/trainer/dataset.py): a random length
    in [min_len, max_len] (the middle when evaluating), n // 2 when the clip is shorter,
    a random start (0 when evaluating)."""
    length = int((min_len + max_len) / 2) if is_eval else rng.randint(min_len, max_len)
    if n - length < 0:
        length = n // 2
    start = 0 if is_eval else rng.randint(0, n - length)
    return start, start + length


class XttsGptDataset(CacheDataset):
    """Items as Coqui's XTTSDataset returns them (docs/python-reader.md lists each key
    against Coqui's code), from a cache built with the xtts preset and --audio
    int16|flac: text (int32 [n_tokens]), text_lengths, wav (float32 [1, N] at 22,050 Hz),
    wav_lengths, filenames (the utterance id), conditioning (float32 [1, 1,
    max_conditioning_length]), cond_lens, cond_idxs, plus the cached DVAE-input mel
    (mel float32 [80, T]) and mel_lengths. Random choices use Python's random module,
    as Coqui's do (DataLoader seeds it in every worker). The conditioning slice is taken
    from the item's own audio (use_masking_gt_prompt_approach=True, Coqui's default:
    cond_lens is NaN and the collate makes it None) or, with False, cond_idxs is NaN and
    cond_lens the slice length. Clips shorter than half a second, or longer than
    max_wav_length samples or max_text_length tokens, are left out when the dataset is
    built (Coqui skips them when it meets them).

    With codes (True for the cache's only codes directory, a directory name or path, or a
    (dvae_file, mel_norms_file) pair; docs/xtts-cache-codes.md) the items also hold what
    Coqui's format_batch_on_device computes on the GPU at every step: audio_codes (uint16
    [n_codes], the DVAE's codes of the whole clip, n_codes = codes_count(wav_lengths)),
    audio_codes_lengths, and cond_mels (float32 [1, 80, max_conditioning_length // 256 + 1]:
    the style encoder's TorchMelSpectrogram of the zero-padded conditioning slice, divided
    by the mel norms the codes directory records, or by mel_norms when given). mel_norms
    alone gives cond_mels without codes."""

    def __init__(self, path: Union[str, os.PathLike[str]], split: Optional[str] = None,
                 expect: Optional[Mapping[str, Any]] = None, min_conditioning_length: int = 66150,
                 max_conditioning_length: int = 132300, use_masking_gt_prompt_approach: bool = True,
                 is_eval: bool = False, max_wav_length: Optional[int] = None,
                 max_text_length: Optional[int] = None, exclude_flags: Optional[Sequence[str]] = None,
                 codes: Union[None, bool, str, os.PathLike[str], tuple[Any, Any]] = None,
                 mel_norms: Optional[npt.ArrayLike] = None) -> None:
        exp = dict(expect or {})
        exp.setdefault("sample_rate", XTTS_SAMPLE_RATE)
        super().__init__(path, split=split, expect=exp, audio=True, exclude_flags=exclude_flags)
        keep = self.lengths["n_samples"] >= 0.5 * XTTS_SAMPLE_RATE
        if max_wav_length is not None:
            keep &= self.lengths["n_samples"] <= max_wav_length
        if max_text_length is not None:
            keep &= self.lengths["n_tokens"] <= max_text_length
        self.indices, self.lengths = self.indices[keep], self.lengths[keep]
        self.min_cond, self.max_cond = int(min_conditioning_length), int(max_conditioning_length)
        self.masking = bool(use_masking_gt_prompt_approach)
        self.is_eval = bool(is_eval)
        self.codes: Optional[AudioCodes] = None
        if codes is not None and codes is not False:
            self.codes = AudioCodes(path, None if codes is True else codes, backend=self.cache.backend)
        self.mel_norms: Optional[npt.NDArray[np.float32]] = None
        if mel_norms is not None:
            self.mel_norms = np.asarray(mel_norms, dtype=np.float32).reshape(-1)
        elif self.codes is not None:
            self.mel_norms = self.codes.mel_norms

    def __getitem__(self, i: int) -> dict[str, Any]:
        try:
            gi, it = self._read(i, True, self.codes)
        except CacheError as e:
            if self.codes is not None and str(e).endswith(": no audio codes"):
                raise CacheError("%s: %s: run xtts-cache-codes %s again" % (self.codes.path, e, self.cache.path)) \
                    from None
            raise
        return self._item(gi, it, False)

    def __getitems__(self, positions: Sequence[int]) -> list[dict[str, Any]]:
        """[self[i] for i in positions] (the same random draws, in the same order), the records
        read with one call into the library into reused buffers (torch's DataLoader calls it for a
        batch)."""
        if not len(positions):
            return []
        got = self._read_many(positions, True, self.codes)
        if got is None:
            return [self[int(i)] for i in positions]
        return [self._item(gi, it, True) for gi, it in zip(*got)]

    def _item(self, gi: int, it: Item, borrowed: bool) -> dict[str, Any]:
        """The item of record gi from what the library gave (one draw of the conditioning
        slice); borrowed: its arrays are ItemBuffers', copied out."""
        f = it["fields"]
        r: dict[str, Any] = {"tokens": it["tokens"], "n_tokens": int(f[F.N_TOKENS]), "id": it["id"],
                             "mel": it["mel"].copy() if borrowed else it["mel"], "n_frames": int(f[F.N_FRAMES])}
        wav = it["wave"].astype(np.float32)[None, :]
        wav *= np.float32(1.0 / 32768)   # / 32768 exactly (a power of two), in place
        n = wav.shape[-1]
        start, end = prompt_slice(n, self.min_cond, self.max_cond, self.is_eval)
        cond = np.zeros((1, self.max_cond), dtype=np.float32)
        cond[:, :end - start] = wav[:, start:end]
        item: dict[str, Any] = {
            "text": r["tokens"].astype(np.int32),
            "text_lengths": np.int64(r["n_tokens"]),
            "wav": wav,
            "wav_lengths": np.int64(n),
            "filenames": r["id"],
            "conditioning": cond[None],                                   # [1, 1, max_cond]
            "cond_lens": np.array([math.nan]) if self.masking else np.int64(self.max_cond),
            "cond_idxs": np.array([start, end], dtype=np.int64) if self.masking else np.array([math.nan]),
            "mel": r["mel"],
            "mel_lengths": np.int64(r["n_frames"]),
        }
        if self.mel_norms is not None:
            item["cond_mels"] = style_mel(cond[0], self.mel_norms)[None]    # [1, 80, T]
        if self.codes is not None:
            codes = it["codes"]
            if codes.shape[0] != codes_count(n):
                raise CacheError("%s: index %d (%s): %d codes, its %d samples make %d"
                                 % (self.codes.path, gi, r["id"], codes.shape[0], n, codes_count(n)))
            item["audio_codes"] = codes.copy() if borrowed else codes
            item["audio_codes_lengths"] = np.int64(codes.shape[0])
        return item

    def collate(self, to_torch: Optional[bool] = None) -> XttsGptCollate:
        return XttsGptCollate(mel_pad_value=self.mel_pad_value(), to_torch=to_torch)


class XttsGptCollate:
    """Coqui's XTTSDataset.collate_fn on XttsGptDataset items: wav_lengths, text_lengths,
    conditioning, cond_lens, cond_idxs stacked (cond_lens / cond_idxs None when any is
    NaN); padded_text int32 [B, max text] zero-padded; wav float32 [B, 1, max wav]
    zero-padded; text, filenames left as lists; plus mel [B, 80, max T] padded with the
    mel pad value and mel_lengths. Items with codes: audio_codes int64 [B, codes_count(max
    wav)] (the width the DVAE gives Coqui's padded batch), zero-padded (gpt.py overwrites
    every code from ceil(wav_length / 1024) on with its stop token, so the padding is never
    read), audio_codes_lengths; items with cond_mels: cond_mels float32 [B, 1, 80, T]."""

    def __init__(self, mel_pad_value: float = 0.0, to_torch: Optional[bool] = None) -> None:
        self.mel_pad_value, self.to_torch = mel_pad_value, to_torch

    def __call__(self, items: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        B = len(items)
        batch: dict[str, Any] = {k: [it[k] for it in items] for k in items[0]}
        for k in ("wav_lengths", "text_lengths", "conditioning", "mel_lengths"):
            batch[k] = np.stack(batch[k])
        for k in ("cond_lens", "cond_idxs"):
            v = np.stack(batch[k])
            batch[k] = None if np.any(np.isnan(v.astype(np.float64))) else v.astype(np.int64)
        text_padded = np.zeros((B, int(batch["text_lengths"].max())), dtype=np.int32)
        wav_padded = np.zeros((B, 1, int(batch["wav_lengths"].max())), dtype=np.float32)
        for b in range(B):
            text_padded[b, :batch["text_lengths"][b]] = batch["text"][b]
            wav_padded[b, :, :batch["wav_lengths"][b]] = batch["wav"][b]
        batch["wav"] = wav_padded
        batch["padded_text"] = text_padded
        batch["mel"], _, _ = Collate.pad(batch["mel"], self.mel_pad_value, np.float32)
        if "cond_mels" in batch:
            batch["cond_mels"] = np.stack(batch["cond_mels"])
        if "audio_codes" in batch:
            codes = np.zeros((B, codes_count(int(batch["wav_lengths"].max()))), dtype=np.int64)
            for b, c in enumerate(batch["audio_codes"]):
                codes[b, :c.shape[0]] = c
            batch["audio_codes"] = codes
            batch["audio_codes_lengths"] = np.stack(batch["audio_codes_lengths"])
        torch = _torch(self.to_torch)
        if torch is not None:
            batch["text"] = [torch.from_numpy(t) for t in batch["text"]]
            batch = {k: torch.from_numpy(v) if isinstance(v, np.ndarray) else v for k, v in batch.items()}
        return batch


# ---- vocoder segments -------------------------------------------------------------------------

class VocoderSegmentDataset(CacheDataset):
    """Random aligned (waveform, mel[, linear]) segments for HiFi-GAN/VITS-style training,
    by the alignment rule of formats/cache.md 3.4: a segment of segment_frames frames at
    frame f is mel[:, f:f+L] and wav[f*hop:(f+L)*hop] (samples past the end are 0). f is
    uniform in [0, n_frames - L] (Python's random module; 0 when eval=True); a clip
    shorter than L frames is padded (mel with its pad value, audio with zeros), as
    HiFi-GAN pads short clips. linear_path names a second cache of the same inputs built
    with --preset linear (same hop and sample rate): its record with the same id gives
    the aligned linear spectrogram segment. Items: wav float32 [L*hop], mel [C, L],
    optional linear [F, L], index, id; fixed shapes, so torch's default collate stacks
    them."""

    def __init__(self, path: Union[str, os.PathLike[str]], segment_frames: int = 32, split: Optional[str] = None,
                 expect: Optional[Mapping[str, Any]] = None,
                 linear_path: Union[str, os.PathLike[str], None] = None, eval: bool = False,
                 exclude_flags: Optional[Sequence[str]] = None) -> None:
        super().__init__(path, split=split, expect=expect, audio=True, exclude_flags=exclude_flags)
        self.L = int(segment_frames)
        if self.L < 1:
            raise ValueError("segment_frames must be >= 1")
        self.hop = self.cache.hop
        self.eval = eval
        self.linear: Optional[XttsCache] = None
        if linear_path is not None:
            self.linear = XttsCache(linear_path)
            for k in ("sample_rate", "hop_samples"):
                if self.linear.config["mel"][k] != self.cache.config["mel"][k]:
                    raise CacheError("%s: %s %r differs from %s's %r" % (linear_path, k, self.linear.config["mel"][k],
                                                                          path, self.cache.config["mel"][k]))

    def segment(self, gi: int, f: int) -> dict[str, Any]:
        """Aligned segment of global record gi at frame f (exactly formats/cache.md 3.4)."""
        r = self.cache.get(gi)
        return self._cut(gi, f, r["id"], r["mel"], self.cache.waveform(gi))

    def _cut(self, gi: int, f: int, rid: str, full_mel: npt.NDArray[np.float32],
             wav16: npt.NDArray[np.int16]) -> dict[str, Any]:
        """The segment at frame f of record gi (id rid, its mel and waveform), copied out."""
        L, hop = self.L, self.hop
        n_frames = full_mel.shape[1]
        mel = np.full((full_mel.shape[0], L), self.mel_pad_value(), dtype=np.float32)
        src = full_mel[:, f:f + L]
        mel[:, :src.shape[1]] = src
        wav = np.zeros(L * hop, dtype=np.float32)
        piece = wav16[f * hop:(f + L) * hop]
        wav[:len(piece)] = piece.astype(np.float32) / np.float32(32768)
        item: dict[str, Any] = dict(index=gi, id=rid, wav=wav, mel=mel, start_frame=f)
        if self.linear is not None:
            lr = self.linear.get(self.linear.index_of(rid))
            if lr["n_frames"] != n_frames:
                raise CacheError("%s: id '%s' has %d frames, %s has %d" % (self.linear.path, rid, lr["n_frames"],
                                                                           self.cache.path, n_frames))
            lin = np.zeros((lr["mel"].shape[0], L), dtype=np.float32)
            s = lr["mel"][:, f:f + L]
            lin[:, :s.shape[1]] = s
            item["linear"] = lin
        return item

    def _start(self, i: int) -> int:
        """A segment's first frame in item i (a random draw unless eval)."""
        n = int(self.lengths["n_frames"][i])
        return 0 if self.eval or n <= self.L else random.randint(0, n - self.L)

    def __getitem__(self, i: int) -> dict[str, Any]:
        gi = int(self.indices[i])
        return self.segment(gi, self._start(i))

    def __getitems__(self, positions: Sequence[int]) -> list[dict[str, Any]]:
        """[self[i] for i in positions] (the same random draws, in the same order), the records
        read with one call into the library into reused buffers."""
        if not len(positions):
            return []
        starts = [self._start(int(i)) for i in positions]
        got = self._read_many(positions, True)
        if got is None:
            return [self.segment(int(self.indices[int(i)]), f) for i, f in zip(positions, starts)]
        return [self._cut(gi, f, it["id"], it["mel"], it["wave"]) for gi, it, f in zip(got[0], got[1], starts)]
