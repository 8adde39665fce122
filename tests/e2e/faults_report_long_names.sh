#!/usr/bin/env bash
# xtts-cache-report on speakers whose names are 300+ bytes of 2-, 3- and 4-byte characters
# (docs/reliability.md, round five): exit 0, the TSV, the JSON and the HTML page all written,
# each name whole in the TSV and the JSON, every output valid UTF-8 (a chart's label cut
# short at a character's start). Was: names cut at 255 bytes inside a character, then exit 2
# "out of memory" from the JSON writer, no JSON and no HTML.
set -euo pipefail
source "$(dirname "$0")/faults_lib.bash"

demo_tokens
"$PY" - "$T/tokens.tsv" "$T/long.tsv" "$T/names.txt" <<'PYEOF'
import sys
names = ["é" * 160 + "a", "x" + "語" * 110, "🎙" * 80 + "b"]  # 321, 331 and 321 bytes
assert all(len(n.encode()) > 300 for n in names)
with open(sys.argv[1], encoding="utf-8") as f, open(sys.argv[2], "w", encoding="utf-8") as out:
    k = 0
    for line in f:
        if line.startswith("#"): out.write(line); continue
        c = line.split("\t"); c[1] = names[k % 3]; k += 1
        out.write("\t".join(c))
open(sys.argv[3], "w", encoding="utf-8").write("\n".join(sorted(names)) + "\n")
PYEOF
expect_rc 3 "$BIN/xtts-melcache" --out "$T/c" -q "$T/long.tsv"
expect_rc 0 "$BIN/xtts-cache-report" "$T/c" --tsv "$T/q.tsv" --json "$T/q.json" --html "$T/q.html"
for f in q.tsv q.json q.html; do [ -s "$T/$f" ] || die "$f not written"; done
"$PY" - "$T" <<'PYEOF'
import json, sys
t = sys.argv[1]
names = open(t + "/names.txt", encoding="utf-8").read().split("\n")[:-1]
for f in ("out.txt", "q.tsv", "q.json", "q.html"):
    open(t + "/" + f, "rb").read().decode("utf-8")  # raises on invalid UTF-8
rows = [l.split("\t") for l in open(t + "/q.tsv", encoding="utf-8").read().splitlines()]
col = rows[0].index("speaker")
assert sorted({r[col] for r in rows[1:]}) == names, "TSV speaker names are not the manifest's"
j = json.load(open(t + "/q.json", encoding="utf-8"))
assert sorted(s["speaker"] for s in j["speakers"]) == names, "JSON speaker names are not the manifest's"
PYEOF
echo "names of 300+ bytes: exit 0, TSV, JSON and HTML written, whole and valid UTF-8"
echo ok
