"""Manifest loading and checking, by the rules of formats/cache.md sections 4 and 5.

The C loader (formats/manifest.c, xtts_manifest_load) and this module apply the same
rules; tests/e2e/cache_read_damage.sh and tests/e2e/python_package.sh give both the same
damaged manifests. Every error is a CacheError naming the file and the key.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import math
import os
import re
from typing import Any, Callable, Iterable, Optional, Sequence, Tuple, Union

__all__ = ["CacheError", "CacheResourceError", "load_manifest", "config_hash", "MANIFEST_MAX_BYTES"]

MANIFEST_MAX_BYTES = 1 << 30   # as the C loader
_CHUNK = 1 << 20


from xtts_prep.manifest import CacheError, CacheResourceError  # the package's errors, raised alike


_HEX64 = re.compile(r"[0-9a-f]{64}\Z")
_SHARD = re.compile(r"shard-[0-9]{5}(-[0-9]{5})?\Z")
_BASE = re.compile(r"base-[0-9]{5}\Z")   # a shard an updated cache shares (format_version 3)
SHARED_VERSION = 3   # manifest format_version of a cache whose entries are ranges of shard directories
_I32 = 2 ** 31 - 1

# (key, kind, lo, hi) — kind: "int", "num", "str" (lo..hi bytes), or a tuple of allowed strings
_Rule = Tuple[str, Union[str, Tuple[str, ...]], Optional[float], Optional[float]]
_Path = Union[str, "os.PathLike[str]"]
# makes the CacheError for a config key: bad(key, what)
_Bad = Callable[[str, str], CacheError]

_MEL: list[_Rule] = [
    ("preset", "str", 1, 15),
    ("sample_rate", "int", 1000, 768000),
    ("n_fft", "int", 2, 1048576),
    ("hop_samples", "int", 1, 1048576),
    ("win_samples", "int", 1, None),          # ..n_fft
    ("n_mels", "int", 1, 1024),
    ("fmin_hz", "num", 0, None),              # ..sample_rate/2
    ("fmax_hz", "num", None, None),           # fmin < fmax <= sample_rate/2
    ("mel_scale", ("htk", "slaney", "linear"), None, None),
    ("mel_norm", ("slaney", "none"), None, None),
    ("center", "int", 0, 1),
    ("pad_samples", "int", 0, None),          # ..n_fft
    ("power", "int", 1, 2),
    ("mag_eps", "num", 0, 1),
    ("log", ("ln", "log10", "none"), None, None),
    ("log_floor", "num", 1e-30, 1),
    ("drop_last_frame", "int", 0, 1),
    ("whisper_post", "int", 0, 1),
]
_TOP: list[_Rule] = [
    ("tokenizer", "str", 1, 31),
    ("vocab_hash", "str", 0, 71),
    ("vocab_size", "int", 0, _I32),
    ("max_tokens", "int", 1, 65536),
    ("pad_token", "int", 0, _I32),
    ("max_frames", "int", 1, 1048576),
    ("buckets", "buckets", None, None),
    ("dtype", ("fp16", "fp32"), None, None),
    ("shuffle", "int", 0, 1),
    ("zstd_level", "int", 1, 22),
    ("resampler", ("soxr", "libsamplerate"), None, None),
    ("resample_quality", "str", 0, 15),
    ("trim_db", "num", 0, 200),
    ("val_fraction", "num", 0, 1),           # 0 <= f < 1
    ("algo_version", "int", 1, _I32),
]
_REAL_KEYS = {k for k, kind, _, _ in _MEL + _TOP if kind == "num"}


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_num(v: Any) -> bool:
    return (_is_int(v) or isinstance(v, float)) and math.isfinite(v)


def _check_obj(where: str, prefix: str, obj: Any, table: Sequence[_Rule], extra: Iterable[str] = ()) -> _Bad:
    if not isinstance(obj, dict):
        raise CacheError("%s: config key \"%s\": must be an object" % (where, prefix.rstrip(".") or "config"))
    known = {k for k, _, _, _ in table} | set(extra)
    for k in sorted(obj):
        if k not in known:
            raise CacheError("%s: config key \"%s%s\": unknown key" % (where, prefix, k))

    def bad(key: str, what: str) -> CacheError:
        return CacheError("%s: config key \"%s%s\": %s" % (where, prefix, key, what))

    for key, kind, lo, hi in table:
        if key not in obj:
            raise bad(key, "missing")
        v = obj[key]
        if kind == "int":
            if not _is_int(v):
                raise bad(key, "must be an integer")
            if lo is not None and v < lo or hi is not None and v > hi:
                raise bad(key, "%d out of range [%s, %s]" % (v, lo, hi))
        elif kind == "num":
            if not _is_num(v):
                raise bad(key, "must be a number")
            if lo is not None and v < lo or hi is not None and v > hi:
                raise bad(key, "%r out of range" % v)
        elif kind == "str":
            assert lo is not None and hi is not None   # every "str" rule has both bounds
            if not isinstance(v, str) or not lo <= len(v.encode("utf-8")) <= hi or "\0" in v:
                raise bad(key, "must be a string of %d..%d bytes" % (lo, hi))
        elif kind == "buckets":
            if not isinstance(v, list) or len(v) > 16:
                raise bad(key, "must be an array of at most 16 integers")
            prev = 0
            for b in v:
                if not _is_int(b) or b <= prev or b > obj.get("max_frames", 0):
                    raise bad(key, "must be strictly increasing integers in [1, max_frames]")
                prev = b
        else:
            if v not in kind:
                raise bad(key, "must be one of %s" % ", ".join('"%s"' % s for s in kind))
    return bad


def check_config(cfg: Any, where: str = "manifest") -> None:
    """Check a manifest's "config" object (formats/cache.md section 5)."""
    if not isinstance(cfg, dict):
        raise CacheError("%s: \"config\": must be an object" % where)
    _check_obj(where, "", cfg, _TOP, extra=("mel", "audio"))
    bad = _check_obj(where, "mel.", cfg["mel"] if "mel" in cfg else None, _MEL)
    m = cfg["mel"]
    if m["win_samples"] > m["n_fft"]:
        raise bad("win_samples", "must be <= n_fft")
    if m["pad_samples"] > m["n_fft"]:
        raise bad("pad_samples", "must be <= n_fft")
    if m["fmin_hz"] > m["sample_rate"] / 2:
        raise bad("fmin_hz", "must be <= sample_rate/2")
    if not m["fmin_hz"] < m["fmax_hz"] <= m["sample_rate"] / 2:
        raise bad("fmax_hz", "must be in (fmin_hz, sample_rate/2]")
    if not cfg["val_fraction"] < 1:
        raise CacheError("%s: config key \"val_fraction\": must be below 1" % where)
    vh = cfg["vocab_hash"]
    vh = vh[7:] if vh.startswith("sha256:") else vh
    if vh and not _HEX64.match(vh):
        raise CacheError("%s: config key \"vocab_hash\": must be empty, 64 lower-case hex digits or "
                         "sha256:<64 hex digits>" % where)
    if "audio" in cfg and cfg["audio"] not in ("none", "int16", "flac"):
        raise CacheError("%s: config key \"audio\": must be one of \"none\", \"int16\", \"flac\"" % where)
    if m["mel_scale"] == "linear" and m["n_mels"] != m["n_fft"] // 2 + 1:
        raise CacheError("%s: config key \"mel\": a linear spectrogram has n_fft/2+1 bins (n_mels)" % where)


