#!/usr/bin/python3
"""make_romanize_ja_golden.py — writes what XTTS's tokenizer makes of Japanese text before BPE
(Coqui TTS TTS/tts/layers/xtts/tokenizer.py japanese_cleaners: cutlet.Cutlet().romaji(text),
then lowercase), computed by cutlet itself over MeCab with Debian's UniDic (unidic-mecab).
Usage: make_romanize_ja_golden.py REF_DIR golden|heldout > romanize_ja_SUFFIX.tsv
(REF_DIR from make_ja_reference.sh; "golden" reads romanize_ja_in.txt: cutlet's own test
inputs and sentences of everyday Japanese; "heldout" reads romanize_ja_heldout_in.txt,
written after the implementation). Output: input TAB expected, one line each."""
import os
import sys

d = sys.argv[1]
sys.path[:0] = [d + "/fugashi", d + "/mojimoji", d + "/jaconv", d + "/cutlet"]
import cutlet  # noqa: E402

here = os.path.dirname(os.path.abspath(__file__))
name = "romanize_ja_in.txt" if sys.argv[2] == "golden" else "romanize_ja_heldout_in.txt"
katsu = cutlet.Cutlet(mecab_args="-r /etc/mecabrc -d /var/lib/mecab/dic/unidic")
with open(os.path.join(here, name), encoding="utf-8") as f:
    for line in f:
        line = line.rstrip("\n")
        if line:
            print(f"{line}\t{katsu.romaji(line).lower()}")
