#!/usr/bin/env bash
# Malformed side files and odd names (docs/reliability.md, "Side files and names"):
# 1. --exclude files (xtts-tokenize and xtts-melcache): a byte-order mark and CRLF ends are
#    read as the ids they hold, in a plain list and in a report's TSV; a tab in a plain list's
#    id, a NUL byte, a line of 30 MB and an endless line (under a 200 MB address-space limit)
#    are refused at once with one line naming the file and line, exit 2;
# 2. --thresholds files of xtts-cache-report: a byte-order mark and CRLF ends read; a NUL
#    byte, a long line and a file of 20 MB refused with one line, no report written;
# 3. the report of odd ids and speakers — markup, quotes and ampersands, right-to-left
#    scripts and a right-to-left override, 10,000 speakers: exit 0, every name escaped in
#    the HTML page (no raw markup, tags balanced), the TSV holds each id as stored, the
#    summary lists 50 speakers and says where the others are, the page stays small;
# 4. a quality table damaged (bytes flipped in a record's stored metrics) or of another
#    version (the metrics' version byte changed): verify names the record, exit 2; the
#    report refuses with one line naming it instead of printing wrong figures.
set -euo pipefail
source "$(dirname "$0")/faults_lib.bash"

demo_tokens
D="$T/data"
tok=("$BIN/xtts-tokenize" --lang auto -q)
n_all=$(grep -vc '^#' "$T/tokens.tsv")

# ---- 1. --exclude files --------------------------------------------------------------------------
excluded() { sed -n 's/.* \([0-9]*\) excluded.*/\1/p' "$T/err.txt" | tail -n 1; }
printf '\xef\xbb\xbfen_001\r\nen_002\r\n\r\n' > "$T/bom.txt"
expect_rc 3 "${tok[@]}" --exclude "$T/bom.txt" "$D/metadata.csv"
[ "$(excluded)" = 2 ] || { cat "$T/err.txt"; die "a plain list with a BOM and CRLF: want 2 excluded"; }
expect_rc 3 "$BIN/xtts-melcache" --out "$T/cx" -q --exclude "$T/bom.txt" "$T/tokens.tsv"
[ "$(excluded)" = 2 ] || { cat "$T/err.txt"; die "melcache: a plain list with a BOM and CRLF: want 2 excluded"; }
printf '\xef\xbb\xbfid\tflags\tdup_of\r\nen_001\tclipped\t-\r\nen_002\t-\t-\r\n' > "$T/bom.tsv"
expect_rc 3 "${tok[@]}" --exclude "$T/bom.tsv" "$D/metadata.csv"
[ "$(excluded)" = 1 ] || { cat "$T/err.txt"; die "a report TSV with a BOM and CRLF: want 1 excluded"; }
refused() { # FILE PATTERN: both programs refuse FILE with one line matching PATTERN
  expect_rc 2 timeout 60 "${tok[@]}" --exclude "$1" "$D/metadata.csv"
  one_line_error "$2"
  expect_rc 2 timeout 60 "$BIN/xtts-melcache" --out "$T/cr" -q --exclude "$1" "$T/tokens.tsv"
  one_line_error "$2"
  [ ! -e "$T/cr" ] || die "melcache wrote a cache with a refused --exclude file"
}
printf 'en_001\tfoo\n' > "$T/tab.txt"
refused "$T/tab.txt" "tab.txt:1: a tab in an id"
printf 'en_001\nen_\0002\n' > "$T/nul.txt"
refused "$T/nul.txt" "nul.txt:2: a NUL byte"
head -c 30000000 /dev/zero | tr '\0' a > "$T/huge.txt"
refused "$T/huge.txt" "huge.txt:1: a line longer than 65535 bytes"
rm "$T/huge.txt"
rc=0; vlimit 200000 timeout 60 "${tok[@]}" --exclude <(yes a | tr -d '\n') "$D/metadata.csv" > /dev/null 2> "$T/err.txt" || rc=$?
[ $rc -eq 2 ] && grep -q ":1: a line longer than 65535 bytes" "$T/err.txt" || { cat "$T/err.txt"; die "an endless --exclude line: exit $rc"; }
echo "1: --exclude files: BOM and CRLF read; tab, NUL, long and endless lines refused by line"

