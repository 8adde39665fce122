/* xtts_common_internal.h — the reference implementations that common/'s fast paths are
 * tested against, and the CPU checks that choose them; outside the library's API (not
 * installed by `make install`).
 */
#ifndef XTTS_COMMON_INTERNAL_H
#define XTTS_COMMON_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* xtts_crc32 by tables only (slicing-by-8): the reference its carry-less multiplication path
 * (PCLMULQDQ, where the build targets it) is tested against, and its path on CPUs without it. */
uint32_t xtts_crc32_table(uint32_t crc, const void *data, size_t len);

/* SHA-256's compression of n 64-byte blocks into the state st: the portable code (the
 * reference, and the path of CPUs without the SHA extensions), and the SHA-NI path (-1, st
 * unchanged, when the CPU lacks them). */
void xtts_sha256_blocks_portable(uint32_t st[8], const uint8_t *p, size_t n);
int xtts_sha256_blocks_shani(uint32_t st[8], const uint8_t *p, size_t n);

/* What the CPU offers the fast paths (common/cpu.c): PCLMULQDQ with SSE4.1; AVX with F16C
 * and the operating system's saving of the YMM registers. 0 off x86-64. */
int xtts_cpu_has_pclmul_sse41(void);
int xtts_cpu_has_avx_f16c(void);
/* AVX2 and FMA, with the operating system's saving of the YMM registers. */
int xtts_cpu_has_avx2_fma(void);
/* The SHA extensions (CPUID leaf 7, EBX bit 29) with SSSE3 and SSE4.1. */
int xtts_cpu_has_sha(void);

#ifdef __cplusplus
}
#endif
#endif
