#!/usr/bin/env bash
# xtts-segment's inputs beyond segment_inputs.sh: truncated audio and damaged headers (a header
# alone, a header cut short, a data chunk claiming hours, a rate of 1 Hz), a pairs list with
# CRLF ends, a UTF-8 BOM, blank and comment lines, missing fields, a fourth field (a tab in a
# path), paths with spaces, a directory for the audio, the text or the list, a --lang that does
# not match the text, an --out that is a file or (not as root) unwritable, no room for a clip. Each: exit 0, or 3
# where the run finished leaving things out, or 2 with one line naming the file and line.
set -euo pipefail
BIN="$BUILD/bin"; T="${TMPDIR_TEST:-$(mktemp -d)}"
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v espeak-ng >/dev/null || { echo "skip: espeak-ng missing"; exit 0; }
cd "$T"
S="$BIN/xtts-segment"

expect() { # expect CODE PATTERN -- ARGS...: exit CODE, stderr has PATTERN, and one line besides the summary
  local code=$1 pat=$2; shift 3
  local rc=0
  rm -rf o
  "$S" "$@" > out.txt 2> err.txt || rc=$?
  [ "$rc" = "$code" ] || fail "$*: exit $rc, expected $code: $(cat err.txt)"
  [ -z "$pat" ] || grep -q -- "$pat" err.txt || fail "$*: no '$pat' in: $(cat err.txt)"
  [ "$code" = 3 ] || [ "$(grep -vc '^xtts-segment: [0-9]* of [0-9]* sentences\|Try ' err.txt)" = "$([ -z "$pat" ] && echo 0 || echo 1)" ] ||
    fail "$*: not one line: $(cat err.txt)"
}

espeak-ng -v en-gb -s 140 -w a.wav "The ship left the harbour at dawn. The sea was calm and grey."
printf 'The ship left the harbour at dawn.\nThe sea was calm and grey.\n' > a.txt
python3 - <<'EOF'
import struct
d = open("a.wav", "rb").read()
open("trunc.wav", "wb").write(d[: len(d) // 2])
open("hdronly.wav", "wb").write(d[:44])
open("hdr30.wav", "wb").write(d[:30])
h = bytearray(d); i = h.find(b"data")
h[i + 4:i + 8] = struct.pack("<I", 0xFFFFFFF0); h[4:8] = struct.pack("<I", 0xFFFFFFF8)   # hours claimed
open("huge.wav", "wb").write(h)
h = bytearray(d); h[24:28] = struct.pack("<I", 1); h[28:32] = struct.pack("<I", 2)
open("rate1.wav", "wb").write(h)
EOF

# audio
rc=0; rm -rf o; "$S" --out o trunc.wav a.txt 2> err.txt || rc=$?
[ "$rc" = 0 ] || [ "$rc" = 3 ] || fail "truncated audio: exit $rc: $(cat err.txt)"
expect 2 'hdronly.wav: no samples' -- --out o hdronly.wav a.txt
expect 2 "hdr30.wav: not audio libsndfile can decode" -- --out o hdr30.wav a.txt
expect 0 '' -- --out o huge.wav a.txt
[ -s o/metadata.csv ] || fail "huge header: no clips"
expect 2 'rate1.wav: unusable audio' -- --out o rate1.wav a.txt

# pairs lists
printf 'a.wav\ta.txt\r\n' > crlf.tsv
expect 0 '' -- --out o --pairs crlf.tsv
printf '\xef\xbb\xbfa.wav\ta.txt\n' > bom.tsv
expect 0 '' -- --out o --pairs bom.tsv
printf '# recordings\n\n\r\na.wav\ta.txt\n\n' > blank.tsv
expect 0 '' -- --out o --pairs blank.tsv
printf 'a.wav\n' > onefield.tsv
expect 2 'onefield.tsv:1: needs AUDIO<TAB>TEXT' -- --out o --pairs onefield.tsv
printf 'a.wav\t\n' > notext.tsv
expect 2 'notext.tsv:1: an empty AUDIO or TEXT path' -- --out o --pairs notext.tsv
printf 'a.wav\ta.txt\ten\textra\n' > tab.tsv
expect 2 'tab.tsv:1: more than three fields' -- --out o --pairs tab.tsv
mkdir -p "dir x" adir; cp a.wav "dir x/a b.wav"
printf 'dir x/a b.wav\ta.txt\n' > space.tsv
expect 0 '' -- --out o --pairs space.tsv
printf 'adir\ta.txt\n' > audiodir.tsv
expect 2 'adir: a directory, not audio' -- --out o --pairs audiodir.tsv
printf 'a.wav\tadir\n' > textdir.tsv
expect 2 'adir: a directory, not a file' -- --out o --pairs textdir.tsv
expect 2 'adir: a directory, not a file' -- --out o --pairs adir
expect 2 'adir: a directory, not a file' -- --out o a.wav adir

# a --lang the text is not in: done, the sentences that do not match left out and named
rc=0; rm -rf o; "$S" --out o --lang ja a.wav a.txt 2> err.txt || rc=$?
[ "$rc" = 3 ] || fail "--lang ja on English: exit $rc: $(cat err.txt)"
grep -q 'a.txt:1: left out' err.txt || fail "--lang ja: the left-out sentence not named: $(cat err.txt)"

# --out
touch ofile
expect 2 'ofile: --out names a file, not a directory' -- --out ofile a.wav a.txt
if [ "$(id -u)" != 0 ]; then
  mkdir -p ro && chmod 555 ro
  expect 2 'ro/o' -- --out ro/o a.wav a.txt
  chmod 755 ro
fi
# no room (ulimit -f, SIGXFSZ ignored): exit 2, the clip named with the reason, no half clip
# under its name (libpulse, which espeak-ng loads, may print its own "ftruncate() failed" line
# under the limit: its shared memory, not our file)
for kib in 1 20 100; do
  rc=0; rm -rf o
  bash -c 'trap "" XFSZ; ulimit -f "$1"; shift; exec "$@"' _ "$kib" "$S" --out o a.wav a.txt 2> err.txt || rc=$?
  [ "$rc" = 2 ] || fail "ulimit -f $kib: exit $rc: $(cat err.txt)"
  [ "$(grep -c '^xtts-segment: o/wavs/a_0001.wav: cannot write: File too large$' err.txt)" = 1 ] ||
    fail "ulimit -f $kib: $(cat err.txt)"
  [ -z "$(ls o/wavs)" ] || fail "ulimit -f $kib: left $(ls o/wavs)"
done
echo "faults_segment_inputs: ok"
