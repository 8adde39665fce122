"""The modules the oracle needs beside numpy, py-lmdb and zstandard, imported the first time it
reads (the package itself needs neither: its decoder is the C library)."""

from __future__ import annotations

import importlib
from types import ModuleType

from xtts_prep.manifest import CacheError

__all__ = ["lmdb", "zstandard"]

_DEBIAN = {"lmdb": "python3-lmdb", "zstandard": "python3-zstandard"}


def _load(name: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except ImportError as e:
        raise CacheError("the tests' oracle (python/tests/xtts_oracle) needs the Python module %r, which does "
                         "not import (%s): on Debian apt-get install %s, or pip install %s"
                         % (name, e, _DEBIAN[name], name)) from None


def lmdb() -> ModuleType:
    """py-lmdb, imported on first use; CacheError when it is not installed."""
    return _load("lmdb")


def zstandard() -> ModuleType:
    """python-zstandard, imported on first use; CacheError when it is not installed."""
    return _load("zstandard")
