#!/usr/bin/env bash
# xtts-cache-verify and xtts-cache-inspect on intact synthetic caches: exit codes, the
# digest (equal across shard layouts), --json, summaries, histograms, .npy and PNG exports.
set -euo pipefail
: "${BUILD:?}" "${TMPDIR_TEST:?}"
PY=${PYTHON:-/usr/bin/python3}
V=$BUILD/bin/xtts-cache-verify
I=$BUILD/bin/xtts-cache-inspect
MK=$BUILD/tests/test_reader
T=$TMPDIR_TEST
die() { echo "FAIL: $*" >&2; exit 1; }

[ -x "$MK" ] || die "$MK not built (make all)"
"$MK" --make-cache "$T/a" 40 15 fp16
"$MK" --make-cache "$T/b" 40 7 fp16
"$MK" --make-cache "$T/c" 40 15 fp32

# usage
grep -q 'usage: xtts-cache-verify' <<< "$("$V" --help)" || die "verify --help"
"$V" --version | grep -q '^xtts-cache-verify ' || die "verify --version"
set +e; "$V" >/dev/null 2>&1; rc=$?; "$V" --bogus "$T/a" >/dev/null 2>&1; rc2=$?; set -e
[ $rc -eq 1 ] && [ $rc2 -eq 1 ] || die "usage errors must exit 1 (got $rc, $rc2)"
grep -q 'usage: xtts-cache-inspect' <<< "$("$I" --help)" || die "inspect --help"
set +e; "$I" --npy x.npy "$T/a" >/dev/null 2>&1; rc=$?; set -e
[ $rc -eq 1 ] || die "inspect --npy without a record must exit 1"

# verify: intact caches pass, with one digest line; shard layout does not change it
"$V" "$T/a" > "$T/va.txt" || die "verify a: $(cat "$T/va.txt")"
"$V" --deep "$T/b" > "$T/vb.txt" || die "verify --deep b: $(cat "$T/vb.txt")"
grep -q '^result: OK$' "$T/va.txt" || die "no OK result"
grep -q '^faults: 0$' "$T/va.txt" || die "faults not 0"
da=$(sed -n 's/^digest: \([0-9a-f]\{64\}\)$/\1/p' "$T/va.txt")
db=$(sed -n 's/^digest: \([0-9a-f]\{64\}\)$/\1/p' "$T/vb.txt")
[ -n "$da" ] && [ "$da" = "$db" ] || die "digests differ across shard layouts: '$da' '$db'"
dc=$("$V" "$T/c" | sed -n 's/^digest: //p')
[ "$dc" != "$da" ] || die "fp32 and fp16 caches must not share a digest"

# --json
"$V" --json "$T/a" > "$T/va.json"
"$PY" - "$T/va.json" "$da" <<'PYEOF'
import json, sys
j = json.load(open(sys.argv[1]))
assert j["ok"] is True and j["faults"] == 0 and j["fault_list"] == [], j
assert j["records"] == 40 and j["records_checked"] == 40 and j["shards"] == 3, j
assert j["digest"] == sys.argv[2] and j["digest_complete"] is True
assert j["train"] + j["val"] == 40 and j["val"] == 8
PYEOF

# inspect: summary with histograms, --stats, --json
"$I" "$T/a" > "$T/ia.txt"
grep -q '^records: 40$' "$T/ia.txt" || die "inspect summary records"
grep -q '^frames per record: min 1' "$T/ia.txt" || die "inspect frames histogram"
grep -q '^tokens per record:' "$T/ia.txt" || die "inspect tokens histogram"
grep -q 'shard-00002  first 30  records 10' "$T/ia.txt" || die "inspect shards"
grep -q 'buckets 12,24,48, dtype fp16' "$T/ia.txt" || die "inspect config"
grep -q '^     15 ' <<< "$("$I" --stats --no-lengths "$T/a")" || die "inspect --stats channel lines"
"$I" --json --stats "$T/a" > "$T/ia.json"
"$PY" - "$T/ia.json" <<'PYEOF'
import json, sys
j = json.load(open(sys.argv[1]))
assert j["records"] == 40
h = j["frames_histogram"]
assert h["n"] == 40 and sum(b["count"] for b in h["bins"]) == 40, h
assert len(j["stats"]["mel_mean"]) == 16
assert [s["name"] for s in j["shards"]] == ["shard-00000", "shard-00001", "shard-00002"]
PYEOF

# one record: text, --json, --npy, --png (stdout too)
grep -q '^id: utt-00003$' <<< "$("$I" --index 3 "$T/a")" || die "inspect --index"
"$I" --id utt-00022 --json "$T/a" > "$T/r22.json"
"$PY" -c "import json,sys; j=json.load(open(sys.argv[1])); assert j['index']==22 and j['id']=='utt-00022' and j['shard']=='shard-00001' and len(j['tokens'])==j['n_tokens'], j" "$T/r22.json"
"$I" --id utt-00022 --npy "$T/r22.npy" --png "$T/r22.png" --bare --scale 3 --colormap magma "$T/a"
"$I" --index 22 --npy - "$T/a" > "$T/r22s.npy"
cmp -s "$T/r22.npy" "$T/r22s.npy" || die "--npy - differs from --npy FILE"
"$I" --index 22 --png - --bare --width 100 --height 40 "$T/a" > "$T/r22s.png"
"$I" --index 22 --png "$T/r22f.png" "$T/a"   # the figure: axes, colour bar and title around the mel
"$PY" - "$T" <<'PYEOF'
import json, struct, sys
import numpy as np
t = sys.argv[1]
r = json.load(open(t + "/r22.json"))
m = np.load(t + "/r22.npy")
assert m.dtype == np.float32 and m.shape == (16, r["n_frames"]), m.shape
def png_size(p):
    b = open(p, "rb").read(24)
    assert b[:8] == b"\x89PNG\r\n\x1a\n", p
    return struct.unpack(">II", b[16:24])
assert png_size(t + "/r22.png") == (3 * r["n_frames"], 3 * 16), png_size(t + "/r22.png")
assert png_size(t + "/r22s.png") == (100, 40)
fw, fh = png_size(t + "/r22f.png")
assert fw > 800 and fh > 320, (fw, fh)   # at least 800 x 320 pixels of mel, margins around
PYEOF
set +e; "$I" --id no-such-id "$T/a" >/dev/null 2>"$T/err.txt"; rc=$?; set -e
[ $rc -eq 2 ] && grep -q "no-such-id" "$T/err.txt" || die "unknown id must exit 2 naming it"
echo "ok"
