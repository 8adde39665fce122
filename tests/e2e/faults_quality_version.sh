#!/usr/bin/env bash
# A quality entry whose version byte is changed in place, its CRC made good (docs/reliability.md,
# round five): a version-2 entry read as version 1 would be flagged by the old edge rule. Every
# shard of a build notes the version its entries have (meta "state:melcache-quality" = "2"), so
# xtts-cache-verify and xtts-cache-report (also --tsv -) exit 2 naming the shard, index and id:
# 1. in a plain build; 2. inside a shared range of an updated cache (a base- directory);
# 3. a note of a version this build does not know is itself a fault naming the shard.
set -euo pipefail
source "$(dirname "$0")/faults_lib.bash"
need_py_reader_modules "the entries are rewritten with py-lmdb"

demo_tokens
repeat_tokens "$T/tokens.tsv" "$T/v1.tsv" 4
awk -F'\t' 'BEGIN{OFS="\t"} /^#/ {print; next} $1 == "en_004~1" {next} {print}' "$T/v1.tsv" > "$T/v2.tsv"
SZ=--shard-size=256K
expect_rc 3 "$BIN/xtts-melcache" --out "$T/c" -q $SZ "$T/v1.tsv"
cp -a "$T/c" "$T/plain"
expect_rc 3 "$BIN/xtts-melcache" --out "$T/c" -q $SZ --update "$T/v2.tsv"
grep -q "kept in the old cache's shards" "$T/err.txt" || { cat "$T/err.txt"; die "the update shared nothing"; }

as_version_1() { # SHARD_DIR LOCAL: rewrite that entry's version byte as 1 with a valid CRC
  "$PY" - "$1" "$2" <<'PYEOF'
import lmdb, struct, sys, zlib
env = lmdb.open(sys.argv[1], max_dbs=8, subdir=True, lock=False)
db = env.open_db(b"quality")
with env.begin(write=True, db=db) as txn:
    k = struct.pack(">Q", int(sys.argv[2])); v = bytearray(txn.get(k))
    assert v[0] == 2, v[0]
    v[0] = 1; v[100:104] = struct.pack("<I", zlib.crc32(bytes(v[:100])))
    txn.put(k, bytes(v))
PYEOF
}
check() { # DIR SHARD INDEX ID: verify and the report refuse, naming the record
  expect_rc 2 "$BIN/xtts-cache-verify" "$1"
  grep -q "^fault: $2: index $3: id '$4': quality metrics damaged (version 1 in a shard whose build wrote version 2)" "$T/out.txt" \
    || { cat "$T/out.txt"; die "verify: the version-1 entry of $2 index $3 not named"; }
  for out in - "$T/q.tsv"; do
    expect_rc 2 "$BIN/xtts-cache-report" -q "$1" --tsv "$out"
    one_line_error "$2: index $3, id '$4': quality metrics damaged \(version 1"
  done
}

# 1. a plain build: record 3 of shard-00000
as_version_1 "$T/plain/shard-00000" 3
id=$("$BIN/xtts-cache-inspect" "$T/plain" --index 3 2>/dev/null | sed -n "s/^id: *//p" | head -1)
check "$T/plain" shard-00000 3 "${id:-en_004~0}"
echo "1: a plain build's entry rewritten as version 1: verify and the report name it, exit 2"

# 2. inside a shared range: the second entry of the manifest's second range of one directory
read -r dir local index < <("$PY" - "$T/c/manifest.json" <<'PYEOF'
import json, sys
seen = {}
for s in json.load(open(sys.argv[1]))["shards"]:
    if s["name"].startswith("base-") and s["name"] in seen and s["records"] > 1:
        print(s["name"], s["local_first"] + 1, s["first_index"] + 1); break
    seen[s["name"]] = 1
PYEOF
)
[ -n "${dir:-}" ] || die "the update has no directory of two ranges"
id=$("$BIN/xtts-cache-inspect" "$T/c" --index "$index" 2>/dev/null | sed -n "s/^id: *//p" | head -1)
"$BIN/xtts-cache-verify" "$T/c" > /dev/null || die "the updated cache does not verify before the damage"
as_version_1 "$T/c/$dir" "$local"
check "$T/c" "$dir" "$index" "$id"
echo "2: an entry of a shared range rewritten as version 1: verify and the report name its index, exit 2"

# 3. the note itself damaged: not a version this build knows
cp -a "$T/c" "$T/note"
"$PY" - "$T/note/shard-00000" <<'PYEOF'
import lmdb, sys
env = lmdb.open(sys.argv[1], max_dbs=8, subdir=True, lock=False)
with env.begin(write=True, db=env.open_db(b"meta")) as txn:
    assert txn.get(b"state:melcache-quality") == b"2"
    txn.put(b"state:melcache-quality", b"7")
PYEOF
expect_rc 2 "$BIN/xtts-cache-verify" "$T/note"
grep -q '^fault: shard-00000: meta "state:melcache-quality": "7" is not a quality metrics version' "$T/out.txt" \
  || { cat "$T/out.txt"; die "verify: the damaged note not named"; }
echo "3: a shard's note of another version: verify names it, exit 2"
echo ok