# ---- 2. --thresholds files -------------------------------------------------------------------------
expect_rc 3 "$BIN/xtts-melcache" --out "$T/c" -q "$T/tokens.tsv"
expect_rc 0 "$BIN/xtts-cache-report" -q "$T/c" --tsv "$T/ref.tsv"
printf '\xef\xbb\xbf# thresholds\r\nsnr_db = 10\r\n' > "$T/t_bom"
printf '# thresholds\nsnr_db = 10\n' > "$T/t_plain"
expect_rc 0 "$BIN/xtts-cache-report" -q "$T/c" --thresholds "$T/t_bom" --tsv "$T/bom.r.tsv"
expect_rc 0 "$BIN/xtts-cache-report" -q "$T/c" --thresholds "$T/t_plain" --tsv "$T/plain.r.tsv"
cmp -s "$T/bom.r.tsv" "$T/plain.r.tsv" || die "a thresholds file with a BOM and CRLF reads otherwise than without"
printf 'snr_db = 1\0000\n' > "$T/t_nul"
expect_rc 1 "$BIN/xtts-cache-report" -q "$T/c" --thresholds "$T/t_nul" --tsv "$T/no.tsv"
one_line_error "t_nul:1: NUL byte in the line"
{ printf 'snr_db = 10 #'; head -c 5000 /dev/zero | tr '\0' x; echo; } > "$T/t_long"
expect_rc 1 "$BIN/xtts-cache-report" -q "$T/c" --thresholds "$T/t_long" --tsv "$T/no.tsv"
one_line_error "t_long:1: line longer than"
head -c 20000000 /dev/zero | tr '\0' '\n' > "$T/t_huge"
expect_rc 2 "$BIN/xtts-cache-report" -q "$T/c" --thresholds "$T/t_huge" --tsv "$T/no.tsv"
one_line_error "t_huge: larger than"
[ ! -e "$T/no.tsv" ] || die "a report was written with a refused thresholds file"
echo "2: --thresholds files: BOM and CRLF read; NUL, long line and huge file refused"

# ---- 3. odd ids and speakers in the report -------------------------------------------------------
sox -n -r 22050 -c 1 "$T/plain.wav" synth 0.4 sine 300 2>/dev/null
sox -n -r 22050 -c 1 "$T/loud.wav" synth 0.6 sine 300 gain +12 2>/dev/null
L=$(sed -n 2p "$T/tokens.tsv" | cut -f5)
{ head -n 1 "$T/tokens.tsv"
  awk -v L="$L" -v W="$T/plain.wav" -v X="$T/loud.wav" 'BEGIN { OFS = "\t"
    for (i = 0; i < 10000; i++) print "u" i, "spk" i, "en", W, L, "t"
    print "<script>alert(1)</script>", "<b>bold</b>\"q\x27", "en", X, L, "t"
    print "a\"b\x27c&amp;<i>", "שלום עולם", "en", X, L, "t"
    print "مرحبا", "\xe2\x80\xaeevil", "en", X, L, "t" }'; } > "$T/odd.tsv"
