"""The command line, python3 -m xtts_prep (docs/python-reader.md, "Install")."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Optional, Sequence

import numpy as np

from .cache import XttsCache
from .manifest import CacheError

__all__ = ["main"]


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Print a cache's summary, its content digest (--digest) or one record (--index,
    --id; --npy writes its mel). Returns the exit status: 0, or 2 with the error on
    stderr."""
    p = argparse.ArgumentParser(prog="python3 -m xtts_prep",
                                description="Read an xtts-prep cache (see docs/python-reader.md).")
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
