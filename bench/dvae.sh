#!/usr/bin/env bash
# bench/dvae.sh — the DVAE encoder (kernels/dvae.c, XTTS-v2's sizes, random weights) on the
# CPU beside its peers, measured side by side in this run, alternated, RUNS times: Debian's
# PyTorch running Coqui's own DiscreteVAE.get_codebook_indices with the same threads, and the
# machine's single-precision GEMM rate (numpy's BLAS: OpenBLAS under make bench) on the
# encoder's own products and on a square 2048 product. Prints hours of audio per minute and
# the ratios, medians of the runs (bench/src/bench_dvae.c, bench/src/bench_dvae_torch.py).
#
# Env: BUILD, PYTHON, THREADS (default nproc: the -j of xtts-cache-codes), DVAE_SECONDS (audio
# per pass, default 60), CLIP_SECONDS (default 10), RUNS (default 3), COQUI_TTS (a coqui-ai/TTS
# checkout or its git directory, e.g. `git clone --depth 1 https://github.com/coqui-ai/TTS`;
# without it PyTorch is not run), OPENBLAS_DIR (a folder holding OpenBLAS's libblas.so.3 for
# the peers; default Debian's openblas-openmp), CC.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
PYTHON=${PYTHON:-/usr/bin/python3}
THREADS=${THREADS:-$(nproc)}
DVAE_SECONDS=${DVAE_SECONDS:-60}
CLIP_SECONDS=${CLIP_SECONDS:-10}
RUNS=${RUNS:-3}
CC=${CC:-gcc}
LIB=$BUILD/lib/libxtts.a
[ -f "$LIB" ] || { echo "bench_dvae: $LIB not found; run make first" >&2; exit 2; }
mkdir -p "$BUILD/bench"
$CC -std=c17 -O2 -march=native -fopenmp -D_GNU_SOURCE -I"$ROOT" "$ROOT/bench/src/bench_dvae.c" "$LIB" -lm \
  -o "$BUILD/bench/bench_dvae"
OPENBLAS_DIR=${OPENBLAS_DIR:-/usr/lib/x86_64-linux-gnu/openblas-openmp}
peer_env=(env OMP_NUM_THREADS="$THREADS" OPENBLAS_NUM_THREADS="$THREADS")
blas="the machine's default libblas.so.3 ($(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3 2>/dev/null || echo '?'))"
if [ -f "$OPENBLAS_DIR/libblas.so.3" ]; then
  peer_env+=(LD_LIBRARY_PATH="$OPENBLAS_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
  blas="OpenBLAS ($(basename "$(readlink -f "$OPENBLAS_DIR/libblas.so.3")") in $OPENBLAS_DIR)"
fi
coqui=-
if [ -n "${COQUI_TTS:-}" ]; then coqui=$COQUI_TTS; fi
out=$BUILD/bench/dvae_runs.txt
: > "$out"
for r in $(seq 1 "$RUNS"); do
  OMP_NUM_THREADS=$THREADS "$BUILD/bench/bench_dvae" "$DVAE_SECONDS" "$CLIP_SECONDS" 2 | sed "s/^/$r /" >> "$out"
  "${peer_env[@]}" "$PYTHON" "$ROOT/bench/src/bench_dvae_torch.py" "$coqui" "$DVAE_SECONDS" "$CLIP_SECONDS" \
    "$THREADS" 2 | sed "s/^/$r /" >> "$out"
done
echo "DVAE encoder, XTTS-v2's sizes (80 -> 512 -> 1024, 3 residual blocks, codebook 512 x 1024), random"
echo "weights, ${DVAE_SECONDS} s of audio in ${CLIP_SECONDS} s clips each alone, $THREADS threads; medians of $RUNS"
echo "alternated runs (each the best of 2 passes). Load average before: $(cut -d' ' -f1-3 /proc/loadavg)."
echo "Peers' BLAS: $blas; PyTorch: $(awk '$2 == "torch_version" {print $3; exit}' "$out")."
echo
awk -v coqui="$coqui" '
  function med(a, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
                                   return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
  { v[$1, $2] = $3; if ($1 > runs) runs = $1 }
  END {
    for (r = 1; r <= runs; r++) {
      audio = v[r, "audio_s"]; gf = v[r, "gflop"]
      ours[r] = audio / 3600 / (v[r, "ours_s"] / 60); og[r] = gf / v[r, "ours_s"]
      gs[r] = v[r, "gemm_shapes_gflops"]; gq[r] = v[r, "gemm_square_gflops"]
      fs[r] = og[r] / gs[r]; fq[r] = og[r] / gq[r]
      if (coqui != "-") { pt[r] = audio / 3600 / (v[r, "torch_s"] / 60); ratio[r] = v[r, "torch_s"] / v[r, "ours_s"] }
    }
    printf "| | hours of audio per minute | GFLOP/s |\n|---|---|---|\n"
    printf "| ours (kernels/dvae.c) | %.3f | %.1f |\n", med(ours, runs), med(og, runs)
    if (coqui != "-") printf "| PyTorch, Coqui'"'"'s DiscreteVAE | %.3f | %.1f |\n", med(pt, runs), med(pt, runs) / med(ours, runs) * med(og, runs)
    else printf "| PyTorch, Coqui'"'"'s DiscreteVAE | not run (COQUI_TTS unset) | |\n"
    printf "| GEMM, the encoder'"'"'s shapes (numpy) | | %.1f |\n", med(gs, runs)
    printf "| GEMM, square 2048 (numpy) | | %.1f |\n\n", med(gq, runs)
    if (coqui != "-") printf "ours / PyTorch: %.2fx (median of the runs'"'"' ratios)\n", med(ratio, runs)
    printf "ours / GEMM rate: %.0f %% of the encoder'"'"'s shapes, %.0f %% of the square product (medians of the runs'"'"' ratios)\n", 100 * med(fs, runs), 100 * med(fq, runs)
  }' "$out"
