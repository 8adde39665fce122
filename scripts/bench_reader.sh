#!/usr/bin/env bash
# bench_reader.sh — cache reader throughput: the C reader (batch 32, random order, 1 and 2
# threads) against bare zstd decompression of the same frames and against the Python
# package (python/xtts_prep). Prints "<what> <batches/s> <decoded MB/s>" lines; the
# C lines add the % of the bare zstd ceiling, the batch bytes written per second and the %
# of zstd plus the batch's writes (tests/bench/bench_reader.c says how each is counted).
#
# Environment: BUILD (absolute build dir, default ./build), PYTHON (default
# /usr/bin/python3), CACHE (a cache to read; default: a synthetic one, 2000 records of
# 80 mels x up to 1024 frames fp16, byte-plane shuffled as xtts-melcache writes by
# default (SHUFFLE=0: stored plain), built under $BUILD/bench-reader/), SECONDS_PER (3:
# seconds per C configuration, split over ROUNDS alternated rounds, default 5).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
BUILD=${BUILD:-$root/build}
PY=${PYTHON:-/usr/bin/python3}
SECS=${SECONDS_PER:-3}
ROUNDS=${ROUNDS:-5}
SHUFFLE=${SHUFFLE:-1}
work=$BUILD/bench-reader
mkdir -p "$work"
cache=${CACHE:-}
if [ -z "$cache" ]; then
  if [ "$SHUFFLE" = 1 ]; then cache=$work/cache-shuffled; layout=shuffle; else cache=$work/cache; layout=plain; fi
  if [ ! -f "$cache/manifest.json" ]; then
    [ -x "$BUILD/tests/test_reader" ] || { echo "bench_reader: build first (make all)" >&2; exit 2; }
    "$BUILD/tests/test_reader" --make-cache "$cache" 2000 1000 fp16 1024 80 1024 "$layout"
  fi
fi
flags=$(make -s -C "$root" --no-print-directory -f - print-flags <<'MK' 2>/dev/null || true
include Makefile
print-flags: ; @echo $(CPPFLAGS) $(CFLAGS) @@ $(LIBS)
MK
)
cflags=${flags%@@*}; libs=${flags#*@@}
[ -n "$flags" ] || { cflags="-I. -O2 -march=native -fopenmp -D_GNU_SOURCE"; libs="-llmdb -lzstd -ljansson -lm -lpthread"; }
(cd "$root" && gcc $cflags tests/bench/bench_reader.c "$BUILD/lib/libxtts.a" $libs -o "$work/bench_reader")
echo "# cache: $cache"
"$work/bench_reader" "$cache" "$SECS" "$ROUNDS"
PYTHONPATH="$root/python" "$PY" - "$cache" "$SECS" <<'PYEOF'
import random, sys, time
import zstandard
from xtts_prep.cache import XttsCache, decode_record
c = XttsCache(sys.argv[1], padded=True)
secs = float(sys.argv[2])
rnd = random.Random(5)
n, batches, nbytes = len(c), 0, 0
t0 = time.perf_counter()
while True:
    for _ in range(32):
        i = rnd.randrange(n)
        r = c.get(i)                             # what a training loop calls
        nbytes += c.header(i)["payload_bytes"]   # counted as the C reader counts
    batches += 1
    t = time.perf_counter() - t0
    if t >= secs:
        break
print("python_module_1process %.1f %.1f" % (batches / t, nbytes / 1e6 / t))
PYEOF
