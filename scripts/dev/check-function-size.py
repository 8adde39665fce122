#!/usr/bin/env python3
"""check-function-size.py [--max N] [ROOT] - `make layers`: no function of the library or the
programs is longer than N lines (default 100), counted from the first line of its signature to
its closing brace. Generated tables and test files are not checked (tests/, *_data.c).

A function is recognised by the house style: its signature starts at column 0 and its body ends
with a `}` alone at column 0. One line per function over the limit; exit 1 when there is any."""
import os
import re
import sys

SKIP_SUFFIXES = ("_data.c",)          # generated tables
DIRS = ("common", "kernels", "formats", "cache", "prep", "train", "programs")
EXTS = (".c", ".h", ".cc", ".cu", ".cuh")
START = re.compile(r"^[A-Za-z_][A-Za-z0-9_ \*]*\b([A-Za-z_][A-Za-z0-9_]*)\s*\(")


def functions(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        m = START.match(lines[i])
        if not m or lines[i].startswith(("typedef", "static const", "const ")) and "{" not in lines[i]:
            i += 1
            continue
        # the signature runs until a line ending with '{' (or ';' for a declaration)
        j = i
        while j < len(lines) and j < i + 12:
            s = lines[j].rstrip()
            if s.endswith(";") or s.endswith("}"):   # a declaration, or a function on one line
                j = -1
                break
            if s.endswith("{"):
                break
            j += 1
        if j < 0 or j >= len(lines) or j >= i + 12:
            i += 1
            continue
        k = j + 1
        while k < len(lines) and lines[k] != "}" and not lines[k].startswith("}"):
            k += 1
        yield m.group(1), i + 1, k - i + 1
        i = k + 1


def main(argv):
    limit = 100
    args = list(argv)
    if args[:1] == ["--max"]:
        limit = int(args[1])
        args = args[2:]
    root = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    bad = 0
    n = 0
    for d in DIRS:
        for dirpath, _, files in os.walk(os.path.join(root, d)):
            for name in sorted(files):
                if not name.endswith(EXTS) or name.endswith(SKIP_SUFFIXES):
                    continue
                path = os.path.join(dirpath, name)
                for fn, line, size in functions(path):
                    n += 1
                    if size > limit:
                        print("function-size: %s:%d: %s is %d lines (limit %d)"
                              % (os.path.relpath(path, root), line, fn, size, limit))
                        bad += 1
    if bad == 0:
        print("function-size: ok (%d functions, none over %d lines)" % (n, limit))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
