"""ctypes binding of libxtts-reader.so, the C reader's stable interface (cache/store/read/reader_api.h).

No compiled extension module: the shared library is found and loaded at run time. It is the
package's one decoder of the cache (records, manifest checks, metrics, codes): without it
`import xtts_prep` fails with one line saying what to build or install (docs/python-reader.md,
"The C library"). Where it is looked for, first hit wins:

1. XTTS_PREP_LIB: a path to the library file, or a directory holding it ("", "0", "none" or
   "off" disable it, and the package does not import). When set, nothing else is searched.
2. The package's own directory (xtts_prep/libxtts-reader.so: the wheel `make wheel` builds).
3. The lib directory of the prefix the package was installed into by `make install`
   (PREFIX/lib/python3.X/dist-packages/xtts_prep -> PREFIX/lib).
4. The source tree's build/lib, when the package is run from the source tree
   (PYTHONPATH=python: python/xtts_prep/../../build/lib).
5. sys.prefix/lib, /usr/local/lib and /usr/lib, then the system's loader path
   (LD_LIBRARY_PATH, ld.so.cache).

A library whose xtts_api_abi_version() differs from ABI_VERSION, or that lacks a function
this package calls (one older than it), is not used.

Handles: a cache directory is opened (and its data files mapped) once per process, however
many XttsCache objects read it (shared(): counted references, dropped in a forked child).
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Optional, Union

import numpy as np
if TYPE_CHECKING:   # numpy.typing is numpy 1.20 or later (Debian 11 has 1.19): for annotations only
    import numpy.typing as npt

from .manifest import CacheError, CacheResourceError

__all__ = ["ABI_VERSION", "LIB_NAME", "FallbackWarning", "library", "library_path", "library_version",
           "load_error", "search_places", "missing_message", "CHandle", "CCodes", "MEL_F32", "MEL_F16", "shared",
           "release", "ITEM_FIELDS", "F"]

ABI_VERSION = 1
LIB_NAME = "libxtts-reader.so"
MEL_F32, MEL_F16 = 0, 1
OPEN_TOLERANT = 1
# the statuses the bindings tell apart (common/xtts_common.h)
ERANGE, ENOTFOUND = 7, 8
# errno values whose strerror words in a message mean a resource of the system, not damage
_RESOURCE_ERRNOS = (12, 24, 23, 13, 1, 11)   # ENOMEM EMFILE ENFILE EACCES EPERM EAGAIN
# xtts_api_read_items (reader_api.h): the parts of a row, the fields of a row
PART_TOKENS, PART_MEL, PART_WAVE, PART_KEY, PART_CODES, ITEM_PARTS = 0, 1, 2, 3, 4, 5
ITEM_FIELDS = 64
ID_CAP = 1025


class F:
    """Indices of a row of xtts_api_read_items' fields (XTTS_API_F_*)."""
    VERSION, DTYPE, FLAGS, N_MELS, SPLIT, ID_LEN, N_TOKENS, TOKENS_PADDED, N_FRAMES, FRAMES_PADDED = range(10)
    SPEAKER_ID, LANG_ID, N_SAMPLES, PAD_VALUE, PAD_TOKEN, TRIM_START, AUDIO, N_SECTIONS = range(10, 18)
    PAYLOAD_BYTES, FRAME_BYTES, FRAME_CRC, N_CODES, SECTIONS = range(18, 23)
LOADER_PATH = "the loader's search path (LD_LIBRARY_PATH, ld.so.cache)"
_DISABLED = ("", "0", "none", "off")


class FallbackWarning(RuntimeWarning):
    """Kept for code that filters it: the package no longer falls back to a second decoder
    (without the C library it does not import), so it is never raised."""


@dataclass
class _LibState:
    """The lookup's outcome: whether it ran, the library and its path, or why none;
    whether XTTS_PREP_LIB disabled it."""
    tried: bool = False
    lib: Optional[ctypes.CDLL] = None
    path: Optional[str] = None
    error: Optional[str] = None
    disabled: bool = False


_state = _LibState()


def _installed_prefix_lib(here: str) -> Optional[str]:
    """PREFIX/lib when the package lies in PREFIX/lib/python3.X/{dist,site}-packages."""
    packages = os.path.dirname(here)
    pyver = os.path.dirname(packages)
    if os.path.basename(packages) in ("dist-packages", "site-packages") \
            and os.path.basename(pyver).startswith("python"):
        return os.path.dirname(pyver)
    return None


