#!/usr/bin/env bash
# Fault injection, second round: wrong inputs and damaged outputs met as a user would.
# 1. resume with another token stream (other ids; same ids with other token ids; a
#    shorter one): refused with exit 2 saying what differs, the cache untouched; --force
#    rebuilds from the new stream.
# 2. an id that falls into two parts: the last part exits 2 naming the id and both
#    shards, no manifest.json; xtts-cache-merge refuses the same way.
# 3. a data.mdb cut to half (last shard, then a middle one) and the build re-run: exit 2
#    "truncated" (it used to be SIGBUS or a silent "resumed"); --force rebuilds the same
#    content.
# 4. standard output on a full disk (/dev/full): every program exits 2 with one line.
# 5. endless or huge inputs: /dev/zero to xtts-tokenize (binary: it stops at the first NUL
#    byte) and xtts-melcache, a token line past the line limit: exit 2 with a message, no hang.
# 6. ids of 508 and 600 bytes, an unknown language, more tokens than max_tokens: each
#    rejected alone (exit 3), the rest stored.
# 7. parts built with different options (--dtype fp32 beside fp16, 1/3 beside 0/2): the
#    last part exits 2 saying so, no manifest.json.
# 8. phonemes with the line that crashes libespeak-ng 1.51 (Hindi, 100 x U+01C5) among
#    good ones: no crash, every good record written, the same output with -j 1, 2 and 3.
set -euo pipefail
source "$(dirname "$0")/faults_lib.bash"

demo_tokens
H=$(head -1 "$T/tokens.tsv")
mc=("$BIN/xtts-melcache" -q -j 2)

# ---- 1. resume with another input --------------------------------------------------------
{ echo "$H"; sed -n 2,9p "$T/tokens.tsv"; } > "$T/A.tsv"
{ echo "$H"; sed -n 2,9p "$T/tokens.tsv" | awk -F'\t' 'BEGIN{OFS="\t"} {$1 = "N" NR; print}'; } > "$T/B.tsv"
{ echo "$H"; sed -n 2,9p "$T/tokens.tsv" | awk -F'\t' 'BEGIN{OFS="\t"} NR == 3 {$5 = $5 " 7"} {print}'; } > "$T/A2.tsv"
{ echo "$H"; sed -n 2,5p "$T/tokens.tsv"; } > "$T/Ashort.tsv"
expect_rc 0 "${mc[@]}" --out "$T/r" "$T/A.tsv"
d_a=$(digest "$T/r"); [ -n "$d_a" ] || die "cache A does not verify"
expect_rc 2 "${mc[@]}" --out "$T/r" "$T/B.tsv"
grep -q "holds a build of another input: its record 8 is '[^']*', $T/B.tsv's is 'N8'" "$T/err.txt" || { cat "$T/err.txt"; die "B: no difference named"; }
expect_rc 2 "${mc[@]}" --out "$T/r" "$T/A2.tsv"
grep -q "the first 8 records of $T/A2.tsv differ from those stored" "$T/err.txt" || { cat "$T/err.txt"; die "A2: not refused"; }
expect_rc 2 "${mc[@]}" --out "$T/r" "$T/Ashort.tsv"
grep -q "holds a build of 8 records .* has only 4" "$T/err.txt" || { cat "$T/err.txt"; die "short stream: not refused"; }
[ "$(digest "$T/r")" = "$d_a" ] || die "a refused resume changed the cache"
expect_rc 0 "${mc[@]}" --out "$T/r" "$T/A.tsv"   # the same stream still resumes (finished: nothing to do)
[ "$(digest "$T/r")" = "$d_a" ] || die "re-run with the same stream changed the cache"
expect_rc 0 "${mc[@]}" --out "$T/r" --force "$T/B.tsv"
"$BIN/xtts-cache-inspect" "$T/r" --id N8 >/dev/null 2>&1 || die "--force did not rebuild from B"

# ---- 2. one id in two parts ------------------------------------------------------------------
{ echo "$H"; sed -n 2,8p "$T/tokens.tsv"; sed -n 2p "$T/tokens.tsv"; } > "$T/dup.tsv"   # record 8 (part 1) repeats record 1 (part 0)
id0=$(sed -n 2p "$T/tokens.tsv" | cut -f1)
expect_rc 0 "${mc[@]}" --out "$T/p" --part 0/2 "$T/dup.tsv"
expect_rc 2 "${mc[@]}" --out "$T/p" --part 1/2 "$T/dup.tsv"
one_line_error "id '$id0' is stored by part 0 \(shard-00000-00000\) and part 1 \(shard-00001-00000\)"
[ ! -e "$T/p/manifest.json" ] || die "a manifest was written with a duplicate id"
expect_rc 2 "$BIN/xtts-cache-merge" "$T/p"
grep -q "id '$id0' is stored by part 0" "$T/err.txt" || { cat "$T/err.txt"; die "merge did not name the duplicate"; }

