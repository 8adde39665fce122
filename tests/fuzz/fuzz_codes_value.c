/* fuzz_codes_value.c — libFuzzer target: a stored value of an audio codes directory
 * (cache/store/read/codes_read.h, xtts_codes_value_decode), the bytes the codes readers take
 * from LMDB. Input: 32 bytes of content key, 2 bytes of num_tokens, then the value. Whatever
 * the input: no read or write outside the buffers; an accepted value holds its count of codes,
 * each below num_tokens, and its CRC; a too-small buffer is XTTS_ERANGE with the count said. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cache/store/read/codes_read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < XTTS_CODES_KEY_BYTES + 2) return 0;
    const uint8_t *key = data;
    uint32_t num_tokens = 1u + xtts_get_le16(data + XTTS_CODES_KEY_BYTES);
    const uint8_t *val = data + XTTS_CODES_KEY_BYTES + 2;
    size_t len = size - XTTS_CODES_KEY_BYTES - 2;
    /* the value copied to a buffer of its own size, so that any overread is caught */
    uint8_t *v = malloc(len ? len : 1);
    uint16_t *codes = malloc((len / 2 + 1) * sizeof *codes);
    if (!v || !codes) abort();
    memcpy(v, val, len);
    size_t n = 0, cap = len / 2;
    xtts_error err;
    xtts_status st = xtts_codes_value_decode("fuzz", num_tokens, key, v, len, codes, cap, &n, &err);
    if (st == XTTS_OK) {
        if (len != XTTS_CODES_VALUE_HEAD + 2 * n || n == 0) abort();
        for (size_t i = 0; i < n; i++)
            if (codes[i] >= num_tokens) abort();
        if (xtts_codes_entry_crc(key, v, v + XTTS_CODES_VALUE_HEAD, 2 * n) != xtts_get_le32(v + 4)) abort();
        if (n > 0) { /* one code less of room: XTTS_ERANGE, the count said */
            size_t m = 0;
            if (xtts_codes_value_decode("fuzz", num_tokens, key, v, len, codes, n - 1, &m, &err) != XTTS_ERANGE ||
                m != n)
                abort();
        }
    } else if (st != XTTS_ECORRUPT || !err.msg[0]) {
        abort();
    }
    free(v);
    free(codes);
    return 0;
}
