#!/usr/bin/env bash
# The readers' fault guard (cache/store/read/guard.h) keeps a host process's own handlers: a
# Python program enables faulthandler (its own SIGSEGV handler), then reads a cache through
# the package with libxtts-reader.so, which puts the guard in front (the SIGSEGV handler now
# lies in the library); a real SIGSEGV outside any read (a NULL read through ctypes, in a
# child) still reaches faulthandler, which prints its report, and the child dies of SIGSEGV
# as it would have without the library. Reads of the cache keep working meanwhile.
set -euo pipefail
: "${BUILD:?}" "${TMPDIR_TEST:?}"
PY=${PYTHON:-/usr/bin/python3}
HERE=$(cd "$(dirname "$0")/../.." && pwd)
T=$TMPDIR_TEST
die() { echo "FAIL: $*" >&2; exit 1; }
if ! "$PY" -c 'import numpy' 2>/dev/null; then echo "skip: $PY lacks numpy"; exit 0; fi
LIB=$BUILD/lib/libxtts-reader.so
[ -f "$LIB" ] || { echo "skip: no $LIB"; exit 0; }
if grep -q 'lib[a-z]*san' <<< "$(ldd "$LIB")"; then echo "skip: a sanitizer build's library"; exit 0; fi

"$BUILD/tests/test_reader" --make-cache "$T/c" 40 15 fp16

cat > "$T/host.py" <<'PYEOF'
import ctypes, faulthandler, signal, sys
faulthandler.enable(file=sys.stderr, all_threads=False)  # the host's own SIGSEGV handler, first
import xtts_prep

libc = ctypes.CDLL(None)
def segv_handler_file():
    """The file whose code handles SIGSEGV now (glibc's struct sigaction starts with it)."""
    sa = ctypes.create_string_buffer(256)
    assert libc.sigaction(signal.SIGSEGV, None, sa) == 0
    fn = ctypes.c_void_p.from_buffer(sa).value
    class DlInfo(ctypes.Structure):
        _fields_ = [("fname", ctypes.c_char_p), ("fbase", ctypes.c_void_p), ("sname", ctypes.c_char_p),
                    ("saddr", ctypes.c_void_p)]
    info = DlInfo()
    assert fn and libc.dladdr(ctypes.c_void_p(fn), ctypes.byref(info)), "no SIGSEGV handler"
    return info.fname.decode()

before = segv_handler_file()
assert "libxtts-reader" not in before, before
c = xtts_prep.XttsCache(sys.argv[1], backend="c")
assert c[3]["id"] == "utt-00003"
after = segv_handler_file()
assert after.endswith("libxtts-reader.so"), "the guard is not in front: %s" % after
print("guard in front, reads work", flush=True)
if sys.argv[2] == "fault":
    ctypes.string_at(0)  # a real SIGSEGV, in no guarded read: the host's handler must see it
    print("survived a NULL read", flush=True)
PYEOF

export PYTHONPATH="$HERE/python" XTTS_PREP_LIB="$LIB"
"$PY" "$T/host.py" "$T/c" read > "$T/read.out" 2> "$T/read.err" || { cat "$T/read.err" >&2; die "reading with the host's handler failed"; }
grep -q '^guard in front, reads work$' "$T/read.out" || die "no read: $(cat "$T/read.out")"

set +e; "$PY" "$T/host.py" "$T/c" fault > "$T/fault.out" 2> "$T/fault.err"; rc=$?; set -e
grep -q '^guard in front, reads work$' "$T/fault.out" || { cat "$T/fault.err" >&2; die "the child did not get to its fault"; }
grep -q 'survived' "$T/fault.out" && die "the NULL read returned"
[ $rc -eq $((128 + 11)) ] || { cat "$T/fault.err" >&2; die "exit $rc, not death by SIGSEGV (139)"; }
grep -q 'Fatal Python error: Segmentation fault' "$T/fault.err" || { cat "$T/fault.err" >&2; die "faulthandler did not run"; }
echo "reader_guard_host_handler: ok"
