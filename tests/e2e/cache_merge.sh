#!/usr/bin/env bash
# xtts-cache-merge: command-line contract (help, version, exit codes) and a real merge of
# two parts written here with Python's lmdb, whose configuration hash is computed from
# formats/cache.md's definition (sorted compact JSON, jansson's number format).
set -euo pipefail
: "${BUILD:?}" "${TMPDIR_TEST:?}"
PYTHON=${PYTHON:-/usr/bin/python3}
merge="$BUILD/bin/xtts-cache-merge"
dir="$TMPDIR_TEST/cache"

grep -q "usage: xtts-cache-merge" <<< "$("$merge" --help)"
"$merge" --version | grep -q "^xtts-cache-merge [0-9]"
set +e
"$merge" >/dev/null 2>&1; [ $? -eq 1 ] || { echo "no argument: want exit 1"; exit 1; }
"$merge" --bogus "$TMPDIR_TEST" >/dev/null 2>&1; [ $? -eq 1 ] || { echo "bad option: want exit 1"; exit 1; }
mkdir -p "$TMPDIR_TEST/empty"
msg=$("$merge" "$TMPDIR_TEST/empty" 2>&1); rc=$?
[ $rc -eq 2 ] || { echo "empty dir: want exit 2, got $rc"; exit 1; }
echo "$msg" | grep -q "no partial manifests" || { echo "empty dir message: $msg"; exit 1; }
"$merge" "$TMPDIR_TEST/does-not-exist" >/dev/null 2>&1; [ $? -eq 2 ] || { echo "missing dir: want exit 2"; exit 1; }
set -e

# Two parts of the default configuration: part 0 with 3 + 2 records, part 1 with 4.
"$PYTHON" - "$dir" <<'PY'
import hashlib, json, os, struct, sys
import lmdb

def jnum(x):
    """A JSON number as jansson writes it (%.17g, '.0' added, exponent without + or 0s)."""
    if isinstance(x, int):
        return str(x)
    s = format(x, ".17g")
    if "." not in s and "e" not in s:
        s += ".0"
    if "e" in s:
        m, e = s.split("e")
        sign = "-" if e.startswith("-") else ""
        s = m + "e" + sign + e.lstrip("+-").lstrip("0")
    return s

def jdump(v):
    if isinstance(v, dict):
        return "{" + ",".join(json.dumps(k) + ":" + jdump(v[k]) for k in sorted(v)) + "}"
    if isinstance(v, list):
        return "[" + ",".join(jdump(x) for x in v) + "]"
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return json.dumps(v)
    return jnum(v)

config = {
    "mel": {"preset": "xtts", "sample_rate": 22050, "n_fft": 1024, "hop_samples": 256, "win_samples": 1024,
            "n_mels": 80, "fmin_hz": 0.0, "fmax_hz": 8000.0, "mel_scale": "htk", "mel_norm": "slaney",
            "center": 1, "pad_samples": 0, "power": 2, "mag_eps": 0.0, "log": "ln", "log_floor": 1e-5,
            "drop_last_frame": 0, "whisper_post": 0},
    "tokenizer": "bytes", "vocab_hash": "", "vocab_size": 0, "max_tokens": 512, "pad_token": 0,
    "max_frames": 1024, "buckets": [], "dtype": "fp16", "shuffle": 0, "zstd_level": 3, "resampler": "soxr",
    "resample_quality": "hq", "trim_db": 0.0, "val_fraction": 0.0, "algo_version": 1,
}
chash = hashlib.sha256(jdump(config).encode()).hexdigest()
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
layout = {0: [3, 2], 1: [4]}
for part, counts in layout.items():
    shards, first = [], 0
    for n, count in enumerate(counts):
        name = "shard-%05d-%05d" % (part, n)
        env = lmdb.open(os.path.join(out, name), max_dbs=4, map_size=1 << 24)
        recs, ids, meta = env.open_db(b"records"), env.open_db(b"ids"), env.open_db(b"meta")
        with env.begin(write=True) as txn:
            for k in range(count):
                key = struct.pack(">Q", k)
                txn.put(key, b"x" * 100, db=recs)
                txn.put(("p%d-s%d-%d" % (part, n, k)).encode(), key, db=ids)
            txn.put(b"format", b"xtts-cache 1", db=meta)
            txn.put(b"config_hash", chash.encode(), db=meta)
        env.close()
        shards.append({"name": name, "records": count, "bytes": 100 * count, "first_index": first})
        first += count
    m = {"format_version": 1, "tool_version": "test", "records": first, "config": config, "config_hash": chash,
         "shards": shards, "rejected": 1, "rejects": [{"input": 99 + part, "id": "bad%d" % part, "reason": "x"}],
         "speakers": ["a", "b"], "part": part, "n_parts": 2, "part_inputs": [[0, 6], [6, 11]][part],
         "totals": {"audio_seconds": 1800.0 * (part + 1), "frames": 10 * first},
         "stats": {"frames": 10 * first, "mel_sum": [1.0 * (part + 1)] * 80, "mel_sumsq": [2.0 * (part + 1)] * 80}}
    with open(os.path.join(out, "manifest.part-%05d.json" % part), "w") as f:
        json.dump(m, f, indent=2)
PY

"$merge" "$dir" 2>"$TMPDIR_TEST/merge.err" || { cat "$TMPDIR_TEST/merge.err"; exit 1; }
grep -q "3 shards, 9 records, 2 rejected" "$TMPDIR_TEST/merge.err"
"$PYTHON" - "$dir/manifest.json" <<'PY'
import json, math, sys
m = json.load(open(sys.argv[1]))
assert m["records"] == 9, m["records"]
assert [s["name"] for s in m["shards"]] == ["shard-00000-00000", "shard-00000-00001", "shard-00001-00000"]
assert [s["first_index"] for s in m["shards"]] == [0, 3, 5]
assert "part" not in m and "n_parts" not in m and "part_inputs" not in m
assert [r["id"] for r in m["rejects"]] == ["bad0", "bad1"]
assert abs(m["totals"]["hours"] - 1.5) < 1e-12
st = m["stats"]
assert st["frames"] == 90
mean = 3.0 / 90
assert abs(st["mel_mean"][0] - mean) < 1e-12
assert abs(st["mel_std"][5] - math.sqrt(6.0 / 90 - mean * mean)) < 1e-12
PY

# Refusals: a missing part, and a part with another configuration.
mv "$dir/manifest.part-00001.json" "$TMPDIR_TEST/p1.json"
rm "$dir/manifest.json"
set +e
msg=$("$merge" "$dir" 2>&1); rc=$?
set -e
[ $rc -eq 2 ] || { echo "missing part: want exit 2, got $rc"; exit 1; }
echo "$msg" | grep -q "manifest.part-00001.json is missing" || { echo "missing part message: $msg"; exit 1; }
[ ! -e "$dir/manifest.json" ]
"$PYTHON" - "$TMPDIR_TEST/p1.json" "$dir/manifest.part-00001.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["config"]["max_tokens"] = 256          # config_hash no longer matches its config
json.dump(m, open(sys.argv[2], "w"))
PY
set +e
msg=$("$merge" "$dir" 2>&1); rc=$?
set -e
[ $rc -eq 2 ] || { echo "bad part: want exit 2, got $rc"; exit 1; }
echo "$msg" | grep -q "manifest.part-00001.json" || { echo "bad part message: $msg"; exit 1; }
echo "ok"
