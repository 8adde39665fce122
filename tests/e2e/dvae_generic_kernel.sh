#!/usr/bin/env bash
# The DVAE encoder's kernel without FMA (the one CPUs without AVX2 + FMA run; kernels/dvae.c
# chooses at run time): test_dvae's checks against Coqui's codes and the direct convolution
# pass with it forced (XTTS_DVAE_KERNEL=generic), as they do with the FMA kernel.
set -euo pipefail
: "${BUILD:?}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
t=$BUILD/tests/test_dvae
[ -x "$t" ] || { echo "FAIL: $t not built" >&2; exit 1; }
cd "$root"
XTTS_DVAE_KERNEL=generic "$t"
echo "dvae_generic_kernel: ok"
