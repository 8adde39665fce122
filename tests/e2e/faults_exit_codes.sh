#!/usr/bin/env bash
# Every program's exit codes against the contract (docs/reliability.md, "Exit codes"):
# 0 success; 1 usage error; 2 input or environment error that stopped the run; 3 finished
# but rejected some records (2 with --strict). Each failure is one line on stderr that
# names the file, the line or the record.
set -euo pipefail
source "$(dirname "$0")/faults_lib.bash"

demo_tokens   # the demo dataset: three entries are broken on purpose (one text, two audio)
H=$(head -1 "$T/tokens.tsv")
grep -v -E '^bad_' "$T/tokens.tsv" > "$T/good.tsv"
awk -F'|' '$1 !~ /^bad_/' "$T/data/metadata.csv" > "$T/data/good.csv"
tok="$BIN/xtts-tokenize"; mc="$BIN/xtts-melcache"; ver="$BIN/xtts-cache-verify"
mrg="$BIN/xtts-cache-merge"; ins="$BIN/xtts-cache-inspect"; trn="$BIN/xtts-train"

# ---- every program: --help and --version 0; an unknown option and a missing operand 1 ----
for p in "$tok" "$mc" "$ver" "$mrg" "$ins" "$trn"; do
  expect_rc 0 "$p" --help
  grep -q . "$T/out.txt" || die "$(basename "$p") --help printed nothing"
  expect_rc 0 "$p" --version
  grep -q "^$(basename "$p") " "$T/out.txt" || die "$(basename "$p") --version: no name"
  expect_rc 1 "$p" --no-such-option
  one_line_error "no-such-option|unrecognized|unknown"
done
for p in "$mc" "$ver" "$mrg" "$ins" "$trn"; do   # these need a directory or --out/--cache
  expect_rc 1 "$p"
  one_line_error "."
done
expect_rc 1 "$tok" --lang en --tokenizer nonsense "$T/data/good.csv"; one_line_error "tokenizer"
expect_rc 1 "$mc" --out "$T/x" --dtype fp8 "$T/good.tsv";            one_line_error "dtype"
expect_rc 1 "$mc" --out "$T/x" --part 3/2 "$T/good.tsv";             one_line_error "part"

# ---- xtts-tokenize ------------------------------------------------------------------------
expect_rc 0 "$tok" --lang en "$T/data/good.csv"
expect_rc 3 "$tok" --lang en "$T/data/metadata.csv"
grep -q "metadata.csv:[0-9]*: record [0-9]* (bad_notext): rejected: " "$T/err.txt" || die "tokenize: rejection names no line and record"
expect_rc 2 "$tok" --lang en --strict "$T/data/metadata.csv"
expect_rc 2 "$tok" --lang en "$T/nowhere.csv";  one_line_error "nowhere.csv"
rc=0; "$tok" --lang en "$T/data/good.csv" >/dev/full 2>"$T/err.txt" || rc=$?
[ $rc -eq 2 ] || die "tokenize > /dev/full: exit $rc"
grep -v 'reading as --format' "$T/err.txt" > "$T/err2.txt"; mv "$T/err2.txt" "$T/err.txt"
one_line_error "write failed"
printf 'a|b\n' > "$T/nodir.csv"
expect_rc 2 "$tok" --lang en --format tsv "$T/nodir.csv"; one_line_error "nodir.csv"

# ---- xtts-melcache ------------------------------------------------------------------------
expect_rc 0 "$mc" -q --out "$T/c" "$T/good.tsv"
expect_rc 3 "$mc" --out "$T/c3" "$T/tokens.tsv"
grep -q "record [0-9]* (bad_missing): rejected" "$T/err.txt" || die "melcache: rejection names no record"
expect_rc 2 "$mc" -q --out "$T/c2" --strict "$T/tokens.tsv"
expect_rc 2 "$mc" -q --out "$T/c4" "$T/nowhere.tsv"; one_line_error "nowhere.tsv"
: > "$T/afile"
expect_rc 2 "$mc" -q --out "$T/afile" "$T/good.tsv";  one_line_error "afile"
printf '%s\nonly-one-field\n' "$H" > "$T/broken.tsv"
expect_rc 2 "$mc" -q --out "$T/c5" "$T/broken.tsv";   one_line_error "broken.tsv:2"
expect_rc 2 "$mc" -q --out "$T/c" --dtype fp32 "$T/good.tsv"   # another configuration, no --force
one_line_error "another configuration"

