#!/usr/bin/env bash
# e2e: long
# The batch pipeline (the CUDA path's: sub-batches whose mels the engine computes on its own
# thread while the workers decode the next and encode the one before), run here with the CPU
# batch engine (XTTS_MELCACHE_BATCH=engine=cpu), gives the cache the CPU path gives, byte for
# byte: the same digest, manifest, rejects (in order, on stderr and in --rejects) and summary
# counts at -j 1, 2 and 3, with the default buffers and sub-batches and with small buffers
# cut so that rejected records (missing, empty and undecodable files) share sub-batches with
# good ones, one record a sub-batch, and one sub-batch a buffer; with clips rejected for their
# length scattered through the stream; the same for the whisper preset (a pad value per
# clip) with the waveform stored, for a build killed after its first commits and resumed,
# and for an update. A bad setting is a usage error (exit 1) before anything is written.
set -euo pipefail
source "$(dirname "$0")/faults_lib.bash"

demo_tokens
repeat_tokens "$T/tokens.tsv" "$T/s.tsv" 4          # 252 records, 12 rejected

# build NAME ENV ARGS...: a build of the stream into $T/NAME with XTTS_MELCACHE_BATCH=ENV
# ("" for the CPU path); exit 3 (some rejected) wanted; stderr in $T/NAME.err, rejects in $T/NAME.rej
build() {
  local name=$1 env=$2; shift 2
  local rc=0
  XTTS_MELCACHE_BATCH="$env" "$BIN/xtts-melcache" --device cpu --out "$T/$name" --rejects "$T/$name.rej" "$@" \
    2> "$T/$name.err" || rc=$?
  [ $rc -eq 3 ] || { cat "$T/$name.err" >&2; die "$name ($env $*): exit $rc"; }
  if [ -n "$env" ]; then
    grep -q "^xtts-melcache: batch pipeline: cpu engine, " "$T/$name.err" || die "$name: the batch pipeline did not run"
  else
    ! grep -q "batch pipeline" "$T/$name.err" || die "$name: the CPU path went through the batch pipeline"
  fi
}

# same REF NAME: NAME's cache is REF's (digest, manifest, rejects, reject lines, summary counts)
same() {
  local ref=$1 name=$2
  [ "$(digest "$T/$name")" = "$(digest "$T/$ref")" ] || die "$name: digest $(digest "$T/$name"), $ref's $(digest "$T/$ref")"
  cmp -s "$T/$ref/manifest.json" "$T/$name/manifest.json" || { diff "$T/$ref/manifest.json" "$T/$name/manifest.json" | head -5 >&2; die "$name: another manifest"; }
  cmp -s "$T/$ref.rej" "$T/$name.rej" || die "$name: other --rejects lines"
  diff <(grep 'rejected:' "$T/$ref.err") <(grep 'rejected:' "$T/$name.err") >/dev/null || die "$name: other reject lines on stderr"
  diff <(grep ' records in, ' "$T/$ref.err" | sed 's/ h of audio, .*//') \
       <(grep ' records in, ' "$T/$name.err" | sed 's/ h of audio, .*//') >/dev/null || die "$name: another summary"
}

build plain "" -j 2 "$T/s.tsv"
want=$(digest "$T/plain"); [ -n "$want" ] || die "the CPU path's cache does not verify"
[ "$(wc -l < "$T/plain.rej")" -eq 12 ] || die "want 12 rejects, got $(wc -l < "$T/plain.rej")"

for j in 1 2 3; do
  # default buffers (32..48 records, 4 sub-batches); buffers of 8 in 3 sub-batches of 2-3,
  # so that the demo's 3 bad files (inputs 60-62 of every 63) share sub-batches with good
  # records; one record a sub-batch; one sub-batch a buffer
  for env in engine=cpu engine=cpu,buffer=8,sub=3 engine=cpu,buffer=5,sub=64 engine=cpu,buffer=33,sub=1; do
    name="j$j-${env//[=,]/_}"
    build "$name" "$env" -j "$j" "$T/s.tsv"
    same plain "$name"
  done