def _real(x: float) -> str:
    """A double as jansson prints it ("%.17g", ".0" when it looks like an integer,
    exponent without '+' or leading zeros)."""
    s = "%.17g" % float(x)
    if "." not in s and "e" not in s:
        s += ".0"
    if "e" in s:
        mant, exp = s.split("e")
        sign = "-" if exp.startswith("-") else ""
        s = mant + "e" + sign + exp.lstrip("+-").lstrip("0")
    return s


def _dump(v: Any, key: Optional[str] = None) -> str:
    if isinstance(v, dict):
        return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + _dump(v[k], k) for k in sorted(v)) + "}"
    if isinstance(v, list):
        return "[" + ",".join(_dump(x) for x in v) + "]"
    if key in _REAL_KEYS:
        return _real(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    return str(int(v))


def config_hash(cfg: Any) -> str:
    """The configuration hash (formats/cache.md section 5): SHA-256 of the compact,
    key-sorted JSON of the checked configuration, reals printed with 17 digits."""
    return hashlib.sha256(_dump(cfg).encode("utf-8")).hexdigest()


def _read_bounded(path: _Path) -> bytes:
    """The file's bytes, refusing more than MANIFEST_MAX_BYTES and a NUL byte (JSON
    text holds none), so /dev/zero or a huge file ends at once with an error."""
    parts: list[bytes] = []
    total = 0
    try:
        with open(path, "rb") as f:
            while True:
                chunk = f.read(_CHUNK)
                if not chunk:
                    break
                z = chunk.find(b"\0")
                if z >= 0:
                    raise CacheError("%s: not JSON text (NUL byte at offset %d)" % (path, total + z))
                total += len(chunk)
                if total > MANIFEST_MAX_BYTES:
                    raise CacheError("%s: larger than %d bytes" % (path, MANIFEST_MAX_BYTES))
                parts.append(chunk)
    except OSError as e:
        raise CacheError("%s: %s" % (path, e.strerror or e)) from None
    return b"".join(parts)


def _no_dups(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    d: dict[str, Any] = {}
    for k, v in pairs:
        if k in d:
            raise ValueError("duplicate object key \"%s\"" % k)
        d[k] = v
    return d


def _count(v: Any) -> bool:
    return _is_int(v) and v >= 0


LOCK_NAME = ".xtts-lock"   # a build's lock; a build in parts adds .xtts-lock-part-NNNNN


def _proc_locks_holder(st: os.stat_result) -> Optional[int]:
    """The pid /proc/locks names as another process holding a lock on the file st
    describes, 0 when none, None when the table cannot be read."""
    try:
        with open("/proc/locks") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    want = "%02x:%02x:%d" % (os.major(st.st_dev), os.minor(st.st_dev), st.st_ino)
    for line in lines:
        col = line.split()
        # "1: FLOCK  ADVISORY  WRITE 27592 fe:00:11429457 0 EOF"; waiters ("->") hold nothing
        if len(col) >= 6 and col[1] != "->" and col[5] == want:
            pid = int(col[4]) if col[4].isdigit() else 0
            if pid == os.getpid():
                continue   # this process's own lock is not another build
            return pid if pid > 0 else 1
    return 0


def _lock_holder(path: str) -> int:
    """The pid holding the lock file path (1 when not known), 0 when nobody holds it. Looked
    up without taking the lock (a reader that took it could make a starting build fail),
    with a non-blocking shared flock() where /proc/locks cannot be read."""
    try:
        st = os.stat(path)
    except OSError:
        return 0
    held = _proc_locks_holder(st)
    if held is not None:
        return held
    import fcntl
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return 0
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            fcntl.flock(fd, fcntl.LOCK_UN)
            return 0
        except OSError:
            pid = os.pread(fd, 23, 0).split(b"\n")[0].strip()
            return int(pid) if pid.isdigit() and int(pid) > 0 else 1
    finally:
        os.close(fd)


def building(cache_dir: _Path) -> Optional[str]:
    """The C readers' words (cache/store/read/unfinished.c) when a build, a part of one or a merge
    holds the directory's lock: a build in progress from its first instant, whether or not
    a manifest is there yet (the build may be replacing the shards it lists). Else None."""
    try:
        names = sorted(n for n in os.listdir(cache_dir) if n.startswith(LOCK_NAME))
    except OSError:
        return None
    for n in names:
        pid = _lock_holder(os.path.join(cache_dir, n))
        if pid:
            return ("%s: a build is running in this directory (lock %s held%s); read it when the build has "
                    "finished" % (cache_dir, n, " by pid %d" % pid if pid > 1 else ""))
    return None


def unfinished(cache_dir: _Path) -> Optional[str]:
    """What a cache directory without manifest.json holds, in the C readers' words
    (cache/store/read/unfinished.c): a build running in it, an unfinished build, or None."""
    why = building(cache_dir)
    if why:
        return why
    try:
        names = os.listdir(cache_dir)
    except OSError:
        return None
    parts = sorted(n for n in names if n.startswith("manifest.part-") and n.endswith(".json") and ".tmp" not in n)
    shards = [n for n in names if n.startswith("shard-")]
    if parts:
        n_parts = None
        try:
            with open(os.path.join(cache_dir, parts[0]), "rb") as f:
                v = json.loads(f.read(MANIFEST_MAX_BYTES).decode("utf-8")).get("n_parts")
            if _is_int(v) and 0 < v < 1000000:
                n_parts = v
        except (OSError, ValueError, UnicodeDecodeError, AttributeError):
            pass
        return ("%s: unfinished: %d of %s parts done; re-run the build of the missing parts, or run "
                "xtts-cache-merge when all are done" % (cache_dir, len(parts), n_parts if n_parts else "?"))
    if shards:
        return ("%s: unfinished build (no manifest.json, %d shard director%s); re-run xtts-melcache to finish it"
                % (cache_dir, len(shards), "y" if len(shards) == 1 else "ies"))
    return None


def load_manifest(path: _Path) -> dict[str, Any]:
    """Read and check a manifest.json; returns the parsed object. CacheError when a build
    holds the directory's lock, or the directory is an unfinished build."""
    why = building(os.path.dirname(path) or ".")
    if why:
        raise CacheError(why)
    if not os.path.exists(path):
        why = unfinished(os.path.dirname(path) or ".")
        if why:
            raise CacheError(why)
    text = _read_bounded(path)
    try:
        m = json.loads(text.decode("utf-8"), object_pairs_hook=_no_dups,
                       parse_constant=lambda c: (_ for _ in ()).throw(ValueError("%s is not JSON" % c)))
    except UnicodeDecodeError as e:
        raise CacheError("%s: invalid JSON: not UTF-8 (byte %d)" % (path, e.start)) from None
    except ValueError as e:
        raise CacheError("%s: invalid JSON: %s" % (path, e)) from None
    except RecursionError:
        raise CacheError("%s: invalid JSON: nested too deeply" % path) from None
    return check_manifest(m, str(path))   # str(): as "%s" shows it


def _check_shards(shards: Any, shared: bool, bad: Callable[[str, str], CacheError]) -> int:
    """The "shards" entries; the records they hold. In a format_version 3 manifest an entry
    is a range of a directory's local keys ("local_first"), and a directory may be listed
    again for a range no other entry takes."""
    if not isinstance(shards, list):
        raise bad("shards", "must be an array")
    nxt = 0
    # per directory, the ranges of keys taken so far (those with records), sorted and disjoint:
    # a new range overlaps one of them only if it overlaps its neighbours there
    seen: dict[str, tuple[list[int], list[int]]] = {}
    for i, s in enumerate(shards):
        key = "shards[%d]" % i
        if not isinstance(s, dict):
            raise bad(key, "must be an object")
        sn = s.get("name")
        if not isinstance(sn, str) or not (_SHARD.match(sn) or (shared and _BASE.match(sn))):
            raise bad(key, "\"name\" must be shard-NNNNN, shard-KKKKK-NNNNN or base-NNNNN" if shared
                      else "\"name\" must be shard-NNNNN or shard-KKKKK-NNNNN")
        if not all(_count(s.get(k)) for k in ("records", "bytes", "first_index")):
            raise bad(key, "\"records\", \"bytes\" and \"first_index\" must be non-negative integers")
        if "local_first" in s and not shared:
            raise bad(key, "\"local_first\" belongs to format_version 3")
        lf = s.get("local_first", 0)
        if not _count(lf) or lf > (2 ** 63 - 1) // 4:
            raise bad(key, "\"local_first\" must be a non-negative integer")
        if s["first_index"] != nxt:
            raise bad(key, "first_index %d, the shards before it hold %d records" % (s["first_index"], nxt))
        if s["records"] > (2 ** 63 - 1) // 4 - nxt:
            raise bad(key, "\"records\" too large")
        nxt += s["records"]
        if sn in seen and not shared:
            raise bad(key, "shard listed twice")
        n = s["records"]
        starts, ends = seen.setdefault(sn, ([], []))
        if n:
            j = bisect.bisect_right(starts, lf)
            if (j > 0 and ends[j - 1] > lf) or (j < len(starts) and starts[j] < lf + n):
                raise bad(key, "a range of keys listed twice")
            starts.insert(j, lf)
            ends.insert(j, lf + n)
    return nxt


def check_manifest(m: Any, name: str = "manifest") -> dict[str, Any]:
    def bad(key: str, what: str) -> CacheError:
        return CacheError("%s: \"%s\": %s" % (name, key, what))

    if not isinstance(m, dict):
        raise CacheError("%s: not a JSON object" % name)
    fv: Any = m.get("format_version")
    if not _is_int(fv):
        raise bad("format_version", "must be an integer")
    if fv not in (1, 2, SHARED_VERSION):
        raise CacheError("%s: manifest format_version %d, this reader reads 1..3" % (name, fv))
    if not _count(m.get("records")):
        raise bad("records", "must be a non-negative integer")
    if "config" not in m:
        raise bad("config", "missing")
    check_config(m["config"], name)
    h = m.get("config_hash")
    if not isinstance(h, str) or not _HEX64.match(h):
        raise bad("config_hash", "must be 64 lower-case hex digits")
    want = config_hash(m["config"])
    if want != h:
        raise CacheError("%s: config_hash %.12s... does not match the config (hashes to %.12s...)"
                         % (name, h, want))
    nxt = _check_shards(m.get("shards"), fv == SHARED_VERSION, bad)
    if nxt != m["records"]:
        raise bad("records", "%d, the shards hold %d" % (m["records"], nxt))
    stats = m.get("stats")
    if not isinstance(stats, dict):
        raise bad("stats", "must be an object")
    if "frames" in stats and not _count(stats["frames"]):
        raise bad("stats.frames", "must be a non-negative integer")
    n_mels = m["config"]["mel"]["n_mels"]
    for a in ("mel_sum", "mel_sumsq", "mel_mean", "mel_std"):
        if a in stats:
            v = stats[a]
            if not isinstance(v, list) or len(v) != n_mels or not all(_is_num(x) for x in v):
                raise bad("stats." + a, "must be an array of %d numbers" % n_mels)
    if ("part" in m) != ("n_parts" in m):
        raise bad("n_parts" if "part" in m else "part",
                  "missing (a partial manifest has both \"part\" and \"n_parts\")")
    if "part" in m:
        if not _count(m["n_parts"]) or not 1 <= m["n_parts"] <= 99999:
            raise bad("n_parts", "must be an integer in [1, 99999]")
        if not _count(m["part"]) or m["part"] >= m["n_parts"]:
            raise bad("part", "must be an integer in [0, n_parts)")
    if "rejects" in m and not isinstance(m["rejects"], list):
        raise bad("rejects", "must be an array")
    if "rejected" in m and not _count(m["rejected"]):
        raise bad("rejected", "must be a non-negative integer")
    for t in ("speakers", "languages"):
        if t in m and (not isinstance(m[t], list) or not all(isinstance(x, str) for x in m[t])):
            raise bad(t, "must be an array of strings")
    return m
