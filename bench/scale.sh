#!/usr/bin/env bash
# scale.sh — `make scale`: how time and memory grow with the number of records.
#
# For each size N in SCALE_SIZES (default "10000 100000"; add 1000000 for the full run,
# about 25 minutes on 2 cores), a TSV metadata file of N records pointing at 5 reused
# short clips (1.0-2.2 s, made with sox) goes through
#   xtts-tokenize, xtts-melcache (whole; and again, killed at half its time and resumed),
#   xtts-melcache --update after 1 % of the records changed (0.25 % each: transcripts edited,
#   records dropped, records added, audio files re-recorded under the same name with their
#   modification time restored; the re-recorded records have files of their own; no change
#   moves a speaker's first appearance, so the speaker table and the stored ids stay),
#   xtts-melcache --part 0/2 and 1/2 (the second merges), xtts-cache-merge (again, alone),
#   xtts-cache-verify, and random reads (xtts-train --loader-only: shuffled batches decoded
#   by the C reader);
# and each is measured for records per second, peak anonymous memory (the highest RssAnon
# of /proc/PID/status, polled every 20 ms: the mapped shards' page cache is not counted)
# and, for the cache, bytes per record (the shards' data.mdb files).
#
# Environment: BUILD (default build), SCALE_SIZES, SCALE_WORK (default a temporary
# directory, removed at the end), SCALE_JOBS (-j for the programs, default 2),
# SCALE_DOC (default docs/benchmarks.md: the table replaces the text between the markers
# <!-- scale:begin --> and <!-- scale:end -->; empty: print only).
set -euo pipefail
export LC_ALL=C
root="$(cd "$(dirname "$0")/.." && pwd)"
BUILD=${BUILD:-$root/build}
BIN=$BUILD/bin
SIZES=${SCALE_SIZES:-10000 100000}
[ -n "$SIZES" ] || SIZES="10000 100000"
JOBS=${SCALE_JOBS:-2}
DOC=${SCALE_DOC-$root/docs/benchmarks.md}
export OMP_WAIT_POLICY=passive
for p in xtts-tokenize xtts-melcache xtts-cache-merge xtts-cache-verify xtts-train; do
  [ -x "$BIN/$p" ] || { echo "scale: $BIN/$p not built (make all)" >&2; exit 2; }
done
command -v sox >/dev/null || { echo "scale: sox is not installed (scripts/install-deps.sh)" >&2; exit 2; }
if [ -n "${SCALE_WORK:-}" ]; then W=$SCALE_WORK; mkdir -p "$W"; else W=$(mktemp -d /tmp/xtts-scale.XXXXXX); trap 'rm -rf "$W"' EXIT; fi

