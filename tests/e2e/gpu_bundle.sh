#!/usr/bin/env bash
# e2e: long
# The GPU bundle (scripts/gpu-bundle.sh, make gpu-bundle; docs/gpu.md, "The GPU check") made from
# BUILD into a new folder:
#   1. every program, CUDA test and library in it resolves every library but glibc's and CUDA's
#      from the bundle's own lib/ (libsndfile, liblmdb, libzstd among them), and a bundled
#      program runs from there; the bundle is under the 64 MiB a GPU job can carry; its token
#      stream names its audio as @ROOT@/wavs/..., never by this machine's paths
#   2. gpu-bench.sh from the bundle runs to the end (reduced sizes without a device) and prints
#      its one table, also to $OUT/gpu-bench.txt: without a CUDA device every CUDA row says
#      "skipped: no CUDA device (...)", and the CPU rows of xtts-melcache hold their figures
#   3. a non-empty folder that is no bundle is refused, and left as it was
# (make gpu-bundle bundles the portable build; this test bundles BUILD, which make test has built.)
set -euo pipefail
: "${BUILD:?}" "${TMPDIR_TEST:?}"
HERE=$(cd "$(dirname "$0")/../.." && pwd)
T=$TMPDIR_TEST
PY=${PYTHON:-/usr/bin/python3}
die() { echo "FAIL: $*" >&2; exit 1; }
if grep -q 'lib[a-z]*san' <<< "$(ldd "$BUILD/bin/xtts-melcache")"; then
  echo "skip: $BUILD is a sanitizer build (its runtime would be bundled and the bench run under it)"; exit 0
fi
B=$T/bundle
bash "$HERE/scripts/gpu-bundle.sh" --from "$BUILD" "$B" > "$T/bundle.log" 2>&1 || { cat "$T/bundle.log"; die "gpu-bundle.sh failed"; }
cat "$T/bundle.log"

