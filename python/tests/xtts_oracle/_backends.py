"""The two backends of XttsCache's reads, behind one interface (Backend): the C library
(CBackend: libxtts-reader.so through _clib.py, needing numpy alone) and the pure-Python
reader (PyBackend: py-lmdb and zstandard, the "fallback" extra, imported when first used).

A backend gives a record's stored bytes, its decoded tokens and mel, its text, its
waveform, an id's index, a shard's meta values, content keys, the lengths of every record
and the quality metrics. XttsCache parses the headers (record.py, pure Python) and shapes
the results, so both backends give the same values. Every error is a CacheError of one line
naming the shard, the index and the id (the C library's messages, or the ones below).

Both open their handles lazily in the process that reads (handles inherited through fork()
are dropped, never used) and pickle without them.
"""

from __future__ import annotations

import collections
import errno
import mmap
import os
import stat
import struct
from typing import TYPE_CHECKING, Any, Dict, Optional, Tuple

import numpy as np
if TYPE_CHECKING:   # numpy.typing is numpy 1.20 or later (Debian 11 has 1.19): for annotations only
    import numpy.typing as npt

from . import _fallback
from .lmdbcheck import check_lmdb_structure
from .manifest import CacheError, CacheResourceError
from .record import (LENGTH_DTYPE, LENGTH_FIELDS, LENGTH_STRUCT, DTYPE_F16, Header, RecordHeaderV2, decode_stored,
                     record_error, record_key, section_bytes, unshuffle)

if TYPE_CHECKING:
    import zstandard
    from .cache import Shard, XttsCache

__all__ = ["Backend", "PyBackend"]

# the least a record takes in data.mdb: its 8-byte key and a record header
MIN_RECORD_BYTES = 8 + 64

# an open shard: its LMDB environment and named databases (py-lmdb has no type information)
_Handles = Tuple[Any, Dict[str, Any]]

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


from xtts_prep.cache import _dir_ident  # noqa: E402  the directory's identity, as the package takes it


class Backend:
    """What XttsCache reads through. index is a global index already checked against the
    record count, si the number of the shard holding it, buf the record's stored bytes (from
    record()) and h their parsed header."""

    def record(self, index: int, si: int) -> bytes:
        """The stored value of record index."""
        raise NotImplementedError

    def decode(self, index: int, si: int, buf: bytes, h: Header) -> tuple[npt.NDArray[np.int32], npt.NDArray[Any]]:
        """Tokens int32 [tokens_padded] and mel [n_mels, frames_padded] as stored (float16 or
        float32), the padded frames holding the record's pad value."""
        raise NotImplementedError

    def text(self, index: int, si: int, buf: bytes, h: RecordHeaderV2) -> tuple[bytes, bytes]:
        """The original and the normalized text of a version-2 record, UTF-8 bytes."""
        raise NotImplementedError

    def wave(self, index: int, si: int, buf: bytes, h: RecordHeaderV2) -> npt.NDArray[np.int16]:
        """The zstd-compressed int16 waveform section of a version-2 record, n_samples long."""
        raise NotImplementedError

    def find(self, key: bytes, shown: str) -> Optional[int]:
        """The global index of utterance id key (shown: as messages name it), None when absent."""
        raise NotImplementedError

    def meta(self, shard: int, key: bytes) -> Optional[bytes]:
        """A value of shard's "meta" database, None when absent."""
        raise NotImplementedError

    def content_key(self, index: int, si: int) -> bytes:
        """Record index's 32-byte content key."""
        raise NotImplementedError

    def lengths(self) -> npt.NDArray[np.void]:
        """Every record's lengths (LENGTH_DTYPE) in index order."""
        raise NotImplementedError

    def has_metrics(self) -> bool:
        """Whether any shard stores quality metrics."""
        raise NotImplementedError

    def metrics_bytes(self, index: int, si: int) -> bytes:
        """Record index's stored quality metrics."""
        raise NotImplementedError

    def close(self) -> None:
        """Close this process's handles (reopened on the next read)."""


