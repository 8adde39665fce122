/* fuzz_common_parse.c — libFuzzer target for the small parsers and checksums of
 * common/xtts_common.c that see outside bytes: xtts_parse_long, xtts_parse_double,
 * xtts_lang_index, xtts_dtype_parse; and two differential checks: table-driven CRC-32
 * against the bitwise definition, and SHA-256 fed in two pieces against one piece.
 *
 * Input: byte 0 selects the bounds, the rest is the string (NUL-terminated copy). */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/xtts_common.h"
#include "formats/record.h"

static uint32_t crc32_bitwise(const uint8_t *p, size_t n) {
    uint32_t crc = 0xffffffffu;
    for (size_t i = 0; i < n; i++) {
        crc ^= p[i];
        for (int k = 0; k < 8; k++) crc = (crc & 1) ? (crc >> 1) ^ 0xEDB88320u : crc >> 1;
    }
    return ~crc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0 || size > 4096) return 0;
    static const long lbounds[][2] = {{0, 100}, {-10, 10}, {1, 1L << 40}, {-9223372036854775807L - 1, 9223372036854775807L}};
    static const double dbounds[][2] = {{0, 1}, {-1e9, 1e9}, {1e-9, 1e9}, {-1e308, 1e308}};
    unsigned sel = data[0] & 3;
    char *s = malloc(size);
    if (!s) return 0;
    memcpy(s, data + 1, size - 1);
    s[size - 1] = '\0';

    long lv = 12345;
    if (xtts_parse_long(s, lbounds[sel][0], lbounds[sel][1], &lv) == 0) {
        if (lv < lbounds[sel][0] || lv > lbounds[sel][1]) abort();
        if (s[0] == '\0' || s[0] == ' ') abort();
    } else if (lv != 12345) {
        abort(); /* a failed parse must not write */
    }
    double dv = 0.5;
    if (xtts_parse_double(s, dbounds[sel][0], dbounds[sel][1], &dv) == 0) {
        if (!isfinite(dv) || dv < dbounds[sel][0] || dv > dbounds[sel][1]) abort();
    } else if (dv != 0.5) {
        abort();
    }
    int li = xtts_lang_index(s);
    if (li < -1 || li >= XTTS_N_LANGS) abort();
    int dt = xtts_dtype_parse(s);
    if (dt != -1 && dt != XTTS_DTYPE_F16 && dt != XTTS_DTYPE_F32) abort();

    if (xtts_crc32(0, data, size) != crc32_bitwise(data, size)) abort();
    size_t cut = data[0] % size;
    if (xtts_crc32(xtts_crc32(0, data, cut), data + cut, size - cut) != xtts_crc32(0, data, size)) abort();

    uint8_t d1[32], d2[32];
    xtts_sha256 h;
    xtts_sha256_init(&h);
    xtts_sha256_update(&h, data, size);
    xtts_sha256_final(&h, d1);
    xtts_sha256_init(&h);
    xtts_sha256_update(&h, data, cut);
    xtts_sha256_update(&h, data + cut, size - cut);
    xtts_sha256_final(&h, d2);
    if (memcmp(d1, d2, 32) != 0) abort();

    free(s);
    return 0;
}
