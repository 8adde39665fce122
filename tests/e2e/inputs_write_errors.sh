#!/usr/bin/env bash
# Every output is checked: a full disk (/dev/full), a size limit, a closed pipe or an
# output that cannot be created is exit 2 with one line naming the output, never exit 0
# with the data lost.
# 1. python3 -m xtts_prep: --npy to /dev/full (np.save's failed flush used to pass: exit
#    0, nothing written), to a missing folder and past `ulimit -f` (the half-written file
#    removed); the summary, a record, --digest and --about to /dev/full and to a pipe whose
#    reader has gone (EPIPE); --help's text to /dev/full; usage errors exit 1, not
#    argparse's 2.
# 2. the C programs' own outputs: xtts-tokenize's standard output and --rejects,
#    xtts-melcache's --rejects, xtts-cache-inspect's summary and --npy, xtts-cache-verify's
#    report and --json, xtts-train's --log-json - (one line: the exit handler added a second).
set -euo pipefail
source "$(dirname "$0")/faults_lib.bash"

demo_tokens
"$BIN/xtts-melcache" -q --out "$T/c" "$T/tokens.tsv" 2>/dev/null || [ $? -eq 3 ] || die "demo build"
export PYTHONPATH="$HERE/python"
xp=("$PY" -m xtts_prep)

# ---- 1. the Python command line ---------------------------------------------------------------
expect_rc 0 "${xp[@]}" "$T/c" --index 0 --npy "$T/m.npy"
[ -s "$T/m.npy" ] || die "--npy wrote nothing"
expect_rc 2 "${xp[@]}" "$T/c" --index 0 --npy /dev/full
one_line_error '^xtts_prep: /dev/full: write failed: No space left on device$'
expect_rc 2 "${xp[@]}" "$T/c" --index 0 --npy "$T/no/such/dir/m.npy"
one_line_error "^xtts_prep: $T/no/such/dir/m.npy: cannot create: No such file or directory$"
rc=0; (trap '' XFSZ; ulimit -f 8; exec "${xp[@]}" "$T/c" --index 0 --npy "$T/cut.npy") 2>"$T/err.txt" || rc=$?
[ $rc -eq 2 ] || { cat "$T/err.txt" >&2; die "--npy past ulimit -f: exit $rc"; }
one_line_error "^xtts_prep: $T/cut.npy: write failed"
[ ! -e "$T/cut.npy" ] || die "a half-written .npy was left behind"
for args in "$T/c" "$T/c --index 0" "$T/c --digest" "--about"; do
  rc=0
  # shellcheck disable=SC2086
  "${xp[@]}" $args >/dev/full 2>"$T/err.txt" || rc=$?
  [ $rc -eq 2 ] || die "xtts_prep $args >/dev/full: exit $rc"
  one_line_error '^xtts_prep: standard output: write failed: No space left on device$'
done
# --help's text is an output too (argparse's unchecked write ended in a traceback, exit 1);
# a usage error is exit 1 (argparse's own exit 2 is the code of an input error)
rc=0; "${xp[@]}" --help >/dev/full 2>"$T/err.txt" || rc=$?
[ $rc -eq 2 ] || die "xtts_prep --help >/dev/full: exit $rc"
one_line_error '^xtts_prep: standard output: write failed: No space left on device$'
expect_rc 1 "${xp[@]}" --no-such-option
one_line_error '^python3 -m xtts_prep: unrecognized arguments: --no-such-option$'
expect_rc 1 "${xp[@]}"
one_line_error 'the cache directory is required'
# a pipe whose reading end is closed before the command starts: EPIPE at the first write
"$PY" - "$T/c" <<'PY'
import os, subprocess, sys
r, w = os.pipe()
os.close(r)
p = subprocess.run([sys.executable, "-m", "xtts_prep", sys.argv[1], "--index", "0"], stdout=w,
                   stderr=subprocess.PIPE, text=True)
os.close(w)
assert p.returncode == 2, (p.returncode, p.stderr)
assert p.stderr == "xtts_prep: standard output: write failed: Broken pipe\n", p.stderr
PY

# ---- 2. the C programs ---------------------------------------------------------------------------
rc=0; "$BIN/xtts-tokenize" --lang auto "$T/data/metadata.csv" >/dev/full 2>"$T/err.txt" || rc=$?
[ $rc -eq 2 ] || die "xtts-tokenize >/dev/full: exit $rc"
grep -q '^xtts-tokenize: standard output: write failed: No space left on device$' "$T/err.txt" || die "tokenize stdout"
expect_rc 2 "$BIN/xtts-tokenize" --lang auto --rejects /dev/full "$T/data/metadata.csv"
grep -q '^xtts-tokenize: /dev/full: write failed: No space left on device$' "$T/err.txt" || die "tokenize --rejects"
expect_rc 2 "$BIN/xtts-melcache" --out "$T/c2" --rejects /dev/full "$T/tokens.tsv"
grep -q '^xtts-melcache: /dev/full: write failed: No space left on device$' "$T/err.txt" || die "melcache --rejects"
for args in "$T/c" "$T/c --stats"; do
  rc=0
  # shellcheck disable=SC2086
  "$BIN/xtts-cache-inspect" $args >/dev/full 2>"$T/err.txt" || rc=$?
  [ $rc -eq 2 ] || die "xtts-cache-inspect $args >/dev/full: exit $rc"
  grep -q 'standard output: write failed' "$T/err.txt" || die "inspect $args"
done
expect_rc 2 "$BIN/xtts-cache-inspect" "$T/c" --index 0 --npy /dev/full
grep -q '/dev/full: write failed' "$T/err.txt" || die "inspect --npy"
for args in "$T/c" "--json $T/c"; do
  rc=0
  # shellcheck disable=SC2086
  "$BIN/xtts-cache-verify" $args >/dev/full 2>"$T/err.txt" || rc=$?
  [ $rc -eq 2 ] || die "xtts-cache-verify $args >/dev/full: exit $rc"
  grep -q 'standard output: write failed' "$T/err.txt" || die "verify $args"
done
# xtts-train's JSON log on standard output: one line naming it (the exit handler used to add
# a second, "standard output: write failed")
for args in "--steps 1" "--steps 1 --loader-only"; do
  rc=0
  # shellcheck disable=SC2086
  "$BIN/xtts-train" --cache "$T/c" --batch-size 4 $args --log-json - >/dev/full 2>"$T/err.txt" || rc=$?
  [ $rc -eq 2 ] || die "xtts-train $args --log-json - >/dev/full: exit $rc"
  grep -qE '^xtts-train: standard output: cannot write the JSON log( at step 1)?: No space left on device$' "$T/err.txt" \
    || { cat "$T/err.txt" >&2; die "xtts-train $args --log-json -: the line"; }
  [ "$(grep -c 'write' "$T/err.txt")" -eq 1 ] || { cat "$T/err.txt" >&2; die "xtts-train $args --log-json -: two lines"; }
done
echo "inputs_write_errors: ok"
