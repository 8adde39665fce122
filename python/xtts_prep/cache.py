"""The cache reader (formats/cache.md): XttsCache.

Needs numpy, and libxtts-reader.so (_clib.py), the package's one decoder of the cache: the
manifest is checked, records are read and checked (header CRC-32, shape, section and zstd
checksums, LMDB pages under the library's fault guard), quality metrics, content keys and audio
codes are read by it; this module only shapes its results. Damage raises CacheError naming the
shard, the index and the id.

A cache directory is opened (its files mapped) once per process however many XttsCache objects
read it, lazily again in each process that reads (an LMDB environment opened before fork() and
used in the child is a known source of MDB_CORRUPTED); an XttsCache pickles without its handle,
so it travels into spawn-started workers too. A dataset item is one call into the library
(_items: header, tokens, mel, waveform, content key and codes from one lookup of the record), a
batch of them one call too (ItemBuffers, into buffers a dataset reuses).
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import struct
import sys
import zlib
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, Dict, Iterator, Optional, Sequence, TypedDict, Union

from ctypes import c_size_t as ctypes_size_t, c_void_p as ctypes_void_p, create_string_buffer as ctypes_buffer

import numpy as np
if TYPE_CHECKING:   # numpy.typing is numpy 1.20 or later (Debian 11 has 1.19): for annotations only
    import numpy.typing as npt

from . import _clib
from . import quality as _quality
from ._clib import F
from .codes import codes_count as _codes_count
from .manifest import SHARED_VERSION, CacheError, CacheResourceError as CacheResourceError

__all__ = ["XttsCache", "CacheError", "CacheResourceError", "LENGTH_FIELDS", "ItemBuffers"]

BACKENDS = ("auto", "c")
LENGTH_FIELDS = ("n_frames", "n_tokens", "n_samples", "speaker_id", "lang_id", "split", "flags")
LENGTH_DTYPE = np.dtype([(f, np.uint8 if f in ("split", "flags") else np.uint32) for f in LENGTH_FIELDS])
MAX_ID = 1024
# the least a record takes in data.mdb: its 8-byte key and a record header
MIN_RECORD_BYTES = 8 + 64
_SECTION_KEYS = ("kind", "codec", "flags", "offset", "stored", "raw", "crc")
_COMMON_KEYS = ("id", "version", "dtype", "flags", "n_mels", "split", "id_len", "n_tokens", "tokens_padded",
                "n_frames", "frames_padded", "speaker_id", "lang_id", "n_samples")
_AUDIO = ("none", "int16", "flac")
_REPLACED = ("%s: the cache was replaced while it was read (an update or a rebuild exchanged the directory); "
             "open it again to read the new one")


def _dir_ident(path: str) -> Optional[tuple[int, int]]:
    """(device, inode) of the directory path, None when it cannot be had."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def _file_ident(path: str) -> Optional[tuple[int, int, int, int]]:
    """(inode, size, mtime) of a file, None when it cannot be had."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


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


def header_dict(f: npt.NDArray[np.uint64], rid: str) -> dict[str, Any]:
    """A record's header as header(i) returns it, from a row of xtts_api_read_items' fields."""
    d: dict[str, Any] = {"id": rid}
    for k, name in zip((F.VERSION, F.DTYPE, F.FLAGS, F.N_MELS, F.SPLIT, F.ID_LEN, F.N_TOKENS, F.TOKENS_PADDED,
                        F.N_FRAMES, F.FRAMES_PADDED, F.SPEAKER_ID, F.LANG_ID, F.N_SAMPLES), _COMMON_KEYS[1:]):
        d[name] = int(f[k])
    pad_value: float = struct.unpack("<f", struct.pack("<I", int(f[F.PAD_VALUE])))[0]
    if d["version"] == 1:
        d.update(payload_bytes=int(f[F.PAYLOAD_BYTES]), frame_bytes=int(f[F.FRAME_BYTES]), pad_value=pad_value,
                 frame_crc=int(f[F.FRAME_CRC]))
        return d
    n_sec = int(f[F.N_SECTIONS])
    sections = [{name: int(f[F.SECTIONS + 7 * i + j]) for j, name in enumerate(_SECTION_KEYS)} for i in range(n_sec)]
    d.update(pad_token=int(f[F.PAD_TOKEN]), trim_start=int(f[F.TRIM_START]), pad_value=pad_value, sections=sections,
             audio=_AUDIO[int(f[F.AUDIO])] if int(f[F.AUDIO]) < 3 else "none")
    return d


class Item(TypedDict, total=False):
    """What _items gives of one record: its fields row (F), id, and the parts asked for."""
    fields: npt.NDArray[np.uint64]
    id: str
    tokens: npt.NDArray[np.int32]
    mel: npt.NDArray[Any]
    wave: npt.NDArray[np.int16]
    key: bytes
    codes: npt.NDArray[np.uint16]


class ItemBuffers:
    """Buffers for reading a batch of records with one call of xtts_api_read_items: one block
    per part (tokens, mel, waveform, content key, codes), the batch's records laid end to end in
    it, grown to the largest batch seen and reused, with the pointer, size, fields and id rows
    beside them. What read() gives points into the blocks and is valid until its next call, so
    the caller copies out what it keeps. Held by a dataset, never pickled (a process builds its
    own on its first batch)."""

    _PARTS = ((_clib.PART_TOKENS, "tokens", np.int32), (_clib.PART_MEL, "mel", np.float32),
              (_clib.PART_WAVE, "wave", np.int16), (_clib.PART_KEY, "key", np.uint8),
              (_clib.PART_CODES, "codes", np.uint16))

    def __init__(self) -> None:
        self.blocks: dict[str, npt.NDArray[Any]] = {}
        self.rows = 0
        self.ptrs = np.zeros((0, _clib.ITEM_PARTS), dtype=np.uint64)    # [rows, ITEM_PARTS] addresses
        self.caps = np.zeros((0, _clib.ITEM_PARTS), dtype=np.uint64)    # [rows, ITEM_PARTS] element counts
        self.fields = np.zeros((0, _clib.ITEM_FIELDS), dtype=np.uint64)
        self.ids = np.zeros(0, dtype=np.uint8)                          # ID_CAP bytes a row

    def _grow_rows(self, n: int) -> None:
        if n <= self.rows:
            return
        self.rows = n
        self.ptrs = np.zeros((n, _clib.ITEM_PARTS), dtype=np.uint64)
        self.caps = np.zeros((n, _clib.ITEM_PARTS), dtype=np.uint64)
        self.fields = np.zeros((n, _clib.ITEM_FIELDS), dtype=np.uint64)
        self.ids = np.zeros(n * _clib.ID_CAP, dtype=np.uint8)

    def read(self, cache: "XttsCache", indices: npt.NDArray[np.int64], sizes: npt.NDArray[np.void],
             tokens: bool = False, mel: bool = False, wave: bool = False,
             codes: Optional[_clib.CCodes] = None) -> Optional[list[Item]]:
        """The records at indices (global, in range), sizes their rows of lengths(), read as
        XttsCache._items reads them (float32 mel) but in one call into these buffers; None when
        the call fails (the caller reads them one by one, which raises the error as a single
        read does)."""
        n = len(indices)
        self._grow_rows(n)
        count: dict[str, npt.NDArray[np.int64]] = {}
        if tokens:
            count["tokens"] = sizes["n_tokens"].astype(np.int64)
        if mel:
            count["mel"] = sizes["n_frames"].astype(np.int64) * cache.n_mels
        if wave:
            count["wave"] = sizes["n_samples"].astype(np.int64)
        if codes is not None:
            count["key"] = np.full(n, 32, dtype=np.int64)
            count["codes"] = np.array([_codes_count(int(s)) for s in sizes["n_samples"]], dtype=np.int64)
        start: dict[str, npt.NDArray[np.int64]] = {}
        for part, name, dtype in self._PARTS:
            c = count.get(name)
            if c is None:
                self.ptrs[:n, part] = 0
                self.caps[:n, part] = 0
                continue
            line = 64 // np.dtype(dtype).itemsize     # each record's part starts on a cache line (_aligned_empty)
            room = (c + line - 1) // line * line
            need = int(room.sum())
            block = self.blocks.get(name)
            if block is None or block.shape[0] < need:
                block = self.blocks[name] = _aligned_empty((need + need // 4,), dtype)
            start[name] = np.cumsum(room) - room
            self.ptrs[:n, part] = np.uint64(block.ctypes.data) + (start[name] * block.itemsize).astype(np.uint64)
            self.caps[:n, part] = c.astype(np.uint64)
        rc = cache._c().read_items(codes, np.ascontiguousarray(indices, dtype=np.uint64), _clib.MEL_F32,
                                   self.ptrs.ctypes.data, self.caps.ctypes.data, self.fields[:n], self.ids.ctypes.data)
        if rc:
            return None
        rows = self.fields[:n]
        id_len, n_tok, n_fr, n_smp, n_codes = (rows[:, j].tolist() for j in (F.ID_LEN, F.N_TOKENS, F.N_FRAMES,
                                                                           F.N_SAMPLES, F.N_CODES))
        at = {name: v.tolist() for name, v in start.items()}
        n_mels, cap = cache.n_mels, _clib.ID_CAP
        ids = self.ids[:n * cap].tobytes()     # one copy of the batch's ids, sliced below
        blocks = self.blocks
        # (the loop's lookups hoisted: it runs once per item, beside one library call per batch)
        none: tuple[Any, Any] = (None, None)
        tok_b, tok_at = (blocks["tokens"], at["tokens"]) if tokens else none
        mel_b, mel_at = (blocks["mel"], at["mel"]) if mel else none
        wav_b, wav_at = (blocks["wave"], at["wave"]) if wave else none
        key_b, key_at = (blocks["key"], at["key"]) if codes is not None else none
        cod_b, cod_at = (blocks["codes"], at["codes"]) if codes is not None else none
        out: list[Item] = []
        for k in range(n):
            o = k * cap
            it: Item = {"fields": rows[k], "id": ids[o:o + id_len[k]].decode("utf-8", "replace")}
            if tok_b is not None:
                s = tok_at[k]
                it["tokens"] = tok_b[s:s + n_tok[k]]
            if mel_b is not None:
                s = mel_at[k]
                it["mel"] = mel_b[s:s + n_mels * n_fr[k]].reshape(n_mels, n_fr[k])
            if wav_b is not None:
                s = wav_at[k]
                it["wave"] = wav_b[s:s + n_smp[k]]
            if key_b is not None:
                s = key_at[k]
                it["key"] = key_b[s:s + 32].tobytes()
                s = cod_at[k]
                it["codes"] = cod_b[s:s + n_codes[k]]
            out.append(it)
        return out


class XttsCache:
    """A cache directory: manifest.json plus shard-*/ LMDB environments.

    cache[i] (i may be negative) returns the record at global index i as a dict (see
    get()). padded sets the default of get()'s padded argument.

    backend: "auto" (the default) or "c": the C library reads (the only decoder; the pure-Python
    reader it was checked against lives in the tests as their oracle). threads is read_batch's
    default number of C decoding threads (1: the calling thread only).
    """

    def __init__(self, path: Union[str, os.PathLike[str]], padded: bool = False, backend: str = "auto",
                 threads: int = 1) -> None:
        self.path = os.fspath(path)
        if backend not in BACKENDS:
            raise ValueError("backend %r: one of %s (the pure-Python reader left the package: it is the tests' "
                             "oracle, python/tests/xtts_oracle)" % (backend, ", ".join(BACKENDS)))
        self.backend = "c"
        self.padded = padded
        self.threads = max(1, int(threads))
        self._flags_cache: Dict[Optional[str], tuple[npt.NDArray[np.uint32], npt.NDArray[np.int64]]] = {}
        self._lengths: Optional[npt.NDArray[np.void]] = None
        # the directory and manifest as opened: a handle (re)opened later in another process must
        # find the same ones, else the cache was replaced (an update exchanges the directory)
        self.dir_ident = _dir_ident(self.path)
        mpath = os.path.join(self.path, "manifest.json")
        self._h: Optional[_clib.CHandle] = None
        self._key: tuple[Any, ...] = ()
        self._acquire(first=True)   # the C library checks the manifest and every shard
        try:
            with open(mpath, "rb") as f:
                self.manifest = m = json.loads(f.read().decode("utf-8"))
        except (OSError, ValueError) as e:
            self.close()
            raise CacheError("%s: %s" % (mpath, e)) from None
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
        self._count: int = m["records"]
        self._firsts = [s.first for s in self.shards]
        self._check_claimed_counts()
        self.speakers: list[str] = list(m.get("speakers", []))
        self.languages: list[str] = list(m.get("languages", []))
        self._check_handle(self._c())

    def _check_claimed_counts(self) -> None:
        """Refuse a manifest that gives a shard more records than its data.mdb can hold, as the
        C programs do (the library's tolerant open keeps that as the shard's fault, for its
        reads), so that no work or array is sized by a forged count."""
        for s in self.shards:
            data = os.path.join(self.path, s.name, "data.mdb")
            try:
                st = os.stat(data)
            except OSError:
                continue   # reported when the shard is read
            if not stat.S_ISREG(st.st_mode):   # a FIFO or a device: the library keeps it as the shard's fault
                continue
            size = st.st_size
            if s.records > size // MIN_RECORD_BYTES:
                self.close()
                raise CacheError("%s: the manifest says %d records, data.mdb of %d bytes holds at most %d"
                                 % (s.name, s.records, size, size // MIN_RECORD_BYTES))

    # -- the handle ------------------------------------------------------------------------------

    def _acquire(self, first: bool = False) -> _clib.CHandle:
        """This process's handle of the cache (shared with every XttsCache of this process that
        reads the same directory as it is now), after checking that it is the one opened."""
        ident = _dir_ident(self.path)
        if not first and self.dir_ident is not None and ident != self.dir_ident:
            raise CacheError(_REPLACED % self.path)
        key = (os.path.realpath(self.path), ident, _file_ident(os.path.join(self.path, "manifest.json")))
        h = _clib.shared(self.path, key)
        self._h, self._key = h, key
        return h

    def _check_handle(self, h: _clib.CHandle) -> None:
        if h.count != self._count or h.n_mels != self.n_mels or h.max_tokens != self.max_tokens \
                or h.max_frames != self.max_frames:
            self.close()
            raise CacheError(_REPLACED % self.path)

    def _c(self) -> _clib.CHandle:
        """This process's C handle (opened again in a process that did not open it: one inherited
        through fork() is dropped, never used or closed)."""
        h = self._h
        if h is None or h.pid != os.getpid():
            self._h = None
            h = self._acquire()
            self._check_handle(h)
        return h

    def close(self) -> None:
        """Give this object's reference to the process's handle back (the last one closes it;
        the next read opens it again)."""
        if self._h is not None and self._h.pid == os.getpid():
            _clib.release(self._key)
        self._h = None

    def __getstate__(self) -> dict[str, Any]:
        # Pickled into spawn-started workers: no handles travel.
        d = dict(self.__dict__)
        d["_h"] = None
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
        return index, si, self._c().record(index)

    def _items(self, indices: Sequence[int], tokens: bool = False, mel: bool = False, wave: bool = False,
               key: bool = False, codes: Optional[_clib.CCodes] = None, mel_dtype: npt.DTypeLike = np.float32,
               sizes: Optional[npt.NDArray[np.void]] = None) -> list[Item]:
        """What the records at indices (checked) hold, in one call into the library
        (xtts_api_read_items): the fields and id of each, and the parts asked for, unpadded:
        tokens int32 [n_tokens], mel [n_mels, n_frames] as mel_dtype, wave int16 [n_samples],
        key (32 bytes), codes uint16 (of the codes directory codes). sizes: the records' rows of
        lengths() (exact buffers; without them the cache's largest, and the waveform's from
        lengths())."""
        h = self._c()
        n = len(indices)
        mdt = np.dtype(mel_dtype)
        if (wave or codes is not None) and sizes is None:
            sizes = self.lengths()[np.asarray(indices, dtype=np.int64)]
        want: list[dict[str, npt.NDArray[Any]]] = []
        for k in range(n):
            row: dict[str, npt.NDArray[Any]] = {}
            if tokens:
                row["tokens"] = np.empty(int(sizes["n_tokens"][k]) if sizes is not None else self.max_tokens,
                                         dtype=np.int32)
            if mel:
                nf = int(sizes["n_frames"][k]) if sizes is not None else self.max_frames
                row["mel"] = np.empty(self.n_mels * nf, dtype=mdt)
            if wave:
                assert sizes is not None
                row["wave"] = np.empty(int(sizes["n_samples"][k]), dtype=np.int16)
            if key or codes is not None:
                row["key"] = np.empty(32, dtype=np.uint8)
            if codes is not None:
                assert sizes is not None
                row["codes"] = np.empty(_codes_count(int(sizes["n_samples"][k])), dtype=np.uint16)
            want.append(row)
        idx = np.asarray(indices, dtype=np.uint64)
        mdt_c = _clib.MEL_F16 if mdt == np.float16 else _clib.MEL_F32
        for _ in range(2):   # again with the sizes the library gives when a buffer was too small
            bufs = (ctypes_void_p * (n * _clib.ITEM_PARTS))()
            caps = (ctypes_size_t * (n * _clib.ITEM_PARTS))()
            for k, row in enumerate(want):
                for part, name in ((_clib.PART_TOKENS, "tokens"), (_clib.PART_MEL, "mel"), (_clib.PART_WAVE, "wave"),
                                   (_clib.PART_KEY, "key"), (_clib.PART_CODES, "codes")):
                    a = row.get(name)
                    if a is not None:
                        bufs[k * _clib.ITEM_PARTS + part] = a.ctypes.data
                        caps[k * _clib.ITEM_PARTS + part] = a.shape[0]
            fields_ = np.empty((n, _clib.ITEM_FIELDS), dtype=np.uint64)   # every row written (zeroed first)
            ids = ctypes_buffer(n * _clib.ID_CAP)
            rc = h.read_items(codes, idx, mdt_c, bufs, caps, fields_, ids)
            if rc != _clib.ERANGE:
                break
            grown = False
            for k, row in enumerate(want):
                f = fields_[k]
                if not f[F.VERSION]:
                    continue
                need = {"tokens": int(f[F.N_TOKENS]), "mel": self.n_mels * int(f[F.N_FRAMES]),
                        "wave": int(f[F.N_SAMPLES]), "codes": int(f[F.N_CODES])}
                for name, count in need.items():
                    a = row.get(name)
                    if a is not None and a.shape[0] < count:
                        row[name] = np.empty(count, dtype=a.dtype)
                        grown = True
            if not grown:
                break
        if rc:
            raise h.last_error()
        out: list[Item] = []
        raw_ids = ids.raw
        for k, row in enumerate(want):
            f = fields_[k]
            it = Item(fields=f, id=raw_ids[k * _clib.ID_CAP:k * _clib.ID_CAP + int(f[F.ID_LEN])].decode("utf-8",
                                                                                                     "replace"))
            if tokens:
                it["tokens"] = row["tokens"][:int(f[F.N_TOKENS])]
            if mel:
                nf = int(f[F.N_FRAMES])
                it["mel"] = row["mel"][:self.n_mels * nf].reshape(self.n_mels, nf)
            if wave:
                it["wave"] = row["wave"][:int(f[F.N_SAMPLES])]
            if key or codes is not None:
                it["key"] = row["key"].tobytes()
            if codes is not None:
                it["codes"] = row["codes"][:int(f[F.N_CODES])]
            out.append(it)
        return out

    def header(self, index: int) -> dict[str, Any]:
        """The record's header fields (dict) without decompressing."""
        index = self._locate(index)[0]
        it = self._items([index])[0]
        return header_dict(it["fields"], it["id"])

    def _record(self, index: int, it: Item, tokens: npt.NDArray[np.int32], mel: npt.NDArray[Any]) -> Record:
        f = it["fields"]
        sid, lid = int(f[F.SPEAKER_ID]), int(f[F.LANG_ID])
        return Record(index=index, id=it["id"], speaker_id=sid, lang_id=lid,
                      speaker=self.speakers[sid] if sid < len(self.speakers) else None,
                      lang=self.languages[lid] if lid < len(self.languages) else None,
                      split="val" if f[F.SPLIT] else "train", n_tokens=int(f[F.N_TOKENS]),
                      n_frames=int(f[F.N_FRAMES]), n_samples=int(f[F.N_SAMPLES]), tokens=tokens, mel=mel)

    def get(self, index: int, padded: Optional[bool] = None) -> Record:
        """Record index as a dict: index, id, speaker (name or None), lang (code or None),
        speaker_id, lang_id, split ("train"/"val"), n_tokens, n_frames, n_samples,
        tokens (int32) and mel (float32 [n_mels, frames]). Unpadded by default; with
        padded=True tokens is (max_tokens,) padded with the pad token and mel is
        (n_mels, max_frames) padded with the record's pad value."""
        if padded is None:
            padded = self.padded
        index = self._locate(index)[0]
        if padded:
            it = self._items([index])[0]
            b = self.read_batch([index])
            return self._record(index, it, b["tokens"][0], b["mel"][0])
        it = self._items([index], tokens=True, mel=True)[0]
        return self._record(index, it, it["tokens"], it["mel"])

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
        threads, default self.threads). to_torch=True returns torch tensors (pinned when pin_memory, or when it
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
        self._fill_batch(idx, out, T, F, self.threads if threads is None else max(1, int(threads)))
        return out

    def _fill_batch(self, idx: npt.NDArray[np.int64], out: dict[str, Any], T: int, F: int, threads: int) -> None:
        """Rows of idx (checked) into out's arrays, checked against T and F: the library's batch."""
        h = self._c()
        ptr = {k: _data_ptr(v) for k, v in out.items()}
        mel_f16 = _same_dtype(out["mel"], np.float16)
        _as_numpy(out["index"])[:] = idx
        h.read_batch(ptr["index"], len(idx), ptr["tokens"], T, ptr["mel"], _clib.MEL_F16 if mel_f16 else _clib.MEL_F32,
                     F, ptr["n_tokens"], ptr["n_frames"], ptr["speaker_id"], ptr["lang_id"], ptr["split"], threads)

    def __iter__(self) -> Iterator[Record]:
        for i in range(self._count):
            yield self.get(i)

    def index_of(self, rid: Union[str, bytes]) -> int:
        """Global index of utterance id rid; KeyError when absent."""
        key = rid.encode("utf-8") if isinstance(rid, str) else bytes(rid)
        if not 0 < len(key) <= MAX_ID or b"\0" in key:
            raise KeyError(rid)
        got = self._c().find(key)
        if got is None:
            raise KeyError(rid)
        return got

    def content_key(self, index: int) -> bytes:
        """The 32-byte content key of record index (formats/cache.md, "Content keys"): what
        the audio codes directories are keyed by. CacheError for a cache built before
        content keys, or a record without one."""
        return self._c().content_key(self._locate(index)[0])

    def meta(self, shard: int, key: Union[str, bytes]) -> Optional[bytes]:
        """A value of a shard's "meta" database (bytes) or None."""
        if not 0 <= shard < len(self.shards):
            raise IndexError("shard %d out of range (%d shards)" % (shard, len(self.shards)))
        return self._c().meta(shard, key.encode() if isinstance(key, str) else bytes(key))

    def has_metrics(self) -> bool:
        """True when the cache stores the records' quality metrics (built with them)."""
        return self._c().shards_with("quality") > 0

    def metrics_bytes(self, index: int) -> bytes:
        """Record index's stored quality metrics (104 bytes, formats/cache.md 3.5), checked by
        their CRC-32; CacheError when the cache has none or they are missing."""
        return self._c().quality(self._locate(index)[0])

    def metrics(self, index: int) -> dict[str, Any]:
        """Record index's quality metrics as a dict (xtts_prep.quality.decode_metrics): the
        columns of xtts-cache-report's TSV, and version."""
        try:
            return _quality.decode_metrics(self.metrics_bytes(index))
        except CacheError as e:
            if str(e).startswith(self.shard_of(index)) or str(e).startswith(self.path):
                raise
            raise CacheError("%s: index %d: %s" % (self.shard_of(index), index, e)) from None

    def quality_flags(self, thresholds: Optional[Dict[str, float]] = None
                      ) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.int64]]:
        """Every record's quality flags (uint32 bitmasks of 1 << flag, xtts_prep.quality.FLAG_NAMES)
        and dup_of (int64, -1 none), as xtts-cache-report decides them (the library's own code);
        thresholds: keys of the thresholds file (docs/quality.md) to change. Computed once per
        thresholds."""
        text = _quality.thresholds_text(thresholds)
        got = self._flags_cache.get(text)
        if got is not None:
            return got
        n = self._count
        flags, dup_of = np.zeros(n, dtype=np.uint32), np.zeros(n, dtype=np.int64)
        self._c().quality_flags(text, flags.ctypes.data, dup_of.ctypes.data, n)
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
        read instead (no decompression). Read once per object; a copy is returned."""
        if self._lengths is None:
            rows = self._c().lengths(self._count)
            out = np.zeros(len(rows), dtype=LENGTH_DTYPE)
            for k, name in enumerate(LENGTH_FIELDS):
                out[name] = rows[:, k]
            self._lengths = out
        return self._lengths.copy()

    def text(self, index: int) -> tuple[str, str]:
        """(original, normalized) transcript of a version-2 record (formats/cache.md 3.2)."""
        index = self._locate(index)[0]
        orig, norm = self._c().text(index)
        try:
            return orig.decode("utf-8"), norm.decode("utf-8")
        except UnicodeDecodeError:
            raise CacheError("%s: index %d: text section is not UTF-8" % (self.shard_of(index), index)) from None

    def waveform(self, index: int) -> npt.NDArray[np.int16]:
        """The stored waveform of a version-2 record built with --audio int16|flac, as
        int16 [n_samples] at the mel sample rate (divide by 32768 for the signal the mel
        was computed from)."""
        index = self._locate(index)[0]
        if self.audio == "flac":
            return self._flac(index)
        return self._items([index], wave=True)[0]["wave"]

    def _flac(self, index: int) -> npt.NDArray[np.int16]:
        """A FLAC waveform section: its stored bytes, checked by the library's header fields and
        their CRC-32, decoded by soundfile (the library has no FLAC codec)."""
        it = self._items([index])[0]
        h = header_dict(it["fields"], it["id"])
        where = "%s: index %d, id '%s'" % (self.shard_of(index), index, it["id"])
        if h["version"] < 2 or len(h["sections"]) < 4:
            raise CacheError("%s: no waveform section" % where)
        s = h["sections"][3]
        if s["codec"] != 2:
            return self._items([index], wave=True)[0]["wave"]
        body = self._c().record(index)[s["offset"]:s["offset"] + s["stored"]]
        if zlib.crc32(body) != s["crc"]:
            raise CacheError("%s: waveform section checksum mismatch" % where)
        try:
            import io
            import soundfile
        except ImportError:
            raise CacheError("%s: FLAC waveform: python3-soundfile is not installed" % where) from None
        try:
            wav, sr = soundfile.read(io.BytesIO(body), dtype="int16")
        except Exception as e:  # soundfile raises its own and RuntimeError
            raise CacheError("%s: FLAC waveform: %s" % (where, e)) from None
        if wav.ndim != 1 or len(wav) != h["n_samples"] or sr != self.sample_rate:
            raise CacheError("%s: FLAC waveform: %s samples at %d Hz, the header says %d at %d"
                             % (where, wav.shape, sr, h["n_samples"], self.sample_rate))
        pcm: npt.NDArray[np.int16] = wav
        return pcm

    def digest(self) -> str:
        """Content digest, as xtts-cache-verify prints it (docs/xtts-cache-verify.md, "Content digest")."""
        s = hashlib.sha256()
        for first in range(0, self._count, 64):
            for it in self._items(range(first, min(first + 64, self._count)), tokens=True, mel=True):
                f = it["fields"]
                idb = it["id"].encode("utf-8")
                s.update(struct.pack("<I", len(idb)) + idb)
                s.update(struct.pack("<IIIIIIB", int(f[F.N_TOKENS]), int(f[F.N_FRAMES]), int(f[F.N_MELS]),
                                     int(f[F.N_SAMPLES]), int(f[F.SPEAKER_ID]), int(f[F.LANG_ID]), int(f[F.SPLIT])))
                s.update(it["tokens"].astype("<i4").tobytes())
                s.update(it["mel"].astype("<f4").tobytes())
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
