"""The modules only the pure-Python reader uses, py-lmdb and zstandard, imported the first
time that reader needs them.

The C reader (libxtts-reader.so, _clib.py) needs neither, so the wheel that carries the
library needs numpy alone. They are the package's "fallback" extra
(pip install 'xtts_prep[fallback]'; Debian: python3-lmdb python3-zstandard); without them
the Python reader raises CacheError naming what is missing.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from .manifest import CacheError

__all__ = ["lmdb", "zstandard"]

_DEBIAN = {"lmdb": "python3-lmdb", "zstandard": "python3-zstandard"}


def _load(name: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except ImportError as e:
        raise CacheError("the pure-Python reader needs the Python module %r, which does not import (%s): "
                         "pip install 'xtts_prep[fallback]', or on Debian apt-get install %s"
                         % (name, e, _DEBIAN[name])) from None


def lmdb() -> ModuleType:
    """py-lmdb, imported on first use; CacheError when it is not installed."""
    return _load("lmdb")


def zstandard() -> ModuleType:
    """python-zstandard, imported on first use; CacheError when it is not installed."""
    return _load("zstandard")
