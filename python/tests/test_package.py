"""Checks of the xtts_prep package, run by tests/e2e/python_package.sh.

argv: CACHE (a version-1 or -2 cache of 40 records from test_reader --make-cache),
NPYDIR (xtts-cache-inspect --npy/--json exports of records 0, 7, 14, 15, 29, 39),
WORK (a scratch directory), then optionally AUDIO_CACHE (built with --audio int16).
"""

import json
import multiprocessing
import os
import pickle
import random
import shutil
import subprocess
import sys
import unittest

import numpy as np

import xtts_prep
from xtts_prep import (BucketingBatchSampler, CacheDataset, CacheError, Collate, VocoderSegmentDataset, XttsCache,
                       XttsGptDataset)

CACHE, NPY, WORK = sys.argv[1:4]
AUDIO = sys.argv[4] if len(sys.argv) > 4 else None

try:
    import torch
except ImportError:
    torch = None

from xtts_prep import _clib  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import xtts_oracle  # noqa: E402  the tests' pure-Python reader, the oracle the library is checked against

HAVE_C = True   # the package does not import without its library
NO_C = ""


def oracle_dataset(path, **kw):
    """The package's CacheDataset reading through the oracle's XttsCache."""
    import xtts_prep.data as data
    saved = data.XttsCache
    data.XttsCache = xtts_oracle.XttsCache
    try:
        return CacheDataset(path, **kw)
    finally:
        data.XttsCache = saved


class Arrays(unittest.TestCase):
    def test_equal_to_c_exports(self):
        ds = CacheDataset(CACHE)
        for i in (0, 7, 14, 15, 29, 39):
            meta = load_json("%s/%d.json" % (NPY, i))
            it = ds[i]
            self.assertTrue(np.array_equal(it["mel"], np.load("%s/%d.npy" % (NPY, i))))
            self.assertEqual(it["tokens"].tolist(), meta["tokens"])
            self.assertEqual(it["id"], meta["id"])

    def test_lengths_match_headers(self):
        c = XttsCache(CACHE)
        L = c.lengths()
        for i in range(len(c)):
            h = c.header(i)
            self.assertEqual((int(L["n_frames"][i]), int(L["n_tokens"][i]), int(L["split"][i])),
                             (h["n_frames"], h["n_tokens"], h["split"]))


class Pickling(unittest.TestCase):
    def test_pickle_after_use(self):
        ds = CacheDataset(CACHE)
        a = ds[3]
        ds2 = pickle.loads(pickle.dumps(ds))
        b = ds2[3]
        self.assertTrue(np.array_equal(a["mel"], b["mel"]))
        s = BucketingBatchSampler(ds, max_frames=400, seed=3)
        self.assertEqual(list(pickle.loads(pickle.dumps(s))), list(s))
        pickle.dumps(ds.collate())


