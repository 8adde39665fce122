/* test_common.c — common/xtts_common.c against outside references: published CRC-32,
 * FNV-1a and SHA-256 (FIPS 180-2) test vectors, Python's hashlib for the block-boundary
 * lengths, the compiler's own _Float16 conversions for fp16 (exhaustively), and the
 * kernel for files and directories. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <dirent.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/xtts_common.h"
#include "common/xtts_common_internal.h"

#if defined(__FLT16_MAX__) && !defined(__clang__)
#define HAVE_FLOAT16 1
#endif

/* ---- helpers ------------------------------------------------------------------ */

static char tmpdir[256];

static int make_tmpdir(void **state) {
    (void)state;
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/test_common.XXXXXX", base && *base ? base : "/tmp");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static void rm_rf(const char *path) {
    struct stat st;
    if (lstat(path, &st) != 0) return;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        if (d) {
            struct dirent *e;
            while ((e = readdir(d))) {
                if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
                char sub[1024];
                snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
                rm_rf(sub);
            }
            closedir(d);
        }
        rmdir(path);
    } else {
        unlink(path);
    }
}

static int remove_tmpdir(void **state) {
    (void)state;
    rm_rf(tmpdir);
    return 0;
}

static void write_plain(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
    assert_int_equal(fclose(f), 0);
}

static char *slurp(const char *path) {
    char *buf = NULL;
    size_t len = 0;
    xtts_error err;
    assert_int_equal(xtts_read_file(path, 1 << 20, &buf, &len, &err), XTTS_OK);
    return buf;
}

static int count_entries_containing(const char *dir, const char *needle) {
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strstr(e->d_name, needle)) n++;
    closedir(d);
    return n;
}

/* ---- CRC-32 ---------------------------------------------------------------------- */

/* The definition, one bit at a time, to check the table-driven version against. */
static uint32_t crc32_bitwise(uint32_t crc, const uint8_t *p, size_t n) {
    crc = ~crc;
    for (size_t i = 0; i < n; i++) {
        crc ^= p[i];
        for (int k = 0; k < 8; k++) crc = (crc & 1) ? (crc >> 1) ^ 0xEDB88320u : crc >> 1;
    }
    return ~crc;
}

static void crc32_matches_published_check_values(void **state) {
    (void)state;
    assert_int_equal(xtts_crc32(0, "", 0), 0x00000000u);
    assert_int_equal(xtts_crc32(0, "123456789", 9), 0xCBF43926u);
    assert_int_equal(xtts_crc32(0, "a", 1), 0xE8B7BE43u);
    const char *fox = "The quick brown fox jumps over the lazy dog";
    assert_int_equal(xtts_crc32(0, fox, strlen(fox)), 0x414FA339u);
}

static void crc32_continues_across_split_points(void **state) {
    (void)state;
    uint8_t buf[300];
    for (size_t i = 0; i < sizeof buf; i++) buf[i] = (uint8_t)(i * 131 + 7);
    uint32_t whole = xtts_crc32(0, buf, sizeof buf);
    for (size_t cut = 0; cut <= sizeof buf; cut++)
        assert_int_equal(xtts_crc32(xtts_crc32(0, buf, cut), buf + cut, sizeof buf - cut), whole);
}

static void crc32_equals_bitwise_definition_for_every_length_and_alignment(void **state) {
    (void)state;
    uint8_t buf[96];
    for (size_t i = 0; i < sizeof buf; i++) buf[i] = (uint8_t)(i * 37 + 11);
    for (size_t off = 0; off < 8; off++)
        for (size_t n = 0; n + off <= sizeof buf; n++)
            assert_int_equal(xtts_crc32(0, buf + off, n), crc32_bitwise(0, buf + off, n));
}

/* The folding path (PCLMULQDQ where built in) against the table path and the bitwise
 * definition: random lengths across the 16- and 64-byte fold boundaries, every start
 * alignment mod 64, and continued CRCs. */
static void crc32_folding_equals_table_version_on_random_lengths_and_alignments(void **state) {
    (void)state;
    enum { CAP = 24 * 1024 };
    uint8_t *buf = malloc(CAP + 64);
    assert_non_null(buf);
    uint64_t s = 0x9e3779b97f4a7c15ULL;
    for (size_t i = 0; i < CAP + 64; i++) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        buf[i] = (uint8_t)(s >> 56);
    }
    for (int k = 0; k < 4000; k++) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        size_t off = (size_t)(s >> 58);                                /* 0..63 */
        size_t n = k < 2000 ? (size_t)(s >> 20) % 400 : (size_t)(s >> 20) % CAP;
        uint32_t init = k % 3 ? (uint32_t)(s >> 8) : 0;
        uint32_t want = xtts_crc32_table(init, buf + off, n);
        assert_int_equal(xtts_crc32(init, buf + off, n), want);
        if (n < 400) assert_int_equal(crc32_bitwise(init, buf + off, n), want);
    }
    for (size_t n = 0; n <= 300; n++) /* every length near the fold sizes, odd start */
        assert_int_equal(xtts_crc32(0x12345678u, buf + 3, n), crc32_bitwise(0x12345678u, buf + 3, n));
    free(buf);
}

