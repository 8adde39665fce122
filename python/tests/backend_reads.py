"""Every public read of the xtts_prep package, written as one canonical JSON document, so
that the package (its one decoder, libxtts-reader.so) and the tests' oracle (xtts_oracle, the
independent pure-Python reader), or two machines, can be compared with cmp: run by
tests/e2e/python_backends_equal.sh and tests/e2e/python_wheel_clean_root.sh.

    backend_reads.py [--oracle] [--without-fallback] OUT.json CACHE...
    backend_reads.py --make-codes CACHE      (writes a codes directory with py-lmdb)
    backend_reads.py --without-fallback --python-get CACHE   (record 0 by the oracle: the
                                                              blocker's own check)

--oracle reads with xtts_oracle (python/tests/xtts_oracle: XttsCache, AudioCodes, and the
package's datasets over them); without it the package reads. The reader used is printed,
"reader: library" or "reader: oracle". --without-fallback makes `import lmdb` and `import
zstandard` fail (as in a venv holding numpy and the wheel alone) before the package is
imported. Arrays are written as dtype, shape and SHA-256 of their bytes; an exception as its
class name (the readers word their messages differently, and both name the shard, index and
id).

--make-codes writes CACHE/codes-<16 hex>/ in the format of formats/cache.md ("Audio codes")
for made-up DVAE and mel norms digests: for each record its content key's entry, the count
its waveform gives, codes drawn from a seeded generator below num_tokens.
"""

import hashlib
import importlib.abc
import json
import os
import random
import struct
import sys
import zlib


class _Blocked(importlib.abc.MetaPathFinder):
    """Makes the fallback's modules unimportable, as where they are not installed."""

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("lmdb", "zstandard"):
            raise ImportError("No module named %r (blocked by backend_reads.py)" % name)
        return None


