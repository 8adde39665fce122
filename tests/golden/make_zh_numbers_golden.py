#!/usr/bin/python3
"""make_zh_numbers_golden.py — writes zh_numbers_golden.tsv: what Coqui XTTS does to Chinese
text with numbers, computed by Coqui's own code, run unmodified from its fetched source:

  column 2: TextNorm()(text) of TTS/tts/layers/xtts/zh_num2words.py (coqui-ai/TTS v0.22.0),
            the call expand_numbers_multilingual makes for zh;
  column 3: VoiceBpeTokenizer().preprocess_text(text, "zh") of TTS/tts/layers/xtts/tokenizer.py
            (v0.22.0): multilingual_cleaners (lowercase, that TextNorm, abbreviations,
            symbols, whitespace) then chinese_transliterate (pypinyin, mozillazg/python-pinyin
            from its source, as tests/golden/make_romanize_golden.py runs it).

zh_num2words.py imports only the standard library. tokenizer.py's other imports (torch,
tokenizers, num2words, hangul_romanize, spacy, cutlet) are replaced by empty stand-ins so that
the import succeeds; none of them is used for zh.

Usage (Debian's python3; TTS_GIT defaults to the fetched mirror):
  tests/golden/make_zh_numbers_golden.py PYPINYIN_SRC > tests/golden/zh_numbers_golden.tsv
PYPINYIN_SRC: a directory holding the pypinyin package, e.g.
  git --git-dir=/work/.mirror/mozillazg+python-pinyin/repo archive 8595294b1a97 pypinyin | tar -x -C DIR

The inputs are written here: hand-picked cases for every pattern the normalizer has (plain
numbers, decimals, negatives, fractions, percentages, dates, times, money, mobile and fixed
telephone numbers, ranges, numbers before measure words, long digit strings, letters around
2, Unicode digits, its first-occurrence quirk) and generated ones (seed 20260424).
Output: input TAB textnorm TAB preprocess_text, one line each, after one '#' header line.
"""
import importlib.util
import io
import os
import random
import subprocess
import sys
import tarfile
import tempfile
import types

TTS_GIT = os.environ.get("TTS_GIT", "/work/.mirror/coqui-ai+TTS/repo")
TTS_REF = "v0.22.0"


def load_reference(pypinyin_src):
    """(TextNorm class, preprocess_text(text)) from Coqui's own files."""
    tmp = tempfile.mkdtemp(prefix="zh_ref_")
    data = subprocess.run(["git", "--git-dir", TTS_GIT, "archive", TTS_REF, "TTS/tts/layers/xtts"], check=True,
                          stdout=subprocess.PIPE).stdout
    tarfile.open(fileobj=io.BytesIO(data)).extractall(tmp)
    xtts = os.path.join(tmp, "TTS/tts/layers/xtts")

    def load(name, path):
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
        return mod

    zh = load("TTS.tts.layers.xtts.zh_num2words", os.path.join(xtts, "zh_num2words.py"))
    if not pypinyin_src:
        return zh.TextNorm, None
    sys.path.insert(0, pypinyin_src)
    import pypinyin  # noqa: F401
    assert pypinyin.__file__.startswith(pypinyin_src), pypinyin.__file__

    class Unused:
        def __init__(self, *a, **k):
            raise RuntimeError("stand-in only for the import")

    def stub(name, **attrs):
        m = types.ModuleType(name)
        for k, v in attrs.items():
            setattr(m, k, v)
        sys.modules.setdefault(name, m)

    def no_num2words(*a, **k):
        raise RuntimeError("num2words is not used for zh")

    stub("torch", Tensor=Unused)
    stub("tokenizers", Tokenizer=Unused)
    stub("num2words", num2words=no_num2words)
    stub("hangul_romanize", Transliter=Unused)
    stub("hangul_romanize.rule", academic=None)
    stub("spacy")
    stub("spacy.lang")
    for mod, cls in [("ar", "Arabic"), ("en", "English"), ("es", "Spanish"), ("ja", "Japanese"), ("zh", "Chinese")]:
        stub("spacy.lang." + mod, **{cls: Unused})
    for pkg in ["TTS", "TTS.tts", "TTS.tts.layers", "TTS.tts.layers.xtts"]:
        stub(pkg)
    tok = load("xtts_tokenizer", os.path.join(xtts, "tokenizer.py"))
    assert tok.zh_num2words is zh.TextNorm
    bpe = tok.VoiceBpeTokenizer()
    return zh.TextNorm, lambda text: bpe.preprocess_text(text, "zh")


