#!/usr/bin/env bash
# One build for CPU-only and GPU nodes: no program links a CUDA library (the CUDA code is the
# plugin libxtts-cuda.so, loaded when a device is asked for); without the plugin, or with a
# broken one, --device auto falls back with one line naming why and --device cuda exits 2.
# xtts-melcache's auto looks for a device only where its cost model prefers the GPU path
# (docs/xtts-melcache.md, "Device choice"): a one-record build stays on the CPU without
# looking, so the checks of the fallback make the GPU path look free (XTTS_MELCACHE_AUTO).
set -euo pipefail
GPU_PAYS="start=0,gpu=0"
BIN="$BUILD/bin"; T="$TMPDIR_TEST"
for p in "$BIN"/xtts-*; do
  if grep -Eq 'libcu(da|fft|blas)' <<< "$(ldd "$p")"; then echo "$p links a CUDA library:"; ldd "$p"; exit 1; fi
done
mkdir -p "$T/wavs"
sox -n -r 22050 -c 1 -b 16 "$T/wavs/a.wav" synth 1 sine 300 vol 0.3
printf 'a|hello|hello\n' > "$T/m.csv"
"$BIN/xtts-tokenize" --lang en "$T/m.csv" > "$T/tokens.tsv"
if [ ! -f "$BUILD/lib/libxtts-cuda.so" ]; then
  # a build without CUDA (CUDA=0, or no nvcc): no plugin is looked for; auto says so, cuda is exit 2
  XTTS_MELCACHE_AUTO=$GPU_PAYS XTTS_CUDA_PLUGIN="$T/none.so" "$BIN/xtts-melcache" --out "$T/c0" --device auto -q "$T/tokens.tsv" 2> "$T/e0"
  [ "$(grep -c 'device: cpu' "$T/e0")" = 1 ] && grep -q 'no CUDA support' "$T/e0" || { cat "$T/e0"; exit 1; }
  rc=0; "$BIN/xtts-melcache" --out "$T/c0b" --device cuda -q "$T/tokens.tsv" 2> "$T/e0b" || rc=$?
  [ $rc -eq 2 ] || { echo "--device cuda without CUDA: rc=$rc"; cat "$T/e0b"; exit 1; }
  echo "ok (a build without CUDA)"
  exit 0
fi
# a small build: auto keeps the CPU, says why, and does not look for the plugin
XTTS_CUDA_PLUGIN="$T/none.so" "$BIN/xtts-melcache" --out "$T/c1a" --device auto -q "$T/tokens.tsv" 2> "$T/e1a"
[ "$(grep -c 'device: cpu (auto: .*too little to repay the GPU.s start-up; --device cuda to force)' "$T/e1a")" = 1 ] &&
  ! grep -q 'none.so' "$T/e1a" || { cat "$T/e1a"; exit 1; }
# a bad override of the cost model is a usage error, before anything is written
rc=0; XTTS_MELCACHE_AUTO="start=fast" "$BIN/xtts-melcache" --out "$T/c1b" --device auto -q "$T/tokens.tsv" 2> "$T/e1b" || rc=$?
[ $rc -eq 1 ] && grep -q "XTTS_MELCACHE_AUTO: 'start=fast'" "$T/e1b" && [ ! -e "$T/c1b" ] || { echo "rc=$rc"; cat "$T/e1b"; exit 1; }
# a plugin that is not there
XTTS_MELCACHE_AUTO=$GPU_PAYS XTTS_CUDA_PLUGIN="$T/none.so" "$BIN/xtts-melcache" --out "$T/c1" --device auto -q "$T/tokens.tsv" 2> "$T/e1"
[ "$(grep -c 'device: cpu' "$T/e1")" = 1 ] && grep -q 'none.so: no such file' "$T/e1" || { cat "$T/e1"; exit 1; }
# a file that is not a plugin
echo 'not a library' > "$T/bad.so"
rc=0; XTTS_CUDA_PLUGIN="$T/bad.so" "$BIN/xtts-melcache" --out "$T/c2" --device cuda -q "$T/tokens.tsv" 2> "$T/e2" || rc=$?
[ $rc -eq 2 ] && [ "$(wc -l < "$T/e2")" = 1 ] && grep -q 'bad.so does not load' "$T/e2" || { echo "rc=$rc"; cat "$T/e2"; exit 1; }
rc=0; XTTS_CUDA_PLUGIN="$T/bad.so" "$BIN/xtts-train" --cache "$T/c1" --device cuda --steps 1 2> "$T/e3" || rc=$?
[ $rc -eq 2 ] && grep -q 'bad.so' "$T/e3" || { echo "xtts-train rc=$rc"; cat "$T/e3"; exit 1; }
# the build's own plugin loads (whatever the driver then says)
nm -D --defined-only "$BUILD/lib/libxtts-cuda.so" | awk '{print $3}' | grep -v '^xtts_cudaplugin_' && { echo "plugin exports more than its interface"; exit 1; }
XTTS_MELCACHE_AUTO=$GPU_PAYS "$BIN/xtts-melcache" --out "$T/c3" --device auto -q "$T/tokens.tsv" 2> "$T/e4"
! grep -q 'plugin' "$T/e4" || { cat "$T/e4"; exit 1; }
echo ok
