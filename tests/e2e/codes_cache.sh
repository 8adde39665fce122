#!/usr/bin/env bash
# e2e: long
# xtts-cache-codes on the demo dataset built with --audio int16, with a small random DVAE in
# XTTS's key layout written by torch.save (skips without torch): codes for every record,
# each the length the waveform gives and below the codebook size; a re-run computes nothing;
# runs killed with -9 at random moments (a commit after every record) and re-run end with the
# codes of an uninterrupted run; verify passes, then names a damaged code entry and a missing
# one; a cache without waveform is refused in one line naming the command that adds it; a
# second run on the same codes is refused while one runs; after --update that adds records only
# those are computed and the carried records keep their codes; another DVAE gets a directory
# of its own. Then python/tests/test_gpt_codes.py: XttsGptDataset's audio_codes and cond_mels.
set -euo pipefail
source "$(dirname "$0")/faults_lib.bash"

if ! "$PY" -c "import torch, lmdb, numpy" 2>/dev/null; then
  echo "skip: $PY lacks torch, lmdb or numpy (Debian python3-torch python3-lmdb python3-numpy): no DVAE checkpoint to write"
  exit 0
fi
demo_tokens
repeat_tokens "$T/tokens.tsv" "$T/many.tsv" 4
head -n 120 "$T/many.tsv" > "$T/fewer.tsv"
expect_rc 3 "$BIN/xtts-melcache" --out "$T/c" --audio int16 -j 2 -q "$T/many.tsv"
expect_rc 3 "$BIN/xtts-melcache" --out "$T/none" -j 2 -q "$T/tokens.tsv"

# a DVAE of XTTS's layout (80 mels, 2 strided convs, 3 residual blocks, projection), its
# codebook drawn from its own latents of a few stored mels so that every entry is used
for i in 0 7 20 33; do "$BIN/xtts-cache-inspect" --index $i --npy "$T/m$i.npy" "$T/c" >/dev/null; done
"$PY" - "$T" <<'EOF'
import sys, numpy as np, torch
import torch.nn.functional as F
T = sys.argv[1]
def dvae(seed, hid=32, dim=32, tokens=100):
    g = torch.Generator().manual_seed(seed)
    sd, inner = {}, 2 * hid
    def conv(name, o, i, k):
        sd[name + ".weight"] = torch.randn(o, i, k, generator=g) / (i * k) ** 0.5
        sd[name + ".bias"] = torch.randn(o, generator=g) * 0.1
    conv("encoder.0.0", hid, 80, 3)
    conv("encoder.1.0", inner, hid, 3)
    for b in range(3):
        for k, size in ((0, 3), (2, 3), (4, 1)):
            conv(f"encoder.{2 + b}.net.{k}", inner, inner, size)
    conv("encoder.5", dim, inner, 1)
    norms = torch.rand(80, generator=g) * 2 + 0.5
    def encode(x):
        c = lambda x, n, **kw: F.conv1d(x, sd[n + ".weight"], sd[n + ".bias"], **kw)
        x = F.relu(c(x, "encoder.0.0", stride=2, padding=1))
        x = F.relu(c(x, "encoder.1.0", stride=2, padding=1))
        for b in range(3):
            p = f"encoder.{2 + b}.net."
            x = x + c(F.relu(c(F.relu(c(x, p + "0", padding=1)), p + "2", padding=1)), p + "4")
        return c(x, "encoder.5")[0]
    mels = [torch.from_numpy(np.load(f"{T}/m{i}.npy")).float()[None] / norms[:, None] for i in (0, 7, 20, 33)]
    lat = torch.cat([encode(m) for m in mels], 1)
    sd["codebook.embed"] = lat[:, torch.randperm(lat.shape[1], generator=g)[:tokens]].contiguous()
    return sd, norms
sd, norms = dvae(7)
torch.save(sd, T + "/dvae.pth")
torch.save(norms, T + "/mel_stats.pth")
torch.save(dvae(8)[0], T + "/dvae2.pth")
EOF
M=(--dvae "$T/dvae.pth" --mel-norms "$T/mel_stats.pth")

# dump CACHE: every record's id, then its codes (from the codes directory, by content key)
dump() {
  "$PY" - "$1" <<'EOF'
import glob, json, lmdb, struct, sys, zlib
cache = sys.argv[1]
(codes_dir,) = glob.glob(cache + "/codes-*")
env = lmdb.open(codes_dir, readonly=True, lock=False, max_dbs=4)
meta, codes = env.open_db(b"meta"), env.open_db(b"codes")
# a manifest entry is a range of a shard directory's local keys (shared shards after --update)
entries = json.load(open(cache + "/manifest.json"))["shards"]
with env.begin() as ct:
    tokens = int(ct.get(b"num_tokens", db=meta))
    for e in entries:
        senv = lmdb.open(f"{cache}/{e['name']}", readonly=True, lock=False, max_dbs=16)
        keys, ids = senv.open_db(b"keys"), senv.open_db(b"ids")
        with senv.begin() as st:
            by_local = {struct.unpack(">Q", v)[0]: k.decode() for k, v in st.cursor(db=ids)}
            for local in range(e.get("local_first", 0), e.get("local_first", 0) + e["records"]):
                v = st.get(struct.pack(">Q", local), db=keys)
                val = ct.get(v[:32], db=codes)
                assert val is not None, by_local[local]
                n, crc = struct.unpack("<II", val[:8])
                assert len(val) == 8 + 2 * n and zlib.crc32(v[:32] + val[:4] + val[8:]) == crc
                c = struct.unpack(f"<{n}H", val[8:])
                assert max(c) < tokens
                print(by_local[local], *c)
EOF
}

