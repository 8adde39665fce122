#!/usr/bin/env bash
# make cache DATA=metadata.csv OUT=dir SHARDS=N [TOKENIZE_OPTS=...] [MELCACHE_OPTS=...]: a
# local sharded build, one melcache part per shard run in parallel by make -j, joined into
# one cache at the end. TOKENIZE_OPTS and MELCACHE_OPTS (split at spaces) go to xtts-tokenize
# and to every xtts-melcache part, e.g. MELCACHE_OPTS="--preset hifigan --buckets 256,512".
# The token stream and the tokenizer's rejects go beside the cache, as OUT.tokens.tsv and
# OUT.tokenize-rejects.tsv: xtts-melcache takes no folder holding anything but a cache.
set -euo pipefail
data="$1"; out="$2"; shards="${3:-1}"
read -r -a tok_opts <<< "${TOKENIZE_OPTS:-}"
read -r -a mel_opts <<< "${MELCACHE_OPTS:-}"
BIN="${BUILD:?}/bin"
out=${out%/}
mkdir -p "$(dirname "$out")"
tokens="$out.tokens.tsv"
"$BIN/xtts-tokenize" --lang auto -j "$(nproc)" --rejects "$out.tokenize-rejects.tsv" ${tok_opts[@]+"${tok_opts[@]}"} \
    "$data" > "$tokens" || [ $? -eq 3 ]
if [ "$shards" -le 1 ]; then
  "$BIN/xtts-melcache" --out "$out" --progress ${mel_opts[@]+"${mel_opts[@]}"} "$tokens" || [ $? -eq 3 ]
else
  mk=$(mktemp)
  # the options quoted for make's shell (printf '%q ' of nothing would pass one empty argument)
  quoted=""
  [ ${#mel_opts[@]} -eq 0 ] || quoted=$(printf '%q ' "${mel_opts[@]}" | sed 's/\$/$$/g')
  {
    echo "all: $(seq -f 'part%g' 0 $((shards-1)) | tr '\n' ' ')"
    for k in $(seq 0 $((shards-1))); do
      printf 'part%d:\n\t"%s" --out "%s" --part %d/%d -j 1 --quiet %s "%s" || [ $$? -eq 3 ]\n' \
        "$k" "$BIN/xtts-melcache" "$out" "$k" "$shards" "$quoted" "$tokens"
    done
  } > "$mk"
  make -s -f "$mk" -j "$shards" all
  rm -f "$mk"
  [ -f "$out/manifest.json" ] || "$BIN/xtts-cache-merge" "$out"
fi
[ -x "$BIN/xtts-cache-verify" ] && "$BIN/xtts-cache-verify" "$out"
echo "cache: $out"
