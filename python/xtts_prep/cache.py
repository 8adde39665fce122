"""Record codecs and the cache reader (formats/cache.md): XttsCache.

Needs only numpy, lmdb and zstandard. LMDB environments are opened lazily in each
process (an environment opened before fork() and used in the child is a known source of
MDB_CORRUPTED and reader-table errors), read-only and without lock files (lock=False: no
reader slots are taken, so any number of workers may read). An XttsCache pickles without
its handles, so it travels into spawn-started workers too.

Every record is checked as the C reader checks it (header CRC-32, shape, section and
zstd checksums); damage raises CacheError naming the shard, index and id.

Fixed-shape batches (read_batch) are decoded by the C reader through libxtts-reader.so
(_clib.py) when that library is found, straight into numpy arrays or torch tensors, and
by the pure-Python reader otherwise; both give identical arrays.
"""

import hashlib
import json
import math
import os
import struct
import sys
import zlib

import lmdb
import numpy as np
import zstandard

__all__ = ["XttsCache", "CacheError", "LENGTH_FIELDS"]

RECORD_MAGIC = b"XTRC"
RECORD_VERSION = 1
MAX_ID = 1024
MAX_TOKENS = 65536
MAX_FRAMES = 1048576
MAX_MELS = 1024
PAYLOAD_MAX = 1 << 30
FLAG_SHUFFLED = 0x01
DTYPE_F32, DTYPE_F16 = 0, 1
# formats/record.c: 64-byte little-endian header (CRC-32 of the zstd frame at 56, CRC-32
# of bytes 0..59 and the id at 60), then the id, then one zstd frame.
_HEADER = struct.Struct("<4sHBBHBBHHIIIIIIIIIfII")
assert _HEADER.size == 64


from .manifest import CacheError, load_manifest
from . import _clib

BACKENDS = ("auto", "c", "python")


def _be64(n):
    return struct.pack(">Q", n)


def parse_header(buf):
    """Parse and check a record's header and id (no decompression). Returns a dict;
    raises CacheError (without shard context) on damage."""
    if len(buf) < 64:
        raise CacheError("record truncated: %d bytes, header needs 64" % len(buf))
    (magic, version, dtype, flags, n_mels, split, _r1, id_len, _r2, n_tokens, tokens_padded, n_frames,
     frames_padded, speaker_id, lang_id, n_samples, payload_bytes, frame_bytes, pad_value, frame_crc,
     crc) = _HEADER.unpack_from(buf, 0)
    if magic != RECORD_MAGIC:
        raise CacheError("bad record magic")
    if id_len > MAX_ID or 64 + id_len > len(buf):
        raise CacheError("record id length %d does not fit %d bytes" % (id_len, len(buf)))
    if zlib.crc32(bytes(buf[64:64 + id_len]), zlib.crc32(bytes(buf[:60]))) != crc:
        raise CacheError("record header checksum mismatch")
    rid = bytes(buf[64:64 + id_len]).decode("utf-8", "replace")
    if version == 2:
        return _parse_v2(buf, rid, dtype, flags, n_mels, split, _r1, id_len, _r2, n_tokens, tokens_padded,
                         n_frames, frames_padded, speaker_id, lang_id, n_samples, payload_bytes, frame_bytes,
                         pad_value, frame_crc)
    if version != RECORD_VERSION:
        raise CacheError("record '%s': version %d, this reader reads %d" % (rid, version, RECORD_VERSION))
    if dtype > DTYPE_F16 or flags & ~FLAG_SHUFFLED or split > 1:
        raise CacheError("record '%s': bad dtype, flags or split" % rid)
    if not 0 < n_mels <= MAX_MELS or tokens_padded > MAX_TOKENS or frames_padded > MAX_FRAMES:
        raise CacheError("record '%s': shape out of limits" % rid)
    if n_tokens > tokens_padded or n_frames > frames_padded:
        raise CacheError("record '%s': lengths (%d tokens, %d frames) exceed padded shape (%d, %d)"
                         % (rid, n_tokens, n_frames, tokens_padded, frames_padded))
    esize = 2 if dtype == DTYPE_F16 else 4
    expect = tokens_padded * 4 + n_mels * frames_padded * esize
    if expect > PAYLOAD_MAX:
        raise CacheError("record '%s': payload of %d bytes over the limit" % (rid, expect))
    if payload_bytes != expect:
        raise CacheError("record '%s': payload size %d, shape says %d" % (rid, payload_bytes, expect))
    if 64 + id_len + frame_bytes != len(buf):
        raise CacheError("record '%s': %d bytes stored, header says %d" % (rid, len(buf), 64 + id_len + frame_bytes))
    if not math.isfinite(pad_value):
        raise CacheError("record '%s': pad value is not finite" % rid)
    return dict(id=rid, version=version, dtype=dtype, flags=flags, n_mels=n_mels, split=split, id_len=id_len,
                n_tokens=n_tokens, tokens_padded=tokens_padded, n_frames=n_frames, frames_padded=frames_padded,
                speaker_id=speaker_id, lang_id=lang_id, n_samples=n_samples, payload_bytes=payload_bytes,
                frame_bytes=frame_bytes, pad_value=pad_value, frame_crc=frame_crc)