expect_rc 0 "$BIN/xtts-melcache" --out "$T/codd" -q -j 2 "$T/odd.tsv"
expect_rc 0 "$BIN/xtts-cache-report" "$T/codd" --html "$T/odd.html" --tsv "$T/odd.r.tsv"
[ "$(grep -c "^spk[0-9]" "$T/out.txt")" -le 50 ] || die "the summary lists more than 50 speakers"
grep -q '^\.\.\. [0-9]* more speakers (the JSON lists them all)$' "$T/out.txt" || die "the summary does not say where the other speakers are"
size=$(stat -c %s "$T/odd.html"); [ "$size" -lt 2000000 ] || die "the page of 10,000 speakers is $size bytes"
! grep -q '<script>alert\|<b>bold\|<i>' "$T/odd.html" || die "an id or a speaker's markup reached the page raw"
grep -q '&lt;script&gt;alert(1)&lt;/script&gt;' "$T/odd.html" || die "the markup id is not on the page, escaped"
grep -q 'a&quot;b&#39;c&amp;amp;&lt;i&gt;\|a&quot;b&#x27;c&amp;amp;&lt;i&gt;\|a&quot;b'"'"'c&amp;amp;&lt;i&gt;' "$T/odd.html" ||
  die "the quotes-and-ampersand id is not on the page, escaped"
grep -q 'مرحبا' "$T/odd.html" || die "the right-to-left id is not on the page"
"$PY" - "$T/odd.html" <<'PYEOF' || die "the page's tags are not balanced"
import html.parser, sys
VOID = {"br", "img", "meta", "input", "hr", "link", "col", "wbr", "source", "area", "base"}
class P(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(); self.stack = []; self.bad = 0
    def handle_starttag(self, tag, attrs):
        if tag not in VOID: self.stack.append(tag)
    def handle_endtag(self, tag):
        if self.stack and self.stack[-1] == tag: self.stack.pop()
        else: self.bad += 1
p = P(); p.feed(open(sys.argv[1], encoding="utf-8").read())
sys.exit(1 if p.bad or p.stack else 0)
PYEOF
for id in '<script>alert(1)</script>' "a\"b'c&amp;<i>" 'مرحبا'; do
  grep -qF "$id	" "$T/odd.r.tsv" || die "the TSV lacks the id $id as stored"
done
echo "3: odd ids and 10,000 speakers: escaped, balanced, $size bytes of page"

# ---- 4. a damaged quality table ---------------------------------------------------------------------
"$PY" - "$T/c" <<'PYEOF' > "$T/qkeys.txt"
import lmdb, sys
env = lmdb.open(sys.argv[1] + "/shard-00000", readonly=True, lock=False, max_dbs=8, subdir=True)
names = [k.decode() for k, _ in env.begin().cursor()]
print(" ".join(names))
PYEOF
if ! grep -qw quality "$T/qkeys.txt"; then echo "skip: no quality database in the shard ($(cat "$T/qkeys.txt"))"; echo ok; exit 0; fi
damage() { # DIR MODE: flip bytes in record 3's stored metrics (MODE body) or its version byte (MODE version)
  "$PY" - "$1" "$2" <<'PYEOF'
import lmdb, sys
d, mode = sys.argv[1:3]
env = lmdb.open(d + "/shard-00000", max_dbs=8, subdir=True, lock=False)
db = env.open_db(b"quality")
with env.begin(write=True, db=db) as txn:
    cur = txn.cursor(); cur.first()
    for _ in range(3): cur.next()
    k, v = cur.item(); v = bytearray(v)
    if mode == "version": v[0] ^= 0x7f
    else:
        for i in range(len(v) // 2, len(v) // 2 + 4): v[i] ^= 0xa5
    txn.put(k, bytes(v))
PYEOF
}
for mode in body version; do
  rm -rf "$T/cq"; cp -r "$T/c" "$T/cq"
  damage "$T/cq" $mode
  expect_rc 2 "$BIN/xtts-cache-verify" "$T/cq"
  grep -qi 'quality' "$T/out.txt" || { cat "$T/out.txt"; die "verify: the damaged quality table ($mode) not named"; }
  rc=0; "$BIN/xtts-cache-report" -q "$T/cq" --tsv "$T/q.tsv" > "$T/out.txt" 2> "$T/err.txt" || rc=$?
  [ $rc -eq 2 ] || { cat "$T/err.txt"; die "report over a damaged quality table ($mode): exit $rc"; }
  one_line_error "quality"
done
echo "4: a damaged quality table (body, version): verify and the report name it, exit 2"
echo ok
