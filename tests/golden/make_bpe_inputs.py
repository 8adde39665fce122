#!/usr/bin/python3
"""Writes the inputs of the BPE golden test (tests/test_bpe.c):

  bpe_xtts.json       a small XTTS-style tokenizer.json (Whitespace pre-tokenizer, added
                      tokens [STOP] [UNK] [SPACE] [START] and language tokens, no [hi]);
  bpe_bytelevel.json  a small GPT-2 style tokenizer.json (ByteLevel pre-tokenizer);
  bpe_repeat.json     an XTTS-style tokenizer.json whose merges are per-language lists
                      concatenated, as XTTS's own vocabularies are, so that many pairs are
                      listed more than once (Hugging Face keeps the rank of the LAST listing);
  bpe_lines.txt       the test lines (one per line; \\t \\n \\r and \\\\ escaped).

Both vocabularies are trained here by a plain BPE trainer on a built-in corpus, so the
files are reproducible without downloads. The expected ids come from Hugging Face's
tokenizers library (the Rust one, through its Node binding): see make_bpe_golden.js.
Run: /usr/bin/python3 tests/golden/make_bpe_inputs.py && (cd tests/golden && node make_bpe_golden.js)
"""
import collections
import json
import os
import re
import unicodedata

HERE = os.path.dirname(os.path.abspath(__file__))

CORPUS = """
the quick brown fox jumps over the lazy dog while the cat sleeps in the warm sun
printing in the only sense with which we are at present concerned differs from most if not from all the arts
she sells sea shells by the sea shore and the shells she sells are surely seashells
hello world this is a test of the tokenizer with some words that repeat and repeat again
el rápido zorro marrón salta sobre el perro perezoso mientras el gato duerme al sol
le renard brun rapide saute par dessus le chien paresseux pendant que le chat dort
der schnelle braune fuchs springt über den faulen hund während die katze schläft
la volpe marrone veloce salta sopra il cane pigro mentre il gatto dorme al sole
a raposa marrom rápida pula sobre o cão preguiçoso enquanto o gato dorme ao sol
szybki brązowy lis przeskakuje nad leniwym psem podczas gdy kot śpi na słońcu
hızlı kahverengi tilki tembel köpeğin üzerinden atlar kedi güneşte uyur
быстрая коричневая лиса прыгает через ленивую собаку пока кошка спит на солнце
de snelle bruine vos springt over de luie hond terwijl de kat in de zon slaapt
rychlá hnědá liška skáče přes líného psa zatímco kočka spí na slunci
الثعلب البني السريع يقفز فوق الكلب الكسول بينما القطة نائمة في الشمس
敏捷的棕色狐狸跳过了懒狗而猫在阳光下睡觉
a gyors barna róka átugrik a lusta kutya felett amíg a macska alszik a napon
빠른 갈색 여우가 게으른 개를 뛰어 넘는 동안 고양이는 햇볕에서 잔다
素早い茶色の狐が怠惰な犬を飛び越える間猫は日向で眠る
तेज़ भूरी लोमड़ी आलसी कुत्ते के ऊपर कूदती है जबकि बिल्ली धूप में सोती है
numbers one two three four five six seven eight nine ten hundred thousand million
tokenization tokenizer tokenizers tokenized token tokens international internationalization
""".strip().split("\n")

LANGS = ["en", "es", "fr", "de", "it", "pt", "pl", "tr", "ru", "nl", "cs", "ar", "zh-cn", "hu", "ko", "ja"]  # no [hi]


def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


def train(words, n_merges):
    """Plain BPE: words is a Counter of tuples of symbols. Returns merges in rank order."""
    words = dict(words)
    merges = []
    for _ in range(n_merges):
        pairs = collections.Counter()
        for w, c in words.items():
            for a, b in zip(w, w[1:]):
                pairs[(a, b)] += c
        if not pairs:
            break
        best = max(pairs.items(), key=lambda kv: (kv[1], [-ord(ch) for ch in kv[0][0] + kv[0][1]]))[0]
        if pairs[best] < 2:
            break
        merges.append(best)
        new = {}
        for w, c in words.items():
            out, i = [], 0
            while i < len(w):
                if i + 1 < len(w) and (w[i], w[i + 1]) == best:
                    out.append(w[i] + w[i + 1])
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            new[tuple(out)] = new.get(tuple(out), 0) + c
        words = new
    return merges


