#!/usr/bin/python3
"""langid_build_model.py - build prep/text/langid/langid_ngrams.bin, the character n-gram statistics
(1- to 5-grams) of XTTS's 17 languages used by prep/text/langid/langid.c.

The texts come from Debian packages fetched with `apt-get download` at run time (nothing
from them is committed): translated manual pages (manpages, manpages-XX) and the gettext
catalogues (.mo) of a few packages. Their licences are listed in docs/langid.md.

    /usr/bin/python3 scripts/dev/langid-build-model.py [--work DIR] [--out prep/text/langid/langid_ngrams.bin]

The text is reduced exactly as prep/text/langid/langid_model.c reduces it: NFC, lowercase, runs of
letters (Unicode categories L* and M*) are words, everything else separates words; each
word is padded with one space on both sides and its n-grams (n = 1..5 code points, the
lone space excluded) are counted. Per language and order the most frequent ones are kept
with cost = round(-ln(count / total of that order) * SCALE), saturated at 254; an n-gram a
language does not list costs that language its floor for the order (the kept minimum's
cost + FLOOR_GAP). Format: formats/langid-ngrams.md.
"""
import argparse
import gzip
import math
import os
import re
import struct
import subprocess
import sys
import tempfile
import unicodedata
from collections import Counter

LANGS = ["en", "es", "fr", "de", "it", "pt", "pl", "tr", "ru", "nl", "cs", "ar", "zh-cn", "hu", "ko", "ja", "hi"]
PACKAGES = ["manpages", "manpages-de", "manpages-fr", "manpages-es", "manpages-it", "manpages-pl", "manpages-pt-br",
            "manpages-ru", "manpages-nl", "manpages-cs", "manpages-hu", "manpages-tr", "manpages-ja", "manpages-zh",
            "libglib2.0-data", "libgtk-3-common", "apt", "debconf-i18n"]
# man page folders and gettext locales per language ("" = the untranslated English pages/msgids)
MAN_DIRS = {"en": [""], "es": ["es"], "fr": ["fr"], "de": ["de"], "it": ["it"], "pt": ["pt_BR", "pt"], "pl": ["pl"],
            "tr": ["tr"], "ru": ["ru"], "nl": ["nl"], "cs": ["cs"], "ar": [], "zh-cn": ["zh_CN"], "hu": ["hu"],
            "ko": [], "ja": ["ja"], "hi": []}
LOCALES = {"en": [], "es": ["es"], "fr": ["fr"], "de": ["de"], "it": ["it"], "pt": ["pt", "pt_BR"], "pl": ["pl"],
           "tr": ["tr"], "ru": ["ru"], "nl": ["nl"], "cs": ["cs"], "ar": ["ar"], "zh-cn": ["zh_CN"], "hu": ["hu"],
           "ko": ["ko"], "ja": ["ja"], "hi": ["hi"]}
# Latin-script languages need the fine statistics; the others are decided by their script
KEEP_LATIN = {1: 400, 2: 1500, 3: 3000, 4: 3000, 5: 3000}
KEEP_OTHER = {1: 300, 2: 500, 3: 300, 4: 100, 5: 100}
LATIN = {"en", "es", "fr", "de", "it", "pt", "pl", "tr", "nl", "cs", "hu"}
MAX_CHARS = 4_000_000  # text per language
SCALE = 10.0
FLOOR_GAP = 10

ESC = re.compile(r"\\(f\[[^\]]*\]|f\(..|f.|\(..|\[[^\]]*\]|\*\(..|\*\[[^\]]*\]|\*.|s[-+]?\d|[-e&|^%0 ~c:dul]|.)")


def man_text(data):
    out = []
    for line in data.splitlines():
        if not line or line[0] in ".'":
            continue
        line = ESC.sub(" ", line)
        out.append(line)
    return "\n".join(out)


def mo_strings(path, want_msgid):
    with open(path, "rb") as f:
        b = f.read()
    if len(b) < 28:
        return []
    magic = struct.unpack("<I", b[:4])[0]
    e = "<" if magic == 0x950412DE else ">"
    n, o_orig, o_tr = struct.unpack(e + "3I", b[8:20])
    res = []
    for i in range(n):
        tab = o_orig if want_msgid else o_tr
        ln, off = struct.unpack(e + "2I", b[tab + 8 * i:tab + 8 * i + 8])
        s = b[off:off + ln].split(b"\0")[0].decode("utf-8", "replace")
        if s and not (not want_msgid and i == 0 and "Content-Type" in s):
            res.append(s)
    return res