# measure NAME CMD...: after a sync, run CMD (stdin from /dev/null), record its wall time and the peak
# RssAnon (kB) in $W/last.time and $W/last.rss; stdout and stderr go to $W/NAME.out/.err
measure() {
  local name=$1; shift
  local t0 t1 peak=0 v
  sync # the previous step's dirty pages written back before, not during, this one
  t0=$(date +%s.%N)
  "$@" </dev/null >"$W/$name.out" 2>"$W/$name.err" & local pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    v=$(awk '/^RssAnon:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
    [ -n "$v" ] && [ "$v" -gt "$peak" ] && peak=$v
    sleep 0.02
  done
  local rc=0; wait "$pid" || rc=$?
  t1=$(date +%s.%N)
  [ $rc -eq 0 ] || [ $rc -eq 3 ] || { echo "scale: $name: exit $rc" >&2; tail -3 "$W/$name.err" >&2; exit 1; }
  echo "$t0 $t1" | awk '{printf "%.3f", $2 - $1}' > "$W/last.time"
  echo "$peak" > "$W/last.rss"
}

mkdir -p "$W/wavs"
for i in 0 1 2 3 4; do
  sox -R -n -r 22050 -b 16 -c 1 "$W/wavs/c$i.wav" synth "1.$((i * 3))" pinknoise vol 0.3 \
      synth "1.$((i * 3))" sine mix $((200 + 90 * i)) 2>/dev/null
done

rows=()
for N in $SIZES; do
  echo "== $N records" >&2
  meta="$W/meta-$N.tsv"
  # version 1 of the metadata, and version 2 with 1 % of the records changed (v = 2)
  scale_meta() {
    awk -v n="$N" -v w="$W/wavs" -v v="$1" 'BEGIN {
      OFS = "\t"; print "id", "audio", "text", "speaker", "lang";
      split("one two three four five six seven eight nine ten", wd, " ");
      for (i = 0; i < n; i++) {
        if (v == 2 && i % 400 == 202) continue   # not record 2: the speaker table (order of first
                                                  # appearance) stays, as it does for most edits
        text = "Record " wd[i % 10 + 1] " of the scale test, " wd[(i / 10) % 10 + 1] " times."
        if (v == 2 && i % 400 == 1) text = text " Edited."
        print "u" i, (i % 400 == 3 ? w "/own/o" i ".wav" : w "/c" (i % 5) ".wav"), text, "s" (i % 50), "en"
      }
      if (v == 2) for (i = 0; i < n; i += 400) print "added" i, w "/c" (i % 5) ".wav", "An added record.", "s" (i % 50), "en"
    }'
  }
  mkdir -p "$W/wavs/own"
  for ((i = 3; i < N; i += 400)); do cp "$W/wavs/c$((i % 5)).wav" "$W/wavs/own/o$i.wav"; done
  scale_meta 1 > "$meta"
  measure "tokenize-$N" sh -c "exec '$BIN/xtts-tokenize' --format tsv --lang en -j $JOBS '$meta' > '$W/tokens-$N.tsv'"
  row="$N tokenize $(cat "$W/last.time") $(cat "$W/last.rss") -"
  rows+=("$row")
  tok="$W/tokens-$N.tsv"

  measure "melcache-$N" "$BIN/xtts-melcache" -q -j "$JOBS" --out "$W/c-$N" "$tok"
  bytes=$(find "$W/c-$N" -name data.mdb -printf '%s\n' | awk '{s += $1} END {printf "%.0f", s}')
  rows+=("$N melcache $(cat "$W/last.time") $(cat "$W/last.rss") $((bytes / N))")
  fresh_time=$(cat "$W/last.time")

  # the update: the re-recorded files get other samples (same size), their mtime restored
  scale_meta 2 > "$W/meta2-$N.tsv"
  "$BIN/xtts-tokenize" --format tsv --lang en -j "$JOBS" "$W/meta2-$N.tsv" > "$W/tokens2-$N.tsv" 2>/dev/null
  for ((i = 3; i < N; i += 400)); do
    f="$W/wavs/own/o$i.wav"; touch -r "$f" "$W/stamp"
    printf '\x11\x22\x33\x44' | dd of="$f" bs=1 seek=4000 conv=notrunc status=none
    touch -r "$W/stamp" "$f"
  done
  measure "update-$N" "$BIN/xtts-melcache" -q -j "$JOBS" --out "$W/c-$N" --update "$W/tokens2-$N.tsv"
  grep -q 'the update replaced the old cache' "$W/update-$N.err" || { echo "scale: update of $N records did not finish" >&2; exit 1; }
  rows+=("$N melcache-update $(cat "$W/last.time") $(cat "$W/last.rss") -")
  echo "scale: $N records: fresh build $fresh_time s, update of 1 % $(cat "$W/last.time") s; $(grep -o '[0-9]* reused.*dropped' "$W/update-$N.err")" >&2
  # what the update wrote (its own shards) against the shards it shares with the old cache
  written=$(find "$W/c-$N" -path '*/shard-*' -name data.mdb -printf '%s\n' | awk '{s += $1} END {printf "%.0f", s}')
  shared=$(find "$W/c-$N" -path '*/base-*' -name data.mdb -printf '%s\n' | awk '{s += $1} END {printf "%.0f", s}')
  echo "scale: $N records: the update wrote $written bytes of shards and shares $shared bytes with the old cache; $(grep -o '[0-9]* kept in.*copied\|copies every record.*' "$W/update-$N.err" || true)" >&2
  # the same update again: nothing changed, so its time is the fixed cost of an update (reading
  # the stream, hashing every audio file, the plan, the new manifest), whatever the change
  measure "update0-$N" "$BIN/xtts-melcache" -q -j "$JOBS" --out "$W/c-$N" --update "$W/tokens2-$N.tsv"
  rows+=("$N melcache-update-none $(cat "$W/last.time") $(cat "$W/last.rss") -")
  echo "scale: $N records: an update with nothing changed (the fixed cost) $(cat "$W/last.time") s; $(grep -o '[0-9]* reused.*dropped' "$W/update0-$N.err")" >&2

  # resume: the same build killed (SIGKILL, as a lost node) at half the time the whole took,
  # then run again to the end; its memory must not depend on what is stored already
  half=$(awk -v t="$fresh_time" 'BEGIN {printf "%.2f", t / 2}')
  "$BIN/xtts-melcache" -q -j "$JOBS" --out "$W/r-$N" "$tok" >/dev/null 2>&1 &
  killer=$!
  sleep "$half"
  kill -KILL "$killer" 2>/dev/null || true
  wait "$killer" 2>/dev/null || true
  measure "resume-$N" "$BIN/xtts-melcache" -q -j "$JOBS" --out "$W/r-$N" "$tok"
  rows+=("$N melcache-resume $(cat "$W/last.time") $(cat "$W/last.rss") -")
  rm -rf "$W/r-$N"

  measure "part0-$N" "$BIN/xtts-melcache" -q -j "$JOBS" --out "$W/p-$N" --part 0/2 "$tok"
  measure "part1-$N" "$BIN/xtts-melcache" -q -j "$JOBS" --out "$W/p-$N" --part 1/2 "$tok"
  rows+=("$N melcache-part-1/2 $(cat "$W/last.time") $(cat "$W/last.rss") -")
  measure "merge-$N" "$BIN/xtts-cache-merge" -q "$W/p-$N"
  rows+=("$N merge $(cat "$W/last.time") $(cat "$W/last.rss") -")
  rm -rf "$W/p-$N"

  measure "verify-$N" "$BIN/xtts-cache-verify" "$W/c-$N"
  grep -q '^result: OK' "$W/verify-$N.out" || { echo "scale: verify of $N records failed" >&2; exit 1; }
  rows+=("$N verify $(cat "$W/last.time") $(cat "$W/last.rss") -")

  steps=$(( N / 32 < 2000 ? N / 32 : 2000 ))
  measure "reads-$N" "$BIN/xtts-train" --cache "$W/c-$N" --loader-only --steps "$steps" --batch-size 32
  rows+=("$N random-reads:$((steps * 32)) $(cat "$W/last.time") $(cat "$W/last.rss") -")
  rm -rf "$W/c-$N" "$tok" "$meta" "$W/meta2-$N.tsv" "$W/tokens2-$N.tsv" "$W/wavs/own"
