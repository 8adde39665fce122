"""The cache reader (formats/cache.md): XttsCache.

Needs numpy. Records are read through one of two backends (_backends.py): the C library
(libxtts-reader.so, _clib.py) when it loads, which needs nothing more, or the pure-Python
reader, which needs py-lmdb and zstandard (the "fallback" extra, _fallback.py, imported
when first used). Either opens its handles lazily in each process (an LMDB environment
opened before fork() and used in the child is a known source of MDB_CORRUPTED and
reader-table errors); an XttsCache pickles without them, so it travels into spawn-started
workers too.

Every record is checked as the C reader checks it (record.py: header CRC-32, shape,
section and zstd checksums; lmdbcheck.py: the shard's LMDB pages before py-lmdb reads
them); damage raises CacheError naming the shard, index and id. Both backends give the
same values.

Fixed-shape batches (read_batch) are decoded by the C reader straight into numpy arrays or
torch tensors when the backend is "c", and by the pure-Python reader otherwise; both give
identical arrays.
"""

from __future__ import annotations

import hashlib
import os
import stat
import struct
import sys
import zlib
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, Dict, Iterator, Optional, Sequence, TypedDict, Union

import numpy as np
if TYPE_CHECKING:   # numpy.typing is numpy 1.20 or later (Debian 11 has 1.19): for annotations only
    import numpy.typing as npt

from . import _clib
from . import quality as _quality
from ._backends import MIN_RECORD_BYTES, Backend, CBackend, PyBackend, _dir_ident
from .lmdbcheck import check_lmdb_structure as check_lmdb_structure
from .manifest import SHARED_VERSION, CacheError, CacheResourceError as CacheResourceError, load_manifest
# the record codec and the LMDB check lived in this module before record.py and
# lmdbcheck.py; their public names are still importable from here
from .record import (DTYPE_F16 as DTYPE_F16, DTYPE_F32 as DTYPE_F32, FLAG_SHUFFLED as FLAG_SHUFFLED,
                     LENGTH_FIELDS as LENGTH_FIELDS, MAX_FRAMES as MAX_FRAMES, MAX_ID as MAX_ID,
                     MAX_MELS as MAX_MELS, MAX_TOKENS as MAX_TOKENS, PAYLOAD_MAX as PAYLOAD_MAX,
                     RECORD_MAGIC as RECORD_MAGIC, RECORD_VERSION as RECORD_VERSION,
                     decode_record as decode_record, parse_header as parse_header)
from .record import Header, RecordHeaderV2, parse_record_header, record_error

__all__ = ["XttsCache", "CacheError", "CacheResourceError", "LENGTH_FIELDS"]


BACKENDS = ("auto", "c", "python")

# language ids a cache without a "languages" table may carry (XTTS's 17, formats/record.h)
_BUILTIN_LANGS = 17


@dataclass(frozen=True)
class Shard:
    """A shard of the cache, as the manifest lists it: directory name, global index of
    its first record, its record count and its size in bytes. s["name"] reads a field
    too, as it did when shards were dicts."""
    name: str
    first: int
    records: int
    bytes: int
    local_first: int = 0   # the directory's local key of its first record (format_version 3)
    ranged: bool = False   # a range of a shared directory: keys outside it are not its records

    def __getitem__(self, key: str) -> Any:
        if key not in _SHARD_FIELDS:
            raise KeyError(key)
        return getattr(self, key)


_SHARD_FIELDS = frozenset(f.name for f in fields(Shard))


class Record(TypedDict):
    """A record as XttsCache.get returns it."""
    index: int
    id: str
    speaker_id: int
    lang_id: int
    speaker: Optional[str]
    lang: Optional[str]
    split: str
    n_tokens: int
    n_frames: int
    n_samples: int
    tokens: npt.NDArray[np.int32]
    mel: npt.NDArray[np.float32]


