"""XttsGptDataset items per second with audio codes and conditioning mels (docs/benchmarks.md),
main process only, and the calls from Python into libxtts-reader.so that one item makes.

    PYTHONPATH=python /usr/bin/python3 bench/gpt-dataset.py CACHE [SECONDS] [ROUNDS]

CACHE: built with --preset xtts --audio int16 and one codes directory (xtts-cache-codes, or
python/tests/backend_reads.py --make-codes). Reads random items (seeded) in ROUNDS alternated
rounds of SECONDS / ROUNDS of this process's CPU time per configuration (CPU time, so that other
processes on a shared machine do not count) and prints medians as "<what> <items/s>" lines:
    gpt_items       XttsGptDataset(codes=True)[i]: tokens, mel, waveform, codes, conditioning mels
    gpt_reads       the same items without the conditioning mels (what the cache gives)
    gpt_batch_items the items of gpt_items through XttsGptDataset.__getitems__, 32 a call
    gpt_batch_reads the items of gpt_reads through __getitems__, 32 a call (one call into the
                    library a batch, into the dataset's reused buffers)
    gpt_list_reads  the same 32 at a time as [ds[i] for i in positions] (what a DataLoader does
                    without __getitems__: the batch's items alive together, as there)
    batch_reads     __getitems__' read of 32 items without its shaping of them: one call into
                    the library into the reused buffers (XttsGptDataset._read_many)
    package_items   the dataset's read of an item (tokens, mel, waveform, codes) without its
                    shaping of it: one call into the library, fresh arrays for the item
    c_reader_items  the C library alone: the same records' reads, 32 items per call of
                    xtts_api_read_items into buffers made before (absent from a package
                    without it)
and "crossings_per_item <n>": calls into the library per item (counted on one item), and
"crossings_per_batch <n>": calls per __getitems__ of 32 items (counted on one batch).
"""
import ctypes
import os
import random
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from xtts_prep import XttsGptDataset, _clib  # noqa: E402


def count_crossings(ds, i):
    """Calls into the library while ds[i] is read, or ds.__getitems__(i) when i is a list
    (every xtts_api_* attribute wrapped)."""
    lib = _clib.library()
    seen = []
    saved = {}
    for name in [n for n in dir(lib) if n.startswith("xtts_api_")]:
        f = getattr(lib, name)
        saved[name] = f

        def wrap(*a, _f=f, _n=name):
            seen.append(_n)
            return _f(*a)
        setattr(lib, name, wrap)
    try:
        ds.__getitems__(i) if isinstance(i, list) else ds[i]
    finally:
        for name, f in saved.items():
            setattr(lib, name, f)
    return seen


def run_items(ds, secs, seed):
    rng = random.Random(seed)
    random.seed(seed)
    n, t0 = 0, time.process_time()
    while True:
        ds[rng.randrange(len(ds))]
        n += 1
        t = time.process_time() - t0
        if t >= secs:
            return n / t


def run_batches(ds, secs, seed, shape=True):
    """Items per second through ds.__getitems__ of 32 random positions (shape False: its read
    alone, ds._read_many; "list": [ds[i] for i in positions] instead)."""
    rng = random.Random(seed)
    random.seed(seed)
    n, t0 = 0, time.process_time()
    while True:
        pos = [rng.randrange(len(ds)) for _ in range(32)]
        if shape == "list":
            [ds[i] for i in pos]
        elif shape:
            ds.__getitems__(pos)
        else:
            ds._read_many(pos, True, ds.codes)
        n += 32
        t = time.process_time() - t0
        if t >= secs:
            return n / t


def run_package_reads(ds, secs, seed):
    """Items per second of the dataset's reads (XttsGptDataset._read: one library call each)."""
    rng = random.Random(seed)
    n, t0 = 0, time.process_time()
    while True:
        ds._read(rng.randrange(len(ds)), True, ds.codes)
        n += 1
        t = time.process_time() - t0
        if t >= secs:
            return n / t