done

table() {
  echo "| records | step | seconds | records/s | µs/record | peak RssAnon (MB) | bytes/record |"
  echo "|---:|---|---:|---:|---:|---:|---:|"
  for r in "${rows[@]}"; do
    set -- $r
    local n=$1 step=$2 t=$3 rss=$4 bpr=$5 cnt=$1
    case $step in random-reads:*) cnt=${step#random-reads:}; step="random reads ($cnt)" ;; melcache-part-1/2) cnt=$((n / 2)); step="melcache --part 1/2" ;;
      melcache-resume) cnt=$((n / 2)); step="melcache resumed after a kill half way (~n/2)" ;;
      melcache-update) step="melcache --update, 1 % of records changed" ;;
      melcache-update-none) step="melcache --update, nothing changed (fixed cost)" ;; esac
    awk -v n="$n" -v s="$step" -v t="$t" -v c="$cnt" -v r="$rss" -v b="$bpr" 'BEGIN {
      printf "| %d | %s | %.2f | %.0f | %.1f | %.1f | %s |\n", n, s, t, (t > 0 ? c / t : 0), (c > 0 ? t * 1e6 / c : 0), r / 1024, b }'
  done
}
out=$(table)
echo "$out"
if [ -n "$DOC" ] && [ -f "$DOC" ] && grep -q '<!-- scale:begin -->' "$DOC"; then
  cpu=$(awk -F: '/model name/ {gsub(/^ +/, "", $2); print $2; exit}' /proc/cpuinfo)
  { echo "<!-- scale:begin -->"
    echo "Measured $(date -u +%Y-%m-%d) on $cpu, $(nproc) cores, -j $JOBS (\`make scale SCALE_SIZES=\"$SIZES\"\`):"
    echo
    echo "$out"
    echo "<!-- scale:end -->"; } > "$W/table.md"
  awk -v f="$W/table.md" '/<!-- scale:begin -->/ {while ((getline l < f) > 0) print l; skip = 1; next}
                          /<!-- scale:end -->/ {skip = 0; next} !skip' "$DOC" > "$W/doc.md"
  cp "$W/doc.md" "$DOC"
  echo "scale: table written to $DOC" >&2
fi
