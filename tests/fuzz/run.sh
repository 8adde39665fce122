#!/usr/bin/env bash
# tests/fuzz/run.sh — build every libFuzzer target tests/fuzz/fuzz_*.c (and .cc) with
# clang and -fsanitize=fuzzer,address,undefined against the library sources compiled
# with the same sanitizers, then run each for FUZZ_SECONDS seconds.
#
# Called by `make fuzz FUZZ_SECONDS=N`. Environment:
#   FUZZ_SECONDS  seconds per target (default 60)
#   FUZZ_OUT      build and work directory (default build-fuzz/ in the repository)
#   FUZZ_TARGETS  space-separated target names to run (default: all), e.g. "record manifest"
#   FUZZ_JOBS     parallel compile jobs (default: number of CPUs)
#   CC_FUZZ, CXX_FUZZ  compilers (default clang, clang++)
# Target tests/fuzz/fuzz_NAME.c runs from its seed corpus tests/fuzz/corpus/NAME/ (read,
# never written); new inputs go to FUZZ_OUT/corpus/NAME/ and crashes to
# FUZZ_OUT/crashes/NAME/. A dictionary tests/fuzz/NAME.dict is used when present.
# Exit status: 0 when every target built and ran without a finding, 1 otherwise,
# 2 when the toolchain is missing.
set -u
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
OUT=${FUZZ_OUT:-$root/build-fuzz}
CC_FUZZ=${CC_FUZZ:-clang}
CXX_FUZZ=${CXX_FUZZ:-clang++}
JOBS=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 2)}

die() { echo "fuzz: $*" >&2; exit 2; }
command -v "$CC_FUZZ" >/dev/null || die "$CC_FUZZ not found; install Debian's clang and libclang-rt-dev (apt-get install clang libclang-rt-dev libomp-dev)"
command -v "$CXX_FUZZ" >/dev/null || die "$CXX_FUZZ not found; install Debian's clang"
mkdir -p "$OUT/obj" "$OUT/bin" "$OUT/logs" "$OUT/corpus" "$OUT/crashes" || die "cannot create $OUT"

# ---- toolchain probes ---------------------------------------------------------------
probe="$OUT/probe"
printf '#include <stddef.h>\n#include <stdint.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n' >"$probe.c"
"$CC_FUZZ" -fsanitize=fuzzer,address,undefined "$probe.c" -o "$probe" >"$probe.log" 2>&1 ||
  die "$CC_FUZZ cannot build a libFuzzer target (libclang-rt-dev missing?): $(head -c 300 "$probe.log")"
printf 'int main(void) { int s = 0;\n#pragma omp parallel for reduction(+:s)\nfor (int i = 0; i < 4; i++) s += i;\nreturn s != 6; }\n' >"$probe-omp.c"
if "$CC_FUZZ" -fopenmp "$probe-omp.c" -o "$probe-omp" >/dev/null 2>&1 && "$probe-omp"; then
  OMP=-fopenmp
else
  OMP=-Wno-unknown-pragmas
  echo "fuzz: clang's OpenMP (libomp-dev) not usable; building without -fopenmp (serial)" >&2
fi

# ---- flags ----------------------------------------------------------------------------
PKGS="sndfile soxr samplerate lmdb libzstd fftw3f libutf8proc jansson espeak-ng libpng zlib"
PKG_CFLAGS=""; PKG_LIBS=""
for p in $PKGS; do
  if pkg-config --exists "$p" 2>/dev/null; then
    PKG_CFLAGS="$PKG_CFLAGS $(pkg-config --cflags "$p")"
    PKG_LIBS="$PKG_LIBS $(pkg-config --libs "$p")"
  else
    case $p in lmdb) PKG_LIBS="$PKG_LIBS -llmdb" ;; *) die "pkg-config does not know $p (scripts/install-deps.sh)" ;; esac
  fi
done
VERSION=$(cat VERSION 2>/dev/null || echo 0.0.0)
CPPFLAGS="-I. -D_GNU_SOURCE -DXTTS_VERSION=\"$VERSION\" -DXTTS_FUZZING=1"
SAN_LIB="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined"
SAN_EXE="-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined"
COMMON="-g -O1 -fno-omit-frame-pointer -Wno-pass-failed $OMP"
CFLAGS="-std=c17 $COMMON $PKG_CFLAGS"
CXXFLAGS="-std=c++17 $COMMON $PKG_CFLAGS"
# (the FLAC codec, a weak reference of the record codec, linked in by name as the Makefile does)
LIBS="$PKG_LIBS -lcld2 -lmecab -lstdc++ -lm -lpthread -Wl,-u,xtts_flac_encode_i16 -Wl,-u,xtts_flac_decode_i16"

