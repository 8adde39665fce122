#!/usr/bin/env bash
# xtts-melcache --update shares the unchanged records' shards with the old cache instead of
# copying them (formats/cache.md, "Shared shards"): after edits, drops, adds and a
# re-recorded file (speaker table unchanged) the updated cache has a fresh build's digest,
# verifies, reads the same in the C tools and the Python reader (both backends), and its
# quality report TSV is the fresh build's; the kept shards are the old files (same inodes)
# and the update wrote only a small part of the cache; a second update on top of the first
# (runs of runs) again equals a fresh build; a plain build on the shared cache is refused;
# --compact copies every record back into a format-2 cache with the same digest.
set -euo pipefail
source "$(dirname "$0")/faults_lib.bash"
LIBDIR=$BUILD/lib
[ -f "$LIBDIR/libxtts-reader.so" ] && ! grep -q 'lib[a-z]*san' <<< "$(ldd "$LIBDIR/libxtts-reader.so")" || LIBDIR=none

demo_tokens
# four times the demo stream under new ids, so that shards hold many records
repeat_tokens "$T/tokens.tsv" "$T/v1.tsv" 4
SZ=--shard-size=256K
expect_rc 3 "$BIN/xtts-melcache" --out "$T/c" -j 2 -q $SZ "$T/v1.tsv"
d1=$(digest "$T/c"); [ -n "$d1" ] || die "first build does not verify"
ls -d "$T"/c/shard-* | wc -l | grep -qv '^1$' || die "the first build has one shard: the test wants several"
ino0=$(stat -c %i "$T/c/shard-00000/data.mdb")

# v2: a transcript edited, a record dropped, one added after its speaker's, a file
# re-recorded in place (same size, mtime restored); the speaker table stays as it is
cp "$T/data/wavs/en_001.wav" "$T/data/wavs/new_001.wav"
awk -F'\t' 'BEGIN{OFS="\t"} /^#/ {print; next}
  $1 == "en_004~1" {next}
  $1 == "en_003~2" {sub(/ [0-9]+$/, "", $5); $6 = $6 " edited"}
  {print}
  $1 == "en_001~3" {sub(/en_001\.wav$/, "new_001.wav", $4); $1 = "new_001"; print}' "$T/v1.tsv" > "$T/v2.tsv"
grep -q $'^new_001\t' "$T/v2.tsv" && ! grep -q $'^en_004~1\t' "$T/v2.tsv" || die "v2 stream not as intended"
wav="$T/data/wavs/de_002.wav"
touch -r "$wav" "$T/stamp"
size=$(stat -c %s "$wav")
printf '\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f' | dd of="$wav" bs=1 seek=$((size / 2)) conv=notrunc status=none
touch -r "$T/stamp" "$wav"

expect_rc 3 "$BIN/xtts-melcache" --out "$T/fresh2" -j 2 -q $SZ "$T/v2.tsv"
d2=$(digest "$T/fresh2"); [ -n "$d2" ] && [ "$d2" != "$d1" ] || die "fresh build of v2: digest '$d2'"

expect_rc 3 "$BIN/xtts-melcache" --out "$T/c" -j 2 -q $SZ --update "$T/v2.tsv"
grep -q "kept in the old cache's shards" "$T/err.txt" || { cat "$T/err.txt"; die "the update shared nothing"; }
grep -q "copies every record" "$T/err.txt" && die "the update fell back to copying"
[ "$(digest "$T/c")" = "$d2" ] || die "shared update's digest differs from a fresh build's"
"$BIN/xtts-cache-verify" --deep "$T/c" >/dev/null 2>&1 || die "deep verify of the shared update"
[ ! -e "$T/c.update" ] || die "the update directory was left behind"
"$PY" -c 'import json,sys; m=json.load(open(sys.argv[1])); assert m["format_version"] == 3, m["format_version"]' \
  "$T/c/manifest.json" || die "the shared update's manifest is not format_version 3"
# the kept shards are the old files, and the update wrote a small part of the cache
[ "$(stat -c %i "$T/c/base-00000/data.mdb")" = "$ino0" ] || die "base-00000 is not the old shard-00000's file"
new=$(du -cb "$T"/c/shard-*/data.mdb | tail -1 | cut -f1)
all=$(du -cbl "$T"/c/shard-*/data.mdb "$T"/c/base-*/data.mdb | tail -1 | cut -f1)
[ $((new * 3)) -lt "$all" ] || die "the update wrote $new of $all bytes"
# the quality report, record by record, is the fresh build's
"$BIN/xtts-cache-report" -q "$T/c" --tsv "$T/c.tsv" || die "report of the shared update"
"$BIN/xtts-cache-report" -q "$T/fresh2" --tsv "$T/f.tsv" || die "report of the fresh build"
cmp -s "$T/c.tsv" "$T/f.tsv" || { diff "$T/c.tsv" "$T/f.tsv" | head -5 >&2; die "quality report differs"; }
# ids: a kept record, a computed one; the dropped one (still in an old shard) is absent
for id in en_001~0 new_001 de_002~3 en_003~2; do
  "$BIN/xtts-cache-inspect" "$T/c" --id "$id" --npy "$T/a.npy" >/dev/null 2>&1 || die "inspect --id $id"
  "$BIN/xtts-cache-inspect" "$T/fresh2" --id "$id" --npy "$T/b.npy" >/dev/null 2>&1
  cmp -s "$T/a.npy" "$T/b.npy" || die "record $id differs from the fresh build's"
