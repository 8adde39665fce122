"""The command line, python3 -m xtts_prep (docs/python-reader.md, "Install")."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Optional, Sequence

import numpy as np

from . import _clib
from .cache import XttsCache
from .manifest import CacheError

__all__ = ["main"]


def about() -> str:
    """The package's version and place, the backend read_batch uses, the library's path
    and version (or why there is none) and where it was looked for (--about)."""
    from . import __version__
    lib = _clib.library()
    lines = ["xtts_prep %s (%s)" % (__version__, os.path.dirname(os.path.abspath(__file__))),
             "backend: %s" % ("c" if lib is not None else "python")]
    if lib is not None:
        lines += ["library: %s" % _clib.library_path(),
                  "library version: %s (ABI %d)" % (_clib.library_version(), _clib.ABI_VERSION)]
    else:
        lines += ["library: none: %s" % _clib.load_error()]
    places = _clib.search_places()
    lines += ["searched: %s" % (", ".join(places) if places else "nothing (XTTS_PREP_LIB=%s)"
                                % os.environ.get("XTTS_PREP_LIB", ""))]
    return "\n".join(lines)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Print a cache's summary, its content digest (--digest) or one record (--index,
    --id; --npy writes its mel), or the package's backend (--about). Returns the exit
    status: 0, or 2 with the error on stderr."""
    p = argparse.ArgumentParser(prog="python3 -m xtts_prep",
                                description="Read an xtts-prep cache (see docs/python-reader.md).")
    p.add_argument("dir", nargs="?", help="the cache directory (not needed with --about)")
    p.add_argument("--about", action="store_true",
                   help="print the package version, the read_batch backend (c or python) and the C library used")
    p.add_argument("--digest", action="store_true", help="print 'digest: <sha256>' as xtts-cache-verify does")
    p.add_argument("--index", type=int, help="print one record (or export it with --npy)")
    p.add_argument("--id", help="select a record by utterance id")
    p.add_argument("--npy", help="write the selected record's mel as .npy")
    a = p.parse_args(argv)
    if a.about:
        print(about())
        return 0
    if a.dir is None:
        p.error("the cache directory is required (or --about)")
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
                shown: dict[str, Any] = {k: v for k, v in r.items() if k != "mel"}
                shown["tokens"] = r["tokens"].tolist()
                print(json.dumps(shown))
            return 0
        print("records: %d, shards: %d, n_mels %d, max_tokens %d, max_frames %d"
              % (len(c), len(c.shards), c.n_mels, c.max_tokens, c.max_frames))
        return 0
    except (CacheError, KeyError, IndexError) as e:
        print("xtts_prep: %s" % e, file=sys.stderr)
        return 2
