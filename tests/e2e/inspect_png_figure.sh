#!/usr/bin/env bash
# xtts-cache-inspect --png draws a readable figure: the mel in a frame of the expected size
# (at least 800 px wide by default; --width/--height set the mel's area), tick marks under it
# (time) and left of it (frequency), labels and a title in the margins, a colour bar from the
# colormap's low end at the bottom to its high end at the top; --bare gives the mel's pixels
# alone (frames x n_mels), as before. The PNG is decoded here with zlib alone.
set -euo pipefail
source "$(dirname "$0")/faults_lib.bash"
demo_tokens
"$BIN/xtts-melcache" -q --out "$T/cache" "$T/tokens.tsv" 2>/dev/null || [ $? -eq 3 ] || die "melcache"
ins="$BIN/xtts-cache-inspect"
frames=$("$ins" "$T/cache" --index 0 | sed -n 's/^frames: \([0-9]*\) .*/\1/p')
[ -n "$frames" ] || die "no frame count"
expect_rc 0 "$ins" "$T/cache" --index 0 --png "$T/fig.png"
expect_rc 0 "$ins" "$T/cache" --index 0 --png "$T/small.png" --width 600 --height 200
expect_rc 0 "$ins" "$T/cache" --index 0 --png "$T/bare.png" --bare
"$ins" "$T/cache" --index 0 --png - --colormap gray > "$T/stdout.png" 2>"$T/err.txt" || die "--png -: $(cat "$T/err.txt")"

"$PY" - "$T" "$frames" <<'PYEOF'
import struct, sys, zlib
T, frames = sys.argv[1], int(sys.argv[2])

def load(path):
    d = open(path, "rb").read()
    assert d[:8] == b"\x89PNG\r\n\x1a\n", path
    pos, idat, w = 8, b"", 0
    while pos < len(d):
        n, kind = struct.unpack(">I4s", d[pos:pos + 8])
        body = d[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and ctype == 2, (path, depth, ctype)  # 8-bit RGB
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw, stride, prev, rows = zlib.decompress(idat), w * 3, bytearray(w * 3), []
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - 3] if i >= 3 else 0
            b, c = prev[i], prev[i - 3] if i >= 3 else 0
            if f == 1: line[i] = (line[i] + a) & 255
            elif f == 2: line[i] = (line[i] + b) & 255
            elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[x * 3:x * 3 + 3]) for x in range(w)]); prev = line
    return w, h, rows

INK, WHITE = (0x20, 0x20, 0x20), (255, 255, 255)

def frame(w, h, px):
    """The mel's frame: its top and bottom lines are the only runs of ink 100 px long or more
    (a tick at 0 Hz may lengthen the bottom one to the left), ending in the same column."""
    runs = []
    for y in range(h):
        x = 0
        while x < w:
            if px[y][x] == INK:
                s = x
                while x < w and px[y][x] == INK: x += 1
                if x - s >= 100: runs.append((y, s, x))
            x += 1
    assert len(runs) == 2 and runs[0][2] == runs[1][2], ("frame lines", runs)
    (top, x0, x1), (bottom, _, _) = runs
    assert all(px[y][x0] == INK and px[y][x1 - 1] == INK for y in range(top, bottom + 1)), "frame sides"
    return x0 + 1, top + 1, x1 - x0 - 2, bottom - top - 1   # the mel's area inside the frame

def check_figure(path, want_w, want_h):
    w, h, px = load(path)
    x0, y0, pw, ph = frame(w, h, px)
    assert (pw, ph) == (want_w, want_h), (path, "mel area", pw, ph, "want", want_w, want_h)
    # not blank: many colours in the mel, none of them the page's white
    cells = {px[y][x] for y in range(y0, y0 + ph, 3) for x in range(x0, x0 + pw, 3)}
    assert len(cells) > 50 and WHITE not in cells, (path, len(cells))
    # tick marks: ink 3 px under the frame (time) and 3 px left of it (frequency)
    below = [x for x in range(x0, x0 + pw) if px[y0 + ph + 3][x] == INK]
    left = [y for y in range(y0, y0 + ph + 1) if px[y][x0 - 4] == INK]
    assert len(below) >= 3 and len(left) >= 3, (path, "ticks", below, left)
    # labels: ink under the ticks, left of the ticks, and a title above the frame
    def inked(xa, xb, ya, yb): return sum(px[y][x] == INK for y in range(ya, yb) for x in range(xa, xb))
    assert inked(x0, x0 + pw, y0 + ph + 8, h) > 100, (path, "time labels")
    assert inked(0, x0 - 8, y0, y0 + ph) > 100, (path, "frequency labels")
    assert inked(0, w, 0, y0 - 2) > 100, (path, "title")
    # the colour bar: right of the frame, the colormap's high end at the top, low end at the bottom
    bar = [x for x in range(x0 + pw + 2, w) if px[y0 + ph // 2][x] not in (INK, WHITE)]
    assert bar, (path, "no colour bar")
    xb = bar[len(bar) // 2]
    hi, lo = px[y0 + 1][xb], px[y0 + ph - 2][xb]
    assert hi[0] > 200 and hi[1] > 200 and hi[2] < 100, (path, "bar top (viridis yellow)", hi)
    assert lo[0] < 100 and lo[2] > 60, (path, "bar bottom (viridis purple)", lo)
    assert inked(xb + 12, w, y0, y0 + ph) > 100, (path, "colour bar labels and unit")
    return w, h

scale_x = -(-800 // frames)
w, h = check_figure(T + "/fig.png", frames * scale_x, 80 * 4)
assert w >= 800 + 100, ("default figure width", w)
check_figure(T + "/small.png", 600, 200)
bw, bh, bpx = load(T + "/bare.png")
assert (bw, bh) == (frames, 80), ("--bare", bw, bh)
sw, sh, spx = load(T + "/stdout.png")
assert (sw, sh) == (w, h), ("--png - differs in size", sw, sh)
print("figure %dx%d, mel %dx%d" % (w, h, frames * scale_x, 320))
PYEOF
echo ok
