#!/usr/bin/env bash
# Speaker ids follow the order of the speakers' names, not of their first appearance in the
# stream (formats/cache.md, manifest "speakers"):
# 1. a stream whose speakers first appear as zed, amy, kim, bob: the manifest's table is
#    amy, bob, kim, zed;
# 2. dropping the record where a speaker first appears renumbers nobody, so an update keeps
#    every record it stores in the old shards (none copied or computed again) and equals a
#    fresh build (by first appearance, zed would have moved from id 0 to 3 and every record's
#    stored id with it);
# 3. a build begun by an earlier xtts-melcache (no "melcache-speakers" state: its ids were
#    numbered by first appearance) is not resumed over a stream of several speakers: exit 2,
#    one line, the cache unchanged; --force rebuilds it.
set -euo pipefail
source "$(dirname "$0")/faults_lib.bash"

demo_tokens
repeat_tokens "$T/tokens.tsv" "$T/v1.tsv" 4
awk -F'\t' 'BEGIN{OFS="\t"; split("zed amy kim bob", s, " ")} /^#/ {print; next} {$2 = s[(n++ % 4) + 1]; print}' \
  "$T/v1.tsv" > "$T/s1.tsv"
SZ=--shard-size=256K
expect_rc 3 "$BIN/xtts-melcache" --out "$T/c" -j 2 -q $SZ "$T/s1.tsv"
"$PY" - "$T/c/manifest.json" <<'PYEOF' || die "speakers table not in name order"
import json, sys
t = json.load(open(sys.argv[1]))["speakers"]
sys.exit(0 if t == ["amy", "bob", "kim", "zed"] else 1)
PYEOF

# 2. the first record (zed's first appearance) dropped
awk '/^#/ {print; next} !done {done = 1; next} {print}' "$T/s1.tsv" > "$T/s2.tsv"
expect_rc 3 "$BIN/xtts-melcache" --out "$T/fresh2" -j 2 -q $SZ "$T/s2.tsv"
d2=$(digest "$T/fresh2"); [ -n "$d2" ] || die "fresh build of s2 does not verify"
expect_rc 3 "$BIN/xtts-melcache" --out "$T/c" -j 2 -q $SZ --update "$T/s2.tsv"
# every record it stores is kept in the old shards (what it computes are the demo's
# undecodable clips, rejected again)
kept=$(sed -n 's/.* \([0-9]*\) kept in the old cache.s shards.*/\1/p' "$T/err.txt")
stored=$(sed -n 's/.* \([0-9]*\) stored, .*/\1/p' "$T/err.txt")
[ -n "$kept" ] && [ "$kept" = "$stored" ] || { cat "$T/err.txt" >&2; die "the update kept '$kept' of '$stored' records in the old shards"; }
[ "$(digest "$T/c")" = "$d2" ] || die "updated cache's digest differs from a fresh build's"

# 3. a build of an earlier version: its last shard's writer state lacks "melcache-speakers"
cp -r "$T/fresh2" "$T/old"
last=$(ls -d "$T"/old/shard-* | tail -1)
"$PY" - "$last" <<'PYEOF' || die "cannot remove the state key"
import lmdb, sys
env = lmdb.open(sys.argv[1], max_dbs=16, subdir=True, lock=True)
meta = env.open_db(b"meta")
with env.begin(write=True, db=meta) as txn:
    if not txn.delete(b"state:melcache-speakers"):
        sys.exit(1)
PYEOF
before=$(find "$T/old" -type f -name data.mdb -exec md5sum {} + | sort)
expect_rc 2 "$BIN/xtts-melcache" --out "$T/old" -j 2 -q $SZ "$T/s2.tsv"
one_line_error "^xtts-melcache: $T/old: holds a build begun by an earlier xtts-melcache, which numbered speakers by first appearance; use --force to rebuild it$"
[ "$(find "$T/old" -type f -name data.mdb -exec md5sum {} + | sort)" = "$before" ] || die "a refused resume changed the cache"
expect_rc 3 "$BIN/xtts-melcache" --out "$T/old" -j 2 -q $SZ --force "$T/s2.tsv"
[ "$(digest "$T/old")" = "$d2" ] || die "--force over an earlier build: another cache"
echo "melcache_speakers_sorted: ok"