# ---- library ----------------------------------------------------------------------------
# Rebuild an object when its source, any header in the tree or this script is newer.
newest_header=$(find common formats kernels prep cache train programs -name '*.h' -newer "$OUT/lib.stamp" 2>/dev/null | head -n1)
[ -e "$OUT/lib.stamp" ] && [ -z "$newest_header" ] && [ ! "$0" -nt "$OUT/lib.stamp" ] || rm -rf "$OUT/obj"
mkdir -p "$OUT/obj"
srcs=()
for d in common $(find formats -type d | sort) kernels $(find cache prep -mindepth 1 -type d | sort) train; do
  [ -d "$d" ] || continue
  for f in "$d"/*.c "$d"/*.cc; do
    [ -e "$f" ] || continue
    srcs+=("$f")
  done
done
[ ${#srcs[@]} -gt 0 ] || die "no library sources found"
export CC_FUZZ CXX_FUZZ CPPFLAGS CFLAGS CXXFLAGS SAN_LIB OUT
compile_one() {
  f=$1
  o="$OUT/obj/${f%.*}.o"
  [ -e "$o" ] && [ "$o" -nt "$f" ] && return 0
  mkdir -p "$(dirname "$o")"
  # warnings go to a log (clang's view of gcc-tuned code is noisy); errors are shown
  case $f in
    *.cc) $CXX_FUZZ $CPPFLAGS $CXXFLAGS $SAN_LIB -c "$f" -o "$o" ;;
    *)    $CC_FUZZ $CPPFLAGS $CFLAGS $SAN_LIB -c "$f" -o "$o" ;;
  esac 2>"$o.log" || { echo "fuzz: compiling $f failed:" >&2; sed 's/^/    /' "$o.log" | head -n 30 >&2; return 1; }
}
export -f compile_one
echo "fuzz: compiling ${#srcs[@]} library sources with $($CC_FUZZ --version | head -n1) ($OMP)"
printf '%s\n' "${srcs[@]}" | xargs -P "$JOBS" -I{} bash -c 'compile_one "$1"' _ {} || die "library build failed"
objs=()
for f in "${srcs[@]}"; do objs+=("$OUT/obj/${f%.*}.o"); done
rm -f "$OUT/libxtts-fuzz.a"
ar rcs "$OUT/libxtts-fuzz.a" "${objs[@]}" || die "ar failed"
touch "$OUT/lib.stamp"

# ---- targets ----------------------------------------------------------------------------
targets=()
for f in tests/fuzz/fuzz_*.c tests/fuzz/fuzz_*.cc; do
  [ -e "$f" ] || continue
  name=$(basename "$f"); name=${name%.*}; name=${name#fuzz_}
  if [ -n "${FUZZ_TARGETS:-}" ]; then
    case " $FUZZ_TARGETS " in *" $name "*) ;; *) continue ;; esac
  fi
  targets+=("$name:$f")
done
[ ${#targets[@]} -gt 0 ] || die "no fuzz targets (tests/fuzz/fuzz_*.c) selected"

declare -A result
fail=0
for t in "${targets[@]}"; do
  name=${t%%:*}; src=${t#*:}
  exe="$OUT/bin/fuzz_$name"
  case $src in
    *.cc) cmd=("$CXX_FUZZ" $CPPFLAGS $CXXFLAGS) ;;
    *)    cmd=("$CC_FUZZ" $CPPFLAGS $CFLAGS) ;;
  esac
  if ! "${cmd[@]}" $SAN_EXE "$src" "$OUT/libxtts-fuzz.a" $LIBS -o "$exe" >"$OUT/logs/$name.build.log" 2>&1; then
    result[$name]="BUILD FAILED (see $OUT/logs/$name.build.log)"
    sed 's/^/    /' "$OUT/logs/$name.build.log" | head -n 20 >&2
    fail=1
    continue
  fi
done

for t in "${targets[@]}"; do
  name=${t%%:*}
  [ -z "${result[$name]:-}" ] || continue
  exe="$OUT/bin/fuzz_$name"
  work="$OUT/corpus/$name"; crashes="$OUT/crashes/$name"
  mkdir -p "$work" "$crashes"
  seeds="tests/fuzz/corpus/$name"
  args=(-max_total_time="$FUZZ_SECONDS" -timeout=10 -rss_limit_mb=2048 -max_len=65536
        -print_final_stats=1 -artifact_prefix="$crashes/")
  [ -f "tests/fuzz/$name.dict" ] && args+=(-dict="tests/fuzz/$name.dict")
  dirs=("$work")
  if [ -d "$seeds" ]; then dirs+=("$seeds"); else echo "fuzz: $name: no seed corpus at $seeds" >&2; fi
  echo "fuzz: $name for ${FUZZ_SECONDS}s"
  ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1} \
  UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
    "$exe" "${args[@]}" "${dirs[@]}" >"$OUT/logs/$name.log" 2>&1
  rc=$?
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$OUT/logs/$name.log" | grep -o '[0-9]*$' | tail -n1)
  cov=$(grep -o 'cov: [0-9]*' "$OUT/logs/$name.log" | tail -n1 | grep -o '[0-9]*')
  if [ $rc -eq 0 ]; then
    result[$name]="ok (${runs:-?} runs, cov ${cov:-?})"
  else
    found=$(ls -1 "$crashes" 2>/dev/null | head -n3 | tr '\n' ' ')
    result[$name]="FINDING (exit $rc; $found; log $OUT/logs/$name.log)"
    echo "fuzz: $name: finding, exit $rc" >&2
    grep -E 'ERROR: |SUMMARY: |runtime error|==[0-9]+==' "$OUT/logs/$name.log" | head -n 12 | sed 's/^/    /' >&2
    fail=1
  fi
done

echo "fuzz summary (${FUZZ_SECONDS}s per target):"
for t in "${targets[@]}"; do
  name=${t%%:*}
  printf '  %-20s %s\n' "$name" "${result[$name]}"
done
[ $fail -eq 0 ] && echo "fuzz: no findings" || echo "fuzz: findings above; reproduce with: $OUT/bin/fuzz_NAME FILE" >&2
exit $fail
