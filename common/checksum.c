/* checksum.c — CRC-32 (carry-less multiplication where the CPU has it, tables otherwise),
 * FNV-1a and the id hash with its exact set and filter, SHA-256. */
#include "common/xtts_common.h"
#include "common/xtts_common_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

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
        h = xtts_cpu_has_pclmul_sse41();
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

static void sha256_block_portable(uint32_t st[8], const uint8_t *b) {
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

void xtts_sha256_blocks_portable(uint32_t st[8], const uint8_t *p, size_t n) {
    for (; n; n--, p += 64) sha256_block_portable(st, p);
}

#if defined(__x86_64__) && defined(__GNUC__)
/* The SHA extensions (SHA-NI: Intel since Goldmont and Ice Lake, AMD since Zen), compiled for
 * them whatever the build's baseline and used when the CPU has them (checked once). The state
 * lives in two registers as the instructions want it, (a, b, e, f) and (c, d, g, h); each
 * SHA256RNDS2 does two rounds, and SHA256MSG1/MSG2 extend the message schedule four words at
 * a time: w[t] = s1(w[t-2]) + w[t-7] + s0(w[t-15]) + w[t-16]. */
#define SHA_TARGET __attribute__((target("sha,ssse3,sse4.1")))

SHA_TARGET static void sha256_blocks_shani(uint32_t st[8], const uint8_t *p, size_t n) {
    const __m128i bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);
    __m128i dcba = _mm_loadu_si128((const __m128i *)st), hgfe = _mm_loadu_si128((const __m128i *)(st + 4));
    __m128i badc = _mm_shuffle_epi32(dcba, 0xB1);          /* lanes b a d c */
    __m128i efgh = _mm_shuffle_epi32(hgfe, 0x1B);          /* lanes h g f e */
    __m128i abef = _mm_alignr_epi8(badc, efgh, 8);         /* lanes f e b a */
    __m128i cdgh = _mm_blend_epi16(efgh, badc, 0xF0);      /* lanes h g d c */
    for (; n; n--, p += 64) {
        __m128i abef0 = abef, cdgh0 = cdgh, w[4];
        for (int q = 0; q < 16; q++) { /* four rounds a step */
            __m128i m;
            if (q < 4) m = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16 * q)), bswap);
            else {
                m = _mm_sha256msg1_epu32(w[q & 3], w[(q + 1) & 3]);             /* w[t-16] + s0(w[t-15]) */
                m = _mm_add_epi32(m, _mm_alignr_epi8(w[(q + 3) & 3], w[(q + 2) & 3], 4)); /* + w[t-7] */
                m = _mm_sha256msg2_epu32(m, w[(q + 3) & 3]);                      /* + s1(w[t-2]) */
            }
            w[q & 3] = m;
            __m128i k = _mm_add_epi32(m, _mm_loadu_si128((const __m128i *)(K256 + 4 * q)));
            cdgh = _mm_sha256rnds2_epu32(cdgh, abef, k);
            abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(k, 0x0E));
        }
        abef = _mm_add_epi32(abef, abef0);
        cdgh = _mm_add_epi32(cdgh, cdgh0);
    }
    __m128i feba = _mm_shuffle_epi32(abef, 0x1B);          /* lanes a b e f */
    __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);          /* lanes g h c d */
    _mm_storeu_si128((__m128i *)st, _mm_blend_epi16(feba, dchg, 0xF0));      /* a b c d */
    _mm_storeu_si128((__m128i *)(st + 4), _mm_alignr_epi8(dchg, feba, 8));   /* e f g h */
}

int xtts_sha256_blocks_shani(uint32_t st[8], const uint8_t *p, size_t n) {
    if (!xtts_cpu_has_sha()) return -1;
    sha256_blocks_shani(st, p, n);
    return 0;
}

static void sha256_blocks(uint32_t st[8], const uint8_t *p, size_t n) {
    static int have_sha = -1; /* a benign race: every thread computes the same answer */
    int h = __atomic_load_n(&have_sha, __ATOMIC_RELAXED);
    if (h < 0) {
        h = xtts_cpu_has_sha();
        __atomic_store_n(&have_sha, h, __ATOMIC_RELAXED);
    }
    if (h) sha256_blocks_shani(st, p, n);
    else xtts_sha256_blocks_portable(st, p, n);
}
#else
int xtts_sha256_blocks_shani(uint32_t st[8], const uint8_t *p, size_t n) {
    (void)st, (void)p, (void)n;
    return -1;
}
static void sha256_blocks(uint32_t st[8], const uint8_t *p, size_t n) { xtts_sha256_blocks_portable(st, p, n); }
#endif

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
        if (s->used == 64) { sha256_blocks(s->state, s->block, 1); s->used = 0; }
    }
    if (len >= 64) {
        sha256_blocks(s->state, p, len / 64);
        p += len / 64 * 64;
        len %= 64;
    }
    if (len) { memcpy(s->block, p, len); s->used = len; }
}

void xtts_sha256_final(xtts_sha256 *s, uint8_t out[32]) {
    uint64_t bits = s->bytes * 8;
    s->block[s->used++] = 0x80; /* used < 64 between calls */
    if (s->used > 56) {
        memset(s->block + s->used, 0, 64 - s->used);
        sha256_blocks(s->state, s->block, 1);
        s->used = 0;
    }
    memset(s->block + s->used, 0, 56 - s->used);
    xtts_put_be64(s->block + 56, bits);
    sha256_blocks(s->state, s->block, 1);
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