/* ---- FNV-1a ------------------------------------------------------------------------ */

static void fnv1a64_matches_published_vectors(void **state) {
    (void)state;
    assert_true(xtts_fnv1a64(XTTS_FNV64_INIT, "", 0) == 0xcbf29ce484222325ULL);
    assert_true(xtts_fnv1a64(XTTS_FNV64_INIT, "a", 1) == 0xaf63dc4c8601ec8cULL);
    assert_true(xtts_fnv1a64(XTTS_FNV64_INIT, "foobar", 6) == 0x85944171f73967e8ULL);
}

/* ---- SHA-256 ------------------------------------------------------------------------ */

static void sha256_hex_of(const void *data, size_t len, char out[65]) {
    xtts_sha256 s;
    uint8_t d[32];
    xtts_sha256_init(&s);
    xtts_sha256_update(&s, data, len);
    xtts_sha256_final(&s, d);
    xtts_hex(d, 32, out);
}

static void sha256_matches_fips_180_vectors(void **state) {
    (void)state;
    char hex[65];
    sha256_hex_of("", 0, hex);
    assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    sha256_hex_of("abc", 3, hex);
    assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *m448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    sha256_hex_of(m448, strlen(m448), hex);
    assert_string_equal(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    const char *m896 = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";
    sha256_hex_of(m896, strlen(m896), hex);
    assert_string_equal(hex, "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}

/* The SHA extensions' path equals the portable code on random states and blocks, one block
 * to many at a time (the portable code is the one the vectors above pin down on CPUs without
 * them; on CPUs with them the vectors run the SHA-NI path). */
static void sha256_shani_equals_portable(void **state) {
    (void)state;
    uint32_t a[8] = {0}, b[8] = {0};
    if (xtts_sha256_blocks_shani(a, NULL, 0) != 0) {
        print_message("sha256_shani_equals_portable: this CPU has no SHA extensions (portable code only)\n");
        return;
    }
    static uint8_t data[64 * 40];
    uint64_t x = 0x9e3779b97f4a7c15ULL;
    for (int round = 0; round < 200; round++) {
        for (size_t i = 0; i < sizeof data; i++) data[i] = (uint8_t)((x = x * 6364136223846793005ULL + 1442695040888963407ULL) >> 56);
        for (int i = 0; i < 8; i++) a[i] = b[i] = (uint32_t)((x = x * 6364136223846793005ULL + 1) >> 32);
        size_t n = (size_t)round % 40 + 1;
        xtts_sha256_blocks_portable(a, data, n);
        assert_int_equal(xtts_sha256_blocks_shani(b, data, n), 0);
        assert_memory_equal(a, b, sizeof a);
    }
}

static void sha256_of_a_million_a_in_odd_chunks(void **state) {
    (void)state;
    static uint8_t a[1000];
    memset(a, 'a', sizeof a);
    xtts_sha256 s;
    xtts_sha256_init(&s);
    size_t done = 0, step = 1;
    while (done < 1000000) {
        size_t n = step < 1000000 - done ? step : 1000000 - done;
        if (n > sizeof a) n = sizeof a;
        xtts_sha256_update(&s, a, n);
        done += n;
        step = step * 7 % 997 + 1; /* 1..997 bytes, crossing block edges everywhere */
    }
    uint8_t d[32];
    char hex[65];
    xtts_sha256_final(&s, d);
    xtts_hex(d, 32, hex);
    assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

/* Lengths around the 55/56/64-byte padding edges. Expected values from Python:
 *   hashlib.sha256(bytes((i*7+3)&255 for i in range(n))).hexdigest() */
static void sha256_block_boundary_lengths_match_hashlib(void **state) {
    (void)state;
    static const struct { size_t n; const char *hex; } v[] = {
        {55, "e7313d333c272e639f790978283f9eb392e843d0f29b7016828bb1daa4aac70b"},
        {56, "4324d65f3c103567f5589c710bc08f8523f929a9272e3af36fc968e52abc6c27"},
        {63, "81c80242132f230c3bd41b3e63bbcff16107339549214a99614ff26664625055"},
        {64, "39e3d7b6b5d075d37d053ad89b24b41bef4f3c29760c84447cab3f3be1882241"},
        {65, "aacca6ff74fdbb296d165a45cecfa04e5127bc008770fbbdd48006f2d2fae95e"},
        {119, "9ce7368e4daf32341631b492e80359dc9f594b48453cd0dd5bf0b19279cc177e"},
        {120, "7836b787757e95e58b3ca5aec90b1b004e8deba1e50e9675af9cabf1a13a04b5"},
        {127, "a8d23e75d936f303d248888d9b165ee543f4cbafcad3c9dd2a79bd84faa11d07"},
        {128, "d2742f1f4ac6bb7ca2b239ee18402ba8b3f9f8e652d2a72973c2b9ba11c08cf6"},
    };
    uint8_t buf[128];
    for (size_t i = 0; i < sizeof buf; i++) buf[i] = (uint8_t)((i * 7 + 3) & 255);
    for (size_t k = 0; k < sizeof v / sizeof v[0]; k++) {
        char hex[65];
        sha256_hex_of(buf, v[k].n, hex);
        assert_string_equal(hex, v[k].hex);
        /* byte-at-a-time gives the same digest */
        xtts_sha256 s;
        uint8_t d[32];
        xtts_sha256_init(&s);
        for (size_t i = 0; i < v[k].n; i++) xtts_sha256_update(&s, buf + i, 1);
        xtts_sha256_final(&s, d);
        xtts_hex(d, 32, hex);
        assert_string_equal(hex, v[k].hex);
    }
}

static void sha256_file_hashes_contents_and_reports_missing_file(void **state) {
    (void)state;
    char path[512], hex[65];
    snprintf(path, sizeof path, "%s/abc.txt", tmpdir);
    write_plain(path, "abc");
    xtts_error err;
    xtts_error_clear(&err);
    assert_int_equal(xtts_sha256_file(path, hex, &err), XTTS_OK);
    assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    snprintf(path, sizeof path, "%s/does-not-exist", tmpdir);
    assert_int_equal(xtts_sha256_file(path, hex, &err), XTTS_EIO);
    assert_non_null(strstr(err.msg, "does-not-exist"));
}

static void hex_writes_lowercase_and_terminates(void **state) {
    (void)state;
    const uint8_t b[4] = {0x00, 0x9f, 0xAB, 0xff};
    char out[9];
    memset(out, 'x', sizeof out);
    xtts_hex(b, 4, out);
    assert_string_equal(out, "009fabff");
}

/* ---- fp16 ---------------------------------------------------------------------------- */

static int f16_is_nan(uint16_t h) { return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu); }

static void f16_round_trip_is_exact_for_all_65536_halves(void **state) {
    (void)state;
    for (uint32_t h = 0; h < 65536; h++) {
        float f = xtts_f16_to_f32((uint16_t)h);
        uint16_t back = xtts_f32_to_f16(f);
        if (f16_is_nan((uint16_t)h)) {
            assert_true(isnan(f));
            assert_true(f16_is_nan(back));
            assert_int_equal(back & 0x8000u, h & 0x8000u); /* sign kept */
        } else {
            assert_int_equal(back, h);
        }
    }
}

static void f16_to_f32_matches_compiler_float16_for_all_halves(void **state) {
    (void)state;
#ifdef HAVE_FLOAT16
    for (uint32_t h = 0; h < 65536; h++) {
        uint16_t bits = (uint16_t)h;
        _Float16 hf;
        memcpy(&hf, &bits, 2);
        float ref = (float)hf, got = xtts_f16_to_f32(bits);
        if (isnan(ref)) {
            assert_true(isnan(got));
        } else {
            uint32_t a, b;
            memcpy(&a, &ref, 4);
            memcpy(&b, &got, 4);
            assert_int_equal(a, b); /* bit-exact, including -0 */
        }
    }
#else
    skip();
#endif
}

static uint16_t ref_f32_to_f16(float f) {
#ifdef HAVE_FLOAT16
    _Float16 hf = (_Float16)f;
    uint16_t bits;
    memcpy(&bits, &hf, 2);
    return bits;
#else
    (void)f;
    return 0;
#endif
}

/* Every tie between neighbouring halves rounds to the even one; one float ulp either side
 * rounds to the nearer one. Covers subnormals, the normal range and the overflow edge. */
static void f32_to_f16_rounds_ties_to_even_between_every_pair_of_halves(void **state) {
    (void)state;
    for (uint32_t h = 0; h < 0x7bffu; h++) { /* pairs (h, h+1), both finite */
        for (int sign = 0; sign < 2; sign++) {
            uint16_t s = sign ? 0x8000u : 0;
            float lo = xtts_f16_to_f32((uint16_t)(h | s)), hi = xtts_f16_to_f32((uint16_t)((h + 1) | s));
            float mid = (lo + hi) / 2; /* exact: halves have 11 significant bits */
            uint16_t even = (h & 1) ? (uint16_t)(h + 1) : (uint16_t)h;
            assert_int_equal(xtts_f32_to_f16(mid), even | s);
            assert_int_equal(xtts_f32_to_f16(nextafterf(mid, lo)), h | s);
            assert_int_equal(xtts_f32_to_f16(nextafterf(mid, hi)), (h + 1) | s);
        }
    }
}

static void f32_to_f16_handles_overflow_underflow_inf_and_nan(void **state) {
    (void)state;
    assert_int_equal(xtts_f32_to_f16(65504.0f), 0x7bff);
    assert_int_equal(xtts_f32_to_f16(nextafterf(65520.0f, 0)), 0x7bff); /* just below the tie */
    assert_int_equal(xtts_f32_to_f16(65520.0f), 0x7c00);                 /* tie rounds to even = Inf */
    assert_int_equal(xtts_f32_to_f16(1e10f), 0x7c00);
    assert_int_equal(xtts_f32_to_f16(-1e10f), 0xfc00);
    assert_int_equal(xtts_f32_to_f16(INFINITY), 0x7c00);
    assert_int_equal(xtts_f32_to_f16(-INFINITY), 0xfc00);
    assert_true(f16_is_nan(xtts_f32_to_f16(NAN)));
    assert_int_equal(xtts_f32_to_f16(-NAN) & 0x8000u, 0x8000u);
    assert_int_equal(xtts_f32_to_f16(0.0f), 0x0000);
    assert_int_equal(xtts_f32_to_f16(-0.0f), 0x8000);
    const float tiny = ldexpf(1.0f, -25); /* half of the smallest subnormal */
    assert_int_equal(xtts_f32_to_f16(tiny), 0x0000);                   /* tie to even (0) */
    assert_int_equal(xtts_f32_to_f16(nextafterf(tiny, 1.0f)), 0x0001);
    assert_int_equal(xtts_f32_to_f16(1e-30f), 0x0000);
    assert_int_equal(xtts_f32_to_f16(-1e-30f), 0x8000);
    assert_int_equal(xtts_f32_to_f16(ldexpf(1.0f, -14)), 0x0400); /* smallest normal */
    assert_int_equal(xtts_f32_to_f16(1.0f), 0x3c00);
    assert_int_equal(xtts_f32_to_f16(-2.0f), 0xc000);
    assert_int_equal(xtts_f32_to_f16(logf(1e-5f)), 0xc9c2); /* the xtts preset's log floor, -11.5129 (numpy: 0xc9c2) */
}

static void f32_to_f16_matches_compiler_float16_on_a_sweep_of_floats(void **state) {
    (void)state;
#ifdef HAVE_FLOAT16
    /* ~4.2 million float bit patterns spread over the whole range, both signs */
    for (uint64_t u = 0; u <= 0xffffffffull; u += 1021) {
        uint32_t bits = (uint32_t)u;
        float f;
        memcpy(&f, &bits, 4);
        uint16_t ref = ref_f32_to_f16(f), got = xtts_f32_to_f16(f);
        if (isnan(f)) {
            assert_true(f16_is_nan(got));
            assert_int_equal(got & 0x8000u, ref & 0x8000u);
        } else if (got != ref) {
            fail_msg("f32 0x%08x (%g): got 0x%04x, _Float16 gives 0x%04x", bits, (double)f, got, ref);
        }
    }
#else
    (void)ref_f32_to_f16;
    skip();
#endif
}

/* ---- files ------------------------------------------------------------------------ */

static void atomic_write_creates_and_replaces_file(void **state) {
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/out.json", tmpdir);
    xtts_error err;
    assert_int_equal(xtts_write_file_atomic(path, "first", 5, &err), XTTS_OK);
    char *got = slurp(path);
    assert_string_equal(got, "first");
    free(got);
    assert_int_equal(xtts_write_file_atomic(path, "second version", 14, &err), XTTS_OK);
    got = slurp(path);
    assert_string_equal(got, "second version");
    free(got);
    assert_int_equal(count_entries_containing(tmpdir, ".tmp."), 0);
}

/* A write that fails half way (file-size limit, like a full disk) leaves the old file as it
 * was and no temporary file behind. Works as root, unlike a read-only directory. */
static void atomic_write_failure_leaves_old_file_and_no_temp(void **state) {
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/manifest.json", tmpdir);
    write_plain(path, "old contents");
    size_t big = 1 << 16;
    char *data = malloc(big);
    assert_non_null(data);
    memset(data, 'n', big);

    struct rlimit old;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
    void (*prev)(int) = signal(SIGXFSZ, SIG_IGN);
    struct rlimit lim = old;
    lim.rlim_cur = 4096;
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
    xtts_error err;
    xtts_error_clear(&err);
    xtts_status st = xtts_write_file_atomic(path, data, big, &err);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
    signal(SIGXFSZ, prev);
    free(data);

    assert_int_equal(st, XTTS_EIO);
    assert_int_equal(err.code, XTTS_EIO);
    assert_non_null(strstr(err.msg, "manifest.json"));
    char *got = slurp(path);
    assert_string_equal(got, "old contents");
    free(got);
    assert_int_equal(count_entries_containing(tmpdir, ".tmp."), 0);
}

static void atomic_write_into_missing_directory_fails_cleanly(void **state) {
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/no/such/dir/file", tmpdir);
    xtts_error err;
    assert_int_equal(xtts_write_file_atomic(path, "x", 1, &err), XTTS_EIO);
    assert_non_null(strstr(err.msg, "no/such/dir"));
}

static void read_file_returns_terminated_contents_and_limits_size(void **state) {
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/r.txt", tmpdir);
    /* larger than the first 64 KiB buffer, so the growth path runs */
    size_t n = 200000;
    char *data = malloc(n + 1);
    assert_non_null(data);
    for (size_t i = 0; i < n; i++) data[i] = (char)('a' + i % 26);
    data[n] = '\0';
    write_plain(path, data);
    char *buf = NULL;
    size_t len = 0;
    xtts_error err;
    assert_int_equal(xtts_read_file(path, n, &buf, &len, &err), XTTS_OK);
    assert_int_equal(len, n);
    assert_int_equal(buf[n], '\0');
    assert_memory_equal(buf, data, n);
    free(buf);
    assert_int_equal(xtts_read_file(path, n - 1, &buf, &len, &err), XTTS_ERANGE);
    assert_null(buf);
    free(data);
    /* limits below the first read buffer's size hold too */
    assert_int_equal(xtts_read_file(path, 5, &buf, &len, &err), XTTS_ERANGE);
    assert_null(buf);
    snprintf(path, sizeof path, "%s/small.txt", tmpdir);
    write_plain(path, "hello");
    assert_int_equal(xtts_read_file(path, 5, &buf, &len, &err), XTTS_OK);
    assert_string_equal(buf, "hello");
    free(buf);
    snprintf(path, sizeof path, "%s/missing.txt", tmpdir);
    assert_int_equal(xtts_read_file(path, 100, &buf, &len, &err), XTTS_ENOTFOUND);
    assert_null(buf);
    assert_non_null(strstr(err.msg, "missing.txt"));
}

static void read_file_of_empty_file_gives_empty_string(void **state) {
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/empty", tmpdir);
    write_plain(path, "");
    char *buf = NULL;
    size_t len = 7;
    xtts_error err;
    assert_int_equal(xtts_read_file(path, 10, &buf, &len, &err), XTTS_OK);
    assert_int_equal(len, 0);
    assert_string_equal(buf, "");
    free(buf);
}

static void mkdir_p_creates_nested_directories_and_is_idempotent(void **state) {
    (void)state;
    char path[512];
    xtts_error err;
    struct stat st;
    snprintf(path, sizeof path, "%s/a/b/c/d", tmpdir);
    assert_int_equal(xtts_mkdir_p(path, &err), XTTS_OK);
    assert_int_equal(stat(path, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    assert_int_equal(xtts_mkdir_p(path, &err), XTTS_OK);
    snprintf(path, sizeof path, "%s/a/b/e/", tmpdir); /* trailing slash */
    assert_int_equal(xtts_mkdir_p(path, &err), XTTS_OK);
    assert_int_equal(stat(path, &st), 0);
    snprintf(path, sizeof path, "%s//a//x", tmpdir); /* doubled slashes */
    assert_int_equal(xtts_mkdir_p(path, &err), XTTS_OK);
    assert_int_equal(xtts_mkdir_p("/", &err), XTTS_OK);
}

static void path_join_puts_one_slash_between_dir_and_name(void **state) {
    (void)state;
    char out[64];
    assert_int_equal(xtts_path_join(out, sizeof out, "ckpt", "train.ckpt"), 15);
    assert_string_equal(out, "ckpt/train.ckpt");
    xtts_path_join(out, sizeof out, "ckpt/", "train.ckpt");
    assert_string_equal(out, "ckpt/train.ckpt");
    xtts_path_join(out, sizeof out, "a/b///", "manifest.json");
    assert_string_equal(out, "a/b/manifest.json");
    xtts_path_join(out, sizeof out, "/", "x");
    assert_string_equal(out, "/x");
    xtts_path_join(out, sizeof out, "", "x");
    assert_string_equal(out, "x");
    /* cut: the length it needed, the output terminated */
    char small[8];
    assert_int_equal(xtts_path_join(small, sizeof small, "cache/", "manifest.json"), 19);
    assert_string_equal(small, "cache/m");
}

static void mkdir_p_through_a_regular_file_fails_with_its_name(void **state) {
    (void)state;
    char file[512], path[600];
    snprintf(file, sizeof file, "%s/plainfile", tmpdir);
    write_plain(file, "x");
    xtts_error err;
    snprintf(path, sizeof path, "%s/sub", file);
    assert_int_equal(xtts_mkdir_p(path, &err), XTTS_EIO);
    assert_non_null(strstr(err.msg, "plainfile"));
    assert_int_equal(xtts_mkdir_p(file, &err), XTTS_EIO); /* exists, but not a directory */
    assert_int_equal(xtts_mkdir_p("", &err), XTTS_ERANGE);
}

/* ---- parsing ---------------------------------------------------------------------- */

static void parse_long_accepts_whole_numbers_in_range(void **state) {
    (void)state;
    long v = 0;
    assert_int_equal(xtts_parse_long("42", 0, 100, &v), 0);
    assert_int_equal(v, 42);
    assert_int_equal(xtts_parse_long("-7", -10, 10, &v), 0);
    assert_int_equal(v, -7);
    assert_int_equal(xtts_parse_long("0", 0, 0, &v), 0);
    assert_int_equal(xtts_parse_long("100", 0, 100, &v), 0); /* bounds inclusive */
    assert_int_equal(v, 100);
    assert_int_equal(xtts_parse_long("9223372036854775807", 0, 9223372036854775807L, &v), 0);
    assert_true(v == 9223372036854775807L);
}

static void parse_long_rejects_junk_and_leaves_output_untouched(void **state) {
    (void)state;
    static const char *bad[] = {"", " ", "4x", "x4", "4 ", " 4", "\t4", "1.5", "0x10", "--1", "+",
                                "-", "101", "-11", "99999999999999999999", "1e3", "4\n"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        long v = 12345;
        if (xtts_parse_long(bad[i], -10, 100, &v) == 0) fail_msg("parse_long accepted '%s'", bad[i]);
        assert_int_equal(v, 12345);
    }
    long v = 1;
    assert_int_not_equal(xtts_parse_long(NULL, 0, 10, &v), 0);
}

static void parse_double_accepts_finite_numbers_in_range(void **state) {
    (void)state;
    double v = 0;
    assert_int_equal(xtts_parse_double("0.25", 0, 1, &v), 0);
    assert_true(v == 0.25);
    assert_int_equal(xtts_parse_double("-1e-3", -1, 1, &v), 0);
    assert_true(v == -1e-3);
    assert_int_equal(xtts_parse_double("1", 0, 1, &v), 0);
    assert_true(v == 1.0);
    assert_int_equal(xtts_parse_double("8000", 0, 24000, &v), 0);
    assert_true(v == 8000.0);
}

static void parse_double_rejects_junk_nan_inf_and_out_of_range(void **state) {
    (void)state;
    static const char *bad[] = {"", " ", "nan", "NaN", "inf", "-inf", "infinity", "1e400", "0.5x",
                                " 0.5", "0.5 ", "1.5", "-0.1", ".", "e5", "0,5"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        double v = 7.0;
        if (xtts_parse_double(bad[i], 0, 1, &v) == 0) fail_msg("parse_double accepted '%s'", bad[i]);
        assert_true(v == 7.0);
    }
    double v;
    assert_int_not_equal(xtts_parse_double(NULL, 0, 1, &v), 0);
}

/* ---- errors, languages, byte order ---------------------------------------------------- */

static void error_set_formats_one_line_and_returns_code(void **state) {
    (void)state;
    xtts_error err;
    assert_int_equal(xtts_error_set(&err, XTTS_EINPUT, "%s:%d: bad\nfield\r%s", "meta.csv", 12, "x"), XTTS_EINPUT);
    assert_int_equal(err.code, XTTS_EINPUT);
    assert_string_equal(err.msg, "meta.csv:12: bad field x");
    assert_int_equal(xtts_error_set(NULL, XTTS_EIO, "ignored"), XTTS_EIO);
    char longs[2000];
    memset(longs, 'z', sizeof longs - 1);
    longs[sizeof longs - 1] = '\0';
    xtts_error_set(&err, XTTS_ERANGE, "%s", longs);
    assert_int_equal(strlen(err.msg), XTTS_ERRMSG_MAX - 1);
    xtts_error_clear(&err);
    assert_int_equal(err.code, XTTS_OK);
    assert_string_equal(err.msg, "");
}

static void every_status_has_a_message_and_an_exit_code(void **state) {
    (void)state;
    for (int c = XTTS_OK; c <= XTTS_EUNSUPPORTED; c++) {
        const char *m = xtts_strerror((xtts_status)c);
        assert_non_null(m);
        assert_true(strlen(m) > 0);
        assert_string_not_equal(m, "unknown error");
    }
    assert_string_equal(xtts_strerror((xtts_status)999), "unknown error");
    assert_int_equal(xtts_exit_code(XTTS_OK), 0);
    assert_int_equal(xtts_exit_code(XTTS_EUSAGE), 1);
    assert_int_equal(xtts_exit_code(XTTS_EINPUT), 2);
    assert_int_equal(xtts_exit_code(XTTS_ECORRUPT), 2);
}

static void lang_index_follows_xtts_order_and_aliases_zh(void **state) {
    (void)state;
    assert_int_equal(xtts_lang_index("en"), 0);
    assert_int_equal(xtts_lang_index("hi"), 16);
    assert_int_equal(xtts_lang_index("zh-cn"), 12);
    assert_int_equal(xtts_lang_index("ZH-CN"), 12);
    assert_int_equal(xtts_lang_index("zh"), 12);
    assert_int_equal(xtts_lang_index("xx"), -1);
    assert_int_equal(xtts_lang_index(""), -1);
    assert_int_equal(xtts_lang_index(NULL), -1);
    for (int i = 0; i < XTTS_N_LANGS; i++) assert_int_equal(xtts_lang_index(xtts_lang_codes[i]), i);
}

static void byte_order_helpers_round_trip(void **state) {
    (void)state;
    uint8_t b[8];
    xtts_put_be64(b, 0x0102030405060708ULL);
    assert_int_equal(b[0], 1);
    assert_int_equal(b[7], 8);
    assert_true(xtts_get_be64(b) == 0x0102030405060708ULL);
    xtts_put_le32(b, 0xA1B2C3D4u);
    assert_int_equal(b[0], 0xD4);
    assert_int_equal(xtts_get_le32(b), 0xA1B2C3D4u);
    xtts_put_le16(b, 0xBEEF);
    assert_int_equal(b[0], 0xEF);
    assert_int_equal(xtts_get_le16(b), 0xBEEF);
}

/* The array conversions (vectorized with F16C) agree bit for bit with the scalar ones. */
static void fp16_array_conversions_equal_scalar_ones(void **state) {
    (void)state;
    enum { N = 65536 };
    uint16_t *h = malloc(N * sizeof *h), *h2 = malloc(N * sizeof *h2);
    float *f = malloc(N * sizeof *f);
    assert_non_null(h); assert_non_null(h2); assert_non_null(f);
    for (uint32_t i = 0; i < N; i++) h[i] = (uint16_t)i;
    xtts_f16_to_f32_n(h, f, N);
    for (uint32_t i = 0; i < N; i++) {
        float ref = xtts_f16_to_f32(h[i]);
        if (isnan(ref)) assert_true(isnan(f[i]));
        else assert_memory_equal(&ref, &f[i], 4);
    }
    uint32_t seed = 7;
    for (uint32_t i = 0; i < N; i++) {
        seed = seed * 1664525u + 1013904223u;
        uint32_t bits = seed;
        if ((bits & 0x7f800000u) == 0x7f800000u) bits &= ~0x00400000u, bits ^= 0x01000000u; /* no NaN */
        memcpy(&f[i], &bits, 4);
    }
    xtts_f32_to_f16_n(f, h2, N);
    for (uint32_t i = 0; i < N; i++) assert_int_equal(h2[i], xtts_f32_to_f16(f[i]));
    free(h); free(h2); free(f);
}

/* The shared set of id hashes: adds report new vs present, membership survives every
 * doubling, ids that differ by one byte hash apart, and 0 is never an id hash. */
static void hash_set_adds_finds_and_grows(void **state) {
    (void)state;
    xtts_hash_set s = {0};
    assert_false(xtts_hash_set_has(&s, 42));
    char id[32];
    for (int i = 0; i < 5000; i++) {
        snprintf(id, sizeof id, "utt-%05d", i);
        uint64_t h = xtts_id_hash(id, strlen(id));
        assert_true(h != 0);
        assert_int_equal(xtts_hash_set_add(&s, h), 1);
        assert_int_equal(xtts_hash_set_add(&s, h), 0);
    }
    assert_int_equal(s.used, 5000);
    assert_true(s.cap >= 10000);
    for (int i = 0; i < 5000; i++) {
        snprintf(id, sizeof id, "utt-%05d", i);
        assert_true(xtts_hash_set_has(&s, xtts_id_hash(id, strlen(id))));
        snprintf(id, sizeof id, "utt-%05d", i + 5000);
        assert_false(xtts_hash_set_has(&s, xtts_id_hash(id, strlen(id))));
    }
    xtts_hash_set_free(&s);
    assert_null(s.slots);
    assert_int_equal(xtts_id_hash("", 0) != 0, 1);
}

/* The filter never forgets an id, and its false positives stay at the rate its bits allow:
 * with 2,000,000 ids in 2^27 bits and 4 probes, about 11 in 1,000,000 others. */
static void id_filter_keeps_every_id_and_few_false_positives(void **state) {
    (void)state;
    xtts_id_filter f = {0};
    assert_false(xtts_id_filter_maybe(&f, 42));
    assert_null(f.bits);
    char id[32];
    const int n = 2000000;
    int fp_add = 0;
    for (int i = 0; i < n; i++) {
        snprintf(id, sizeof id, "utt-%08d", i);
        fp_add += xtts_id_filter_add(&f, xtts_id_hash(id, strlen(id))); /* 1: "maybe added before" */
    }
    assert_true(fp_add <= 40); /* each was new: a 1 was a false positive */
    assert_int_equal(xtts_id_filter_add(&f, xtts_id_hash("utt-00000007", 12)), 1);
    for (int i = 0; i < n; i += 7) {
        snprintf(id, sizeof id, "utt-%08d", i);
        assert_true(xtts_id_filter_maybe(&f, xtts_id_hash(id, strlen(id))));
    }
    int fp = 0;
    for (int i = 0; i < 1000000; i++) {
        snprintf(id, sizeof id, "other/%d", i);
        fp += xtts_id_filter_maybe(&f, xtts_id_hash(id, strlen(id)));
    }
    assert_true(fp <= 40);
    xtts_id_filter_free(&f);
    assert_null(f.bits);
}

/* xtts_renew: kept while big enough, replaced (rounded up) when not, NULL and cap 0 when the
 * size cannot be had. */
static void renew_keeps_a_big_enough_buffer_and_replaces_a_small_one(void **state) {
    (void)state;
    size_t cap = 0;
    float *p = xtts_renew(NULL, &cap, 10, sizeof *p);
    assert_non_null(p);
    assert_true(cap >= 10);
    p[cap - 1] = 1.0f;
    size_t first = cap;
    assert_ptr_equal(xtts_renew(p, &cap, first, sizeof *p), p);
    assert_int_equal(cap, first);
    p = xtts_renew(p, &cap, first + 1, sizeof *p);
    assert_non_null(p);
    assert_true(cap > first);
    p[cap - 1] = 2.0f;
    assert_null(p = xtts_renew(p, &cap, SIZE_MAX / 2, sizeof *p));
    assert_int_equal(cap, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(renew_keeps_a_big_enough_buffer_and_replaces_a_small_one),
        cmocka_unit_test(fp16_array_conversions_equal_scalar_ones),
        cmocka_unit_test(hash_set_adds_finds_and_grows),
        cmocka_unit_test(id_filter_keeps_every_id_and_few_false_positives),
        cmocka_unit_test(crc32_matches_published_check_values),
        cmocka_unit_test(crc32_continues_across_split_points),
        cmocka_unit_test(crc32_folding_equals_table_version_on_random_lengths_and_alignments),
        cmocka_unit_test(crc32_equals_bitwise_definition_for_every_length_and_alignment),
        cmocka_unit_test(fnv1a64_matches_published_vectors),
        cmocka_unit_test(sha256_matches_fips_180_vectors),
        cmocka_unit_test(sha256_of_a_million_a_in_odd_chunks),
        cmocka_unit_test(sha256_shani_equals_portable),
        cmocka_unit_test(sha256_block_boundary_lengths_match_hashlib),
        cmocka_unit_test(sha256_file_hashes_contents_and_reports_missing_file),
        cmocka_unit_test(hex_writes_lowercase_and_terminates),
        cmocka_unit_test(f16_round_trip_is_exact_for_all_65536_halves),
        cmocka_unit_test(f16_to_f32_matches_compiler_float16_for_all_halves),
        cmocka_unit_test(f32_to_f16_rounds_ties_to_even_between_every_pair_of_halves),
        cmocka_unit_test(f32_to_f16_handles_overflow_underflow_inf_and_nan),
        cmocka_unit_test(f32_to_f16_matches_compiler_float16_on_a_sweep_of_floats),
        cmocka_unit_test(atomic_write_creates_and_replaces_file),
        cmocka_unit_test(atomic_write_failure_leaves_old_file_and_no_temp),
        cmocka_unit_test(atomic_write_into_missing_directory_fails_cleanly),
        cmocka_unit_test(read_file_returns_terminated_contents_and_limits_size),
        cmocka_unit_test(read_file_of_empty_file_gives_empty_string),
        cmocka_unit_test(mkdir_p_creates_nested_directories_and_is_idempotent),
        cmocka_unit_test(mkdir_p_through_a_regular_file_fails_with_its_name),
        cmocka_unit_test(path_join_puts_one_slash_between_dir_and_name),
        cmocka_unit_test(parse_long_accepts_whole_numbers_in_range),
        cmocka_unit_test(parse_long_rejects_junk_and_leaves_output_untouched),
        cmocka_unit_test(parse_double_accepts_finite_numbers_in_range),
        cmocka_unit_test(parse_double_rejects_junk_nan_inf_and_out_of_range),
        cmocka_unit_test(error_set_formats_one_line_and_returns_code),
        cmocka_unit_test(every_status_has_a_message_and_an_exit_code),
        cmocka_unit_test(lang_index_follows_xtts_order_and_aliases_zh),
        cmocka_unit_test(byte_order_helpers_round_trip),
    };
    return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}