def _canon(v):
    import numpy as np
    if isinstance(v, np.ndarray):
        a = np.ascontiguousarray(v)
        return {"dtype": str(a.dtype), "shape": list(a.shape), "sha256": hashlib.sha256(a.tobytes()).hexdigest()}
    if isinstance(v, (np.generic,)):
        return _canon(v.item())
    if isinstance(v, bytes):
        return {"bytes": v.hex()}
    if isinstance(v, float):
        return repr(v)   # NaN and -0.0 kept apart, compared as text
    if isinstance(v, dict):
        return {str(k): _canon(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_canon(x) for x in v]
    return v


def _call(f, *args, **kw):
    try:
        return _canon(f(*args, **kw))
    except (KeyError, IndexError) as e:
        return {"raised": type(e).__name__}
    except Exception as e:   # CacheError and others: the class is what both must agree on
        return {"raised": type(e).__name__}


def _items(ds, n=None):
    random.seed(1)
    import numpy as np
    np.random.seed(1)
    return [_call(ds.__getitem__, i) for i in range(len(ds) if n is None else min(n, len(ds)))]


READER = {"XttsCache": None, "AudioCodes": None}


def _use(oracle):
    """The classes dump() reads with: the package's, or the oracle's (also under the package's
    datasets, which then read through it)."""
    import xtts_prep
    import xtts_prep.data
    if oracle:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import xtts_oracle
        xtts_prep.data.XttsCache = xtts_oracle.XttsCache
        xtts_prep.data.AudioCodes = xtts_oracle.AudioCodes
        READER.update(XttsCache=xtts_oracle.XttsCache, AudioCodes=xtts_oracle.AudioCodes)
    else:
        READER.update(XttsCache=xtts_prep.XttsCache, AudioCodes=xtts_prep.AudioCodes)


def _codes_reads(c, d):
    a = READER["AudioCodes"](c.path, d)
    return {"num_tokens": a.num_tokens, "dvae": a.dvae_sha256, "norms": a.norms_sha256, "mel_norms": a.mel_norms,
            "codes": [_call(lambda i: a.get(c.content_key(i)), i) for i in range(len(c))],
            "absent": _call(a.get, bytes(32))}


def dump(path):
    from xtts_prep import CacheDataset, VocoderSegmentDataset, XttsGptDataset
    c = READER["XttsCache"](path)
    out = {"len": len(c), "format_version": c.format_version}
    n = len(c)
    out["records"] = [{"get": _call(c.get, i), "padded": _call(c.get, i, padded=True),
                       "item": _call(c.__getitem__, i), "header": _call(c.header, i),
                       "text": _call(c.text, i), "waveform": _call(c.waveform, i),
                       "content_key": _call(c.content_key, i), "metrics": _call(c.metrics, i),
                       "metrics_bytes": _call(c.metrics_bytes, i), "flags": _call(c.flags, i)}
                      for i in range(n)]
    ids = [r["get"]["id"] for r in out["records"] if "id" in r["get"]]
    out["index_of"] = [_call(c.index_of, rid) for rid in ids] + [_call(c.index_of, "no such id"),
                                                                 _call(c.index_of, b"utt\0x")]
    out["lengths"] = _call(c.lengths)
    out["has_metrics"] = _call(c.has_metrics)
    out["quality_flags"] = _call(c.quality_flags)
    out["meta"] = [[_call(c.meta, s, k) for k in ("config_hash", "format", "no such key")]
                   for s in range(len(c.shards))]
    out["digest"] = _call(c.digest)
    out["read_batch"] = _call(c.read_batch, list(range(n))[::-1])
    out["iter"] = _call(lambda: len(list(c)))
    out["dataset"] = _call(lambda: _items(CacheDataset(path, audio=c.audio != "none", text=True)))
    out["dataset_val"] = _call(lambda: len(CacheDataset(path, split="val")))
    codes = sorted(d for d in os.listdir(path) if d.startswith("codes-"))
    if c.audio != "none" and c.sample_rate == 22050:
        out["gpt"] = _call(lambda: _items(XttsGptDataset(path, is_eval=True)))
        if codes:
            out["gpt_codes"] = _call(lambda: _items(XttsGptDataset(path, codes=True, is_eval=False)))
        out["vocoder"] = _call(lambda: _items(VocoderSegmentDataset(path, segment_frames=16, eval=True), 8))
    for d in codes:
        out[d] = _call(_codes_reads, c, d)
    return out


def make_codes(path):
    """A codes directory for the records of the cache at path (see the top of this file)."""
    import lmdb
    import numpy as np
    from xtts_prep import codes_count, codes_dir_name
    _use(True)
    c = READER["XttsCache"](path)
    dvae, norms = hashlib.sha256(b"dvae").hexdigest(), hashlib.sha256(b"norms").hexdigest()
    d = os.path.join(path, codes_dir_name(dvae, norms))
    os.makedirs(d, exist_ok=True)
    env = lmdb.open(d, max_dbs=4, map_size=1 << 26)
    meta, codes = env.open_db(b"meta"), env.open_db(b"codes")
    rng = np.random.default_rng(5)
    with env.begin(write=True) as txn:
        for k, v in ((b"format", b"xtts-codes 1"), (b"dvae_sha256", dvae.encode()), (b"norms_sha256", norms.encode()),
                     (b"num_tokens", b"100"),
                     (b"mel_norms", (np.arange(80, dtype="<f4") / 8 + 1).tobytes())):
            txn.put(k, v, db=meta)
        for i in range(len(c)):
            key = c.content_key(i)
            cs = rng.integers(0, 100, codes_count(int(c.lengths()["n_samples"][i])), dtype="<u2").tobytes()
            n = struct.pack("<I", len(cs) // 2)
            txn.put(key, n + struct.pack("<I", zlib.crc32(key + n + cs)) + cs, db=codes)
    env.close()
    return d


def main(argv):
    if argv[:1] == ["--make-codes"]:
        print(make_codes(argv[1]))
        return 0
    oracle = argv[:1] == ["--oracle"]
    if oracle:
        argv = argv[1:]
    if argv[:1] == ["--without-fallback"]:
        sys.meta_path.insert(0, _Blocked())
        argv = argv[1:]
    if argv[:1] == ["--python-get"]:
        from xtts_prep import CacheError
        _use(True)
        try:
            READER["XttsCache"](argv[1]).get(0)
            print("read record 0")
        except CacheError as e:
            print(e)
        return 0
    _use(oracle)
    out = {os.path.basename(os.path.normpath(p)): dump(p) for p in argv[1:]}
    print("reader: %s" % ("oracle" if oracle else "library"))
    with open(argv[0], "w") as f:
        json.dump(out, f, indent=0, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
