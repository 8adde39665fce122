#!/usr/bin/env bash
# xtts-melcache --update (and --reuse) against a cache of another configuration: refused with
# one line that names the field that differs and says what helps, as a build without --update
# does (docs/reliability.md, round five): a token stream of --max-tokens 400 on a 512 cache,
# --dtype fp32 on an fp16 one; the cache is left as it was, and --update --force rebuilds it.
set -euo pipefail
source "$(dirname "$0")/faults_lib.bash"

demo_tokens
"$BIN/xtts-tokenize" --lang auto --max-tokens 400 "$T/data/metadata.csv" > "$T/t400.tsv" 2>/dev/null || [ $? -eq 3 ]
expect_rc 3 "$BIN/xtts-melcache" --out "$T/c" -q "$T/tokens.tsv"
d0=$(digest "$T/c"); [ -n "$d0" ] || die "the build does not verify"

expect_rc 2 "$BIN/xtts-melcache" --out "$T/c" -q --update "$T/t400.tsv"
one_line_error "^xtts-melcache: $T/c: a cache of another configuration .*: max_tokens 512 -> 400; use --force to rebuild it$"
expect_rc 2 "$BIN/xtts-melcache" --out "$T/c" -q --update --dtype fp32 "$T/tokens.tsv"
one_line_error ': dtype "fp16" -> "fp32"; use --force to rebuild it$'
expect_rc 2 "$BIN/xtts-melcache" --out "$T/r" -q --reuse "$T/c" --dtype fp32 "$T/tokens.tsv"
one_line_error ': dtype "fp16" -> "fp32"; --reuse carries records over from a cache of this configuration only$'
[ "$(digest "$T/c")" = "$d0" ] || die "a refused update changed the cache"
echo "refused, naming the field and --force; the cache unchanged"

expect_rc 3 "$BIN/xtts-melcache" --out "$T/c" -q --update --force "$T/t400.tsv"
expect_rc 3 "$BIN/xtts-melcache" --out "$T/f" -q "$T/t400.tsv"
[ "$(digest "$T/c")" = "$(digest "$T/f")" ] || die "--update --force did not rebuild the cache as a fresh build of the stream"
echo "--update --force rebuilds it"
echo ok