class XttsCache:
    """A cache directory: manifest.json plus shard-*/ LMDB environments.

    cache[i] (i may be negative) returns the record at global index i as a dict (see
    get()). padded sets the default of get()'s padded argument.

    backend chooses who decodes read_batch's fixed-shape batches: "c" the C reader
    (libxtts-reader.so; CacheError when it cannot be loaded), "python" the pure-Python
    reader, "auto" (the default) the C reader when its library loads, else Python. threads
    is read_batch's default number of C decoding threads (1: the calling thread only).
    """

    def __init__(self, path: Union[str, os.PathLike[str]], padded: bool = False, backend: str = "auto",
                 threads: int = 1) -> None:
        self.path = os.fspath(path)
        # the directory as opened: a shard (re)opened after an update or a rebuild exchanged it
        # would be the new cache's under the old manifest, so each opening checks it first
        self.dir_ident = _dir_ident(self.path)
        self.padded = padded
        if backend not in BACKENDS:
            raise ValueError("backend %r: one of %s" % (backend, ", ".join(BACKENDS)))
        if backend == "c" and _clib.library() is None:
            raise CacheError("%s: backend='c', but the C library is not available (%s)"
                             % (self.path, _clib.load_error()))
        self.backend = "c" if backend != "python" and _clib.library() is not None else "python"
        self.threads = max(1, int(threads))
        self._store: Optional[Backend] = None   # made on first use (_backend)
        self._flags_cache: Dict[Optional[str], tuple[npt.NDArray[np.uint32], npt.NDArray[np.int64]]] = {}
        mpath = os.path.join(self.path, "manifest.json")
        self.manifest = m = load_manifest(mpath)   # checked as the C loader checks it
        self.manifest_version: int = m["format_version"]
        # the shards' and records' format: a format_version 3 manifest lists a format 2 cache
        self.format_version: int = 2 if m["format_version"] == SHARED_VERSION else m["format_version"]
        self.config: dict[str, Any] = m["config"]
        self.config_hash: str = m["config_hash"]
        self.n_mels: int = self.config["mel"]["n_mels"]
        self.sample_rate: int = self.config["mel"]["sample_rate"]
        self.hop: int = self.config["mel"]["hop_samples"]
        self.max_tokens: int = self.config["max_tokens"]
        self.pad_token: int = self.config["pad_token"]
        self.audio: str = self.config.get("audio", "none")
        self.max_frames: int = max([self.config["max_frames"]] + self.config["buckets"])
        ranged = m["format_version"] == SHARED_VERSION
        self.shards = [Shard(name=s["name"], first=s["first_index"], records=s["records"], bytes=s["bytes"],
                             local_first=s.get("local_first", 0), ranged=ranged)
                       for s in m["shards"]]
        self._check_claimed_counts()
        first: int = m["records"]
        self._count = first
        self._firsts = [s.first for s in self.shards]
        self.speakers: list[str] = list(m.get("speakers", []))
        self.languages: list[str] = list(m.get("languages", []))
        if backend == "auto" and self.backend == "python":
            _clib.warn_fallback(stacklevel=2)   # once per process, naming where it looked

    def _check_claimed_counts(self) -> None:
        """Refuse a manifest that gives a shard more records than its data.mdb can hold (a
        stat, no descriptor kept), so that no work or array is sized by a forged count. A
        missing data file is reported when the shard is read."""
        for s in self.shards:
            data = os.path.join(self.path, s.name, "data.mdb")
            try:
                st = os.stat(data)
            except OSError:
                continue
            if not stat.S_ISREG(st.st_mode):   # a FIFO or a device: opening it could block
                raise CacheError("%s: damaged (%s is not a regular file)" % (s.name, data))
            size = st.st_size
            if s.records > size // MIN_RECORD_BYTES:
                raise CacheError("%s: the manifest says %d records, data.mdb of %d bytes holds at most %d"
                                 % (s.name, s.records, size, size // MIN_RECORD_BYTES))

    # -- the backend ------------------------------------------------------------------------------

    def _backend(self) -> Backend:
        """The backend that reads for this cache (made on first use; it opens its handles in
        each process that reads)."""
        if self._store is None:
            self._store = CBackend(self) if self.backend == "c" else PyBackend(self)
        return self._store

    def _c(self) -> _clib.CHandle:
        """This process's C handle (backend "c")."""
        b = self._backend()
        assert isinstance(b, CBackend)
        return b.handle()

    def close(self) -> None:
        """Close this process's handles (reopened on the next read)."""
        if self._store is not None:
            self._store.close()

    def __getstate__(self) -> dict[str, Any]:
        # Pickled into spawn-started workers: no handles travel.
        d = dict(self.__dict__)
        d["_store"] = None
        return d

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    # -- lookups ------------------------------------------------------------------------------

    def __len__(self) -> int:
        return self._count

    def _locate(self, index: int) -> tuple[int, int]:
        if index < 0:
            index += self._count
        if not 0 <= index < self._count:
            raise IndexError("index %d out of range (%d records)" % (index, self._count))
        lo, hi = 0, len(self.shards)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if self._firsts[mid] <= index:
                lo = mid
            else:
                hi = mid
        while index >= self.shards[lo].first + self.shards[lo].records:
            lo += 1
        return index, lo

    def shard_of(self, index: int) -> str:
        """Name of the shard holding index."""
        return self.shards[self._locate(index)[1]].name

    def raw(self, index: int) -> tuple[int, int, bytes]:
        """(index, shard number, stored bytes) of record index."""
        index, si = self._locate(index)
        return index, si, self._backend().record(index, si)

    def _error(self, si: int, index: int, buf: bytes, e: Exception) -> CacheError:
        return record_error(self.shards[si].name, index, buf, e)

    def header(self, index: int) -> dict[str, Any]:
        """The record's header fields (dict) without decompressing."""
        return self._header(index).as_dict()

    def _header(self, index: int) -> Header:
        index, si, buf = self.raw(index)
        try:
            h = parse_record_header(buf)
            self._check_table_ids(h)
            return h
        except CacheError as e:
            raise self._error(si, index, buf, e) from None

    def _check_table_ids(self, h: Header) -> None:
        """The ids a record carries index the manifest's tables: each must lie inside its
        table when the manifest has one (an empty table holds none; without "languages",
        the built-in 17), as the C reader checks."""
        m = self.manifest
        if "speakers" in m and h.speaker_id >= len(self.speakers):
            raise CacheError("speaker id %d outside the manifest's %d speakers" % (h.speaker_id, len(self.speakers)))
        n_langs = len(self.languages) if "languages" in m else _BUILTIN_LANGS
        if h.lang_id >= n_langs:
            raise CacheError("language id %d outside the manifest's %d languages" % (h.lang_id, n_langs))

    def _decoded(self, index: int, check_ids: bool = True
                 ) -> tuple[int, Header, npt.NDArray[np.int32], npt.NDArray[Any]]:
        """(index, header, tokens int32 [tokens_padded], mel [n_mels, frames_padded] as stored)
        of record index, checked: its header, its n_mels, and (check_ids) its speaker and
        language ids against the manifest's tables."""
        index, si, buf = self.raw(index)
        try:
            h = parse_record_header(buf)
            if check_ids:
                self._check_table_ids(h)
            if h.n_mels != self.n_mels:
                raise CacheError("%d mel channels, the cache has %d" % (h.n_mels, self.n_mels))
        except CacheError as e:
            raise self._error(si, index, buf, e) from None
        tokens, mel = self._backend().decode(index, si, buf, h)
        return index, h, tokens, mel

    def get(self, index: int, padded: Optional[bool] = None) -> Record:
        """Record index as a dict: index, id, speaker (name or None), lang (code or None),
        speaker_id, lang_id, split ("train"/"val"), n_tokens, n_frames, n_samples,
        tokens (int32) and mel (float32 [n_mels, frames]). Unpadded by default; with
        padded=True tokens is (max_tokens,) padded with the pad token and mel is
        (n_mels, max_frames) padded with the record's pad value."""
        if padded is None:
            padded = self.padded
        index, h, tokens, mel = self._decoded(index)
        nt, nf = h.n_tokens, h.n_frames
        if padded:
            if h.tokens_padded > self.max_tokens or h.frames_padded > self.max_frames:
                raise CacheError("%s: index %d, id '%s': padded shape exceeds the cache's"
                                 % (self.shard_of(index), index, h.id))
            t = np.full(self.max_tokens, self.pad_token, dtype=np.int32)
            t[:h.tokens_padded] = tokens
            m = np.empty((self.n_mels, self.max_frames), dtype=np.float32)
            m[:, :h.frames_padded] = mel      # widened to float32 on the way
            m[:, h.frames_padded:] = mel.dtype.type(h.pad_value) if h.version == 2 else np.float32(h.pad_value)
            tokens, mel = t, m
        else:
            tokens = tokens[:nt].copy()
            mel = mel[:, :nf].astype(np.float32)  # a contiguous copy of the real frames
        sid, lid = h.speaker_id, h.lang_id
        return Record(index=index, id=h.id, speaker_id=sid, lang_id=lid,
                      speaker=self.speakers[sid] if sid < len(self.speakers) else None,
                      lang=self.languages[lid] if lid < len(self.languages) else None,
                      split="val" if h.split else "train", n_tokens=nt, n_frames=nf,
                      n_samples=h.n_samples, tokens=tokens, mel=mel)

    def __getitem__(self, index: int) -> Record:
        return self.get(index)

    # -- fixed-shape batches --------------------------------------------------------------------

    def batch_arrays(self, n: int, max_tokens: Optional[int] = None, max_frames: Optional[int] = None,
                     mel_dtype: npt.DTypeLike = np.float32, to_torch: bool = False,
                     pin_memory: Optional[bool] = None) -> dict[str, Any]:
        """Empty output arrays for read_batch(..., out=): a dict of numpy arrays, or with
        to_torch=True of torch tensors (in pinned host memory when pin_memory is True, or
        when it is None and CUDA is available)."""
        T = self.max_tokens if max_tokens is None else int(max_tokens)
        F = self.max_frames if max_frames is None else int(max_frames)
        mdt = np.dtype(mel_dtype)
        if mdt not in (np.float32, np.float16):
            raise ValueError("mel_dtype %s: float32 or float16" % mdt)
        shapes: dict[str, tuple[tuple[int, ...], Any]] = dict(
                      tokens=((n, T), np.int32), mel=((n, self.n_mels, F), mdt),
                      n_tokens=((n,), np.int32), n_frames=((n,), np.int32), speaker_id=((n,), np.int32),
                      lang_id=((n,), np.int32), split=((n,), np.uint8), index=((n,), np.int64))
        if not to_torch:
            return {k: _aligned_empty(shape, dt) for k, (shape, dt) in shapes.items()}
        import torch
        if pin_memory is None:
            pin_memory = torch.cuda.is_available()
        tdt = {np.dtype(np.int32): torch.int32, np.dtype(np.float32): torch.float32,
               np.dtype(np.float16): torch.float16, np.dtype(np.uint8): torch.uint8, np.dtype(np.int64): torch.int64}
        return {k: torch.empty(shape, dtype=tdt[np.dtype(dt)], pin_memory=bool(pin_memory))
                for k, (shape, dt) in shapes.items()}

    def read_batch(self, indices: npt.ArrayLike, out: Optional[dict[str, Any]] = None, threads: Optional[int] = None,
                   max_tokens: Optional[int] = None, max_frames: Optional[int] = None,
                   mel_dtype: npt.DTypeLike = np.float32, to_torch: bool = False,
                   pin_memory: Optional[bool] = None) -> dict[str, Any]:
        """Records indices as one fixed-shape batch, the rows xtts-train's loader fills
        (cache/store/read/reader.h, xtts_batch): a dict of
            tokens      int32   [B, max_tokens]   stored tokens, then the pad token
            mel         float32 [B, n_mels, max_frames] (or float16 with mel_dtype): the
                        stored frames, then the record's pad value
            n_tokens, n_frames, speaker_id, lang_id  int32 [B];  split uint8 [B];  index int64 [B]
        max_tokens / max_frames default to the cache's (the largest bucket); smaller ones
        must still hold each record's padded lengths. Decoded by the C reader (threads
        threads, default self.threads) when backend is "c", else in Python; the arrays are
        identical. to_torch=True returns torch tensors (pinned when pin_memory, or when it
        is None and CUDA is available), decoded straight into them by the C reader. out=
        reuses arrays or tensors from batch_arrays(len(indices), ...) of the same shapes.
        Raises IndexError for an index out of range and CacheError for a damaged record
        (naming the shard, the index and the id)."""
        idx = np.array(indices, dtype=np.int64).reshape(-1)
        n = len(idx)
        neg = idx < 0
        if neg.any():
            idx[neg] += self._count
        bad = (idx < 0) | (idx >= self._count)
        if bad.any():
            raise IndexError("index %d out of range (%d records)" % (int(np.array(indices).reshape(-1)[bad][0]),
                                                                     self._count))
        T = self.max_tokens if max_tokens is None else int(max_tokens)
        F = self.max_frames if max_frames is None else int(max_frames)
        if T < 1 or F < 1:
            raise ValueError("max_tokens and max_frames must be >= 1")
        if out is None:
            out = self.batch_arrays(n, T, F, mel_dtype, to_torch, pin_memory)
        else:
            want = self.batch_arrays(0, T, F, mel_dtype)
            for k, a in want.items():
                got = out.get(k)
                if got is None or tuple(got.shape) != (n,) + a.shape[1:] or not _same_dtype(got, a.dtype) \
                        or not _contiguous(got):
                    raise ValueError("out[%r]: a contiguous %s array of shape %s expected (batch_arrays)"
                                     % (k, a.dtype, ((n,) + a.shape[1:],)))
        if self.backend == "c":
            self._read_batch_c(idx, out, T, F, self.threads if threads is None else max(1, int(threads)))
        else:
            self._read_batch_py(idx, {k: _as_numpy(v) for k, v in out.items()}, T, F)
        return out

    def _read_batch_c(self, idx: npt.NDArray[np.int64], out: dict[str, Any], T: int, F: int, threads: int) -> None:
        h = self._c()
        ptr = {k: _data_ptr(v) for k, v in out.items()}
        mel_f16 = _same_dtype(out["mel"], np.float16)
        _as_numpy(out["index"])[:] = idx
        h.read_batch(ptr["index"], len(idx), ptr["tokens"], T, ptr["mel"], _clib.MEL_F16 if mel_f16 else _clib.MEL_F32,
                     F, ptr["n_tokens"], ptr["n_frames"], ptr["speaker_id"], ptr["lang_id"], ptr["split"], threads)

    def _read_batch_py(self, idx: npt.NDArray[np.int64], out: dict[str, npt.NDArray[Any]], T: int, F: int) -> None:
        tok, mel = out["tokens"], out["mel"]
        for k, gi in enumerate(idx.tolist()):
            index, h, tokens, m = self._decoded(gi)
            tp, fp = h.tokens_padded, h.frames_padded
            if tp > T or fp > F:
                raise CacheError("%s: index %d, id '%s': padded shape (%d tokens, %d frames) does not fit the "
                                 "batch's (%d, %d)" % (self.shard_of(index), index, h.id, tp, fp, T, F))
            tok[k, :tp] = tokens
            tok[k, tp:] = self.pad_token
            mel[k, :, :fp] = m
            # the pad value as the C decoder writes it: rounded to the stored dtype (version 2)
            mel[k, :, fp:] = m.dtype.type(h.pad_value) if h.version == 2 else np.float32(h.pad_value)
            out["n_tokens"][k] = h.n_tokens
            out["n_frames"][k] = h.n_frames
            out["speaker_id"][k] = h.speaker_id
            out["lang_id"][k] = h.lang_id
            out["split"][k] = h.split
        out["index"][:] = idx

    def __iter__(self) -> Iterator[Record]:
        for i in range(self._count):
            yield self.get(i)

    def index_of(self, rid: Union[str, bytes]) -> int:
        """Global index of utterance id rid; KeyError when absent."""
        key = rid.encode("utf-8") if isinstance(rid, str) else bytes(rid)
        if not 0 < len(key) <= MAX_ID or b"\0" in key:
            raise KeyError(rid)
        got = self._backend().find(key, str(rid))   # str(rid): as "%s" shows it
        if got is None:
            raise KeyError(rid)
        return got

    def content_key(self, index: int) -> bytes:
        """The 32-byte content key of record index (formats/cache.md, "Content keys"): what
        the audio codes directories are keyed by. CacheError for a cache built before
        content keys, or a record without one."""
        index, si = self._locate(index)
        return self._backend().content_key(index, si)

    def meta(self, shard: int, key: Union[str, bytes]) -> Optional[bytes]:
        """A value of a shard's "meta" database (bytes) or None."""
        if not 0 <= shard < len(self.shards):
            raise IndexError("shard %d out of range (%d shards)" % (shard, len(self.shards)))
        return self._backend().meta(shard, key.encode() if isinstance(key, str) else bytes(key))

    def has_metrics(self) -> bool:
        """True when the cache stores the records' quality metrics (built with them)."""
        return self._backend().has_metrics()

    def metrics_bytes(self, index: int) -> bytes:
        """Record index's stored quality metrics (104 bytes, formats/cache.md 3.5); CacheError
        when the cache has none or they are missing."""
        index, si = self._locate(index)
        return self._backend().metrics_bytes(index, si)

    def metrics(self, index: int) -> dict[str, Any]:
        """Record index's quality metrics as a dict (xtts_prep.quality.decode_metrics): the
        columns of xtts-cache-report's TSV, and version."""
        try:
            return _quality.decode_metrics(self.metrics_bytes(index))
        except CacheError as e:
            raise CacheError("%s: index %d: %s" % (self.shard_of(index), index, e)) from None

    def quality_flags(self, thresholds: Optional[Dict[str, float]] = None
                      ) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.int64]]:
        """Every record's quality flags (uint32 bitmasks of 1 << flag, xtts_prep.quality.FLAG_NAMES)
        and dup_of (int64, -1 none), as xtts-cache-report decides them; thresholds: keys of the
        thresholds file (docs/quality.md) to change. Computed once per thresholds."""
        text = _quality.thresholds_text(thresholds)
        got = self._flags_cache.get(text)
        if got is not None:
            return got
        n = self._count
        if self.backend == "c" and self._c().has_quality_flags():
            flags, dup_of = np.zeros(n, dtype=np.uint32), np.zeros(n, dtype=np.int64)
            self._c().quality_flags(text, flags.ctypes.data, dup_of.ctypes.data, n)
        else:
            if not self.has_metrics():
                raise CacheError("%s: the cache stores no quality metrics (built before them)" % self.path)
            flags, dup_of = _quality.flag_all([self.metrics(i) for i in range(n)],
                                              self.lengths()["speaker_id"].tolist(), thresholds)
        self._flags_cache[text] = (flags, dup_of)
        return flags, dup_of

    def flags(self, index: int, thresholds: Optional[Dict[str, float]] = None) -> list[str]:
        """Record index's quality flag names (the report's TSV column, as a list)."""
        index = self._locate(index)[0]
        return _quality.flag_names(int(self.quality_flags(thresholds)[0][index]))

    def has_lengths_index(self) -> bool:
        """True when the shards hold the lengths index (format 2, formats/cache.md 3.3)."""
        return self.format_version >= 2

    def lengths(self) -> npt.NDArray[np.void]:
        """Every record's lengths in global index order, as a numpy structured array with
        the fields of LENGTH_FIELDS. From the lengths index (one cursor pass per shard)
        when the cache has one; a version-1 cache has none, so each record's header is
        read instead (no decompression)."""
        return self._backend().lengths()

    def _sections(self, index: int, want_wav: bool) -> tuple[int, int, bytes, RecordHeaderV2]:
        index, si, buf = self.raw(index)
        try:
            h = parse_record_header(buf)
            if not isinstance(h, RecordHeaderV2):
                raise CacheError("record version 1 stores no text and no waveform")
            if want_wav and len(h.sections) < 4:
                raise CacheError("no waveform section (cache built with --audio none)")
            return index, si, buf, h
        except CacheError as e:
            raise self._error(si, index, buf, e) from None

    def text(self, index: int) -> tuple[str, str]:
        """(original, normalized) transcript of a version-2 record (formats/cache.md 3.2)."""
        index, si, buf, h = self._sections(index, False)
        orig, norm = self._backend().text(index, si, buf, h)
        try:
            return orig.decode("utf-8"), norm.decode("utf-8")
        except UnicodeDecodeError:
            raise self._error(si, index, buf, CacheError("text section is not UTF-8")) from None

    def waveform(self, index: int) -> npt.NDArray[np.int16]:
        """The stored waveform of a version-2 record built with --audio int16|flac, as
        int16 [n_samples] at the mel sample rate (divide by 32768 for the signal the mel
        was computed from)."""
        index, si, buf, h = self._sections(index, True)
        s = h.sections[3]
        if s.codec == 1:
            return self._backend().wave(index, si, buf, h)
        try:   # FLAC: neither backend decodes it (the C library has no FLAC codec): soundfile does
            body = bytes(buf[s.offset:s.offset + s.stored])
            if zlib.crc32(body) != s.crc:
                raise CacheError("waveform section checksum mismatch")
            try:
                import io
                import soundfile
            except ImportError:
                raise CacheError("FLAC waveform: python3-soundfile is not installed") from None
            try:
                wav, sr = soundfile.read(io.BytesIO(body), dtype="int16")
            except Exception as e:  # soundfile raises its own and RuntimeError
                raise CacheError("FLAC waveform: %s" % e) from None
            if wav.ndim != 1 or len(wav) != h.n_samples or sr != self.sample_rate:
                raise CacheError("FLAC waveform: %s samples at %d Hz, the header says %d at %d"
                                 % (wav.shape, sr, h.n_samples, self.sample_rate))
            pcm: npt.NDArray[np.int16] = wav
            return pcm
        except CacheError as e:
            raise self._error(si, index, buf, e) from None

    def digest(self) -> str:
        """Content digest, as xtts-cache-verify prints it (docs/xtts-cache-verify.md, "Content digest")."""
        s = hashlib.sha256()
        for i in range(self._count):
            _, h, tokens, mel = self._decoded(i, check_ids=False)
            idb = h.id.encode("utf-8")
            s.update(struct.pack("<I", len(idb)) + idb)
            s.update(struct.pack("<IIIIIIB", h.n_tokens, h.n_frames, h.n_mels, h.n_samples,
                                 h.speaker_id, h.lang_id, h.split))
            s.update(tokens[:h.n_tokens].astype("<i4").tobytes())
            s.update(mel[:, :h.n_frames].astype("<f4").tobytes())
        return s.hexdigest()


