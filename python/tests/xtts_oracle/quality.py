"""The quality flags decided over all records in pure Python, as xtts-cache-report decides them
(formats/quality_flags.c, in float32 as the C code computes): the oracle the library's
xtts_api_quality_flags is checked against. The names, masks and the metrics' dict come from the
package (xtts_prep.quality).
"""
from __future__ import annotations

import math
from typing import Any, Mapping, Optional, Sequence

import numpy as np
import numpy.typing as npt

from xtts_prep.manifest import CacheError
from xtts_prep.quality import DEFAULT_THRESHOLDS, FLAG_NAMES, decode_metrics, flag_mask, flag_names, thresholds_text

__all__ = ["flag_all", "decode_metrics", "flag_names", "flag_mask", "thresholds_text", "FLAG_NAMES"]

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
