/* strbuf.h — a growable byte string for the text code (prep/) and the dataset reader. Allocation failure
 * sets a sticky flag, the `failed` field, that the caller checks once at the end. */
#ifndef XTTS_STRBUF_H
#define XTTS_STRBUF_H

#include <stdlib.h>
#include <string.h>

typedef struct {
    char *s;
    size_t len, cap;
    int failed;
} xtts_sb;

static inline int xtts_sb_reserve(xtts_sb *b, size_t extra) {
    if (b->failed) return -1;
    if (b->len + extra + 1 <= b->cap) return 0;
    size_t c = b->cap ? b->cap : 64;
    while (c < b->len + extra + 1) c *= 2;
    char *n = (char *)realloc(b->s, c);
    if (!n) { b->failed = 1; return -1; }
    b->s = n;
    b->cap = c;
    return 0;
}
static inline void xtts_sb_putn(xtts_sb *b, const char *s, size_t n) {
    if (xtts_sb_reserve(b, n)) return;
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = 0;
}
static inline void xtts_sb_puts(xtts_sb *b, const char *s) { xtts_sb_putn(b, s, strlen(s)); }
static inline void xtts_sb_putc(xtts_sb *b, char c) { xtts_sb_putn(b, &c, 1); }
static inline void xtts_sb_clear(xtts_sb *b) { b->len = 0; if (b->s) b->s[0] = 0; }
/* NULL is allowed. */
static inline void xtts_sb_free(xtts_sb *b) { if (!b) return; free(b->s); b->s = NULL; b->len = b->cap = 0; b->failed = 0; }
/* b's text as a NUL-terminated string, "" for an empty buffer (allocated then), for code that
 * reads or hands on b->s. After an allocation failure (the sticky flag) nothing is written and
 * b->s comes back as it is: NULL when it was never allocated. */
static inline char *xtts_sb_cstr(xtts_sb *b) {
    if (xtts_sb_reserve(b, 0) == 0) b->s[b->len] = 0;
    return b->s;
}
/* dst takes src's text and sticky flag (dst's own text is freed); src is left empty. */
static inline void xtts_sb_move(xtts_sb *dst, xtts_sb *src) {
    free(dst->s);
    *dst = *src;
    src->s = NULL;
    src->len = src->cap = 0;
    src->failed = 0;
}
/* Exchange the contents of a and b (text, capacity and sticky flag). */
static inline void xtts_sb_swap(xtts_sb *a, xtts_sb *b) { xtts_sb t = *a; *a = *b; *b = t; }
/* Python's str.replace on b's text: the first count occurrences of from (every one when
 * count < 0) become to. Allocation failure sets the sticky flag and leaves b's text. */
static inline void xtts_sb_replace(xtts_sb *b, const char *from, const char *to, long count) {
    size_t fl = strlen(from);
    if (!b->s || !b->len || !fl || !count || !memmem(b->s, b->len, from, fl)) return;
    xtts_sb o = {NULL, 0, 0, 0};
    xtts_sb_cstr(&o);
    for (size_t i = 0; i < b->len;) {
        if (count && i + fl <= b->len && !memcmp(b->s + i, from, fl)) {
            xtts_sb_puts(&o, to);
            i += fl;
            if (count > 0) count--;
        } else {
            xtts_sb_putc(&o, b->s[i++]);
        }
    }
    if (o.failed) { b->failed = 1; free(o.s); return; }
    xtts_sb_move(b, &o);
}
/* Last byte or 0. */
static inline char xtts_sb_last(const xtts_sb *b) { return b->len ? b->s[b->len - 1] : 0; }

#endif
