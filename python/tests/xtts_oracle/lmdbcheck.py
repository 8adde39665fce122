"""LMDB structure check: walk a shard's data.mdb before py-lmdb opens it.

LMDB trusts its pages: a flipped bit in a branch page or a meta page can send it
outside the file (SIGBUS) instead of returning an error. The C reader guards its reads
against such faults; Python cannot, so before py-lmdb touches a shard this walks every
page LMDB could follow from the current meta page (liblmdb 0.9 on-disk format, 64-bit)
and refuses the shard unless each lies inside the file and is well formed.
"""

from __future__ import annotations

import mmap
import os
import stat
import struct
from typing import NamedTuple, Union

from xtts_prep.manifest import CacheError

__all__ = ["check_lmdb_structure"]

_P_BRANCH, _P_LEAF, _P_OVERFLOW, _P_META, _P_LEAF2, _P_SUBP = 0x01, 0x02, 0x04, 0x08, 0x20, 0x40
_F_BIGDATA, _F_SUBDATA, _F_DUPDATA = 0x01, 0x02, 0x04
_PAGEHDR, _NODEHDR = 16, 8
_MDB_MAGIC, _MDB_VERSION = 0xBEEFC0DE, 1
_P_INVALID = 0xFFFFFFFFFFFFFFFF
_DB = struct.Struct("<IHHQQQQQ")  # MDB_db: pad (meta 0: page size), flags, depth, counts, root


class _MdbDb(NamedTuple):
    """An MDB_db record (a meta page's databases, a named database's node)."""
    pad: int            # in meta page 0's free-space record: the page size
    flags: int
    depth: int
    branch_pages: int
    leaf_pages: int
    overflow_pages: int
    entries: int
    root: int


def _db_at(m: mmap.mmap, off: int) -> _MdbDb:
    return _MdbDb._make(_DB.unpack_from(m, off))


def check_lmdb_structure(path: Union[str, os.PathLike[str]]) -> bool:
    """Walk data.mdb under path as liblmdb would read it; raise CacheError (without
    shard context) on anything that would send LMDB outside the file."""
    data = os.path.join(path, "data.mdb")
    if not stat.S_ISREG(os.stat(data).st_mode):  # a FIFO would block open()
        raise CacheError("%s is not a regular file" % data)
    with open(data, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size < 160:
            raise CacheError("data.mdb of %d bytes holds no meta pages" % size)
        m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    try:
        return _walk(m, size)
    finally:
        m.close()


def _u16(m: mmap.mmap, off: int) -> int:
    v: int = struct.unpack_from("<H", m, off)[0]
    return v


def _walk(m: mmap.mmap, size: int) -> bool:
    if size < 160:
        raise CacheError("data.mdb of %d bytes holds no meta pages" % size)
    psize = _db_at(m, 40).pad
    if psize < 512 or psize > 65536 or psize & (psize - 1) or 2 * psize > size:
        raise CacheError("meta page: page size %d unusable with a %d-byte file" % (psize, size))
    metas: list[tuple[int, int, int, int]] = []
    for i in (0, 1):
        off = i * psize
        flags = _u16(m, off + 10)
        magic, version = struct.unpack_from("<II", m, off + 16)
        if not flags & _P_META or magic != _MDB_MAGIC:
            raise CacheError("meta page %d: not an LMDB meta page" % i)
        if version != _MDB_VERSION:
            raise CacheError("meta page %d: LMDB data version %d" % (i, version))
        last_pg, txnid = struct.unpack_from("<QQ", m, off + 136)
        metas.append((txnid, i, off, last_pg))
    if _db_at(m, psize + 40).pad != psize:
        # liblmdb takes the page size from the newer meta page and trusts it
        raise CacheError("the two meta pages disagree on the page size")
    txnid, which, off, last_pg = max(metas)
    n_pages = last_pg + 1
    if n_pages * psize > size:
        raise CacheError("truncated (data.mdb has %d bytes, its pages reach %d)" % (size, n_pages * psize))
    main = _db_at(m, off + 40 + _DB.size)
    seen: set[int] = set()

    def page(pgno: int, what: str) -> int:
        if pgno < 2 or pgno >= n_pages:
            raise CacheError("%s: page %d outside pages 2..%d" % (what, pgno, n_pages - 1))
        if pgno in seen:
            raise CacheError("%s: page %d reached twice" % (what, pgno))
        seen.add(pgno)
        return pgno * psize

    def tree(root: int, what: str, depth: int = 0, named: bool = False) -> None:
        if root == _P_INVALID:
            return
        if depth > 32:
            raise CacheError("%s: tree deeper than 32 levels" % what)
        base = page(root, what)
        flags = _u16(m, base + 10)
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
            ptr = _u16(m, base + _PAGEHDR + 2 * k)
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
                oflags = _u16(m, obase + 10)
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
                sub = _db_at(m, base + end)
                name = bytes(m[base + ptr + _NODEHDR:base + end]).decode("utf-8", "replace")
                tree(sub.root, 'database "%s"' % name, 0, True)

    tree(main.root, "main database")
    return True
