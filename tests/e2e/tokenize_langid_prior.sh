#!/usr/bin/env bash
# xtts-tokenize --lang auto on a mixed 17-language TSV with a speaker column: the output is
# byte-identical for -j1 and -j2, and short lines the text alone cannot place take their
# speaker's language (the speaker prior, prep/text/langid/langid.h).
set -euo pipefail
BIN="$BUILD/bin/xtts-tokenize"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
T="${TMPDIR_TEST:-$(mktemp -d)}"
cd "$T"
fail() { echo "FAIL: $*" >&2; exit 1; }

"$PYTHON" - "$ROOT/tests/data/langid_set.tsv" > list.tsv <<'PY'
import sys
print("id\tspeaker\taudio\ttext")
n = 0
for line in open(sys.argv[1], encoding="utf-8"):
    lang, text = line.rstrip("\n").split("\t", 1)
    n += 1
    print(f"r{n}\tspk_{lang}\tr{n}.wav\t{text}")
# short lines whose text alone points elsewhere
for spk, text in [("it", "No."), ("es", "Si."), ("nl", "Hallo Anna."), ("pl", "Halo?"), ("it", "Mario?")]:
    n += 1
    print(f"amb{n}\tspk_{spk}\tamb{n}.wav\t{text}")
PY
"$BIN" --format tsv --lang auto -j1 list.tsv > out1.tsv 2> err1.txt || fail "-j1: $(cat err1.txt)"
"$BIN" --format tsv --lang auto -j2 list.tsv > out2.tsv 2> err2.txt || fail "-j2: $(cat err2.txt)"
cmp -s out1.tsv out2.tsv || fail "-j1 and -j2 differ"
"$PYTHON" - out1.tsv <<'PY'
import sys
rows = [l.split("\t") for l in open(sys.argv[1], encoding="utf-8").read().split("\n")[1:] if l]
assert len(rows) == 549, len(rows)
wrong = [(r[0], r[1], r[2]) for r in rows if r[1] != "spk_" + r[2]]
assert len(wrong) <= 3, wrong
amb = {r[0]: (r[1], r[2]) for r in rows if r[0].startswith("amb")}
assert len(amb) == 5 and all(spk == "spk_" + lang for spk, lang in amb.values()), amb
print("langid prior ok")
PY