def _aligned_empty(shape: tuple[int, ...], dtype: npt.DTypeLike, align: int = 64) -> npt.NDArray[Any]:
    """np.empty on a 64-byte boundary. The C decoder writes large batches with
    non-temporal stores from the first 32-byte aligned element of each mel row on; rows
    that start off a cache line mix them with ordinary stores in one line, which costs
    about a third of the decoding speed (numpy's own large arrays start 16 bytes into a
    page)."""
    dt = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
    raw = np.empty(nbytes + align, dtype=np.uint8)
    off = (-raw.ctypes.data) % align
    return raw[off:off + nbytes].view(dt).reshape(shape)


# Output arrays are numpy arrays or torch tensors (torch is optional: typed as Any).

def _as_numpy(a: Any) -> npt.NDArray[Any]:
    if isinstance(a, np.ndarray):
        return a
    arr: npt.NDArray[Any] = a.numpy()
    return arr


def _same_dtype(a: Any, dt: npt.DTypeLike) -> bool:
    if isinstance(a, np.ndarray):
        return bool(a.dtype == dt)
    return bool(_as_numpy(a[:0]).dtype == dt) if a.device.type == "cpu" else False


def _contiguous(a: Any) -> bool:
    if isinstance(a, np.ndarray):
        return a.flags.c_contiguous
    return bool(a.is_contiguous() and a.device.type == "cpu")


def _data_ptr(a: Any) -> int:
    if isinstance(a, np.ndarray):
        return a.ctypes.data
    ptr: int = a.data_ptr()
    return ptr


def _main(argv: Sequence[str]) -> int:
    """The command line (cli.py), by its former name."""
    from .cli import main
    return main(argv)


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