# ---- 3. damaged shard, then a re-run -------------------------------------------------------------
expect_rc 3 "${mc[@]}" --out "$T/s" --shard-size 300K "$T/tokens.tsv"
d_s=$(digest "$T/s"); [ -n "$d_s" ] || die "sharded cache does not verify"
n_sh=$(ls -d "$T"/s/shard-* | wc -l); [ "$n_sh" -ge 3 ] || die "want 3 shards or more, got $n_sh"
for which in last middle; do
  if [ $which = last ]; then f=$(ls -d "$T"/s/shard-* | tail -1)/data.mdb; else f=$(ls -d "$T"/s/shard-* | sed -n 2p)/data.mdb; fi
  truncate -s $(( $(stat -c %s "$f") / 2 )) "$f"
  expect_rc 2 "${mc[@]}" --out "$T/s" --shard-size 300K "$T/tokens.tsv"
  grep -q "$f: truncated (.*bytes, its pages reach .*); use --force to rebuild" "$T/err.txt" || { cat "$T/err.txt"; die "$which: not reported"; }
  expect_rc 3 "${mc[@]}" --out "$T/s" --shard-size 300K --force "$T/tokens.tsv"
  [ "$(digest "$T/s")" = "$d_s" ] || die "$which: --force did not rebuild the same cache"
done

# ---- 4. standard output on a full disk -------------------------------------------------------------
full() {  # full CMD...: exit 2 and one "standard output: write failed" line
  local rc=0
  "$@" >/dev/full 2>"$T/err.txt" || rc=$?
  [ $rc -eq 2 ] || { cat "$T/err.txt"; die "$(basename "$1") > /dev/full: exit $rc"; }
  grep -q "^$(basename "$1"): standard output: write failed: No space left on device$" "$T/err.txt" || { cat "$T/err.txt"; die "$(basename "$1"): no message"; }
}
full "$BIN/xtts-cache-verify" "$T/s"
full "$BIN/xtts-cache-verify" --json "$T/s"
full "$BIN/xtts-cache-inspect" "$T/s"
full "$BIN/xtts-tokenize" --lang auto "$T/data/metadata.csv"
for p in xtts-tokenize xtts-melcache xtts-cache-verify xtts-cache-inspect xtts-cache-merge xtts-train; do full "$BIN/$p" --version; done

# ---- 5. endless and huge inputs -------------------------------------------------------------------
expect_rc 2 timeout 120 "$BIN/xtts-tokenize" /dev/zero
one_line_error "/dev/zero:1: binary data \(a NUL byte at offset 0\), not a metadata text"
expect_rc 2 timeout 60 "$BIN/xtts-melcache" --out "$T/z" /dev/zero
grep -q "/dev/zero:1: line longer than" "$T/err.txt" || { cat "$T/err.txt"; die "melcache /dev/zero: no message"; }
{ echo "$H"; head -c $((17 << 20)) /dev/zero | tr '\0' 'a'; echo; } > "$T/longline.tsv"
expect_rc 2 timeout 60 "$BIN/xtts-melcache" --out "$T/z" "$T/longline.tsv"
grep -q "longline.tsv:2: line longer than" "$T/err.txt" || { cat "$T/err.txt"; die "long line: no message"; }