class Sampler(unittest.TestCase):
    def setUp(self):
        self.lengths = np.random.default_rng(1).integers(10, 300, size=257)

    def test_deterministic_and_complete(self):
        a = list(BucketingBatchSampler(self.lengths, max_frames=1000, seed=5))
        b = list(BucketingBatchSampler(self.lengths, max_frames=1000, seed=5))
        self.assertEqual(a, b)
        self.assertEqual(sorted(i for bt in a for i in bt), list(range(257)))
        for bt in a:
            self.assertLessEqual(len(bt) * max(self.lengths[bt]), 1000)
        c = BucketingBatchSampler(self.lengths, max_frames=1000, seed=6)
        self.assertNotEqual(a, list(c))
        c.set_epoch(1)
        self.assertNotEqual(list(c), list(BucketingBatchSampler(self.lengths, max_frames=1000, seed=6)))

    def test_max_batch_size_and_buckets(self):
        for bt in BucketingBatchSampler(self.lengths, max_batch_size=8, num_buckets=4, seed=0):
            self.assertLessEqual(len(bt), 8)
        # bucketing keeps lengths in a batch closer than random batches do
        spread = np.mean([np.ptp(self.lengths[bt]) for bt in
                          BucketingBatchSampler(self.lengths, max_batch_size=8, num_buckets=8, seed=0)])
        self.assertLess(spread, 100)

    def test_small_dataset_full_batches(self):
        # 8 records: fewer buckets than num_buckets=10, each filling a batch, so no batch is
        # smaller than the limits make it (10 quantile buckets gave 8 batches of 1)
        lengths = np.arange(100, 900, 100)
        for kw, sizes in ((dict(max_batch_size=4), [4, 4]), (dict(max_batch_size=8), [8]),
                          (dict(max_frames=1600), [2, 2, 4]), (dict(max_frames=100000, max_batch_size=2), [2] * 4)):
            s = BucketingBatchSampler(lengths, seed=0, **kw)
            got = list(s)
            self.assertEqual(sorted(len(bt) for bt in got), sizes, kw)
            self.assertEqual(sorted(i for bt in got for i in bt), list(range(8)), kw)
            self.assertEqual(got, list(BucketingBatchSampler(lengths, seed=0, **kw)), kw)
            for bt in got:
                self.assertLessEqual(len(bt) * max(lengths[bt]), kw.get("max_frames", 10 ** 9))
        # where the data fill them, all the buckets asked for are kept
        self.assertEqual(BucketingBatchSampler(self.lengths, max_frames=1000).num_buckets, 10)
        self.assertEqual(BucketingBatchSampler(self.lengths, max_batch_size=8, num_buckets=8).num_buckets, 8)

    def test_distributed_split(self):
        whole = BucketingBatchSampler(self.lengths, max_frames=1000, seed=9, world_size=3).batches()
        parts = [list(BucketingBatchSampler(self.lengths, max_frames=1000, seed=9, rank=r, world_size=3))
                 for r in range(3)]
        self.assertEqual(len({len(p) for p in parts}), 1)
        self.assertEqual(sum(len(p) for p in parts), len(whole))
        dropped = [list(BucketingBatchSampler(self.lengths, max_frames=1000, seed=9, rank=r, world_size=3,
                                              drop_last=True)) for r in range(3)]
        flat = [i for p in dropped for bt in p for i in bt]
        self.assertEqual(len(flat), len(set(flat)))

    def test_from_v1_headers_or_index(self):
        ds = CacheDataset(CACHE)
        self.assertEqual(sorted(i for bt in BucketingBatchSampler(ds, max_frames=500) for i in bt),
                         list(range(len(ds))))


class Collates(unittest.TestCase):
    def test_masks_and_padding(self):
        ds = CacheDataset(CACHE)
        items = [ds[i] for i in (0, 5, 9)]
        b = ds.collate(to_torch=False)(items)
        T = max(it["mel"].shape[1] for it in items)
        self.assertEqual(b["mel"].shape, (3, ds.cache.n_mels, T))
        for j, it in enumerate(items):
            n = it["mel"].shape[1]
            self.assertEqual(int(b["mel_lengths"][j]), n)
            self.assertTrue(b["mel_mask"][j, :n].all() and not b["mel_mask"][j, n:].any())
            self.assertTrue(np.array_equal(b["mel"][j, :, :n], it["mel"]))
            self.assertTrue(np.all(b["mel"][j, :, n:] == np.float32(ds.mel_pad_value())))
            k = len(it["tokens"])
            self.assertTrue(np.all(b["tokens"][j, k:] == ds.pad_token) and b["token_mask"][j, :k].all())
        self.assertEqual(Collate(pad_token=7, to_torch=False)(items)["tokens"].dtype, np.int64)


class Expect(unittest.TestCase):
    def test_fields(self):
        c = XttsCache(CACHE)
        CacheDataset(CACHE, expect=dict(n_mels=c.n_mels, sample_rate=c.sample_rate))
        for field, value in (("n_mels", 81), ("sample_rate", 16000), ("preset", "nope"),
                             ("tokenizer_hash", "0" * 64)):
            with self.assertRaises(CacheError) as e:
                CacheDataset(CACHE, expect={field: value})
            self.assertIn("expect %s=" % field, str(e.exception))


def load_json(path):
    with open(path) as f:
        return json.load(f)


