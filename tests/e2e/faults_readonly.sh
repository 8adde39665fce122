#!/usr/bin/env bash
# Fault injection: a cache that cannot be written.
# 1. read-only permissions (chmod -R a-w) read by an unprivileged user (nobody; root
#    ignores permissions): xtts-cache-verify (--deep too), xtts-cache-inspect (summary and
#    --npy elsewhere), the Python reader over every record, xtts-train --loader-only and a
#    few training steps with --ckpt elsewhere all work, with the digest of the writable
#    original; writers (xtts-melcache resume and --force, xtts-cache-merge) refuse with
#    exit 2 and one line naming the lock file and the reason.
# 2. the same on a read-only bind mount, as root (skipped cleanly when mount is not allowed).
# In both, not a byte of the cache changes.
set -euo pipefail
source "$(dirname "$0")/faults_lib.bash"

demo_tokens
expect_rc 3 "$BIN/xtts-melcache" --out "$T/rw" -j 2 -q --val-fraction 0.2 "$T/tokens.tsv"
d_ref=$(digest "$T/rw"); [ -n "$d_ref" ] || die "the cache does not verify"
n_ref=$("$PY" -c "import json,sys;print(json.load(open(sys.argv[1]))['records'])" "$T/rw/manifest.json")

cat > "$T/pyread.py" <<'PYEOF'
import sys
from xtts_prep import XttsCache
c = XttsCache(sys.argv[1])
frames = 0
for i in range(len(c)):
    r = c.get(i)
    frames += r["mel"].shape[1]
    c.get(i, padded=True)
assert c.index_of(c.get(3)["id"]) == 3
print(len(c), frames)
PYEOF
py_ref=$(PYTHONPATH="$HERE/python" "$PY" "$T/pyread.py" "$T/rw")
[ "${py_ref%% *}" = "$n_ref" ] || die "Python reader: $py_ref, manifest: $n_ref records"

fingerprint() { (cd "$1" && find . -type f -print0 | sort -z | xargs -0 sha256sum; find . -printf '%p %m %s\n' | sort) | sha256sum; }

# read_all AS DIR OUT: every reader on DIR, run through AS (a command prefix), writing
# only under OUT
read_all() {
  local as=$1 dir=$2 out=$3
  expect_rc 0 $as "$BIN/xtts-cache-verify" "$dir"
  grep -q "^digest: $d_ref$" "$T/out.txt" || die "verify of $dir: another digest"
  expect_rc 0 $as "$BIN/xtts-cache-verify" --deep "$dir"
  expect_rc 0 $as "$BIN/xtts-cache-inspect" "$dir"
  grep -q "$n_ref" "$T/out.txt" || die "inspect of $dir does not show $n_ref records"
  expect_rc 0 $as "$BIN/xtts-cache-inspect" --index 3 --npy "$out/r3.npy" "$dir"
  [ -s "$out/r3.npy" ] || die "inspect --npy wrote nothing"
  if [ "$RPYTHONPATH" != "${NPYTHONPATH:-}" ] || [ "${NPY_OK:-0}" = 1 ]; then
    expect_rc 0 $as env PYTHONPATH="$RPYTHONPATH" "$PY" "$T/pyread.py" "$dir"
    [ "$(cat "$T/out.txt")" = "$py_ref" ] || die "Python reader on $dir: $(cat "$T/out.txt"), want $py_ref"
  fi
  expect_rc 0 $as "$BIN/xtts-train" --cache "$dir" --loader-only --steps 6 --batch-size 4 --loader-threads 2
  expect_rc 0 $as "$BIN/xtts-train" --cache "$dir" --model tiny --width 32 --heads 2 --layers 1 --steps 3 \
    --batch-size 4 --threads 2 --loader-threads 1 --eval-every 2 --ckpt "$out/ck" --log-json "$out/log.json"
  [ -s "$out/ck/train.ckpt" ] && [ "$(grep -c '"step"' "$out/log.json")" -eq 3 ] || die "training on $dir wrote no checkpoint or log"
  # a checkpoint inside the read-only cache is refused clearly
  expect_rc 2 $as "$BIN/xtts-train" --cache "$dir" --model tiny --width 32 --heads 2 --layers 1 --steps 1 \
    --batch-size 4 --threads 2 --loader-threads 1 --ckpt "$dir/ck"
  one_line_error "$dir/ck: cannot create directory: ($4)"
}

