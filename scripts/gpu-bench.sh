#!/usr/bin/env bash
# gpu-bench.sh — the whole GPU check of xtts-prep in one command, run from a bundle made by
# scripts/gpu-bundle.sh (`make gpu-bundle DIR=...`), where it is DIR/gpu-bench.sh:
#
#   bash DIR/gpu-bench.sh          (or, in the source tree, make gpu-bench [BUNDLE=DIR])
#
# On a machine with a CUDA device it runs, within GPU_BENCH_BUDGET seconds (default 340):
#   1. the CUDA unit tests (test_mel_cuda, test_train_cuda), with their output tail;
#   2. xtts-melcache --dtype fp32 on 1 h of 22,050 Hz audio with --device cpu and cuda, and
#      five records' mels compared (xtts-cache-inspect --npy, numpy; tolerance 1e-3);
#   3. xtts-melcache speed, fp16: 100 h at -j 16 on cpu, cuda and auto (which device auto
#      picked), and 20 h at -j 2, 4, 8 on cpu and cuda (where auto should switch);
#   4. xtts-train --device cuda --batch-size 16 on the 1 h cache, --model small (200 steps)
#      and base (40 steps), at --precision fp32, tf32 and bf16 (the last two only when the
#      program has --precision), median step time from --log-json; and 6 steps on the CPU;
#   5. the same model in PyTorch (bench/train-torch.py) replaying the first 60 (base:
#      40) batch shapes xtts-train fp32 logged, fp32, tf32 and bf16 autocast, when torch sees
#      a CUDA device;
# and ends with one table (check | figure | peer | ratio), also written to $OUT/gpu-bench.txt
# when OUT is set (with the training logs and the peer's output); exit status 1 when a row says FAILED, 0 otherwise. The audio is the bundle's few minutes of clips repeated under new ids, so
# the speed rows read it from the page cache: they time decoding and the mel, not the disk.
#
# Without a CUDA device every CUDA row says "skipped: no CUDA device (why)" and the CPU rows
# run on reduced sizes (GPU_BENCH_SMALL=1, the default there; GPU_BENCH_SMALL=0 forces the
# full sizes). Environment: OUT, PYTHON (default python3), GPU_BENCH_BUDGET, GPU_BENCH_SMALL,
# GPU_BENCH_WORK (scratch folder, default a new one under ${TMPDIR:-/tmp}, removed at the end).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")" && pwd)
BIN=$ROOT/bin
if [ ! -x "$BIN/xtts-melcache" ]; then
  echo "gpu-bench: $BIN/xtts-melcache not found: run this script from a bundle (make gpu-bundle DIR=...; make gpu-bench)" >&2
  exit 2
fi
PY=${PYTHON:-python3}
BUDGET=${GPU_BENCH_BUDGET:-340}
JMAX=16
START=$SECONDS
WORK=${GPU_BENCH_WORK:-}
if [ -z "$WORK" ]; then
  WORK=$(mktemp -d "${TMPDIR:-/tmp}/gpu-bench.XXXXXX")
  trap 'rm -rf "$WORK"' EXIT
fi
mkdir -p "$WORK"
ROWS=$WORK/rows.tsv
: > "$ROWS"

# ---- helpers ------------------------------------------------------------------------------
elapsed() { echo $((SECONDS - START)); }
left() { echo $((BUDGET - (SECONDS - START))); }
say() { echo "== [$(elapsed) s] $*"; }
row() { printf '%s\t%s\t%s\t%s\n' "$1" "$2" "${3:--}" "${4:--}" >> "$ROWS"; }
# stage NAME SECONDS: start a stage that needs about SECONDS, or say it is skipped (return 1)
# when the budget has not that much left
stage() {
  if [ "$(left)" -lt "$2" ]; then
    say "$1: skipped: out of time ($(elapsed) s of the ${BUDGET} s budget spent, the stage needs about $2 s)"
    return 1
  fi
  say "$1"
}
# cap SECONDS: a timeout no longer than what the budget has left (at least 10 s)
cap() { local l; l=$(left); [ "$l" -lt "$1" ] && { [ "$l" -lt 10 ] && l=10; echo "$l"; return; }; echo "$1"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a <= 0 || b <= 0) { print "-"; exit }
  r = a / b; if (r >= 1) printf "%.2fx faster\n", r; else printf "%.2fx slower\n", 1 / r }'; }

