/* n2w_hu.c — num2words 0.5.12's number words for "hu" (see num2words.h). Words are joined
 * without spaces, with "-" after the thousands from 2001 up; ordinals replace the ending of
 * the cardinal by the first matching entry of the library's list and add "ik"; decimals say
 * the digits after the point as tenths, hundredths or thousandths (more digits raise);
 * currency uses the library's English currency names (euro/cents, dollars, pounds sterling).
 *
 * A Python float that is a whole number goes down the integer path with one difference the
 * library has: from a million up it counts the characters of str(x) ("10000000.0") to choose
 * the power of a thousand, which can recurse without end (the library raises
 * RecursionError); the same count and a depth limit give the same results here. */
#include "prep/text/num2words/n2w_common_internal.h"
#include "prep/text/num2words/num2words.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const LOW[30] = {
    "nulla",      "egy",         "kettő",        "három",       "négy",       "öt",
    "hat",        "hét",         "nyolc",        "kilenc",      "tíz",        "tizenegy",
    "tizenkettő", "tizenhárom",  "tizennégy",    "tizenöt",     "tizenhat",   "tizenhét",
    "tizennyolc", "tizenkilenc", "húsz",         "huszonegy",   "huszonkettő", "huszonhárom",
    "huszonnégy", "huszonöt",    "huszonhat",    "huszonhét",   "huszonnyolc", "huszonkilenc",
};
static const char *const TENS[10] = {"", "", "", "harminc", "negyven", "ötven", "hatvan", "hetven", "nyolcvan",
                                     "kilencven"};

/* cards[10^k] for k a multiple of 3 */
static const char *power_name(int k) {
    switch (k) {
    case 3: return "ezer";
    case 6: return "millió";
    case 9: return "milliárd";
    case 12: return "billió";
    case 15: return "billiárd";
    case 18: return "trillió";
    default: return NULL;
    }
}

static uint64_t pow10i(int k) {
    uint64_t p = 1;
    while (k-- > 0) p *= 10;
    return p;
}

static int ndigits(uint64_t v) {
    int d = 1;
    while (v >= 10) {
        v /= 10;
        d++;
    }
    return d;
}

/* to_cardinal(value, zero) for value >= 0; isfloat: value is a Python float. */
static int card(uint64_t v, const char *zero, int isfloat, int depth, xtts_sb *o) {
    if (depth > 400) return -1;
    if (v == 0) {
        xtts_sb_puts(o, zero);
    } else if (!*zero && v == 2) {
        xtts_sb_puts(o, "két");
    } else if (v < 30) {
        xtts_sb_puts(o, LOW[v]);
    } else if (v < 100) {
        xtts_sb_puts(o, TENS[v / 10]);
        if (v % 10) xtts_sb_puts(o, LOW[v % 10]);
    } else if (v < 1000) {
        if (v / 100 != 1 && card(v / 100, "", isfloat, depth + 1, o)) return -1;
        xtts_sb_puts(o, "száz");
        return card(v % 100, "", isfloat, depth + 1, o);
    } else if (v < 1000000) {
        if (v / 1000 != 1 && card(v / 1000, "", isfloat, depth + 1, o)) return -1;
        xtts_sb_puts(o, "ezer");
        xtts_sb post = {0};
        int rc = card(v % 1000, "", isfloat, depth + 1, &post);
        if (rc == 0 && post.len) {
            if (v > 2000) xtts_sb_putc(o, '-');
            xtts_sb_puts(o, post.s);
        }
        if (post.failed) o->failed = 1;
        xtts_sb_free(&post);
        return rc;
    } else {
        int digits;
        if (isfloat) {
            char r[40];
            xtts_py_float_repr((double)v, r, sizeof r);
            digits = (int)strlen(r);
        } else {
            digits = ndigits(v);
        }
        if (digits % 3 == 0) digits -= 2;
        int k = digits / 3 * 3;
        const char *name = power_name(k);
        if (!name) return -1; /* past int64, or a KeyError in the library */
        uint64_t exp = pow10i(k);
        xtts_sb rest = {0};
        int rc = card(v % exp, "", isfloat, depth + 1, &rest);
        if (rc == 0) rc = card(v / exp, "", isfloat, depth + 1, o);
        if (rc == 0) {
            xtts_sb_puts(o, name);
            if (rest.len) {
                xtts_sb_putc(o, '-');
                xtts_sb_puts(o, rest.s);
            }
        }
        if (rest.failed) o->failed = 1;
        xtts_sb_free(&rest);
        return rc;
    }
    return 0;
}

/* Writes through a scratch buffer so that a raise leaves out unchanged. */
static int card_top(int64_t n, int isfloat, xtts_sb *out) {
    xtts_sb w = {0};
    uint64_t mag = (uint64_t)n;
    if (n < 0) {
        xtts_sb_puts(&w, "mínusz ");
        mag = 0 - mag; /* INT64_MIN included */
    }
    int rc = card(mag, "nulla", isfloat, 0, &w);
    if (rc == 0 && !w.failed) xtts_sb_puts(out, w.s);
    if (w.failed) out->failed = 1;
    xtts_sb_free(&w);
    return rc;
}