# ---- xtts-cache-verify ---------------------------------------------------------------------
expect_rc 0 "$ver" "$T/c"
expect_rc 2 "$ver" "$T/nowhere"   # verify reports on stdout: a fault line, then result: FAILED
grep -q "^fault: $T/nowhere" "$T/out.txt" && grep -q "^result: FAILED" "$T/out.txt" || die "verify: no fault line"
cp -r "$T/c" "$T/cbad"
f="$T/cbad/shard-00000/data.mdb"; sz=$(stat -c %s "$f")
truncate -s $((sz / 2)) "$f"
expect_rc 2 "$ver" "$T/cbad"
grep -q "data.mdb" "$T/out.txt" "$T/err.txt" || die "verify: damage not named"

# ---- xtts-cache-merge ----------------------------------------------------------------------
expect_rc 0 "$mc" -q --out "$T/p" --part 0/2 "$T/good.tsv"
expect_rc 2 "$mrg" "$T/p"; one_line_error "part"            # a part is missing
expect_rc 0 "$mc" -q --out "$T/p" --part 1/2 "$T/good.tsv"  # the last part merges
expect_rc 0 "$mrg" "$T/p"                                    # merging again is harmless
expect_rc 2 "$mrg" "$T/nowhere"; one_line_error "nowhere"
expect_rc 2 "$mrg" "$T/c"; one_line_error "."              # a whole build has no parts

# ---- xtts-cache-inspect --------------------------------------------------------------------
expect_rc 0 "$ins" "$T/c"
expect_rc 2 "$ins" "$T/nowhere"; one_line_error "nowhere"
expect_rc 2 "$ins" "$T/c" --id no-such-id; one_line_error "no-such-id"
expect_rc 2 "$ins" "$T/c" --index 100000; one_line_error "100000"

# ---- xtts-train ---------------------------------------------------------------------------
expect_rc 0 "$trn" --cache "$T/c" --steps 1 --width 32 --heads 2 --batch-size 4
expect_rc 2 "$trn" --cache "$T/nowhere"; one_line_error "nowhere"
expect_rc 2 "$trn" --cache "$T/cbad" --steps 1 --width 32 --heads 2
expect_rc 1 "$trn" --cache "$T/c" --steps 0; one_line_error "steps"

# ---- the same option spellings everywhere (old ones kept) ------------------------------------
expect_rc 0 "$mc" -q --out "$T/jobs" --jobs 2 "$T/good.tsv"
expect_rc 0 "$mc" -q --out "$T/threads" --threads 2 "$T/good.tsv"
[ "$(digest "$T/jobs")" = "$(digest "$T/threads")" ] || die "--jobs and --threads build different caches"
"$tok" --lang en --part 1/2 "$T/data/good.csv" > "$T/part.tsv" 2>/dev/null
"$tok" --lang en --shard 1/2 "$T/data/good.csv" > "$T/shard.tsv" 2>/dev/null
cmp -s "$T/part.tsv" "$T/shard.tsv" || die "tokenize --part and --shard differ"
expect_rc 0 "$trn" --cache "$T/c" --steps 1 --width 32 --heads 2 --batch-size 4 -j 1

# ---- --force never removes a file that is not part of a cache ------------------------------
# (a non-empty folder that is no cache is refused: tests/e2e/melcache_out_not_cache.sh)
expect_rc 0 "$mc" -q --out "$T/mine" "$T/good.tsv"
mkdir -p "$T/mine/sub"
echo "my notes" > "$T/mine/notes.txt"; echo x > "$T/mine/sub/keep"; echo y > "$T/mine/shard-notes"
expect_rc 0 "$mc" -q --out "$T/mine" --force --dtype fp32 "$T/good.tsv"   # replaces the cache
[ "$(cat "$T/mine/notes.txt")" = "my notes" ] && [ -f "$T/mine/sub/keep" ] && [ -f "$T/mine/shard-notes" ] ||
  die "--force removed a file that is not part of the cache"
expect_rc 0 "$ver" "$T/mine"
echo "faults_exit_codes: ok"
