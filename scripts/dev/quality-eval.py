#!/usr/bin/python3
"""quality_eval.py — precision and recall of the quality flags against a corpus's known
defects (scripts/dev/quality-corpus.py), as a markdown table.

FLAGS.tsv is any table with a header row whose first two columns are id and flags ("-" or
names joined by ','): the output of build/tests/tools/quality-eval or the TSV of the cache
report. Per flag F: a true positive is a clip whose injected defect is F and that carries F;
a false positive carries F with another defect (or none); recall is over the clips with
defect F. Also: the fraction of clean clips that carry any flag, and the flags that defect
clips carry besides their own (not counted against the defect's own flag, counted as false
positives of the other flag).

Usage: quality_eval.py LABELS.tsv FLAGS.tsv [--check]
  --check: exit 1 unless every flag has precision and recall >= 0.95 and at most 2 % of
  clean clips are flagged.
"""
from __future__ import annotations

import argparse
import collections
import sys


def read_tsv(path: str) -> list[dict[str, str]]:
    with open(path, encoding="utf-8") as f:
        head = f.readline().rstrip("\n").split("\t")
        return [dict(zip(head, line.rstrip("\n").split("\t"))) for line in f if line.strip()]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("labels")
    ap.add_argument("flags")
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    labels = {r["id"]: r for r in read_tsv(a.labels)}
    flags: dict[str, set[str]] = {}
    for r in read_tsv(a.flags):
        flags[r["id"]] = set() if r["flags"] in ("-", "") else set(r["flags"].split(","))
    missing = [i for i in labels if i not in flags]
    if missing:
        print(f"quality_eval: {len(missing)} labelled clips have no flags row (first: {missing[0]})", file=sys.stderr)
        return 2
    defects = sorted({r["defect"] for r in labels.values()} - {"clean"})
    tp, fp, fn = collections.Counter(), collections.Counter(), collections.Counter()
    extra: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    misses: dict[str, list[str]] = collections.defaultdict(list)
    for i, lab in labels.items():
        d, got = lab["defect"], flags[i]
        if d != "clean":
            if d in got:
                tp[d] += 1
            else:
                fn[d] += 1
                misses[d].append(f"{i}({lab['strength']})")
        for f in got - {d}:
            fp[f] += 1
            extra[d][f] += 1
    n_clean = sum(1 for r in labels.values() if r["defect"] == "clean")
    clean_flagged = sum(1 for i, r in labels.items() if r["defect"] == "clean" and flags[i])
    ok = True
    print("| flag | clips | precision | recall |")
    print("|---|---|---|---|")
    for d in defects:
        p = tp[d] / (tp[d] + fp[d]) if tp[d] + fp[d] else 0.0
        r = tp[d] / (tp[d] + fn[d]) if tp[d] + fn[d] else 0.0
        ok = ok and p >= 0.95 and r >= 0.95
        print(f"| {d} | {tp[d] + fn[d]} | {p:.3f} ({tp[d]}/{tp[d] + fp[d]}) | {r:.3f} ({tp[d]}/{tp[d] + fn[d]}) |")
    frac = clean_flagged / n_clean if n_clean else 0.0
    ok = ok and frac <= 0.02
    print(f"\nclean clips flagged: {clean_flagged}/{n_clean} ({100 * frac:.1f} %)")
    for d in ["clean"] + defects:
        if extra[d]:
            print(f"other flags on {d} clips: " + ", ".join(f"{f} {n}" for f, n in sorted(extra[d].items())))
    for d in defects:
        if misses[d]:
            print(f"missed {d}: " + " ".join(misses[d][:10]))
    return 1 if a.check and not ok else 0


if __name__ == "__main__":
    sys.exit(main())