# ---- 6. per-record rejections where the run goes on --------------------------------------------------
L=$(sed -n 2p "$T/tokens.tsv")
long508=$(printf 'a%.0s' $(seq 508)); long600=$(printf 'b%.0s' $(seq 600))
{ echo "$H"
  echo "$L" | awk -F'\t' 'BEGIN{OFS="\t"} {$1 = "r0"; print}'
  echo "$L" | awk -F'\t' 'BEGIN{OFS="\t"} {$1 = "r1"; $3 = "xx"; print}'
  echo "$L" | awk -F'\t' 'BEGIN{OFS="\t"} {$1 = "r2"; t = $5; for (i = 0; i < 600; i++) t = t " 5"; $5 = t; print}'
  echo "$L" | awk -F'\t' -v id="$long508" 'BEGIN{OFS="\t"} {$1 = id; print}'
  echo "$L" | awk -F'\t' -v id="$long600" 'BEGIN{OFS="\t"} {$1 = id; print}'
  echo "$L" | awk -F'\t' 'BEGIN{OFS="\t"} {$1 = "r5"; print}'
} > "$T/mixed.tsv"
expect_rc 3 "$BIN/xtts-melcache" -j 2 --out "$T/m" "$T/mixed.tsv"
grep -q "(r1): rejected: unknown language 'xx'" "$T/err.txt" || { cat "$T/err.txt"; die "unknown language not rejected alone"; }
grep -q "(r2): rejected: .* tokens, more than max_tokens=" "$T/err.txt" || { cat "$T/err.txt"; die "too many tokens not rejected alone"; }
[ "$(grep -c "rejected: id of [0-9]* bytes, longer than 505" "$T/err.txt")" -eq 2 ] || { cat "$T/err.txt"; die "long ids not rejected"; }
grep -q "6 records in, 6 selected, 2 stored, 4 rejected" "$T/err.txt" || { cat "$T/err.txt"; die "want 2 stored"; }
expect_rc 3 "$BIN/xtts-melcache" -j 2 --out "$T/m" "$T/mixed.tsv"   # and a re-run resumes, nothing lost
grep -q "2 stored, 4 rejected" "$T/err.txt" || { cat "$T/err.txt"; die "re-run"; }
[ -n "$(digest "$T/m")" ] || die "cache with rejections does not verify"
# xtts-tokenize refuses the long id where it enters
printf 'id\ttext\taudio\n%s\thello there\tx.wav\nok1\thello again\tx.wav\n' "$long508" > "$T/longid.tsv"
expect_rc 3 "$BIN/xtts-tokenize" -f tsv --lang en "$T/longid.tsv"
grep -q "id longer than 505 bytes" "$T/err.txt" || { cat "$T/err.txt"; die "tokenize: long id"; }
[ "$(grep -vc '^#' "$T/out.txt")" -eq 1 ] || die "tokenize: want the other record written"

# ---- 7. parts built with different options -----------------------------------------------------------
expect_rc 0 "${mc[@]}" --out "$T/q" --part 0/2 --dtype fp32 "$T/tokens.tsv"
expect_rc 2 "${mc[@]}" --out "$T/q" --part 1/2 "$T/tokens.tsv"
grep -q "cannot join the parts: .*built with another configuration" "$T/err.txt" || { cat "$T/err.txt"; die "dtype mismatch not said"; }
[ ! -e "$T/q/manifest.json" ] || die "manifest written for mismatched parts"
rm -rf "$T/q"
expect_rc 0 "${mc[@]}" --out "$T/q" --part 0/2 "$T/tokens.tsv"
expect_rc 2 "${mc[@]}" --out "$T/q" --part 1/3 "$T/tokens.tsv"
grep -q "cannot join the parts: .*n_parts 3, manifest.part-00000.json says 2" "$T/err.txt" || { cat "$T/err.txt"; die "part count mismatch not said"; }
[ ! -e "$T/q/manifest.json" ] || die "manifest written for mismatched part counts"
# ---- 8. espeak-ng crash isolation ----------------------------------------------------------------------
"$PY" - "$T/ph.tsv" <<'PYEOF'
import sys
with open(sys.argv[1], "w", encoding="utf-8") as f:
    f.write("id\ttext\taudio\tlang\n")
    for i in range(40):
        if i in (7, 23):
            f.write("bad%d\t%s\tx.wav\thi\n" % (i, "\u01c5" * 100))
        else:
            f.write("r%d\tHello world, this is sentence number %d.\tx.wav\ten\n" % (i, i))
PYEOF
for j in 1 2 3; do
  rc=0
  "$BIN/xtts-tokenize" -f tsv -t phonemes --max-tokens 4096 -j $j "$T/ph.tsv" > "$T/ph$j.out" 2> "$T/ph$j.err" || rc=$?
  [ $rc -eq 0 ] || [ $rc -eq 3 ] || { cat "$T/ph$j.err"; die "phonemes -j $j: exit $rc"; }
  [ "$(grep -c '^r[0-9]' "$T/ph$j.out")" -eq 38 ] || { cat "$T/ph$j.err"; die "phonemes -j $j: good records lost"; }
done
cmp -s "$T/ph1.out" "$T/ph2.out" && cmp -s "$T/ph1.out" "$T/ph3.out" || die "phonemes: output depends on -j"
echo "faults_inputs: ok"