def xtts_vocab():
    added = ["[STOP]", "[UNK]", "[SPACE]", "[START]"] + ["[%s]" % l for l in LANGS]
    words = collections.Counter()
    for line in CORPUS:
        for w in re.findall(r"\w+|[^\w\s]+", line):
            words[tuple(w)] += 1
    alphabet = sorted({ch for w in words for ch in w} | set("0123456789.,!?'-_:;\"()"))
    vocab = {t: i for i, t in enumerate(added)}
    for ch in alphabet:
        vocab.setdefault(ch, len(vocab))
    merges = train(words, 400)
    for a, b in merges:
        vocab.setdefault(a + b, len(vocab))
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [
            {"id": vocab[t], "content": t, "single_word": False, "lstrip": False, "rstrip": False,
             "normalized": False, "special": True} for t in added
        ],
        "normalizer": None,
        "pre_tokenizer": {"type": "Whitespace"},
        "post_processor": None,
        "decoder": None,
        "model": {"type": "BPE", "dropout": None, "unk_token": "[UNK]", "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "vocab": vocab,
                  "merges": ["%s %s" % m for m in merges]},
    }


def repeat_vocab():
    """Merges trained separately on three groups of corpus lines, then concatenated."""
    base = xtts_vocab()
    added = [t["content"] for t in base["added_tokens"]]
    groups = [CORPUS[0:4] + CORPUS[20:22], CORPUS[4:12], CORPUS[12:20]]
    alphabet = sorted({ch for line in CORPUS for ch in line if not ch.isspace()} | set("0123456789.,!?'-_:;\"()"))
    vocab = {t: i for i, t in enumerate(added)}
    for ch in alphabet:
        vocab.setdefault(ch, len(vocab))
    merges = []
    for g in groups:
        words = collections.Counter()
        for line in g:
            for w in re.findall(r"\w+|[^\w\s]+", line):
                words[tuple(w)] += 1
        merges += train(words, 150)
    for a, b in merges:
        vocab.setdefault(a + b, len(vocab))
    base["model"]["vocab"] = vocab
    base["model"]["merges"] = ["%s %s" % m for m in merges]
    base["added_tokens"] = [dict(t, id=vocab[t["content"]]) for t in base["added_tokens"]]
    return base


