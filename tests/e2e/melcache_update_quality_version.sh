#!/usr/bin/env bash
# xtts-melcache --update of a cache whose quality metrics are version 1 (built before the
# speech-band edges: every entry's version byte 1, the shards' note "1") computes those records
# again instead of carrying their old edge metrics over: the updated cache holds version-2
# entries only, notes "2", verifies with the same digest, and its report equals a fresh build's.
set -euo pipefail
source "$(dirname "$0")/faults_lib.bash"
need_py_reader_modules "the entries are rewritten and read with py-lmdb"

demo_tokens
expect_rc 3 "$BIN/xtts-melcache" --out "$T/fresh" -q "$T/tokens.tsv"
d0=$(digest "$T/fresh"); [ -n "$d0" ] || die "the fresh build does not verify"
cp -a "$T/fresh" "$T/c"
versions() { # DIR: the set of the entries' versions and the shards' notes
  "$PY" - "$1" "${2:-}" <<'PYEOF'
import glob, lmdb, struct, sys, zlib
vs, notes = set(), set()
for d in sorted(glob.glob(sys.argv[1] + "/shard-*")):
    env = lmdb.open(d, max_dbs=8, subdir=True, lock=False, readonly=not sys.argv[2])
    q, meta = env.open_db(b"quality", create=False), env.open_db(b"meta", create=False)
    with env.begin(write=bool(sys.argv[2])) as txn:
        for k, v in list(txn.cursor(db=q)):
            if sys.argv[2]:  # make it an old cache's
                v = bytearray(v); v[0] = 1; v[100:104] = struct.pack("<I", zlib.crc32(bytes(v[:100])))
                txn.put(k, bytes(v), db=q)
            vs.add(v[0])
        if sys.argv[2]: txn.put(b"state:melcache-quality", b"1", db=meta)
        notes.add(txn.get(b"state:melcache-quality", db=meta).decode())
print(",".join(map(str, sorted(vs))), ",".join(sorted(notes)))
PYEOF
}
[ "$(versions "$T/c" old)" = "1 1" ] || die "the old cache was not made"
[ "$(digest "$T/c")" = "$d0" ] || die "the old cache does not verify"
expect_rc 3 "$BIN/xtts-melcache" --out "$T/c" -q --update "$T/tokens.tsv"
grep -q "0 reused, 63 computed" "$T/err.txt" || { cat "$T/err.txt"; die "the update did not compute the version-1 records again"; }
[ "$(versions "$T/c")" = "2 2" ] || die "the updated cache holds $(versions "$T/c") (versions, notes)"
[ "$(digest "$T/c")" = "$d0" ] || die "the updated cache's digest differs from the fresh build's"
"$BIN/xtts-cache-report" -q "$T/c" --tsv "$T/c.tsv" || die "report of the updated cache"
"$BIN/xtts-cache-report" -q "$T/fresh" --tsv "$T/f.tsv" || die "report of the fresh build"
cmp -s "$T/c.tsv" "$T/f.tsv" || die "the updated cache's report differs from the fresh build's"
echo "an update of a version-1 cache measures every record again: version 2 only, the fresh build's report"
echo ok
