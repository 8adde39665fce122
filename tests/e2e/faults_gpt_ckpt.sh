#!/usr/bin/env bash
# The model.pth that xtts-train --model xtts-gpt --ckpt DIR writes (formats/model/torch_save.c:
# DIR/model.pth.tmp, fsync, rename, fsync of DIR): SIGKILL while it is being written (the kill
# sent once the temporary file exists, at the 1st to 4th write) leaves the previous model.pth
# whole (every zip entry's CRC good), and a file-size limit (ulimit -f, SIGXFSZ ignored, as
# faults_disk.sh) stops the run with exit 2 and one line naming the file, the previous
# model.pth unchanged. Needs torch for the cache's codes (xtts_gpt_lib.bash); skips without.
set -euo pipefail
source "$(dirname "$0")/faults_lib.bash"
source "$(dirname "$0")/xtts_gpt_lib.bash"

gpt_need_torch
gpt_cache
sed 's/"gpt_n_model_channels": 16/"gpt_n_model_channels": 64/' "$T/config.json" > "$T/config64.json"
G=(--model xtts-gpt --config "$T/config64.json" --cache "$T/c" --batch-size 2 -j 2 --ckpt-every 1 --ckpt "$T/ck")
expect_rc 0 "$BIN/xtts-train" "${G[@]}" --steps 1
whole() { "$PY" -c 'import sys, zipfile; sys.exit(zipfile.ZipFile(sys.argv[1]).testzip() is not None)' "$1" 2>/dev/null; }
whole "$T/ck/model.pth" || die "the first model.pth"

mid=0
for i in 1 2 3 4 5 6; do
  rm -f "$T/ck/model.pth.tmp"
  "$BIN/xtts-train" "${G[@]}" --steps 100000 >/dev/null 2>&1 &
  pid=$!
  n=$((RANDOM % 4)) t0=$SECONDS
  while :; do # the n-th write's temporary file
    until [ -e "$T/ck/model.pth.tmp" ] || [ $((SECONDS - t0)) -gt 20 ]; do :; done
    [ $n -eq 0 ] && break
    n=$((n - 1))
    while [ -e "$T/ck/model.pth.tmp" ] && [ $((SECONDS - t0)) -le 20 ]; do :; done
  done
  kill -9 $pid 2>/dev/null || true
  wait $pid 2>/dev/null || true
  [ -e "$T/ck/model.pth.tmp" ] && mid=$((mid + 1))
  whole "$T/ck/model.pth" || die "kill $i: model.pth not whole"
done
echo "killed 6 times, $mid while model.pth.tmp was open"
[ $mid -ge 3 ] || die "only $mid of 6 kills landed while writing"

# no room: one line, exit 2, the previous model.pth as it was
cp "$T/ck/model.pth" "$T/before.pth"
for kib in 100 1000 2000; do
  rc=0
  bash -c 'trap "" XFSZ; ulimit -f "$1"; shift; exec "$@"' _ "$kib" "$BIN/xtts-train" "${G[@]}" --steps 2 \
    >"$T/out.txt" 2>"$T/err.txt" || rc=$?
  [ $rc -eq 2 ] || { cat "$T/err.txt"; die "ulimit -f $kib: exit $rc, want 2"; }
  grep -Ev "^xtts-train: (xtts-gpt [0-9]+ layers|step [0-9]+/)" "$T/err.txt" > "$T/lines.txt" || true
  [ "$(wc -l < "$T/lines.txt")" -eq 1 ] && grep -q "^xtts-train: $T/ck/model.pth.tmp: cannot write: File too large" \
    "$T/lines.txt" || { cat "$T/err.txt"; die "ulimit -f $kib: want one line naming model.pth.tmp"; }
  cmp -s "$T/ck/model.pth" "$T/before.pth" || die "ulimit -f $kib: model.pth changed"
done
echo "ok"
