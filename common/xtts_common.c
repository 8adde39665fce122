/* xtts_common.c — errors, CRC-32, FNV-1a, SHA-256, fp16, atomic files, progress. */
#include "common/xtts_common.h"
#include "common/xtts_common_internal.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

xtts_status xtts_error_set(xtts_error *err, xtts_status code, const char *fmt, ...) {
    if (!err) return code;
    err->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    /* one line, always */
    for (char *p = err->msg; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
    return code;
}

void xtts_error_clear(xtts_error *err) {
    if (!err) return;
    err->code = XTTS_OK;
    err->msg[0] = '\0';
}

const char *xtts_strerror(xtts_status code) {
    switch (code) {
    case XTTS_OK: return "success";
    case XTTS_EUSAGE: return "usage error";
    case XTTS_EINPUT: return "malformed input";
    case XTTS_EIO: return "input/output error";
    case XTTS_ENOMEM: return "out of memory";
    case XTTS_ECORRUPT: return "corrupt data";
    case XTTS_EMISMATCH: return "configuration mismatch";
    case XTTS_ERANGE: return "value out of range";
    case XTTS_ENOTFOUND: return "not found";
    case XTTS_EBUSY: return "resource busy";
    case XTTS_EUNSUPPORTED: return "not supported";
    }
    return "unknown error";
}

int xtts_exit_code(xtts_status code) {
    if (code == XTTS_OK) return 0;
    if (code == XTTS_EUSAGE) return 1;
    return 2;
}

void xtts_usage_hint(const char *prog) { fprintf(stderr, "Try '%s --help' for more information.\n", prog); }

void xtts_error_print(const char *prog, const xtts_error *err) {
    if (!err) return;
    fprintf(stderr, "%s: %s\n", prog, err->msg[0] ? err->msg : xtts_strerror(err->code));
}

/* ---- CRC-32 ---------------------------------------------------------------- */

static uint32_t crc_table[8][256];
static int crc_table_ready;

static void crc_init(void) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        crc_table[0][i] = c;
    }
    for (int t = 1; t < 8; t++)
        for (int i = 0; i < 256; i++)
            crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^ crc_table[0][crc_table[t - 1][i] & 0xff];
    __atomic_store_n(&crc_table_ready, 1, __ATOMIC_RELEASE);
}

/* The table version: the reference, and the tail of the folding version. Works on the
 * register (not inverted). */
static uint32_t crc32_table_raw(uint32_t crc, const uint8_t *p, size_t len) {
    while (len >= 8) { /* slicing-by-8 */
        uint32_t a = crc ^ xtts_get_le32(p);
        uint32_t b = xtts_get_le32(p + 4);
        crc = crc_table[7][a & 0xff] ^ crc_table[6][(a >> 8) & 0xff] ^ crc_table[5][(a >> 16) & 0xff] ^
              crc_table[4][a >> 24] ^ crc_table[3][b & 0xff] ^ crc_table[2][(b >> 8) & 0xff] ^
              crc_table[1][(b >> 16) & 0xff] ^ crc_table[0][b >> 24];
        p += 8;
        len -= 8;
    }
    while (len--) crc = crc_table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return crc;
}

uint32_t xtts_crc32_table(uint32_t crc, const void *data, size_t len) {
    if (!__atomic_load_n(&crc_table_ready, __ATOMIC_ACQUIRE)) crc_init(); /* idempotent */
    return ~crc32_table_raw(~crc, data, len);
}

#if defined(__x86_64__) && defined(__GNUC__)
/* Compiled for PCLMUL + SSE4.1 whatever the build's baseline, used when the CPU has them
 * (checked once): a portable build (x86-64-v2) keeps the fast CRC. */
#define CRC_TARGET __attribute__((target("pclmul,sse4.1")))
#include <cpuid.h>

/* CPUID leaf 1: ECX bit 1 PCLMULQDQ, bit 19 SSE4.1, bit 27 OSXSAVE, bit 28 AVX, bit 29 F16C.
 * (Read directly: gcc's and clang's __builtin_cpu_supports do not know the same names.) */
