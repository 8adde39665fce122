#!/usr/bin/env bash
# Cluster builds on a real single-node Slurm and with GNU parallel (run by .ci/run as root,
# not by make test: it starts daemons). The demo dataset is built
#   - by a Slurm job array of 3 tasks, N derived from the array, options forwarded;
#   - by Slurm again, parts 0 and 2 first, then part 1 re-submitted alone with --parts 3
#     (the last part to finish merges);
#   - with scripts/parallel-melcache.sh, and with make cache SHARDS=3 MELCACHE_OPTS=...;
# and every one must verify and have the same content digest as a local whole build. Wrong arrays are refused:
# --array=1-3 without --parts, and a task number beyond --parts.
# Environment: BUILD (absolute build dir). Needs root, slurm-wlm, munge, parallel.
set -euo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
BUILD="${BUILD:-$here/build}"
BIN="$BUILD/bin"
T=$(mktemp -d /tmp/xtts-cluster.XXXXXX)
export SLURM_LOCAL_DIR="$T/slurm"
cleanup() { bash "$here/tests/cluster/slurm-local.sh" stop || true; rm -rf "$T"; }
trap cleanup EXIT
bash "$here/tests/cluster/slurm-local.sh" start
export SLURM_CONF="$SLURM_LOCAL_DIR/slurm.conf"
export PATH="$BIN:$PATH"
OPTS=(--preset hifigan --buckets 256,512,1024 --dtype fp16)

bash "$here/scripts/make-demo-dataset.sh" "$T/data" > /dev/null 2>&1
xtts-tokenize --lang auto "$T/data/metadata.csv" > "$T/tokens.tsv" 2> /dev/null || [ $? -eq 3 ]
digest() { xtts-cache-verify "$1" | sed -n 's/^digest: //p'; }
# every job small enough for this node, and never waiting forever
sb() { timeout 300 sbatch --wait --quiet --cpus-per-task=1 --mem=1G -o "$T/slurm-%A_%a.out" "$@"; }

echo "== Slurm array 0-2, N from the array, options forwarded"
sb --array=0-2 "$here/scripts/slurm-melcache.sbatch" "$T/tokens.tsv" "$T/c_slurm" "${OPTS[@]}"
grep -q '"preset": *"hifigan"' "$T/c_slurm/manifest.json" || { echo "options were not forwarded"; exit 1; }
d_slurm=$(digest "$T/c_slurm"); [ -n "$d_slurm" ]
echo "digest $d_slurm"

echo "== Slurm: parts 0 and 2, then part 1 re-submitted alone"
sb --array=0,2 "$here/scripts/slurm-melcache.sbatch" "$T/tokens.tsv" "$T/c_resub" --parts 3 "${OPTS[@]}"
[ ! -f "$T/c_resub/manifest.json" ] || { echo "a manifest before every part was built"; exit 1; }
sb --array=1 "$here/scripts/slurm-melcache.sbatch" "$T/tokens.tsv" "$T/c_resub" --parts 3 "${OPTS[@]}"
[ "$(digest "$T/c_resub")" = "$d_slurm" ] || { echo "re-submitted build differs"; exit 1; }

echo "== Slurm: arrays that cannot say N are refused"
rc=0; sb --array=1-3 "$here/scripts/slurm-melcache.sbatch" "$T/tokens.tsv" "$T/c_bad" "${OPTS[@]}" || rc=$?
[ $rc -ne 0 ] && grep -q "add --parts N" "$T"/slurm-*_1.out || { echo "--array=1-3 was not refused"; exit 1; }
rc=0; sb --array=3 "$here/scripts/slurm-melcache.sbatch" "$T/tokens.tsv" "$T/c_bad2" --parts 3 "${OPTS[@]}" || rc=$?
[ $rc -ne 0 ] && grep -q "not a part of a 3-part build" "$T"/slurm-*_3.out || { echo "task 3 of 3 was not refused"; exit 1; }
[ ! -e "$T/c_bad2/manifest.json" ]

echo "== GNU parallel, 3 parts"
XTTS_MELCACHE="$BIN/xtts-melcache" bash "$here/scripts/parallel-melcache.sh" "$T/tokens.tsv" "$T/c_par" 3 "${OPTS[@]}"
[ "$(digest "$T/c_par")" = "$d_slurm" ] || { echo "GNU parallel build differs"; exit 1; }

echo "== make cache SHARDS=3 MELCACHE_OPTS=..."
make -s -C "$here" cache BUILD="$BUILD" DATA="$T/data/metadata.csv" OUT="$T/c_make" SHARDS=3 \
     TOKENIZE_OPTS="--lang auto" MELCACHE_OPTS="${OPTS[*]}" > /dev/null 2>&1
[ "$(digest "$T/c_make")" = "$d_slurm" ] || { echo "make cache build differs"; exit 1; }

echo "== a local whole build"
xtts-melcache -q --out "$T/c_local" "${OPTS[@]}" "$T/tokens.tsv" 2> /dev/null || [ $? -eq 3 ]
[ "$(digest "$T/c_local")" = "$d_slurm" ] || { echo "the local whole build differs from the cluster builds"; exit 1; }
echo "cluster: all builds agree ($d_slurm)"