# ---- 1. self-contained ------------------------------------------------------------------------
glibc='^(libc|libm|libpthread|libdl|librt|libresolv|libutil|ld-linux[-a-z0-9_]*|linux-vdso)\.so'
cuda='^(libcudart|libcublas|libcublasLt|libcufft)\.so'
n=0
for f in "$B"/bin/* "$B"/lib/*.so* "$B"/tests/test_*; do
  [ -f "$f" ] || continue
  n=$((n + 1))
  LD_LIBRARY_PATH=$B/lib ldd "$f" > "$T/ldd" 2>&1 || die "ldd $f failed: $(head -n1 "$T/ldd")"
  while read -r soname arrow path _; do
    [ "$arrow" = "=>" ] || continue
    [[ $soname =~ $glibc ]] && continue
    [[ $soname =~ $cuda ]] && continue
    case $path in
      "$B"/lib/*) ;;
      *) die "$(basename "$f"): $soname resolves to $path, outside the bundle's lib/" ;;
    esac
  done < "$T/ldd"
done
[ $n -ge 10 ] || die "only $n files checked in $B"
LD_LIBRARY_PATH=$B/lib ldd "$B/bin/xtts-melcache" > "$T/ldd"
for so in libsndfile.so.1 liblmdb.so.0 libzstd.so.1; do
  grep -q "$so => $B/lib/$so" "$T/ldd" || die "xtts-melcache does not load $so from the bundle: $(grep "$so" "$T/ldd")"
done
if [ -f "$BUILD/lib/libxtts-cuda.so" ]; then
  for f in lib/libxtts-cuda.so tests/test_mel_cuda tests/test_train_cuda tests/golden/train_tiny.bin; do
    [ -f "$B/$f" ] || die "the bundle lacks $f"
  done
  grep -q '^libcudart' "$B/lib/cuda-sonames.txt" || die "lib/cuda-sonames.txt does not name libcudart"
  ! grep -Eq "$cuda" <<< "$(ls "$B"/lib)" || die "a CUDA library was bundled: $(ls "$B"/lib | grep -E "$cuda")"
fi
v=$(cd / && env -i PATH=/usr/bin:/bin LD_LIBRARY_PATH="$B/lib" "$B/bin/xtts-melcache" --version)
[ "$v" = "xtts-melcache $(cat "$HERE/VERSION")" ] || die "the bundled xtts-melcache --version says '$v'"
bytes=$(du -sb "$B" | cut -f1)
[ "$bytes" -lt $((64 * 1048576)) ] || die "the bundle is $bytes bytes, over 64 MiB"
grep -q $'\t@ROOT@/wavs/BENCH-00001.wav\t' "$B/data/tokens.tsv" || die "data/tokens.tsv does not name @ROOT@/wavs/BENCH-00001.wav"
! grep -q "$T\|/tmp/" "$B/data/tokens.tsv" || die "data/tokens.tsv names a path of this machine"
[ "$(grep -vc '^#' "$B/data/tokens.tsv")" = "$(ls "$B/data/wavs" | wc -l)" ] || die "tokens.tsv and data/wavs differ in count"

# ---- 2. the bench from the bundle ----------------------------------------------------------------
rc=0
(cd "$T" && PYTHON=$PY OUT=$T/out GPU_BENCH_SMALL=1 GPU_BENCH_BUDGET=120 GPU_BENCH_WORK=$T/work bash "$B/gpu-bench.sh") > "$T/bench.log" 2>&1 || rc=$?
cat "$T/bench.log"
[ $rc -eq 0 ] || die "gpu-bench.sh exited $rc"
[ -s "$T/out/gpu-bench.txt" ] || die "no \$OUT/gpu-bench.txt"
tail -n "$(wc -l < "$T/out/gpu-bench.txt")" "$T/bench.log" | cmp -s - "$T/out/gpu-bench.txt" ||
  die "\$OUT/gpu-bench.txt is not the table that ends the output"
grep -q '^| check  *| figure  *| peer  *| ratio  *|$' "$T/out/gpu-bench.txt" || die "no table header"
# figure CHECK-PREFIX: the figure column of the row whose check begins with CHECK-PREFIX
figure() { awk -F ' *[|] *' -v c="$1" 'index($2, c) == 1 { print $3; exit }' "$T/out/gpu-bench.txt"; }
for j in 16 2 4 8; do
  f=$(figure "melcache cpu -j $j,")
  [[ $f =~ ^[0-9.]+\ s\ for\ [0-9.]+\ h\ \([0-9]+x\ real\ time\)$ ]] || die "row melcache cpu -j $j: '$f'"
done
f=$(figure "melcache auto -j 16,")
[[ $f =~ picked\ (cpu|cuda:0)$ ]] || die "row melcache auto: '$f'"
if grep -q 'device: none, skipped: no CUDA device' "$T/bench.log"; then
  [[ $f =~ picked\ cpu$ ]] || die "without a device auto picked: '$f'"
  rows=0
  for c in test_mel_cuda test_train_cuda "mel cpu vs cuda" "melcache cuda -j 16" "melcache cuda -j 2" \
           "train small cuda fp32" "train small cuda tf32" "train small cuda bf16" "train base cuda fp32" \
           "train base cuda tf32" "train base cuda bf16"; do
    f=$(figure "$c")
    # (a build without nvcc bundles no CUDA tests: their rows say so instead)
    [[ $f =~ ^skipped:\ (no\ CUDA\ device|not\ in\ the\ bundle)\ \(.+\)$ ]] || die "row $c without a device: '$f'"
    rows=$((rows + 1))
  done
  [ $rows = 11 ] || die "$rows CUDA rows checked"
fi
# the bundle's plugin is the one its programs were built with (a stale plugin from an earlier
# build is refused by its ABI string, which would hide every CUDA row on a GPU machine)
! grep -q "this program needs 'xtts-cuda-plugin" "$T/bench.log" || die "the bundled CUDA plugin is stale"

f=$(figure "train tiny cpu")
[[ $f =~ ^[0-9.]+\ ms/step$ ]] || die "row train tiny cpu: '$f'"
! grep -q FAILED "$T/out/gpu-bench.txt" || die "a row FAILED"

# ---- 3. a folder that is no bundle is left alone --------------------------------------------------
mkdir -p "$T/mine" && echo keep > "$T/mine/notes.txt"
rc=0; bash "$HERE/scripts/gpu-bundle.sh" --from "$BUILD" "$T/mine" 2> "$T/refuse.err" || rc=$?
[ $rc -eq 2 ] && grep -q 'no bundle' "$T/refuse.err" && [ "$(cat "$T/mine/notes.txt")" = keep ] ||
  die "a non-empty folder: rc=$rc $(cat "$T/refuse.err")"
echo ok
