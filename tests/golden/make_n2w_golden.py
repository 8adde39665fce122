#!/usr/bin/python3
"""Writes tests/golden/n2w_golden.tsv: the words of the Python library num2words 0.5.12 for the
14 languages whose numbers XTTS's text preparation spells out, over a fixed set of inputs.

The reference is the library itself, run from its own source tree:
    python3 tests/golden/make_n2w_golden.py /path/to/num2words-0.5.12 > tests/golden/n2w_golden.tsv
where the path is a checkout of tag v0.5.12 of github.com/savoirfairelinux/num2words, e.g.
    git --git-dir=$MIRROR archive v0.5.12 | tar x -C /tmp/n2w
(the script only needs the num2words/ package; docopt is used by its command line alone).

One line per case:  lang <TAB> kind <TAB> input <TAB> text
  kind: cardinal (input: a Python int), ordinal (int, ordinal=True), float (input: repr of a
  Python float, num2words(float)), currency_EUR / currency_USD / currency_GBP (repr of a float,
  to="currency"); text is "!raise" when num2words raises for that case.
Every call is made on freshly built converters: the Arabic converter keeps state between calls
(an ordinal changes the gender of later cardinals), and the table records the state of a new
process.

With "--wide SEED [LANG...]" after the path it writes instead many random cases (about 13,000
a language, not committed) for tests/golden/check_n2w_wide.sh.
"""
import random
import sys

sys.path.insert(0, sys.argv[1] if len(sys.argv) > 1 else "/tmp/n2w")
import num2words as N  # noqa: E402

LANGS = ["en", "es", "fr", "de", "it", "pt", "pl", "tr", "ru", "nl", "cs", "ar", "hu", "ko"]


def fresh(code):
    conv = N.CONVERTER_CLASSES[code]
    N.CONVERTER_CLASSES[code] = type(conv)()


def call(lang, kind, value):
    code = "cz" if lang == "cs" else lang
    fresh(code)
    try:
        if kind == "cardinal":
            out = N.num2words(value, lang=code)
        elif kind == "ordinal":
            out = N.num2words(value, ordinal=True, lang=code)
        elif kind == "float":
            out = N.num2words(value, lang=code)
        else:
            out = N.num2words(value, to="currency", currency=kind[-3:], lang=code)
    except Exception:  # any exception: the caller falls back
        return "!raise"
    if not isinstance(out, str):
        return "!raise"
    assert "\t" not in out and "\n" not in out
    return out


def cardinals():
    s = set(range(0, 101))
    s |= set(range(101, 1000, 20)) | {110, 111, 112, 115, 119, 120, 121, 122, 200, 201, 202, 211, 212,
                                     222, 300, 400, 500, 600, 700, 800, 900, 999}
    s |= {1000, 1001, 1002, 1010, 1011, 1020, 1021, 1100, 1101, 1111, 1200, 1234, 1999, 2000,
          2001, 2002, 2010, 2020, 2021, 2100, 2222, 3000, 4000, 5000, 9999, 10000, 10001, 11000,
          12000, 12345, 20000, 21000, 22000, 25000, 99999, 100000, 100001, 101000, 110000,
          111111, 123456, 200000, 201000, 500000, 999999, 1000000, 1000001, 1001000, 1234567,
          2000000, 2000001, 2500000, 5000000, 9999999, 10000000}
    for k in range(7, 19):
        p = 10 ** k
        s |= {p, p - 1, p + 1, 2 * p, 1234567 * 10 ** (k - 6) + 89}
    s |= {2 ** 53, 2 ** 53 + 1, 2 ** 63 - 1, -2 ** 63}
    s |= {-1, -2, -5, -11, -21, -100, -101, -1000, -1234, -1000000}
    return sorted(s)


# Korean counts in groups of four digits (만 10^4, 억 10^8, 조 10^12, 경 10^16): more cases
# around those groups, and ordinals whose last word ends in each kind of group.
KO_CARDINALS = {110000, 1100000, 10010000, 12345678, 20000000, 100010000, 100000001, 110000000,
                1000000000000, 1000100010001, 10000000000000000, 12345678901234567}
