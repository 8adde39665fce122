#!/usr/bin/env bash
# Audio codes across an --update (docs/reliability.md, round five):
# 1. the update's copy of the codes keeps the entries of the records the new cache holds and
#    leaves those of the records it dropped (verify: 50 records' codes whole, 50 entries);
# 2. verify counts entries of records the cache no longer holds (a codes directory an older
#    update carried whole): "(10 of records the cache no longer holds)", exit 0; the next
#    xtts-cache-codes run removes them;
# 3. a codes file damaged inside its pages (not cut short): the update reads it under the fault
#    guard: exit 2 naming the codes directory, never a signal, the cache as it was.
set -euo pipefail
source "$(dirname "$0")/faults_lib.bash"
"$PY" -c "import torch, lmdb, numpy" 2>/dev/null || { echo "skip: $PY lacks torch, lmdb or numpy (no DVAE checkpoint to write)"; echo ok; exit 0; }

demo_tokens
expect_rc 3 "$BIN/xtts-melcache" --out "$T/c" --audio int16 -q "$T/tokens.tsv"
for i in 0 7 20 33; do "$BIN/xtts-cache-inspect" --index $i --npy "$T/m$i.npy" "$T/c" >/dev/null; done
"$PY" - "$T" <<'PYEOF'
import sys, numpy as np, torch
import torch.nn.functional as F
T = sys.argv[1]
g = torch.Generator().manual_seed(7)
sd, hid, dim = {}, 16, 16
def conv(name, o, i, k):
    sd[name + ".weight"] = torch.randn(o, i, k, generator=g) / (i * k) ** 0.5
    sd[name + ".bias"] = torch.randn(o, generator=g) * 0.1
conv("encoder.0.0", hid, 80, 3)
conv("encoder.1.0", 2 * hid, hid, 3)
for b in range(3):
    for k, size in ((0, 3), (2, 3), (4, 1)):
        conv(f"encoder.{2 + b}.net.{k}", 2 * hid, 2 * hid, size)
conv("encoder.5", dim, 2 * hid, 1)
sd["codebook.embed"] = torch.randn(dim, 64, generator=g)
torch.save(sd, T + "/dvae.pth")
torch.save(torch.rand(80, generator=g) * 2 + 0.5, T + "/mel_stats.pth")
PYEOF
M=(--dvae "$T/dvae.pth" --mel-norms "$T/mel_stats.pth")
expect_rc 0 "$BIN/xtts-cache-codes" "$T/c" "${M[@]}"
n=$(grep -vc '^#' "$T/tokens.tsv")
cp -a "$T/c" "$T/old"

# 1. an update that drops 10 stored records
awk -F'\t' '/^#/ {print; next} ++k > 10 {print}' "$T/tokens.tsv" > "$T/fewer.tsv"
expect_rc 3 "$BIN/xtts-melcache" --out "$T/c" --audio int16 -q --update "$T/fewer.tsv"
"$BIN/xtts-cache-verify" "$T/c" > "$T/v.txt" || { cat "$T/v.txt"; die "verify after the update"; }
grep -q "audio codes: 1 directories, 50 records' codes whole, 50 entries (0 of records the cache no longer holds)" "$T/v.txt" \
  || { cat "$T/v.txt"; die "the update's copy did not leave the dropped records' codes"; }
echo "1: the update's copy holds the codes of the records the cache holds, none else"

# 2. the old codes directory (60 entries) in the updated cache: counted, not a fault
rm -rf "$T/c"/codes-*; cp -a "$T/old"/codes-* "$T/c"/
"$BIN/xtts-cache-verify" "$T/c" > "$T/v.txt" || { cat "$T/v.txt"; die "verify with stale codes entries"; }
grep -q "50 records' codes whole, 60 entries (10 of records the cache no longer holds)" "$T/v.txt" \
  || { cat "$T/v.txt"; die "verify does not count the stale entries"; }
"$BIN/xtts-cache-verify" --json "$T/c" > "$T/j.json"
"$PY" -c 'import json,sys; assert json.load(open(sys.argv[1]))["codes_stale"] == 10' "$T/j.json" || die "JSON codes_stale"
echo "2: verify counts 10 entries of records the cache no longer holds"
expect_rc 0 "$BIN/xtts-cache-codes" "$T/c" "${M[@]}"
grep -q "50 had codes, 0 computed" "$T/err.txt" && grep -q "removed 10 entries of records the cache no longer holds" "$T/err.txt" \
  || { cat "$T/err.txt"; die "the codes run did not remove the 10 stale entries"; }
"$BIN/xtts-cache-verify" "$T/c" > "$T/v.txt" || { cat "$T/v.txt"; die "verify after the codes run"; }
grep -q "50 records' codes whole, 50 entries (0 of records the cache no longer holds)" "$T/v.txt" \
  || { cat "$T/v.txt"; die "stale entries left after the codes run"; }
echo "2b: the next codes run removes them"

# 3. a damaged page in the middle of the codes file
cp -a "$T/old" "$T/dmg"
f=$(echo "$T/dmg"/codes-*/data.mdb)
pages=$(( $(stat -c %s "$f") / 4096 ))
[ "$pages" -ge 4 ] || die "the codes file has $pages pages"
for p in $(seq 2 $((pages - 1))); do
  "$PY" -c 'import sys; f = open(sys.argv[1], "r+b"); f.seek(int(sys.argv[2]) * 4096 + 16); f.write(b"\xff" * 4000)' "$f" "$p"
done
cache_files() { (cd "$1" && find . -type f ! -name '*lock*' -exec md5sum {} + | sort); }
before=$(cache_files "$T/dmg")
rc=0; "$BIN/xtts-melcache" --out "$T/dmg" --audio int16 -q --update "$T/fewer.tsv" > "$T/out.txt" 2> "$T/err.txt" || rc=$?
[ $rc -eq 2 ] || { cat "$T/err.txt"; die "update over a damaged codes file: exit $rc"; }
grep -q "codes-" "$T/err.txt" || { cat "$T/err.txt"; die "the update does not name the codes directory"; }
[ "$(cache_files "$T/dmg")" = "$before" ] || die "the failed update changed the cache"
echo "3: a damaged codes file: the update exits 2 naming it, the cache as it was"
echo ok
