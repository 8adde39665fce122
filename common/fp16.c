/* fp16.c — IEEE half precision: one value, and arrays by F16C where the CPU has it. */
#include "common/xtts_common.h"
#include "common/xtts_common_internal.h"

#include <math.h>
#include <string.h>

/* ---- fp16 ------------------------------------------------------------------ */

uint16_t xtts_f32_to_f16(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t absx = x & 0x7fffffffu;
    if (absx >= 0x7f800000u) /* Inf or NaN */
        return (uint16_t)(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u | ((absx >> 13) & 0x3ffu) : 0));
    if (absx >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* overflow -> Inf */
    if (absx < 0x38800000u) { /* subnormal half or zero */
        if (absx < 0x33000000u) return (uint16_t)sign; /* < 2^-25 rounds to 0 */
        uint32_t mant = (absx & 0x7fffffu) | 0x800000u;
        int shift = 126 - (int)(absx >> 23); /* 14..24 */
        uint32_t half = mant >> shift;
        uint32_t rem = mant & ((1u << shift) - 1);
        uint32_t mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (half & 1))) half++;
        return (uint16_t)(sign | half);
    }
    uint32_t h = ((absx - 0x38000000u) >> 13);
    uint32_t rem = absx & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1))) h++;
    return (uint16_t)(sign | h);
}

float xtts_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1f;
    uint32_t mant = h & 0x3ffu;
    uint32_t x;
    if (exp == 0) {
        if (mant == 0) x = sign;
        else {
            float v = ldexpf((float)mant, -24);
            memcpy(&x, &v, 4);
            x |= sign;
        }
    } else if (exp == 31) x = sign | 0x7f800000u | (mant << 13);
    else x = sign | ((exp + 112) << 23) | (mant << 13);
    float f;
    memcpy(&f, &x, 4);
    return f;
}

#if defined(__x86_64__) && defined(__GNUC__)
/* F16C converts 8 values per instruction; gcc does not vectorize the scalar loop at -O2.
 * The hardware conversion rounds to nearest even like xtts_f32_to_f16 (tested bit for bit).
 * Compiled for AVX + F16C whatever the build's baseline and used when the CPU has them. */
#include <immintrin.h>
#define F16C_TARGET __attribute__((target("avx,f16c")))
F16C_TARGET static void f32_to_f16_f16c(const float *in, uint16_t *out, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(void *)(out + i), _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT));
    for (; i < n; i++) out[i] = xtts_f32_to_f16(in[i]);
}
F16C_TARGET static void f16_to_f32_f16c(const uint16_t *in, float *out, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(in + i))));
    for (; i < n; i++) out[i] = xtts_f16_to_f32(in[i]);
}
static int have_f16c(void) {
    static int have = -1; /* a benign race: every thread computes the same answer */
    int h = __atomic_load_n(&have, __ATOMIC_RELAXED);
    if (h < 0) {
        h = xtts_cpu_has_avx_f16c();
        __atomic_store_n(&have, h, __ATOMIC_RELAXED);
    }
    return h;
}
void xtts_f32_to_f16_n(const float *in, uint16_t *out, size_t n) {
    if (have_f16c()) { f32_to_f16_f16c(in, out, n); return; }
    for (size_t i = 0; i < n; i++) out[i] = xtts_f32_to_f16(in[i]);
}
void xtts_f16_to_f32_n(const uint16_t *in, float *out, size_t n) {
    if (have_f16c()) { f16_to_f32_f16c(in, out, n); return; }
    for (size_t i = 0; i < n; i++) out[i] = xtts_f16_to_f32(in[i]);
}
#else
void xtts_f32_to_f16_n(const float *in, uint16_t *out, size_t n) {
    for (size_t i = 0; i < n; i++) out[i] = xtts_f32_to_f16(in[i]);
}
void xtts_f16_to_f32_n(const uint16_t *in, float *out, size_t n) {
    for (size_t i = 0; i < n; i++) out[i] = xtts_f16_to_f32(in[i]);
}
#endif
