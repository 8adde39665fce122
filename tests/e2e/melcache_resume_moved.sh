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

# an unfinished build: killed once it has committed some records
"$BIN/xtts-melcache" --out "$T/c" -j 1 -q --commit-every 1 "$T/many.tsv" 2>/dev/null & pid=$!
for _ in $(seq 1 200); do
  [ -s "$T/c/shard-00000/data.mdb" ] && [ "$(stat -c %s "$T/c/shard-00000/data.mdb")" -gt 65536 ] && break
  sleep 0.01
done
kill -9 "$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true

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
