"""The cache reader (formats/cache.md): XttsCache.

Needs numpy; the records it reads itself (every method but read_batch where libxtts-reader.so
is found) also py-lmdb and zstandard, imported when first used
(_fallback.py: the "fallback" extra). LMDB environments are opened lazily in each
process (an environment opened before fork() and used in the child is a known source of
MDB_CORRUPTED and reader-table errors), read-only and without lock files (lock=False: no
reader slots are taken, so any number of workers may read). An XttsCache pickles without
its handles, so it travels into spawn-started workers too.

Every record is checked as the C reader checks it (record.py: header CRC-32, shape,
section and zstd checksums; lmdbcheck.py: the shard's LMDB pages before py-lmdb reads
them); damage raises CacheError naming the shard, index and id.

Fixed-shape batches (read_batch) are decoded by the C reader through libxtts-reader.so
(_clib.py) when that library is found, straight into numpy arrays or torch tensors, and
by the pure-Python reader otherwise; both give identical arrays.
"""

from __future__ import annotations

import collections
import errno
import hashlib
import mmap
import os
import stat
import struct
import sys
import zlib
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, Dict, Iterator, Optional, Sequence, Tuple, TypedDict, Union

import numpy as np
import numpy.typing as npt

from . import _clib, _fallback
from . import quality as _quality
from .lmdbcheck import check_lmdb_structure as check_lmdb_structure
from .manifest import SHARED_VERSION, CacheError, load_manifest
# the record codec and the LMDB check lived in this module before record.py and
# lmdbcheck.py; their public names are still importable from here
from .record import (DTYPE_F16 as DTYPE_F16, DTYPE_F32 as DTYPE_F32, FLAG_SHUFFLED as FLAG_SHUFFLED,
                     LENGTH_FIELDS as LENGTH_FIELDS, MAX_FRAMES as MAX_FRAMES, MAX_ID as MAX_ID,
                     MAX_MELS as MAX_MELS, MAX_TOKENS as MAX_TOKENS, PAYLOAD_MAX as PAYLOAD_MAX,
                     RECORD_MAGIC as RECORD_MAGIC, RECORD_VERSION as RECORD_VERSION,
                     decode_record as decode_record, parse_header as parse_header)
from .record import (LENGTH_DTYPE, LENGTH_STRUCT, Header, RecordHeaderV2, decode_stored, parse_record_header,
                     record_key, section_bytes, unshuffle)

if TYPE_CHECKING:
    import zstandard

__all__ = ["XttsCache", "CacheError", "CacheResourceError", "LENGTH_FIELDS"]


class CacheResourceError(CacheError, OSError):
    """A shard that cannot be opened for want of a resource of this process or system (a
    descriptor or memory limit, a permission): not damage. errno and strerror are set."""


# errors of the system, not of the files: named with their errno's words, never "damaged"
_RESOURCE_ERRNOS = (errno.EMFILE, errno.ENFILE, errno.ENOMEM, errno.EACCES, errno.EPERM, errno.EAGAIN)
# those that closing an idle environment of the pool may relieve
_POOL_ERRNOS = (errno.EMFILE, errno.ENFILE, errno.ENOMEM)


def _resource_errno(e: BaseException) -> Optional[int]:
    """The errno of a resource failure behind e (an OSError, or py-lmdb's Error, which
    carries only strerror's words), else None."""
    if isinstance(e, OSError):
        return e.errno if e.errno in _RESOURCE_ERRNOS else None
    text = str(e)
    for code in _RESOURCE_ERRNOS:
        if text.endswith(os.strerror(code)):
            return code
    return None


