#!/usr/bin/env bash
# bench/reader.sh — cache reader throughput: the C reader (batch 32, random order, 1 and 2
# threads) against bare zstd decompression of the same frames and against the Python
# package (python/xtts_prep): its fixed-shape batches through the C library
# (libxtts-reader.so, 1 and 2 threads, with the ratio to the C reader) and in pure Python
# (bench/reader-python.py), and its per-record get(). Prints "<what> <batches/s>
# <decoded MB/s>" lines; the C lines add the % of the bare zstd ceiling, the batch bytes
# written per second and the % of zstd plus the batch's writes (bench/src/bench_reader.c
# says how each is counted).
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
(cd "$root" && gcc $cflags bench/src/bench_reader.c "$BUILD/lib/libxtts.a" $libs -o "$work/bench_reader")
echo "# cache: $cache"
c_out=$("$work/bench_reader" "$cache" "$SECS" "$ROUNDS")
echo "$c_out"
# The package's fixed-shape batches (XttsCache.read_batch): through libxtts-reader.so on 1 and
# 2 threads and in pure Python, in PAIRS runs alternated with the C reader's fp32 lines, each
# run with the ratio to the C run just before it; then the medians of the pairs.
[ -f "$BUILD/lib/libxtts-reader.so" ] || make -s -C "$root" --no-print-directory BUILD="$BUILD" "$BUILD/lib/libxtts-reader.so" >&2
PAIRS=${PAIRS:-3}
pairs=$work/pairs.txt
: > "$pairs"
for k in $(seq "$PAIRS"); do
  c_pair=$("$work/bench_reader" "$cache" "$(awk -v s="$SECS" 'BEGIN {print s / 3}')" 1 reader-fp32 | grep -v '^#')
  c1=$(echo "$c_pair" | awk '$1 == "c_reader_1thread_fp32out" {print $2}')
  c2=$(echo "$c_pair" | awk '$1 == "c_reader_2threads_fp32out" {print $2}')
  echo "$c_pair" | awk '{print $1, $2}' >> "$pairs"
  PYTHONPATH="$root/python" XTTS_PREP_LIB="$BUILD/lib" "$PY" "$root/bench/reader-python.py" \
    "$cache" "$(awk -v s="$SECS" 'BEGIN {print s / 3}')" 1 "${c1:--}" "${c2:--}" | grep -v '^#' >> "$pairs"
done
echo "# side by side: $PAIRS alternated pairs (C reader fp32 lines, then the package), medians over the pairs;"
echo "# ratio: the package's batches/s over the C reader's of the same pair with the same threads"
echo "# what batches/s decoded_MB/s ratio_to_c_reader_same_threads"
"$PY" - "$pairs" <<'PYEOF'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) >= 2:
        rows.setdefault(f[0], []).append(f[1:])
for name in ("c_reader_1thread_fp32out", "c_reader_2threads_fp32out", "python_c_1thread", "python_c_2threads",
             "python_pure_1thread"):
    if name not in rows:
        continue
    med = lambda i: statistics.median(float(r[i]) for r in rows[name] if len(r) > i and r[i] != "-")
    bps = med(0)
    mbs = "%.1f" % med(1) if len(rows[name][0]) > 1 else "-"
    ratio = "%.2f" % med(2) if len(rows[name][0]) > 2 and rows[name][0][2] != "-" else "-"
    print("pair_%s %.1f %s %s" % (name, bps, mbs, ratio))
PYEOF
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
        h = c.header(i)                          # counted as the C reader counts
        nbytes += h["payload_bytes"] if h["version"] == 1 else sum(x["raw"] for x in h["sections"])
    batches += 1
    t = time.perf_counter() - t0
    if t >= secs:
        break
print("python_module_1process %.1f %.1f" % (batches / t, nbytes / 1e6 / t))
PYEOF
