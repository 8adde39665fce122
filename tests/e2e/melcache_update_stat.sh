#!/usr/bin/env bash
# xtts-melcache --update reads only the audio files whose stat changed: a build saves the
# stat records of the files it read (device, inode, size, modification and change times),
# and an update trusts a file's content hash while its stat matches. Nothing changed: no file
# is read; a file re-recorded in place with its modification time restored (touch -r) is
# read, since its change time moved, and its record computed; a file only touched is read
# and its record carried over; a copied dataset (new inodes) is read once, then not; --rehash
# reads every file. Each update gives a fresh build's digest. --rehash alone is a usage error.
set -euo pipefail
source "$(dirname "$0")/faults_lib.bash"

demo_tokens
sleep 1.2 # older than the stat records' margin: a file changed within a second of its read is read again
mc() { "$BIN/xtts-melcache" -j 2 -q "$@"; }
# read_count ERRFILE: the N of "N audio files read"
read_count() { sed -n 's/.*: \([0-9]*\) audio files\{0,1\} read for content keys.*/\1/p' "$1"; }
fresh_digest() { rm -rf "$T/fresh"; expect_rc 3 "$BIN/xtts-melcache" --out "$T/fresh" -j 2 -q "$1"; digest "$T/fresh"; }

expect_rc 3 "$BIN/xtts-melcache" --out "$T/c" -j 2 -q "$T/tokens.tsv"
d0=$(digest "$T/c"); [ -n "$d0" ] || die "first build does not verify"
files=$(awk -F'\t' '!/^#/ {print $4}' "$T/tokens.tsv" | sort -u | while read -r f; do [ -f "$f" ] && echo "$f"; done | wc -l)
[ "$files" -gt 10 ] || die "only $files audio files"

# nothing changed: no file read, the same cache
expect_rc 3 "$BIN/xtts-melcache" --out "$T/c" -j 2 -q --update "$T/tokens.tsv"
[ "$(read_count "$T/err.txt")" = 0 ] || { cat "$T/err.txt"; die "an update with nothing changed read files"; }
grep -q "$files known by their stat records" "$T/err.txt" || { cat "$T/err.txt"; die "not every file known"; }
[ "$(digest "$T/c")" = "$d0" ] || die "update with nothing changed: another digest"
# what every update computes again: the records a build rejects (never carried over)
again=$(sed -n 's/.* reused, \([0-9]*\) computed.*/\1/p' "$T/err.txt")

# re-recorded in place, same size, modification time restored: read (its change time moved)
wav="$T/data/wavs/en_002.wav"
touch -r "$wav" "$T/stamp"
size=$(stat -c %s "$wav")
printf '\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f' | dd of="$wav" bs=1 seek=$((size / 2)) conv=notrunc status=none
touch -r "$T/stamp" "$wav"
sleep 1.2
want=$(fresh_digest "$T/tokens.tsv"); [ "$want" != "$d0" ] || die "the re-recorded file changed no digest"
expect_rc 3 "$BIN/xtts-melcache" --out "$T/c" -j 2 -q --update "$T/tokens.tsv"
[ "$(read_count "$T/err.txt")" = 1 ] || { cat "$T/err.txt"; die "the re-recorded file: want 1 file read"; }
grep -q " $((again + 1)) computed" "$T/err.txt" || { cat "$T/err.txt"; die "the re-recorded file's record not computed"; }
[ "$(digest "$T/c")" = "$want" ] || die "update after a re-recording: not a fresh build's digest"

# touched only: read, and its record carried over (the content key is the same)
touch "$T/data/wavs/en_001.wav"; sleep 1.2
expect_rc 3 "$BIN/xtts-melcache" --out "$T/c" -j 2 -q --update "$T/tokens.tsv"
[ "$(read_count "$T/err.txt")" = 1 ] || { cat "$T/err.txt"; die "the touched file: want 1 file read"; }
grep -q " $again computed" "$T/err.txt" || { cat "$T/err.txt"; die "the touched file's record computed again"; }
[ "$(digest "$T/c")" = "$want" ] || die "update after a touch: another digest"

# a copied dataset: new inodes, every file read once, then none
cp -a "$T/data" "$T/copy"; sleep 1.2
sed "s|$T/data/|$T/copy/|g" "$T/tokens.tsv" > "$T/copy.tsv"
expect_rc 3 "$BIN/xtts-melcache" --out "$T/c" -j 2 -q --update "$T/copy.tsv"
[ "$(read_count "$T/err.txt")" = "$files" ] || { cat "$T/err.txt"; die "the copied dataset: want $files files read"; }
grep -q " $again computed" "$T/err.txt" || { cat "$T/err.txt"; die "the copied dataset: records computed again"; }
[ "$(digest "$T/c")" = "$want" ] || die "update from the copied dataset: another digest"
expect_rc 3 "$BIN/xtts-melcache" --out "$T/c" -j 2 -q --update "$T/copy.tsv"
[ "$(read_count "$T/err.txt")" = 0 ] || { cat "$T/err.txt"; die "the copied dataset was read twice"; }

# --rehash: every file read
expect_rc 3 "$BIN/xtts-melcache" --out "$T/c" -j 2 -q --update --rehash "$T/copy.tsv"
[ "$(read_count "$T/err.txt")" = "$files" ] || { cat "$T/err.txt"; die "--rehash: want $files files read"; }
grep -q '(--rehash)' "$T/err.txt" || die "--rehash not named"
[ "$(digest "$T/c")" = "$want" ] || die "--rehash: another digest"
# --reuse takes the stat records of the cache it copies from
rm -rf "$T/r"
expect_rc 3 "$BIN/xtts-melcache" --out "$T/r" -j 2 -q --reuse "$T/c" "$T/copy.tsv"
[ "$(read_count "$T/err.txt")" = 0 ] || { cat "$T/err.txt"; die "--reuse read files its source knows"; }
[ "$(digest "$T/r")" = "$want" ] || die "--reuse: another digest"

expect_rc 1 "$BIN/xtts-melcache" --out "$T/x" --rehash "$T/copy.tsv"
one_line_error "--rehash goes with --update or --reuse"
echo "melcache_update_stat: ok ($files files)"