class PyBackend(Backend):
    """py-lmdb and zstandard. LMDB environments are opened read-only and without lock files
    (lock=False: no reader slots are taken, so any number of workers may read), each shard
    when first read, its LMDB pages walked first (lmdbcheck.py); at most _pool_cap stay
    open, the least recently used closed first."""

    def __init__(self, cache: XttsCache) -> None:
        self.c = cache
        self.path = cache.path
        self.shards = cache.shards
        self.format_version = cache.format_version
        self.config_hash = cache.config_hash
        self._dir_ident = cache.dir_ident
        self._pid: Optional[int] = None
        # the open shards, least recently used first, at most _pool_cap of them
        self._envs: collections.OrderedDict[int, _Handles] = collections.OrderedDict()
        self._pool_cap = _pool_capacity()
        # shard directories whose LMDB pages were walked (once however many entries list one)
        self._walked: dict[str, tuple[int, int, int, int]] = {}
        self._dctx: Optional[zstandard.ZstdDecompressor] = None

    def __getstate__(self) -> dict[str, Any]:
        # Pickled into spawn-started workers: no handles travel.
        d = dict(self.__dict__)
        d["_envs"] = collections.OrderedDict()
        d["_pid"] = None
        d["_dctx"] = None
        return d

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
        if s.records > size // MIN_RECORD_BYTES:
            raise CacheError("%s: the manifest says %d records, data.mdb of %d bytes holds at most %d"
                             % (s.name, s.records, size, size // MIN_RECORD_BYTES))
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

    def close(self) -> None:
        if self._pid == os.getpid():
            for env, _ in self._envs.values():
                env.close()
        self._envs = collections.OrderedDict()

    def _get(self, si: int, db: str, key: bytes, what: str) -> Optional[bytes]:
        """The value of key in shard si's database db, None when absent; an LMDB error is a
        CacheError naming the shard and what."""
        env, dbs = self._shard(si)
        try:
            with env.begin(db=dbs[db]) as txn:
                v: Optional[bytes] = txn.get(key)
                return None if v is None else bytes(v)
        except _fallback.lmdb().Error as e:
            raise CacheError("%s: %s: %s" % (self.shards[si].name, what, e)) from None

    def record(self, index: int, si: int) -> bytes:
        s = self.shards[si]
        local = index - s.first + s.local_first
        buf = self._get(si, "records", record_key(local), "index %d (local %d)" % (index, local))
        if buf is None:
            raise CacheError("%s: index %d (local %d): record missing from \"records\"" % (s.name, index, local))
        return buf

    def decode(self, index: int, si: int, buf: bytes, h: Header) -> tuple[npt.NDArray[np.int32], npt.NDArray[Any]]:
        try:
            _, tokens, mel = decode_stored(buf, self._decompressor())
        except CacheError as e:
            raise record_error(self.shards[si].name, index, buf, e) from None
        return tokens, mel

    def text(self, index: int, si: int, buf: bytes, h: RecordHeaderV2) -> tuple[bytes, bytes]:
        try:
            raw = section_bytes(buf, h, 2, self._decompressor())
            n: int = struct.unpack_from("<I", raw, 0)[0]
            if 4 + n > len(raw):
                raise CacheError("text section: original length %d over %d bytes" % (n, len(raw)))
        except CacheError as e:
            raise record_error(self.shards[si].name, index, buf, e) from None
        return raw[4:4 + n], raw[4 + n:]

    def wave(self, index: int, si: int, buf: bytes, h: RecordHeaderV2) -> npt.NDArray[np.int16]:
        try:
            raw = np.frombuffer(section_bytes(buf, h, 3, self._decompressor()), dtype=np.uint8)
        except CacheError as e:
            raise record_error(self.shards[si].name, index, buf, e) from None
        return unshuffle(raw, 2, h.n_samples).view(np.int16)  # a fresh array already

    def find(self, key: bytes, shown: str) -> Optional[int]:
        for si, s in enumerate(self.shards):
            v = self._get(si, "ids", key, "id '%s'" % shown)
            if v is None:
                continue
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
        return None

    def meta(self, shard: int, key: bytes) -> Optional[bytes]:
        return self._get(shard, "meta", key, "meta %r" % key)

    def content_key(self, index: int, si: int) -> bytes:
        s = self.shards[si]
        if "keys" not in self._shard(si)[1]:
            raise CacheError("%s: no \"keys\" database (a cache built before content keys)" % s.name)
        local = index - s.first + s.local_first
        v = self._get(si, "keys", record_key(local), "index %d (local %d)" % (index, local))
        if v is None or len(v) < 32:
            raise CacheError("%s: index %d: no content key" % (s.name, index))
        return v[:32]

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
        return any(self._quality_db(si) is not None for si in range(len(self.shards)))

    def metrics_bytes(self, index: int, si: int) -> bytes:
        if self._quality_db(si) is None:
            if not self.has_metrics():
                raise CacheError("%s: the cache stores no quality metrics (built before them)" % self.path)
            raise CacheError("%s: quality metrics missing" % self.shards[si].name)
        s = self.shards[si]
        buf = self._get(si, "quality", record_key(index - s.first + s.local_first), "index %d: quality" % index)
        if buf is None:
            raise CacheError("%s: index %d: quality metrics missing" % (s.name, index))
        return buf

    def lengths(self) -> npt.NDArray[np.void]:
        for si in range(len(self.shards)):
            self._shard(si)   # every shard holds the records the manifest says: the array is bounded
        out = np.zeros(len(self.c), dtype=LENGTH_DTYPE)
        if self.format_version < 2:   # no lengths index: every record's header
            for i in range(len(self.c)):
                h = self.c._header(i)
                out[i] = (h.n_frames, h.n_tokens, h.n_samples, h.speaker_id, h.lang_id, h.split, 0)
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