def _parse_v2(buf, rid, dtype, flags, n_mels, split, n_sec, id_len, reserved, n_tokens, tokens_padded, n_frames,
              frames_padded, speaker_id, lang_id, n_samples, pad_token, trim_start, pad_value, table_crc):
    """Record version 2 (formats/cache.md 3.2): header fields at the version-1 offsets,
    44 pad_token, 48 trim_start, 56 the section table's CRC-32, then the id, a table of
    16-byte entries (kind, codec, flags, 0, stored, raw, crc32) and the bodies."""
    if dtype > DTYPE_F16 or flags & ~FLAG_SHUFFLED or split > 1 or reserved:
        raise CacheError("record '%s': bad dtype, flags, split or reserved field" % rid)
    if n_sec not in (3, 4):
        raise CacheError("record '%s': %d sections (3 or 4 expected)" % (rid, n_sec))
    tab = 64 + id_len
    if tab + 16 * n_sec > len(buf):
        raise CacheError("record '%s': section table does not fit %d bytes" % (rid, len(buf)))
    if zlib.crc32(bytes(buf[tab:tab + 16 * n_sec])) != table_crc:
        raise CacheError("record '%s': section table checksum mismatch" % rid)
    if not 0 < n_mels <= MAX_MELS or tokens_padded > MAX_TOKENS or frames_padded > MAX_FRAMES:
        raise CacheError("record '%s': shape out of limits" % rid)
    if n_tokens > tokens_padded or n_frames > frames_padded:
        raise CacheError("record '%s': lengths (%d tokens, %d frames) exceed padded shape (%d, %d)"
                         % (rid, n_tokens, n_frames, tokens_padded, frames_padded))
    esize = 2 if dtype == DTYPE_F16 else 4
    want_raw = [4 * n_tokens, n_mels * n_frames * esize, None, 2 * n_samples]
    off, sections = tab + 16 * n_sec, []
    for i in range(n_sec):
        kind, codec, sflags, r0, stored, raw, crc = struct.unpack_from("<BBBBIII", buf, tab + 16 * i)
        ok = kind == i + 1 and r0 == 0
        if i < 3:
            ok = ok and codec == 1 and sflags == ((flags & FLAG_SHUFFLED) if i == 1 else 0)
        else:
            ok = ok and ((codec == 1 and sflags == FLAG_SHUFFLED) or (codec == 2 and sflags == 0))
        if i == 2:
            ok = ok and 4 <= raw <= 4 + 2 * 65536
        if not ok:
            raise CacheError("record '%s': section %d: bad kind, codec or flags" % (rid, i))
        if want_raw[i] is not None and (raw != want_raw[i] or raw > PAYLOAD_MAX):
            raise CacheError("record '%s': section %d: %d decoded bytes, the header says %d" % (rid, i, raw, want_raw[i]))
        sections.append(dict(kind=kind, codec=codec, flags=sflags, offset=off, stored=stored, raw=raw, crc=crc))
        off += stored
    if off != len(buf):
        raise CacheError("record '%s': %d bytes stored, header says %d" % (rid, len(buf), off))
    if not math.isfinite(pad_value):
        raise CacheError("record '%s': pad value is not finite" % rid)
    return dict(id=rid, version=2, dtype=dtype, flags=flags, n_mels=n_mels, split=split, id_len=id_len,
                n_tokens=n_tokens, tokens_padded=tokens_padded, n_frames=n_frames, frames_padded=frames_padded,
                speaker_id=speaker_id, lang_id=lang_id, n_samples=n_samples, pad_token=pad_token,
                trim_start=trim_start, pad_value=pad_value, sections=sections,
                audio=("none", "int16", "flac")[0 if n_sec == 3 else sections[3]["codec"]])


_LENGTH = struct.Struct("<IIIIIBBH")
LENGTH_FIELDS = ("n_frames", "n_tokens", "n_samples", "speaker_id", "lang_id", "split", "flags")
_LENGTH_DTYPE = np.dtype([(f, np.uint8 if f in ("split", "flags") else np.uint32) for f in LENGTH_FIELDS])

_SECTION_NAMES = ("", "tokens", "mel", "text", "waveform")


def _section(buf, h, i, dctx):
    """Check section i's CRC-32 and decompress its zstd body."""
    s = h["sections"][i]
    body = bytes(buf[s["offset"]:s["offset"] + s["stored"]])
    name = _SECTION_NAMES[s["kind"]]
    if zlib.crc32(body) != s["crc"]:
        raise CacheError("record '%s': %s section checksum mismatch" % (h["id"], name))
    try:
        if zstandard.get_frame_parameters(body).content_size != s["raw"]:
            raise CacheError("record '%s': %s section content size does not match" % (h["id"], name))
        raw = dctx.decompress(body, max_output_size=max(s["raw"], 1))
    except zstandard.ZstdError as e:
        raise CacheError("record '%s': %s section: %s" % (h["id"], name, e)) from None
    if len(raw) != s["raw"]:
        raise CacheError("record '%s': %s section decompressed to %d bytes, expected %d"
                         % (h["id"], name, len(raw), s["raw"]))
    return raw


def _decode_v2(buf, h, dctx):
    """Tokens and mel of a version-2 record, padded to the record's padded shape as
    version 1 stored them (the decoder writes the padding)."""
    raw = _section(buf, h, 0, dctx)
    tokens = np.full(h["tokens_padded"], h["pad_token"], dtype=np.int32)
    tokens[:h["n_tokens"]] = np.frombuffer(raw, dtype="<i4", count=h["n_tokens"])
    raw = _section(buf, h, 1, dctx)
    C, T = h["n_mels"], h["n_frames"]
    esize = 2 if h["dtype"] == DTYPE_F16 else 4
    body = np.frombuffer(raw, dtype=np.uint8)
    if h["flags"] & FLAG_SHUFFLED:
        body = _unshuffle(body, esize, C * T)
    stored = body.view("<f2" if esize == 2 else "<f4").reshape(C, T)
    mel = np.empty((C, h["frames_padded"]), dtype=stored.dtype)
    mel[:, :T] = stored
    mel[:, T:] = h["pad_value"]  # rounded to the stored dtype, as the C decoder writes it
    return h, tokens, mel


def _unshuffle(body, esize, n):
    """Byte planes (plane b holds byte b of every element) back to little-endian
    elements, as a uint16/uint32 array."""
    if esize == 2:
        u = body[n:2 * n].astype(np.uint16)
        u <<= 8
        u |= body[:n]
        return u
    u = body[3 * n:4 * n].astype(np.uint32)
    for k in (2, 1, 0):
        u <<= 8
        u |= body[k * n:(k + 1) * n]
    return u