# the programs resolve their libraries from the bundle's lib/ and CUDA's from the machine;
# only the programs get this path, so that python3 and torch keep their own libraries
LIBPATH=$ROOT/lib
CUDA_SONAMES=$(cat "$ROOT/lib/cuda-sonames.txt" 2>/dev/null || true)
LIBPATH=$LIBPATH:/usr/local/cuda/lib64:/usr/local/cuda/targets/x86_64-linux/lib
unfound=()
for so in $CUDA_SONAMES; do
  [ -e "/usr/local/cuda/lib64/$so" ] || [ -e "/usr/local/cuda/targets/x86_64-linux/lib/$so" ] && continue
  grep -q " $so " <<< "$(ldconfig -p 2>/dev/null || /sbin/ldconfig -p 2>/dev/null)" && continue
  unfound+=("$so")
done
if [ ${#unfound[@]} -gt 0 ] && command -v nvidia-smi >/dev/null; then
  # CUDA libraries installed elsewhere (a Python wheel's nvidia/*/lib, another toolkit): one
  # search of the disk for all of them, bounded
  names=(); for so in "${unfound[@]}"; do names+=(-o -name "$so"); done
  declare -A dir_of=()
  while read -r f; do
    [ -n "${dir_of[$(basename "$f")]:-}" ] || dir_of[$(basename "$f")]=$(dirname "$f")
  done < <(timeout 30 find / -xdev \( -false "${names[@]}" \) -not -path '/proc/*' 2>/dev/null | sort || true)
  still=()
  for so in "${unfound[@]}"; do
    d=${dir_of[$so]:-}
    if [ -z "$d" ]; then still+=("$so"); continue; fi
    case ":$LIBPATH:" in *":$d:"*) ;; *) LIBPATH=$LIBPATH:$d ;; esac
  done
  unfound=("${still[@]}")
fi
for so in "${unfound[@]}"; do echo "gpu-bench: $so (needed by the CUDA plugin) is not on this machine"; done
XENV=(env "LD_LIBRARY_PATH=$LIBPATH${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
[ -f "$ROOT/lib/libxtts-cuda.so" ] && XENV+=("XTTS_CUDA_PLUGIN=$ROOT/lib/libxtts-cuda.so")
x() { "${XENV[@]}" "$@"; }

# melcache OUT DEVICE JOBS TOKENS [OPTIONS...]: build, print the summary line, leave
# "SECONDS DEVICE HOURS" in $WORK/last (nothing there when the build failed)
melcache() {
  local out=$1 dev=$2 j=$3 tok=$4; shift 4
  rm -rf "$out" "$WORK/last"
  sync  # the last build's pages written out, so that this one does not wait for their writeback
  local rc=0
  timeout "$(cap 150)" "${XENV[@]}" "$BIN/xtts-melcache" --out "$out" --device "$dev" -j "$j" \
    --max-frames 2048 -q "$@" "$tok" 2> "$WORK/mc.err" || rc=$?
  grep -E 'device:|records in' "$WORK/mc.err" | sed 's/^/   /' || true
  if [ $rc -ne 0 ] && [ $rc -ne 3 ]; then
    echo "   xtts-melcache --device $dev -j $j failed (exit $rc): $(tail -n1 "$WORK/mc.err")"
    return 1
  fi
  sed -n 's/.* \([0-9.]*\) h of audio, \([0-9.]*\) s (\([^)]*\)).*/\2 \3 \1/p' "$WORK/mc.err" | tail -n1 > "$WORK/last"
  [ -s "$WORK/last" ]
}
rate() { awk -v s="$1" -v h="$2" 'BEGIN { printf "%.1f s for %.1f h (%.0fx real time)\n", s, h, (s > 0 ? h * 3600 / s : 0) }'; }

# ---- 0. the machine, the device, the data ---------------------------------------------------
say "machine"
GPU_NAME="no NVIDIA GPU (no nvidia-smi)"
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | sed 's/^/   /' || true
  GPU_NAME=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n1 || true)
  GPU_NAME=${GPU_NAME:-no NVIDIA GPU (nvidia-smi lists none)}