static unsigned cpuid1_ecx(void) {
    unsigned a, b, c, d;
    return __get_cpuid(1, &a, &b, &c, &d) ? c : 0;
}
static int cpu_has_pclmul_sse41(void) {
    unsigned c = cpuid1_ecx();
    return (c & (1u << 1)) && (c & (1u << 19));
}
/* AVX also needs the operating system to save the YMM registers (XCR0 bits 1 and 2). */
static int cpu_has_avx_f16c(void) {
    unsigned c = cpuid1_ecx();
    if (!(c & (1u << 27)) || !(c & (1u << 28)) || !(c & (1u << 29))) return 0;
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    (void)hi;
    return (lo & 6u) == 6u;
}
/* Carry-less multiplication folding (Intel, "Fast CRC Computation for Generic Polynomials
 * Using PCLMULQDQ Instruction", 2009), bit-reflected: four 128-bit lanes are folded
 * forward 512 bits at a time, then into one lane, then 128 bits at a time. The last
 * 16-byte state and the tail go through the table: the state, read as 16 message bytes
 * with a zero register, leaves the same register as the bytes it stands for. Constants
 * are x^(T+32) and x^(T-32) mod P, reflected, for T = 512 and T = 128. */
#include <immintrin.h>

CRC_TARGET static inline __m128i crc_fold(__m128i x, __m128i k, __m128i next) {
    __m128i lo = _mm_clmulepi64_si128(x, k, 0x00), hi = _mm_clmulepi64_si128(x, k, 0x11);
    return _mm_xor_si128(_mm_xor_si128(lo, hi), next);
}

CRC_TARGET static uint32_t crc32_pclmul(uint32_t crc, const void *data, size_t len) {
    const uint8_t *p = data;
    uint32_t r = ~crc;
    if (len >= 64) {
        const __m128i k512 = _mm_set_epi64x(0x1c6e41596LL, 0x154442bd4LL);
        const __m128i k128 = _mm_set_epi64x(0x0ccaa009eLL, 0x1751997d0LL);
        __m128i x0 = _mm_loadu_si128((const __m128i *)(const void *)p);
        __m128i x1 = _mm_loadu_si128((const __m128i *)(const void *)(p + 16));
        __m128i x2 = _mm_loadu_si128((const __m128i *)(const void *)(p + 32));
        __m128i x3 = _mm_loadu_si128((const __m128i *)(const void *)(p + 48));
        x0 = _mm_xor_si128(x0, _mm_cvtsi32_si128((int)r));
        p += 64;
        len -= 64;
        while (len >= 64) {
            x0 = crc_fold(x0, k512, _mm_loadu_si128((const __m128i *)(const void *)p));
            x1 = crc_fold(x1, k512, _mm_loadu_si128((const __m128i *)(const void *)(p + 16)));
            x2 = crc_fold(x2, k512, _mm_loadu_si128((const __m128i *)(const void *)(p + 32)));
            x3 = crc_fold(x3, k512, _mm_loadu_si128((const __m128i *)(const void *)(p + 48)));
            p += 64;
            len -= 64;
        }
        x0 = crc_fold(x0, k128, x1);
        x0 = crc_fold(x0, k128, x2);
        x0 = crc_fold(x0, k128, x3);
        while (len >= 16) {
            x0 = crc_fold(x0, k128, _mm_loadu_si128((const __m128i *)(const void *)p));
            p += 16;
            len -= 16;
        }
        uint8_t st[16];
        _mm_storeu_si128((__m128i *)(void *)st, x0);
        r = crc32_table_raw(0, st, 16);
    }
    return ~crc32_table_raw(r, p, len);
}

uint32_t xtts_crc32(uint32_t crc, const void *data, size_t len) {
    static int have_pclmul = -1; /* a benign race: every thread computes the same answer */
    if (!__atomic_load_n(&crc_table_ready, __ATOMIC_ACQUIRE)) crc_init(); /* idempotent */
    int h = __atomic_load_n(&have_pclmul, __ATOMIC_RELAXED);
    if (h < 0) {
        h = cpu_has_pclmul_sse41();
        __atomic_store_n(&have_pclmul, h, __ATOMIC_RELAXED);
    }
    return h ? crc32_pclmul(crc, data, len) : xtts_crc32_table(crc, data, len);
}
#else
uint32_t xtts_crc32(uint32_t crc, const void *data, size_t len) { return xtts_crc32_table(crc, data, len); }
#endif