GPT2_SPLIT = re.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?[^\W\d_]+| ?\d+| ?[^\s\w]+|\s+(?!\S)|\s+""")


def bytelevel_vocab():
    b2u = bytes_to_unicode()
    words = collections.Counter()
    for line in CORPUS:
        for piece in GPT2_SPLIT.findall(line):
            words[tuple(b2u[b] for b in piece.encode("utf-8"))] += 1
    vocab = {"<|endoftext|>": 0}
    for b in range(256):
        vocab.setdefault(b2u[b], len(vocab))
    merges = train(words, 500)
    for a, b in merges:
        vocab.setdefault(a + b, len(vocab))
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [{"id": 0, "content": "<|endoftext|>", "single_word": False, "lstrip": False,
                          "rstrip": False, "normalized": False, "special": True}],
        "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
        "post_processor": None,
        "decoder": None,
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
                  "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False, "vocab": vocab,
                  "merges": [[a, b] for a, b in merges]},
    }


def lines():
    out = []
    # corpus lines, raw and in XTTS form
    for l in CORPUS:
        out.append(l)
        out.append("[en]" + l.replace(" ", "[SPACE]"))
    hand = [
        "Hello, World!!! ... ?!?! ---", "Ünïcödé façade naïve café résumé", "e\u0301te\u0301 (decomposed accents)",
        "caf\u00e9 vs cafe\u0301", "日本語のテキストと中文文本", "한국어 텍스트 입니다", "Привет, мир!",
        "👨‍👩‍👧‍👦 family emoji", "👍🏽 thumbs", "🏳️‍🌈 flag", "a\u00a0b\u2009c\u3000d\u202fe", "tab\there",
        "line\u2028sep", "x\u200by zero width", "x\u200dy zwj", "x\u200cy zwnj", "snake_case_word __init__",
        "antidisestablishmentarianismantidisestablishmentarianism", "supercalifragilisticexpialidocious" * 3,
        "hello[SPACE]world", "ab[en]cd", "[EN] not a token", "[en][en][SPACE][SPACE]", "[STOP]x[START]",
        "[UNK]", "[SPAC", "[[en]]", "tokenizer[SPACE]tokenizers", "ⓐⓑⓒ circled", "Ⅻ roman ⅻ", "x² y³ ½",
        "١٢٣ ٤٥٦ arabic digits", "१२३ devanagari digits", "٣.١٤", "$100,000.00", "50% off!!!", "C++ & C# @ 3:30pm",
        "email@example.com https://example.org/path?q=1", "«guillemets» „quotes“ ‘single’", "— em – en - hyphen",
        "…ellipsis…", "¿Qué? ¡Sí!", "l'homme d'état", "it's they're we've I'm you'll he'd", "ÀÉÎÕÜ ÇÑ ß ẞ",
        "İstanbul ıiIİ", "Ελληνικά κείμενο", "עברית טקסט", "ภาษาไทย", "ꦗꦮ", "\U0001d400\U0001d401 math bold",
        "   leading and trailing   ", "", " ", "a", "__", "_a_", "1_000", "a1b2c3", "ⅰⅱⅲ", "ｆｕｌｌｗｉｄｔｈ",
        "ﬁ ligature", "Å (A+ring) vs Å (angstrom)", "à la carte", "sh\u0332e underlined", "\u0301 leading mark",
        "🇫🇷🇩🇪 flags", "🧑🏾‍💻 coder", "©®™ symbols", "→←↑↓ arrows", "∑∫√∞ math", "₿ € £ ¥ ₹ currency",
    ]
    out += hand
    # combinations: words from the corpus joined by odd separators
    seps = [" ", "  ", "\u00a0", "-", "_", ".", ",", "!?", "[SPACE]", "\u3000", "\t", "…", "—", "🙂"]
    words = " ".join(CORPUS).split()
    i = 0
    while len(out) < 260:
        a, b, c = words[i % len(words)], words[(i * 7 + 3) % len(words)], words[(i * 13 + 5) % len(words)]
        s = seps[i % len(seps)]
        form = i % 4
        if form == 0:
            out.append(a + s + b + s + c)
        elif form == 1:
            out.append(a.upper() + s + unicodedata.normalize("NFD", b) + s + c.capitalize())
        elif form == 2:
            out.append("[%s]" % LANGS[i % len(LANGS)] + a + "[SPACE]" + b)
        else:
            out.append(a + b + c + str(i * 37))
        i += 1
    return out


def escape(s):
    return s.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


def main():
    with open(os.path.join(HERE, "bpe_xtts.json"), "w", encoding="utf-8") as f:
        json.dump(xtts_vocab(), f, ensure_ascii=False, indent=1)
    with open(os.path.join(HERE, "bpe_bytelevel.json"), "w", encoding="utf-8") as f:
        json.dump(bytelevel_vocab(), f, ensure_ascii=False, indent=1)
    with open(os.path.join(HERE, "bpe_repeat.json"), "w", encoding="utf-8") as f:
        json.dump(repeat_vocab(), f, ensure_ascii=False, indent=1)
    with open(os.path.join(HERE, "bpe_lines.txt"), "w", encoding="utf-8") as f:
        for l in lines():
            f.write(escape(l) + "\n")


if __name__ == "__main__":
    main()