fi
CPU_NAME="$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //') ($(nproc) cores)"
echo "   $CPU_NAME; $(cat "$ROOT/BUNDLE" 2>/dev/null | head -n1)"
missing=0
for f in "$BIN"/* "$ROOT"/lib/*.so "$ROOT"/tests/test_*; do
  [ -f "$f" ] || continue
  if grep -q 'not found' <<< "$(x ldd "$f" 2>/dev/null)"; then
    x ldd "$f" | grep 'not found' | sed "s|^|   $(basename "$f"): |"; missing=1
  fi
done
[ $missing = 0 ] && echo "   every bundled program and library finds its libraries"

# the clips' token stream, its audio paths rewritten to this folder, grown by repeating it
# under new ids: grow SRC DST COPIES
sed "s|@ROOT@|$ROOT/data|" "$ROOT/data/tokens.tsv" > "$WORK/base.tsv"
grow() {
  awk -F '\t' -v OFS='\t' -v n="$3" '
    /^#/ { print; next }
    { rec[++k] = $0 }
    END { for (c = 0; c < n; c++) for (i = 1; i <= k; i++) { nf = split(rec[i], f, "\t")
            line = f[1] "-r" c; for (j = 2; j <= nf; j++) line = line OFS f[j]; print line } }' "$1" > "$2"
}

# the bundle's clips once on the CPU (their hours), then once with --device cuda: whether the GPU
# path works here, and if not, why (--device auto would not say: it keeps so small a build on
# the CPU by design)
probe_rc=0
x "$BIN/xtts-melcache" --out "$WORK/probe" --device cpu -j 2 --max-frames 2048 -q "$WORK/base.tsv" 2> "$WORK/probe.err" || probe_rc=$?
base_h=$(sed -n 's/.* \([0-9.]*\) h of audio,.*/\1/p' "$WORK/probe.err" | tail -n1)
if [ $probe_rc -ne 0 ] && [ $probe_rc -ne 3 ] || [ -z "$base_h" ]; then
  echo "gpu-bench: xtts-melcache cannot build the bundle's own clips (exit $probe_rc): $(tail -n1 "$WORK/probe.err")" >&2
  exit 2
fi
rm -rf "$WORK/probe"
probe_rc=0
x "$BIN/xtts-melcache" --out "$WORK/probe" --device cuda -j 2 --max-frames 2048 -q "$WORK/base.tsv" 2> "$WORK/probe.err" || probe_rc=$?
rm -rf "$WORK/probe"
if [ $probe_rc -eq 0 ] || [ $probe_rc -eq 3 ]; then
  CUDA=1; NOCUDA=
else
  CUDA=0
  why=$(sed -n 's/.*no usable CUDA device: \(.*\)$/\1/p' "$WORK/probe.err" | head -n1 |
        sed 's/^no CUDA device or driver (\(.*\))$/\1/')
  [ -n "$why" ] || why="xtts-melcache --device cuda: exit $probe_rc: $(tail -n1 "$WORK/probe.err")"
  NOCUDA="skipped: no CUDA device ($why)"