# the whole cache, then a re-run that computes nothing
cp -r "$T/c" "$T/ref"
expect_rc 0 "$BIN/xtts-cache-codes" "$T/ref" "${M[@]}" -j 2
grep -q "240 records, 0 had codes, 240 computed" "$T/err.txt" || { cat "$T/err.txt"; die "first run"; }
expect_rc 0 "$BIN/xtts-cache-codes" "$T/ref" "${M[@]}"
grep -q "240 had codes, 0 computed" "$T/err.txt" || { cat "$T/err.txt"; die "a re-run computed codes again"; }
dump "$T/ref" | sort > "$T/ref.txt"
[ "$(wc -l < "$T/ref.txt")" -eq 240 ] || die "not every record has codes"
used=$(cut -d' ' -f2- "$T/ref.txt" | tr ' ' '\n' | sort -u | wc -l)
[ "$used" -ge 50 ] || die "only $used codebook entries used: the test DVAE tells too little"
"$BIN/xtts-cache-verify" "$T/ref" > "$T/v.txt" || { cat "$T/v.txt"; die "verify after codes"; }
grep -q "audio codes: 1 directories, 240 records' codes whole, 240 entries" "$T/v.txt" || die "verify did not check the codes"
# the count of each record against its waveform's length
"$BIN/xtts-cache-inspect" --index 5 --json "$T/ref" > "$T/r5.json"
id5=$("$PY" -c "import json,sys; print(json.load(open(sys.argv[1]))['id'])" "$T/r5.json")
ns5=$("$PY" -c "import json,sys; print(json.load(open(sys.argv[1]))['n_samples'])" "$T/r5.json")
nc5=$(awk -v id="$id5" '$1 == id {print NF - 1}' "$T/ref.txt")
want5=$(( ((ns5 / 256 + 1) + 1) / 2 )); want5=$(( (want5 + 1) / 2 ))
[ "$nc5" -eq "$want5" ] || die "$id5: $nc5 codes for $ns5 samples, want $want5"

# kill -9 at random moments, then a re-run that finishes: the same codes
seed=${FAULTS_SEED:-$(( $(date +%s) % 100000 ))}; RANDOM=$seed; echo "seed $seed"
cp -r "$T/c" "$T/k"
for k in 1 2 3 4; do
  "$BIN/xtts-cache-codes" "$T/k" "${M[@]}" -j 2 --commit-every 1 -q 2>/dev/null & pid=$!
  sleep "0.$(printf '%03d' $(( RANDOM % 400 )))"
  kill -9 "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true
done
expect_rc 0 "$BIN/xtts-cache-codes" "$T/k" "${M[@]}" -j 1
echo "after the kills: $(grep -o '[0-9]* had codes, [0-9]* computed' "$T/err.txt")"
dump "$T/k" | sort > "$T/k.txt"
cmp -s "$T/ref.txt" "$T/k.txt" || die "killed and resumed runs give other codes than one run"

# a second run while one holds the codes directory
"$PY" - "$T/k" <<'EOF' &
import fcntl, glob, sys, time
f = open(glob.glob(sys.argv[1] + "/codes-*")[0] + "/writer.lock", "a")
fcntl.flock(f, fcntl.LOCK_EX); time.sleep(3)
EOF
holder=$!; sleep 1
expect_rc 2 "$BIN/xtts-cache-codes" "$T/k" "${M[@]}"
one_line_error "lock writer.lock is held by another process"
wait $holder

# verify names a damaged entry (one code byte flipped in data.mdb) and a missing one
"$PY" - "$T/ref" "$T/ref.txt" <<'EOF'
import glob, lmdb, struct, sys
d = glob.glob(sys.argv[1] + "/codes-*")[0]
env = lmdb.open(d, max_dbs=4)
codes = env.open_db(b"codes")
with env.begin(write=True) as t:
    cur = t.cursor(db=codes)
    cur.first(); k, v = cur.item()
    v = bytearray(v); v[8] ^= 1; t.put(k, bytes(v), db=codes)   # the checksum no longer holds
    cur.next(); cur.delete()                                      # and one entry gone