def damaged(name, edit):
    d = os.path.join(WORK, name)
    shutil.rmtree(d, ignore_errors=True)
    shutil.copytree(CACHE, d)
    m = load_json(os.path.join(d, "manifest.json"))
    text = edit(m)
    with open(os.path.join(d, "manifest.json"), "w") as f:
        f.write(text if isinstance(text, str) else json.dumps(m))
    return d


class Manifests(unittest.TestCase):
    def refused(self, d, words):
        with self.assertRaises(CacheError) as e:
            XttsCache(d)
        self.assertIn("manifest.json", str(e.exception))
        self.assertIn(words, str(e.exception))

    def test_hash_matches_c(self):
        m = load_json(os.path.join(CACHE, "manifest.json"))
        self.assertEqual(xtts_prep.config_hash(m["config"]), m["config_hash"])

    def test_shard_twice(self):
        def twice(m):
            m["shards"].append(dict(m["shards"][0], first_index=m["records"]))
            m["records"] += m["shards"][0]["records"]
        self.refused(damaged("twice", twice), "shard listed twice")

    def test_config_without_hash(self):
        self.refused(damaged("nohash", lambda m: m["config"].__setitem__("max_tokens", 65536)),
                     "does not match the config")

    def test_unknown_key_and_bad_json(self):
        self.refused(damaged("unk", lambda m: m["config"].__setitem__("zz", 1)), "unknown key")
        self.refused(damaged("junk", lambda m: '{"format_version": 1, "records": '), "invalid JSON")

    def test_dev_zero(self):
        d = damaged("zero", lambda m: None)
        os.remove(os.path.join(d, "manifest.json"))
        os.symlink("/dev/zero", os.path.join(d, "manifest.json"))
        self.refused(d, "larger than")   # the C loader reads at most MANIFEST_MAX_BYTES


@unittest.skipIf(torch is None, "torch is not installed (Debian python3-torch): DataLoader checks skipped")
class Workers(unittest.TestCase):
    def test_fork_and_spawn(self):
        from torch.utils.data import DataLoader
        ds = CacheDataset(CACHE)
        ds[0]   # handles opened in the parent first
        want = {i: ds[i]["mel"] for i in range(len(ds))}
        for ctx in ("fork", "spawn"):
            dl = DataLoader(ds, batch_sampler=BucketingBatchSampler(ds, max_frames=600, seed=1), num_workers=2,
                            multiprocessing_context=ctx, collate_fn=ds.collate())
            seen = []
            for b in dl:
                for j, i in enumerate(b["index"].tolist()):
                    n = int(b["mel_lengths"][j])
                    self.assertTrue(np.array_equal(b["mel"][j, :, :n].numpy(), want[i]))
                    seen.append(i)
            self.assertEqual(sorted(seen), list(range(len(ds))), ctx)


@unittest.skipIf(AUDIO is None, "no cache built with --audio int16 (xtts-melcache has no --audio yet)")
class Audio(unittest.TestCase):
    def test_vocoder_segments_aligned(self):
        ds = VocoderSegmentDataset(AUDIO, segment_frames=8)
        c = ds.cache
        for i in range(min(len(ds), 5)):
            it = ds[i]
            f, gi = it["start_frame"], it["index"]
            wav = c.waveform(gi).astype(np.float32) / 32768
            self.assertTrue(np.array_equal(it["mel"], c[gi]["mel"][:, f:f + 8]))
            seg = wav[f * ds.hop:(f + 8) * ds.hop]
            self.assertTrue(np.array_equal(it["wav"][:len(seg)], seg))
        if torch is not None:
            from torch.utils.data import DataLoader
            for b in DataLoader(ds, batch_size=4, shuffle=True, num_workers=2):
                self.assertEqual(tuple(b["wav"].shape[1:]), (8 * ds.hop,))

    def test_xtts_gpt_batch(self):
        c = XttsCache(AUDIO)
        if c.sample_rate != 22050:
            self.skipTest("audio cache is not at 22,050 Hz")
        ds = XttsGptDataset(AUDIO, min_conditioning_length=2205, max_conditioning_length=4410)
        b = ds.collate(to_torch=False)([ds[i] for i in range(min(len(ds), 3))])
        B = len(b["filenames"])
        self.assertEqual(b["wav"].shape[:2], (B, 1))
        self.assertEqual(b["conditioning"].shape, (B, 1, 1, 4410))
        self.assertEqual(b["padded_text"].dtype, np.int32)
        self.assertIsNone(b["cond_lens"])
        self.assertEqual(b["cond_idxs"].shape, (B, 2))


