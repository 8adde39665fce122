#!/usr/bin/env bash
# e2e: long
# XTTS's GPT at XTTS-v2's full size with random weights against Coqui's own GPT run from source
# (tests/golden/check_xtts_gpt_full.py): both losses within 1e-5 relative, every gradient within
# 1e-3 of its tensor's largest. Skips without ../shared/coqui-env's environment (COQUI_ENV, by
# default /tmp/coqui-env). Needs about 8 GB of memory and 3.5 GB under TMPDIR.
set -euo pipefail
source "$(dirname "$0")/faults_lib.bash"
ENV_DIR=${COQUI_ENV:-/tmp/coqui-env}
if [ ! -f "$ENV_DIR/env.sh" ]; then
  echo "skip: no Coqui environment at $ENV_DIR (../shared/coqui-env/setup.sh builds it)"
  exit 0
fi
# shellcheck disable=SC1091
. "$ENV_DIR/env.sh"
export TMPDIR="$T"
/usr/bin/python3 "$HERE/tests/golden/check_xtts_gpt_full.py" "$BUILD" | tee "$T/full.txt"
echo ok