uint64_t xtts_fnv1a64(uint64_t h, const void *data, size_t len) {
    const uint8_t *p = data;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

uint64_t xtts_id_hash(const void *id, size_t len) {
    uint64_t h = xtts_fnv1a64(XTTS_FNV64_INIT, id, len);
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h ? h : 1;
}

static int hash_set_grow(xtts_hash_set *s) {
    size_t nc = s->cap ? s->cap * 2 : 1024;
    uint64_t *n = calloc(nc, sizeof *n);
    if (!n) return -1;
    for (size_t i = 0; i < s->cap; i++) {
        uint64_t h = s->slots[i];
        if (!h) continue;
        size_t k = (size_t)h & (nc - 1);
        while (n[k]) k = (k + 1) & (nc - 1);
        n[k] = h;
    }
    free(s->slots);
    s->slots = n;
    s->cap = nc;
    return 0;
}

int xtts_hash_set_has(const xtts_hash_set *s, uint64_t h) {
    if (!s->cap) return 0;
    for (size_t k = (size_t)h & (s->cap - 1); s->slots[k]; k = (k + 1) & (s->cap - 1))
        if (s->slots[k] == h) return 1;
    return 0;
}

int xtts_hash_set_add(xtts_hash_set *s, uint64_t h) {
    if (xtts_hash_set_has(s, h)) return 0;
    if ((s->used + 1) * 2 > s->cap && hash_set_grow(s)) return -1;
    size_t k = (size_t)h & (s->cap - 1);
    while (s->slots[k]) k = (k + 1) & (s->cap - 1);
    s->slots[k] = h;
    s->used++;
    return 1;
}

void xtts_hash_set_free(xtts_hash_set *s) {
    if (!s) return;
    free(s->slots);
    s->slots = NULL;
    s->cap = s->used = 0;
}

/* Four bits an entry, placed by double hashing (Kirsch and Mitzenmacher) within one 4 KiB
 * page of the filter chosen by the hash's top bits: an entry touches one page, not four, so a
 * build of a few thousand records faults in a few thousand pages rather than the whole 16 MiB
 * (a page fault costs up to 20 microseconds on some virtual machines), and a lookup stays in
 * one page. With about 250 entries a page at 1,000,000 entries the false-positive rate is
 * that of the unblocked filter. */
#define ID_FILTER_PAGE_BITS 32768u /* 4 KiB */
#define ID_FILTER_PAGES (XTTS_ID_FILTER_BYTES * 8 / ID_FILTER_PAGE_BITS)
#define ID_FILTER_PROBES 4

static size_t id_filter_bit(uint64_t h, unsigned i) {
    uint64_t page = (h >> 40) & (ID_FILTER_PAGES - 1);
    uint64_t a = (uint32_t)h, b = (h >> 20) | 1;
    return (size_t)(page * ID_FILTER_PAGE_BITS + ((a + i * b) & (ID_FILTER_PAGE_BITS - 1)));
}

int xtts_id_filter_add(xtts_id_filter *f, uint64_t h) {
    if (!f->bits) {
        /* its own mapping: zero pages touched only as bits are set (calloc from a heap that
         * was used before clears all 16 MiB) */
        void *p = mmap(NULL, XTTS_ID_FILTER_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) return -1;
        f->bits = p;
    }
    int all = 1;
    for (unsigned i = 0; i < ID_FILTER_PROBES; i++) {
        size_t k = id_filter_bit(h, i);
        uint64_t m = (uint64_t)1 << (k % 64);
        all &= (f->bits[k / 64] & m) != 0;
        f->bits[k / 64] |= m;
    }
    return all;
}

int xtts_id_filter_maybe(const xtts_id_filter *f, uint64_t h) {
    if (!f->bits) return 0;
    for (unsigned i = 0; i < ID_FILTER_PROBES; i++) {
        size_t k = id_filter_bit(h, i);
        if (!(f->bits[k / 64] >> (k % 64) & 1)) return 0;
    }
    return 1;
}

void xtts_id_filter_free(xtts_id_filter *f) {
    if (!f) return;
    if (f->bits) munmap(f->bits, XTTS_ID_FILTER_BYTES);
    f->bits = NULL;
}

/* ---- SHA-256 (FIPS 180-4) ------------------------------------------------ */

static const uint32_t K256[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void sha256_block(uint32_t st[8], const uint8_t *b) {
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = ((uint32_t)b[4 * i] << 24) | ((uint32_t)b[4 * i + 1] << 16) | ((uint32_t)b[4 * i + 2] << 8) | b[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = st[0], bb = st[1], c = st[2], d = st[3], e = st[4], f = st[5], g = st[6], h = st[7];
    for (int i = 0; i < 64; i++) {
        uint32_t S1 = ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25);
        uint32_t ch = (e & f) ^ (~e & g);
        uint32_t t1 = h + S1 + ch + K256[i] + w[i];
        uint32_t S0 = ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22);
        uint32_t mj = (a & bb) ^ (a & c) ^ (bb & c);
        uint32_t t2 = S0 + mj;
        h = g; g = f; f = e; e = d + t1; d = c; c = bb; bb = a; a = t1 + t2;
    }
    st[0] += a; st[1] += bb; st[2] += c; st[3] += d; st[4] += e; st[5] += f; st[6] += g; st[7] += h;
}

void xtts_sha256_init(xtts_sha256 *s) {
    static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(s->state, iv, sizeof iv);
    s->bytes = 0;
    s->used = 0;
}

void xtts_sha256_update(xtts_sha256 *s, const void *data, size_t len) {
    const uint8_t *p = data;
    s->bytes += len;
    if (s->used) {
        size_t take = 64 - s->used < len ? 64 - s->used : len;
        memcpy(s->block + s->used, p, take);
        s->used += take; p += take; len -= take;
        if (s->used == 64) { sha256_block(s->state, s->block); s->used = 0; }
    }
    while (len >= 64) { sha256_block(s->state, p); p += 64; len -= 64; }
    if (len) { memcpy(s->block, p, len); s->used = len; }
}

void xtts_sha256_final(xtts_sha256 *s, uint8_t out[32]) {
    uint64_t bits = s->bytes * 8;
    uint8_t pad = 0x80;
    xtts_sha256_update(s, &pad, 1);
    uint8_t zero = 0;
    while (s->used != 56) xtts_sha256_update(s, &zero, 1);
    uint8_t lenb[8];
    xtts_put_be64(lenb, bits);
    xtts_sha256_update(s, lenb, 8);
    for (int i = 0; i < 8; i++) {
        out[4 * i] = (uint8_t)(s->state[i] >> 24); out[4 * i + 1] = (uint8_t)(s->state[i] >> 16);
        out[4 * i + 2] = (uint8_t)(s->state[i] >> 8); out[4 * i + 3] = (uint8_t)s->state[i];
    }
}

void xtts_hex(const uint8_t *bytes, size_t n, char *out) {
    static const char hx[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) { out[2 * i] = hx[bytes[i] >> 4]; out[2 * i + 1] = hx[bytes[i] & 15]; }
    out[2 * n] = '\0';
}

xtts_status xtts_sha256_file(const char *path, char out_hex[65], xtts_error *err) {
    FILE *f = fopen(path, "rb");
    if (!f) return xtts_error_set(err, XTTS_EIO, "%s: cannot open: %s", path, strerror(errno));
    xtts_sha256 s;
    xtts_sha256_init(&s);
    uint8_t buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) xtts_sha256_update(&s, buf, n);
    int bad = ferror(f);
    fclose(f);
    if (bad) return xtts_error_set(err, XTTS_EIO, "%s: read error", path);
    uint8_t d[32];
    xtts_sha256_final(&s, d);
    xtts_hex(d, 32, out_hex);
    return XTTS_OK;
}

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
        h = cpu_has_avx_f16c();
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

