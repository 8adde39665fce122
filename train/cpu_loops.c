/* cpu_loops.c — the copies of the trainer's CPU loops (train/cpu/loops.h), one per
 * instruction set, and the choice among them (train/cpu_level.h).
 *
 * gcc on x86-64 compiles the loops three times, each under its own `#pragma GCC target`: the
 * baseline, x86-64-v3 and x86-64-v4. The baseline copy is the build's own instruction set, but
 * no wider than x86-64-v2: a native build (-march=native) then holds the very copy that a
 * portable install runs on a CPU without AVX2, and XTTS_CPU=baseline runs it here. The level is
 * chosen once, from CPUID (gcc's __builtin_cpu_supports, which also checks that the operating
 * system saves the wide registers) and XTTS_CPU, and every call of a layer goes through that
 * copy's table. Other compilers and other architectures get the baseline copy alone.
 */
#include "train/cpu_loops_internal.h"

#include <math.h>
#include <omp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


#define LOOPS_PASTE2(x, level) x##_##level
#define LOOPS_PASTE(x, level) LOOPS_PASTE2(x, level)
#define LOOPS_NAME(x) LOOPS_PASTE(x, LOOPS_LEVEL)

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#define HAVE_WIDE_COPIES 1
#else
#define HAVE_WIDE_COPIES 0
#endif

#define LOOPS_LEVEL baseline
#if HAVE_WIDE_COPIES && defined(__SSE4_2__) && defined(__POPCNT__) && defined(__SSSE3__)
#pragma GCC push_options
#pragma GCC target("arch=x86-64-v2")
#include "train/cpu/loops.h"
#pragma GCC pop_options
#else
#include "train/cpu/loops.h"
#endif
#undef LOOPS_LEVEL

#if HAVE_WIDE_COPIES
#define LOOPS_LEVEL avx2
#pragma GCC push_options
#pragma GCC target("arch=x86-64-v3")
#include "train/cpu/loops.h"
#pragma GCC pop_options
#undef LOOPS_LEVEL

#define LOOPS_LEVEL avx512
#pragma GCC push_options
#pragma GCC target("arch=x86-64-v4")
#include "train/cpu/loops.h"
#pragma GCC pop_options
#undef LOOPS_LEVEL

static const xtts_cpu_loops *const copies[] = {&loops_baseline, &loops_avx2, &loops_avx512};
#else
static const xtts_cpu_loops *const copies[] = {&loops_baseline};
#endif

static const char *const level_names[] = {"baseline", "avx2", "avx512"};

const char *xtts_cpu_level_name(xtts_cpu_level level) {
    return level >= XTTS_CPU_BASELINE && level <= XTTS_CPU_AVX512 ? level_names[level] : "?";
}

xtts_cpu_level xtts_cpu_level_supported(void) {
#if HAVE_WIDE_COPIES
    __builtin_cpu_init();
    if (__builtin_cpu_supports("x86-64-v4")) return XTTS_CPU_AVX512;
    if (__builtin_cpu_supports("x86-64-v3")) return XTTS_CPU_AVX2;
#endif
    return XTTS_CPU_BASELINE;
}

/* The choice, made once: the supported level capped by XTTS_CPU; an unknown value of
 * XTTS_CPU is kept (truncated) for the error message, and the baseline runs. */
static pthread_once_t chosen_once = PTHREAD_ONCE_INIT;
static xtts_cpu_level chosen_level;
static char unknown_value[64];

static void choose_level(void) {
    xtts_cpu_level level = xtts_cpu_level_supported();
    const char *cap = getenv("XTTS_CPU");
    if (cap && *cap && strcmp(cap, "auto") != 0) {
        int known = 0;
        for (int l = XTTS_CPU_BASELINE; l <= XTTS_CPU_AVX512; l++) {
            if (strcmp(cap, level_names[l]) != 0) continue;
            known = 1;
            if ((xtts_cpu_level)l < level) level = (xtts_cpu_level)l;
        }
        if (!known) {
            snprintf(unknown_value, sizeof unknown_value, "%s", cap);
            level = XTTS_CPU_BASELINE;
        }
    }
    chosen_level = level;
}

xtts_status xtts_cpu_level_init(xtts_error *err) {
    pthread_once(&chosen_once, choose_level);
    if (unknown_value[0])
        return xtts_error_set(err, XTTS_EUSAGE, "XTTS_CPU=%s: expected auto, avx512, avx2 or baseline",
                              unknown_value);
    return XTTS_OK;
}

xtts_cpu_level xtts_cpu_level_current(void) {
    pthread_once(&chosen_once, choose_level);
    return chosen_level;
}

const xtts_cpu_loops *xtts_cpu_loops_at(xtts_cpu_level level) {
    xtts_cpu_level top = xtts_cpu_level_supported();
    if (level > top) level = top;
    if (level < XTTS_CPU_BASELINE) level = XTTS_CPU_BASELINE;
    return copies[level];
}

const xtts_cpu_loops *xtts_cpu_loops_current(void) { return copies[xtts_cpu_level_current()]; }