def _source_tree_lib(here: str) -> Optional[str]:
    """ROOT/build/lib when the package is python/xtts_prep of a source tree ROOT."""
    root = os.path.dirname(os.path.dirname(here))
    if os.path.basename(os.path.dirname(here)) == "python" \
            and os.path.isfile(os.path.join(root, "cache", "store", "read", "reader_api.h")):
        return os.path.join(root, "build", "lib")
    return None


def _candidates() -> Optional[list[str]]:
    """The library files to try, in order (LOADER_PATH: ask the dynamic loader), or None
    when XTTS_PREP_LIB disables the library."""
    env = os.environ.get("XTTS_PREP_LIB")
    if env is not None:
        if env.strip().lower() in _DISABLED:
            return None
        return [os.path.join(env, LIB_NAME) if os.path.isdir(env) else env]
    here = os.path.dirname(os.path.abspath(__file__))
    dirs = [here, _installed_prefix_lib(here), _source_tree_lib(here)]
    dirs += [os.path.join(prefix, "lib") for prefix in (sys.prefix, "/usr/local", "/usr")]
    out: list[str] = []
    for d in dirs:
        if d is not None:
            p = os.path.join(os.path.normpath(d), LIB_NAME)
            if p not in out:
                out.append(p)
    return out + [LOADER_PATH]


def search_places() -> list[str]:
    """Where the library is looked for, in order (empty when XTTS_PREP_LIB disables it)."""
    return _candidates() or []


def _loaded_path(lib: ctypes.CDLL) -> str:
    """The file the dynamic loader mapped for lib (dladdr of one of its functions)."""

    class DlInfo(ctypes.Structure):
        _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                    ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]

    info = DlInfo()
    try:
        libc = ctypes.CDLL(None)
        addr = ctypes.cast(lib.xtts_api_abi_version, ctypes.c_void_p)
        if libc.dladdr(addr, ctypes.byref(info)) and info.dli_fname:
            return os.path.realpath(os.fsdecode(info.dli_fname))
    except (OSError, AttributeError):
        pass
    return LIB_NAME


def _bind(lib: ctypes.CDLL) -> None:
    c = ctypes
    lib.xtts_api_abi_version.restype = c.c_int
    lib.xtts_api_abi_version.argtypes = []
    lib.xtts_api_version.restype = c.c_char_p
    lib.xtts_api_version.argtypes = []
    lib.xtts_api_last_error.restype = c.c_char_p
    lib.xtts_api_last_error.argtypes = []
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
    # every other call the package makes (a library without one is passed over as older)
    size_p = c.POINTER(c.c_size_t)
    for name, args in (("open_ex", [c.c_char_p, c.c_uint]),
                       ("record", [c.c_void_p, c.c_uint64, c.c_void_p, c.c_size_t, size_p]),
                       ("text", [c.c_void_p, c.c_uint64, c.c_void_p, c.c_size_t, size_p, c.c_void_p, c.c_size_t,
                                 size_p]),
                       ("waveform", [c.c_void_p, c.c_uint64, c.c_void_p, c.c_size_t, c.c_size_t]),
                       ("find", [c.c_void_p, c.c_char_p, c.POINTER(c.c_uint64)]),
                       ("meta", [c.c_void_p, c.c_size_t, c.c_char_p, c.c_void_p, c.c_size_t, size_p]),
                       ("content_key", [c.c_void_p, c.c_uint64, c.c_void_p]),
                       ("lengths", [c.c_void_p, c.c_void_p, c.c_size_t]),
                       ("shards_with", [c.c_void_p, c.c_char_p]),
                       ("codes_open", [c.c_char_p]),
                       ("codes_close", [c.c_void_p]),
                       ("codes_header", [c.c_void_p, c.c_char_p, c.c_char_p, c.POINTER(c.c_uint32), c.c_void_p,
                                         c.c_size_t, size_p]),
                       ("codes_get", [c.c_void_p, c.c_char_p, c.c_void_p, c.c_size_t, size_p]),
                       ("quality", [c.c_void_p, c.c_uint64, c.c_void_p, c.c_size_t, size_p]),
                       ("quality_flags", [c.c_void_p, c.c_char_p, c.c_size_t, c.c_void_p, c.c_void_p, c.c_size_t]),
                       ("read_items", [c.c_void_p, c.c_void_p, c.c_void_p, c.c_size_t, c.c_int, c.c_void_p,
                                       c.c_void_p, c.c_void_p, c.c_void_p, c.c_size_t]),
                       ("manifest_check", [c.c_char_p]),
                       ("config_hash", [c.c_char_p, c.c_size_t, c.c_char_p])):
        f = getattr(lib, "xtts_api_" + name)
        f.argtypes = args
        f.restype = {"open_ex": c.c_void_p, "codes_open": c.c_void_p, "codes_close": None,
                     "shards_with": c.c_size_t}.get(name, c.c_int)


