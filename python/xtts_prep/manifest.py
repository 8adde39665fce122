"""The manifest: load_manifest and config_hash, checked by the C library (formats/manifest.c
through libxtts-reader.so, xtts_api_manifest_check and xtts_api_config_hash), and the
package's errors. Every error is a CacheError naming the file and the key.
"""

from __future__ import annotations

import json
import os
from typing import Any, Union

__all__ = ["CacheError", "CacheResourceError", "load_manifest", "config_hash", "SHARED_VERSION"]

SHARED_VERSION = 3   # manifest format_version of a cache whose entries are ranges of shard directories


class CacheError(Exception):
    """A cache that cannot be read: a damaged manifest, a missing or damaged shard, a
    corrupt record."""


class CacheResourceError(CacheError, OSError):
    """A shard that cannot be opened for want of a resource of this process or system (a
    descriptor or memory limit, a permission): not damage. errno and strerror are set."""


_Path = Union[str, "os.PathLike[str]"]


def load_manifest(path: _Path) -> dict[str, Any]:
    """Read a manifest.json checked as the C loader checks it (formats/cache.md sections 4 and
    5); returns the parsed object. CacheError when a build holds the directory's lock, the
    directory is an unfinished build, or the manifest breaks a rule."""
    from . import _clib
    _clib.manifest_check(path)
    try:
        with open(path, "rb") as f:
            m: dict[str, Any] = json.loads(f.read().decode("utf-8"))
    except (OSError, ValueError) as e:   # replaced or removed since the check
        raise CacheError("%s: %s" % (path, e)) from None
    return m


def config_hash(cfg: Any) -> str:
    """The configuration hash (formats/cache.md section 5) of a manifest's "config" object, as
    the C library computes it; CacheError for a configuration it refuses."""
    from . import _clib
    return _clib.config_hash_of(json.dumps(cfg).encode("utf-8"))
