"""xtts_prep: read an xtts-prep training cache from Python (docs/python-reader.md)."""

from .manifest import CacheError, load_manifest, config_hash
from ._clib import FallbackWarning
from .cache import XttsCache, CacheResourceError, LENGTH_FIELDS
from .codes import AudioCodes, codes_count, codes_dir_name
from .style_mel import style_mel
from .data import (CacheDataset, BucketingBatchSampler, Collate, XttsGptDataset, XttsGptCollate,
                   VocoderSegmentDataset, check_expect)

__all__ = ["CacheError", "CacheResourceError", "FallbackWarning", "load_manifest", "config_hash", "XttsCache", "LENGTH_FIELDS",
           "CacheDataset", "BucketingBatchSampler", "Collate", "XttsGptDataset", "XttsGptCollate",
           "VocoderSegmentDataset", "check_expect", "AudioCodes", "codes_count", "codes_dir_name", "style_mel"]
__version__ = "0.1.0"
