#!/usr/bin/env bash
# Fault injection: no room to write.
# 1. a file-size limit (ulimit -f, SIGXFSZ ignored) at several sizes during an
#    xtts-melcache build: exit 2 with one line naming the shard, the limit and where a
#    re-run resumes; a re-run with room finishes with the digest of an uninterrupted build.
#    With SIGXFSZ not ignored the build may die of the signal; a re-run also completes.
# 2. a full disk (a small tmpfs; needs root and mount, skipped cleanly otherwise): sizes
#    around the finished cache's size, so that the records' commit or the manifest write
#    fails; each: exit 2, one line, then a re-run after the filesystem grows completes.
# 3. xtts-train on a full disk: a checkpoint or the --log-json log that cannot be written
#    stops the run with exit 2 and one line (never a truncated log with exit 0).
set -euo pipefail
source "$(dirname "$0")/faults_lib.bash"

demo_tokens
expect_rc 3 "$BIN/xtts-melcache" --out "$T/ref" -j 2 -q "$T/tokens.tsv"
d_ref=$(digest "$T/ref"); [ -n "$d_ref" ] || die "reference build does not verify"
data_kb=$(( $(stat -c %s "$T/ref/shard-00000/data.mdb") / 1024 ))
echo "reference: data.mdb $data_kb KiB, digest $d_ref"

# limited KIB DIR ARGS...: xtts-melcache under ulimit -f KIB with SIGXFSZ ignored
limited() {
  local kib=$1 dir=$2; shift 2
  bash -c 'trap "" XFSZ; ulimit -f "$1"; shift; exec "$@"' _ "$kib" \
    "$BIN/xtts-melcache" --out "$dir" -j 2 -q "$@" "$T/tokens.tsv"
}

# 1. size limits: early, middle, late, and with a single commit at the end
for case in "64 4" "$((data_kb / 2)) 4" "$((data_kb - 64)) 4" "$((data_kb / 2)) 256"; do
  set -- $case; kib=$1; every=$2
  rm -rf "$T/lim"
  expect_rc 2 limited "$kib" "$T/lim" --commit-every "$every"
  one_line_error "shard-00000: commit of [0-9]+ records failed: .*\(file size limit of $((kib * 1024)) bytes\); the cache holds the first [0-9]+ records of the input, re-run to resume"
  [ ! -f "$T/lim/manifest.json" ] || die "a failed build left a manifest"
  expect_rc 2 "$BIN/xtts-cache-verify" "$T/lim"
  expect_rc 3 "$BIN/xtts-melcache" --out "$T/lim" -j 2 -q --commit-every "$every" "$T/tokens.tsv"
  [ "$(digest "$T/lim")" = "$d_ref" ] || die "digest after a size limit of $kib KiB differs"
  echo "ok: ulimit -f $kib (commit every $every): exit 2, re-run completes"
done
# SIGXFSZ left at its default: the build dies of it (like a kill), a re-run completes
rm -rf "$T/sig"
rc=0; bash -c 'ulimit -f "$1"; shift; exec "$@"' _ $((data_kb / 2)) \
  "$BIN/xtts-melcache" --out "$T/sig" -j 2 -q --commit-every 4 "$T/tokens.tsv" 2>/dev/null || rc=$?
# (a write that starts below the limit is cut short without the signal: exit 2 then)
[ $rc -eq $((128 + $(kill -l XFSZ))) ] || [ $rc -eq 2 ] || die "with SIGXFSZ at its default: exit $rc"
expect_rc 3 "$BIN/xtts-melcache" --out "$T/sig" -j 2 -q --commit-every 4 "$T/tokens.tsv"
[ "$(digest "$T/sig")" = "$d_ref" ] || die "digest after SIGXFSZ differs"
echo "ok: SIGXFSZ at its default: exit $rc, re-run completes"

