#!/usr/bin/env bash
# bench/mel.sh — one-core throughput of the log-mel (every preset) beside FFTW's bare STFT
# floor and torchaudio's MelSpectrogram, and of every resampler option with its SNR.
# Figures are seconds per hour of audio (mel: at the preset's rate; resampling: of 44.1 kHz
# input). Ratios are taken within this one run, side by side.
#
# Env: BUILD (build dir holding lib/libxtts.a; default ./build), PYTHON (default
# /usr/bin/python3), SECONDS_AUDIO (default 120), CLIP_SECONDS (default 10), CC.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
PYTHON=${PYTHON:-/usr/bin/python3}
SECONDS_AUDIO=${SECONDS_AUDIO:-120}
CLIP_SECONDS=${CLIP_SECONDS:-10}
CC=${CC:-gcc}
LIB=$BUILD/lib/libxtts.a
[ -f "$LIB" ] || { echo "bench_mel: $LIB not found; run make first" >&2; exit 2; }
mkdir -p "$BUILD/bench"
FLAGS="-std=c17 -O2 -march=native -fopenmp -D_GNU_SOURCE -I$ROOT"
LIBS="$(pkg-config --libs sndfile soxr samplerate fftw3f) -lpthread -lm"
$CC $FLAGS "$ROOT/bench/src/bench_mel.c" "$LIB" $LIBS -o "$BUILD/bench/bench_mel"
$CC $FLAGS "$ROOT/bench/src/bench_audio.c" "$LIB" $LIBS -o "$BUILD/bench/bench_audio"

echo "== log-mel, one core, ${SECONDS_AUDIO} s of audio in ${CLIP_SECONDS} s clips (s per hour of audio)"
mel_out=$("$BUILD/bench/bench_mel" "$SECONDS_AUDIO" "$CLIP_SECONDS")
peer=""
openblas=/usr/lib/x86_64-linux-gnu/openblas-openmp
if "$PYTHON" -c 'import torchaudio' 2>/dev/null; then
  peer=$(LD_LIBRARY_PATH=$( [ -d $openblas ] && echo $openblas )${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
         OMP_NUM_THREADS=1 "$PYTHON" "$ROOT/bench/src/bench_mel_torchaudio.py" "$SECONDS_AUDIO" "$CLIP_SECONDS")
fi
printf '%s\n%s\n' "$mel_out" "$peer" | awk '
  /^#/ { next }
  NF == 2 { v[$1] = $2 }
  END {
    printf "%-10s %8s %10s %10s %12s %12s\n", "preset", "mel", "fftw_r2c", "r2c+win+pw", "mel/floor", "torchaudio/mel"
    n = split("xtts hifigan vits tacotron2 whisper", p, " ")
    for (i = 1; i <= n; i++) {
      m = v["mel_" p[i]]; f = v["fftw_r2c_window_power_" p[i]]; fm = v["fftw_r2c_window_power_measure_" p[i]]
      if (fm != "" && fm < f) f = fm
      t = (p[i] == "xtts" && v["torchaudio_mel_xtts"] != "") ? sprintf("%.2fx (%.3f s)", v["torchaudio_mel_xtts"] / m, v["torchaudio_mel_xtts"]) : "-"
      printf "%-10s %8.3f %10.3f %10.3f %12.2f %12s\n", p[i], m, v["fftw_r2c_" p[i]], f, m / f, t
    }
  }'
echo
echo "== resamplers, one core, 44.1 kHz input (s per hour of input; SNR against analytic tones)"
"$BUILD/bench/bench_audio" "$(( SECONDS_AUDIO / 2 ))" | grep -v '^#' | \
  awk 'BEGIN { printf "%-14s %-13s %8s %10s %9s\n", "resampler", "quality", "out_Hz", "s/hour", "SNR_dB" }
       { printf "%-14s %-13s %8s %10s %9s\n", $1, $2, $3, $4, $5 }'
