#!/usr/bin/env bash
# The HTML page of xtts-cache-report in a real browser: headless Chromium opens it from
# file:// at 1280 pixels, with no console error (a page with a deliberate script error shows
# that the check sees them), and draws something (the screenshot holds many colours: charts,
# mel pictures). The page references nothing outside itself. Skips when Chromium is absent
# (scripts/install-deps.sh --browser installs it; CI does).
set -euo pipefail
BIN="$BUILD/bin"; T="$TMPDIR_TEST"; PY=${PYTHON:-/usr/bin/python3}
here="$(cd "$(dirname "$0")/../.." && pwd)"
die() { echo "FAIL: $*"; exit 1; }
chrome=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$chrome" ]; then
  echo "SKIP: no chromium on PATH (scripts/install-deps.sh --browser installs it)"
  exit 0
fi
bash "$here/scripts/make-demo-dataset.sh" "$T/data" >/dev/null 2>&1
rc=0; "$BIN/xtts-tokenize" --lang auto "$T/data/metadata.tsv" > "$T/tokens.tsv" 2>/dev/null || rc=$?
[ $rc -eq 0 ] || [ $rc -eq 3 ] || die "tokenize exit $rc"
rc=0; "$BIN/xtts-melcache" --out "$T/c" -j 2 -q --audio int16 "$T/tokens.tsv" 2>/dev/null || rc=$?
[ $rc -eq 0 ] || [ $rc -eq 3 ] || die "melcache exit $rc"
"$BIN/xtts-cache-report" -q "$T/c" --html "$T/report.html" || die "report exit $?"

# self-contained: nothing fetched, no script
if grep -Eiq '(src|href)="(https?:|//|file:)|<script|<link|@import|url\(' "$T/report.html"; then
  die "the page references something outside itself"
fi
grep -q '<svg' "$T/report.html" || die "no chart"
grep -q 'src="data:image/png;base64,' "$T/report.html" || die "no mel picture"
grep -q '<audio controls preload="none" src="data:audio/wav;base64,' "$T/report.html" || die "no player (the cache stores the waveform)"

# $1: page, $2: screenshot; the browser's log into $2.log
shoot() {
  rm -f "$2"
  timeout 120 "$chrome" --headless --no-sandbox --disable-gpu --no-first-run --disable-extensions \
    --user-data-dir="$T/profile" --hide-scrollbars --window-size=1280,2000 --enable-logging=stderr --v=0 \
    --screenshot="$2" "file://$1" > "$2.log" 2>&1 || true
  [ -s "$2" ] || { tail -20 "$2.log"; die "no screenshot of $1"; }
}
console_errors() { grep -E 'CONSOLE|Uncaught|Refused to' "$1" || true; }

# the check itself: a page with a script error is caught
printf '<!DOCTYPE html><html><body><p>x</p><script>undefined_function_here();</script></body></html>\n' > "$T/broken.html"
shoot "$T/broken.html" "$T/broken.png"
[ -n "$(console_errors "$T/broken.png.log")" ] || die "the console check does not see a script error"

shoot "$T/report.html" "$T/report.png"
errs=$(console_errors "$T/report.png.log")
[ -z "$errs" ] || die "console errors: $errs"

# not blank: count the colours of the screenshot (a PNG decoder of our own: no imaging module)
"$PY" - "$T/report.png" <<'EOF'
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat, w = 8, b"", 0
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
        assert depth == 8 and ctype in (2, 6) and interlace == 0, (depth, ctype, interlace)
        bpp = 3 if ctype == 2 else 4
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
assert w == 1280, f"screenshot {w} pixels wide, not 1280"
raw, stride = zlib.decompress(idat), w * bpp
prev, colours = bytearray(stride), set()
for y in range(h):
    f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    if f == 1:
        for i in range(bpp, stride): line[i] = (line[i] + line[i - bpp]) & 255
    elif f == 2:
        line = bytearray((a + b) & 255 for a, b in zip(line, prev))
    elif f == 3:
        for i in range(stride): line[i] = (line[i] + ((line[i - bpp] if i >= bpp else 0) + prev[i]) // 2) & 255
    elif f == 4:
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0; b = prev[i]; c = prev[i - bpp] if i >= bpp else 0
            p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    if y % 4 == 0:
        for x in range(0, w, 2): colours.add(bytes(line[x * bpp:x * bpp + 3]))
    prev = line
print(f"{len(colours)} colours in {w}x{h}")
assert len(colours) > 200, f"only {len(colours)} colours: a blank page?"
EOF
echo "ok: the page renders at 1280 px without console errors"
