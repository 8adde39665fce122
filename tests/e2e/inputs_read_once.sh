#!/usr/bin/env bash
# Inputs are read once, whatever kind of file they are. xtts-tokenize reads its metadata
# in three passes and opened the path for each: from a FIFO the first pass read to the end
# and the second waited for ever for a new writer; from <(cat metadata.csv) it read nothing
# after the format sniffing ("0 records read", or an "empty input"). Now an input that
# cannot be read twice is read once, into a temporary file, like standard input.
# 1. xtts-tokenize on a FIFO, on <(...), on <(gzip ...), on standard input and with
#    --format given: the token stream of the regular file, byte for byte (run from the
#    dataset folder, so audio paths resolve alike; a pipe's audio is looked for in the
#    current directory, not under /proc/PID/fd).
#    --vocab, --val-list and --test-list through pipes give the same stream too.
# 2. xtts-melcache on a FIFO and on <(...): the cache of the regular file (same digest).
# 3. xtts-train --resume of a FIFO: refused at once (exit 2; a checkpoint is read twice).
# 4. a FIFO in place of a shard's data.mdb, met by xtts-melcache: refused at once as damaged
#    (exit 2, --force rebuilds).
# 5. in bounded memory: an endless binary input (/dev/urandom) stops at its first bad bytes
#    (under a 300 MB address-space limit, within the timeout), and a piped input is kept in an
#    unlinked temporary file under $TMPDIR, not in memory, and tokenized whole.
# Every command runs under a timeout: a hang fails the test.
set -euo pipefail
source "$(dirname "$0")/faults_lib.bash"

demo_tokens
D="$T/data"
tok=(timeout 60 "$BIN/xtts-tokenize" --lang auto)
cd "$D"
rc=0; "${tok[@]}" metadata.csv > "$T/ref.tsv" 2>/dev/null || rc=$?
[ $rc -eq 3 ] || die "regular file: exit $rc"
[ "$(grep -vc '^#' "$T/ref.tsv")" -gt 50 ] || die "too few records from the regular file"

same() { # NAME: $T/out.tsv equals the reference stream
  cmp -s "$T/out.tsv" "$T/ref.tsv" || { diff "$T/out.tsv" "$T/ref.tsv" | head -5 >&2; die "$1: another token stream"; }
}
mkfifo "$D/fifo.csv"
for fmt in "" "--format ljspeech"; do
  timeout 60 sh -c 'cat metadata.csv > fifo.csv' &
  # shellcheck disable=SC2086
  rc=0; "${tok[@]}" $fmt fifo.csv > "$T/out.tsv" 2>"$T/err.txt" || rc=$?
  wait
  [ $rc -eq 3 ] || { cat "$T/err.txt" >&2; die "FIFO $fmt: exit $rc"; }
  same "FIFO $fmt"
  # shellcheck disable=SC2086
  rc=0; "${tok[@]}" $fmt <(cat metadata.csv) > "$T/out.tsv" 2>"$T/err.txt" || rc=$?
  [ $rc -eq 3 ] || { cat "$T/err.txt" >&2; die "<(cat) $fmt: exit $rc"; }
  same "<(cat) $fmt"
  grep -q "records read, 63 written" "$T/err.txt" || die "<(cat) $fmt: summary"
  # shellcheck disable=SC2086
  rc=0; "${tok[@]}" $fmt - < metadata.csv > "$T/out.tsv" 2>/dev/null || rc=$?
  [ $rc -eq 3 ] || die "stdin $fmt: exit $rc"
  same "stdin $fmt"
done
rc=0; "${tok[@]}" <(gzip -c metadata.csv) > "$T/out.tsv" 2>/dev/null || rc=$?
[ $rc -eq 3 ] || die "<(gzip) exit $rc"
same "<(gzip)"
# the other files it reads, through pipes: --vocab, --val-list, --test-list
V="$HERE/tests/golden/bpe_xtts.json"
printf 'en_001\n' > "$T/val.txt"; printf 'en_002\n' > "$T/test.txt"
rc=0; "${tok[@]}" --vocab "$V" --val-list "$T/val.txt" --test-list "$T/test.txt" metadata.csv \
  > "$T/ref2.tsv" 2>/dev/null || rc=$?
[ $rc -eq 3 ] || die "--vocab from a file: exit $rc"
rc=0; "${tok[@]}" --vocab <(cat "$V") --val-list <(cat "$T/val.txt") --test-list <(cat "$T/test.txt") \
  <(cat metadata.csv) > "$T/out.tsv" 2>/dev/null || rc=$?
[ $rc -eq 3 ] || die "--vocab, lists and metadata from pipes: exit $rc"
cmp -s "$T/out.tsv" "$T/ref2.tsv" || die "--vocab, lists and metadata from pipes: another token stream"
cd "$T"

# ---- 2. xtts-melcache's token stream ----------------------------------------------------------------
rc=0; timeout 120 "$BIN/xtts-melcache" -q --out "$T/c_file" "$T/tokens.tsv" 2>/dev/null || rc=$?
[ $rc -eq 3 ] || die "melcache from a file: exit $rc"
want=$(digest "$T/c_file")
mkfifo "$T/tokens.fifo"
timeout 120 sh -c 'cat "$1" > "$2"' sh "$T/tokens.tsv" "$T/tokens.fifo" &
rc=0; timeout 120 "$BIN/xtts-melcache" -q --out "$T/c_fifo" "$T/tokens.fifo" 2>/dev/null || rc=$?
wait
[ $rc -eq 3 ] || die "melcache from a FIFO: exit $rc"
[ "$(digest "$T/c_fifo")" = "$want" ] || die "melcache from a FIFO: another cache"
rc=0; timeout 120 "$BIN/xtts-melcache" -q --out "$T/c_proc" <(cat "$T/tokens.tsv") 2>/dev/null || rc=$?
[ $rc -eq 3 ] || die "melcache from <(cat): exit $rc"
[ "$(digest "$T/c_proc")" = "$want" ] || die "melcache from <(cat): another cache"