def assert_items_equal(test, got, want, what=""):
    """Two lists of dataset items hold the same keys, types, dtypes, shapes and values (NaN
    equal to NaN)."""
    test.assertEqual(len(got), len(want), what)
    for k, (g, w) in enumerate(zip(got, want)):
        test.assertEqual(sorted(g), sorted(w), (what, k))
        for key in w:
            test.assertEqual(type(g[key]), type(w[key]), (what, k, key))
            if isinstance(w[key], np.ndarray):
                test.assertEqual((g[key].dtype, g[key].shape), (w[key].dtype, w[key].shape), (what, k, key))
                test.assertTrue(np.array_equal(g[key], w[key], equal_nan=w[key].dtype.kind == "f"), (what, k, key))
            else:
                test.assertTrue(g[key] == w[key] or (g[key] != g[key] and w[key] != w[key]), (what, k, key))


def library_calls(fn):
    """fn()'s result and the names of the calls it made into the library."""
    lib = _clib.library()
    seen, saved = [], {}
    for name in [n for n in dir(lib) if n.startswith("xtts_api_")]:
        saved[name] = f = getattr(lib, name)

        def wrap(*a, _f=f, _n=name):
            seen.append(_n[len("xtts_api_"):])
            return _f(*a)
        setattr(lib, name, wrap)
    try:
        return fn(), seen
    finally:
        for name, f in saved.items():
            setattr(lib, name, f)


class BatchedItems(unittest.TestCase):
    """__getitems__ gives [ds[i] for i in positions] (the same random draws) from one call
    into the library per batch, its items independent of the next batch's reads."""

    @classmethod
    def setUpClass(cls):
        if not AUDIO:
            raise unittest.SkipTest("no audio cache")
        cls.path = os.path.join(WORK, "batched-items")
        if not os.path.isdir(cls.path):
            shutil.copytree(AUDIO, cls.path)
            import backend_reads
            import xtts_prep.data as data
            saved = data.XttsCache, data.AudioCodes
            try:
                backend_reads.make_codes(cls.path)   # reads with the oracle, put under the datasets
            finally:
                data.XttsCache, data.AudioCodes = saved

    def check(self, ds, what):
        n = len(ds)
        for positions in ([3, 0, 3, n - 1, 1], list(range(n))[::-1], [2], [-1, 0]):
            random.seed(11)
            want = [ds[i] for i in positions]
            random.seed(11)
            got, calls = library_calls(lambda: ds.__getitems__(positions))
            self.assertEqual(calls, ["read_items"], what)
            ds.__getitems__([n - 2, 1, 0])            # reuses the buffers: got must not change
            assert_items_equal(self, got, want, (what, positions))
        self.assertEqual(ds.__getitems__([]), [])
        with self.assertRaises(IndexError):
            ds.__getitems__([0, n])
        restored = pickle.loads(pickle.dumps(ds))    # the buffers stay behind
        self.assertIsNone(restored._buffers)
        random.seed(3)
        want = [ds[i] for i in (1, 2)]
        random.seed(3)
        assert_items_equal(self, restored.__getitems__([1, 2]), want, (what, "pickled"))

    def test_gpt_items_with_codes_and_conditioning_mels(self):
        if XttsCache(self.path).sample_rate != 22050:
            self.skipTest("audio cache is not at 22,050 Hz")
        ds = XttsGptDataset(self.path, codes=True, min_conditioning_length=2205, max_conditioning_length=4410)
        self.assertIn("cond_mels", ds[0])
        self.assertIn("audio_codes", ds[0])
        self.check(ds, "codes")
        self.check(XttsGptDataset(self.path, min_conditioning_length=2205, max_conditioning_length=4410,
                                  use_masking_gt_prompt_approach=False, mel_norms=np.ones(80)), "mel_norms")
        self.check(XttsGptDataset(self.path, split="train", is_eval=True), "eval")
        ds = XttsGptDataset(self.path, codes=True)
        coll = ds.collate(to_torch=False)
        b1, b2 = coll(ds.__getitems__([0, 1, 2])), coll([ds[i] for i in (0, 1, 2)])
        self.assertEqual(b1["audio_codes"].tolist(), b2["audio_codes"].tolist())

    def test_cache_and_vocoder_items(self):
        self.check(CacheDataset(self.path, audio=True), "audio")
        self.check(CacheDataset(self.path, split="train"), "train")
        self.check(VocoderSegmentDataset(self.path, segment_frames=8), "vocoder")
        self.check(VocoderSegmentDataset(self.path, segment_frames=8, eval=True), "vocoder eval")


