/* n2w_slavic.c — Polish, Czech and Russian number groups as num2words 0.5.12 reads them
 * (n2w_slavic_internal.h). */
#include "prep/text/num2words/n2w_slavic_internal.h"

#include <string.h>

int xtts_n2w_slavic_form(const n2w_slavic *L, int64_t n) {
    int64_t m10 = n % 10, m100 = n % 100;
    if (L->ru_plural) {
        if (m100 < 10 || m100 > 20) {
            if (m10 == 1) return 0;
            if (m10 > 1 && m10 < 5) return 1;
        }
        return 2;
    }
    if (n == 1) return 0;
    if (m10 > 1 && m10 < 5 && (m100 < 10 || m100 > 20)) return 1;
    return 2;
}

static void word(xtts_sb *out, const char *w) {
    if (out->len) xtts_sb_putc(out, ' ');
    xtts_sb_puts(out, w);
}

/* Writes into a fresh buffer so that words are separated by single spaces. */
static int int_words(const n2w_slavic *L, int64_t n, int feminine, xtts_sb *w) {
    uint64_t mag = (uint64_t)n;
    if (n < 0) {
        if (!L->negative_ok) return -1;
        word(w, L->negword);
        mag = 0 - mag; /* abs(), INT64_MIN included */
        feminine = 0;
    }
    if (mag == 0) {
        word(w, L->zero);
        return 0;
    }
    int chunk[7], nc = 0;
    for (uint64_t v = mag; v; v /= 1000) chunk[nc++] = (int)(v % 1000);
    for (int k = nc - 1; k >= 0; k--) {
        int x = chunk[k], i = k;
        if (x == 0) continue;
        int n1 = x % 10, n2 = x / 10 % 10, n3 = x / 100;
        if (n3 > 0) word(w, L->hundreds[n3]);
        if (n2 > 1) word(w, L->tens[n2]);
        if (n2 == 1)
            word(w, L->teens[n1]);
        else if (n1 > 0) {
            if (L->omit_lone_one) {
                if (!(i > 0 && x == 1)) word(w, L->ones[n1]);
            } else {
                int fem = L->ones_fem[1] && (i == 1 || (feminine && i == 0));
                word(w, fem ? L->ones_fem[n1] : L->ones[n1]);
            }
        }
        if (i > 0) {
            if (i >= L->nscales) return -1;
            word(w, L->scales[i][xtts_n2w_slavic_form(L, x)]);
        }
    }
    return 0;
}

int xtts_n2w_slavic_int(const n2w_slavic *L, int64_t n, int feminine, xtts_sb *out) {
    xtts_sb w = {0};
    int rc = int_words(L, n, feminine, &w);
    if (rc == 0 && !w.failed) xtts_sb_puts(out, w.s);
    if (w.failed) out->failed = 1;
    xtts_sb_free(&w);
    return rc;
}

int xtts_n2w_slavic_float(const n2w_slavic *L, const char *repr, xtts_sb *out) {
    n2w_repr r;
    if (xtts_n2w_parse_repr(repr, &r)) return -1;
    xtts_sb w = {0};
    int rc = xtts_n2w_slavic_int(L, r.neg ? -r.ipart : r.ipart, 0, &w);
    if (rc == 0) {
        xtts_sb_putc(&w, ' ');
        xtts_sb_puts(&w, L->pointword);
        xtts_sb_putc(&w, ' ');
        int z = 0;
        while (z < r.nfrac && r.frac[z] == '0') z++;
        for (int i = 0; i < z; i++) {
            xtts_sb_puts(&w, L->zero);
            xtts_sb_putc(&w, ' ');
        }
        rc = xtts_n2w_slavic_int(L, r.fpart, 0, &w);
    }
    if (rc == 0 && !w.failed) xtts_sb_puts(out, w.s);
    if (w.failed) out->failed = 1;
    xtts_sb_free(&w);
    return rc;
}

int xtts_n2w_slavic_currency(const n2w_slavic *L, const char *repr, const char *const unit[3],
                             const char *const cent[3], int fem_units, int fem_cents, xtts_sb *out) {
    int64_t units;
    int cents, neg;
    if (xtts_n2w_money_parts(repr, &units, &cents, &neg)) return -1;
    xtts_sb w = {0};
    if (neg) { /* "%s " % negword, then the words */
        xtts_sb_puts(&w, L->negword);
        xtts_sb_putc(&w, ' ');
    }
    int rc = xtts_n2w_slavic_int(L, units, fem_units, &w);
    if (rc == 0) {
        xtts_sb_putc(&w, ' ');
        xtts_sb_puts(&w, unit[xtts_n2w_slavic_form(L, units)]);
        xtts_sb_puts(&w, ", ");
        rc = xtts_n2w_slavic_int(L, cents, fem_cents, &w);
        xtts_sb_putc(&w, ' ');
        xtts_sb_puts(&w, cent[xtts_n2w_slavic_form(L, cents)]);
    }
    if (rc == 0 && !w.failed) xtts_sb_puts(out, w.s);
    if (w.failed) out->failed = 1;
    xtts_sb_free(&w);
    return rc;
}
