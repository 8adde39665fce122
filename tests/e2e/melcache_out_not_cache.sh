#!/usr/bin/env bash
# xtts-melcache --out takes a new or empty directory or a cache; a non-empty folder that is no
# cache (the dataset folder, a folder with a NeMo manifest.json) is refused with exit 2 naming
# it, with or without --force, and nothing in it changes. --force removes only the cache's
# files: a shard directory holding anything else stops it before anything is removed.
set -euo pipefail
source "$(dirname "$0")/faults_lib.bash"
demo_tokens
mc="$BIN/xtts-melcache"
# every file (but a build's lock, which a refused build may take) with its size and time
snapshot() { (cd "$1" && find . ! -name '.xtts-lock*' \( -type d -printf '%p/\n' -o -printf '%p %s %T@\n' \) | sort); }

# the dataset folder itself
before=$(snapshot "$T/data")
for force in "" --force; do
  expect_rc 2 "$mc" -q $force --out "$T/data" "$T/tokens.tsv"
  one_line_error "^xtts-melcache: $T/data: not empty and not a cache \(it holds [^)]*\): give an empty or new directory"
  [ "$(snapshot "$T/data")" = "$before" ] || die "--out on the dataset folder ${force:-without --force} changed it"
done
# a folder whose manifest.json is not a cache's
mkdir "$T/nemo"; echo '{"audio_filepath": "a.wav", "duration": 1.0, "text": "x"}' > "$T/nemo/manifest.json"
before=$(snapshot "$T/nemo")
expect_rc 2 "$mc" -q --force --out "$T/nemo" "$T/tokens.tsv"
one_line_error "$T/nemo: not empty and not a cache \(it holds manifest.json, which is no cache manifest\)"
[ "$(snapshot "$T/nemo")" = "$before" ] || die "--force changed a folder with a NeMo manifest"
# a new directory, an empty one, and a cache (resumed) are taken
expect_rc 3 "$mc" -q --out "$T/new/cache" "$T/tokens.tsv"
mkdir "$T/empty"
expect_rc 3 "$mc" -q --out "$T/empty" "$T/tokens.tsv"
expect_rc 3 "$mc" -q --out "$T/empty" "$T/tokens.tsv"
# --force on a cache whose shard holds a file of the user's: refused, nothing removed
echo mine > "$T/empty/shard-00000/notes.txt"
before=$(snapshot "$T/empty")
expect_rc 2 "$mc" -q --force --dtype fp32 --out "$T/empty" "$T/tokens.tsv"
one_line_error "$T/empty/shard-00000: holds notes.txt, which is not the cache's"
[ "$(snapshot "$T/empty")" = "$before" ] || die "--force removed files from a shard that holds a file of the user's"
rm "$T/empty/shard-00000/notes.txt"
expect_rc 3 "$mc" -q --force --dtype fp32 --out "$T/empty" "$T/tokens.tsv"
expect_rc 0 "$BIN/xtts-cache-verify" "$T/empty"
# a damaged cache manifest (cut short, its config_hash still in it) is the cache's: --force rebuilds
truncate -s 2000 "$T/empty/manifest.json"
expect_rc 3 "$mc" -q --force --out "$T/empty" "$T/tokens.tsv"
expect_rc 0 "$BIN/xtts-cache-verify" "$T/empty"
echo ok