static int hu_cardinal(int64_t n, xtts_sb *out) { return card_top(n, 0, out); }

/* the library's partial_ords, in its order: the first cardinal ending that matches wins */
static const char *const PARTIAL_ORDS[][2] = {
    {"nulla", "nullad"},     {"egy", "egyed"},         {"kettő", "ketted"},     {"három", "harmad"},
    {"négy", "negyed"},      {"öt", "ötöd"},           {"hat", "hatod"},        {"hét", "heted"},
    {"nyolc", "nyolcad"},    {"kilenc", "kilenced"},   {"tíz", "tized"},        {"húsz", "huszad"},
    {"harminc", "harmincad"}, {"negyven", "negyvened"}, {"ötven", "ötvened"},    {"hatvan", "hatvanad"},
    {"hetven", "hetvened"},  {"nyolcvan", "nyolcvanad"}, {"kilencven", "kilencvened"}, {"száz", "század"},
    {"ezer", "ezred"},       {"illió", "milliomod"},   {"illiárd", "milliárdod"},
};

static int hu_ordinal(int64_t n, xtts_sb *out) {
    if (n < 0) return -1;
    if (n == 1) {
        xtts_sb_puts(out, "első");
        return 0;
    }
    if (n == 2) {
        xtts_sb_puts(out, "második");
        return 0;
    }
    xtts_sb w = {0};
    int rc = card_top(n, 0, &w);
    if (rc == 0 && !w.failed) {
        size_t keep = w.len;
        const char *rep = "";
        for (size_t i = 0; i < sizeof PARTIAL_ORDS / sizeof PARTIAL_ORDS[0]; i++) {
            size_t l = strlen(PARTIAL_ORDS[i][0]);
            if (l <= w.len && !memcmp(w.s + w.len - l, PARTIAL_ORDS[i][0], l)) {
                keep = w.len - l;
                rep = PARTIAL_ORDS[i][1];
                break;
            }
        }
        xtts_sb_putn(out, w.s, keep);
        xtts_sb_puts(out, rep);
        xtts_sb_puts(out, "ik");
    }
    if (w.failed) out->failed = 1;
    xtts_sb_free(&w);
    return rc;
}

static int hu_float(const char *repr, xtts_sb *out) {
    double x = strtod(repr, NULL);
    if (!isfinite(x)) return -1;
    if (x == floor(x)) { /* int(value) == value: the integer path, as a float */
        if (fabs(x) >= 9.2e18) return -1;
        return card_top((int64_t)x, 1, out);
    }
    n2w_repr r;
    if (xtts_n2w_parse_repr(repr, &r)) return -1;
    static const char *const FRACTION[4] = {NULL, "tized", "század", "ezred"};
    if (r.nfrac < 1 || r.nfrac > 3) return -1; /* cards[10**len] is missing or has no ordinal */
    xtts_sb w = {0};
    if (r.neg) xtts_sb_puts(&w, "mínusz ");
    int rc = card(r.ipart, "nulla", 0, 0, &w);
    if (rc == 0) {
        xtts_sb_puts(&w, " egész ");
        rc = card(r.fpart, "nulla", 0, 0, &w);
        xtts_sb_putc(&w, ' ');
        xtts_sb_puts(&w, FRACTION[r.nfrac]);
    }
    if (rc == 0 && !w.failed) xtts_sb_puts(out, w.s);
    if (w.failed) out->failed = 1;
    xtts_sb_free(&w);
    return rc;
}

static int hu_currency(const char *repr, const char *cur, xtts_sb *out) {
    static const struct {
        const char *code, *unit[2], *cent[2];
    } FORMS[] = {
        {"EUR", {"euro", "euro"}, {"cent", "cents"}},
        {"USD", {"dollar", "dollars"}, {"cent", "cents"}},
        {"GBP", {"pound sterling", "pounds sterling"}, {"penny", "pence"}},
    };
    int f = -1;
    for (int i = 0; i < 3; i++)
        if (!strcmp(FORMS[i].code, cur)) f = i;
    if (f < 0) return -1;
    int64_t units;
    int cents, neg;
    if (xtts_n2w_money_parts(repr, &units, &cents, &neg)) return -1;
    xtts_sb w = {0};
    if (neg) xtts_sb_puts(&w, "mínusz  ");
    int rc = card_top(units, 0, &w);
    if (rc == 0) {
        xtts_sb_putc(&w, ' ');
        xtts_sb_puts(&w, FORMS[f].unit[units == 1 ? 0 : 1]);
        xtts_sb_puts(&w, ", ");
        rc = card_top(cents, 0, &w);
        xtts_sb_putc(&w, ' ');
        xtts_sb_puts(&w, FORMS[f].cent[cents == 1 ? 0 : 1]);
    }
    if (rc == 0 && !w.failed) xtts_sb_puts(out, w.s);
    if (w.failed) out->failed = 1;
    xtts_sb_free(&w);
    return rc;
}

const xtts_n2w_lang xtts_n2w_hu = {"hu", hu_cardinal, hu_ordinal, hu_float, hu_currency, NULL};
