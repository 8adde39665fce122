"""xtts_prep: read an xtts-prep training cache from Python (docs/python-reader.md).

The C library libxtts-reader.so is the package's one decoder of the cache: without it the
package does not import, and the ImportError says in one line what to build or install."""

from . import _clib
if _clib.library() is None:
    raise ImportError(_clib.missing_message())

from .manifest import CacheError, load_manifest, config_hash  # noqa: E402
from ._clib import FallbackWarning  # noqa: E402
from .cache import XttsCache, CacheResourceError, LENGTH_FIELDS  # noqa: E402
from .codes import AudioCodes, codes_count, codes_dir_name  # noqa: E402
from .style_mel import style_mel  # noqa: E402
from .data import (CacheDataset, BucketingBatchSampler, Collate, XttsGptDataset, XttsGptCollate,
                   VocoderSegmentDataset, check_expect)  # noqa: E402

__all__ = ["CacheError", "CacheResourceError", "FallbackWarning", "load_manifest", "config_hash", "XttsCache", "LENGTH_FIELDS",
           "CacheDataset", "BucketingBatchSampler", "Collate", "XttsGptDataset", "XttsGptCollate",
           "VocoderSegmentDataset", "check_expect", "AudioCodes", "codes_count", "codes_dir_name", "style_mel"]
__version__ = "0.1.0"
