"""The command line, python3 -m xtts_prep (docs/python-reader.md, "Install")."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import IO, TYPE_CHECKING, Any, NoReturn, Optional, Sequence

import numpy as np
if TYPE_CHECKING:   # numpy.typing is numpy 1.20 or later (Debian 11 has 1.19): for annotations only
    import numpy.typing as npt

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


class _WriteError(Exception):
    """An output the command could not write: its name and the reason."""


def _say(text: str) -> None:
    """Write one line to standard output and flush it, so that a full disk, a closed pipe
    or any other write error is seen here (and reported) rather than lost at exit."""
    try:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
    except OSError as e:
        raise _WriteError("standard output: write failed: %s" % (e.strerror or e)) from e


def _save_npy(path: str, array: npt.NDArray[Any]) -> None:
    """Write array to path as .npy, every write and the close checked (np.save alone lets
    a failed final flush pass unseen); a regular file left half written is removed."""
    try:
        f = open(path, "wb")
    except OSError as e:
        raise _WriteError("%s: cannot create: %s" % (path, e.strerror or e)) from e
    try:
        with f:
            np.save(f, array)
            f.flush()
    except OSError as e:
        try:
            if os.path.isfile(path):
                os.unlink(path)
        except OSError:
            pass
        raise _WriteError("%s: write failed: %s" % (path, e.strerror or e)) from e


class _Parser(argparse.ArgumentParser):
    """argparse with the programs' exit contract: a usage error is exit 1, said in one
    line and GNU's hint (argparse's own is exit 2, the code of an input error), and the
    help text's write is checked like every other output."""

    def error(self, message: str) -> NoReturn:
        print("%s: %s\nTry '%s --help' for more information." % (self.prog, message, self.prog), file=sys.stderr)
        raise SystemExit(1)

    def _print_message(self, message: str, file: Optional[IO[str]] = None) -> None:
        if not message:
            return
        out = file if file is not None else sys.stderr
        try:
            out.write(message)
            out.flush()
        except OSError as e:
            name = "standard output" if out is sys.stdout else "standard error"
            raise _WriteError("%s: write failed: %s" % (name, e.strerror or e)) from e


def _silence_stdout() -> None:
    """After a failed write to standard output, point it at /dev/null, so that the
    interpreter's own flush at exit neither fails again nor prints a traceback."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Print a cache's summary, its content digest (--digest) or one record (--index,
    --id; --npy writes its mel), or the package's backend (--about). Returns the exit
    status: 0, or 2 with the error on stderr (a cache or record that cannot be read, or an
    output that cannot be written: standard output or the --npy file); a usage error
    raises SystemExit(1), as argparse does (with its own code, 2)."""
    try:
        return _run(argv)
    except _WriteError as e:
        print("xtts_prep: %s" % e, file=sys.stderr)
        _silence_stdout()
        return 2


def _run(argv: Optional[Sequence[str]]) -> int:
    """main's work; output errors raise _WriteError."""
    p = _Parser(prog="python3 -m xtts_prep", description="Read an xtts-prep cache (see docs/python-reader.md).")
    p.add_argument("dir", nargs="?", help="the cache directory (not needed with --about)")
    p.add_argument("--about", action="store_true",
                   help="print the package version, the read_batch backend (c or python) and the C library used")
    p.add_argument("--digest", action="store_true", help="print 'digest: <sha256>' as xtts-cache-verify does")
    p.add_argument("--index", type=int, help="print one record (or export it with --npy)")
    p.add_argument("--id", help="select a record by utterance id")
    p.add_argument("--npy", help="write the selected record's mel as .npy")
    a = p.parse_args(argv)
    if a.about:
        _say(about())
        return 0
    if a.dir is None:
        p.error("the cache directory is required (or --about)")
    try:
        c = XttsCache(a.dir)
        if a.digest:
            _say("records: %d" % len(c))
            _say("digest: %s" % c.digest())
            return 0
        if a.id is not None or a.index is not None:
            if a.id is not None:
                try:
                    index = c.index_of(a.id)
                except KeyError:
                    raise CacheError("%s: no record with id '%s'" % (a.dir, a.id)) from None
            else:
                index = a.index
                if not 0 <= index < len(c):  # a negative index is not a Python slice here
                    raise CacheError("%s: index %d out of range (%d records)" % (a.dir, index, len(c)))
            r = c.get(index)
            if a.npy:
                _save_npy(a.npy, r["mel"])
            else:
                shown: dict[str, Any] = {k: v for k, v in r.items() if k != "mel"}
                shown["tokens"] = r["tokens"].tolist()
                _say(json.dumps(shown))
            return 0
        _say("records: %d, shards: %d, n_mels %d, max_tokens %d, max_frames %d"
             % (len(c), len(c.shards), c.n_mels, c.max_tokens, c.max_frames))
        return 0
    except (CacheError, KeyError, IndexError) as e:
        print("xtts_prep: %s" % e, file=sys.stderr)
        return 2
