"""The audio codes of XTTS's DVAE that xtts-cache-codes stores beside a cache
(formats/cache.md, section 7; docs/xtts-cache-codes.md): one LMDB environment per DVAE and mel
norms, in CACHE/codes-<16 hex>/, keyed by each record's content key.

Read through the C library (libxtts-reader.so: xtts_api_codes_*) when it loads, else with
py-lmdb (the package's "fallback" extra; Debian python3-lmdb). Both check the same: the
header and the name its hashes give, each value's count, CRC-32 and codes.
"""

from __future__ import annotations

import os
import struct
import zlib
from typing import Any, Optional, Union

import numpy as np
import numpy.typing as npt

from xtts_prep import codes as _package_codes

from . import _fallback
from .manifest import CacheError

__all__ = ["AudioCodes", "codes_dir_name", "codes_count", "CODES_FORMAT"]



from xtts_prep.codes import CODES_FORMAT, codes_count, codes_dir_name  # noqa: E402,F401


class _PyCodes:
    """A codes directory read with py-lmdb: its header and checked values (the checks of
    cache/store/read/codes_read.c)."""

    def __init__(self, path: str) -> None:
        self.path = path
        lmdb = _fallback.lmdb()
        try:
            self._env = lmdb.open(path, readonly=True, lock=False, readahead=False, max_dbs=4, subdir=True,
                                  create=False)
            self._codes = self._env.open_db(b"codes", create=False)
            meta_db = self._env.open_db(b"meta", create=False)
            with self._env.begin(db=meta_db) as txn:
                meta = {bytes(k).decode("ascii", "replace"): bytes(v) for k, v in txn.cursor()}
        except lmdb.Error as e:
            raise CacheError("%s: cannot open (%s)" % (path, e)) from None
        if meta.get("format") != CODES_FORMAT:
            raise CacheError("%s: format %r, this reader reads %r" % (path, meta.get("format"), CODES_FORMAT))
        try:
            self.num_tokens = int(meta["num_tokens"])
            self.dvae_sha256 = meta["dvae_sha256"].decode("ascii")
            self.norms_sha256 = meta["norms_sha256"].decode("ascii")
            raw = meta["mel_norms"]
        except (KeyError, ValueError, UnicodeDecodeError) as e:
            raise CacheError("%s: header incomplete (%s)" % (path, e)) from None
        if len(raw) % 4 or not raw:
            raise CacheError("%s: mel_norms of %d bytes" % (path, len(raw)))
        self.mel_norms: npt.NDArray[np.float32] = np.frombuffer(raw, dtype="<f4").astype(np.float32)
        name = codes_dir_name(self.dvae_sha256, self.norms_sha256)
        if os.path.basename(path) != name:
            raise CacheError("%s: the header's hashes give the name %s" % (path, name))

    def get(self, key: bytes) -> Optional[npt.NDArray[np.uint16]]:
        """The codes under key, checked; None when there is no entry."""
        with self._env.begin(db=self._codes) as txn:
            v: Optional[bytes] = txn.get(key)
        if v is None:
            return None
        if len(v) < 10:
            raise CacheError("%s: key %s...: a value of %d bytes" % (self.path, key.hex()[:16], len(v)))
        n, crc = struct.unpack("<II", v[:8])
        if len(v) != 8 + 2 * n or zlib.crc32(key + v[:4] + v[8:]) != crc:
            raise CacheError("%s: key %s...: checksum mismatch" % (self.path, key.hex()[:16]))
        codes = np.frombuffer(v, dtype="<u2", offset=8).astype(np.uint16)
        if int(codes.max()) >= self.num_tokens:
            raise CacheError("%s: key %s...: a code past the codebook of %d" % (self.path, key.hex()[:16],
                                                                                 self.num_tokens))
        return codes

    def close(self) -> None:
        self._env.close()


class AudioCodes(_package_codes.AudioCodes):
    """The package's AudioCodes (finding the directory, pickling) reading with _PyCodes."""

    def __init__(self, cache_path: Union[str, os.PathLike[str]],
                 which: Union[None, str, os.PathLike[str], tuple[Any, Any]] = None, backend: str = "auto") -> None:
        super().__init__(cache_path, which)
        self.backend = "python"

    def _reader(self) -> Any:
        """This process's reader (handles inherited through fork() are not used)."""
        pid = os.getpid()
        if self._rd is None or self._pid != pid:
            self._rd = _PyCodes(self.path)
            self._pid = pid
        return self._rd
