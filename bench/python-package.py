"""Batches per second of the xtts_prep package (docs/python-reader.md), main process only.

    PYTHONPATH=python /usr/bin/python3 bench/python-package.py CACHE [SECONDS] [BATCH]

Reads shuffled batches of BATCH records (default 16) through CacheDataset and its
Collate (numpy), for SECONDS (default 5) each: mel and tokens only, then with the
waveform when the cache stores one (--audio int16|flac). Prints "<what> <batches/s>
<records/s>" lines.
"""
import sys
import time

import numpy as np

sys.path.insert(0, __import__("os").path.join(__import__("os").path.dirname(__file__), "..", "python"))
from xtts_prep import CacheDataset, XttsCache  # noqa: E402


def run(ds, secs, bs):
    col = ds.collate(to_torch=False)
    rng = np.random.default_rng(0)
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < secs:
        col([ds[int(i)] for i in rng.integers(0, len(ds), bs)])
        n += 1
    dt = time.perf_counter() - t0
    return n / dt, n * bs / dt


def main():
    path = sys.argv[1]
    secs = float(sys.argv[2]) if len(sys.argv) > 2 else 5
    bs = int(sys.argv[3]) if len(sys.argv) > 3 else 16
    print("mel+tokens %.1f %.0f" % run(CacheDataset(path), secs, bs))
    if XttsCache(path).audio != "none":
        print("mel+tokens+wav %.1f %.0f" % run(CacheDataset(path, audio=True), secs, bs))
    else:
        print("mel+tokens+wav n/a (cache built with --audio none)")


if __name__ == "__main__":
    main()
