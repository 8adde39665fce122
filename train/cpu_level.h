/* cpu_level.h — the instruction set the trainer's CPU loops run with, chosen once per process.
 *
 * The loops (train/cpu/: the layers, the loss, the optimizer) are compiled three
 * times — for x86-64-v4 (AVX-512), x86-64-v3 (AVX2 and FMA) and the build's baseline
 * (x86-64-v2 for `make install`) — and the widest copy the CPU runs is used, so a portable build
 * trains as fast as a native one. Every copy computes the same bits (train/cpu/loops.h says how),
 * so the choice changes the speed only. The environment variable XTTS_CPU caps the choice:
 * unset, empty or "auto" (the widest the CPU has), "avx512", "avx2" or "baseline" (at most that
 * level; a cap above what the CPU has changes nothing). Off x86-64 or with another compiler than
 * gcc there is only the baseline.
 */
#ifndef XTTS_TRAIN_CPU_LEVEL_H
#define XTTS_TRAIN_CPU_LEVEL_H

#include "common/xtts_common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    XTTS_CPU_BASELINE = 0, /* the build's own instruction set, at most x86-64-v2 */
    XTTS_CPU_AVX2 = 1,     /* x86-64-v3: AVX2, FMA, BMI1/2, F16C, MOVBE */
    XTTS_CPU_AVX512 = 2,   /* x86-64-v4: AVX-512 F, BW, CD, DQ, VL */
} xtts_cpu_level;

/* The widest level this CPU runs (the operating system saving its registers included) that
 * this build has copies for. */
xtts_cpu_level xtts_cpu_level_supported(void);

/* Reads XTTS_CPU once and fixes the level of the loops for the rest of the process (the
 * supported level, capped). Later calls only repeat the first one's answer. The first use of
 * the loops calls it when the program has not. Errors: XTTS_EUSAGE when XTTS_CPU holds
 * another value than those above (the loops then run the baseline). */
xtts_status xtts_cpu_level_init(xtts_error *err);

/* The level the loops run at (calls xtts_cpu_level_init, ignoring its error, on first use). */
xtts_cpu_level xtts_cpu_level_current(void);

/* "baseline", "avx2" or "avx512"; "?" for another value. */
const char *xtts_cpu_level_name(xtts_cpu_level level);

#ifdef __cplusplus
}
#endif
#endif
