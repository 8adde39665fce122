/* cpu.c — what the x86-64 CPU running the program offers, read once by the fast paths of
 * common/ (CRC-32 by carry-less multiplication, SHA-256 by the SHA extensions, fp16 by F16C) and kernels/dvae.c (AVX2 + FMA);
 * elsewhere none is offered. */
#include "common/xtts_common_internal.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>

/* CPUID leaf 1: ECX bit 1 PCLMULQDQ, bit 19 SSE4.1, bit 27 OSXSAVE, bit 28 AVX, bit 29 F16C.
 * (Read directly: gcc's and clang's __builtin_cpu_supports do not know the same names.) */
static unsigned cpuid1_ecx(void) {
    unsigned a, b, c, d;
    return __get_cpuid(1, &a, &b, &c, &d) ? c : 0;
}
int xtts_cpu_has_pclmul_sse41(void) {
    unsigned c = cpuid1_ecx();
    return (c & (1u << 1)) && (c & (1u << 19));
}
/* AVX (ECX of leaf 1: bit 28), and the operating system saving the YMM registers (OSXSAVE,
 * bit 27, then XCR0 bits 1 and 2). */
static int avx_usable(unsigned c) {
    if (!(c & (1u << 27)) || !(c & (1u << 28))) return 0;
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    (void)hi;
    return (lo & 6u) == 6u;
}

int xtts_cpu_has_avx_f16c(void) {
    unsigned c = cpuid1_ecx();
    return (c & (1u << 29)) && avx_usable(c);
}
/* AVX2 (CPUID leaf 7, EBX bit 5) and FMA (leaf 1, ECX bit 12), with AVX's register saving. */
int xtts_cpu_has_avx2_fma(void) {
    unsigned c = cpuid1_ecx(), a, b, cc, d;
    if (!(c & (1u << 12)) || !avx_usable(c)) return 0;
    return __get_cpuid_count(7, 0, &a, &b, &cc, &d) && (b & (1u << 5));
}
/* SHA (CPUID leaf 7, EBX bit 29), SSSE3 (leaf 1, ECX bit 9) and SSE4.1 (bit 19). */
int xtts_cpu_has_sha(void) {
    unsigned c = cpuid1_ecx(), a, b, cc, d;
    if (!(c & (1u << 9)) || !(c & (1u << 19))) return 0;
    return __get_cpuid_count(7, 0, &a, &b, &cc, &d) && (b & (1u << 29));
}
#else
int xtts_cpu_has_sha(void) { return 0; }
int xtts_cpu_has_pclmul_sse41(void) { return 0; }
int xtts_cpu_has_avx_f16c(void) { return 0; }
int xtts_cpu_has_avx2_fma(void) { return 0; }
#endif
