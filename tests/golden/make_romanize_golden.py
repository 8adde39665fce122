#!/usr/bin/python3
"""make_romanize_golden.py — writes romanize_golden.tsv: the romanization XTTS's tokenizer
(Coqui TTS TTS/tts/layers/xtts/tokenizer.py) gives each line of romanize_{ko,zh}_in.txt,
computed by the reference libraries themselves, run from their fetched sources:
  ko: hangul_romanize (youknowone/hangul-romanize) Transliter(academic).translit(text)
  zh: "".join(p[0] for p in pypinyin.pinyin(text, style=Style.TONE3, heteronym=False,
      neutral_tone_with_five=True))   (mozillazg/python-pinyin)
Usage: make_romanize_golden.py HANGUL_ROMANIZE_SRC PYPINYIN_SRC SUFFIX > romanize_SUFFIX.tsv
(each SRC a directory holding the package, e.g. from `git archive HEAD PKG | tar -x`;
SUFFIX: "golden" reads romanize_{ko,zh}_in.txt, "heldout" romanize_{ko,zh}_heldout_in.txt).
Output: lang TAB input TAB expected, one line each."""
import os
import sys

sys.path.insert(0, sys.argv[1])
sys.path.insert(0, sys.argv[2])
from hangul_romanize import Transliter  # noqa: E402
from hangul_romanize.rule import academic  # noqa: E402
import pypinyin  # noqa: E402

here = os.path.dirname(os.path.abspath(__file__))
suffix = sys.argv[3]
name = "_in.txt" if suffix == "golden" else "_heldout_in.txt"
ko = Transliter(academic)


def zh(t):
    return "".join(p[0] for p in pypinyin.pinyin(t, style=pypinyin.Style.TONE3, heteronym=False,
                                                  neutral_tone_with_five=True))


for lang, fn in (("ko", ko.translit), ("zh-cn", zh)):
    with open(os.path.join(here, "romanize_" + lang.split("-")[0] + name), encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            out = fn(line)
            assert "\t" not in line and "\t" not in out and "\n" not in out
            sys.stdout.write("%s\t%s\t%s\n" % (lang, line, out))