def words(text):
    text = unicodedata.normalize("NFC", text).lower()
    w = []
    for ch in text:
        if unicodedata.category(ch)[0] in "LM":
            w.append(ch)
        elif w:
            yield "".join(w)
            w = []
    if w:
        yield "".join(w)


def gather(root, lang):
    parts, size = [], 0
    man = os.path.join(root, "usr/share/man")
    for d in MAN_DIRS[lang]:
        base = os.path.join(man, d) if d else man
        for sec in sorted(os.listdir(base)) if os.path.isdir(base) else []:
            if not sec.startswith("man"):
                continue
            sd = os.path.join(base, sec)
            for fn in sorted(os.listdir(sd)):
                p = os.path.join(sd, fn)
                if not fn.endswith(".gz") or os.path.islink(p):
                    continue
                with gzip.open(p, "rb") as f:
                    raw = f.read()
                try:
                    t = raw.decode("utf-8")
                except UnicodeDecodeError:
                    continue
                t = man_text(t)
                parts.append(t)
                size += len(t)
                if size > MAX_CHARS:
                    return parts
    locdir = os.path.join(root, "usr/share/locale")
    locs = LOCALES[lang] if lang != "en" else ["fr"]  # English: the msgids of one catalogue set
    for loc in locs:
        d = os.path.join(locdir, loc, "LC_MESSAGES")
        for fn in sorted(os.listdir(d)) if os.path.isdir(d) else []:
            if fn.endswith(".mo"):
                for s in mo_strings(os.path.join(d, fn), lang == "en"):
                    parts.append(s)
                    size += len(s)
    return parts


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", help="folder for the downloaded packages (default: a temporary one)")
    ap.add_argument("--out", default="prep/text/langid/langid_ngrams.bin")
    a = ap.parse_args()
    work = a.work or tempfile.mkdtemp(prefix="langid-")
    root = os.path.join(work, "x")
    if not os.path.isdir(root):
        os.makedirs(work, exist_ok=True)
        subprocess.run(["apt-get", "download"] + PACKAGES, cwd=work, check=True)
        for fn in sorted(os.listdir(work)):
            if fn.endswith(".deb"):
                subprocess.run(["dpkg-deb", "-x", fn, "x"], cwd=work, check=True)
    out = bytearray(b"XTLIDNG1")
    out += struct.pack("<II", len(LANGS), 5)
    floors = bytearray()
    tables = []
    for lang in LANGS:
        counts = {n: Counter() for n in range(1, 6)}
        for t in gather(root, lang):
            for w in words(t):
                p = " " + w + " "
                for n in range(1, 6):
                    for i in range(len(p) - n + 1):
                        g = p[i:i + n]
                        if g != " ":
                            counts[n][g] += 1
        keep = KEEP_LATIN if lang in LATIN else KEEP_OTHER
        entries = []
        for n in range(1, 6):
            total = sum(counts[n].values())
            if not total:
                sys.exit("langid_build_model: no text for " + lang)
            top = counts[n].most_common(keep[n])
            top.sort(key=lambda kv: (-kv[1], kv[0]))
            worst = 0
            for g, c in top:
                cost = min(254, int(round(-math.log(c / total) * SCALE)))
                worst = max(worst, cost)
                entries.append((g.encode("utf-8"), cost))
            floors.append(min(254, worst + FLOOR_GAP))
        print("%s: %d n-grams, %d letters" % (lang, len(entries), sum(counts[1].values())), file=sys.stderr)
        tables.append(entries)
    out += floors
    for entries in tables:
        out += struct.pack("<I", len(entries))
        for g, c in entries:
            out += struct.pack("<B", len(g)) + g + struct.pack("<B", c)
    with open(a.out, "wb") as f:
        f.write(out)
    print("%s: %d bytes" % (a.out, len(out)), file=sys.stderr)


if __name__ == "__main__":
    main()