def assert_same(test, got, want, what=""):
    test.assertEqual(sorted(got), sorted(want))
    for k in want:
        g = got[k].numpy() if torch is not None and isinstance(got[k], torch.Tensor) else got[k]
        test.assertEqual(g.dtype, want[k].dtype, (what, k))
        test.assertEqual(g.shape, want[k].shape, (what, k))
        test.assertTrue(np.array_equal(g, want[k]), (what, k))


def _fork_read(args):
    c, idx = args
    b = c.read_batch(idx, threads=2)
    return {k: v.copy() for k, v in b.items()}


class Batches(unittest.TestCase):
    """read_batch: the C-backed and the pure-Python reader give identical arrays."""

    def caches(self):
        return [CACHE] + ([AUDIO] if AUDIO else [])

    def test_python_rows_are_padded_gets(self):
        for path in self.caches():
            c = xtts_oracle.XttsCache(path)
            self.assertEqual(c.backend, "python")
            idx = [0, len(c) - 1, 3, -2]
            b = c.read_batch(idx)
            self.assertEqual(b["mel"].shape, (4, c.n_mels, c.max_frames))
            self.assertEqual(b["tokens"].shape, (4, c.max_tokens))
            for j, i in enumerate(idx):
                r = c.get(i, padded=True)
                self.assertTrue(np.array_equal(b["mel"][j], r["mel"]), (path, i))
                self.assertTrue(np.array_equal(b["tokens"][j], r["tokens"]), (path, i))
                self.assertEqual((int(b["n_tokens"][j]), int(b["n_frames"][j]), int(b["split"][j])),
                                 (r["n_tokens"], r["n_frames"], r["split"] == "val"))
                self.assertEqual(int(b["index"][j]), r["index"])

    @unittest.skipUnless(HAVE_C, NO_C)
    def test_c_equals_python(self):
        for path in self.caches():
            c, p = XttsCache(path, backend="c"), xtts_oracle.XttsCache(path)
            self.assertEqual(XttsCache(path).backend, "c")
            idx = list(range(len(c)))[::-1] + [-1, 0, 3, 3]
            for dt in (np.float32, np.float16):
                want = p.read_batch(idx, mel_dtype=dt)
                for th in (1, 2, 3, 64):
                    assert_same(self, c.read_batch(idx, threads=th, mel_dtype=dt), want, (path, dt, th))
                # into reused arrays, one record, narrower rows that still hold every record
                out = c.batch_arrays(len(idx), mel_dtype=dt)
                assert_same(self, c.read_batch(idx, out=out, threads=2, mel_dtype=dt), want, (path, "out"))
                assert_same(self, c.read_batch([5], mel_dtype=dt), p.read_batch([5], mel_dtype=dt), (path, "one"))
            fp = max(c.header(i)["frames_padded"] for i in range(len(c)))
            tp = max(c.header(i)["tokens_padded"] for i in range(len(c)))
            assert_same(self, c.read_batch(idx, max_frames=fp + 3, max_tokens=tp),
                        p.read_batch(idx, max_frames=fp + 3, max_tokens=tp), (path, "narrow"))
            # a dataset's batch: positions of the split mapped to global indices
            ds_c, ds_p = CacheDataset(path, split="train"), oracle_dataset(path, split="train")
            assert_same(self, ds_c.read_batch([0, 2, 1], to_torch=False), ds_p.read_batch([0, 2, 1], to_torch=False))

    def test_errors_name_the_record(self):
        for backend in ("python", "c"):
            c = xtts_oracle.cache(CACHE, backend)
            with self.assertRaises(IndexError):
                c.read_batch([0, len(c)])
            with self.assertRaises(ValueError):
                c.read_batch([0, 1], out=c.batch_arrays(3))
            fp = c.header(7)["frames_padded"]
            with self.assertRaises(CacheError) as e:
                c.read_batch([7], max_frames=fp - 1)
            self.assertIn("index 7, id '%s'" % c.header(7)["id"], str(e.exception), backend)
            self.assertIn(c.shard_of(7), str(e.exception), backend)

    def test_import_says_what_to_build_without_the_library(self):
        # a fresh interpreter with the library hidden or disabled: no second decoder to fall
        # back to, so the import fails in one line naming what to build or install
        for hide in ("none", os.path.join(WORK, "no-such-dir")):
            env = dict(os.environ, XTTS_PREP_LIB=hide)
            r = subprocess.run([sys.executable, "-c", "import xtts_prep"], env=env, capture_output=True, text=True)
            self.assertNotEqual(r.returncode, 0, hide)
            last = r.stderr.strip().splitlines()[-1]
            self.assertTrue(last.startswith("ImportError: xtts_prep needs the C reader library libxtts-reader.so"),
                            r.stderr)
            self.assertIn("make", last)
            self.assertIn("XTTS_PREP_LIB", last)
        with self.assertRaises(ValueError):
            XttsCache(CACHE, backend="python")

    def test_a_cache_is_opened_once_per_process(self):
        a, b = XttsCache(CACHE), XttsCache(CACHE)
        ds = CacheDataset(CACHE)
        self.assertIs(a._c(), b._c())
        self.assertIs(ds.cache._c(), a._c())
        h = a._c()
        a.close()
        self.assertIsNotNone(b._c().h)   # still open for the others
        self.assertIs(b._c(), h)
        self.assertIs(a._c(), h)         # a reads again through the same handle

    def test_pickles_without_handles(self):
        c = XttsCache(CACHE)
        a = c.read_batch([1, 2])
        c2 = pickle.loads(pickle.dumps(c))
        self.assertEqual(c2.backend, c.backend)
        assert_same(self, c2.read_batch([1, 2]), a)

    def test_forked_children(self):
        c = XttsCache(CACHE)
        idx = list(range(len(c)))
        want = c.read_batch(idx, threads=2)   # handles and helper threads made in the parent first
        with multiprocessing.get_context("fork").Pool(2) as pool:
            for got in pool.map(_fork_read, [(c, idx)] * 4):
                assert_same(self, got, want, "fork")
        assert_same(self, c.read_batch(idx, threads=2), want, "parent after fork")

    @unittest.skipIf(torch is None, "torch is not installed (Debian python3-torch): tensor batches not checked")
    def test_torch_tensors(self):
        c = XttsCache(CACHE)
        want = xtts_oracle.XttsCache(CACHE).read_batch([4, 1, 9])
        got = c.read_batch([4, 1, 9], to_torch=True, threads=2)
        self.assertTrue(all(isinstance(v, torch.Tensor) for v in got.values()))
        self.assertEqual(got["mel"].is_pinned(), torch.cuda.is_available())
        assert_same(self, got, want, "torch")
        ds = CacheDataset(CACHE)
        self.assertIsInstance(ds.read_batch([0, 1])["mel"], torch.Tensor)
        out = c.batch_arrays(3, to_torch=True, pin_memory=False)
        self.assertIs(c.read_batch([4, 1, 9], out=out), out)
        assert_same(self, out, want, "torch out")