/* ---- files ----------------------------------------------------------------- */

static int fsync_dir_of(const char *path) {
    char *dup = strdup(path);
    if (!dup) return -1;
    const char *dir = dirname(dup);
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    int rc = -1;
    if (fd >= 0) { rc = fsync(fd); close(fd); }
    free(dup);
    return rc;
}

xtts_status xtts_write_file_atomic(const char *path, const void *data, size_t len, xtts_error *err) {
    char tmp[4096];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= sizeof tmp)
        return xtts_error_set(err, XTTS_ERANGE, "%s: path too long", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return xtts_error_set(err, XTTS_EIO, "%s: cannot create: %s", tmp, strerror(errno));
    const uint8_t *p = data;
    size_t left = len;
    while (left) {
        ssize_t w = write(fd, p, left);
        if (w < 0) {
            if (errno == EINTR) continue;
            int e = errno;
            close(fd); unlink(tmp);
            return xtts_error_set(err, XTTS_EIO, "%s: write failed: %s", tmp, strerror(e));
        }
        p += w; left -= (size_t)w;
    }
    if (fsync(fd) != 0) {
        int e = errno;
        close(fd); unlink(tmp);
        return xtts_error_set(err, XTTS_EIO, "%s: fsync failed: %s", tmp, strerror(e));
    }
    if (close(fd) != 0) {
        int e = errno;
        unlink(tmp);
        return xtts_error_set(err, XTTS_EIO, "%s: close failed: %s", tmp, strerror(e));
    }
    if (rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return xtts_error_set(err, XTTS_EIO, "%s: rename failed: %s", path, strerror(e));
    }
    fsync_dir_of(path);
    return XTTS_OK;
}