done

# a length limit that rejects some clips here and there (more frames than --max-frames)
build lplain "" -j 2 --max-frames 300 "$T/s.tsv"
build lbatch engine=cpu,buffer=8,sub=3 -j 2 --max-frames 300 "$T/s.tsv"
[ "$(wc -l < "$T/lplain.rej")" -gt 12 ] && [ "$(wc -l < "$T/lplain.rej")" -lt 200 ] \
  || die "--max-frames 300: $(wc -l < "$T/lplain.rej") rejects, want some but not all"
same lplain lbatch

# whisper (a pad value per clip, from its maximum) with the waveform stored (the mel of the
# int16-rounded signal)
build wplain "" -j 2 --preset whisper --audio int16 "$T/s.tsv"
build wbatch engine=cpu,buffer=6,sub=4 -j 3 --preset whisper --audio int16 "$T/s.tsv"
same wplain wbatch

# killed after its first commits, resumed through the batch pipeline, and once through the CPU path
for resume_env in engine=cpu,buffer=9,sub=2 ""; do
  dir="$T/k${resume_env:+b}"
  XTTS_MELCACHE_BATCH=engine=cpu,buffer=9,sub=2 "$BIN/xtts-melcache" -q -j 1 --commit-every 2 --device cpu \
    --out "$dir" "$T/s.tsv" 2>/dev/null & pid=$!
  kill_once_written "$pid" "$dir/shard-00000/data.mdb"; echo "killed while running: $KILLED"
  rc=0; XTTS_MELCACHE_BATCH="$resume_env" "$BIN/xtts-melcache" -q -j 2 --device cpu --out "$dir" "$T/s.tsv" \
    2>/dev/null || rc=$?
  [ $rc -eq 3 ] || die "resume ($resume_env): exit $rc"
  [ "$(digest "$dir")" = "$want" ] || die "killed and resumed ($resume_env): another digest"
done

# an update (the stream's first 30 records dropped, so that carried-over records sit beside
# computed ones in the buffers) equals a fresh build of the new stream, and the same update
# through the CPU path
{ grep '^#' "$T/s.tsv"; grep -v '^#' "$T/s.tsv" | tail -n +31; } > "$T/v2.tsv"
cat "$T/tokens.tsv" | grep -v '^#' | sed 's/^\([^\t]*\)\t/\1~new\t/' >> "$T/v2.tsv"
build fresh2 "" -j 2 "$T/v2.tsv"
for env in "" engine=cpu,buffer=8,sub=3; do
  dir="u${env:+b}"
  cp -r "$T/plain" "$T/$dir"
  rc=0; XTTS_MELCACHE_BATCH="$env" "$BIN/xtts-melcache" -q -j 2 --device cpu --update --out "$T/$dir" "$T/v2.tsv" \
    2> "$T/$dir.err" || rc=$?
  [ $rc -eq 3 ] || { cat "$T/$dir.err" >&2; die "update ($env): exit $rc"; }
  grep -q ' reused, ' "$T/$dir.err" || { cat "$T/$dir.err" >&2; die "update ($env): no reuse counts"; }
  [ "$(digest "$T/$dir")" = "$(digest "$T/fresh2")" ] || die "update ($env): another digest than a fresh build's"
done
diff <(grep ' reused, ' "$T/u.err") <(grep ' reused, ' "$T/ub.err") >/dev/null || die "the two updates count differently"

# a bad setting: exit 1 naming it, nothing written
for bad in engine=gpu sub=0 buffer=2000 fast; do
  XTTS_MELCACHE_BATCH=$bad expect_rc 1 "$BIN/xtts-melcache" -q --device cpu --out "$T/bad" "$T/s.tsv"
  one_line_error "XTTS_MELCACHE_BATCH: '$bad'"
  [ ! -e "$T/bad" ] || die "$bad: --out was made"
done
echo "melcache_batch_pipeline: ok ($want)"
