#!/usr/bin/env bash
# Samples no stage can use are refused with a reason naming the file, never stored as a
# silent mel. Float and double WAVs whose samples are near FLT_MAX (the STFT's power
# overflows to NaN, which the log clamp turned into a mel flat at the silence floor), whose
# square overflows (1e20), doubles beyond a float, NaN, and a stereo pair +x/-x that cancels
# in the downmix: each a rejected record (exit 3, `--rejects` line), with every resampler
# path (22050 Hz kept, 16000 and 44100 Hz resampled) and with --trim-db. Loud but usable
# float overs (peak 8, 18 dB over full scale) are stored with a true, loud mel.
set -euo pipefail
source "$(dirname "$0")/faults_lib.bash"

"$PY" - "$T" <<'PY'
import math, struct, sys
def wav(path, samples, rate, ch=1, fmt='f'):
    bps = 4 if fmt == 'f' else 8
    data = struct.pack('<%d%s' % (len(samples), fmt), *samples)
    fmtck = struct.pack('<HHIIHH', 3, ch, rate, rate * ch * bps, ch * bps, bps * 8)
    body = (b'WAVE' + b'fmt ' + struct.pack('<I', len(fmtck)) + fmtck + b'fact' +
            struct.pack('<II', 4, len(samples) // ch) + b'data' + struct.pack('<I', len(data)) + data)
    open(path, 'wb').write(b'RIFF' + struct.pack('<I', len(body)) + body)
d = sys.argv[1]
for rate in (16000, 22050, 44100):
    n = rate // 2
    tone = [0.5 * math.sin(2 * math.pi * 440 * i / rate) for i in range(n)]
    wav('%s/huge_%d.wav' % (d, rate), [6.0e38 * t for t in tone], rate)
    wav('%s/power_%d.wav' % (d, rate), [2e20 * t for t in tone], rate)
    wav('%s/double_%d.wav' % (d, rate), [1e300 * t for t in tone], rate, fmt='d')
    wav('%s/nan_%d.wav' % (d, rate), tone[:100] + [float('nan')] + tone[101:], rate)
    wav('%s/cancel_%d.wav' % (d, rate), [v for _ in range(n) for v in (3.4e38, -3.4e38)], rate, ch=2)
    wav('%s/loud_%d.wav' % (d, rate), [16.0 * t for t in tone], rate)
    wav('%s/ok_%d.wav' % (d, rate), tone, rate)
PY

H=$'#xtts-tokens 1\ttokenizer=bytes\tvocab_hash=sha256:00a320598554b3c85b21794c81c9d9e6fe1586a2a282bb01a3110345ead67bf2\tvocab_size=288\tlang=en\tmax_tokens=512\tpad_id=0\tbos_id=1\teos_id=2\tunk_id=3\tlowercase=1\tnormalize=spoken-1\ttool=xtts-tokenize-0.1.0'
{
  echo "$H"
  for rate in 16000 22050 44100; do
    for k in huge power double nan cancel loud ok; do
      printf '%s_%s\tspk\ten\t%s/%s_%s.wav\t5 6 7 8\ttext\n' "$k" "$rate" "$T" "$k" "$rate"
    done
  done
} > "$T/tokens.tsv"

for opts in "" "--trim-db 40" "--resampler libsamplerate"; do
  rm -rf "$T/c" "$T/rej.tsv"
  # shellcheck disable=SC2086
  expect_rc 3 "$BIN/xtts-melcache" --out "$T/c" --rejects "$T/rej.tsv" $opts "$T/tokens.tsv"
  for rate in 16000 22050 44100; do
    for k in huge power double nan cancel; do
      grep -q "($k""_$rate): rejected: $T/$k""_$rate.wav: sample [0-9]* " "$T/err.txt" \
        || { cat "$T/err.txt" >&2; die "$k""_$rate ($opts) not rejected naming its file"; }
      grep -q "^$k""_$rate"$'\t' "$T/rej.tsv" || die "$k""_$rate not in --rejects ($opts)"
    done
  done
  grep -q "(cancel_16000): rejected: .* of channel 1 is 3.4e+38, out of range" "$T/err.txt" || die "cancel: reason"
  grep -q "(double_16000): rejected: .* is infinite or beyond the range of a float" "$T/err.txt" || die "double: reason"
  [ "$(wc -l < "$T/rej.tsv")" -eq 15 ] || die "want 15 rejects ($opts)"
  # the stored records are the usable ones, and none is a flat mel
  PYTHONPATH="$HERE/python" "$PY" - "$T/c" <<'PY'
import sys
from xtts_prep import XttsCache
c = XttsCache(sys.argv[1])
ids = sorted(c.get(i)["id"] for i in range(len(c)))
assert ids == sorted("%s_%d" % (k, r) for k in ("loud", "ok") for r in (16000, 22050, 44100)), ids
for i in range(len(c)):
    r = c.get(i)
    m = r["mel"]
    assert m.max() - m.min() > 5.0, (r["id"], m.min(), m.max())
    if r["id"].startswith("loud"):
        ok = c.get(c.index_of("ok" + r["id"][4:]))["mel"]
        # 16 x the amplitude: the power 256 x, the log-mel's peak ln(256) = 5.5 higher
        assert abs((m.max() - ok.max()) - 5.545) < 0.1, (r["id"], m.max(), ok.max())
PY
  [ -n "$(digest "$T/c")" ] || die "verify fails on the cache ($opts)"
done
echo "inputs_sample_range: ok"