def _try_load(path: str, errors: list[str]) -> Optional[ctypes.CDLL]:
    """Load and bind one candidate; None (with the reason in errors) when it fails."""
    try:
        if path == LOADER_PATH:
            try:
                lib = ctypes.CDLL(LIB_NAME)
            except OSError:
                return None   # not on the loader's path: not an error worth naming
        else:
            lib = ctypes.CDLL(path)
        _bind(lib)
        abi: int = lib.xtts_api_abi_version()
    except OSError as e:
        errors.append("%s: %s" % (path, e))
        return None
    except AttributeError as e:   # a library older than this package: a function is missing
        errors.append("%s: an older library (%s)" % (path, e))
        return None
    if abi != ABI_VERSION:
        errors.append("%s: ABI version %d, this package needs %d" % (path, abi, ABI_VERSION))
        return None
    return lib


def library() -> Optional[ctypes.CDLL]:
    """The loaded library (a ctypes.CDLL), or None when it is absent, disabled or of
    another ABI version (load_error() says which)."""
    if _state.tried:
        return _state.lib
    _state.tried = True
    cands = _candidates()
    if cands is None:
        _state.disabled = True
        _state.error = "disabled by XTTS_PREP_LIB=%r" % os.environ.get("XTTS_PREP_LIB")
        return None
    errors: list[str] = []
    for path in cands:
        if path != LOADER_PATH and not os.path.isfile(path):
            continue
        lib = _try_load(path, errors)
        if lib is not None:
            _state.lib, _state.path = lib, path if path != LOADER_PATH else _loaded_path(lib)
            return lib
    _state.error = "; ".join(errors) if errors else "%s not found in %s" % (LIB_NAME, ", ".join(cands))
    return None


def library_path() -> Optional[str]:
    """Path of the loaded library, or None."""
    library()
    return _state.path


def library_version() -> Optional[str]:
    """The project version the loaded library was built from (xtts_api_version), or None."""
    lib = library()
    if lib is None:
        return None
    v: Optional[bytes] = lib.xtts_api_version()
    return (v or b"").decode("utf-8", "replace")


def load_error() -> Optional[str]:
    """Why no library was loaded (None when one was)."""
    library()
    return _state.error


def missing_message() -> str:
    """The one line `import xtts_prep` fails with when the library cannot be loaded: why, and
    what to build or install."""
    return ("xtts_prep needs the C reader library %s, which %s: run `make` in the source tree (the "
            "package finds build/lib/%s), or pip install the wheel `make wheel` writes to build/wheel/ "
            "(it carries the library), or set XTTS_PREP_LIB to the library or its directory"
            % (LIB_NAME, "XTTS_PREP_LIB disables" if _state.disabled else "did not load (%s)" % load_error(),
               LIB_NAME))


def _reset() -> None:
    """Forget the lookup (tests change XTTS_PREP_LIB and look again)."""
    _state.tried, _state.lib, _state.path, _state.error = False, None, None, None
    _state.disabled = False


def _last_error(lib: ctypes.CDLL) -> str:
    msg: Optional[bytes] = lib.xtts_api_last_error()
    return (msg or b"").decode("utf-8", "replace")


def error(lib: ctypes.CDLL) -> CacheError:
    """The last failed call's message as a CacheError, or a CacheResourceError (with errno)
    when it names a resource of the system (a descriptor or memory limit, a permission)."""
    msg = _last_error(lib)
    for code in _RESOURCE_ERRNOS:
        if msg.endswith(os.strerror(code)):
            return CacheResourceError(code, msg)
    return CacheError(msg)


def manifest_check(path: Union[str, os.PathLike[str]]) -> None:
    """Check the manifest at path as the C loader does (xtts_api_manifest_check); CacheError."""
    lib = _need()
    if lib.xtts_api_manifest_check(os.fsencode(path)):
        raise error(lib)


def config_hash_of(config_json: bytes) -> str:
    """The configuration hash of a configuration's JSON text (xtts_api_config_hash)."""
    lib = _need()
    out = ctypes.create_string_buffer(65)
    if lib.xtts_api_config_hash(config_json, len(config_json), out):
        raise error(lib)
    return out.value.decode("ascii")


def _need() -> ctypes.CDLL:
    lib = library()
    if lib is None:
        raise ImportError(missing_message())
    return lib


# this process's open caches: key -> [handle, references] (dropped whole in a forked child),
# under _open_lock (DataLoader threads may open datasets at once)
_open: dict[tuple[Any, ...], list[Any]] = {}
_open_pid = [os.getpid()]
_open_lock = threading.Lock()