# ---- inputs ----------------------------------------------------------------------------
HAND = [
    # Coqui's own test cases (tokenizer.py test_expand_numbers_multilingual / symbols)
    "在12.5秒内", "有50名士兵", "我的电量为 14%", "那将是$20先生", "那将是20€先生",
    # plain numbers
    "0", "1", "2", "7", "10", "11", "12", "19", "20", "22", "99", "100", "101", "110", "120", "200", "202",
    "222", "999", "第0个", "编号007", "00", "000", "05", "他今年2岁", "第2名", "2人", "第22天",
    # decimals
    "0.5", "3.14", "12.5", "00.5", "10.05", "2.0", "200.25", "1.2.3", "版本1.5.3万", "约0.001",
    # negatives and signs
    "-3", "零下-3.5度", "+5", "温度是-12摄氏度", "负5和+8",
    # fractions
    "1/2", "3/4", "12/100", "2/3的人", "20/200", "1/2/3", "0/5", "2/0", "22/202",
    # percentages
    "14%", "12.5%", "200%", "0.5%", "100％", "增长了2.5％", "50%的人", "1.2.5%",
    # dates
    "2024年5月3日", "1999年", "08年", "5月3日", "12月25号", "2020年13月", "2015月", "99年的事",
    "1984年10月1日国庆", "2000年2月29日", "3月", "12月", "07年7月7日", "2024年", "1800年", "20年", "5月32日",
    "2024年5月", "0年1月1日", "1月1号", "2022年02月02日",
    # times (no pattern of their own)
    "10:30", "下午3点45分", "3时15分", "23:59:59", "早上8点",
    # money
    "3元", "5块5", "3元5角", "12.5万元", "100多元", "5千元", "2亿", "20块钱", "3毛", "1千万", "2百万元",
    "花了15元5角", "0.5元", "2角", "8分钱", "30余万", "5几千", "200元", "2万块", "价格是1.5亿元",
    # mobile and fixed telephone numbers
    "13812345678", "电话13812345678", "+86 13812345678", "+8613912345678", "8615012345678",
    "86 17712345678", "手机:19912345678。", "15412345678", "12345678901", "138123456789",
    "010-12345678", "021-1234567", "0755-1234567", "075512345678", "1234567", "12345678", "01012345678",
    "拨打010-62345678或13812345678",
    # ranges
    "3-5个", "10~20", "2020-2021年", "5到10人", "1-2", "100-200元",
    # numbers before measure words
    "3个", "5本书", "2.5米", "3千克", "10多岁", "2两", "20余人", "3几个", "5毫克", "7千米", "8分米",
    "9微米", "4厘米", "6微克", "2斤", "22条", "200块", "2000个", "2.0个", "1.5.6个",
    # digit strings
    "1234", "12345678901234567890", "1234567890123456789012345678901234567", "0000", "1000年前",
    "第13号有3个人", "123456789012345678901234567890123456789个",
    # letters around 2
    "P2P", "B2C平台", "O2O", "2B", "A2", "p2p2p", "abc2def", "h2o水",
    # Unicode digits
    "\u0663\u4e2a", "\uff11\uff12\uff13", "\uff12\uff10\uff12\uff14\u5e74", "\u0967\u0968", "\U0001d7d9\U0001d7da",
    # framing and punctuation
    "^abc$", "$5", "5$", "^^12", "你好，世界。", "他说：“好的！”", "(1)", "[2]", "a.b", "…", "——",
    "《三体》", "1,000", "1，000", "3.5.", "#1", "@2", "&3", "£5", "5°",
    # mixed text
    "我在2019年3月15日买了3本书，花了45.5元", "第1章 共12节", "小明考了98.5分", "电话：010-12345678，手机：13812345678",
    "今年是2024年", "COVID-19疫情", "iPhone 15 Pro", "GPT-4模型", "他跑了100米用了9.58秒", "1/3的学生考了90分以上",
    "这个城市有2000万人口", "人口增长了12.3%", "Hello 世界 123", "ABC 的 2 个",
]