def stored_metrics(version=2, **fields):
    """A stored 104-byte quality entry (formats/cache.md 3.5) with fields over plain defaults."""
    import struct
    import zlib
    from xtts_prep.quality import FLOAT_FIELDS
    m = dict(status=1, cut_start=0, cut_end=0, sample_rate=22050, native_rate=22050, n_chars=40, n_tokens=40,
             duration_s=3.0, lead_silence_s=0.2, trail_silence_s=0.2, speech_s=2.6, start_edge_db=-40.0,
             end_edge_db=-40.0, peak_dbfs=-3.0, rms_dbfs=-22.0, active_dbfs=-20.0, noise_dbfs=-60.0,
             clip_fraction=0.0, snr_db=40.0, bandwidth_hz=11000.0, chars_per_s=15.0, tokens_per_s=15.0,
             dc_offset=0.0, h0=1, h1=2)
    m.update(fields)
    b = struct.pack("<BBBBIIII", version, m["status"], m["cut_start"], m["cut_end"], m["sample_rate"],
                    m["native_rate"], m["n_chars"], m["n_tokens"])
    b += struct.pack("<16f", *(m[k] for k in FLOAT_FIELDS)) + struct.pack("<QQ", m["h0"], m["h1"])
    return b + struct.pack("<I", zlib.crc32(b))


