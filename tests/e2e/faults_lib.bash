# Shared by tests/e2e/faults_*.sh (sourced, not run: the suite runs *.sh only).
# Needs BUILD and TMPDIR_TEST; sets BIN, T, HERE, PY.
: "${BUILD:?}" "${TMPDIR_TEST:?}"
BIN="$BUILD/bin"
T="$TMPDIR_TEST"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PY=${PYTHON:-/usr/bin/python3}
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"

die() { echo "FAIL: $*" >&2; exit 1; }

# need_py_reader_modules WHY: skip the test (exit 0, saying WHY) unless $PY imports numpy, lmdb
# and zstandard (what the pure-Python reader needs)
need_py_reader_modules() {
  "$PY" -c 'import numpy, lmdb, zstandard' 2>/dev/null && return 0
  echo "skip: $PY lacks numpy, lmdb or zstandard ($1)"
  exit 0
}

# digest DIR: the content digest printed by xtts-cache-verify ("" when verify fails)
digest() { "$BIN/xtts-cache-verify" "$1" 2>/dev/null | sed -n 's/^digest: //p'; }

# demo_tokens: the demo dataset in $T/data and its token stream in $T/tokens.tsv
demo_tokens() {
  bash "$HERE/scripts/make-demo-dataset.sh" "$T/data" >/dev/null 2>&1
  local rc=0
  "$BIN/xtts-tokenize" --lang auto "$T/data/metadata.csv" > "$T/tokens.tsv" 2>/dev/null || rc=$?
  [ $rc -eq 0 ] || [ $rc -eq 3 ] || die "xtts-tokenize on the demo dataset: exit $rc"
}

# repeat_tokens IN OUT N: the stream IN with its records repeated N times under new ids
# (id~k), so a build lasts long enough to be interrupted at many moments
repeat_tokens() {
  awk -v n="$3" -F'\t' 'BEGIN{OFS="\t"} /^#/ {print; next} {r[++m]=$0}
    END {for (k = 0; k < n; k++) for (i = 1; i <= m; i++) {split(r[i], f, "\t"); f[1] = f[1] "~" k;
         line = f[1]; for (j = 2; j <= 6; j++) line = line OFS f[j]; print line}}' "$1" > "$2"
}

# expect_rc WANT CMD...: run CMD with stdout to $T/out.txt and stderr to $T/err.txt
expect_rc() {
  local want=$1; shift
  local rc=0
  "$@" >"$T/out.txt" 2>"$T/err.txt" || rc=$?
  if [ "$rc" -ne "$want" ]; then
    echo "---- $*: exit $rc, want $want" >&2; tail -n 5 "$T/out.txt" "$T/err.txt" >&2
    die "exit $rc from $(basename "$1")"
  fi
}

# one_line_error PATTERN: $T/err.txt holds exactly one line besides the notices (the
# "Try PROG --help" hint after a usage error,
# device choice, xtts-train's run description and step lines), and it matches PATTERN
# (grep -E)
one_line_error() {
  local lines
  lines=$(grep -Ev "device: cpu|device auto|train / [0-9]+ val records|^step [0-9]|^Try '[^']* --help' for more information\.$" "$T/err.txt" || true)
  [ "$(printf '%s\n' "$lines" | grep -c .)" -eq 1 ] || { cat "$T/err.txt" >&2; die "want one error line"; }
  printf '%s\n' "$lines" | grep -qE -- "$1" || { cat "$T/err.txt" >&2; die "error line lacks /$1/"; }
}

# README's "Real use" block (the first ```sh block after "## Real use" of README file $1) as
# $T/block.sh, and as $T/run.sh: the block run by bash where a failing command stops it unless
# its exit status is 3 (finished with rejected records, as the README says); sed expression
# $2, when given, rewrites the block in run.sh.
readme_real_use_script() {
  awk '/^## Real use/ {on = 1; next} on && /^```sh$/ {inb = 1; next} inb && /^```$/ {exit} inb {print}' "$1" > "$T/block.sh"
  [ -s "$T/block.sh" ] || die "no sh block under '## Real use' in $1"
  {
    echo 'trap '\''rc=$?; if [ $rc -ne 3 ]; then echo "FAIL: exit $rc: $BASH_COMMAND" >&2; exit 1; fi'\'' ERR'
    sed "${2:-}" "$T/block.sh"
  } > "$T/run.sh"
}

# kill_once_written PID FILE: wait until FILE is non-empty (a build's first commit is on disk)
# or the process PID has ended, at most ~20 s, then kill -9 it and wait for it (call it in
# the shell that started PID, not in $(...)); KILLED is "yes" when the kill found it still
# running, "no" when it had already finished
kill_once_written() {
  local pid=$1 file=$2
  for _ in $(seq 1 400); do
    [ -s "$file" ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  KILLED=no
  kill -9 "$pid" 2>/dev/null && KILLED=yes
  wait "$pid" 2>/dev/null || true
}

# nobody_tools: copies of the programs and of the Python package under $T, which an unprivileged
# user can reach even when the checkout lies where only its owner may enter (a clone in /root,
# mode 700, as on a fresh machine); sets NBIN and NPYTHONPATH to them
nobody_tools() {
  mkdir -p "$T/nobody/bin"
  cp "$BIN"/xtts-* "$T/nobody/bin/"
  cp -r "$HERE/python/xtts_prep" "$HERE/python/tests/xtts_oracle" "$T/nobody/"
  # the package's one decoder, where the package finds it beside itself: this build's, or in a
  # sanitizer build (whose library cannot load into an uninstrumented interpreter) the source
  # tree's own build's, as the package run from the source tree finds it; NPY_OK=0 where none
  local lib="$BUILD/lib/libxtts-reader.so"
  if sanitizer_build; then
    lib="$HERE/build/lib/libxtts-reader.so"
    ! grep -q 'lib[a-z]*san' <<< "$(ldd "$lib" 2>/dev/null)" || lib=
  fi
  NPY_OK=0
  if [ -n "$lib" ] && [ -f "$lib" ]; then cp "$lib" "$T/nobody/xtts_prep/"; NPY_OK=1; fi
  chmod 755 "$T"; chmod -R a+rX "$T/nobody"
  NBIN="$T/nobody/bin"; NPYTHONPATH="$T/nobody"
}

# vlimit KB CMD...: CMD under ulimit -v KB, or without the limit in a sanitizer build
# (AddressSanitizer reserves terabytes of shadow address space at start and cannot start under
# ulimit -v; the command's own bounds are then checked by its timeout alone)
vlimit() {
  local kb=$1; shift
  if sanitizer_build; then "$@"; else (ulimit -v "$kb"; "$@"); fi
}

# sanitizer_build: true when the programs under test link a sanitizer's runtime
sanitizer_build() { grep -q 'lib[a-z]*san' <<< "$(ldd "$BIN/xtts-tokenize" 2>/dev/null)"; }
