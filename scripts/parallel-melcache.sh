#!/usr/bin/env bash
# Build one cache with GNU parallel: N parts, each a separate xtts-melcache process (on one
# machine, or on several with parallel's --sshlogin over a shared filesystem), then joined.
#   parallel-melcache.sh tokens.tsv cache/ 8 [xtts-melcache options]
# Every option after N goes to each xtts-melcache part unchanged. Re-running resumes.
set -euo pipefail
me=parallel-melcache
if [ "${1:-}" = "--one-part" ]; then # internal: one part, run by parallel
  shift
  tokens="$1" out="$2" k="$3" n="$4"; shift 4
  "${XTTS_MELCACHE:-xtts-melcache}" --out "$out" --part "$k/$n" -j 1 --quiet "$@" "$tokens" || [ $? -eq 3 ]
  exit 0
fi
TOKENS="${1:?usage: $me TOKENS OUT [N] [xtts-melcache options]}"
OUT="${2:?usage: $me TOKENS OUT [N] [xtts-melcache options]}"
N="${3:-$(nproc)}"
shift $(( $# < 3 ? $# : 3 ))
case "$N" in ''|*[!0-9]*|0) echo "$me: N=$N: expected a positive number" >&2; exit 1 ;; esac
command -v parallel >/dev/null || { echo "$me: GNU parallel is not installed (Debian: apt-get install parallel)" >&2; exit 2; }
seq 0 $((N - 1)) | parallel -q -j "$N" --halt now,fail=1 bash "$0" --one-part "$TOKENS" "$OUT" {} "$N" "$@"
[ -f "$OUT/manifest.json" ] || "${XTTS_CACHE_MERGE:-xtts-cache-merge}" "$OUT"
