/* n2w_tr.c — num2words 0.5.12's number words for "tr" (see num2words.h). The library reads
 * the decimal string of the number digit by digit with many special cases, and its output
 * follows that procedure even where it is not Turkish ("9007199254740992" loses its "yedi",
 * a negative number is read with its "-" treated as a digit without a word, an integer that a
 * double cannot hold exactly gives ""). This file walks the same string the same way:
 * S = str(int(x)), L its length, T its number of triplets, D the digits before the first full
 * triplet and Z the trailing zeros (not counting the first character).
 *
 * Its to_currency takes no currency code, so the call XTTS makes raises (currency is NULL). */
#include "prep/text/num2words/num2words.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *digit(const char *const tab[10], char c) {
    return c >= '0' && c <= '9' ? tab[c - '0'] : ""; /* dict.get(c, "") */
}
static const char *const ONES[10] = {"", "bir", "iki", "üç", "dört", "beş", "altı", "yedi", "sekiz", "dokuz"};
static const char *const ORD_ONES[10] = {"", "birinci", "ikinci", "üçüncü", "dördüncü",
                                         "beşinci", "altıncı", "yedinci", "sekizinci", "dokuzuncu"};
static const char *const TENS[10] = {"", "on", "yirmi", "otuz", "kırk", "elli", "altmış", "yetmiş", "seksen", "doksan"};
static const char *const ORD_TENS[10] = {"", "onuncu", "yirminci", "otuzuncu", "kırkıncı",
                                         "ellinci", "altmışıncı", "yetmişinci", "sekseninci", "doksanıncı"};
static const char *const HUNDREDS[10] = {"", "", "iki", "üç", "dört", "beş", "altı", "yedi", "sekiz", "dokuz"};
static const char *const TRIPLETS[7] = {NULL, "bin", "milyon", "milyar", "trilyon", "katrilyon", "kentilyon"};
static const char *const ORD_TRIPLETS[7] = {NULL, "bininci", "milyonuncu", "milyarıncı", "trilyonuncu",
                                            "katrilyonuncu", "kentilyon"};
#define HUNDRED "yüz"
#define ORD_HUNDRED "yüzüncü"

/* CARDINAL_TRIPLETS[k] / ORDINAL_TRIPLETS[k]: -1 where the library has a KeyError */
static int trip(xtts_sb *w, int ord, int k) {
    if (k < 1 || k > 6) return -1;
    xtts_sb_puts(w, ord ? ORD_TRIPLETS[k] : TRIPLETS[k]);
    return 0;
}

/* The number being read, named as the library names them: S, its length L, its triplets T,
 * the digits D before the first full triplet, the trailing zeros Z; ord: to_ordinal. */
typedef struct {
    const char *S;
    int ord, L, T, D, Z;
    xtts_sb *w;              /* the words so far */
} tr_number;

/* What a step of the reading returns besides -1 (the library's KeyError or IndexError). */
enum { TR_GO_ON = 0, TR_DONE = 1 };

/* The reading ends with the word of a triplet (-1 where the library has none). */
static int tr_end(int trip_rc) { return trip_rc ? -1 : TR_DONE; }

static tr_number tr_number_of(const char *S, int ord, xtts_sb *w) {
    int L = (int)strlen(S);
    tr_number n = {S, ord, L, L % 3 ? L / 3 + 1 : L / 3, L % 3, 0, w};
    for (int i = 0, found = 0; i < L - 1; i++) {
        if (S[L - 1 - i] == '0' && !found)
            n.Z = i + 1;
        else
            found = 1;
    }
    return n;
}