def run_c_reader(ds, secs, seed):
    """Items per second of xtts_api_read_items reading what package_items reads, 32 items a
    call into buffers prepared before (the library's own rate, ctypes' cost spread over 32)."""
    from xtts_prep._clib import ID_CAP, ITEM_FIELDS, ITEM_PARTS
    rng = np.random.default_rng(seed)
    h, rd, L = ds.cache._c(), ds.codes._reader(), ds.lengths
    calls = []
    for _ in range(16):
        pos = rng.integers(0, len(ds), 32)
        bufs, caps = (ctypes.c_void_p * (32 * ITEM_PARTS))(), (ctypes.c_size_t * (32 * ITEM_PARTS))()
        keep = []
        for k, p in enumerate(pos):
            for j, a in enumerate((np.empty(int(L["n_tokens"][p]), np.int32),
                                   np.empty(ds.cache.n_mels * int(L["n_frames"][p]), np.float32),
                                   np.empty(int(L["n_samples"][p]), np.int16), np.empty(32, np.uint8),
                                   np.empty(4096, np.uint16))):
                bufs[k * ITEM_PARTS + j], caps[k * ITEM_PARTS + j] = a.ctypes.data, a.shape[0]
                keep.append(a)
        calls.append((ds.indices[pos].astype(np.uint64), bufs, caps, np.empty((32, ITEM_FIELDS), np.uint64),
                      ctypes.create_string_buffer(32 * ID_CAP), keep))
    n, t0 = 0, time.process_time()
    while True:
        idx, bufs, caps, fields, ids, _ = calls[n // 32 % len(calls)]
        if h.read_items(rd, idx, 0, bufs, caps, fields, ids):
            raise h.last_error()
        n += 32
        t = time.process_time() - t0
        if t >= secs:
            return n / t


def main():
    path = sys.argv[1]
    secs = float(sys.argv[2]) if len(sys.argv) > 2 else 10.0
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    full = XttsGptDataset(path, codes=True)
    reads = XttsGptDataset(path, codes=True)
    reads.mel_norms = None   # no conditioning mels: the cache's part of an item
    full[0], reads[0]        # warm up: open the cache and the codes
    confs = [("gpt_items", lambda s: run_items(full, s, 1)), ("gpt_reads", lambda s: run_items(reads, s, 2))]
    if hasattr(full, "__getitems__"):
        confs.append(("gpt_batch_items", lambda s: run_batches(full, s, 1)))
        confs.append(("gpt_batch_reads", lambda s: run_batches(reads, s, 2)))
        confs.append(("gpt_list_reads", lambda s: run_batches(reads, s, 2, shape="list")))
        confs.append(("batch_reads", lambda s: run_batches(reads, s, 3, shape=False)))
    if hasattr(full.cache, "_items"):   # the library's own rate: one call per 32 items
        confs.append(("package_items", lambda s: run_package_reads(full, s, 3)))
        confs.append(("c_reader_items", lambda s: run_c_reader(full, s, 3)))
    res = {name: [] for name, _ in confs}
    for _ in range(rounds):
        for name, f in confs:
            res[name].append(f(secs / rounds))
    print("# %s: %d items, %d alternated rounds of %.2f s, medians; library %s"
          % (path, len(full), rounds, secs / rounds, _clib.library_path()))
    for name, _ in confs:
        print("%s %.1f" % (name, statistics.median(res[name])))
    calls = count_crossings(reads, 0)
    print("crossings_per_item %d (%s)" % (len(calls), " ".join(c[len("xtts_api_"):] for c in calls)))
    if hasattr(full, "__getitems__"):
        calls = count_crossings(full, list(range(min(32, len(full)))))
        print("crossings_per_batch %d (%s)" % (len(calls), " ".join(c[len("xtts_api_"):] for c in calls)))


if __name__ == "__main__":
    main()