EOF
rc=0; "$BIN/xtts-cache-verify" "$T/ref" > "$T/v.txt" || rc=$?
[ $rc -eq 2 ] || { cat "$T/v.txt"; die "verify of damaged codes: exit $rc"; }
grep -q "codes-.*checksum mismatch" "$T/v.txt" || { cat "$T/v.txt"; die "the damaged entry is not named"; }
grep -q "no audio codes for this record" "$T/v.txt" || { cat "$T/v.txt"; die "the missing entry is not named"; }
# a run repairs both
expect_rc 0 "$BIN/xtts-cache-codes" "$T/ref" "${M[@]}"
grep -q "238 had codes, 2 computed" "$T/err.txt" || { cat "$T/err.txt"; die "the repair"; }
"$BIN/xtts-cache-verify" "$T/ref" > "$T/v.txt" || { cat "$T/v.txt"; die "verify after the repair"; }

# the Python reader: audio_codes and cond_mels of XttsGptDataset (python/tests/test_gpt_codes.py)
PYTHONPATH="$HERE/python" "$PY" "$HERE/python/tests/test_gpt_codes.py" "$T/ref" "$T/dvae.pth" "$T/mel_stats.pth" \
  > "$T/py.txt" 2>&1 || { cat "$T/py.txt"; die "python/tests/test_gpt_codes.py"; }

# a cache without waveform: refused, naming the command that adds one
expect_rc 2 "$BIN/xtts-cache-codes" "$T/none" "${M[@]}"
one_line_error "stores no waveform.*--audio int16"
[ -z "$(ls -d "$T/none"/codes-* 2>/dev/null)" ] || die "codes directory made in a cache without waveform"

# an update that adds records: only they are computed, the others keep their codes
expect_rc 3 "$BIN/xtts-melcache" --out "$T/u" --audio int16 -j 2 -q "$T/fewer.tsv"
expect_rc 0 "$BIN/xtts-cache-codes" "$T/u" "${M[@]}"
n_fewer=$(sed -n 's/.*: \([0-9]*\) records, 0 had codes.*/\1/p' "$T/err.txt")
expect_rc 3 "$BIN/xtts-melcache" --out "$T/u" --audio int16 -j 2 -q --update "$T/many.tsv"
expect_rc 0 "$BIN/xtts-cache-codes" "$T/u" "${M[@]}"
grep -q "240 records, $n_fewer had codes, $(( 240 - n_fewer )) computed" "$T/err.txt" || { cat "$T/err.txt"; die "after --update"; }
dump "$T/u" | sort > "$T/u.txt"
cmp -s "$T/ref.txt" "$T/u.txt" || die "codes after --update differ from a whole run's"

# another DVAE: a directory of its own beside the first
expect_rc 0 "$BIN/xtts-cache-codes" "$T/u" --dvae "$T/dvae2.pth" --mel-norms "$T/mel_stats.pth"
[ "$(ls -d "$T/u"/codes-* | wc -l)" -eq 2 ] || die "two DVAEs share a directory"
"$BIN/xtts-cache-verify" "$T/u" > "$T/v.txt" || { cat "$T/v.txt"; die "verify with two codes directories"; }
grep -q "audio codes: 2 directories, 480 records' codes whole" "$T/v.txt" || die "verify did not check both"

# a codes file cut short (a copy interrupted, a disk that filled): verify names the directory
# and exits 2, never a crash; so do an update of the cache and xtts-cache-codes
cp -a "$T/u" "$T/cut"
for f in "$T/cut"/codes-*/data.mdb; do truncate -s $(( $(stat -c %s "$f") / 3 )) "$f"; done
rc=0; "$BIN/xtts-cache-verify" "$T/cut" > "$T/v.txt" 2>&1 || rc=$?
[ $rc -eq 2 ] || { cat "$T/v.txt"; die "verify of a cut codes file: exit $rc"; }
for f in "$T/cut"/codes-*/data.mdb; do
  grep -q "$(basename "$(dirname "$f")")" "$T/v.txt" || { cat "$T/v.txt"; die "verify does not name a cut codes directory"; }
done
# an update of that cache, which carries the codes over: exit 2 naming the file, the cache as it was
cache_files() { (cd "$1" && find . -type f ! -name '*lock*' -exec md5sum {} + | sort); } # the lock files hold a pid
files_cut=$(cache_files "$T/cut")
expect_rc 2 "$BIN/xtts-melcache" --out "$T/cut" --audio int16 -j 2 -q --update "$T/many.tsv"
grep -q "codes-.*truncated" "$T/err.txt" || { cat "$T/err.txt"; die "the update does not name the cut codes file"; }
[ "$(cache_files "$T/cut")" = "$files_cut" ] || die "the failed update changed the cache"
# and xtts-cache-codes on it: the same, no crash
expect_rc 2 "$BIN/xtts-cache-codes" "$T/cut" "${M[@]}"
grep -q "codes-.*truncated" "$T/err.txt" || { cat "$T/err.txt"; die "xtts-cache-codes does not name the cut codes file"; }
echo "ok"