ZH = "我你他她的是在有个人这中大为上们到说国和地也子时道出而要于就下得可你年生自会那后能对着事其里所去行过家十用发天如然作方成者多日都三小军二无同么经法当起与好看学进种将还分此心前面又定见只主没公从"
CARRY = ["{}", "有{}", "{}了", "共{}", "他说{}。", "第{}", "约{}左右"]


def generated(seed=20260424, per_class=18):
    r = random.Random(seed)

    def num(maxd=6):
        d = r.randint(1, maxd)
        s = str(r.randint(1, 9)) + "".join(r.choice("0123456789") for _ in range(d - 1))
        return s if r.random() < 0.85 else "0" + s

    def dec():
        return num(4) + "." + "".join(r.choice("0123456789") for _ in range(r.randint(1, 3)))

    def zh(k):
        return "".join(r.choice(ZH) for _ in range(k))

    classes = [
        lambda: num(3),
        lambda: num(12),
        dec,
        lambda: "-" + r.choice([num(3), dec()]),
        lambda: num(3) + "/" + num(3),
        lambda: r.choice([num(3), dec()]) + r.choice("%％"),
        lambda: r.choice(["", str(r.randint(1900, 2099)) + "年", "0" + str(r.randint(0, 9)) + "年"]) +
        str(r.randint(1, 12)) + "月" + r.choice(["", str(r.randint(1, 31)) + r.choice("日号")]),
        lambda: "%d:%02d" % (r.randint(0, 23), r.randint(0, 59)),
        lambda: r.choice([num(4), dec()]) + r.choice(["", "多", "余"]) +
        r.choice(["元", "块", "万元", "千万", "百万", "亿", "角", "毛", "分", "块" + str(r.randint(0, 9))]),
        lambda: r.choice(["", "+86 ", "86"]) + "1" + r.choice(["38", "59", "77", "98", "50", "86"]) +
        "".join(r.choice("0123456789") for _ in range(8)),
        lambda: r.choice(["010-", "021", "0755-", ""]) + str(r.randint(1, 9)) +
        "".join(r.choice("0123456789") for _ in range(r.choice([6, 7]))),
        lambda: num(3) + r.choice(["-", "~", "到"]) + num(3) + r.choice(["", "个", "元", "年"]),
        lambda: r.choice([num(4), dec()]) + r.choice(["", "多", "余", "几"]) +
        r.choice(["个", "本", "米", "千克", "毫克", "岁", "天", "年", "页", "次", "张"]),
        lambda: "".join(r.choice("0123456789") for _ in range(r.randint(4, 40))),
        lambda: r.choice(["p", "B", "abc", "x"]) + "2" + r.choice(["p", "C", "d", "2x"]),
    ]
    out = []
    for mk in classes:
        for _ in range(per_class):
            s = r.choice(CARRY).format(mk())
            if r.random() < 0.5:
                s = zh(r.randint(1, 3)) + s + zh(r.randint(0, 2))
            out.append(s)
    # two or three numbers in one sentence
    for _ in range(40):
        parts = [r.choice(classes)() for _ in range(r.randint(2, 3))]
        out.append(zh(1) + zh(2).join(parts) + zh(1))
    return out


def main():
    textnorm, prepare = load_reference(sys.argv[1] if len(sys.argv) > 1 else None)
    norm = textnorm()
    seen = set()
    sys.stdout.write("# input\tCoqui TTS v0.22.0 zh_num2words TextNorm()\tpreprocess_text(text, 'zh') with pypinyin; "
                     "regenerate: tests/golden/make_zh_numbers_golden.py PYPINYIN_SRC\n")
    for s in HAND + generated():
        if s in seen:
            continue
        seen.add(s)
        a = norm(s)
        b = prepare(s) if prepare else ""
        for x in (s, a, b):
            assert "\t" not in x and "\n" not in x, repr(x)
        sys.stdout.write("%s\t%s\t%s\n" % (s, a, b))


if __name__ == "__main__":
    main()