# ---- 3. xtts-train's checkpoint ---------------------------------------------------------------------
timeout 120 "$BIN/xtts-train" --cache "$T/c_file" --steps 2 --batch-size 4 --ckpt "$T/ck" 2>/dev/null
# (no writer: the open itself must not wait for one)
mkfifo "$T/ck.fifo"
expect_rc 2 timeout 60 "$BIN/xtts-train" --cache "$T/c_file" --steps 4 --batch-size 4 --resume "$T/ck.fifo"
one_line_error "^xtts-train: $T/ck.fifo: not a regular file"
# ---- 4. a FIFO in data.mdb's place, met by the writer -------------------------------------------
# (it waited in open() for a writer; now damaged, exit 2 at once, and --force rebuilds)
cp -r "$T/c_file" "$T/c_bad"
rm "$T/c_bad/shard-00000/data.mdb"
mkfifo "$T/c_bad/shard-00000/data.mdb"
expect_rc 2 timeout 60 "$BIN/xtts-melcache" -q --out "$T/c_bad" "$T/tokens.tsv"
one_line_error "^xtts-melcache: $T/c_bad/shard-00000/data.mdb: damaged \(not a regular file\); use --force to rebuild the cache$"
# the readers: damaged at once too, never a wait in open()
expect_rc 2 timeout 60 "$BIN/xtts-cache-verify" "$T/c_bad"
grep -q '^fault: shard-00000: damaged (.*data.mdb is not a regular file)$' "$T/out.txt" || { cat "$T/out.txt" >&2; die "verify on a FIFO data.mdb"; }
expect_rc 2 timeout 60 "$BIN/xtts-cache-inspect" "$T/c_bad"
one_line_error "^xtts-cache-inspect: shard-00000: damaged \(.*data.mdb is not a regular file\)$"
expect_rc 2 timeout 60 "$BIN/xtts-train" --cache "$T/c_bad" --steps 1 --batch-size 2
one_line_error "^xtts-train: $T/c_bad: shard-00000: damaged \(.*data.mdb is not a regular file\)$"
rc=0; timeout 60 env PYTHONPATH="$HERE/python" "$PY" -c 'import sys, xtts_prep
try:
    c = xtts_prep.XttsCache(sys.argv[1]); [c[i] for i in range(len(c))]
except xtts_prep.CacheError as e:
    print(e); sys.exit(2)' "$T/c_bad" > "$T/py.txt" 2>&1 || rc=$?
[ $rc -eq 2 ] && grep -q 'not a regular file' "$T/py.txt" || { cat "$T/py.txt" >&2; die "Python reader on a FIFO data.mdb: exit $rc"; }
expect_rc 3 timeout 120 "$BIN/xtts-melcache" -q --force --out "$T/c_bad" "$T/tokens.tsv"
[ "$(digest "$T/c_bad")" = "$want" ] || die "--force over a FIFO data.mdb: another cache"
# ---- 5. bounded memory ---------------------------------------------------------------------------
for fmt in auto ljspeech tsv; do
  rc=0; vlimit 300000 timeout 30 "$BIN/xtts-tokenize" --format "$fmt" /dev/urandom > /dev/null 2> "$T/err.txt" || rc=$?
  [ $rc -eq 2 ] && grep -q "^xtts-tokenize: /dev/urandom:[0-9]*: binary data (a NUL byte at offset [0-9]*), not a metadata text$" "$T/err.txt" ||
    { cat "$T/err.txt" >&2; die "--format $fmt on /dev/urandom: exit $rc (want 2, stopped at the first NUL byte)"; }
done
# a piped input is kept in a temporary file ($TMPDIR), not in memory: one there while it runs, none after
mkdir -p "$T/spill"
# (the input stays open until the copy was seen, or 60 s: no timing window)
rc=0; { awk 'BEGIN { for (i = 0; i < 200000; i++) printf "id%d|%s|%s\n", i, "a few words", "a few words" }'
        for _ in $(seq 600); do [ -e "$T/seen" ] && break; sleep 0.1; done; } |
  TMPDIR="$T/spill" timeout 120 "$BIN/xtts-tokenize" --format ljspeech --lang en -q - > "$T/big.tsv" 2>/dev/null &
pid=$!; held=0
for _ in $(seq 500); do
  child=$(cat "/proc/$pid/task/$pid/children" 2>/dev/null || true)  # (timeout's child: xtts-tokenize)
  held=$(ls -l "/proc/${child%% *}/fd" 2>/dev/null | grep -c "$T/spill" || true)
  [ "$held" -ge 1 ] && break; sleep 0.1
done
touch "$T/seen"
wait $pid || rc=$?
[ $rc -eq 0 ] && [ "$(grep -vc '^#' "$T/big.tsv")" -eq 200000 ] || die "a large piped input: exit $rc"
[ "$held" -ge 1 ] || die "a piped input was not kept in a temporary file under \$TMPDIR"
[ -z "$(ls -A "$T/spill")" ] || die "the temporary copy of a piped input was left behind"
echo "inputs_read_once: ok"
