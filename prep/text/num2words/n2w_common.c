/* n2w_common.c — helpers shared by the num2words languages (n2w_common_internal.h). */
#include "prep/text/num2words/n2w_common_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int digits_value(const char *s, size_t n, int64_t *v) {
    if (n == 0 || n > 18) return -1;
    int64_t x = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        x = x * 10 + (s[i] - '0');
    }
    *v = x;
    return 0;
}

int xtts_n2w_parse_repr(const char *repr, n2w_repr *r) {
    memset(r, 0, sizeof *r);
    const char *p = repr;
    if (*p == '-') {
        r->neg = 1;
        p++;
    }
    const char *dot = strchr(p, '.');
    if (!dot) return -1;
    size_t ni = (size_t)(dot - p), nf = strlen(dot + 1);
    if (nf >= sizeof r->frac) return -1;
    if (digits_value(p, ni, &r->ipart) || digits_value(dot + 1, nf, &r->fpart)) return -1;
    memcpy(r->frac, dot + 1, nf);
    r->frac[nf] = 0;
    r->nfrac = (int)nf;
    return 0;
}

int xtts_n2w_money_parts(const char *repr, int64_t *units, int *cents, int *neg) {
    double x = strtod(repr, NULL);
    if (!isfinite(x)) return -1;
    *neg = signbit(x) && x != 0.0; /* Decimal(-0.0) quantized is -0.00, which is not < 0 */
    x = fabs(x);
    if (x >= 9.2e18) return -1;
    /* glibc prints the exact binary value; every double has at most 1074 fractional digits */
    static const int prec = 1080;
    char buf[1200];
    int n = snprintf(buf, sizeof buf, "%.*f", prec, x);
    if (n <= 0 || (size_t)n >= sizeof buf) return -1;
    char *dot = strchr(buf, '.');
    int64_t u = 0;
    for (char *q = buf; q < dot; q++) u = u * 10 + (*q - '0');
    int c = (dot[1] - '0') * 10 + (dot[2] - '0');
    if (dot[3] >= '5') c++; /* ROUND_HALF_UP: the rest is >= 0.005 exactly when this digit is >= 5 */
    if (c == 100) {
        c = 0;
        u++;
    }
    *units = u;
    *cents = c;
    return 0;
}

void xtts_n2w_repeat(xtts_sb *out, const char *s, int n) {
    for (int i = 0; i < n; i++) xtts_sb_puts(out, s);
}

int xtts_n2w_replace_end(xtts_sb *b, const char *from, const char *to) {
    size_t k = strlen(from);
    if (b->len < k || memcmp(b->s + b->len - k, from, k)) return 0;
    b->len -= k;
    xtts_sb_puts(b, to);
    return 1;
}

static int ends_with(const char *s, size_t len, const char *end) {
    size_t k = strlen(end);
    return len >= k && !memcmp(s + len - k, end, k);
}

/* One word of the tail, feminine. */
static void feminine_word(const char *w, size_t len, const char *const (*words)[2], size_t nwords,
                          const char *const suffix[2], xtts_sb *out) {
    for (size_t i = 0; i < nwords; i++)
        if (strlen(words[i][0]) == len && !memcmp(w, words[i][0], len)) {
            xtts_sb_puts(out, words[i][1]);
            return;
        }
    if (suffix && ends_with(w, len, suffix[0])) {
        xtts_sb_putn(out, w, len - strlen(suffix[0]));
        xtts_sb_puts(out, suffix[1]);
        return;
    }
    xtts_sb_putn(out, w, len);
}

void xtts_n2w_feminine_tail(xtts_sb *b, const char *const *scale_ends, const char *const (*words)[2], size_t nwords,
                            const char *const suffix[2]) {
    size_t tail = 0; /* where the words after the last scale word start */
    for (size_t i = 0; i < b->len;) {
        size_t e = i;
        while (e < b->len && b->s[e] != ' ' && b->s[e] != '-') e++;
        for (const char *const *s = scale_ends; *s; s++)
            if (ends_with(b->s + i, e - i, *s)) tail = e;
        i = e + 1;
    }
    xtts_sb f = {0};
    for (size_t i = tail; i < b->len;) {
        size_t e = i;
        while (e < b->len && b->s[e] != ' ' && b->s[e] != '-') e++;
        feminine_word(b->s + i, e - i, words, nwords, suffix, &f);
        if (e < b->len) xtts_sb_putc(&f, b->s[e]);
        i = e + 1;
    }
    b->len = tail;
    xtts_sb_putn(b, f.s ? f.s : "", f.len);
    if (f.failed) b->failed = 1;
    xtts_sb_free(&f);
}

void xtts_n2w_feminine_o(xtts_sb *b) {
    for (size_t i = 0; i < b->len; i++)
        if (b->s[i] == 'o' && (i + 1 == b->len || b->s[i + 1] == ' ')) b->s[i] = 'a';
}

int xtts_n2w_take(xtts_sb *w, int rc, xtts_sb *out) {
    if (!rc && !w->failed) xtts_sb_putn(out, w->s ? w->s : "", w->len);
    rc = rc || w->failed || out->failed ? -1 : 0;
    xtts_sb_free(w);
    return rc;
}
