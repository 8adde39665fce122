"""The audio codes of XTTS's DVAE that xtts-cache-codes stores beside a cache
(formats/cache.md, section 7; docs/xtts-cache-codes.md): one LMDB environment per DVAE and mel
norms, in CACHE/codes-<16 hex>/, keyed by each record's content key.

Read through the C library (libxtts-reader.so: xtts_api_codes_*), which checks the header and
the name its hashes give, each value's count, CRC-32 and codes.
"""

from __future__ import annotations

import hashlib
import os
import re
from typing import TYPE_CHECKING, Any, Optional, Union

import numpy as np
if TYPE_CHECKING:   # numpy.typing is numpy 1.20 or later (Debian 11 has 1.19): for annotations only
    import numpy.typing as npt

from . import _clib
from .manifest import CacheError

__all__ = ["AudioCodes", "codes_dir_name", "codes_count", "CODES_FORMAT"]

CODES_FORMAT = b"xtts-codes 1"
_NAME = re.compile(r"^codes-[0-9a-f]{16}$")


def codes_dir_name(dvae_sha256: str, norms_sha256: str) -> str:
    """The directory name of the codes of a DVAE and mel norms given by their files' SHA-256
    (hex): "codes-" and 16 hex digits of the SHA-256 of the two digests written in turn."""
    return "codes-" + hashlib.sha256((dvae_sha256 + norms_sha256).encode("ascii")).hexdigest()[:16]


def codes_count(n_samples: int) -> int:
    """Codes of a clip of n_samples at 22,050 Hz: one per 4 frames of the xtts mel (hop 256,
    centered), after the DVAE's two stride-2 convolutions."""
    frames = n_samples // 256 + 1
    return ((frames + 1) // 2 + 1) // 2


def _file_sha256(path: Union[str, os.PathLike[str]]) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class AudioCodes:
    """One codes directory of a cache, opened read-only (lazily, once per process: it
    pickles without its handle, for DataLoader workers).

    which: None takes the cache's only codes directory; a name ("codes-3f0c...") or a path
    names one; a (dvae_file, mel_norms_file) pair finds the directory of those files by
    their SHA-256, as xtts-cache-codes names it. backend: "auto" (the default) or "c": the C
    library reads."""

    def __init__(self, cache_path: Union[str, os.PathLike[str]],
                 which: Union[None, str, os.PathLike[str], tuple[Any, Any]] = None, backend: str = "auto") -> None:
        self.cache_path = os.fspath(cache_path)
        if backend not in ("auto", "c"):
            raise ValueError("backend %r: one of auto, c (the pure-Python reader left the package: it is the "
                             "tests' oracle)" % backend)
        self.backend = "c"
        self.path = self._find(which)
        self._rd: Optional[_clib.CCodes] = None
        self._pid = -1
        rd = self._reader()
        self.num_tokens: int = rd.num_tokens
        self.dvae_sha256: str = rd.dvae_sha256
        self.norms_sha256: str = rd.norms_sha256
        self.mel_norms: npt.NDArray[np.float32] = rd.mel_norms

    def _find(self, which: Union[None, str, os.PathLike[str], tuple[Any, Any]]) -> str:
        if isinstance(which, tuple):
            name = codes_dir_name(_file_sha256(which[0]), _file_sha256(which[1]))
            path = os.path.join(self.cache_path, name)
            if not os.path.isdir(path):
                raise CacheError("%s: no audio codes of %s and %s (%s): run xtts-cache-codes %s --dvae %s --mel-norms %s"
                                 % (self.cache_path, which[0], which[1], name, self.cache_path, which[0], which[1]))
            return path
        if which is not None:
            p = os.fspath(which)
            path = p if os.sep in p else os.path.join(self.cache_path, p)
            if not _NAME.match(os.path.basename(path)) or not os.path.isdir(path):
                raise CacheError("%s: not a codes directory" % path)
            return path
        try:
            names = sorted(n for n in os.listdir(self.cache_path) if _NAME.match(n))
        except OSError as e:
            raise CacheError("%s: %s" % (self.cache_path, e.strerror)) from None
        if len(names) != 1:
            raise CacheError("%s: %s: name the DVAE's (the codes= argument)" % (
                self.cache_path, "no audio codes (run xtts-cache-codes)" if not names else
                "%d codes directories (%s)" % (len(names), ", ".join(names))))
        return os.path.join(self.cache_path, names[0])

    def _reader(self) -> _clib.CCodes:
        """This process's reader (handles inherited through fork() are not used)."""
        pid = os.getpid()
        if self._rd is None or self._pid != pid:
            self._rd = _clib.CCodes(_clib._need(), self.path)
            self._pid = pid
        return self._rd

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_rd"], state["_pid"] = None, -1
        return state

    def get(self, key: bytes) -> npt.NDArray[np.uint16]:
        """The codes stored under a record's content key (XttsCache.content_key), checked:
        the count, the CRC-32 and every code below num_tokens. KeyError when absent."""
        codes = self._reader().get(key)
        if codes is None:
            raise KeyError(key.hex()[:16])
        return codes
