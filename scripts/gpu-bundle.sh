#!/usr/bin/env bash
# gpu-bundle.sh --from BUILD DIR — put into DIR what a GPU machine without Debian's packages
# needs to run the GPU check (scripts/gpu-bench.sh) with one command, `bash DIR/gpu-bench.sh`:
#
#   DIR/gpu-bench.sh       the check
#   DIR/bin/               BUILD's programs (debug sections stripped)
#   DIR/lib/               the CUDA plugin libxtts-cuda.so, libxtts-reader.so, and every shared
#                          library ldd lists for the programs, tests and plugin except glibc's
#                          own (libc, libm, libpthread, libdl, librt, ld-linux, vdso) and CUDA's
#                          (libcudart, libcublas, libcublasLt, libcufft: the GPU machine has
#                          its own; lib/cuda-sonames.txt names them for gpu-bench.sh to find)
#   DIR/tests/             test_mel_cuda, test_train_cuda and tests/golden/train_tiny.bin
#                          (which test_train_cuda opens relative to its working directory, DIR)
#   DIR/bench/             train-torch.py, the PyTorch peer of xtts-train
#   DIR/data/              6 minutes of generated 22,050 Hz speech (bench/make-data.sh)
#                          and its token stream, whose audio paths begin with @ROOT@ (gpu-bench.sh
#                          puts DIR/data there and grows the stream to 1, 20 and 100 h)
#   DIR/BUNDLE             what was bundled: version, build, date
#
# `make gpu-bundle DIR=...` calls it on the portable build (make install's, PORTABLE_OPT) with
# the plugin and the CUDA tests; `make gpu-bench` on BUILD itself. DIR must be new, empty, or
# an earlier bundle (replaced). The bundle must fit in 64 MiB (what the GPU machine's job can
# carry); the script fails, saying by how much, when it does not.
set -euo pipefail
export LC_ALL=C
usage() { echo "usage: $0 --from BUILD DIR" >&2; exit 1; }
[ $# -eq 3 ] && [ "$1" = --from ] || usage
FROM=$(cd "$2" 2>/dev/null && pwd) || { echo "gpu-bundle: $2: no such build folder" >&2; exit 2; }
DIR=$3
HERE=$(cd "$(dirname "$0")/.." && pwd)
LIMIT_MIB=64
die() { echo "gpu-bundle: $*" >&2; exit 2; }

progs=("$FROM"/bin/xtts-*)
[ -x "${progs[0]}" ] || die "$FROM/bin has no xtts-* programs (run make first)"
for p in xtts-melcache xtts-train xtts-cache-inspect xtts-tokenize; do
  [ -x "$FROM/bin/$p" ] || die "$FROM/bin/$p is missing (run make first)"
done
for tool in ldd strip; do command -v $tool >/dev/null || die "$tool is not installed"; done
if [ -e "$DIR" ] && [ -n "$(ls -A "$DIR")" ] && [ ! -f "$DIR/BUNDLE" ]; then
  die "$DIR is a non-empty folder that is no bundle (it has no BUNDLE file); choose another"
fi
rm -rf "$DIR"
mkdir -p "$DIR"/{bin,lib,tests/golden,bench,data}
DIR=$(cd "$DIR" && pwd)

# ---- programs, plugin, tests ----------------------------------------------------------------
for p in "${progs[@]}"; do strip --strip-debug -o "$DIR/bin/$(basename "$p")" "$p"; done
cp "$FROM/lib/libxtts-reader.so" "$DIR/lib/" 2>/dev/null || true
cuda=0
if [ -f "$FROM/lib/libxtts-cuda.so" ]; then
  # the plugin must carry the ABI string of these sources (the programs refuse another)
  abi=$(sed -n 's/^#define XTTS_CUDA_PLUGIN_ABI "\(.*\) " XTTS_VERSION$/\1/p' "$HERE/kernels/cuda_plugin.h")
  grep -aq "$abi $(cat "$HERE/VERSION")" "$FROM/lib/libxtts-cuda.so" ||
    die "$FROM/lib/libxtts-cuda.so is not '$abi $(cat "$HERE/VERSION")' (a stale plugin: rebuild it, make $FROM/lib/libxtts-cuda.so)"
  strip --strip-debug -o "$DIR/lib/libxtts-cuda.so" "$FROM/lib/libxtts-cuda.so"; cuda=1
  for t in test_mel_cuda test_train_cuda; do
    [ -x "$FROM/tests/$t" ] || die "$FROM/tests/$t is missing (make $FROM/tests/$t)"
    strip --strip-debug -o "$DIR/tests/$t" "$FROM/tests/$t"
  done
  cp "$HERE/tests/golden/train_tiny.bin" "$DIR/tests/golden/"
else
  echo "gpu-bundle: $FROM has no CUDA plugin (built without nvcc): the bundle runs the CPU rows only" >&2
fi

# ---- the libraries ldd lists, but glibc's and CUDA's -----------------------------------------
is_glibc='^(libc|libm|libpthread|libdl|librt|libresolv|libutil|ld-linux[-a-z0-9_]*|linux-vdso|linux-gate)\.so'
is_cuda='^(libcudart|libcublas|libcublasLt|libcufft)\.so'
: > "$DIR/lib/cuda-sonames.txt"
for f in "$DIR"/bin/* "$DIR"/lib/*.so "$DIR"/tests/test_*; do
  [ -f "$f" ] || continue
  if grep -q 'not found' <<< "$(ldd "$f")"; then
    die "$(basename "$f"): $(ldd "$f" | grep -m1 'not found' | tr -s ' \t' ' ') on this machine"
  fi
  ldd "$f" | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }'
done | sort -u | while read -r soname path; do
  if [[ $soname =~ $is_glibc ]]; then continue; fi
  if [[ $soname =~ $is_cuda ]]; then echo "$soname" >> "$DIR/lib/cuda-sonames.txt"; continue; fi
  [ -e "$DIR/lib/$soname" ] || cp -L "$path" "$DIR/lib/$soname"
done
sort -u -o "$DIR/lib/cuda-sonames.txt" "$DIR/lib/cuda-sonames.txt"

# ---- scripts --------------------------------------------------------------------------------
cp "$HERE/scripts/gpu-bench.sh" "$DIR/gpu-bench.sh"
cp "$HERE/bench/train-torch.py" "$DIR/bench/"

# ---- data: generated speech and its token stream with @ROOT@ for the bundle's data/ ----------
gen=$(mktemp -d "${TMPDIR:-/tmp}/gpu-bundle.XXXXXX")
trap 'rm -rf "$gen"' EXIT
bash "$HERE/bench/make-data.sh" "$gen" 0.1 2> "$gen.log" ||
  { cat "$gen.log" >&2; rm -f "$gen.log"; die "bench/make-data.sh failed"; }
rm -f "$gen.log"
mkdir -p "$DIR/data/wavs"
cp "$gen"/ljs22k/wavs/*.wav "$DIR/data/wavs/"
rc=0
"$DIR/bin/xtts-tokenize" --lang en -q "$gen/ljs22k/metadata.csv" > "$gen/tokens.tsv" 2> "$gen/tokenize.err" || rc=$?
[ $rc -eq 0 ] || die "xtts-tokenize of the bench clips failed (exit $rc): $(tail -n1 "$gen/tokenize.err")"
# the audio column (4th) names $gen/ljs22k/wavs/ID.wav: make it @ROOT@/wavs/ID.wav
awk -F '\t' -v OFS='\t' -v from="$gen/ljs22k/wavs/" '
  /^#/ { print; next }
  index($4, from) == 1 { $4 = "@ROOT@/wavs/" substr($4, length(from) + 1); print; next }
  { print "gpu-bundle: unexpected audio path " $4 > "/dev/stderr"; exit 1 }' "$gen/tokens.tsv" > "$DIR/data/tokens.tsv"

# ---- what it is, and its size ------------------------------------------------------------------
{
  echo "xtts-prep $("$FROM/bin/xtts-melcache" --version 2>&1 | head -n1 | awk '{print $NF}') from $FROM" \
       "($([ $cuda = 1 ] && echo "CUDA plugin for $(tr '\n' ' ' < "$DIR/lib/cuda-sonames.txt" | sed 's/ $//')" || echo "no CUDA plugin")), bundled $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "run: bash gpu-bench.sh   (OUT=dir also writes dir/gpu-bench.txt; see the script's head)"
} > "$DIR/BUNDLE"
bytes=$(du -sb "$DIR" | cut -f1)
mib=$(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1048576 }')
if [ "$bytes" -gt $((LIMIT_MIB * 1048576)) ]; then
  die "$DIR is $mib MiB, over the $LIMIT_MIB MiB a GPU job can carry ($(du -sh "$DIR"/* | sort -h | tail -n3 | tr '\t\n' ' '))"
fi
echo "gpu-bundle: $DIR: $mib MiB ($(ls "$DIR/bin" | wc -l) programs, $(ls "$DIR/lib" | grep -c '\.so') libraries," \
     "$(ls "$DIR/tests" | grep -c '^test_') CUDA tests, $(grep -vc '^#' "$DIR/data/tokens.tsv") clips); run: bash $DIR/gpu-bench.sh"
