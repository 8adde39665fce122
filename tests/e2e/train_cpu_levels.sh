#!/usr/bin/env bash
# xtts-train: every instruction-set level of the CPU loops this machine runs (XTTS_CPU=
# baseline, avx2, avx512; docs/building.md) gives bit-identical per-step losses, gradient
# norms and validation losses, and byte-identical final checkpoints; a run that stops at the
# widest level and is resumed at the baseline ends as the uninterrupted runs do; where the
# portable build of `make install` is there ($BUILD/portable) and up to date, its runs too. An unknown
# XTTS_CPU is a usage error.
set -euo pipefail
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}" # see docs/xtts-train.md, "Threads"
: "${BUILD:?}" "${TMPDIR_TEST:?}"
T="$BUILD/bin/xtts-train"
W="$TMPDIR_TEST/train_cpu_levels"
rm -rf "$W"; mkdir -p "$W"

"$BUILD/tests/tools/synth-cache" "$W/cache" --records 24 --frames 40
# small enough for the baseline's emulated fused multiply-adds (seconds), wide enough for
# full and edge tiles of every level's matrix product
common=(--cache "$W/cache" --model tiny --width 48 --heads 2 --layers 2 --steps 4 --batch-size 4 --lr 1e-3
        --warmup 1 --threads 2 --loader-threads 2 --seed 11 --eval-every 2 --log-every 4 --device cpu)

# run NAME BINARY LEVEL [ARGS...]: a run with XTTS_CPU=LEVEL; prints the level that ran
run() {
    local name=$1 bin=$2 level=$3; shift 3
    XTTS_CPU=$level "$bin" "${common[@]}" --log-json "$W/$name.json" --ckpt "$W/ckpt_$name" "$@" 2> "$W/$name.err" ||
        { cat "$W/$name.err" >&2; return 1; }
    grep -o '"cpu_loops":"[a-z0-9]*"' "$W/$name.json" | tail -n 1 | cut -d'"' -f4
}
figures() { grep -o '"step":[0-9]*,"loss":[^,]*,"mel_loss":[^,]*,"stop_loss":[^,]*,"lr":[^,]*,"grad_norm":[^,]*\|"val_loss":[^,}]*' "$1"; }

ran=""
for level in baseline avx2 avx512; do
    got=$(run "$level" "$T" "$level")
    case " $ran " in *" $got "*) echo "XTTS_CPU=$level: runs $got (the widest this CPU has below it)"; continue ;; esac
    ran="$ran $got"
    echo "XTTS_CPU=$level: $(grep -o 'CPU loops: [a-z0-9]*' "$W/$level.err")"
    test "$(figures "$W/$level.json" | grep -c '"step"')" -eq 4
done
levels=($ran)
echo "levels compared: ${levels[*]} ($(grep -qw avx512f /proc/cpuinfo && echo "CPU has AVX-512" || echo "CPU has no AVX-512"))"
test "${levels[0]}" = baseline
first=${levels[0]}
figures "$W/$first.json" > "$W/$first.txt"
for l in "${levels[@]:1}"; do
    figures "$W/$l.json" > "$W/$l.txt"
    if ! diff "$W/$first.txt" "$W/$l.txt"; then echo "losses at $l differ from $first" >&2; exit 1; fi
    cmp "$W/ckpt_$first/train.ckpt" "$W/ckpt_$l/train.ckpt"
done

# stopped at the widest level after 2 steps, resumed at the baseline
top=${levels[${#levels[@]}-1]}
run half "$T" "$top" --stop-after 2 > /dev/null
cp -r "$W/ckpt_half" "$W/ckpt_resumed"
run resumed "$T" baseline --resume "$W/ckpt_resumed" > /dev/null
{ figures "$W/half.json"; figures "$W/resumed.json"; } > "$W/mixed.txt"
diff "$W/$first.txt" "$W/mixed.txt"
cmp "$W/ckpt_$first/train.ckpt" "$W/ckpt_resumed/train.ckpt"
echo "resumed at baseline after $top: identical"

# the portable build, when make install has made it from this source (not older than $T)
P="$BUILD/portable/bin/xtts-train"
if [ -x "$P" ] && ! [ "$P" -ot "$T" ]; then
    for level in baseline avx512; do
        got=$(run "portable_$level" "$P" "$level")
        figures "$W/portable_$level.json" | diff "$W/$first.txt" -
        cmp "$W/ckpt_$first/train.ckpt" "$W/ckpt_portable_$level/train.ckpt"
        echo "portable build, XTTS_CPU=$level ($got): identical"
    done
fi

# an unknown level is refused
if XTTS_CPU=sse9 "$T" "${common[@]}" 2> "$W/bad.err"; then echo "XTTS_CPU=sse9 was accepted" >&2; exit 1; fi
rc=0; XTTS_CPU=sse9 "$T" "${common[@]}" 2> /dev/null || rc=$?
test "$rc" -eq 1
grep -q 'XTTS_CPU=sse9' "$W/bad.err"
