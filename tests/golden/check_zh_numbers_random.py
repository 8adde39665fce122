#!/usr/bin/python3
"""check_zh_numbers_random.py — differential check of prep/text/normalize/zh_numbers.c (and of the whole
zh path of --normalize xtts) against Coqui's own code on random text; nothing is written to the
repository. Prints the agreement and the first differences.

Inputs: half built from the generators of make_zh_numbers_golden.py (numbers of every form
in Chinese carriers, with other seeds), half "token soup": random strings of digits, digit
runs, Unicode digits, '.', '/', '%', '％', '-', '+', ':', spaces, '^', '$', 年 月 日 号, money
units, 多 余 几, measure words, 克 米 微 毫 厘, ASCII letters, 二, punctuation and Chinese
characters, which reach the patterns' corner cases (and the first-occurrence quirk) far more
often than prose does.

Usage (from the repository root, after `make all`):
  tests/golden/check_zh_numbers_random.py [PYPINYIN_SRC] [SEED] [N]
(PYPINYIN_SRC as for make_zh_numbers_golden.py; without it only TextNorm is compared;
SEED default 1, N default 5000 of each kind).
"""
import os
import random
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
import make_zh_numbers_golden as g  # noqa: E402

pyp = sys.argv[1] if len(sys.argv) > 1 and sys.argv[1] != "-" else None
seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1
N = int(sys.argv[3]) if len(sys.argv) > 3 else 5000
textnorm, prepare = g.load_reference(pyp)
norm = textnorm()

exe = os.path.join(tempfile.mkdtemp(), "zh_numbers_cat")
libs = subprocess.run(["pkg-config", "--libs", "libutf8proc", "espeak-ng", "jansson"], capture_output=True,
                      text=True, check=True).stdout.split()
subprocess.run(["gcc", "-O2", "-I.", "-D_GNU_SOURCE", os.path.join(here, "zh_numbers_cat.c"), "build/lib/libxtts.a"] +
               libs + ["-lcld2", "-lmecab", "-lstdc++", "-fopenmp", "-lpthread", "-lm", "-o", exe], check=True)

r = random.Random(seed)
MEASURE = "个本米岁天年月日页次张条只件名位元块分秒时里斤两"
SOUP = (["%d" % d for d in range(10)] * 6 +
        [".", ".", "/", "%", "％", "-", "+", ":", " ", " ", "^", "$", "年", "月", "日", "号",
         "元", "块", "角", "毛", "分", "亿", "千", "万", "百", "多", "余", "几", "克", "米", "微", "毫", "厘",
         "二", "二", "，", "。", "！", "“", "”", "（", "）", "、", "的", "是", "有", "第", "中", "人",
         "a", "b", "p", "P", "x", "B", "C", "86", "138", "159", "010-", "021", "0755", "+86 ",
         "\u0663", "\u0660", "\uff11", "\uff10", "\u0967", "\u096a", "\U0001d7d9"] +
        list(MEASURE))


def soup():
    parts = []
    for _ in range(r.randint(1, 14)):
        x = r.random()
        if x < 0.15:
            parts.append("".join(r.choice("0123456789") for _ in range(r.randint(1, r.choice([4, 9, 14, 40])))))
        else:
            parts.append(r.choice(SOUP))
    return "".join(parts)


lines = g.generated(seed=seed * 7919 + 1, per_class=N // 15 + 1)[:N] + [soup() for _ in range(N)]
lines = [x for x in lines if x and "\n" not in x]
if os.environ.get("ZH_DUMP"):  # the inputs, one a line, for a coverage run
    with open(os.environ["ZH_DUMP"], "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def run(mode):
    out = subprocess.run([exe, mode], input="\n".join(lines) + "\n", capture_output=True, text=True,
                         check=True).stdout
    return out.split("\n")[:len(lines)]


for mode, ref in (("textnorm", norm), ("xtts", prepare)):
    if ref is None:
        continue
    got = run(mode)
    bad = []
    for x, c in zip(lines, got):
        try:
            want = ref(x)
        except RecursionError:
            want = "!ERROR"
        if c != want and not (want == "!ERROR" and c.startswith("!ERROR")):
            bad.append((x, c, want))
    name = "TextNorm" if mode == "textnorm" else "preprocess_text(zh)"
    print("%s: %d/%d agree (seed %d)" % (name, len(lines) - len(bad), len(lines), seed))
    for x, c, w in bad[:10]:
        print("  in   %r\n  ours %r\n  want %r" % (x, c, w))
sys.exit(0)
