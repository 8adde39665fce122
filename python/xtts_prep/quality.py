"""The records' quality metrics and flags (docs/quality.md) in pure Python: the stored
104-byte form decoded, and the flags decided over all records as xtts-cache-report decides
them (formats/quality_flags.c, in float32 as the C code computes), for the Python backend.
The C backend calls the library's own implementation (xtts_api_quality_flags) instead.
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


_F = np.float32


def _bit(name: str) -> int:
    return 1 << FLAG_NAMES.index(name)


def _clip_flags(m: Mapping[str, Any], t: Mapping[str, float]) -> int:
    """formats/quality_flags.c clip_flags, with its float32 comparisons."""
    if m["status"] == "unmeasured":
        return 0
    if m["status"] == "too_short":
        return 1 << FLAG_NAMES.index("too_short")
    f = 0
    if _F(m["clip_fraction"]) > _F(t["clip_fraction"]):
        f |= _bit("clipped")
    if abs(_F(m["dc_offset"])) > _F(t["dc_offset"]):
        f |= _bit("dc_offset")
    if _F(m["lead_silence_s"]) > _F(t["lead_silence_s"]):
        f |= _bit("lead_silence")
    if _F(m["trail_silence_s"]) > _F(t["trail_silence_s"]):
        f |= _bit("trail_silence")
    if m["cut_start"] and _F(m["start_edge_db"]) >= _F(t["cut_edge_db"]):
        f |= _bit("cut_start")
    if m["cut_end"] and _F(m["end_edge_db"]) >= _F(t["cut_edge_db"]):
        f |= _bit("cut_end")
    if m["speech_s"] > 0 and _F(m["snr_db"]) < _F(t["snr_db"]):
        f |= _bit("low_snr")
    if _F(m["active_dbfs"]) < _F(t["too_quiet_dbfs"]):
        f |= _bit("too_quiet")
    elif m["speech_s"] > 0 and _F(m["bandwidth_hz"]) < _F(t["bandwidth_fraction"]) * _F(0.5) * _F(m["sample_rate"]):
        f |= _bit("upsampled")
    return f


def _median_sorted(v: npt.NDArray[np.float32]) -> np.float32:
    n = len(v)
    return _F(v[n // 2]) if n % 2 else _F(_F(0.5) * (v[n // 2 - 1] + v[n // 2]))


_RATE_UNTRUSTED = sum(1 << FLAG_NAMES.index(n) for n in ("cut_start", "cut_end", "low_snr", "too_quiet", "too_short"))


def _flag_rates(metrics: Sequence[Mapping[str, Any]], speakers: Sequence[int], t: Mapping[str, float],
                flags: npt.NDArray[np.uint32]) -> None:
    """formats/quality_flags.c flag_rates: per speaker, |ln(rate) - median| > rate_k x spread."""
    by_spk: dict[int, list[tuple[np.float32, int]]] = {}
    for i, m in enumerate(metrics):
        if (m["status"] != "measured" or m["n_chars"] == 0 or _F(m["speech_s"]) < _F(t["rate_min_speech_s"])
                or not m["chars_per_s"] > 0 or int(flags[i]) & _RATE_UNTRUSTED):
            continue
        by_spk.setdefault(int(speakers[i]), []).append((np.log(_F(m["chars_per_s"])), i))
    bit = 1 << FLAG_NAMES.index("rate_outlier")
    for entries in by_spk.values():
        if len(entries) < int(t["rate_min_records"]):
            continue
        entries.sort()
        vals = np.array([v for v, _ in entries], dtype=np.float32)
        med = _median_sorted(vals)
        dev = np.sort(np.abs(vals - med).astype(np.float32))
        spread = _F(_F(1.4826) * _median_sorted(dev))
        spread = max(spread, _F(t["rate_min_spread"]))
        for v, i in entries:
            if abs(_F(v - med)) > _F(_F(t["rate_k"]) * spread):
                flags[i] |= bit


def flag_all(metrics: Sequence[Mapping[str, Any]], speakers: Sequence[int],
             thresholds: Optional[Mapping[str, float]] = None) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.int64]]:
    """Every record's flags (uint32 bitmasks) and dup_of (int64, -1 none) from the decoded
    metrics and the records' speaker ids, as xtts_quality_flag_all decides them."""
    thresholds_text(thresholds)   # checks the keys
    t = dict(DEFAULT_THRESHOLDS, **(thresholds or {}))
    n = len(metrics)
    flags = np.array([_clip_flags(m, t) for m in metrics], dtype=np.uint32)
    dup_of = np.full(n, -1, dtype=np.int64)
    first: dict[str, int] = {}
    for i, m in enumerate(metrics):
        if m["status"] == "unmeasured":
            continue
        j = first.setdefault(m["audio_hash"], i)
        if j != i:
            flags[i] |= 1 << FLAG_NAMES.index("dup_audio")
            dup_of[i] = j
    _flag_rates(metrics, speakers, t, flags)
    return flags, dup_of