/* A number of one triplet (up to three digits). */
static int tr_read_short(const tr_number *n) {
    const char *S = n->S;
    int ord = n->ord, D = n->D, Z = n->Z;
    xtts_sb *w = n->w;
    if (D == 2) {
        if (Z == 1) {
            xtts_sb_puts(w, digit(ord ? ORD_TENS : TENS, S[0]));
            return 0;
        }
        if (Z == 0) {
            xtts_sb_puts(w, digit(TENS, S[0]));
            xtts_sb_puts(w, digit(ord ? ORD_ONES : ONES, S[1]));
        }
        return 0;
    }
    if (D == 1) {
        if (Z == 0) {
            if (S[0] == '0') {
                xtts_sb_puts(w, ord ? "sıfırıncı" : "sıfır");
                return 0;
            }
            xtts_sb_puts(w, digit(ord ? ORD_ONES : ONES, S[0]));
        }
        return 0;
    }
    /* D == 0 */
    xtts_sb_puts(w, digit(HUNDREDS, S[0]));
    if (Z == 2) {
        xtts_sb_puts(w, ord ? ORD_HUNDRED : HUNDRED);
        return 0;
    }
    xtts_sb_puts(w, HUNDRED);
    if (Z == 1) {
        xtts_sb_puts(w, digit(ord ? ORD_TENS : TENS, S[1]));
        return 0;
    }
    if (Z == 0) {
        xtts_sb_puts(w, digit(TENS, S[1]));
        if (!ord)
            xtts_sb_puts(w, digit(ONES, S[2]));
        else if (S[2] != '0')
            xtts_sb_puts(w, digit(ORD_ONES, S[2]));
    }
    return 0;
}

/* T >= 2: the first, partial or full, triplet. */
static int tr_read_first_triplet(const tr_number *n) {
    const char *S = n->S;
    int ord = n->ord, L = n->L, T = n->T, D = n->D, Z = n->Z;
    xtts_sb *w = n->w;
    if (D == 2) {
        xtts_sb_puts(w, digit(TENS, S[0]));
        if (Z == L - 1) return tr_end(trip(w, ord, T - 1));
        xtts_sb_puts(w, digit(ONES, S[1]));
        if (Z == L - 2) return tr_end(trip(w, ord, T - 1));
    } else if (D == 1) {
        if (!(T == 2 && S[0] == '1')) xtts_sb_puts(w, digit(ONES, S[0]));
        if (Z == L - 1) return tr_end(trip(w, ord, T - 1));
    } else {
        xtts_sb_puts(w, digit(HUNDREDS, S[0]));
        xtts_sb_puts(w, HUNDRED);
        if (Z == L - 1) return tr_end(trip(w, ord, T - 1));
        xtts_sb_puts(w, digit(TENS, S[1]));
        if (Z == L - 2) return tr_end(trip(w, ord, T - 1));
        if (Z == L - 3) {
            xtts_sb_puts(w, digit(ONES, S[2]));
            return tr_end(trip(w, ord, T - 1));
        }
        if (!(T == 2 && S[2] == '1')) xtts_sb_puts(w, digit(ONES, S[2]));
    }
    return trip(w, 0, T - 1) ? -1 : TR_GO_ON;
}

/* One of the following triplets, i counting down to 1 (the last). */
static int tr_read_triplet(const tr_number *n, int i) {
    const char *S = n->S;
    int ord = n->ord, L = n->L, T = n->T, D = n->D, Z = n->Z;
    xtts_sb *w = n->w;
    int r = T - i, lr = D == 0 ? r * 3 : (r - 1) * 3 + D;
    if (lr + 2 >= L) return -1; /* IndexError */
    if (!memcmp(S + lr, "000", 3)) return TR_GO_ON;
    if (S[lr] != '0') {
        xtts_sb_puts(w, digit(HUNDREDS, S[lr]));
        if (Z == L - lr - 1) {
            if (i == 1) {
                xtts_sb_puts(w, ord ? ORD_HUNDRED : HUNDRED);
                return TR_DONE;
            }
            xtts_sb_puts(w, HUNDRED);
            return tr_end(trip(w, ord, i - 1));
        }
        xtts_sb_puts(w, HUNDRED);
    }
    if (S[lr + 1] != '0') {
        if (Z == L - lr - 2) {
            if (i == 1) {
                xtts_sb_puts(w, digit(ord ? ORD_TENS : TENS, S[lr + 1]));
                return TR_DONE;
            }
            xtts_sb_puts(w, digit(TENS, S[lr + 1]));
            return tr_end(trip(w, ord, i - 1));
        }
        xtts_sb_puts(w, digit(TENS, S[lr + 1]));
    }
    if (S[lr + 2] != '0') {
        int zz = S[lr] == '0' && S[lr + 1] == '0';
        if (Z == L - lr - 3) {
            if (i == 1) {
                xtts_sb_puts(w, digit(ord ? ORD_ONES : ONES, S[lr + 2]));
                return TR_DONE;
            }
            if (i == 2) {
                if (!zz || S[lr + 2] != '1') xtts_sb_puts(w, digit(ONES, S[lr + 2]));
                return tr_end(trip(w, ord, 1));
            }
            xtts_sb_puts(w, digit(ONES, S[lr + 2]));
            return tr_end(trip(w, ord, i - 1));
        }
        if (!zz)
            xtts_sb_puts(w, digit(ONES, S[lr + 2]));
        else if ((ord || i == 2) && S[lr + 2] != '1')
            xtts_sb_puts(w, digit(ONES, S[lr + 2]));
    }
    return trip(w, 0, i - 1) ? -1 : TR_GO_ON;
}

