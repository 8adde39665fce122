#!/usr/bin/env bash
# An error is one line, the true one. xtts-melcache used to append "use --force to replace
# it, or another --out" to every mismatch whose message did not mention --force: after a
# token stream of an unknown version (`#xtts-tokens 2`), where no --force helps, and after
# parts that cannot be joined. Each case below must give exit 2 and exactly one line
# (besides the device notice), and leave an existing cache unchanged.
set -euo pipefail
source "$(dirname "$0")/faults_lib.bash"

demo_tokens
sed '1s/^#xtts-tokens 1/#xtts-tokens 2/' "$T/tokens.tsv" > "$T/v2.tsv"

# a token stream of an unknown version: into a new directory, and onto a finished cache
expect_rc 2 "$BIN/xtts-melcache" --out "$T/new" "$T/v2.tsv"
one_line_error "^xtts-melcache: $T/v2.tsv:1: token stream version 2 is not supported \(this reader knows 1\)$"
[ ! -e "$T/new" ] || die "a directory was made for an unreadable stream"
"$BIN/xtts-melcache" -q --out "$T/c" "$T/tokens.tsv" 2>/dev/null || [ $? -eq 3 ] || die "demo build"
before=$(digest "$T/c")
for force in "" --force; do
  # shellcheck disable=SC2086
  expect_rc 2 "$BIN/xtts-melcache" $force --out "$T/c" "$T/v2.tsv"
  one_line_error "token stream version 2 is not supported"
  grep -q -- "--force\|another --out" "$T/err.txt" && die "a --force hint after an unreadable stream"
done
[ "$(digest "$T/c")" = "$before" ] || die "the cache changed"
# the same stream from a pipe
rc=0; "$BIN/xtts-melcache" --out "$T/c" - < "$T/v2.tsv" >/dev/null 2>"$T/err.txt" || rc=$?
[ $rc -eq 2 ] || die "v2 from a pipe: exit $rc"
one_line_error "^xtts-melcache: -:1: token stream version 2 is not supported"

# parts that cannot be joined: the last part's one line says why; no --force advice
grep -v $'^bad_' "$T/tokens.tsv" > "$T/good.tsv"
expect_rc 0 "$BIN/xtts-melcache" --out "$T/p" --part 0/2 --dtype fp32 "$T/good.tsv"
expect_rc 2 "$BIN/xtts-melcache" --out "$T/p" --part 1/2 "$T/good.tsv"
one_line_error "cannot join the parts: .*built with another configuration than manifest.part-00000.json"
grep -q -- "another --out" "$T/err.txt" && die "a --force hint after parts that cannot be joined"
# a configuration refusal keeps its own advice, once
expect_rc 2 "$BIN/xtts-melcache" --out "$T/c" --dtype fp32 "$T/tokens.tsv"
one_line_error "holds a cache built with another configuration or layout .*; use --force to replace it$"
# python3 -m xtts_prep: a record that is not there is named with the cache (it printed
# "xtts_prep: 'nope'"), and --index -1 is not Python's last element
export PYTHONPATH="$HERE/python"
expect_rc 2 "$PY" -m xtts_prep "$T/c" --id nope
one_line_error "^xtts_prep: $T/c: no record with id 'nope'$"
expect_rc 2 "$PY" -m xtts_prep "$T/c" --index -1
one_line_error "^xtts_prep: $T/c: index -1 out of range \([0-9]+ records\)$"
echo "inputs_one_message: ok"
