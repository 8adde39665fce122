"""ctypes binding of libxtts-reader.so, the C reader's stable interface (cache/reader_api.h).

No compiled extension module: the shared library is found and loaded at run time, and
XttsCache falls back to the pure-Python reader when it is absent (docs/python-reader.md,
"The C library"). Where it is looked for, first hit wins:

1. XTTS_PREP_LIB: a path to the library file, or a directory holding it; "", "0", "none"
   or "off" disable the C library (the pure-Python reader is used). When set, nothing
   else is searched.
2. The package's own directory (xtts_prep/libxtts-reader.so).
3. The lib directory of the prefix the package was installed into by `make install`
   (PREFIX/lib/python3.X/dist-packages/xtts_prep -> PREFIX/lib), then sys.prefix/lib,
   /usr/local/lib and /usr/lib.

A library whose xtts_api_abi_version() differs from ABI_VERSION is not used.
"""

from __future__ import annotations

import ctypes
import os
import sys
from dataclasses import dataclass
from typing import Optional, Union

from .manifest import CacheError

__all__ = ["ABI_VERSION", "LIB_NAME", "library", "library_path", "load_error", "CHandle", "MEL_F32", "MEL_F16"]

ABI_VERSION = 1
LIB_NAME = "libxtts-reader.so"
MEL_F32, MEL_F16 = 0, 1



@dataclass
class _LibState:
    """The lookup's outcome: whether it ran, the library and its path, or why none."""
    tried: bool = False
    lib: Optional[ctypes.CDLL] = None
    path: Optional[str] = None
    error: Optional[str] = None


_state = _LibState()


def _candidates() -> Optional[list[str]]:
    env = os.environ.get("XTTS_PREP_LIB")
    if env is not None:
        if env.strip().lower() in ("", "0", "none", "off"):
            return None
        return [os.path.join(env, LIB_NAME) if os.path.isdir(env) else env]
    here = os.path.dirname(os.path.abspath(__file__))
    out = [os.path.join(here, LIB_NAME), os.path.normpath(os.path.join(here, "..", "..", "..", LIB_NAME))]
    for prefix in (sys.prefix, "/usr/local", "/usr"):
        out.append(os.path.join(prefix, "lib", LIB_NAME))
    seen: set[str] = set()
    uniq: list[str] = []
    for p in out:
        if p not in seen:
            seen.add(p)
            uniq.append(p)
    return uniq


def _bind(lib: ctypes.CDLL) -> None:
    c = ctypes
    lib.xtts_api_abi_version.restype = c.c_int
    lib.xtts_api_abi_version.argtypes = []
    lib.xtts_api_version.restype = c.c_char_p
    lib.xtts_api_last_error.restype = c.c_char_p
    lib.xtts_api_open.restype = c.c_void_p
    lib.xtts_api_open.argtypes = [c.c_char_p]
    lib.xtts_api_close.restype = None
    lib.xtts_api_close.argtypes = [c.c_void_p]
    lib.xtts_api_count.restype = c.c_uint64
    lib.xtts_api_count.argtypes = [c.c_void_p]
    for name in ("n_mels", "max_tokens", "max_frames", "format_version"):
        f = getattr(lib, "xtts_api_" + name)
        f.restype, f.argtypes = c.c_uint32, [c.c_void_p]
    lib.xtts_api_pad_token.restype = c.c_int32
    lib.xtts_api_pad_token.argtypes = [c.c_void_p]
    lib.xtts_api_read_batch.restype = c.c_int
    lib.xtts_api_read_batch.argtypes = [c.c_void_p, c.c_void_p, c.c_size_t, c.c_void_p, c.c_size_t, c.c_void_p,
                                        c.c_int, c.c_size_t, c.c_void_p, c.c_void_p, c.c_void_p, c.c_void_p,
                                        c.c_void_p, c.c_int]


def library() -> Optional[ctypes.CDLL]:
    """The loaded library (a ctypes.CDLL), or None when it is absent, disabled or of
    another ABI version (load_error() says which)."""
    if _state.tried:
        return _state.lib
    _state.tried = True
    cands = _candidates()
    if cands is None:
        _state.error = "disabled by XTTS_PREP_LIB=%r" % os.environ.get("XTTS_PREP_LIB")
        return None
    errors: list[str] = []
    for path in cands:
        if not os.path.isfile(path):
            continue
        try:
            lib = ctypes.CDLL(path)
            _bind(lib)
            abi: int = lib.xtts_api_abi_version()
        except (OSError, AttributeError) as e:
            errors.append("%s: %s" % (path, e))
            continue
        if abi != ABI_VERSION:
            errors.append("%s: ABI version %d, this package needs %d" % (path, abi, ABI_VERSION))
            continue
        _state.lib, _state.path = lib, path
        return lib
    _state.error = "; ".join(errors) if errors else "%s not found (looked in %s)" % (LIB_NAME, ", ".join(cands))
    return None


def library_path() -> Optional[str]:
    """Path of the loaded library, or None."""
    library()
    return _state.path


def load_error() -> Optional[str]:
    """Why no library was loaded (None when one was)."""
    library()
    return _state.error


def _reset() -> None:
    """Forget the lookup (tests change XTTS_PREP_LIB and look again)."""
    _state.tried, _state.lib, _state.path, _state.error = False, None, None, None


def _last_error(lib: ctypes.CDLL) -> str:
    msg: Optional[bytes] = lib.xtts_api_last_error()
    return (msg or b"").decode("utf-8", "replace")


class CHandle:
    """One process's open cache in the C library. Not picklable, not to be used after
    fork() (XttsCache keeps one per process)."""

    def __init__(self, lib: ctypes.CDLL, path: Union[str, os.PathLike[str]]) -> None:
        self.lib = lib
        self.h: Optional[int] = lib.xtts_api_open(os.fsencode(path))
        if not self.h:
            raise CacheError(_last_error(lib))
        self.pid = os.getpid()
        self.count: int = lib.xtts_api_count(self.h)
        self.n_mels: int = lib.xtts_api_n_mels(self.h)
        self.max_tokens: int = lib.xtts_api_max_tokens(self.h)
        self.max_frames: int = lib.xtts_api_max_frames(self.h)
        self.pad_token: int = lib.xtts_api_pad_token(self.h)

    def read_batch(self, indices_ptr: int, n: int, tokens_ptr: int, tokens_cap: int, mel_ptr: int, mel_dtype: int,
                   frames_cap: int, n_tokens_ptr: int, n_frames_ptr: int, speaker_ptr: int, lang_ptr: int,
                   split_ptr: int, threads: int) -> None:
        """Raw pointers (ints) in, CacheError out on failure."""
        rc: int = self.lib.xtts_api_read_batch(self.h, indices_ptr, n, tokens_ptr, tokens_cap, mel_ptr, mel_dtype,
                                          frames_cap, n_tokens_ptr, n_frames_ptr, speaker_ptr, lang_ptr, split_ptr,
                                          threads)
        if rc:
            raise CacheError(_last_error(self.lib))

    def close(self) -> None:
        if self.h and self.pid == os.getpid():
            self.lib.xtts_api_close(self.h)
        self.h = None
