/* romanize_internal.h — the per-language romanizers behind xtts_romanize (romanize.h), and the
 * UTF-8 decoding they share. Internal to prep/romanize*.c. */
#ifndef XTTS_ROMANIZE_INT_H
#define XTTS_ROMANIZE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "common/strbuf.h"

/* Decode one code point at s[i..n); sets *adv to the bytes used (>= 1). A malformed or
 * truncated sequence decodes as one byte with the value 0xFFFD, so nothing is ever dropped
 * silently: the caller copies the original bytes through. */
static inline uint32_t xtts_rz_utf8(const unsigned char *s, size_t i, size_t n, size_t *adv) {
    unsigned c = s[i];
    *adv = 1;
    if (c < 0x80) return c;
    int k = c >= 0xF0 && c < 0xF5 ? 3 : c >= 0xE0 ? (c < 0xF0 ? 2 : -1) : c >= 0xC2 ? 1 : -1;
    if (k < 0 || i + (size_t)k >= n) return 0xFFFD;
    uint32_t v = c & (0x3Fu >> k);
    for (int j = 1; j <= k; j++) {
        unsigned d = s[i + (size_t)j];
        if ((d & 0xC0) != 0x80) return 0xFFFD;
        v = (v << 6) | (d & 0x3F);
    }
    if ((k == 2 && v < 0x800) || (k == 3 && (v < 0x10000 || v > 0x10FFFF)) || (v >= 0xD800 && v < 0xE000))
        return 0xFFFD;
    *adv = (size_t)k + 1;
    return v;
}

int xtts_romanize_ko(const char *text, size_t len, xtts_sb *out);
int xtts_romanize_zh(const char *text, size_t len, xtts_sb *out);
/* ja returns 0, -1 (no dictionary: why says so) or -2 (this text fails as it does in the
 * reference: why says where) */
int xtts_romanize_ja(const char *text, size_t len, xtts_sb *out, char *why, size_t why_size);

#endif