def _pool_capacity() -> int:
    """How many shard environments stay open at once: a quarter of the descriptors
    RLIMIT_NOFILE leaves free (the C library's pool and the program keep the rest), 1 to
    256."""
    try:
        import resource
        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    except (ImportError, OSError, ValueError):
        return 256
    if soft == resource.RLIM_INFINITY or soft >= 4096:
        return 256
    try:
        used = len(os.listdir("/proc/self/fd"))
    except OSError:
        used = 16
    return max(1, min(256, (soft - used) // 4))

BACKENDS = ("auto", "c", "python")

# language ids a cache without a "languages" table may carry (XTTS's 17, formats/record.h)
_BUILTIN_LANGS = 17

# the least a record takes in data.mdb: its 8-byte key and a record header
_MIN_RECORD_BYTES = 8 + 64

# an open shard: its LMDB environment and named databases (py-lmdb has no type information)
_Handles = Tuple[Any, Dict[str, Any]]


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


def _dir_ident(path: str) -> Optional[tuple[int, int]]:
    """(device, inode) of the directory path, None when it cannot be had."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


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
        self._dir_ident = _dir_ident(self.path)
        self.padded = padded
        if backend not in BACKENDS:
            raise ValueError("backend %r: one of %s" % (backend, ", ".join(BACKENDS)))
        if backend == "c" and _clib.library() is None:
            raise CacheError("%s: backend='c', but the C library is not available (%s)"
                             % (self.path, _clib.load_error()))
        self.backend = "c" if backend != "python" and _clib.library() is not None else "python"
        self.threads = max(1, int(threads))
        self._chandle: Optional[_clib.CHandle] = None
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
        self._pid: Optional[int] = None
        # the open shards, least recently used first, at most _pool_cap of them
        self._envs: collections.OrderedDict[int, _Handles] = collections.OrderedDict()
        self._pool_cap = _pool_capacity()
        # shard directories whose LMDB pages were walked (once however many entries list one)
        self._walked: dict[str, tuple[int, int, int, int]] = {}
        self._dctx: Optional[zstandard.ZstdDecompressor] = None
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
            if s.records > size // _MIN_RECORD_BYTES:
                raise CacheError("%s: the manifest says %d records, data.mdb of %d bytes holds at most %d"
                                 % (s.name, s.records, size, size // _MIN_RECORD_BYTES))

    # -- per-process LMDB handles ----------------------------------------------------------

    def _check_process(self) -> None:
        pid = os.getpid()
        if pid != self._pid:
            # Handles inherited through fork() are dropped, never used: open afresh here.
            self._envs = collections.OrderedDict()
            self._dctx = _fallback.zstandard().ZstdDecompressor()
            self._pid = pid

    def _shard(self, si: int) -> _Handles:
        self._check_process()
        got = self._envs.get(si)
        if got is not None:
            self._envs.move_to_end(si)
            return got
        while len(self._envs) >= self._pool_cap:
            self._evict()
        while True:
            try:
                got = self._open_shard(si)
                break
            except CacheResourceError as e:
                if e.errno not in _POOL_ERRNOS or not self._envs:
                    raise
                self._evict()   # a descriptor or memory limit: close an idle shard, try again
        self._envs[si] = got
        return got

    def _evict(self) -> None:
        """Close the least recently used open shard (reopened when read again)."""
        _, (env, _) = self._envs.popitem(last=False)
        env.close()

    def _resource_error(self, name: str, what: str, e: BaseException) -> Optional[CacheResourceError]:
        code = _resource_errno(e)
        if code is None:
            return None
        return CacheResourceError(code, "%s: cannot open %s: %s" % (name, what, os.strerror(code)))

    def _open_shard(self, si: int) -> _Handles:
        if self._dir_ident is not None and _dir_ident(self.path) not in (None, self._dir_ident):
            raise CacheError("%s: the cache was replaced while it was read (an update or a rebuild exchanged the "
                             "directory); open it again to read the new one" % self.path)
        s = self.shards[si]
        path = os.path.join(self.path, s.name)
        data = os.path.join(path, "data.mdb")
        for what in (path, data):
            try:
                st = os.stat(what)
            except OSError as e:
                if e.errno not in (errno.ENOENT, errno.ENOTDIR):   # a permission or the system
                    raise self._resource_error(s.name, what, e) or \
                        CacheError("%s: cannot open %s: %s" % (s.name, what, e.strerror)) from None
                if what == path:
                    raise CacheError("%s: shard missing (%s)" % (s.name, path)) from None
                raise CacheError("%s: shard has no data file (%s)" % (s.name, e)) from None
            if what == path and not os.path.isdir(path):
                raise CacheError("%s: shard missing (%s)" % (s.name, path))
        if not stat.S_ISREG(st.st_mode):
            raise CacheError("%s: damaged (%s is not a regular file)" % (s.name, what))
        size = st.st_size
        if s.records > size // _MIN_RECORD_BYTES:
            raise CacheError("%s: the manifest says %d records, data.mdb of %d bytes holds at most %d"
                             % (s.name, s.records, size, size // _MIN_RECORD_BYTES))
        # the page walk reads the whole file: once per file as it is, not at every reopening
        # of a shard the pool closed
        ident = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
        try:
            if self._walked.get(s.name) != ident:
                check_lmdb_structure(path)
                self._walked[s.name] = ident
        except CacheError as e:
            raise CacheError("%s: damaged (%s)" % (s.name, e)) from None
        except (OSError, ValueError, struct.error) as e:
            raise self._resource_error(s.name, data, e) or \
                CacheError("%s: cannot read data.mdb (%s)" % (s.name, e)) from None
        # map the file as it is: a reader needs none of the room a writer may grow into
        page = mmap.PAGESIZE
        map_size = max(page, (size + page - 1) // page * page)
        lmdb = _fallback.lmdb()
        try:
            env = lmdb.open(path, readonly=True, lock=False, readahead=False, max_dbs=8, max_readers=4096,
                            subdir=True, create=False, map_size=map_size)
        except lmdb.Error as e:
            raise self._resource_error(s.name, data, e) or \
                CacheError("%s: cannot open LMDB environment (%s)" % (s.name, e)) from None
        try:
            return env, self._check_shard(s, env, size)
        except _fallback.lmdb().Error as e:
            env.close()
            raise self._resource_error(s.name, data, e) or CacheError("%s: %s" % (s.name, e)) from None
        except CacheError:
            env.close()
            raise

    def _check_shard(self, s: Shard, env: Any, size: int) -> Dict[str, Any]:
        """The shard's databases, its configuration, format and counts against the manifest."""
        need: int = (env.info()["last_pgno"] + 1) * env.stat()["psize"]
        if need > size:
            raise CacheError("%s: truncated (data.mdb has %d bytes, its pages reach %d)" % (s.name, size, need))
        names = ("records", "ids", "meta") + (("lengths",) if self.format_version >= 2 else ())
        dbs: dict[str, Any] = {n: env.open_db(n.encode(), create=False) for n in names}
        try:   # optional: caches built before content keys have none
            dbs["keys"] = env.open_db(b"keys", create=False)
        except _fallback.lmdb().NotFoundError:
            pass
        with env.begin(db=dbs["meta"]) as txn:
            h = txn.get(b"config_hash")
            fmt = txn.get(b"format")
        if h is None or h.decode("ascii", "replace") != self.config_hash:
            raise CacheError("%s: shard %s (built with another configuration)"
                             % (s.name, "has no config_hash" if h is None else
                                "config_hash differs from the manifest's"))
        want = b"xtts-cache %d" % self.format_version
        if fmt != want:
            raise CacheError("%s: meta \"format\" is %r, expected %r" % (s.name, fmt, want.decode()))
        with env.begin() as txn:
            entries: int = txn.stat(dbs["records"])["entries"]
        if s.ranged and entries < s.local_first + s.records:
            raise CacheError("%s: holds %d records, the manifest's range ends at key %d"
                             % (s.name, entries, s.local_first + s.records))
        if not s.ranged and entries != s.records:
            raise CacheError("%s: holds %d records, the manifest says %d" % (s.name, entries, s.records))
        if "lengths" in dbs:
            with env.begin() as txn:
                n_len = txn.stat(dbs["lengths"])["entries"]
            if n_len != entries:
                raise CacheError("%s: \"lengths\" holds %d entries for %d records" % (s.name, n_len, entries))
        return dbs

    def _decompressor(self) -> zstandard.ZstdDecompressor:
        """This process's zstd decompressor (made by _check_process on the first read)."""
        self._check_process()
        assert self._dctx is not None
        return self._dctx

    def _c(self) -> _clib.CHandle:
        """This process's C handle (opened on first use; one inherited through fork() is
        dropped, never used or closed)."""
        h = self._chandle
        if h is None or h.pid != os.getpid():
            self._chandle = None
            lib = _clib.library()
            if lib is None:
                raise CacheError("%s: backend='c', but the C library is not available (%s)"
                                 % (self.path, _clib.load_error()))
            h = _clib.CHandle(lib, self.path)
            if h.count != self._count or h.n_mels != self.n_mels or h.max_tokens != self.max_tokens \
                    or h.max_frames != self.max_frames:
                h.close()
                raise CacheError("%s: the C reader sees %d records of %d mels, %d tokens, %d frames; "
                                 "the manifest says %d, %d, %d, %d" % (self.path, h.count, h.n_mels, h.max_tokens,
                                                                        h.max_frames, self._count, self.n_mels,
                                                                        self.max_tokens, self.max_frames))
            self._chandle = h
        return h

    def close(self) -> None:
        """Close this process's LMDB environments and C handle (reopened on the next read)."""
        if self._pid == os.getpid():
            for env, _ in self._envs.values():
                env.close()
        self._envs = collections.OrderedDict()
        if self._chandle is not None:
            self._chandle.close()   # does nothing in a process that did not open it
            self._chandle = None

    def __getstate__(self) -> dict[str, Any]:
        # Pickled into spawn-started workers: no handles travel.
        d = dict(self.__dict__)
        d["_envs"] = collections.OrderedDict()
        d["_pid"] = None
        d["_dctx"] = None
        d["_chandle"] = None
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
        """The stored bytes of record index."""
        index, si = self._locate(index)
        env, dbs = self._shard(si)
        local = index - self.shards[si].first + self.shards[si].local_first
        try:
            with env.begin(db=dbs["records"]) as txn:
                buf: Optional[bytes] = txn.get(record_key(local))
        except _fallback.lmdb().Error as e:
            raise CacheError("%s: index %d (local %d): %s" % (self.shards[si].name, index, local, e)) from None
        if buf is None:
            raise CacheError("%s: index %d (local %d): record missing from \"records\""
                             % (self.shards[si].name, index, local))
        return index, si, buf

    def _error(self, si: int, index: int, buf: bytes, e: Exception) -> CacheError:
        rid = ""
        if len(buf) >= 64:
            n: int = min(struct.unpack_from("<H", buf, 12)[0], len(buf) - 64, 80)
            rid = "".join(c if c.isprintable() and c != "'" else "?"
                          for c in bytes(buf[64:64 + n]).decode("utf-8", "replace"))
        msg = str(e)
        prefix = "record '%s': " % rid
        if msg.startswith(prefix):
            msg = msg[len(prefix):]
        return CacheError("%s: index %d, id '%s': %s" % (self.shards[si].name, index, rid, msg))

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

    def get(self, index: int, padded: Optional[bool] = None) -> Record:
        """Record index as a dict: index, id, speaker (name or None), lang (code or None),
        speaker_id, lang_id, split ("train"/"val"), n_tokens, n_frames, n_samples,
        tokens (int32) and mel (float32 [n_mels, frames]). Unpadded by default; with
        padded=True tokens is (max_tokens,) padded with the pad token and mel is
        (n_mels, max_frames) padded with the record's pad value."""
        if padded is None:
            padded = self.padded
        index, si, buf = self.raw(index)
        try:
            h, tokens, mel = decode_stored(buf, self._dctx)
            self._check_table_ids(h)
        except CacheError as e:
            raise self._error(si, index, buf, e) from None
        if h.n_mels != self.n_mels:
            raise self._error(si, index, buf, CacheError("%d mel channels, the cache has %d"
                                                         % (h.n_mels, self.n_mels)))
        nt, nf = h.n_tokens, h.n_frames
        if padded:
            if h.tokens_padded > self.max_tokens or h.frames_padded > self.max_frames:
                raise self._error(si, index, buf, CacheError("padded shape exceeds the cache's"))
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
            index, si, buf = self.raw(gi)
            try:
                h, tokens, m = decode_stored(buf, self._dctx)
                self._check_table_ids(h)
                if h.n_mels != self.n_mels:
                    raise CacheError("%d mel channels, the batch has %d" % (h.n_mels, self.n_mels))
                tp, fp = h.tokens_padded, h.frames_padded
                if tp > T or fp > F:
                    raise CacheError("padded shape (%d tokens, %d frames) does not fit the batch's (%d, %d)"
                                     % (tp, fp, T, F))
            except CacheError as e:
                raise self._error(si, index, buf, e) from None
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
        if not 0 < len(key) <= MAX_ID:
            raise KeyError(rid)
        shown = str(rid)   # as "%s" shows it
        for si, s in enumerate(self.shards):
            env, dbs = self._shard(si)
            try:
                with env.begin(db=dbs["ids"]) as txn:
                    v: Optional[bytes] = txn.get(key)
            except _fallback.lmdb().Error as e:
                raise CacheError("%s: id '%s': %s" % (s.name, shown, e)) from None
            if v is not None:
                if len(v) != 8:
                    raise CacheError("%s: id '%s': \"ids\" value is not an 8-byte index" % (s.name, shown))
                local: int = struct.unpack(">Q", v)[0]
                if s.ranged:   # a key outside the range is another entry's, or no record's
                    if s.local_first <= local < s.local_first + s.records:
                        return s.first + local - s.local_first
                    continue
                if local >= s.records:
                    raise CacheError("%s: id '%s': \"ids\" points at local index %d of %d records"
                                     % (s.name, shown, local, s.records))
                return s.first + local
        raise KeyError(rid)

    def content_key(self, index: int) -> bytes:
        """The 32-byte content key of record index (formats/cache.md, "Content keys"): what
        the audio codes directories are keyed by. CacheError for a cache built before
        content keys, or a record without one."""
        index, si = self._locate(index)
        env, dbs = self._shard(si)
        s = self.shards[si]
        if "keys" not in dbs:
            raise CacheError("%s: no \"keys\" database (a cache built before content keys)" % s.name)
        local = index - s.first + s.local_first
        try:
            with env.begin(db=dbs["keys"]) as txn:
                v: Optional[bytes] = txn.get(record_key(local))
        except _fallback.lmdb().Error as e:
            raise CacheError("%s: index %d (local %d): %s" % (s.name, index, local, e)) from None
        if v is None or len(v) < 32:
            raise CacheError("%s: index %d (local %d): no content key" % (s.name, index, local))
        return bytes(v[:32])

    def meta(self, shard: int, key: Union[str, bytes]) -> Optional[bytes]:
        """A value of a shard's "meta" database (bytes) or None."""
        env, dbs = self._shard(shard)
        try:
            with env.begin(db=dbs["meta"]) as txn:
                v: Optional[bytes] = txn.get(key.encode() if isinstance(key, str) else key)
                return v
        except _fallback.lmdb().Error as e:
            raise CacheError("%s: meta %r: %s" % (self.shards[shard].name, key, e)) from None

    def _quality_db(self, si: int) -> Any:
        """Shard si's "quality" database, or None when the shard has none."""
        env, dbs = self._shard(si)
        if "quality" not in dbs:
            try:
                dbs["quality"] = env.open_db(b"quality", create=False)
            except _fallback.lmdb().NotFoundError:
                dbs["quality"] = None
            except _fallback.lmdb().Error as e:
                raise CacheError("%s: \"quality\": %s" % (self.shards[si].name, e)) from None
        return dbs["quality"]

    def has_metrics(self) -> bool:
        """True when the cache stores the records' quality metrics (built with them)."""
        return any(self._quality_db(si) is not None for si in range(len(self.shards)))

    def metrics_bytes(self, index: int) -> bytes:
        """Record index's stored quality metrics (104 bytes, formats/cache.md 3.5); CacheError
        when the cache has none or they are missing."""
        index, si = self._locate(index)
        if self.backend == "c":
            return self._c().quality(index)
        db = self._quality_db(si)
        if db is None:
            if not self.has_metrics():
                raise CacheError("%s: the cache stores no quality metrics (built before them)" % self.path)
            raise CacheError("%s: quality metrics missing" % self.shards[si].name)
        env, _ = self._shard(si)
        local = index - self.shards[si].first + self.shards[si].local_first
        try:
            with env.begin(db=db) as txn:
                buf: Optional[bytes] = txn.get(record_key(local))
        except _fallback.lmdb().Error as e:
            raise CacheError("%s: index %d: quality: %s" % (self.shards[si].name, index, e)) from None
        if buf is None:
            raise CacheError("%s: index %d: quality metrics missing" % (self.shards[si].name, index))
        return bytes(buf)

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
        for si in range(len(self.shards)):
            self._shard(si)   # every shard holds the records the manifest says: the array is bounded
        out = np.zeros(self._count, dtype=LENGTH_DTYPE)
        if not self.has_lengths_index():
            for i in range(self._count):
                h = self._header(i)
                out[i] = (h.n_frames, h.n_tokens, h.n_samples, h.speaker_id, h.lang_id,
                          h.split, 0)
            return out
        for si, s in enumerate(self.shards):
            env, dbs = self._shard(si)
            want = 0
            try:
                with env.begin(db=dbs["lengths"]) as txn:
                    cur = txn.cursor()
                    cur.set_range(record_key(s.local_first))
                    for k, v in cur:
                        if s.ranged and (len(k) != 8 or struct.unpack(">Q", k)[0] >= s.local_first + s.records):
                            break   # past the range: another entry's keys
                        if len(k) != 8 or struct.unpack(">Q", k)[0] != s.local_first + want or want >= s.records:
                            raise CacheError("%s: \"lengths\" key %s out of order or out of range"
                                             % (s.name, bytes(k).hex()))
                        if len(v) != 24:
                            raise CacheError("%s: \"lengths\" entry %d of %d bytes, expected 24"
                                             % (s.name, want, len(v)))
                        e = LENGTH_STRUCT.unpack(v)
                        if e[5] > 1 or e[6] & ~1 or e[7]:
                            raise CacheError("%s: \"lengths\" entry %d has bad split, flags or reserved bytes"
                                             % (s.name, want))
                        out[s.first + want] = e[:7]
                        want += 1
            except _fallback.lmdb().Error as e:
                raise CacheError("%s: \"lengths\": %s" % (s.name, e)) from None
            if want != s.records:
                raise CacheError("%s: \"lengths\" holds %d entries for %d records" % (s.name, want, s.records))
        return out

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
        try:
            raw = section_bytes(buf, h, 2, self._decompressor())
            n: int = struct.unpack_from("<I", raw, 0)[0]
            if 4 + n > len(raw):
                raise CacheError("text section: original length %d over %d bytes" % (n, len(raw)))
            return raw[4:4 + n].decode("utf-8"), raw[4 + n:].decode("utf-8")
        except UnicodeDecodeError:
            raise self._error(si, index, buf, CacheError("text section is not UTF-8")) from None
        except CacheError as e:
            raise self._error(si, index, buf, e) from None

    def waveform(self, index: int) -> npt.NDArray[np.int16]:
        """The stored waveform of a version-2 record built with --audio int16|flac, as
        int16 [n_samples] at the mel sample rate (divide by 32768 for the signal the mel
        was computed from)."""
        index, si, buf, h = self._sections(index, True)
        s = h.sections[3]
        try:
            if s.codec == 1:
                raw = np.frombuffer(section_bytes(buf, h, 3, self._decompressor()), dtype=np.uint8)
                return unshuffle(raw, 2, h.n_samples).view(np.int16)  # a fresh array already
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
            index, si, buf = self.raw(i)
            try:
                h, tokens, mel = decode_stored(buf, self._dctx)
            except CacheError as e:
                raise self._error(si, index, buf, e) from None
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