xtts_status xtts_read_file(const char *path, size_t max_bytes, char **out, size_t *len, xtts_error *err) {
    *out = NULL;
    if (len) *len = 0;
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!f) return xtts_error_set(err, errno == ENOENT ? XTTS_ENOTFOUND : XTTS_EIO, "%s: cannot open: %s", path, strerror(errno));
    size_t cap = max_bytes < 65536 ? max_bytes : 65536, n = 0;
    char *buf = malloc(cap + 1);
    if (!buf) { if (f != stdin) fclose(f); return xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", path); }
    for (;;) {
        if (n == cap) {
            /* a file of exactly max_bytes is fine: probe for one more byte (buf has room) */
            if (cap >= max_bytes && fread(buf + n, 1, 1, f) == 1) {
                free(buf); if (f != stdin) fclose(f);
                return xtts_error_set(err, XTTS_ERANGE, "%s: larger than %zu bytes", path, max_bytes);
            }
            if (cap >= max_bytes) break;
            size_t ncap = cap * 2 > max_bytes ? max_bytes : cap * 2;
            char *nb = realloc(buf, ncap + 1);
            if (!nb) { free(buf); if (f != stdin) fclose(f); return xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", path); }
            buf = nb; cap = ncap;
        }
        size_t r = fread(buf + n, 1, cap - n, f);
        n += r;
        if (r == 0) break;
    }
    int bad = ferror(f);
    if (f != stdin) fclose(f);
    if (bad) { free(buf); return xtts_error_set(err, XTTS_EIO, "%s: read error", path); }
    buf[n] = '\0';
    *out = buf;
    if (len) *len = n;
    return XTTS_OK;
}

size_t xtts_path_join(char *out, size_t cap, const char *dir, const char *name) {
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/') n--;
    const char *sep = n == 0 || dir[n - 1] == '/' ? "" : "/";
    int k = snprintf(out, cap, "%.*s%s%s", (int)n, dir, sep, name);
    return k < 0 ? cap : (size_t)k;
}

xtts_status xtts_mkdir_p(const char *path, xtts_error *err) {
    char buf[4096];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof buf) return xtts_error_set(err, XTTS_ERANGE, "bad directory path '%s'", path);
    memcpy(buf, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] == '/' || buf[i] == '\0') {
            char c = buf[i];
            buf[i] = '\0';
            if (mkdir(buf, 0755) != 0 && errno != EEXIST)
                return xtts_error_set(err, XTTS_EIO, "%s: cannot create directory: %s", buf, strerror(errno));
            buf[i] = c;
        }
    }
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return xtts_error_set(err, XTTS_EIO, "%s: not a directory", path);
    return XTTS_OK;
}

