#!/usr/bin/env bash
# Tree layouts read a directory once. A LibriTTS chapter symlinked into itself was walked
# once more (every transcript again: "duplicate id" rejections and exit 3 on a clean
# dataset). Walks now remember each directory entered (device and inode) and follow links
# to directories after the real ones, skipping those into a directory already read, and
# say once on stderr what they skipped.
# 1. LibriTTS: a chapter linked into itself (loop -> .), a link to its speaker (up -> ..),
#    a link elsewhere to another split's folder that sorts before the real one: exit 0, the
#    clean tree's token stream, one notice naming the links.
# 2. LibriTTS made of links to folders outside it: read as the real tree (nothing skipped).
# 3. M-AILABS (a link back to by_book/) and VCTK (a speaker's txt/ folder linked twice).
# 4. a LibriTTS speaker of 300 chapters with two links back: 300 records, both skipped.
set -euo pipefail
source "$(dirname "$0")/faults_lib.bash"

bash "$HERE/tests/make-format-trees.sh" "$T/trees" >/dev/null 2>&1
tok=(timeout 60 "$BIN/xtts-tokenize" --lang en)

# run NAME DIR CLEAN_DIR: tokenize DIR (exit 0) and compare with CLEAN_DIR's stream, the
# audio paths' roots made alike
run() {
  local name=$1 dir=$2 clean=$3 rc=0
  "${tok[@]}" "$clean" > "$T/$name.ref" 2>/dev/null || rc=$?
  [ $rc -eq 0 ] || [ $rc -eq 3 ] || die "$name: the clean tree: exit $rc"
  local want=$rc; rc=0
  "${tok[@]}" "$dir" > "$T/$name.out" 2>"$T/err.txt" || rc=$?
  [ $rc -eq "$want" ] || { cat "$T/err.txt" >&2; die "$name: exit $rc, the clean tree's $want"; }
  grep -q "duplicate id" "$T/err.txt" && { cat "$T/err.txt" >&2; die "$name: duplicate ids"; }
  sed "s#$(cd "$dir" && pwd -P)#ROOT#; s#$(cd "$clean" && pwd -P)#ROOT#" "$T/$name.out" > "$T/$name.a"
  sed "s#$(cd "$clean" && pwd -P)#ROOT#" "$T/$name.ref" > "$T/$name.b"
  cmp -s "$T/$name.a" "$T/$name.b" || { diff "$T/$name.a" "$T/$name.b" | head >&2; die "$name: another stream"; }
}

# ---- 1. LibriTTS with links back into itself -------------------------------------------------------
cp -r "$T/trees/libritts" "$T/lt"
L="$T/lt/LibriTTS"
ch="$L/train-clean-100/19/198"
ln -s . "$ch/loop"
ln -s .. "$ch/up"
mkdir -p "$L/dev-clean/00"
ln -s ../../train-clean-100 "$L/dev-clean/00/again"
run libritts "$L" "$T/trees/libritts/LibriTTS"
[ "$(grep -c 'skipped' "$T/err.txt")" -eq 1 ] || { cat "$T/err.txt" >&2; die "want one notice of the skipped links"; }
grep -q "^xtts-tokenize: $L: skipped 3 links into a directory already read ($L/dev-clean/00/again, ...)$" "$T/err.txt" \
  || { cat "$T/err.txt" >&2; die "the notice"; }

# ---- 2. a tree of links to folders elsewhere ----------------------------------------------------------
mkdir -p "$T/store" "$T/lk/LibriTTS"
cp -r "$T/trees/libritts/LibriTTS/"* "$T/store/"
for s in "$T/store/"*; do ln -s "$s" "$T/lk/LibriTTS/$(basename "$s")"; done
rc=0; "${tok[@]}" "$T/lk/LibriTTS" > "$T/lk.out" 2>"$T/err.txt" || rc=$?
[ $rc -eq 0 ] || { cat "$T/err.txt" >&2; die "linked tree: exit $rc"; }
grep -q skipped "$T/err.txt" && die "linked tree: something skipped"
sed "s#$T/store#ROOT#" "$T/lk.out" > "$T/lk.a"
cmp -s "$T/lk.a" "$T/libritts.b" || { diff "$T/lk.a" "$T/libritts.b" | head >&2; die "linked tree: another stream"; }

# ---- 3. M-AILABS and VCTK ------------------------------------------------------------------------------
cp -r "$T/trees/mailabs" "$T/ma"
ln -s ../.. "$T/ma/uk_UK/by_book/female/sumska/back"
run mailabs "$T/ma" "$T/trees/mailabs"
grep -q "skipped 1 link into a directory already read ($T/ma/uk_UK/by_book/female/sumska/back)" "$T/err.txt" \
  || { cat "$T/err.txt" >&2; die "mailabs notice"; }
cp -r "$T/trees/vctk" "$T/vc"
ln -s p225 "$T/vc/VCTK-Corpus-0.92/txt/p225b"
run vctk "$T/vc/VCTK-Corpus-0.92" "$T/trees/vctk/VCTK-Corpus-0.92"
grep -q "skipped 1 link into a directory already read" "$T/err.txt" || { cat "$T/err.txt" >&2; die "vctk notice"; }
# ---- 4. many directories (the set of directories entered grows past its first size) -----------------
B="$T/big/LibriTTS/train-clean-100/7"
for c in $(seq 100 399); do
  mkdir -p "$B/$c"
  printf '7_%s_000000_000000\tHello there.\tHello there.\n' "$c" > "$B/$c/7_$c.trans.tsv"
  : > "$B/$c/7_${c}_000000_000000.wav"
done
ln -s . "$B/399/loop"
ln -s ../.. "$B/250/up"
rc=0; "${tok[@]}" "$T/big/LibriTTS" > "$T/big.out" 2>"$T/err.txt" || rc=$?
[ $rc -eq 0 ] || { tail -3 "$T/err.txt" >&2; die "300 chapters: exit $rc"; }
[ "$(grep -vc '^#' "$T/big.out")" -eq 300 ] || die "300 chapters: $(grep -vc '^#' "$T/big.out") records"
grep -q "skipped 2 links into a directory already read" "$T/err.txt" || { cat "$T/err.txt" >&2; die "300 chapters: notice"; }
echo "inputs_tree_links: ok"
