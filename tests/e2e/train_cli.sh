#!/usr/bin/env bash
# xtts-train's command line: help, version, usage errors (exit 1), devices, the loader-only
# mode, and a corrupt record stopping the run (exit 2) unless --skip-corrupt.
set -euo pipefail
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}" # see docs/xtts-train.md, "Threads"
: "${BUILD:?}" "${TMPDIR_TEST:?}"
T="$BUILD/bin/xtts-train"
W="$TMPDIR_TEST/train_cli"
rm -rf "$W"; mkdir -p "$W"
expect() { # expect RC CMD...
    local want=$1; shift
    set +e; "$@" > "$W/out.txt" 2> "$W/err.txt"; local rc=$?; set -e
    if [ "$rc" -ne "$want" ]; then echo "exit $rc, expected $want: $*" >&2; cat "$W/err.txt" >&2; exit 1; fi
}
expect 0 "$T" --help;     grep -q -- "--cache DIR" "$W/out.txt"
expect 0 "$T" --version;  grep -q "^xtts-train " "$W/out.txt"
expect 1 "$T";            grep -q "cache DIR is required" "$W/err.txt"
expect 1 "$T" --cache x --bogus
expect 1 "$T" --cache x --steps 0
expect 1 "$T" --cache x -j 0; grep -q -- "--threads 0: expected an integer" "$W/err.txt"   # -j names --threads (it crashed)
expect 1 "$T" --cache x extra-arg
expect 2 "$T" --cache "$W/none"; grep -q "$W/none" "$W/err.txt"

"$BUILD/tests/tools/synth-cache" "$W/cache" --records 24 --frames 32
# --device cuda without a usable device or CUDA path: exit 2 with the reason
expect 2 "$T" --cache "$W/cache" --device cuda --steps 1; grep -q -- "--device cuda" "$W/err.txt"
expect 1 "$T" --cache "$W/cache" --device tpu --steps 1
# --device auto falls back to the CPU with one line
expect 0 "$T" --cache "$W/cache" --device auto --steps 2 --width 32 --heads 2
test "$(grep -c "device: cpu (CUDA not used" "$W/err.txt")" -eq 1
# --precision: fp32, tf32, bf16 are words it knows; anything but fp32 needs a CUDA device
expect 0 "$T" --help; grep -q -- "--precision P" "$W/out.txt"
expect 1 "$T" --cache "$W/cache" --precision fp16 --steps 1; grep -q -- "--precision fp16: expected fp32, tf32 or bf16" "$W/err.txt"
expect 2 "$T" --cache "$W/cache" --device cpu --precision bf16 --steps 1
grep -q -- "--precision bf16 runs on a CUDA device only" "$W/err.txt"; test "$(wc -l < "$W/err.txt")" -eq 1
expect 2 "$T" --cache "$W/cache" --device cpu --precision tf32 --steps 1; grep -q -- "--precision tf32 runs on a CUDA device only" "$W/err.txt"
expect 0 "$T" --cache "$W/cache" --device cpu --precision fp32 --steps 1 --width 32 --heads 2
expect 1 "$T" --cache "$W/cache" --model nano --steps 1; grep -q "tiny, small or base" "$W/err.txt"
# the loader alone
expect 0 "$T" --cache "$W/cache" --loader-only --steps 20 --batch-size 4 --log-json "$W/loader.json"
grep -q "batches/s" "$W/err.txt"
grep -q '"samples_per_s"' "$W/loader.json"
# a corrupt record stops the run with its shard, index and id, unless --skip-corrupt
cp -r "$W/cache" "$W/bad"
"${PYTHON:-/usr/bin/python3}" - "$W/bad/shard-00000" <<'PYEOF'
import lmdb, struct, sys
env = lmdb.open(sys.argv[1], max_dbs=8, subdir=True, lock=False)
db = env.open_db(b"records")
with env.begin(write=True, db=db) as txn:
    key = struct.pack(">Q", 0)
    val = bytearray(txn.get(key))
    end = len(val)  # record version 1: the zstd frame ends the record
    if struct.unpack_from("<H", val, 4)[0] == 2:  # version 2: the end of the mel section
        tab = 64 + struct.unpack_from("<H", val, 12)[0]
        end = tab + 16 * val[11] + sum(struct.unpack_from("<I", val, tab + 16 * i + 4)[0] for i in range(2))
    val[end - 6] ^= 0x5A
    txn.put(key, bytes(val))
env.close()
PYEOF
expect 2 "$T" --cache "$W/bad" --steps 3 --batch-size 24 --width 32 --heads 2
grep -q "shard-00000" "$W/err.txt"; grep -q "synth00000" "$W/err.txt"; grep -q "xtts-cache-verify" "$W/err.txt"
expect 0 "$T" --cache "$W/bad" --steps 3 --batch-size 24 --width 32 --heads 2 --skip-corrupt
grep -q "skipped 1 corrupt record" "$W/err.txt"
# a record whose header fails its checksum: found by the start-up scan
cp -r "$W/cache" "$W/badhdr"
"${PYTHON:-/usr/bin/python3}" - "$W/badhdr/shard-00000" <<'PYEOF'
import lmdb, struct, sys
env = lmdb.open(sys.argv[1], max_dbs=8, subdir=True, lock=False)
db = env.open_db(b"records")
with env.begin(write=True, db=db) as txn:
    key = struct.pack(">Q", 1)
    val = bytearray(txn.get(key))
    val[20] ^= 0x01
    txn.put(key, bytes(val))
env.close()
PYEOF
expect 2 "$T" --cache "$W/badhdr" --steps 2 --width 32 --heads 2
grep -q "xtts-cache-verify" "$W/err.txt"
expect 0 "$T" --cache "$W/badhdr" --steps 2 --width 32 --heads 2 --skip-corrupt
grep -q "left out 1 record" "$W/err.txt"
echo "cli: ok"