class Quality(unittest.TestCase):
    """xtts_prep.quality's metrics dict and the oracle's flags (the library's are checked
    against the report's TSV by tests/e2e/report_quality.sh)."""

    def test_stored_metrics_decode_both_versions_and_refuse_damage(self):
        from xtts_prep.quality import decode_metrics
        for v in (1, 2):
            m = decode_metrics(stored_metrics(v, snr_db=12.5))
            self.assertEqual((m["version"], m["status"], m["snr_db"]), (v, "measured", 12.5))
            self.assertEqual(m["audio_hash"], "%016x%016x" % (1, 2))
        b = bytearray(stored_metrics())
        b[30] ^= 1
        with self.assertRaisesRegex(CacheError, "checksum"):
            decode_metrics(bytes(b))
        with self.assertRaisesRegex(CacheError, "unknown version 3"):
            decode_metrics(stored_metrics(3))
        with self.assertRaisesRegex(CacheError, "non-finite"):
            decode_metrics(stored_metrics(snr_db=float("nan")))

    def test_flags_per_clip_duplicates_and_rates_as_the_report_decides(self):
        from xtts_prep.quality import decode_metrics, flag_names
        from xtts_oracle.quality import flag_all
        ms = [decode_metrics(stored_metrics(h0=i, chars_per_s=15.0 + 0.1 * i)) for i in range(10)]
        ms[3] = decode_metrics(stored_metrics(h0=3, cut_start=1, start_edge_db=-12.0))   # cut: within 15 dB
        ms[4] = decode_metrics(stored_metrics(h0=4, cut_start=1, start_edge_db=-18.0))   # a tight trim
        ms[5] = decode_metrics(stored_metrics(h0=1))                                      # the audio of 1
        ms[6] = decode_metrics(stored_metrics(h0=6, chars_per_s=30.0))                    # twice the rate
        ms[7] = decode_metrics(stored_metrics(h0=7, snr_db=10.0, dc_offset=-0.05))
        flags, dup_of = flag_all(ms, [0] * 10)
        self.assertEqual(flag_names(int(flags[3])), ["cut_start"])
        self.assertEqual(int(flags[4]), 0)
        self.assertEqual((flag_names(int(flags[5])), int(dup_of[5]), int(dup_of[1])), (["dup_audio"], 1, -1))
        self.assertEqual(flag_names(int(flags[6])), ["rate_outlier"])
        self.assertEqual(flag_names(int(flags[7])), ["low_snr", "dc_offset"])
        self.assertEqual(flag_names(int(flag_all(ms, [0] * 10, {"snr_db": 45})[0][0])), ["low_snr"])
        with self.assertRaisesRegex(ValueError, "unknown quality threshold 'snr'"):
            flag_all(ms, [0] * 10, {"snr": 3})

    def test_a_cache_without_metrics_says_so(self):
        for backend in ("python", "c"):
            c = xtts_oracle.cache(CACHE, backend)
            dataset = oracle_dataset if backend == "python" else CacheDataset
            if c.has_metrics():
                continue
            with self.assertRaisesRegex(CacheError, "no quality metrics"):
                c.quality_flags()
            with self.assertRaisesRegex(CacheError, "no quality metrics"):
                dataset(CACHE, exclude_flags=["clipped"])
            self.assertEqual(len(dataset(CACHE, exclude_flags=[])), len(c))


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v"])
