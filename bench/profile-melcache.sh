#!/usr/bin/env bash
# profile-melcache.sh TOKENS_TSV THREADS — where xtts-melcache's time goes: perf samples of
# one build (cycles, user and kernel), summed by stage from the symbol and library each
# sample fell in. Prints a markdown table (stage, share of samples, what it holds).
# Needs perf (linux-perf) and permission to sample (root, or perf_event_paranoid <= 1);
# prints nothing and exits 0 without them.
# Env: BUILD.
set -euo pipefail
TOKENS=$1
TH=${2:-1}
BIN="${BUILD:?}/bin"
command -v perf >/dev/null || exit 0
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
perf record -q -F 1999 -o "$W/perf.data" -- "$BIN/xtts-melcache" --out "$W/c" -j "$TH" -q "$TOKENS" \
  >/dev/null 2>"$W/err" || { [ -s "$W/perf.data" ] || exit 0; }
perf report -i "$W/perf.data" --no-children --sort dso,sym --stdio -q 2>/dev/null |
  awk -F'\t' 'NF' | awk '
  {
    pct = $1; sub(/%/, "", pct)
    line = $0
    stage = "other"
    if (line ~ /libsoxr|libsamplerate/) stage = "resample (soxr)"
    else if (line ~ /libsndfile|libFLAC|libvorbis|libogg|libopus|libmpg123|libmp3lame|xtts_audio|downmix/) stage = "decode and downmix (libsndfile)"
    else if (line ~ /libfftw3f/) stage = "FFT (FFTW r2c)"
    else if (line ~ /xtts_mel|mel_|power_|project|frame_|log_clamp/) stage = "mel: window, power, projection, log"
    else if (line ~ /libzstd|ZSTD_|HUF_|FSE_/) stage = "zstd"
    else if (line ~ /shuffle|xtts_record|encode_v2|put_zstd_section|f16|cvt_/) stage = "record codec (fp16, byte planes)"
    else if (line ~ /liblmdb|mdb_/) stage = "LMDB"
    else if (line ~ /\[kernel|\[k\]/) stage = "kernel (page faults, I/O, scheduling)"
    else if (line ~ /libgomp|gomp_/) stage = "OpenMP runtime (waiting, scheduling)"
    else if (line ~ /memcpy|memset|memmove/) stage = "memory copies (libc)"
    else if (line ~ /malloc|free|_int_|libc/) stage = "libc (allocation, other)"
    share[stage] += pct
    total += pct
  }
  END {
    print "| stage | share of samples |"
    print "|---|---:|"
    n = 0
    for (s in share) order[++n] = s
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (share[order[j]] > share[order[i]]) { t = order[i]; order[i] = order[j]; order[j] = t }
    for (i = 1; i <= n; i++) printf "| %s | %.1f %% |\n", order[i], share[order[i]]
  }'