fi
SMALL=${GPU_BENCH_SMALL:-$((1 - CUDA))}
if [ "$SMALL" = 1 ]; then CORR_H=0.2; BIG_H=0.5; SWEEP_H=0.2; else CORR_H=1; BIG_H=100; SWEEP_H=20; fi
copies() { awk -v h="$1" -v b="$base_h" 'BEGIN { c = int(h / b + 0.5); print (c < 1 ? 1 : c) }'; }
grow "$WORK/base.tsv" "$WORK/corr.tsv" "$(copies $CORR_H)"
grow "$WORK/base.tsv" "$WORK/big.tsv" "$(copies $BIG_H)"
grow "$WORK/base.tsv" "$WORK/sweep.tsv" "$(copies $SWEEP_H)"
echo "   clips: $(grep -vc '^#' "$WORK/base.tsv") records, $base_h h; grown to $CORR_H h, $SWEEP_H h and $BIG_H h" \
     "(GPU_BENCH_SMALL=$SMALL); device: $([ $CUDA = 1 ] && echo cuda:0 || echo "none, $NOCUDA")"

# ---- 1. the CUDA unit tests ------------------------------------------------------------------
for t in test_mel_cuda test_train_cuda; do
  if [ ! -x "$ROOT/tests/$t" ]; then row "$t" "skipped: not in the bundle (a build without nvcc)"; continue; fi
  stage "1. $t" 30 || { row "$t" "skipped: out of time"; continue; }
  rc=0
  (cd "$ROOT" && timeout "$(cap 120)" "${XENV[@]}" "tests/$t") > "$WORK/$t.log" 2>&1 || rc=$?
  tail -n 12 "$WORK/$t.log" | sed 's/^/   /'
  passed=$(sed -n 's/.*PASSED.*\] \([0-9]*\) test.*/\1/p' "$WORK/$t.log" | tail -n1)
  skipped=$(sed -n 's/.*SKIPPED.*\] \([0-9]*\) test.*/\1/p' "$WORK/$t.log" | tail -n1)
  if [ $CUDA = 0 ]; then row "$t" "$NOCUDA"
  elif [ $rc -eq 0 ]; then row "$t" "ok: ${passed:-0} passed, ${skipped:-0} skipped"
  else row "$t" "FAILED (exit $rc; see its output above)"; fi
done

# ---- 2. cpu and cuda mels compared -------------------------------------------------------------
have_corr_cpu=0
if stage "2. melcache fp32, $CORR_H h, -j $JMAX: cpu and cuda, five records compared" 30; then
  melcache "$WORK/corr-cpu" cpu $JMAX "$WORK/corr.tsv" --dtype fp32 && have_corr_cpu=1
  if [ $CUDA = 0 ]; then
    row "mel cpu vs cuda, fp32, $CORR_H h" "$NOCUDA"
  elif [ $have_corr_cpu = 1 ] && melcache "$WORK/corr-cuda" cuda $JMAX "$WORK/corr.tsv" --dtype fp32; then
    n=$(grep -vc '^#' "$WORK/corr.tsv")
    idx="0 $((n / 5)) $((2 * n / 5)) $((3 * n / 5)) $((n - 1))"
    for i in $idx; do for d in cpu cuda; do
      x "$BIN/xtts-cache-inspect" "$WORK/corr-$d" --index "$i" --npy "$WORK/m-$d-$i.npy" > /dev/null 2>&1 || true
    done; done
    worst=$("$PY" - "$WORK" $idx <<'PY' 2>&1 | tee /dev/stderr | tail -n1
import sys
import numpy as np
work, worst = sys.argv[1], 0.0
for i in sys.argv[2:]:
    a, b = np.load(f"{work}/m-cpu-{i}.npy"), np.load(f"{work}/m-cuda-{i}.npy")
    if a.shape != b.shape:
        sys.exit(f"record {i}: shapes differ, cpu {a.shape} cuda {b.shape}")
    d = float(np.abs(a.astype(np.float64) - b).max())
    worst = max(worst, d)
    print(f"   record {i}: {a.shape[0]} mels x {a.shape[1]} frames, max |cpu - cuda| {d:.2e}", file=sys.stderr)
print(f"{worst:.2e}")
PY
) || true
    if [[ $worst =~ ^[0-9.]+e[-+][0-9]+$ ]]; then
      verdict=$(awk -v w="$worst" 'BEGIN { print (w <= 1e-3 ? "ok" : "FAILED") }')
      row "mel cpu vs cuda, fp32, $CORR_H h" "max abs diff $worst over 5 records" "tolerance 1e-3" "$verdict"
    else
      row "mel cpu vs cuda, fp32, $CORR_H h" "FAILED: $worst"
    fi
    rm -rf "$WORK/corr-cuda"
  else
    row "mel cpu vs cuda, fp32, $CORR_H h" "FAILED: a build did not finish (see above)"
  fi