KO_ORDINALS = {1011, 1110, 1111, 1200, 2011, 10001, 10010, 10011, 10020, 10100, 10110, 12300,
               100000001, 1210000, 21000000, 100000000}


def ordinals():
    s = set(range(0, 41)) | set(range(41, 200, 6)) | {100, 101, 102, 110, 111, 120, 121, 200, 201,
                                                      211, 300, 999}
    s |= {50, 60, 70, 80, 90, 150, 500, 5000, 50000, 60000, 90000, 3000000, 5000000000}
    s |= {1000, 1001, 1002, 1010, 1100, 1234, 2000, 2001, 2020, 10000, 12345, 20000, 21000,
          100000, 101000, 123456, 200000, 999999, 1000000}
    return sorted(s)


FLOATS = ["0.0", "0.5", "0.05", "0.1", "0.25", "0.001", "1.0", "1.5", "1.25", "2.0", "2.5", "3.14",
          "3.333", "5.55", "7.07", "10.0", "10.5", "12.5", "19.99", "21.1", "99.99", "100.01",
          "123.456", "1000.5", "1234.56", "12345.67", "1000000.0", "2000000.5", "10000000.0", "123456789.0", "1.005",
          "2.675", "0.3", "1e16", "1.5e-05"]

MONEY = ["0.0", "0.01", "0.5", "1.0", "1.01", "1.5", "2.0", "2.02", "5.0", "12.0", "12.34",
         "21.0", "21.21", "22.5", "99.99", "100.0", "100.05", "1.005", "2.675", "0.015",
         "1000.0", "1234.56", "1000000.0", "1000000.01"]


def main():
    out = sys.stdout
    for lang in LANGS:
        for n in sorted(set(cardinals()) | (KO_CARDINALS if lang == "ko" else set())):
            out.write("%s\tcardinal\t%d\t%s\n" % (lang, n, call(lang, "cardinal", n)))
        for n in sorted(set(ordinals()) | (KO_ORDINALS if lang == "ko" else set())):
            out.write("%s\tordinal\t%d\t%s\n" % (lang, n, call(lang, "ordinal", n)))
        for f in FLOATS:
            x = float(f)
            out.write("%s\tfloat\t%r\t%s\n" % (lang, x, call(lang, "float", x)))
        for cur in ("EUR", "USD", "GBP"):
            for f in MONEY:
                x = float(f)
                kind = "currency_" + cur
                out.write("%s\t%s\t%r\t%s\n" % (lang, kind, x, call(lang, kind, x)))


def wide(seed, langs):
    rnd = random.Random(seed)
    out = sys.stdout
    for lang in langs:
        cards = list(range(0, 3000))
        cards += [rnd.randrange(0, 10 ** rnd.randint(4, 18)) for _ in range(3000)]
        cards += [-rnd.randrange(1, 10 ** rnd.randint(1, 12)) for _ in range(300)]
        for n in cards:
            out.write("%s\tcardinal\t%d\t%s\n" % (lang, n, call(lang, "cardinal", n)))
        ords = list(range(0, 2000)) + [rnd.randrange(0, 10 ** rnd.randint(4, 13)) for _ in range(2000)]
        for n in ords:
            out.write("%s\tordinal\t%d\t%s\n" % (lang, n, call(lang, "ordinal", n)))
        floats = [round(rnd.uniform(0, 10 ** rnd.randint(0, 7)), rnd.randint(0, 4)) for _ in range(1500)]
        for x in floats:
            out.write("%s\tfloat\t%r\t%s\n" % (lang, x, call(lang, "float", x)))
        for x in floats[:600]:
            for cur in ("EUR", "USD", "GBP"):
                kind = "currency_" + cur
                out.write("%s\t%s\t%r\t%s\n" % (lang, kind, x, call(lang, kind, x)))


if __name__ == "__main__":
    if len(sys.argv) > 3 and sys.argv[2] == "--wide":
        wide(int(sys.argv[3]), sys.argv[4:] or LANGS)
    else:
        main()
