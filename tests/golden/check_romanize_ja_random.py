#!/usr/bin/python3
"""check_romanize_ja_random.py — a wide random check of Japanese romanization against the
reference (cutlet over MeCab + Debian's UniDic, lowercased as XTTS does): N random lines mixing
hiragana, katakana (full and half width), common kanji, everyday words and endings,
punctuation (Japanese and ASCII), Latin letters and digits (half and full width), rare kana
(iteration marks, small and Ainu kana, combining marks) and other scripts, through
xtts_text_prepare(line, "ja") (tests/golden/xtts_text_cat.c, linked with build/lib/libxtts.a).
A line the reference fails on must be rejected by ours. Prints the agreement.
Usage (repository root, after `make`): check_romanize_ja_random.py REF_DIR [SEED [N]]
(REF_DIR from make_ja_reference.sh)."""
import os
import random
import subprocess
import sys
import tempfile

d = sys.argv[1]
sys.path[:0] = [d + "/fugashi", d + "/mojimoji", d + "/jaconv", d + "/cutlet"]
import cutlet  # noqa: E402

seed = int(sys.argv[2]) if len(sys.argv) > 2 else 7
n = int(sys.argv[3]) if len(sys.argv) > 3 else 5000
rng = random.Random(seed)
exe = os.path.join(tempfile.mkdtemp(), "xtts_text_cat")
subprocess.run(["gcc", "-O2", "-D_GNU_SOURCE", "-I.", "tests/golden/xtts_text_cat.c", "build/lib/libxtts.a", "-lutf8proc", "-lmecab",
                "-lstdc++", "-lpthread", "-lm", "-fopenmp", "-o", exe], check=True)
katsu = cutlet.Cutlet(mecab_args="-r /etc/mecabrc -d /var/lib/mecab/dic/unidic")

hira = [chr(c) for c in range(0x3041, 0x3097)]
kata = [chr(c) for c in range(0x30A1, 0x30FB)] + ["ー"] * 5
kanji = list("日本語学校先生電車東京大阪京都時間今明昨友達映画見行来食飲読書話聞言思出入上下中外山川田花雨雪風空海"
             "人子女男年月火水木金土円何私彼方国会社事業長高安新古")
punct = list("。、！？「」『』（）《》【】・ー…〜～，：；\"'.,!?()[]/-") + ["　", " "]
latin = list("abcdefghijklmnopqrstuvwxyzABCDEFXYZ0123456789")
wide = list("ＡＢＣａｂｃ０１２３４５６７８９＄％＆")
half = list("ｱｲｳｶｷｸｻｼｽﾀﾁﾂﾊﾋﾌﾎﾟﾞｰｯｬｭｮﾝ")
rare = list("ヷヸヹヺㇰㇱㇲㇷ゚゙ゝゞヽヾ々〃ゕゖヵヶゎヮ") + ["\U0001B150", "\U0001B164", "\u3099", "\u309a"]
other = list("한국어привет€©®№①②ⅢΩé") + ["\U0001F600"]
words = ["です", "ます", "した", "ません", "でした", "から", "まで", "けど", "ので", "ながら", "ば", "て", "は", "が", "を",
         "に", "へ", "と", "も", "の", "食べる", "行った", "見ている", "読みました", "学校", "先生", "コンピューター",
         "ラーメン", "東京", "ホッピー", "カービィ", "ちょっと", "やっぱり", "きっと"]
pools = [(hira, 30), (kata, 20), (kanji, 20), (punct, 8), (latin, 8), (wide, 3), (half, 3), (rare, 3), (other, 2),
         (words, 15)]
total = sum(w for _, w in pools)


def pick():
    r = rng.uniform(0, total)
    for p, w in pools:
        if r < w:
            return rng.choice(p)
        r -= w
    return words[0]


def ref(s):
    try:
        return katsu.romaji(s).lower()
    except Exception:  # the reference fails on this line: ours must reject it
        return None


lines = ["".join(pick() for _ in range(rng.randint(1, 25))) for _ in range(n)]
out = subprocess.run([exe, "ja"], input="\n".join(lines) + "\n", capture_output=True, text=True,
                     check=True).stdout.split("\n")
same = fails = shown = 0
for s, o in zip(lines, out):
    r = ref(s)
    fails += r is None
    ok = o.startswith("ERROR: ") if r is None else r == o
    same += ok
    if not ok and shown < 20:
        shown += 1
        print(f"differs: {s!r}: reference {r!r}, ours {o!r}")
print(f"ja seed {seed}: {same} / {n} lines equal ({fails} the reference fails on, rejected by ours)")
sys.exit(0 if same == n else 1)