else
  row "mel cpu vs cuda, fp32" "skipped: out of time"
fi

# ---- 3. melcache speed ---------------------------------------------------------------------------
# speed LABEL TOKENS HOURS DEVICE JOBS: one timed build; its seconds in $WORK/t-DEVICE-JOBS-LABEL
speed() {
  local label=$1 tok=$2 h=$3 dev=$4 j=$5
  local name="melcache $dev -j $j, $h h fp16"
  if [ "$dev" = cuda ] && [ $CUDA = 0 ]; then row "$name" "$NOCUDA"; return; fi
  stage "3. $name" 20 || { row "$name" "skipped: out of time"; return; }
  if ! melcache "$WORK/speed" "$dev" "$j" "$tok"; then row "$name" "FAILED (see above)"; return; fi
  rm -rf "$WORK/speed"
  local s d hours
  read -r s d hours < "$WORK/last"
  echo "$s" > "$WORK/t-$dev-$j-$label"
  local fig peer="" rat=""
  fig=$(rate "$s" "$hours")
  if [ "$dev" = auto ]; then fig="$fig, picked $d"; fi
  if [ "$dev" != cpu ] && [ -s "$WORK/t-cpu-$j-$label" ]; then
    peer="cpu -j $j $(cat "$WORK/t-cpu-$j-$label") s"; rat=$(ratio "$(cat "$WORK/t-cpu-$j-$label")" "$s")
  fi
  row "$name" "$fig" "$peer" "$rat"
}
speed big "$WORK/big.tsv" $BIG_H cpu $JMAX
speed big "$WORK/big.tsv" $BIG_H cuda $JMAX
speed big "$WORK/big.tsv" $BIG_H auto $JMAX
for j in 2 4 8; do
  speed sweep "$WORK/sweep.tsv" $SWEEP_H cpu $j
  speed sweep "$WORK/sweep.tsv" $SWEEP_H cuda $j
done

# ---- 4 and 5. xtts-train, and the PyTorch peer on the same shapes ---------------------------------
# Results go to $WORK/res-NAME as "ms VALUE" or "msg TEXT"; the rows are made from them after each
# model, so that a row holds xtts-train's figure and its peer's side by side.
TRAIN_CACHE=$WORK/corr-cpu
has_precision=0
grep -q -- --precision <<< "$(x "$BIN/xtts-train" --help 2>&1)" && has_precision=1
res() { printf '%s %s\n' "$2" "$3" > "$WORK/res-$1"; }
# train MODEL DEVICE PRECISION STEPS: median step ms of xtts-train from its --log-json summary
train() {
  local m=$1 dev=$2 prec=$3 steps=$4 key=$1-$2-$3
  if [ "$dev" = cuda ] && [ $CUDA = 0 ]; then res "$key" msg "$NOCUDA"; return; fi
  if [ $have_corr_cpu = 0 ]; then res "$key" msg "skipped: no cache to train on (stage 2 did not build it)"; return; fi
  if [ -n "$prec" ] && [ "$prec" != fp32 ] && [ $has_precision = 0 ]; then
    res "$key" msg "skipped: this xtts-train has no --precision option"; return
  fi
  local est=40
  [ "$m" = base ] && est=60
  stage "4. xtts-train --device $dev --model $m ${prec:-fp32}, $steps steps, batch 16" $est ||
    { res "$key" msg "skipped: out of time"; return; }
  local log=$WORK/train-$key.jsonl opts=() rc=0
  [ $has_precision = 1 ] && [ "$dev" = cuda ] && opts=(--precision "$prec")
  [ "$dev" = cpu ] && opts=(-j "$JMAX")
  timeout "$(cap 150)" "${XENV[@]}" "$BIN/xtts-train" --cache "$TRAIN_CACHE" --device "$dev" --model "$m" \
    --steps "$steps" --batch-size 16 --log-every 50 --log-json "$log" "${opts[@]}" > "$WORK/train.out" 2>&1 || rc=$?
  tail -n 3 "$WORK/train.out" | sed 's/^/   /'
  local ms
  ms=$(sed -n 's/.*"summary".*"median_step_ms":\([0-9.]*\).*/\1/p' "$log" 2>/dev/null | tail -n1)
  if [ $rc -ne 0 ] || [ -z "$ms" ]; then res "$key" msg "FAILED (exit $rc; see above)"; return; fi
  res "$key" ms "$ms"
}
torch_why=$("$PY" -c 'import torch; assert torch.cuda.is_available(), "torch.cuda.is_available() is false"' 2>&1 | tail -n1) \
  && torch_ok=1 || torch_ok=0