def _decode_stored(buf, dctx=None):
    """Decode a stored record without widening the mel: (header dict, tokens int32
    [tokens_padded], mel [n_mels, frames_padded] as stored: float16 or float32)."""
    h = parse_header(buf)
    if h["version"] == 2:
        return _decode_v2(buf, h, dctx or zstandard.ZstdDecompressor())
    frame = bytes(buf[64 + h["id_len"]:])
    # zstd's own checksum covers the content only; this covers the compressed bytes
    if zlib.crc32(frame) != h["frame_crc"]:
        raise CacheError("record '%s': zstd frame checksum mismatch" % h["id"])
    dctx = dctx or zstandard.ZstdDecompressor()
    try:
        params = zstandard.get_frame_parameters(frame)
    except zstandard.ZstdError as e:
        raise CacheError("record '%s': zstd frame: %s" % (h["id"], e)) from None
    if params.content_size != h["payload_bytes"]:
        raise CacheError("record '%s': zstd frame content size does not match header" % h["id"])
    try:
        raw = dctx.decompress(frame, max_output_size=h["payload_bytes"])
    except zstandard.ZstdError as e:
        raise CacheError("record '%s': zstd frame: %s" % (h["id"], e)) from None
    if len(raw) != h["payload_bytes"]:
        raise CacheError("record '%s': payload decompressed to %d bytes, expected %d"
                         % (h["id"], len(raw), h["payload_bytes"]))
    tp, C, T = h["tokens_padded"], h["n_mels"], h["frames_padded"]
    tokens = np.frombuffer(raw, dtype="<i4", count=tp).astype(np.int32)
    esize = 2 if h["dtype"] == DTYPE_F16 else 4
    body = np.frombuffer(raw, dtype=np.uint8, offset=tp * 4)
    if h["flags"] & FLAG_SHUFFLED:
        body = _unshuffle(body, esize, C * T)
    mel = body.view("<f2" if esize == 2 else "<f4").reshape(C, T)
    return h, tokens, mel


def decode_record(buf, dctx=None):
    """Decode a stored record: (header dict, tokens int32 [tokens_padded],
    mel float32 [n_mels, frames_padded]). Raises CacheError on damage."""
    h, tokens, mel = _decode_stored(buf, dctx)
    return h, tokens, mel.astype(np.float32)


# ---- LMDB structure check ---------------------------------------------------------------
# LMDB trusts its pages: a flipped bit in a branch page or a meta page can send it
# outside the file (SIGBUS) instead of returning an error. The C reader guards its reads
# against such faults; Python cannot, so before py-lmdb touches a shard this walks every
# page LMDB could follow from the current meta page (liblmdb 0.9 on-disk format, 64-bit)
# and refuses the shard unless each lies inside the file and is well formed.

_P_BRANCH, _P_LEAF, _P_OVERFLOW, _P_META, _P_LEAF2, _P_SUBP = 0x01, 0x02, 0x04, 0x08, 0x20, 0x40
_F_BIGDATA, _F_SUBDATA, _F_DUPDATA = 0x01, 0x02, 0x04
_PAGEHDR, _NODEHDR = 16, 8
_MDB_MAGIC, _MDB_VERSION = 0xBEEFC0DE, 1
_P_INVALID = 0xFFFFFFFFFFFFFFFF
_DB = struct.Struct("<IHHQQQQQ")  # MDB_db: pad (meta 0: page size), flags, depth, counts, root


