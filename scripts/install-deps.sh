#!/usr/bin/env bash
# Install the Debian packages xtts-prep needs to build, test and run the demo.
# Idempotent and quiet when everything is present. As root it runs apt-get; otherwise
# it prints the apt-get line to run and fails.
set -euo pipefail

PKGS=(
  build-essential pkg-config
  libsndfile1-dev libsoxr-dev libsamplerate0-dev liblmdb-dev lmdb-utils libzstd-dev zstd
  libcmocka-dev libfftw3-dev libutf8proc-dev libjansson-dev libespeak-ng-dev espeak-ng
  libcld2-dev libpng-dev zlib1g-dev libmecab-dev
  sox libsox-fmt-all flac vorbis-tools
  python3 python3-numpy python3-lmdb python3-zstandard
  python3-pip python3-setuptools   # pip install ./python (the xtts_prep package), offline
  python3-wheel python3-venv   # make wheel; tests/e2e/python_wheel.sh installs it into a venv
  python3-mypy   # make typecheck: the xtts_prep package under mypy --strict
  python3-torch   # the Python package's DataLoader tests (fork and spawn workers); they skip without it
)
# Extra packages for `make bench` and the golden-file scripts only (never for make test).
# clang with libFuzzer and its OpenMP runtime, for `make fuzz`.
if [ "${1:-}" = "--fuzz" ]; then
  PKGS+=(clang libclang-rt-14-dev libomp-dev)
fi
# UniDic for MeCab (about 1 GB to download, 5 GB installed): Japanese romanization for
# --normalize xtts (XTTS reads Japanese as romaji). Without it ja records are rejected with
# that reason and the ja tests skip.
if [ "${1:-}" = "--ja" ]; then
  PKGS+=(unidic-mecab)
fi
# A real single-node Slurm and GNU parallel, for the cluster tests (tests/cluster/run.sh).
if [ "${1:-}" = "--cluster" ]; then
  PKGS+=(slurm-wlm munge parallel)
fi
# Chromium, for the browser test of xtts-cache-report's HTML page
# (tests/e2e/report_html_browser.sh renders it headless; it skips without Chromium).
if [ "${1:-}" = "--browser" ]; then
  PKGS+=(chromium fonts-dejavu-core)
fi
if [ "${1:-}" = "--bench" ]; then
  PKGS+=(python3-torch python3-torchaudio python3-soundfile libopenblas0-openmp hyperfine clang)
  # node and npm may come from elsewhere (e.g. NodeSource); only ask Debian when absent
  command -v npm >/dev/null || PKGS+=(nodejs npm)
fi

missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: missing packages; run as root:" >&2
    echo "  apt-get update && apt-get install -y ${missing[*]}" >&2
    exit 2
  fi
  echo "install-deps: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The HF tokenizers library (Rust, npm binding) as the tokenizer benchmark's peer.
if [ "${1:-}" = "--bench" ] && command -v npm >/dev/null; then
  here="$(cd "$(dirname "$0")/.." && pwd)"
  if [ ! -d "$here/tests/golden/node_modules/tokenizers" ]; then
    (cd "$here/tests/golden" && npm install --no-save --silent tokenizers >/dev/null 2>&1) ||
      echo "install-deps: npm install tokenizers failed; the tokenizer benchmark will skip its peer" >&2
  fi
fi
