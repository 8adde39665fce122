#!/usr/bin/python3
"""Writes an LJSpeech-sized metadata file for the tokenizer benchmark: N lines (default
13,100) of 20-180 characters, English prose with numbers, money, times and abbreviations,
in LJSpeech layout (id|text|text). Deterministic (fixed seed).
usage: bench_tokenize_gen.py OUT.csv [N]"""
import random
import sys

WORDS = ("the of and to in a was he that his it with as for had which by on be at not from "
         "this her were have all they but an one been or are their would there so who more "
         "prisoner court evidence police house letter government years time great people "
         "committee president witness morning evening street station money bank printing "
         "quick brown fox jumps over lazy dog while cat sleeps warm sun printed book art "
         "examination report commission officer assassination motorcade building window").split()
EXTRAS = ["Mr. Smith", "Dr. Jones", "Mrs. Brown", "$%d", "$%d.%02d", "%d%%", "%d:%02d", "in %d", "the %dth",
          "%d,%03d", "No. %d", "St. Paul"]


def sentence(rng):
    target = rng.randint(20, 180)
    out = []
    while True:
        if rng.random() < 0.12:
            e = rng.choice(EXTRAS)
            n = e.count("%")
            if n == 0:
                w = e
            elif "%%" in e:
                w = e % rng.randint(1, 99)
            elif e == "in %d":
                w = e % rng.randint(1800, 2020)
            elif e == "%d:%02d":
                w = e % (rng.randint(1, 12), rng.randint(0, 59))
            elif n == 2:
                w = e % (rng.randint(1, 999), rng.randint(0, 99))
            else:
                w = e % rng.randint(1, 999)
        else:
            w = rng.choice(WORDS)
        cand = (" ".join(out + [w]))
        if len(cand) + 1 > target and out:
            break
        out.append(w)
    s = " ".join(out)
    s = s[0].upper() + s[1:] + "."
    return s[:180] if len(s) > 180 else s


def main():
    path = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 13100
    rng = random.Random(1234)
    with open(path, "w", encoding="utf-8") as f:
        for i in range(n):
            s = sentence(rng)
            f.write("LJ%03d-%04d|%s|%s\n" % (i // 1000 + 1, i % 1000 + 1, s, s))


if __name__ == "__main__":
    main()