def check_lmdb_structure(path):
    """Walk data.mdb under path as liblmdb would read it; raise CacheError (without
    shard context) on anything that would send LMDB outside the file."""
    import mmap
    with open(os.path.join(path, "data.mdb"), "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size < 160:
            raise CacheError("data.mdb of %d bytes holds no meta pages" % size)
        m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    try:
        return _walk(m, size)
    finally:
        m.close()


def _walk(m, size):
    if size < 160:
        raise CacheError("data.mdb of %d bytes holds no meta pages" % size)
    psize = _DB.unpack_from(m, 40)[0]
    if psize < 512 or psize > 65536 or psize & (psize - 1) or 2 * psize > size:
        raise CacheError("meta page: page size %d unusable with a %d-byte file" % (psize, size))
    metas = []
    for i in (0, 1):
        off = i * psize
        flags = struct.unpack_from("<H", m, off + 10)[0]
        magic, version = struct.unpack_from("<II", m, off + 16)
        if not flags & _P_META or magic != _MDB_MAGIC:
            raise CacheError("meta page %d: not an LMDB meta page" % i)
        if version != _MDB_VERSION:
            raise CacheError("meta page %d: LMDB data version %d" % (i, version))
        last_pg, txnid = struct.unpack_from("<QQ", m, off + 136)
        metas.append((txnid, i, off, last_pg))
    if _DB.unpack_from(m, psize + 40)[0] != psize:
        # liblmdb takes the page size from the newer meta page and trusts it
        raise CacheError("the two meta pages disagree on the page size")
    txnid, which, off, last_pg = max(metas)
    n_pages = last_pg + 1
    if n_pages * psize > size:
        raise CacheError("truncated (data.mdb has %d bytes, its pages reach %d)" % (size, n_pages * psize))
    main = _DB.unpack_from(m, off + 40 + _DB.size)
    seen = set()

    def page(pgno, what):
        if pgno < 2 or pgno >= n_pages:
            raise CacheError("%s: page %d outside pages 2..%d" % (what, pgno, n_pages - 1))
        if pgno in seen:
            raise CacheError("%s: page %d reached twice" % (what, pgno))
        seen.add(pgno)
        return pgno * psize

    def tree(root, what, depth=0, named=False):
        if root == _P_INVALID:
            return
        if depth > 32:
            raise CacheError("%s: tree deeper than 32 levels" % what)
        base = page(root, what)
        flags = struct.unpack_from("<H", m, base + 10)[0]
        lower, upper = struct.unpack_from("<HH", m, base + 12)
        kind = flags & (_P_BRANCH | _P_LEAF | _P_OVERFLOW | _P_META | _P_LEAF2 | _P_SUBP)
        if kind not in (_P_BRANCH, _P_LEAF):
            raise CacheError("%s: page %d has flags 0x%x, expected a branch or leaf" % (what, root, flags))
        if not _PAGEHDR <= lower <= upper <= psize or (lower - _PAGEHDR) % 2:
            raise CacheError("%s: page %d has bounds %d..%d" % (what, root, lower, upper))
        n = (lower - _PAGEHDR) // 2
        if kind == _P_BRANCH and n == 0:
            raise CacheError("%s: branch page %d is empty" % (what, root))
        for k in range(n):
            ptr = struct.unpack_from("<H", m, base + _PAGEHDR + 2 * k)[0]
            if ptr < upper or ptr + _NODEHDR > psize:
                raise CacheError("%s: page %d node %d at offset %d" % (what, root, k, ptr))
            lo, hi, nflags, ksize = struct.unpack_from("<HHHH", m, base + ptr)
            end = ptr + _NODEHDR + ksize
            if end > psize:
                raise CacheError("%s: page %d node %d key overruns the page" % (what, root, k))
            if kind == _P_BRANCH:
                tree(lo | hi << 16 | nflags << 32, what, depth + 1, named)
                continue
            dsize = lo | hi << 16
            if nflags & _F_DUPDATA or nflags & ~(_F_BIGDATA | _F_SUBDATA):
                raise CacheError("%s: page %d node %d has flags 0x%x" % (what, root, k, nflags))
            if nflags & _F_BIGDATA:
                if end + 8 > psize:
                    raise CacheError("%s: page %d node %d overruns the page" % (what, root, k))
                opg = struct.unpack_from("<Q", m, base + end)[0]
                obase = page(opg, what)
                oflags = struct.unpack_from("<H", m, obase + 10)[0]
                count = struct.unpack_from("<I", m, obase + 12)[0]
                if not oflags & _P_OVERFLOW or count < 1 or opg + count > n_pages or \
                        dsize > count * psize - _PAGEHDR:
                    raise CacheError("%s: overflow page %d (x%d) does not hold %d bytes" % (what, opg, count, dsize))
                seen.update(range(opg + 1, opg + count))
            elif end + dsize > psize:
                raise CacheError("%s: page %d node %d data overruns the page" % (what, root, k))
            if nflags & _F_SUBDATA:
                if named or dsize != _DB.size or nflags & _F_BIGDATA:
                    raise CacheError("%s: page %d node %d is a malformed named database" % (what, root, k))
                sub = _DB.unpack_from(m, base + end)
                name = bytes(m[base + ptr + _NODEHDR:base + end]).decode("utf-8", "replace")
                tree(sub[7], 'database "%s"' % name, 0, True)

    tree(main[7], "main database")
    return True


class XttsCache:
    """A cache directory: manifest.json plus shard-*/ LMDB environments.

    cache[i] (i may be negative) returns the record at global index i as a dict (see
    get()). padded sets the default of get()'s padded argument.

    backend chooses who decodes read_batch's fixed-shape batches: "c" the C reader
    (libxtts-reader.so; CacheError when it cannot be loaded), "python" the pure-Python
    reader, "auto" (the default) the C reader when its library loads, else Python. threads
    is read_batch's default number of C decoding threads (1: the calling thread only).
    """

    def __init__(self, path, padded=False, backend="auto", threads=1):
        self.path = os.fspath(path)
        self.padded = padded
        if backend not in BACKENDS:
            raise ValueError("backend %r: one of %s" % (backend, ", ".join(BACKENDS)))
        if backend == "c" and _clib.library() is None:
            raise CacheError("%s: backend='c', but the C library is not available (%s)"
                             % (self.path, _clib.load_error()))
        self.backend = "c" if backend != "python" and _clib.library() is not None else "python"
        self.threads = max(1, int(threads))
        self._chandle = None
        mpath = os.path.join(self.path, "manifest.json")
        self.manifest = m = load_manifest(mpath)   # checked as the C loader checks it
        self.format_version = m["format_version"]
        self.config = m["config"]
        self.config_hash = m["config_hash"]
        self.n_mels = self.config["mel"]["n_mels"]
        self.sample_rate = self.config["mel"]["sample_rate"]
        self.hop = self.config["mel"]["hop_samples"]
        self.max_tokens = self.config["max_tokens"]
        self.pad_token = self.config["pad_token"]
        self.audio = self.config.get("audio", "none")
        self.max_frames = max([self.config["max_frames"]] + self.config["buckets"])
        self.shards = [dict(name=s["name"], first=s["first_index"], records=s["records"], bytes=s["bytes"])
                       for s in m["shards"]]
        first = m["records"]
        self._count = first
        self._firsts = [s["first"] for s in self.shards]
        self.speakers = list(m.get("speakers", []))
        self.languages = list(m.get("languages", []))
        self._pid = None
        self._envs = {}
        self._dctx = None

    # -- per-process LMDB handles ----------------------------------------------------------

    def _check_process(self):
        pid = os.getpid()
        if pid != self._pid:
            # Handles inherited through fork() are dropped, never used: open afresh here.
            self._envs = {}
            self._dctx = zstandard.ZstdDecompressor()
            self._pid = pid

    def _shard(self, si):
        self._check_process()
        got = self._envs.get(si)
        if got is not None:
            return got
        s = self.shards[si]
        path = os.path.join(self.path, s["name"])
        data = os.path.join(path, "data.mdb")
        if not os.path.isdir(path):
            raise CacheError("%s: shard missing (%s)" % (s["name"], path))
        try:
            size = os.stat(data).st_size
        except OSError as e:
            raise CacheError("%s: shard has no data file (%s)" % (s["name"], e)) from None
        try:
            check_lmdb_structure(path)
        except CacheError as e:
            raise CacheError("%s: damaged (%s)" % (s["name"], e)) from None
        except (OSError, ValueError, struct.error) as e:
            raise CacheError("%s: cannot read data.mdb (%s)" % (s["name"], e)) from None
        try:
            env = lmdb.open(path, readonly=True, lock=False, readahead=False, max_dbs=8, max_readers=4096,
                            subdir=True, create=False)
        except lmdb.Error as e:
            raise CacheError("%s: cannot open LMDB environment (%s)" % (s["name"], e)) from None
        try:
            need = (env.info()["last_pgno"] + 1) * env.stat()["psize"]
            if need > size:
                raise CacheError("%s: truncated (data.mdb has %d bytes, its pages reach %d)" % (s["name"], size, need))
            names = ("records", "ids", "meta") + (("lengths",) if self.format_version >= 2 else ())
            dbs = {n: env.open_db(n.encode(), create=False) for n in names}
            with env.begin(db=dbs["meta"]) as txn:
                h = txn.get(b"config_hash")
                fmt = txn.get(b"format")
            if h is None or h.decode("ascii", "replace") != self.config_hash:
                raise CacheError("%s: shard %s (built with another configuration)"
                                 % (s["name"], "has no config_hash" if h is None else
                                    "config_hash differs from the manifest's"))
            want = b"xtts-cache %d" % self.manifest["format_version"]
            if fmt != want:
                raise CacheError("%s: meta \"format\" is %r, expected %r" % (s["name"], fmt, want.decode()))
            with env.begin() as txn:
                entries = txn.stat(dbs["records"])["entries"]
            if entries != s["records"]:
                raise CacheError("%s: holds %d records, the manifest says %d" % (s["name"], entries, s["records"]))
            if "lengths" in dbs:
                with env.begin() as txn:
                    n_len = txn.stat(dbs["lengths"])["entries"]
                if n_len != entries:
                    raise CacheError("%s: \"lengths\" holds %d entries for %d records" % (s["name"], n_len, entries))
        except lmdb.Error as e:
            env.close()
            raise CacheError("%s: %s" % (s["name"], e)) from None
        except CacheError:
            env.close()
            raise
        got = (env, dbs)
        self._envs[si] = got
        return got

    def _c(self):
        """This process's C handle (opened on first use; one inherited through fork() is
        dropped, never used or closed)."""
        h = self._chandle
        if h is None or h.pid != os.getpid():
            self._chandle = None
            h = _clib.CHandle(_clib.library(), self.path)
            if h.count != self._count or h.n_mels != self.n_mels or h.max_tokens != self.max_tokens \
                    or h.max_frames != self.max_frames:
                h.close()
                raise CacheError("%s: the C reader sees %d records of %d mels, %d tokens, %d frames; "
                                 "the manifest says %d, %d, %d, %d" % (self.path, h.count, h.n_mels, h.max_tokens,
                                                                        h.max_frames, self._count, self.n_mels,
                                                                        self.max_tokens, self.max_frames))
            self._chandle = h
        return h

    def close(self):
        """Close this process's LMDB environments and C handle (reopened on the next read)."""
        if self._pid == os.getpid():
            for env, _ in self._envs.values():
                env.close()
        self._envs = {}
        if self._chandle is not None:
            self._chandle.close()   # does nothing in a process that did not open it
            self._chandle = None

    def __getstate__(self):
        # Pickled into spawn-started workers: no handles travel.
        d = dict(self.__dict__)
        d["_envs"] = {}
        d["_pid"] = None
        d["_dctx"] = None
        d["_chandle"] = None
        return d

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    # -- lookups ------------------------------------------------------------------------------

    def __len__(self):
        return self._count

    def _locate(self, index):
        if index < 0:
            index += self._count
        if not 0 <= index < self._count:
            raise IndexError("index %d out of range (%d records)" % (index, self._count))
        lo, hi = 0, len(self.shards)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if self._firsts[mid] <= index:
                lo = mid
            else:
                hi = mid
        while index >= self.shards[lo]["first"] + self.shards[lo]["records"]:
            lo += 1
        return index, lo

    def shard_of(self, index):
        """Name of the shard holding index."""
        return self.shards[self._locate(index)[1]]["name"]

    def raw(self, index):
        """The stored bytes of record index."""
        index, si = self._locate(index)
        env, dbs = self._shard(si)
        local = index - self.shards[si]["first"]
        try:
            with env.begin(db=dbs["records"]) as txn:
                buf = txn.get(_be64(local))
        except lmdb.Error as e:
            raise CacheError("%s: index %d (local %d): %s" % (self.shards[si]["name"], index, local, e)) from None
        if buf is None:
            raise CacheError("%s: index %d (local %d): record missing from \"records\""
                             % (self.shards[si]["name"], index, local))
        return index, si, buf

    def _error(self, si, index, buf, e):
        rid = ""
        if len(buf) >= 64:
            n = min(struct.unpack_from("<H", buf, 12)[0], len(buf) - 64, 80)
            rid = "".join(c if c.isprintable() and c != "'" else "?"
                          for c in bytes(buf[64:64 + n]).decode("utf-8", "replace"))
        msg = str(e)
        prefix = "record '%s': " % rid
        if msg.startswith(prefix):
            msg = msg[len(prefix):]
        return CacheError("%s: index %d, id '%s': %s" % (self.shards[si]["name"], index, rid, msg))

    def header(self, index):
        """The record's header fields (dict) without decompressing."""
        index, si, buf = self.raw(index)
        try:
            return parse_header(buf)
        except CacheError as e:
            raise self._error(si, index, buf, e) from None

    def get(self, index, padded=None):
        """Record index as a dict: index, id, speaker (name or None), lang (code or None),
        speaker_id, lang_id, split ("train"/"val"), n_tokens, n_frames, n_samples,
        tokens (int32) and mel (float32 [n_mels, frames]). Unpadded by default; with
        padded=True tokens is (max_tokens,) padded with the pad token and mel is
        (n_mels, max_frames) padded with the record's pad value."""
        if padded is None:
            padded = self.padded
        index, si, buf = self.raw(index)
        try:
            h, tokens, mel = _decode_stored(buf, self._dctx)
        except CacheError as e:
            raise self._error(si, index, buf, e) from None
        if h["n_mels"] != self.n_mels:
            raise self._error(si, index, buf, CacheError("%d mel channels, the cache has %d"
                                                         % (h["n_mels"], self.n_mels)))
        nt, nf = h["n_tokens"], h["n_frames"]
        if padded:
            if h["tokens_padded"] > self.max_tokens or h["frames_padded"] > self.max_frames:
                raise self._error(si, index, buf, CacheError("padded shape exceeds the cache's"))
            t = np.full(self.max_tokens, self.pad_token, dtype=np.int32)
            t[:h["tokens_padded"]] = tokens
            m = np.empty((self.n_mels, self.max_frames), dtype=np.float32)
            m[:, :h["frames_padded"]] = mel      # widened to float32 on the way
            m[:, h["frames_padded"]:] = mel.dtype.type(h["pad_value"]) if h["version"] == 2 else np.float32(h["pad_value"])
            tokens, mel = t, m
        else:
            tokens = tokens[:nt].copy()
            mel = mel[:, :nf].astype(np.float32)  # a contiguous copy of the real frames
        sid, lid = h["speaker_id"], h["lang_id"]
        return dict(index=index, id=h["id"], speaker_id=sid, lang_id=lid,
                    speaker=self.speakers[sid] if sid < len(self.speakers) else None,
                    lang=self.languages[lid] if lid < len(self.languages) else None,
                    split="val" if h["split"] else "train", n_tokens=nt, n_frames=nf,
                    n_samples=h["n_samples"], tokens=tokens, mel=mel)

    def __getitem__(self, index):
        return self.get(index)

    # -- fixed-shape batches --------------------------------------------------------------------

    def batch_arrays(self, n, max_tokens=None, max_frames=None, mel_dtype=np.float32, to_torch=False,
                     pin_memory=None):
        """Empty output arrays for read_batch(..., out=): a dict of numpy arrays, or with
        to_torch=True of torch tensors (in pinned host memory when pin_memory is True, or
        when it is None and CUDA is available)."""
        T = self.max_tokens if max_tokens is None else int(max_tokens)
        F = self.max_frames if max_frames is None else int(max_frames)
        mel_dtype = np.dtype(mel_dtype)
        if mel_dtype not in (np.float32, np.float16):
            raise ValueError("mel_dtype %s: float32 or float16" % mel_dtype)
        shapes = dict(tokens=((n, T), np.int32), mel=((n, self.n_mels, F), mel_dtype),
                      n_tokens=((n,), np.int32), n_frames=((n,), np.int32), speaker_id=((n,), np.int32),
                      lang_id=((n,), np.int32), split=((n,), np.uint8), index=((n,), np.int64))
        if not to_torch:
            return {k: _aligned_empty(shape, dt) for k, (shape, dt) in shapes.items()}
        import torch
        if pin_memory is None:
            pin_memory = torch.cuda.is_available()
        tdt = {np.dtype(np.int32): torch.int32, np.dtype(np.float32): torch.float32,
               np.dtype(np.float16): torch.float16, np.dtype(np.uint8): torch.uint8, np.dtype(np.int64): torch.int64}
        return {k: torch.empty(shape, dtype=tdt[np.dtype(dt)], pin_memory=bool(pin_memory))
                for k, (shape, dt) in shapes.items()}

    def read_batch(self, indices, out=None, threads=None, max_tokens=None, max_frames=None, mel_dtype=np.float32,
                   to_torch=False, pin_memory=None):
        """Records indices as one fixed-shape batch, the rows xtts-train's loader fills
        (cache/reader.h, xtts_batch): a dict of
            tokens      int32   [B, max_tokens]   stored tokens, then the pad token
            mel         float32 [B, n_mels, max_frames] (or float16 with mel_dtype): the
                        stored frames, then the record's pad value
            n_tokens, n_frames, speaker_id, lang_id  int32 [B];  split uint8 [B];  index int64 [B]
        max_tokens / max_frames default to the cache's (the largest bucket); smaller ones
        must still hold each record's padded lengths. Decoded by the C reader (threads
        threads, default self.threads) when backend is "c", else in Python; the arrays are
        identical. to_torch=True returns torch tensors (pinned when pin_memory, or when it
        is None and CUDA is available), decoded straight into them by the C reader. out=
        reuses arrays or tensors from batch_arrays(len(indices), ...) of the same shapes.
        Raises IndexError for an index out of range and CacheError for a damaged record
        (naming the shard, the index and the id)."""
        idx = np.array(indices, dtype=np.int64).reshape(-1)
        n = len(idx)
        neg = idx < 0
        if neg.any():
            idx[neg] += self._count
        bad = (idx < 0) | (idx >= self._count)
        if bad.any():
            raise IndexError("index %d out of range (%d records)" % (int(np.array(indices).reshape(-1)[bad][0]),
                                                                     self._count))
        T = self.max_tokens if max_tokens is None else int(max_tokens)
        F = self.max_frames if max_frames is None else int(max_frames)
        if T < 1 or F < 1:
            raise ValueError("max_tokens and max_frames must be >= 1")
        if out is None:
            out = self.batch_arrays(n, T, F, mel_dtype, to_torch, pin_memory)
        else:
            want = self.batch_arrays(0, T, F, mel_dtype)
            for k, a in want.items():
                got = out.get(k)
                if got is None or tuple(got.shape) != (n,) + a.shape[1:] or not _same_dtype(got, a.dtype) \
                        or not _contiguous(got):
                    raise ValueError("out[%r]: a contiguous %s array of shape %s expected (batch_arrays)"
                                     % (k, a.dtype, ((n,) + a.shape[1:],)))
        if self.backend == "c":
            self._read_batch_c(idx, out, T, F, self.threads if threads is None else max(1, int(threads)))
        else:
            self._read_batch_py(idx, {k: _as_numpy(v) for k, v in out.items()}, T, F)
        return out

    def _read_batch_c(self, idx, out, T, F, threads):
        h = self._c()
        ptr = {k: _data_ptr(v) for k, v in out.items()}
        mel_f16 = _same_dtype(out["mel"], np.float16)
        _as_numpy(out["index"])[:] = idx
        h.read_batch(ptr["index"], len(idx), ptr["tokens"], T, ptr["mel"], _clib.MEL_F16 if mel_f16 else _clib.MEL_F32,
                     F, ptr["n_tokens"], ptr["n_frames"], ptr["speaker_id"], ptr["lang_id"], ptr["split"], threads)

    def _read_batch_py(self, idx, out, T, F):
        tok, mel = out["tokens"], out["mel"]
        for k, gi in enumerate(idx.tolist()):
            index, si, buf = self.raw(gi)
            try:
                h, tokens, m = _decode_stored(buf, self._dctx)
                if h["n_mels"] != self.n_mels:
                    raise CacheError("%d mel channels, the batch has %d" % (h["n_mels"], self.n_mels))
                tp, fp = h["tokens_padded"], h["frames_padded"]
                if tp > T or fp > F:
                    raise CacheError("padded shape (%d tokens, %d frames) does not fit the batch's (%d, %d)"
                                     % (tp, fp, T, F))
            except CacheError as e:
                raise self._error(si, index, buf, e) from None
            tok[k, :tp] = tokens
            tok[k, tp:] = self.pad_token
            mel[k, :, :fp] = m
            # the pad value as the C decoder writes it: rounded to the stored dtype (version 2)
            mel[k, :, fp:] = m.dtype.type(h["pad_value"]) if h["version"] == 2 else np.float32(h["pad_value"])
            out["n_tokens"][k] = h["n_tokens"]
            out["n_frames"][k] = h["n_frames"]
            out["speaker_id"][k] = h["speaker_id"]
            out["lang_id"][k] = h["lang_id"]
            out["split"][k] = h["split"]
        out["index"][:] = idx

    def __iter__(self):
        for i in range(self._count):
            yield self.get(i)

    def index_of(self, rid):
        """Global index of utterance id rid; KeyError when absent."""
        key = rid.encode("utf-8") if isinstance(rid, str) else bytes(rid)
        if not 0 < len(key) <= MAX_ID:
            raise KeyError(rid)
        for si, s in enumerate(self.shards):
            env, dbs = self._shard(si)
            try:
                with env.begin(db=dbs["ids"]) as txn:
                    v = txn.get(key)
            except lmdb.Error as e:
                raise CacheError("%s: id '%s': %s" % (s["name"], rid, e)) from None
            if v is not None:
                if len(v) != 8:
                    raise CacheError("%s: id '%s': \"ids\" value is not an 8-byte index" % (s["name"], rid))
                local = struct.unpack(">Q", v)[0]
                if local >= s["records"]:
                    raise CacheError("%s: id '%s': \"ids\" points at local index %d of %d records"
                                     % (s["name"], rid, local, s["records"]))
                return s["first"] + local
        raise KeyError(rid)

    def meta(self, shard, key):
        """A value of a shard's "meta" database (bytes) or None."""
        env, dbs = self._shard(shard)
        try:
            with env.begin(db=dbs["meta"]) as txn:
                return txn.get(key.encode() if isinstance(key, str) else key)
        except lmdb.Error as e:
            raise CacheError("%s: meta %r: %s" % (self.shards[shard]["name"], key, e)) from None

    def has_lengths_index(self):
        """True when the shards hold the lengths index (format 2, formats/cache.md 3.3)."""
        return self.format_version >= 2

    def lengths(self):
        """Every record's lengths in global index order, as a numpy structured array with
        the fields of LENGTH_FIELDS. From the lengths index (one cursor pass per shard)
        when the cache has one; a version-1 cache has none, so each record's header is
        read instead (no decompression)."""
        out = np.zeros(self._count, dtype=_LENGTH_DTYPE)
        if not self.has_lengths_index():
            for i in range(self._count):
                h = self.header(i)
                out[i] = (h["n_frames"], h["n_tokens"], h["n_samples"], h["speaker_id"], h["lang_id"],
                          h["split"], 0)
            return out
        for si, s in enumerate(self.shards):
            env, dbs = self._shard(si)
            want = 0
            try:
                with env.begin(db=dbs["lengths"]) as txn:
                    for k, v in txn.cursor():
                        if len(k) != 8 or struct.unpack(">Q", k)[0] != want or want >= s["records"]:
                            raise CacheError("%s: \"lengths\" key %s out of order or out of range"
                                             % (s["name"], bytes(k).hex()))
                        if len(v) != 24:
                            raise CacheError("%s: \"lengths\" entry %d of %d bytes, expected 24"
                                             % (s["name"], want, len(v)))
                        e = _LENGTH.unpack(v)
                        if e[5] > 1 or e[6] & ~1 or e[7]:
                            raise CacheError("%s: \"lengths\" entry %d has bad split, flags or reserved bytes"
                                             % (s["name"], want))
                        out[s["first"] + want] = e[:7]
                        want += 1
            except lmdb.Error as e:
                raise CacheError("%s: \"lengths\": %s" % (s["name"], e)) from None
            if want != s["records"]:
                raise CacheError("%s: \"lengths\" holds %d entries for %d records" % (s["name"], want, s["records"]))
        return out

    def _sections(self, index, want_wav):
        index, si, buf = self.raw(index)
        try:
            h = parse_header(buf)
            if h["version"] < 2:
                raise CacheError("record version 1 stores no text and no waveform")
            if want_wav and len(h["sections"]) < 4:
                raise CacheError("no waveform section (cache built with --audio none)")
            return index, si, buf, h
        except CacheError as e:
            raise self._error(si, index, buf, e) from None

    def text(self, index):
        """(original, normalized) transcript of a version-2 record (formats/cache.md 3.2)."""
        index, si, buf, h = self._sections(index, False)
        try:
            raw = _section(buf, h, 2, self._dctx)
            n = struct.unpack_from("<I", raw, 0)[0]
            if 4 + n > len(raw):
                raise CacheError("text section: original length %d over %d bytes" % (n, len(raw)))
            return raw[4:4 + n].decode("utf-8"), raw[4 + n:].decode("utf-8")
        except UnicodeDecodeError:
            raise self._error(si, index, buf, CacheError("text section is not UTF-8")) from None
        except CacheError as e:
            raise self._error(si, index, buf, e) from None

    def waveform(self, index):
        """The stored waveform of a version-2 record built with --audio int16|flac, as
        int16 [n_samples] at the mel sample rate (divide by 32768 for the signal the mel
        was computed from)."""
        index, si, buf, h = self._sections(index, True)
        s = h["sections"][3]
        try:
            if s["codec"] == 1:
                raw = np.frombuffer(_section(buf, h, 3, self._dctx), dtype=np.uint8)
                return _unshuffle(raw, 2, h["n_samples"]).view(np.int16)  # a fresh array already
            body = bytes(buf[s["offset"]:s["offset"] + s["stored"]])
            if zlib.crc32(body) != s["crc"]:
                raise CacheError("waveform section checksum mismatch")
            try:
                import io
                import soundfile
            except ImportError:
                raise CacheError("FLAC waveform: python3-soundfile is not installed") from None
            try:
                wav, sr = soundfile.read(io.BytesIO(body), dtype="int16")
            except Exception as e:  # soundfile raises its own and RuntimeError
                raise CacheError("FLAC waveform: %s" % e) from None
            if wav.ndim != 1 or len(wav) != h["n_samples"] or sr != self.sample_rate:
                raise CacheError("FLAC waveform: %s samples at %d Hz, the header says %d at %d"
                                 % (wav.shape, sr, h["n_samples"], self.sample_rate))
            return wav
        except CacheError as e:
            raise self._error(si, index, buf, e) from None

    def digest(self):
        """Content digest, as xtts-cache-verify prints it (docs/xtts-cache-verify.md, "Content digest")."""
        s = hashlib.sha256()
        for i in range(self._count):
            index, si, buf = self.raw(i)
            try:
                h, tokens, mel = _decode_stored(buf, self._dctx)
            except CacheError as e:
                raise self._error(si, index, buf, e) from None
            idb = h["id"].encode("utf-8")
            s.update(struct.pack("<I", len(idb)) + idb)
            s.update(struct.pack("<IIIIIIB", h["n_tokens"], h["n_frames"], h["n_mels"], h["n_samples"],
                                 h["speaker_id"], h["lang_id"], h["split"]))
            s.update(tokens[:h["n_tokens"]].astype("<i4").tobytes())
            s.update(mel[:, :h["n_frames"]].astype("<f4").tobytes())
        return s.hexdigest()


def _aligned_empty(shape, dtype, align=64):
    """np.empty on a 64-byte boundary. The C decoder writes large batches with
    non-temporal stores from the first 32-byte aligned element of each mel row on; rows
    that start off a cache line mix them with ordinary stores in one line, which costs
    about a third of the decoding speed (numpy's own large arrays start 16 bytes into a
    page)."""
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    raw = np.empty(nbytes + align, dtype=np.uint8)
    off = (-raw.ctypes.data) % align
    return raw[off:off + nbytes].view(dtype).reshape(shape)


def _as_numpy(a):
    return a if isinstance(a, np.ndarray) else a.numpy()


def _same_dtype(a, dt):
    if isinstance(a, np.ndarray):
        return a.dtype == dt
    return _as_numpy(a[:0]).dtype == dt if a.device.type == "cpu" else False


def _contiguous(a):
    if isinstance(a, np.ndarray):
        return a.flags.c_contiguous
    return a.is_contiguous() and a.device.type == "cpu"


def _data_ptr(a):
    return a.ctypes.data if isinstance(a, np.ndarray) else a.data_ptr()


def _main(argv):
    import argparse
    p = argparse.ArgumentParser(prog="python3 -m xtts_prep", description="Read an xtts-prep cache (see docs/python-reader.md).")
    p.add_argument("dir")
    p.add_argument("--digest", action="store_true", help="print 'digest: <sha256>' as xtts-cache-verify does")
    p.add_argument("--index", type=int, help="print one record (or export it with --npy)")
    p.add_argument("--id", help="select a record by utterance id")
    p.add_argument("--npy", help="write the selected record's mel as .npy")
    a = p.parse_args(argv)
    try:
        c = XttsCache(a.dir)
        if a.digest:
            print("records: %d" % len(c))
            print("digest: %s" % c.digest())
            return 0
        if a.id is not None or a.index is not None:
            r = c.get(c.index_of(a.id) if a.id is not None else a.index)
            if a.npy:
                np.save(a.npy, r["mel"])
            else:
                print(json.dumps({k: (v.tolist() if k == "tokens" else v) for k, v in r.items() if k != "mel"}))
            return 0
        print("records: %d, shards: %d, n_mels %d, max_tokens %d, max_frames %d"
              % (len(c), len(c.shards), c.n_mels, c.max_tokens, c.max_frames))
        return 0
    except (CacheError, KeyError, IndexError) as e:
        print("xtts_prep: %s" % e, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
