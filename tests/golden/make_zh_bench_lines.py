#!/usr/bin/python3
"""make_zh_bench_lines.py — writes an LJSpeech-style metadata file of 13,100 Chinese lines for
timing the zh path of --normalize xtts: each line three pieces drawn (seed 5) from the inputs
of zh_numbers_golden.tsv (numbers of every form) and romanize_zh_in.txt /
romanize_zh_heldout_in.txt (prose), so nearly every line has numbers.
Usage: tests/golden/make_zh_bench_lines.py > /tmp/zh_bench.csv
       build/bin/xtts-tokenize --format ljspeech --lang zh-cn --normalize xtts --max-tokens 100000 \\
           -j 1 --quiet /tmp/zh_bench.csv > /dev/null
"""
import os
import random
import sys

here = os.path.dirname(os.path.abspath(__file__))
r = random.Random(5)
with open(os.path.join(here, "zh_numbers_golden.tsv"), encoding="utf-8") as f:
    nums = [line.split("\t")[0] for line in f if not line.startswith("# input\t")]
prose = []
for name in ("romanize_zh_in.txt", "romanize_zh_heldout_in.txt"):
    with open(os.path.join(here, name), encoding="utf-8") as f:
        prose += [line.strip() for line in f if line.strip()]
for i in range(13100):
    text = r.choice(prose) + r.choice(nums) + (r.choice(prose) if r.random() < 0.5 else r.choice(nums))
    sys.stdout.write("zh%05d|%s\n" % (i, text.replace("|", " ")))