done
rc=0; "$BIN/xtts-cache-inspect" "$T/c" --id en_004~1 >/dev/null 2>&1 || rc=$?
[ $rc -ne 0 ] || die "the dropped record is still found by id"

# the Python reader, both backends, reads every record as in the fresh build
check_python() {
  [ "$LIBDIR" != none ] || { echo "skip: no loadable libxtts-reader.so: the Python package is not checked"; return 0; }
  PYTHONPATH="$HERE/python:$HERE/python/tests" "$PY" - "$1" "$2" "$LIBDIR" <<'PYEOF' || die "Python reader on $1"
import os, sys
import numpy as np
if sys.argv[3] != "none":
    os.environ["XTTS_PREP_LIB"] = sys.argv[3] + "/libxtts-reader.so"
import xtts_prep
from xtts_prep import XttsCache
xtts_prep._clib._reset()
assert sys.argv[3] == "none" or xtts_prep._clib.library() is not None, xtts_prep._clib.load_error()
import xtts_oracle   # the tests' pure-Python reader
a, b = xtts_oracle.XttsCache(sys.argv[1]), xtts_oracle.XttsCache(sys.argv[2])
assert len(a) == len(b), (len(a), len(b))
for i in range(len(b)):
    x, y = a[i], b[i]
    assert x["id"] == y["id"] and np.array_equal(x["mel"], y["mel"]) and np.array_equal(x["tokens"], y["tokens"]), i
    assert a.index_of(y["id"]) == i, y["id"]
assert np.array_equal(a.lengths(), b.lengths())
assert a.digest() == b.digest()
try:
    a.index_of("en_004~1")
    raise SystemExit("a dropped record found by id")
except KeyError:
    pass
if xtts_prep._clib.library() is not None:
    idx = list(range(len(b)))
    want = b.read_batch(idx)
    got = XttsCache(sys.argv[1], backend="c").read_batch(idx, threads=2)
    for k in want:
        assert np.array_equal(got[k], want[k]), k
PYEOF
}
check_python "$T/c" "$T/fresh2"

# a plain build over the shared cache would lose the shared shards: refused, nothing changed
before=$(find "$T/c" -type f ! -name '.xtts-lock*' -printf '%p %s %T@\n' | sort | md5sum)
expect_rc 2 "$BIN/xtts-melcache" --out "$T/c" -j 2 -q $SZ "$T/v2.tsv"
grep -q "update it with --update" "$T/err.txt" || { cat "$T/err.txt"; die "plain build over a shared cache"; }
[ "$(find "$T/c" -type f ! -name '.xtts-lock*' -printf '%p %s %T@\n' | sort | md5sum)" = "$before" ] || die "the refused build changed the cache"

# v3 on top of v2: runs of runs (an old base shard and the first update's own shards kept)
awk -F'\t' 'BEGIN{OFS="\t"} /^#/ {print; next} $1 == "fr_001~2" {$6 = $6 " again"} {print}' "$T/v2.tsv" > "$T/v3.tsv"
expect_rc 3 "$BIN/xtts-melcache" --out "$T/fresh3" -j 2 -q $SZ "$T/v3.tsv"
d3=$(digest "$T/fresh3")
expect_rc 3 "$BIN/xtts-melcache" --out "$T/c" -j 2 -q $SZ --update "$T/v3.tsv"
grep -q "kept in the old cache's shards" "$T/err.txt" || { cat "$T/err.txt"; die "the second update shared nothing"; }
[ "$(digest "$T/c")" = "$d3" ] || die "second shared update's digest differs from a fresh build's"
[ "$(stat -c %i "$T/c/base-00000/data.mdb")" = "$ino0" ] || die "the first shard was copied by the second update"
check_python "$T/c" "$T/fresh3"

# --compact: every record copied into new shards, a format-2 cache with the same digest
expect_rc 3 "$BIN/xtts-melcache" --out "$T/c" -j 2 -q $SZ --update --compact "$T/v3.tsv"
grep -q "copies every record into new shards (--compact)" "$T/err.txt" || { cat "$T/err.txt"; die "--compact message"; }
[ "$(digest "$T/c")" = "$d3" ] || die "compacted cache's digest"
ls -d "$T"/c/base-* >/dev/null 2>&1 && die "base shards left after --compact"
"$PY" -c 'import json,sys; m=json.load(open(sys.argv[1])); assert m["format_version"] == 2' "$T/c/manifest.json" ||
  die "the compacted manifest is not format_version 2"
echo "ok: shared update (edit, drop, add, re-record), runs of runs, Python reader, refusal of a plain build, --compact"