/* to_cardinal (ord = 0) or to_ordinal (ord = 1) of the digit string S, after the checks:
 * 0, or -1 where the library raises. */
static int tr_read(const char *S, int ord, xtts_sb *w) {
    tr_number n = tr_number_of(S, ord, w);
    if (n.Z >= n.L) return 0;
    if (n.T == 1) return tr_read_short(&n);
    int rc = tr_read_first_triplet(&n);
    for (int i = n.T - 1; rc == TR_GO_ON && i >= 1; i--) rc = tr_read_triplet(&n, i);
    return rc < 0 ? -1 : 0;
}

/* MAXVAL = 10^21 - 1; every int64 is below it */
static int run(const char *S, int ord, xtts_sb *out) {
    xtts_sb w = {0};
    int rc = tr_read(S, ord, &w);
    if (rc == 0 && !w.failed) xtts_sb_puts(out, w.s ? w.s : "");
    if (w.failed) out->failed = 1;
    xtts_sb_free(&w);
    return rc;
}

static int tr_cardinal(int64_t n, xtts_sb *out) {
    /* verify_cardinal: float(value) == value, else the result is "" */
    double d = (double)n;
    if (d >= 9223372036854775808.0 || (int64_t)d != n) return 0;
    char S[32];
    snprintf(S, sizeof S, "%lld", (long long)n);
    return run(S, 0, out);
}

static int tr_ordinal(int64_t n, xtts_sb *out) {
    if (n < 0) return -1;
    char S[32];
    snprintf(S, sizeof S, "%lld", (long long)n);
    return run(S, 1, out);
}

/* str(int(v)) of a finite double */
static void int_string(double v, char *buf, size_t size) {
    v = trunc(v);
    if (v == 0) v = 0; /* no "-0" */
    snprintf(buf, size, "%.0f", v);
}

static int tr_float(const char *repr, xtts_sb *out) {
    double x = strtod(repr, NULL);
    if (!isfinite(x) || fabs(x) >= 1e21 - 1) return -1;
    char S[400];
    if (x == trunc(x)) { /* integral: the integer path */
        int_string(x, S, sizeof S);
        return run(S, 0, out);
    }
    /* to_splitnum: the two decimals come from str(int(x * 100)) */
    char fd[400], dec[8];
    int_string(x * 100, fd, sizeof fd);
    int lf = (int)strlen(fd), start = lf - 2;
    if (start < 0) start += lf;
    if (start < 0) start = 0;
    int_string(x, S, sizeof S);
    if (strcmp(S, "0")) {
        snprintf(dec, sizeof dec, "%s", fd + start);
    } else {
        int pad = 2 - lf > 0 ? 2 - lf : 0;
        snprintf(dec, sizeof dec, "%.*s%s", pad, "00", fd + start);
    }
    xtts_sb w = {0};
    int rc = 0;
    if (!strcmp(S, "0"))
        xtts_sb_puts(&w, "sıfır");
    else {
        /* to_cardinal(int(S)) again, with its float check */
        char *end;
        long long v = strtoll(S, &end, 10);
        rc = tr_cardinal((int64_t)v, &w);
    }
    if (rc == 0) {
        xtts_sb_puts(&w, "virgül");
        size_t ld = strlen(dec);
        if (ld >= 1) xtts_sb_puts(&w, digit(TENS, dec[0]));
        if (ld == 2) xtts_sb_puts(&w, digit(ONES, dec[1]));
        if (!w.failed) xtts_sb_puts(out, w.s);
    }
    if (w.failed) out->failed = 1;
    xtts_sb_free(&w);
    return rc;
}

const xtts_n2w_lang xtts_n2w_tr = {"tr", tr_cardinal, tr_ordinal, tr_float, NULL, NULL};
