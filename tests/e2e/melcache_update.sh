#!/usr/bin/env bash
# xtts-melcache --update: a cache updated to an edited token stream (a transcript edited,
# records dropped and added, an audio file re-recorded under the same name with its
# modification time restored, records reordered, a new speaker whose name sorts first so
# that every other speaker's id changes) equals
# a fresh build of the new stream: the same digest and the same manifest (statistics,
# tables, shards); the summary counts what was reused, computed and dropped; --dry-run
# counts the same and writes nothing; a change of configuration exits 2 and --force
# rebuilds; a cache without content keys is refused with what to do; --reuse copies from
# another cache into a fresh build.
set -euo pipefail
source "$(dirname "$0")/faults_lib.bash"

demo_tokens
# speakers by language
awk -F'\t' 'BEGIN{OFS="\t"} /^#/ {print; next} {$2 = "spk_" $3; print}' "$T/tokens.tsv" > "$T/v1.tsv"
expect_rc 3 "$BIN/xtts-melcache" --out "$T/c" -j 2 -q "$T/v1.tsv"
d1=$(digest "$T/c"); [ -n "$d1" ] || die "first build does not verify"

# v2: en_003's transcript edited (a token less, another text), en_004 and de_001 dropped,
# new_001 added (a copy of en_001's audio under its own file, speaker spk_aa: first in the
# names' order, so every stored speaker id moves up by one), fr_001 moved to the front,
# and en_002.wav re-recorded: bytes changed in place, same size, mtime restored
cp "$T/data/wavs/en_001.wav" "$T/data/wavs/new_001.wav"
awk -F'\t' 'BEGIN{OFS="\t"} /^#/ {print; next}
  $1 == "fr_001" {first = $0; next}
  {body[++n] = $0}
  END {print first
       for (i = 1; i <= n; i++) { split(body[i], f, "\t")
         if (f[1] == "en_004" || f[1] == "de_001") continue
         if (f[1] == "en_003") { sub(/ [0-9]+$/, "", f[5]); f[6] = f[6] " edited" }
         print f[1], f[2], f[3], f[4], f[5], f[6]
         if (f[1] == "en_001") { sub(/en_001\.wav$/, "new_001.wav", f[4]); print "new_001", "spk_aa", f[3], f[4], f[5], f[6] } } }' \
  "$T/v1.tsv" > "$T/v2.tsv"
grep -q $'^new_001\t' "$T/v2.tsv" && [ "$(sed -n 2p "$T/v2.tsv" | cut -f1)" = fr_001 ] || die "v2 stream not as intended"
wav="$T/data/wavs/en_002.wav"
touch -r "$wav" "$T/stamp"
size=$(stat -c %s "$wav")
printf '\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f' | dd of="$wav" bs=1 seek=$((size / 2)) conv=notrunc status=none
touch -r "$T/stamp" "$wav"
[ "$(stat -c %s "$wav")" = "$size" ] || die "re-recorded file changed size"

expect_rc 3 "$BIN/xtts-melcache" --out "$T/fresh2" -j 2 -q "$T/v2.tsv"
d2=$(digest "$T/fresh2"); [ -n "$d2" ] && [ "$d2" != "$d1" ] || die "fresh build of v2: digest '$d2'"

# dry run: the counts, and nothing written
before=$(find "$T/c" -type f -printf '%p %s %T@\n' | sort | md5sum)
expect_rc 0 "$BIN/xtts-melcache" --out "$T/c" -j 2 --update --dry-run "$T/v2.tsv"
# 62 inputs: en_002 (re-recorded), en_003 (edited), new_001 (added) and the 3 broken
# entries (never carried over) are computed; en_004 and de_001 are dropped
grep -q 'dry run: 56 reused, 6 computed, 2 dropped' "$T/err.txt" || { cat "$T/err.txt"; die "dry-run counts"; }
[ "$(find "$T/c" -type f -printf '%p %s %T@\n' | sort | md5sum)" = "$before" ] || die "--dry-run changed the cache"
[ ! -e "$T/c.update" ] || die "--dry-run made the update directory"