# write_refused AS DIR REASON: every writer refuses, naming the lock file and REASON
write_refused() {
  local as=$1 dir=$2 why=$3
  expect_rc 2 $as "$BIN/xtts-melcache" --out "$dir" -j 2 -q --val-fraction 0.2 "$T/tokens.tsv"
  one_line_error "$dir/\.xtts-lock: cannot open lock file: $why"
  expect_rc 2 $as "$BIN/xtts-melcache" --out "$dir" -j 2 -q --force --dtype fp32 "$T/tokens.tsv"
  one_line_error "$dir/\.xtts-lock: cannot open lock file: $why"
  expect_rc 2 $as "$BIN/xtts-cache-merge" "$dir"
  one_line_error "$dir/\.xtts-lock: cannot open lock file: $why"
}

fp_ref=$(fingerprint "$T/rw")

# 1. permissions, as nobody
as_nobody=""
if [ "$(id -u)" -ne 0 ]; then
  echo "skip: not root, cannot switch to an unprivileged user (permission case not run)"
elif command -v setpriv >/dev/null && setpriv --reuid=nobody --regid=nogroup --clear-groups true 2>/dev/null; then
  as_nobody="setpriv --reuid=nobody --regid=nogroup --clear-groups"
elif command -v runuser >/dev/null && runuser -u nobody -- true 2>/dev/null; then
  as_nobody="runuser -u nobody --"
else
  echo "skip: neither setpriv nor runuser can switch to nobody (permission case not run)"
fi
RPYTHONPATH="$HERE/python"
if [ -n "$as_nobody" ]; then
  # (the programs and the package as nobody may reach them: the checkout may lie in /root)
  nobody_tools; BIN_OWN=$BIN; BIN=$NBIN; RPYTHONPATH=$NPYTHONPATH
  if ! $as_nobody test -x "$BIN/xtts-cache-verify" -a -r "$RPYTHONPATH/xtts_prep/__init__.py"; then
    echo "skip: nobody cannot run $BIN or read $RPYTHONPATH (permission case not run)"; as_nobody=""
  fi
fi
if [ -n "$as_nobody" ]; then
  chmod a+rx "$T"
  cp -a "$T/rw" "$T/ro"; chmod -R a-w "$T/ro"
  fp_ro=$(fingerprint "$T/ro")
  mkdir -p "$T/out_nobody"; chmod 777 "$T/out_nobody"
  if ! $as_nobody test -r "$T/ro/manifest.json" -a -w "$T/out_nobody"; then
    echo "skip: nobody cannot reach $T (permission case not run)"; as_nobody=""
  fi
fi
if [ -n "$as_nobody" ]; then
  $as_nobody touch "$T/ro/probe" 2>/dev/null && die "nobody can write the read-only cache"
  read_all "$as_nobody" "$T/ro" "$T/out_nobody" "Permission denied"
  write_refused "$as_nobody" "$T/ro" "Permission denied"
  [ "$(fingerprint "$T/ro")" = "$fp_ro" ] || die "the read-only cache changed"
  echo "ok: read-only permissions, as $as_nobody"
fi
if [ -n "${BIN_OWN:-}" ]; then BIN=$BIN_OWN; RPYTHONPATH="$HERE/python"; fi

# 2. a read-only bind mount, as root
mnt="$T/mnt"; mkdir -p "$mnt"
if ! mount --bind "$T/rw" "$mnt" 2>/dev/null; then
  echo "skip: cannot bind-mount here (read-only mount case not run)"; exit 0
fi
trap 'umount "$mnt" 2>/dev/null || true' EXIT
if ! mount -o remount,bind,ro "$mnt" 2>/dev/null; then
  echo "skip: cannot remount read-only (read-only mount case not run)"; exit 0
fi
touch "$mnt/probe" 2>/dev/null && die "the read-only mount is writable"
mkdir -p "$T/out_root"
read_all "" "$mnt" "$T/out_root" "Read-only file system"
write_refused "" "$mnt" "Read-only file system"
umount "$mnt"; trap - EXIT
[ "$(fingerprint "$T/rw")" = "$fp_ref" ] || die "the cache under the read-only mount changed"
echo "ok: read-only mount"
