"""The records' quality metrics and flags (docs/quality.md): the flag names and masks, the
thresholds as text for the library, and the stored 104-byte metrics (read and checked by their
CRC-32 in the library, xtts_api_quality) as a dict. The flags themselves are decided by the
library's own code (xtts_api_quality_flags), as xtts-cache-report decides them.
"""
from __future__ import annotations

import math
import struct
import zlib
from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence

import numpy as np
if TYPE_CHECKING:   # numpy.typing is numpy 1.20 or later (Debian 11 has 1.19): for annotations only
    import numpy.typing as npt

from .manifest import CacheError

QUALITY_BYTES = 104
FLAG_NAMES = ("lead_silence", "trail_silence", "cut_start", "cut_end", "clipped", "low_snr", "upsampled",
              "too_quiet", "dup_audio", "rate_outlier", "too_short", "dc_offset")
FLOAT_FIELDS = ("duration_s", "lead_silence_s", "trail_silence_s", "speech_s", "start_edge_db", "end_edge_db",
                "peak_dbfs", "rms_dbfs", "active_dbfs", "noise_dbfs", "clip_fraction", "snr_db", "bandwidth_hz",
                "chars_per_s", "tokens_per_s", "dc_offset")
STATUS_NAMES = {0: "unmeasured", 1: "measured", 2: "too_short"}
DEFAULT_THRESHOLDS: dict[str, float] = {
    "lead_silence_s": 1.0, "trail_silence_s": 1.0, "cut_edge_db": -15.0, "clip_fraction": 0.001, "snr_db": 15.0,
    "bandwidth_fraction": 0.8, "too_quiet_dbfs": -40.0, "dc_offset": 0.02, "rate_k": 4.0, "rate_min_spread": 0.08,
    "rate_min_speech_s": 0.5, "rate_min_records": 8,
}
_HEAD = struct.Struct("<BBBBIIII")
_FLOATS = struct.Struct("<16f")


def decode_metrics(buf: bytes) -> dict[str, Any]:
    """One record's stored metrics (version 1 or 2) as a dict: status (name), version,
    cut_start, cut_end, sample_rate, native_rate, n_chars, n_tokens, the float fields (as
    Python floats of the stored float32) and audio_hash (32 hex digits, as the report's TSV).
    Raises CacheError for a damaged value, as xtts_quality_decode refuses it."""
    if len(buf) != QUALITY_BYTES:
        raise CacheError("quality metrics: %d bytes, expected %d" % (len(buf), QUALITY_BYTES))
    if struct.unpack_from("<I", buf, 100)[0] != zlib.crc32(buf[:100]):
        raise CacheError("quality metrics: checksum mismatch")
    version, status, cut_start, cut_end, rate, native, n_chars, n_tokens = _HEAD.unpack_from(buf, 0)
    if version not in (1, 2):
        raise CacheError("quality metrics: unknown version %d" % version)
    if status > 2 or cut_start > 1 or cut_end > 1:
        raise CacheError("quality metrics: bad status or cut flag")
    m: dict[str, Any] = {"status": STATUS_NAMES[status], "version": version, "cut_start": cut_start,
                         "cut_end": cut_end, "sample_rate": rate, "native_rate": native, "n_chars": n_chars,
                         "n_tokens": n_tokens}
    for name, v in zip(FLOAT_FIELDS, _FLOATS.unpack_from(buf, 20)):
        if not math.isfinite(v):
            raise CacheError("quality metrics: non-finite value")
        m[name] = v
    h0, h1 = struct.unpack_from("<QQ", buf, 84)
    m["audio_hash"] = "%016x%016x" % (h0, h1)
    return m


def flag_names(mask: int) -> list[str]:
    """The names of the flags in a bitmask, in the report's order."""
    return [n for i, n in enumerate(FLAG_NAMES) if mask >> i & 1]


def flag_mask(names: Sequence[str]) -> int:
    """The bitmask of flag names; ValueError names an unknown one."""
    mask = 0
    for n in names:
        if n not in FLAG_NAMES:
            raise ValueError("unknown quality flag %r (known: %s)" % (n, ", ".join(FLAG_NAMES)))
        mask |= 1 << FLAG_NAMES.index(n)
    return mask


def thresholds_text(thresholds: Optional[Mapping[str, float]]) -> Optional[str]:
    """thresholds (a dict of the thresholds file's keys) as thresholds-file text; None stays None."""
    if thresholds is None:
        return None
    for k in thresholds:
        if k not in DEFAULT_THRESHOLDS:
            raise ValueError("unknown quality threshold %r (known: %s)" % (k, ", ".join(DEFAULT_THRESHOLDS)))
    return "".join("%s = %r\n" % (k, float(v)) for k, v in thresholds.items())