def _after_fork_in_child() -> None:
    global _open_lock
    _open_lock = threading.Lock()   # a thread of the parent may have held it at the fork


os.register_at_fork(after_in_child=_after_fork_in_child)


def shared(path: str, key: tuple[Any, ...]) -> "CHandle":
    """The process's handle of the cache key names (opened now when none is open), one more
    reference to it; give it back with release(key). key holds the directory's identity, so a
    directory an update exchanged is opened afresh."""
    with _open_lock:
        if _open_pid[0] != os.getpid():   # a forked child: the parent's handles are not ours
            _open.clear()
            _open_pid[0] = os.getpid()
        got = _open.get(key)
        if got is None:
            got = [CHandle(_need(), path), 0]
            _open[key] = got
        got[1] += 1
        h: CHandle = got[0]
        return h


def release(key: tuple[Any, ...]) -> None:
    """One reference of shared(key) given back; the last closes the handle."""
    with _open_lock:
        if _open_pid[0] != os.getpid():
            return
        got = _open.get(key)
        if got is None:
            return
        got[1] -= 1
        if got[1] > 0:
            return
        del _open[key]
    got[0].close()


class CHandle:
    """One process's open cache in the C library. Not picklable, not to be used after
    fork() (XttsCache keeps one per process)."""

    def __init__(self, lib: ctypes.CDLL, path: Union[str, os.PathLike[str]]) -> None:
        self.lib = lib
        # tolerant: a damaged or missing shard fails the reads of its records only, as the
        # pure-Python reader, which opens each shard when first read
        self.h: Optional[int] = lib.xtts_api_open_ex(os.fsencode(path), OPEN_TOLERANT)
        if not self.h:
            raise error(lib)
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
            raise error(self.lib)

    def quality(self, index: int) -> bytes:
        """Record index's stored quality metrics (xtts_api_quality); CacheError on failure."""
        buf, n = ctypes.create_string_buffer(256), ctypes.c_size_t(0)
        self._check(self.lib.xtts_api_quality(self.h, index, buf, len(buf), ctypes.byref(n)))
        return buf.raw[:n.value]

    def quality_flags(self, thresholds: Optional[str], flags_ptr: int, dup_of_ptr: int, n: int) -> None:
        """Every record's flags and dup_of into the arrays at the pointers (xtts_api_quality_flags)."""
        text = thresholds.encode("utf-8") if thresholds is not None else None
        self._check(self.lib.xtts_api_quality_flags(self.h, text, len(text) if text is not None else 0, flags_ptr,
                                                    dup_of_ptr, n))

    def read_items(self, codes: Optional["CCodes"], indices: npt.NDArray[np.uint64], mel_dtype: int,
                   bufs: Any, caps: Any, fields: npt.NDArray[np.uint64], ids: Any) -> int:
        """xtts_api_read_items over prepared arrays (ctypes arrays of ITEM_PARTS pointers and
        caps per row, fields uint64 [n, ITEM_FIELDS], ids a buffer of ID_CAP bytes a row or
        None); its status (0, or the failure, the message in last_error())."""
        rc: int = self.lib.xtts_api_read_items(self.h, codes.h if codes is not None else None, indices.ctypes.data,
                                               len(indices), mel_dtype, bufs, caps, fields.ctypes.data, ids,
                                               ID_CAP if ids is not None else 0)
        return rc

    def last_error(self) -> CacheError:
        """The last failed call's error (error())."""
        return error(self.lib)

    def _check(self, rc: int) -> None:
        if rc:
            raise error(self.lib)

    def _sized(self, call: Callable[[Any, int, Any], int], first: int) -> tuple[int, bytes]:
        """A value of unknown size: call(buf, cap, byref(len)) with a buffer of first bytes,
        again with the size the library asked for when that was too small; (status, value)."""
        n = ctypes.c_size_t(0)
        buf = ctypes.create_string_buffer(first)
        rc = call(buf, len(buf), ctypes.byref(n))
        if rc == ERANGE and n.value > len(buf):
            buf = ctypes.create_string_buffer(n.value)
            rc = call(buf, len(buf), ctypes.byref(n))
        return rc, buf.raw[:n.value] if rc == 0 else b""

    def record(self, index: int) -> bytes:
        """Record index's stored value (xtts_api_record)."""
        rc, value = self._sized(lambda b, cap, n: int(self.lib.xtts_api_record(self.h, index, b, cap, n)), 1 << 16)
        self._check(rc)
        return value

    def text(self, index: int) -> tuple[bytes, bytes]:
        """Record index's original and normalized text, UTF-8 bytes (xtts_api_text)."""
        on, nn = ctypes.c_size_t(0), ctypes.c_size_t(0)
        cap = 4096
        for _ in range(2):
            ob, nb = ctypes.create_string_buffer(cap), ctypes.create_string_buffer(cap)
            rc = self.lib.xtts_api_text(self.h, index, ob, cap, ctypes.byref(on), nb, cap, ctypes.byref(nn))
            if rc != ERANGE:
                break
            cap = max(on.value, nn.value, 1)
        self._check(rc)
        return ob.raw[:on.value], nb.raw[:nn.value]

    def waveform(self, index: int, n_samples: int) -> npt.NDArray[np.int16]:
        """Record index's stored waveform, n_samples int16 (xtts_api_waveform)."""
        out = np.empty(n_samples, dtype=np.int16)
        self._check(self.lib.xtts_api_waveform(self.h, index, out.ctypes.data, 0, n_samples))
        return out

    def find(self, rid: bytes) -> Optional[int]:
        """The index of utterance id rid, None when no shard holds it (xtts_api_find)."""
        got = ctypes.c_uint64(0)
        rc = self.lib.xtts_api_find(self.h, rid, ctypes.byref(got))
        if rc == ENOTFOUND:
            return None
        self._check(rc)
        return got.value

    def meta(self, shard: int, key: bytes) -> Optional[bytes]:
        """A value of shard's "meta" database, None when absent (xtts_api_meta)."""
        rc, value = self._sized(lambda b, cap, n: int(self.lib.xtts_api_meta(self.h, shard, key, b, cap, n)), 256)
        if rc == ENOTFOUND:
            return None
        self._check(rc)
        return value

    def content_key(self, index: int) -> bytes:
        """Record index's 32-byte content key (xtts_api_content_key)."""
        buf = ctypes.create_string_buffer(32)
        self._check(self.lib.xtts_api_content_key(self.h, index, buf))
        return buf.raw

    def lengths(self, n: int) -> npt.NDArray[np.uint32]:
        """Every record's lengths as uint32 [n, 7] (xtts_api_lengths)."""
        out = np.empty((n, 7), dtype=np.uint32)
        self._check(self.lib.xtts_api_lengths(self.h, out.ctypes.data, n))
        return out

    def shards_with(self, db: str) -> int:
        """How many shards hold the optional database db (xtts_api_shards_with)."""
        got: int = self.lib.xtts_api_shards_with(self.h, db.encode("ascii"))
        return got

    def close(self) -> None:
        if self.h and self.pid == os.getpid():
            self.lib.xtts_api_close(self.h)
        self.h = None


