#!/usr/bin/python3
"""check_romanize_random.py — differential check of prep/text/romanize/romanize.c against the references
on random text (nothing is written to the repository): 5000 random zh-cn lines built from
pypinyin's phrases, parts of phrases, single characters and punctuation, and 5000 random ko
lines of syllables, jamo, spaces and letters; prints the agreement.
Usage (from the repository root, after `make all`):
  tests/golden/check_romanize_random.py HANGUL_ROMANIZE_SRC PYPINYIN_SRC [SEED]
(the SRC directories as for make_romanize_golden.py)."""
import os
import random
import subprocess
import sys
import tempfile

sys.path.insert(0, sys.argv[1])
sys.path.insert(0, sys.argv[2])
import pypinyin  # noqa: E402
from pypinyin.constants import PHRASES_DICT, PINYIN_DICT  # noqa: E402
from hangul_romanize import Transliter  # noqa: E402
from hangul_romanize.rule import academic  # noqa: E402

random.seed(int(sys.argv[3]) if len(sys.argv) > 3 else 7)
exe = os.path.join(tempfile.mkdtemp(), "romanize_cat")
subprocess.run(["gcc", "-O2", "-I.", "tests/golden/romanize_cat.c", "build/lib/libxtts.a", "-lutf8proc", "-lmecab",
                "-lstdc++", "-lpthread",
                "-o", exe], check=True)


def run(lang, lines):
    out = subprocess.run([exe, lang], input="\n".join(lines) + "\n", capture_output=True, text=True,
                         check=True).stdout
    return out.split("\n")[:len(lines)]


def zh(t):
    return "".join(p[0] for p in pypinyin.pinyin(t, style=pypinyin.Style.TONE3, heteronym=False,
                                                  neutral_tone_with_five=True))


keys, cps = list(PHRASES_DICT), list(PINYIN_DICT)
zl = []
for _ in range(5000):
    parts = []
    for _ in range(random.randint(1, 6)):
        r = random.random()
        if r < 0.6:
            parts.append(random.choice(keys))
        elif r < 0.8:
            parts.append(chr(random.choice(cps)))
        elif r < 0.9:
            parts.append(random.choice(keys)[1:])
        else:
            parts.append(random.choice([" ", "，", "a1", "。", "〇", "\u3400", "\U00020000"]))
    zl.append("".join(parts))
kl = ["".join(chr(random.choice([random.randint(0xAC00, 0xD7A3), random.randint(0x3131, 0x318E), 0x20, 0x41, 0x2D]))
              for _ in range(random.randint(1, 12))) for _ in range(5000)]
tr = Transliter(academic)
for lang, lines, ref in (("zh-cn", zl, zh), ("ko", kl, tr.translit)):
    got = run(lang, lines)
    bad = [(x, g, ref(x)) for x, g in zip(lines, got) if g != ref(x)]
    print("%s: %d/%d agree" % (lang, len(lines) - len(bad), len(lines)))
    for b in bad[:5]:
        print("  %r: got %r, want %r" % b)