# 3a. (no mount needed) a JSON log on a full device: /dev/full
"$BUILD/tests/tools/synth-cache" "$T/tc" --records 24 --frames 32 >/dev/null 2>&1
tr=(--cache "$T/tc" --model tiny --width 32 --heads 2 --layers 1 --steps 4 --batch-size 4 --threads 2 --loader-threads 1 --log-every 100)
expect_rc 2 "$BIN/xtts-train" "${tr[@]}" --log-json /dev/full
one_line_error "/dev/full: cannot write the JSON log at step 1: No space left on device"
expect_rc 2 bash -c 'trap "" XFSZ; ulimit -f "$1"; shift; exec "$@"' _ 1 "$BIN/xtts-train" "${tr[@]}" --steps 12 --log-json "$T/small.json"
one_line_error "small.json: cannot write the JSON log at step [0-9]+: File too large"
echo "ok: train's JSON log cannot be written: exit 2"

# 2. a full disk: a tmpfs as small as the cache (root and mount needed)
mnt="$T/mnt"; mkdir -p "$mnt"
if ! mount -t tmpfs -o size=256k tmpfs "$mnt" 2>/dev/null; then
  echo "skip: cannot mount a tmpfs here (not root, or no permission): full-disk cases not run"
  exit 0
fi
trap 'umount "$mnt" 2>/dev/null || true' EXIT
# the room a whole build takes on this filesystem (records, lock files, manifest)
mount -o remount,size=8m "$mnt"
expect_rc 3 "$BIN/xtts-melcache" --out "$mnt/c" -j 2 -q --commit-every 8 "$T/tokens.tsv"
used=$(df -k --output=used "$mnt" | tail -n 1 | tr -d ' ')
umount "$mnt"
kinds=""
for kb in 256 $((used / 2)) $((used - 24)) $((used - 12)) $((used - 8)) $((used - 4)) $used $((used + 8)); do
  mount -t tmpfs -o size=${kb}k tmpfs "$mnt"
  rc=0; "$BIN/xtts-melcache" --out "$mnt/c" -j 2 -q --commit-every 8 "$T/tokens.tsv" >"$T/out.txt" 2>"$T/err.txt" || rc=$?
  case $rc in
    3) kinds="$kinds ${kb}k:fits" ;;
    2) if grep -q "commit of [0-9]* records failed: .*(disk full: [0-9]* bytes free); the cache holds the first [0-9]* records of the input, re-run to resume" "$T/err.txt"; then
         kinds="$kinds ${kb}k:commit"
       else
         one_line_error "manifest.json.tmp.[0-9]+: write failed: No space left on device"
         kinds="$kinds ${kb}k:manifest"
       fi
       one_line_error "." ;;
    *) cat "$T/err.txt"; die "full disk of ${kb}k: exit $rc" ;;
  esac
  grep -q tmp <<< "$(ls "$mnt/c")" && die "a temporary file was left behind at ${kb}k"
  mount -o remount,size=8m "$mnt"
  expect_rc 3 "$BIN/xtts-melcache" --out "$mnt/c" -j 2 -q --commit-every 8 "$T/tokens.tsv"
  [ "$(digest "$mnt/c")" = "$d_ref" ] || die "digest after a full disk of ${kb}k differs"
  umount "$mnt"
done
echo "full disk (a whole build takes ${used}k):$kinds"
case $kinds in *commit*) ;; *) die "no size made the commit fail" ;; esac
case $kinds in *fits*) ;; *) die "no size was enough" ;; esac

# 3b. a checkpoint on a full disk
mount -t tmpfs -o size=64k tmpfs "$mnt"
expect_rc 2 "$BIN/xtts-train" "${tr[@]}" --ckpt "$mnt/ck" --ckpt-every 2
one_line_error "train.ckpt.tmp.[0-9]+: write failed: No space left on device"
[ -z "$(ls "$mnt/ck")" ] || die "a failed checkpoint left files: $(ls "$mnt/ck")"
umount "$mnt"
echo "ok: full disk cases"