double xtts_now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* strtol/strtod skip leading white space; a whole-string parse must not. */
int xtts_parse_long(const char *s, long lo, long hi, long *out) {
    if (!s || !*s || isspace((unsigned char)*s)) return -1;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

int xtts_parse_double(const char *s, double lo, double hi, double *out) {
    if (!s || !*s || isspace((unsigned char)*s)) return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || !isfinite(v) || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

/* ---- languages ------------------------------------------------------------- */

const char *const xtts_lang_codes[XTTS_N_LANGS] = {"en", "es", "fr", "de", "it", "pt", "pl", "tr", "ru",
                                                   "nl", "cs", "ar", "zh-cn", "hu", "ko", "ja", "hi"};

int xtts_lang_index(const char *code) {
    if (!code) return -1;
    if (!strcasecmp(code, "zh")) return 12;
    for (int i = 0; i < XTTS_N_LANGS; i++)
        if (!strcasecmp(code, xtts_lang_codes[i])) return i;
    return -1;
}

/* ---- progress --------------------------------------------------------------- */

void xtts_progress_init(xtts_progress *p, const char *label, int force) {
    p->label = label;
    p->tty = isatty(2);
    p->active = force || p->tty;
    p->t0 = xtts_now_s();
    p->last = 0;
}

static void progress_line(xtts_progress *p, uint64_t done, uint64_t total, const char *extra, int final) {
    double t = xtts_now_s() - p->t0;
    double rate = t > 0 ? (double)done / t : 0;
    char eta[32] = "--:--";
    if (rate > 0 && total >= done) {
        double left = (double)(total - done) / rate;
        snprintf(eta, sizeof eta, "%02d:%02d", (int)(left / 60), (int)left % 60);
    }
    if (total)
        fprintf(stderr, "%s%s: %llu/%llu (%.1f/s, ETA %s)%s%s%s", p->tty ? "\r" : "", p->label,
                (unsigned long long)done, (unsigned long long)total, rate, eta, extra ? " " : "",
                extra ? extra : "", p->tty && !final ? "\033[K" : "\n");
    else
        fprintf(stderr, "%s%s: %llu (%.1f/s)%s%s%s", p->tty ? "\r" : "", p->label, (unsigned long long)done,
                rate, extra ? " " : "", extra ? extra : "", p->tty && !final ? "\033[K" : "\n");
    if (final && p->tty) fputc('\n', stderr);
}

void xtts_progress_update(xtts_progress *p, uint64_t done, uint64_t total, const char *extra) {
    if (!p->active) return;
    double now = xtts_now_s();
    if (now - p->last < (p->tty ? 0.25 : 2.0)) return;
    p->last = now;
    progress_line(p, done, total, extra, 0);
}

void xtts_progress_finish(xtts_progress *p, uint64_t done, uint64_t total, const char *extra) {
    if (!p->active) return;
    progress_line(p, done, total, extra, 1);
}

/* ---- standard output checked up to its close ------------------------------------------- */

static const char *stdout_prog = "xtts";
static int stdout_reported;

void xtts_stdout_error_reported(void) { stdout_reported = 1; }

static void close_stdout(void) {
    int bad = ferror(stdout);
    errno = 0;
    if (fclose(stdout) != 0) bad = 1;
    if (bad && stdout_reported) _exit(2);
    if (bad) {
        int e = errno;
        fprintf(stderr, "%s: standard output: write failed%s%s\n", stdout_prog, e ? ": " : "",
                e ? strerror(e) : "");
        fflush(stderr);
        _exit(2);
    }
}

void xtts_malloc_for_batch(void) {
#ifdef __GLIBC__
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 64 << 20);
    /* Every thread allocates from the one heap, which grows in steps of 64 MiB; the first
     * step is made now and advised for transparent huge pages. A first touch of a 4 KiB page
     * costs a fault (13 us measured on a virtual machine; 1-2 us on bare metal), one of a
     * 2 MiB page as much for 512 times the memory. Memory the heap gets later, and kernels
     * without huge pages, keep 4 KiB pages. Under a sanitizer's malloc the heap does not
     * move and nothing is advised. */
    mallopt(M_ARENA_MAX, 1);
    mallopt(M_TOP_PAD, 64 << 20);
#ifdef MADV_HUGEPAGE
    const uintptr_t huge = (uintptr_t)2 << 20;
    uintptr_t before = (uintptr_t)sbrk(0);
    void *p = malloc(16 << 20);
    uintptr_t after = (uintptr_t)sbrk(0);
    uintptr_t a = (before + huge - 1) & ~(huge - 1), b = after & ~(huge - 1);
    if (p && before != (uintptr_t)-1 && after != (uintptr_t)-1 && b > a) (void)madvise((void *)a, b - a, MADV_HUGEPAGE);
    free(p);
#endif
#endif
}

void *xtts_renew(void *buf, size_t *cap, size_t need, size_t elem) {
    if (buf && need <= *cap) return buf;
    free(buf);
    size_t c = (need / 65536 + 1) * 65536;
    void *p = elem && c > need && c <= SIZE_MAX / elem ? malloc(c * elem) : NULL;
    *cap = p ? c : 0;
    return p;
}

void xtts_check_stdout_at_exit(const char *prog) {
    if (prog) stdout_prog = prog;
    atexit(close_stdout);
}