class CCodes:
    """One process's open audio codes directory in the C library (xtts_api_codes_*): its
    header and checked reads by content key."""

    def __init__(self, lib: ctypes.CDLL, path: Union[str, os.PathLike[str]]) -> None:
        self.lib = lib
        self.h: Optional[int] = lib.xtts_api_codes_open(os.fsencode(path))
        if not self.h:
            raise error(lib)
        self.pid = os.getpid()
        dvae, norms = ctypes.create_string_buffer(65), ctypes.create_string_buffer(65)
        tokens, n = ctypes.c_uint32(0), ctypes.c_size_t(0)
        mel_norms = np.zeros(256, dtype=np.float32)
        if lib.xtts_api_codes_header(self.h, dvae, norms, ctypes.byref(tokens), mel_norms.ctypes.data,
                                     len(mel_norms), ctypes.byref(n)):
            e = error(lib)
            self.close()
            raise e
        self.dvae_sha256: str = dvae.value.decode("ascii")
        self.norms_sha256: str = norms.value.decode("ascii")
        self.num_tokens: int = tokens.value
        self.mel_norms: npt.NDArray[np.float32] = mel_norms[:n.value].copy()

    def get(self, key: bytes) -> Optional[npt.NDArray[np.uint16]]:
        """The codes under key, checked; None when there is no entry."""
        n = ctypes.c_size_t(0)
        out = np.empty(4096, dtype=np.uint16)
        rc = self.lib.xtts_api_codes_get(self.h, key, out.ctypes.data, len(out), ctypes.byref(n))
        if rc == ERANGE and n.value > len(out):
            out = np.empty(n.value, dtype=np.uint16)
            rc = self.lib.xtts_api_codes_get(self.h, key, out.ctypes.data, len(out), ctypes.byref(n))
        if rc == ENOTFOUND:
            return None
        if rc:
            raise error(self.lib)
        return out[:n.value].copy()

    def close(self) -> None:
        if self.h and self.pid == os.getpid():
            self.lib.xtts_api_codes_close(self.h)
        self.h = None
