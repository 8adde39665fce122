"""xtts_oracle: the independent pure-Python reader of an xtts-prep cache (py-lmdb and
zstandard), the oracle the package's one decoder (libxtts-reader.so) is checked against by the
tests. It was the package's Python backend and decodes every format on its own: the manifest
rules (manifest.py), the record codec (record.py), the LMDB page walk (lmdbcheck.py), the audio
codes (codes.py) and the quality flags (quality.py)."""

from .manifest import load_manifest, config_hash, check_manifest
from .cache import XttsCache
from .codes import AudioCodes
from .record import decode_record, parse_header

__all__ = ["XttsCache", "AudioCodes", "load_manifest", "config_hash", "check_manifest", "decode_record",
           "parse_header"]


def cache(path, backend="python", **kw):
    """A reader of the cache at path by name, for tests that run the same reads through both:
    "python" the oracle's XttsCache, "c" (or "auto") the package's."""
    if backend == "python":
        return XttsCache(path, **kw)
    import xtts_prep
    return xtts_prep.XttsCache(path, backend=backend, **kw)