# peer MODEL STEPS: the model in PyTorch, fp32, tf32 and bf16 autocast (one process), on the first
# STEPS batch shapes xtts-train fp32 logged
peer() {
  local m=$1 steps=$2 log=$WORK/train-$1-cuda-fp32.jsonl L C NH M PT PM V p
  local why=""
  if [ $CUDA = 0 ]; then why=$NOCUDA
  elif [ $torch_ok = 0 ]; then why="skipped: no PyTorch with CUDA ($torch_why)"
  elif [ ! -s "$log" ]; then why="skipped: no xtts-train log of $m to replay"
  elif ! stage "5. PyTorch $m fp32, tf32, bf16 on the CUDA device, the first $steps shapes of $(basename "$log")" 45; then
    why="skipped: out of time"
  fi
  if [ -n "$why" ]; then for p in fp32 tf32 bf16; do res "peer-$m-$p" msg "$why"; done; return; fi
  read -r L C NH <<< "$(case $m in small) echo 6 384 6;; base) echo 12 768 12;; esac)"
  read -r M PT PM V <<< "$("$PY" -c '
import json, sys
c = json.load(open(sys.argv[1]))["config"]
print(c["mel"]["n_mels"], c["max_tokens"] + 1, max([c["max_frames"]] + c["buckets"]), c["vocab_size"])' "$TRAIN_CACHE/manifest.json")"
  local rc=0 ms
  timeout "$(cap 150)" "$PY" "$ROOT/bench/train-torch.py" "$log" --layers "$L" --width "$C" --heads "$NH" \
    --mels "$M" --vocab "$V" --text-pos "$PT" --mel-pos "$PM" --device cuda --precision fp32,tf32,bf16 \
    --max-steps "$steps" > "$WORK/peer.json" 2> "$WORK/peer.err" || rc=$?
  [ $rc -eq 0 ] || tail -n 3 "$WORK/peer.err" | sed 's/^/   /'
  for p in fp32 tf32 bf16; do
    ms=$(sed -n "s/.*\"median_step_ms\": \([0-9.]*\).*\"precision\": \"$p\".*/\1/p" "$WORK/peer.json")
    if [ -n "$ms" ]; then
      echo "   PyTorch $m $p: median step $ms ms"; res "peer-$m-$p" ms "$ms"
    else
      err=$(sed -n "s/.*\"error\": \"\([^\"]*\)\".*\"precision\": \"$p\".*/\1/p" "$WORK/peer.json")
      res "peer-$m-$p" msg "FAILED (${err:-exit $rc; see above})"
    fi
  done
}
# train_row LABEL TRAIN-KEY [PEER-KEY PEER-NAME]
train_row() {
  local k v fig peer="" rat="" ours="" theirs=""
  read -r k v < "$WORK/res-$2"
  if [ "$k" = ms ]; then fig=$(printf '%.1f ms/step' "$v"); ours=$v; else fig=$v; fi
  if [ $# -ge 4 ]; then
    read -r k v < "$WORK/res-$3"
    if [ "$k" = ms ]; then peer=$(printf '%s %.1f ms' "$4" "$v"); theirs=$v
    elif [ "$v" != "$fig" ]; then peer="$4: $v"; fi
    [ -n "$ours" ] && [ -n "$theirs" ] && rat="xtts-train $(ratio "$theirs" "$ours")"
  fi
  row "$1" "$fig" "$peer" "$rat"
}
if [ "$SMALL" = 1 ]; then STEPS_SMALL=20; STEPS_BASE=10; else STEPS_SMALL=200; STEPS_BASE=40; fi
for m in small base; do
  steps=$STEPS_SMALL; [ $m = base ] && steps=$STEPS_BASE
  train $m cuda fp32 "$steps"; train $m cuda tf32 "$steps"; train $m cuda bf16 "$steps"
  peer $m $((steps < 60 ? steps : 60))
  train_row "train $m cuda fp32, batch 16" "$m-cuda-fp32" "peer-$m-fp32" "PyTorch fp32"
  train_row "train $m cuda tf32, batch 16" "$m-cuda-tf32" "peer-$m-tf32" "PyTorch tf32"
  train_row "train $m cuda bf16, batch 16" "$m-cuda-bf16" "peer-$m-bf16" "PyTorch bf16 autocast"
done
# the CPU path for reference (reduced: tiny there)
if [ "$SMALL" = 1 ]; then train tiny cpu "" 4; train_row "train tiny cpu -j $JMAX, batch 16" tiny-cpu-
else train small cpu "" 6; train_row "train small cpu -j $JMAX, batch 16" small-cpu-; fi

# ---- the table -------------------------------------------------------------------------------------
say "done"
table() {
  echo "xtts-prep GPU bench on $GPU_NAME, $CPU_NAME; $(elapsed) s of a ${BUDGET} s budget (GPU_BENCH_SMALL=$SMALL)"
  echo "bundle: $(cat "$ROOT/BUNDLE" 2>/dev/null | head -n1)"
  echo
  awk -F '\t' '
    { for (i = 1; i <= 4; i++) { c[NR, i] = $i; if (length($i) > w[i]) w[i] = length($i) } }
    END {
      split("check|figure|peer|ratio", h, "|")
      for (i = 1; i <= 4; i++) if (length(h[i]) > w[i]) w[i] = length(h[i])
      printf "| %-*s | %-*s | %-*s | %-*s |\n", w[1], h[1], w[2], h[2], w[3], h[3], w[4], h[4]
      printf "|%s|%s|%s|%s|\n", dash(w[1] + 2), dash(w[2] + 2), dash(w[3] + 2), dash(w[4] + 2)
      for (r = 1; r <= NR; r++)
        printf "| %-*s | %-*s | %-*s | %-*s |\n", w[1], c[r, 1], w[2], c[r, 2], w[3], c[r, 3], w[4], c[r, 4]
    }
    function dash(n,  s) { s = ""; while (n-- > 0) s = s "-"; return s }' "$ROWS"
}
echo
table | tee "$WORK/gpu-bench.txt"
# the table, and what it was made from (the training logs, the peer's lines), for a closer look
if [ -n "${OUT:-}" ]; then
  mkdir -p "$OUT" && cp "$WORK/gpu-bench.txt" "$OUT/gpu-bench.txt"
  for f in "$WORK"/train-*.jsonl "$WORK/peer.json" "$WORK/peer.err"; do [ -s "$f" ] && cp "$f" "$OUT/" || true; done
fi
! grep -q 'FAILED' "$ROWS"
