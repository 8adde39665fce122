#!/usr/bin/env bash
# A build resumed after the dataset moved: the token stream's audio paths rewritten to the
# new place, the same files. A build is identified by its records' content keys (the audio's
# bytes, not its path), so the resume is accepted and its digest equals an uninterrupted
# build's; a resume whose audio content changed under the same path is refused (exit 2).
set -euo pipefail
source "$(dirname "$0")/faults_lib.bash"

demo_tokens
repeat_tokens "$T/tokens.tsv" "$T/many.tsv" 4
expect_rc 3 "$BIN/xtts-melcache" --out "$T/ref" -j 2 -q "$T/many.tsv"
d_ref=$(digest "$T/ref")

# an unfinished build: killed once it has committed some records (counted in the shard's
# "records" database: the data file's size alone says nothing of what is committed); a
# build that finished before the kill serves as well, one that committed nothing does not
committed() {
  "$PY" - "$T/c/shard-00000" <<'PYEOF' 2>/dev/null || echo 0
import lmdb, sys
env = lmdb.open(sys.argv[1], readonly=True, lock=False, max_dbs=16, subdir=True)
with env.begin() as txn:
    print(txn.stat(env.open_db(b"records", txn=txn, create=False))["entries"])
PYEOF
}
"$BIN/xtts-melcache" --out "$T/c" -j 1 -q --commit-every 1 "$T/many.tsv" 2>/dev/null & pid=$!
n=0
for _ in $(seq 1 600); do
  [ -s "$T/c/shard-00000/data.mdb" ] && n=$(committed) && [ "${n:-0}" -ge 1 ] && break
  sleep 0.01
done
kill -9 "$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true
[ "$(committed)" -ge 1 ] || die "the build was killed before it committed a record"

# the dataset moves; the stream is rewritten for the new place
mv "$T/data" "$T/moved"
sed "s#$T/data/#$T/moved/#" "$T/many.tsv" > "$T/moved.tsv"
! grep -q "$T/data/" "$T/moved.tsv" || die "paths not rewritten"
cp -r "$T/c" "$T/c2"
expect_rc 3 "$BIN/xtts-melcache" --out "$T/c" -j 2 -q "$T/moved.tsv"
[ "$(digest "$T/c")" = "$d_ref" ] || die "resume after a move: digest differs from an uninterrupted build's"

# the same paths with other audio under them: another input
for f in "$T"/moved/wavs/en_00*.wav; do cp "$T/moved/wavs/fr_001.wav" "$f"; done
expect_rc 2 "$BIN/xtts-melcache" --out "$T/c2" -j 2 -q "$T/moved.tsv"
grep -q 'holds a build of another input' "$T/err.txt" || { cat "$T/err.txt"; die "changed audio not refused"; }
echo "ok: resume after moving the dataset accepted; changed audio refused"
