"""Fixed-shape batches per second of the Python package, C-backed against pure Python
(docs/python-reader.md, "The C library"), for bench/reader.sh.

    PYTHONPATH=python XTTS_PREP_LIB=build/lib /usr/bin/python3 bench/reader-python.py \
        CACHE [SECONDS] [ROUNDS] [C_READER_1THREAD] [C_READER_2THREADS]

Reads random batches of 32 records (the C benchmark's batch and order) with
XttsCache.read_batch into reused float32 arrays, as a training loop would: through the C
library on 1 and 2 threads, and through the pure-Python reader, in ROUNDS alternated rounds
of SECONDS / ROUNDS per configuration; prints medians as "<what> <batches/s> <decoded MB/s>"
lines (decoded bytes counted as bench/src/bench_reader.c counts them: the records' stored
payload). Given the C reader's batches/s (bench_reader's c_reader_*_fp32out lines), it adds
the ratio of the C-backed package to it with the same number of threads.
"""
import os
import statistics
import sys
import time

import numpy as np

from xtts_prep import XttsCache, _clib

# the tests' oracle (python/tests/xtts_oracle), the pure-Python reader that was the package's
# second backend: measured beside the package when py-lmdb and zstandard import
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python", "tests"))

BATCH = 32


def payload_bytes(h):
    """As the C header counts it: version 1 the payload, version 2 every section's raw bytes."""
    return h["payload_bytes"] if h["version"] == 1 else sum(s["raw"] for s in h["sections"])


def run(c, secs, threads, seed, payload, out):
    rng = np.random.default_rng(seed)
    n = len(c)
    batches, nbytes = 0, 0
    t0 = time.perf_counter()
    while True:
        idx = rng.integers(0, n, BATCH)
        c.read_batch(idx, out=out, threads=threads)
        nbytes += int(payload[idx].sum())
        batches += 1
        t = time.perf_counter() - t0
        if t >= secs:
            return batches / t, nbytes / 1e6 / t


def main():
    path = sys.argv[1]
    secs = float(sys.argv[2]) if len(sys.argv) > 2 else 3.0
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    c_ref = [float(x) if x not in ("", "-") else None for x in sys.argv[4:6]] + [None, None]
    have_c = True   # the package does not import without its library
    cc = XttsCache(path, backend="c")
    payload = np.array([payload_bytes(cc.header(i)) for i in range(len(cc))], dtype=np.int64)
    confs = [("python_c_1thread", cc, 1), ("python_c_2threads", cc, 2)]
    try:
        import xtts_oracle
        confs.append(("python_pure_1thread", xtts_oracle.XttsCache(path), 1))
    except ImportError as e:
        print("# the oracle does not import (%s): python_pure not measured" % e)
    outs = {name: c.batch_arrays(BATCH) for name, c, _ in confs}
    for name, c, th in confs:   # warm up: open the shards, touch the arrays
        c.read_batch(np.arange(BATCH) % len(c), out=outs[name], threads=th)
    res = {name: [] for name, _, _ in confs}
    for k in range(rounds):
        for name, c, th in confs:
            res[name].append(run(c, secs / rounds, th, 1234 + 7919 * k, payload, outs[name]))
    print("# XttsCache.read_batch, batch %d, float32 out, %d alternated rounds of %.2f s, medians; %s"
          % (BATCH, rounds, secs / rounds, "library %s" % _clib.library_path() if have_c else "no C library"))
    print("# what batches/s decoded_MB/s ratio_to_c_reader_same_threads")
    for name, c, th in confs:
        bps = statistics.median(r[0] for r in res[name])
        mbs = statistics.median(r[1] for r in res[name])
        ref = c_ref[th - 1]
        ratio = "%.2f" % (bps / ref) if ref else "-"
        print("%s %.1f %.1f %s" % (name, bps, mbs, ratio))


if __name__ == "__main__":
    main()
