#!/usr/bin/python3
"""segment-score.py — scores xtts-segment's clips against the truth segment-truth.py wrote.

Usage: segment-score.py TRUTH_DIR SEGMENT_DIR [--tolerance S] [--pairs PAIRS.tsv] [-v]

Per clip written (a row of SEGMENT_DIR/segments.tsv; its source is a recording of
TRUTH_DIR/pairs.tsv, in order):
  text: its text must be exactly the texts of consecutive units of its recording, joined;
  wrong attachment: one of those units was not read (its text on audio that does not speak it),
        or another unit's speech (read or unwritten) lies inside the clip by more than the
        tolerance (default 0.02 s), or the text matches no units at all;
  cut: a unit's speech begins before the clip's start or ends after its end (tolerance);
  right: none of these.
Coverage: characters of the read units inside right clips over those of all read units.
Prints one line of figures (segments, right %, wrong attachment, cut, coverage, unread used,
unwritten used) and, with -v, each clip that is not right. Exit 0.
"""
from __future__ import annotations

import argparse
import os
import sys


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("truth")
    ap.add_argument("seg")
    ap.add_argument("--tolerance", type=float, default=0.02)
    ap.add_argument("--pairs")
    ap.add_argument("-v", action="store_true")
    a = ap.parse_args()
    pairs_path = a.pairs or os.path.join(a.truth, "pairs.tsv")
    file_of = {}
    with open(pairs_path, encoding="utf-8") as f:
        for k, line in enumerate(f):
            file_of[line.rstrip("\n").split("\t")[0]] = k
    units: dict[int, list[dict]] = {}
    with open(os.path.join(a.truth, "truth.tsv"), encoding="utf-8") as f:
        next(f)
        for line in f:
            c = line.rstrip("\n").split("\t")
            units.setdefault(int(c[0]), []).append(
                {"id": c[1], "kind": c[2], "start": float(c[3]), "end": float(c[4]), "text": c[5]})
    n = right = wrong = cut = unread_used = unwritten_used = 0
    covered = 0
    total = sum(len(u["text"]) for us in units.values() for u in us if u["kind"] == "read")
    tol = a.tolerance
    with open(os.path.join(a.seg, "segments.tsv"), encoding="utf-8") as f:
        next(f)
        for line in f:
            cid, src, s, e, text, score = line.rstrip("\n").split("\t")
            s, e = float(s), float(e)
            n += 1
            k = file_of.get(src)
            us = units.get(k, [])
            written = [u for u in us if u["kind"] != "unwritten"]
            # every run of consecutive units whose texts joined are the clip's text (a text
            # may be read more than once): the one whose read units overlap the clip most
            match, best = None, -1.0
            for i in range(len(written)):
                acc = []
                for j in range(i, len(written)):
                    acc.append(written[j]["text"])
                    joined = " ".join(acc)
                    if joined == text:
                        cand = written[i:j + 1]
                        ov = sum(max(0.0, min(e, u["end"]) - max(s, u["start"])) for u in cand if u["kind"] == "read")
                        if ov > best:
                            match, best = cand, ov
                        break
                    if not text.startswith(joined):
                        break
            why = []
            if match is None:
                why.append("text matches no units")
            else:
                if any(u["kind"] == "unread" for u in match):
                    why.append("unread text attached")
                    unread_used += 1
                for u in match:
                    if u["kind"] == "read" and (u["start"] < s - tol or u["end"] > e + tol):
                        why.append(f"cuts {u['id']} ({u['start']:.2f}-{u['end']:.2f})")
                ids = {u["id"] for u in match}
                for u in us:
                    if u["id"] in ids or u["kind"] == "unread":
                        continue
                    inside = min(e, u["end"]) - max(s, u["start"])
                    if inside > tol:
                        why.append(f"holds {u['kind']} {u['id']} for {inside:.2f} s")
                        if u["kind"] == "unwritten":
                            unwritten_used += 1
            is_wrong = match is None or any(w.startswith(("unread", "holds", "text")) for w in why)
            is_cut = any(w.startswith("cuts") for w in why)
            wrong += is_wrong
            cut += is_cut and not is_wrong
            if not why:
                right += 1
                covered += sum(len(u["text"]) for u in match)
            elif a.v:
                print(f"  {cid} {s:.2f}-{e:.2f}: {'; '.join(why)}: {text[:60]}")
    pct = lambda x, d: 100.0 * x / d if d else 0.0
    print(f"segments {n}, right {pct(right, n):.1f} %, wrong attachment {wrong}, cut {cut} ({pct(cut, n):.1f} %), "
          f"coverage {pct(covered, total):.1f} %, unread used {unread_used}, unwritten used {unwritten_used}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
