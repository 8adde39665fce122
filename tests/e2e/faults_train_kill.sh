#!/usr/bin/env bash
# Fault injection: kill -9 during xtts-train (with --ckpt-every), at random moments after
# its first checkpoint, followed by --resume. The resumed run must repeat the
# uninterrupted run exactly: its step losses (loss, mel, stop, lr, grad norm, validation)
# from the checkpoint on equal the uninterrupted run's, the killed run's own log equals
# the uninterrupted run's up to where it died, and the final checkpoints are
# byte-identical. A checkpoint file is never seen half written (atomic rename), and the
# temporary file of a run killed while saving is removed by the next run.
# FAULTS_SEED=N replays the kill moments; the assertions do not depend on them.
set -euo pipefail
source "$(dirname "$0")/faults_lib.bash"

seed=${FAULTS_SEED:-$(( $(date +%s) % 100000 ))}
echo "seed $seed"
RANDOM=$seed
X="$BIN/xtts-train"
"$BUILD/tests/tools/synth-cache" "$T/cache" --records 40 --frames 48 >/dev/null 2>&1
steps=40
common=(--cache "$T/cache" --model tiny --width 64 --heads 4 --steps $steps --batch-size 4 --lr 1e-3 --warmup 2
        --threads 2 --loader-threads 2 --seed 7 --eval-every 5 --log-every 100)
# the deterministic fields of a JSON log line (timings dropped)
fields() { sed -e 's/"step_ms":[^,]*,"samples_per_s":[^,]*,"input_stall_pct":[^,]*,//' "$1" | grep '^{"step"'; }

t0=$(date +%s%N)
expect_rc 0 "$X" "${common[@]}" --log-json "$T/straight.json" --ckpt "$T/ck_straight"
span=$(( ($(date +%s%N) - t0) / 1000000 ))   # ms, as measured here: kills land within it
fields "$T/straight.json" > "$T/straight.txt"
[ "$(wc -l < "$T/straight.txt")" -eq $steps ] || die "uninterrupted run logged $(wc -l < "$T/straight.txt") steps"

pid=
trap '[ -z "$pid" ] || kill -9 "$pid" 2>/dev/null || true' EXIT
for trial in 1 2 3; do
  ck="$T/ck$trial"; rm -rf "$ck" "$T/first.json" "$T/second.json"
  "$X" "${common[@]}" --log-json "$T/first.json" --ckpt "$ck" --ckpt-every 3 2>"$T/first.err" & pid=$!
  for _ in $(seq 1 3000); do [ -f "$ck/train.ckpt" ] && break; kill -0 "$pid" 2>/dev/null || break; sleep 0.01; done
  [ -f "$ck/train.ckpt" ] || { cat "$T/first.err"; die "no checkpoint appeared"; }
  at=$(( RANDOM % (span * 3 / 4 + 1) ))
  sleep "$(printf '%d.%03d' $((at / 1000)) $((at % 1000)))"
  kill -9 "$pid" 2>/dev/null || true
  rc=0; wait "$pid" 2>/dev/null || rc=$?; pid=
  [ $rc -eq 137 ] || [ $rc -eq 0 ] || { cat "$T/first.err"; die "trial $trial: exit $rc before the kill"; }
  # the killed run's log is the uninterrupted run's, up to where it died
  fields "$T/first.json" > "$T/first.txt" || true
  n1=$(wc -l < "$T/first.txt")
  head -n "$n1" "$T/straight.txt" | diff - "$T/first.txt" >/dev/null || die "trial $trial: the killed run's log differs"
  # a temporary checkpoint of a dead process (as a kill while saving leaves) is removed by
  # the next run; one of a live process is not
  true & dead=$!; wait $dead
  echo partial > "$ck/train.ckpt.tmp.$dead"; echo live > "$ck/train.ckpt.tmp.$$"
  # resume; the checkpoint's step comes from the resumed run's notice
  expect_rc 0 "$X" "${common[@]}" --log-json "$T/second.json" --ckpt "$ck" --ckpt-every 3 --resume "$ck"
  s=$(sed -n 's/.*resumed .* at step \([0-9]*\) .*/\1/p' "$T/err.txt")
  [ -n "$s" ] || { cat "$T/err.txt"; die "trial $trial: no 'resumed ... at step' notice"; }
  { [ $((s % 3)) -eq 0 ] || [ "$s" -eq $steps ]; } && [ "$s" -le "$n1" ] || die "trial $trial: resumed at step $s, killed run logged $n1"
  fields "$T/second.json" > "$T/second.txt" || true
  [ "$(wc -l < "$T/second.txt")" -eq $((steps - s)) ] || die "trial $trial: resumed run logged $(wc -l < "$T/second.txt") steps, want $((steps - s))"
  tail -n $((steps - s)) "$T/straight.txt" | diff - "$T/second.txt" || die "trial $trial: losses after resuming at step $s differ"
  cmp "$T/ck_straight/train.ckpt" "$ck/train.ckpt" || die "trial $trial: final checkpoint differs"
  grep -q "removed $ck/train.ckpt.tmp.$dead, left by an interrupted run" "$T/err.txt" || die "stale temporary not removed"
  [ "$(ls "$ck" | tr '\n' ' ')" = "train.ckpt train.ckpt.tmp.$$ " ] || die "trial $trial: $ck holds $(ls "$ck" | tr '\n' ' ')"
  echo "ok: trial $trial killed ${at} ms after the first checkpoint (logged $n1 steps, exit $rc), resumed at step $s"
done
