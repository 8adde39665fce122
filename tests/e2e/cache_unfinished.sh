#!/usr/bin/env bash
# An unfinished cache is named as such by every reader (verify, inspect, xtts-train, the
# Python package), with what to do, and exit 2: a build in parts with a part missing, and a
# whole build stopped before its manifest. A build whose every record is rejected exits 2 and
# leaves no cache that verifies.
set -euo pipefail
BIN="$BUILD/bin"; T="$TMPDIR_TEST"
here="$(cd "$(dirname "$0")/../.." && pwd)"
bash "$here/scripts/make-demo-dataset.sh" "$T/data" >/dev/null 2>&1
"$BIN/xtts-tokenize" --lang auto "$T/data/metadata.csv" > "$T/t.tsv" 2>/dev/null || [ $? -eq 3 ]
expect() { # NAME PATTERN command...: exit 2 and one line on stderr matching PATTERN
  local name=$1 pat=$2; shift 2
  local rc=0; "$@" > "$T/out" 2> "$T/err" || rc=$?
  [ $rc -eq 2 ] || { echo "$name: exit $rc, expected 2"; cat "$T/err"; exit 1; }
  grep -q "$pat" "$T/err" "$T/out" || { echo "$name: no '$pat'"; cat "$T/err" "$T/out"; exit 1; }
}
# one part of two
rc=0; "$BIN/xtts-melcache" --out "$T/p" --part 0/2 -q "$T/t.tsv" 2>/dev/null || rc=$?; [ $rc -eq 0 ] || [ $rc -eq 3 ]
msg="unfinished: 1 of 2 parts done; re-run the build of the missing parts, or run xtts-cache-merge"
expect verify "$msg" "$BIN/xtts-cache-verify" "$T/p"
expect inspect "$msg" "$BIN/xtts-cache-inspect" "$T/p"
expect train "$msg" "$BIN/xtts-train" --cache "$T/p" --steps 1
rc=0; PYTHONPATH="$here/python" "${PYTHON:-/usr/bin/python3}" -c '
import sys
from xtts_prep import XttsCache, CacheError
try:
    XttsCache(sys.argv[1])
except CacheError as e:
    print(e); sys.exit(2)' "$T/p" > "$T/py" 2>&1 || rc=$?
[ $rc -eq 2 ] && grep -q "$msg" "$T/py" || { echo "python: rc=$rc"; cat "$T/py"; exit 1; }
# a whole build without its manifest (killed before the end)
rc=0; "$BIN/xtts-melcache" --out "$T/w" -q "$T/t.tsv" 2>/dev/null || rc=$?; [ $rc -eq 0 ] || [ $rc -eq 3 ]
rm "$T/w/manifest.json"
expect verify-whole "unfinished build (no manifest.json, 1 shard directory); re-run xtts-melcache" "$BIN/xtts-cache-verify" "$T/w"
# the build is finished by a re-run
rc=0; "$BIN/xtts-melcache" --out "$T/w" -q "$T/t.tsv" 2>/dev/null || rc=$?; [ $rc -eq 0 ] || [ $rc -eq 3 ]
"$BIN/xtts-cache-verify" "$T/w" > /dev/null
# every record rejected: exit 2, and verify refuses what is left
{ head -1 "$T/t.tsv"; sed -n '2,4p' "$T/t.tsv" | awk -F'\t' 'BEGIN { OFS = "\t" } { $4 = "/nonexistent.wav"; print }'; } > "$T/bad.tsv"
expect melcache-all-rejected "every record was rejected" "$BIN/xtts-melcache" --out "$T/b" -q "$T/bad.tsv"
expect verify-empty "holds no record" "$BIN/xtts-cache-verify" "$T/b"
echo ok