expect_rc 3 "$BIN/xtts-melcache" --out "$T/c" -j 2 --update "$T/v2.tsv"
grep -q '56 reused, 6 computed, 2 dropped; the update replaced the old cache' "$T/err.txt" || { cat "$T/err.txt"; die "update counts"; }
[ "$(digest "$T/c")" = "$d2" ] || die "updated cache's digest differs from a fresh build's"
# the records' own databases come along: the quality report is the fresh build's, line for line
"$BIN/xtts-cache-report" -q "$T/c" --tsv "$T/c.report.tsv" || die "report of the updated cache"
"$BIN/xtts-cache-report" -q "$T/fresh2" --tsv "$T/fresh2.report.tsv" || die "report of the fresh build"
cmp -s "$T/c.report.tsv" "$T/fresh2.report.tsv" || { diff "$T/c.report.tsv" "$T/fresh2.report.tsv" | head -5 >&2; die "updated cache's quality report differs from a fresh build's"; }
[ ! -e "$T/c.update" ] || die "the update directory was left behind"
"$PY" - "$T/c/manifest.json" "$T/fresh2/manifest.json" <<'PYEOF' || die "updated manifest differs from a fresh build's"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
diff = [k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
if diff:
    print("differ:", diff); sys.exit(1)
PYEOF
# the re-recorded record was computed again: its mel equals the fresh build's
"$BIN/xtts-cache-inspect" "$T/c" --id en_002 --npy "$T/a.npy" >/dev/null 2>&1
"$BIN/xtts-cache-inspect" "$T/fresh2" --id en_002 --npy "$T/b.npy" >/dev/null 2>&1
cmp -s "$T/a.npy" "$T/b.npy" || die "en_002 after the update is not the re-recorded audio's"

# updating again with the same stream computes only the broken entries
expect_rc 3 "$BIN/xtts-melcache" --out "$T/c" -j 1 --update "$T/v2.tsv"
grep -q '59 reused, 3 computed, 0 dropped' "$T/err.txt" || { cat "$T/err.txt"; die "second update counts"; }
[ "$(digest "$T/c")" = "$d2" ] || die "digest after a second update"

# another configuration: exit 2 naming it, the cache untouched; --force rebuilds
expect_rc 2 "$BIN/xtts-melcache" --out "$T/c" -j 2 --update --dtype fp32 "$T/v2.tsv"
grep -q 'another configuration' "$T/err.txt" || { cat "$T/err.txt"; die "config change message"; }
[ "$(digest "$T/c")" = "$d2" ] || die "a refused update changed the cache"
expect_rc 3 "$BIN/xtts-melcache" --out "$T/f32" -j 2 -q --dtype fp32 "$T/v2.tsv"
expect_rc 3 "$BIN/xtts-melcache" --out "$T/c" -j 2 -q --update --force --dtype fp32 "$T/v2.tsv"
[ "$(digest "$T/c")" = "$(digest "$T/f32")" ] || die "--update --force with another configuration"

# --reuse: a fresh build elsewhere copies what the other cache holds (v1 now reads the
# re-recorded en_002 too: only en_003's older text, en_004, de_001 and the broken entries
# are computed)
expect_rc 3 "$BIN/xtts-melcache" --out "$T/fresh1" -j 2 -q "$T/v1.tsv"
d1=$(digest "$T/fresh1")
expect_rc 3 "$BIN/xtts-melcache" --out "$T/r" -j 2 --reuse "$T/fresh2" "$T/v1.tsv"
grep -q '57 reused, 6 computed, 1 dropped' "$T/err.txt" || { cat "$T/err.txt"; die "--reuse counts"; }
[ "$(digest "$T/r")" = "$d1" ] || die "--reuse build's digest differs from a fresh build's"
"$BIN/xtts-cache-report" -q "$T/r" --tsv "$T/r.report.tsv" || die "report of the --reuse build"
"$BIN/xtts-cache-report" -q "$T/fresh1" --tsv "$T/fresh1.report.tsv" || die "report of the fresh v1 build"
cmp -s "$T/r.report.tsv" "$T/fresh1.report.tsv" || die "--reuse build's quality report differs from a fresh build's"
expect_rc 2 "$BIN/xtts-melcache" --out "$T/r2" -j 2 --reuse "$T/f32" "$T/v1.tsv"
grep -q 'another configuration' "$T/err.txt" || die "--reuse of another configuration"

# a cache from before content keys: refused with what to do; --force rebuilds it whole
cp -r "$T/fresh2" "$T/old"
for s in "$T"/old/shard-*; do
  "$PY" -c 'import lmdb, sys
env = lmdb.open(sys.argv[1], max_dbs=16, subdir=True)
with env.begin(write=True) as t: t.drop(env.open_db(b"keys", txn=t), delete=True)' "$s"
done
[ "$(digest "$T/old")" = "$d2" ] || die "a cache without keys does not verify"
expect_rc 2 "$BIN/xtts-melcache" --out "$T/old" -j 2 --update "$T/v1.tsv"
grep -q 'no content keys.*--update --force' "$T/err.txt" || { cat "$T/err.txt"; die "pre-keys message"; }
expect_rc 3 "$BIN/xtts-melcache" --out "$T/old" -j 2 --update --force "$T/v1.tsv"
grep -q '0 reused, 63 computed' "$T/err.txt" || { cat "$T/err.txt"; die "pre-keys --force counts"; }
[ "$(digest "$T/old")" = "$d1" ] || die "pre-keys cache rebuilt by --update --force"

# an --out that is missing is a plain build
expect_rc 3 "$BIN/xtts-melcache" --out "$T/new" -j 2 --update "$T/v1.tsv"
[ "$(digest "$T/new")" = "$d1" ] || die "--update into a missing directory"
echo "ok: update (edit, add, drop, re-record, reorder), dry run, configuration change, --reuse, pre-keys cache"
