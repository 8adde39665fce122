#!/usr/bin/env bash
# xtts-tokenize and xtts-melcache with no input file read standard input; when that is a
# terminal they say so in one line on stderr (how to end it, what to give instead) before
# waiting, instead of waiting silently. xtts-melcache given a metadata file or a dataset folder
# says to run xtts-tokenize first.
set -euo pipefail
source "$(dirname "$0")/faults_lib.bash"
# on_tty OUT CMD...: run CMD with a terminal (a pseudo-terminal) as standard input; once it
# has written its first line to stderr (or after 10 s), type Ctrl-D; stderr into OUT
on_tty() {
  local out=$1; shift
  "$PY" - "$out" "$@" <<'PYEOF'
import os, pty, select, subprocess, sys, time
out, cmd = sys.argv[1], sys.argv[2:]
master, slave = pty.openpty()
p = subprocess.Popen(cmd, stdin=slave, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
os.close(slave)
err = b""
end = time.time() + 10
while b"\n" not in err and time.time() < end:
    r, _, _ = select.select([p.stderr], [], [], 0.2)
    if r:
        chunk = os.read(p.stderr.fileno(), 4096)
        if not chunk: break
        err += chunk
first = err
os.write(master, b"\x04")   # Ctrl-D: the end of the input
try:
    _, rest = p.communicate(timeout=30)
except subprocess.TimeoutExpired:
    p.kill(); sys.exit("still running after Ctrl-D")
open(out, "wb").write(first + b"---- after Ctrl-D\n" + rest)
PYEOF
}
on_tty "$T/tok.txt" "$BIN/xtts-tokenize" --lang en
head -n 1 "$T/tok.txt" | grep -q "^xtts-tokenize: reading the metadata from standard input (a terminal): end it with Ctrl-D, stop with Ctrl-C, or give a metadata file or dataset folder" ||
  { cat "$T/tok.txt" >&2; die "xtts-tokenize on a terminal said nothing first"; }
[ "$(grep -c "reading the metadata from standard input" "$T/tok.txt")" -eq 1 ] || die "said more than once"
on_tty "$T/mc.txt" "$BIN/xtts-melcache" --out "$T/c"
grep -q "^xtts-melcache: reading the token stream from standard input (a terminal): end it with Ctrl-D" "$T/mc.txt" ||
  { cat "$T/mc.txt" >&2; die "xtts-melcache on a terminal said nothing"; }
# not a terminal: no such line
printf 'a|Hello there.|Hello there.\n' > "$T/m.csv"
expect_rc 0 "$BIN/xtts-tokenize" --lang en --format ljspeech < "$T/m.csv"
! grep -q "standard input" "$T/err.txt" || die "the terminal line on a pipe"

# xtts-melcache given the metadata or the dataset folder: one line pointing at xtts-tokenize
bash "$HERE/scripts/make-demo-dataset.sh" "$T/data" >/dev/null 2>&1
expect_rc 2 "$BIN/xtts-melcache" --out "$T/c2" "$T/data/metadata.csv"
one_line_error "^xtts-melcache: $T/data/metadata.csv:1: not a token stream .*xtts-tokenize $T/data/metadata.csv \| xtts-melcache --out DIR$"
expect_rc 2 "$BIN/xtts-melcache" --out "$T/c2" "$T/data"
one_line_error "^xtts-melcache: $T/data: a directory, not a token stream; .*xtts-tokenize $T/data \| xtts-melcache --out DIR$"
[ ! -e "$T/c2" ] || die "a refused build made its --out"
echo ok
