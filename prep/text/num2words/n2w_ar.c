/* n2w_ar.c — num2words 0.5.12's number words for "ar" (see num2words.h), following the
 * library's own procedure step by step, since its output depends on it: the number is first
 * written with nine decimals ("%.9f" of a double, so integers past 2^53 are rounded the same
 * way), read in groups of three from the right, and two decimals are kept (cut, not rounded).
 *
 * The library keeps one converter object per process and an ordinal leaves it set to feminine
 * ones, which later cardinals then use; these functions give what a fresh converter gives
 * (masculine cardinals). Its currency ignores the currency code: EUR, USD and GBP all come
 * out in riyals and halalas, as in the library. */
#include "prep/text/num2words/n2w_common_internal.h"
#include "prep/text/num2words/num2words.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const ONES[20] = {
    "", "واحد", "اثنان", "ثلاثة", "أربعة", "خمسة", "ستة", "سبعة", "ثمانية", "تسعة",
    "عشرة", "أحد عشر", "اثنا عشر", "ثلاثة عشر", "أربعة عشر", "خمسة عشر", "ستة عشر", "سبعة عشر",
    "ثمانية عشر", "تسعة عشر",
};
static const char *const FEM_ONES[20] = {
    "", "إحدى", "اثنتان", "ثلاث", "أربع", "خمس", "ست", "سبع", "ثمان", "تسع",
    "عشر", "إحدى عشرة", "اثنتا عشرة", "ثلاث عشرة", "أربع عشرة", "خمس عشرة", "ست عشرة", "سبع عشرة",
    "ثماني عشرة", "تسع عشرة",
};
static const char *const ORDINAL[20] = {
    "", "اول", "ثاني", "ثالث", "رابع", "خامس", "سادس", "سابع", "ثامن", "تاسع", "عاشر",
    "حادي عشر", "ثاني عشر", "ثالث عشر", "رابع عشر", "خامس عشر", "سادس عشر", "سابع عشر", "ثامن عشر",
    "تاسع عشر",
};
static const char *const TENS[8] = {"عشرون", "ثلاثون", "أربعون", "خمسون", "ستون", "سبعون", "ثمانون", "تسعون"};
static const char *const HUNDREDS[10] = {
    "", "مائة", "مئتان", "ثلاثمائة", "أربعمائة", "خمسمائة", "ستمائة", "سبعمائة", "ثمانمائة", "تسعمائة",
};
static const char *const APPENDED_TWOS[8] = {
    "مئتا", "ألفا", "مليونا", "مليارا", "تريليونا", "كوادريليونا", "كوينتليونا", "سكستيليونا",
};
static const char *const TWOS[8] = {
    "مئتان", "ألفان", "مليونان", "ملياران", "تريليونان", "كوادريليونان", "كوينتليونان", "سكستيليونان",
};
static const char *const GROUP[8] = {
    "مائة", "ألف", "مليون", "مليار", "تريليون", "كوادريليون", "كوينتليون", "سكستيليون",
};
static const char *const APPENDED_GROUP[8] = {
    "", "ألفاً", "مليوناً", "ملياراً", "تريليوناً", "كوادريليوناً", "كوينتليوناً", "سكستيليوناً",
};
static const char *const PLURAL_GROUPS[8] = {
    "", "آلاف", "ملايين", "مليارات", "تريليونات", "كوادريليونات", "كوينتليونات", "سكستيليونات",
};
static const char *const NO_UNIT[4] = {"", "", "", ""};
static const char *const RIYAL[4] = {"ريال", "ريالان", "ريالات", "ريالاً"};
static const char *const HALALA[4] = {"هللة", "هللتان", "هللات", "هللة"};

typedef struct {
    int feminine_units;     /* isCurrencyNameFeminine */
    const char *const *unit, *const *subunit;
    const char *separator;
    uint64_t integer_value; /* int() of the part before the point */
    int decimal_value;      /* the first two decimals */
} ar_state;

static const char *digit_word(const ar_state *S, int d, int level) {
    if (level == -1) return FEM_ONES[d]; /* the sub-unit is feminine in every form */
    if (level == 0) return S->feminine_units ? FEM_ONES[d] : ONES[d];
    return ONES[d];
}

/* process_arabic_group; "hundreds == 0" in the library compares group/100 as a Decimal, which
 * is zero only for an empty group, so those branches never apply. */
static void group_words(const ar_state *S, int g, int level, xtts_sb *o) {
    int tens = g % 100, h = g / 100;
    size_t start = o->len;
#define EMPTY (o->len == start)
    if (h > 0) xtts_sb_puts(o, tens == 0 && h == 2 ? APPENDED_TWOS[0] : HUNDREDS[h]);
    if (tens == 0) return;
    if (tens < 20) {
        if (tens == 2 && h == 0 && level > 0) {
            uint64_t v = S->integer_value;
            int appended = v == 2000 || v == 2000000 || v == 2000000000 || v == 2000000000000 ||
                           v == 2000000000000000 || v == 2000000000000000000;
            o->len = start; /* ret_val = ... (empty here anyway: no hundreds) */
            xtts_sb_puts(o, appended ? APPENDED_TWOS[level] : TWOS[level]);
        } else {
            if (!EMPTY) xtts_sb_puts(o, " و ");
            xtts_sb_puts(o, digit_word(S, tens, level));
        }
    } else {
        int ones = tens % 10, t = tens / 10 - 2;
        if (ones > 0) {
            if (!EMPTY && tens < 60) xtts_sb_puts(o, " و ");
            xtts_sb_puts(o, digit_word(S, ones, level));
        }
        if (!EMPTY && ones != 0) xtts_sb_puts(o, " و ");
        xtts_sb_puts(o, TENS[t]);
    }
#undef EMPTY
}

static void put_unit(const char *const *u, uint64_t v, int is_integer_part, uint64_t whole, xtts_sb *o) {
    int r = (int)(v % 100);
    if (r == 0 || r == 1)
        xtts_sb_puts(o, u[0]);
    else if (r == 2)
        xtts_sb_puts(o, !is_integer_part || whole == 2 ? u[1] : u[0]);
    else if (r <= 10)
        xtts_sb_puts(o, u[2]);
    else
        xtts_sb_puts(o, u[3]);
}

/* convert(value) for value >= 0 given as a double; -1 past what a uint64 holds. */
static int convert(ar_state *S, double value, xtts_sb *out) {
    if (!isfinite(value) || value < 0 || value >= 1.8e19) return -1;
    char num[64];
    snprintf(num, sizeof num, "%.9f", value);
    char *dot = strchr(num, '.');
    uint64_t ip = strtoull(num, NULL, 10);
    S->integer_value = ip;
    S->decimal_value = (dot[1] - '0') * 10 + (dot[2] - '0');
    int all_zero = ip == 0;
    for (char *p = dot + 1; *p; p++)
        if (*p != '0') all_zero = 0;
    if (all_zero) {
        xtts_sb_puts(out, "صفر");
        return 0;
    }
    xtts_sb dec = {0}, ret = {0}, t = {0};
    group_words(S, S->decimal_value, -1, &dec);
    int group = 0;
    for (uint64_t rest = ip; rest > 0; rest /= 1000, group++) {
        int g = (int)(rest % 1000);
        xtts_sb desc = {0};
        group_words(S, g, group, &desc);
        if (desc.len) {
            xtts_sb_clear(&t);
            if (group > 0) {
                if (ret.len) {
                    xtts_sb_puts(&t, " و ");
                    xtts_sb_puts(&t, ret.s);
                    xtts_sb_clear(&ret);
                    xtts_sb_puts(&ret, t.s);
                    xtts_sb_clear(&t);
                }
                if (g != 2) {
                    const char *name;
                    if (g % 100 != 1)
                        name = g >= 3 && g <= 10 ? PLURAL_GROUPS[group] : ret.len ? APPENDED_GROUP[group] : GROUP[group];
                    else
                        name = GROUP[group];
                    xtts_sb_puts(&t, name);
                    xtts_sb_putc(&t, ' ');
                    xtts_sb_puts(&t, ret.s ? ret.s : "");
                    xtts_sb_clear(&ret);
                    xtts_sb_puts(&ret, t.s);
                    xtts_sb_clear(&t);
                }
            }
            xtts_sb_puts(&t, desc.s);
            xtts_sb_putc(&t, ' ');
            xtts_sb_puts(&t, ret.s ? ret.s : "");
            xtts_sb_clear(&ret);
            xtts_sb_puts(&ret, t.s);
        }
        if (desc.failed) out->failed = 1;
        xtts_sb_free(&desc);
    }
    xtts_sb_puts(out, ret.s ? ret.s : "");
    if (ip != 0) put_unit(S->unit, ip, 1, ip, out);
    if (S->decimal_value != 0) {
        xtts_sb_putc(out, ' ');
        xtts_sb_puts(out, S->separator);
        xtts_sb_putc(out, ' ');
        xtts_sb_puts(out, dec.s ? dec.s : "");
        xtts_sb_putc(out, ' ');
        put_unit(S->subunit, S->decimal_value, 0, 0, out);
    }
    if (dec.failed || ret.failed || t.failed) out->failed = 1;
    xtts_sb_free(&dec);
    xtts_sb_free(&ret);
    xtts_sb_free(&t);
    return 0;
}

/* convert() then Python's str.strip() (the words hold no other whitespace than spaces) */
static int convert_strip(ar_state *S, double value, const char *prefix, xtts_sb *out) {
    xtts_sb w = {0};
    int rc = convert(S, value, &w);
    if (rc == 0 && !w.failed) {
        size_t a = 0, b = w.len;
        while (a < b && w.s[a] == ' ') a++;
        while (b > a && w.s[b - 1] == ' ') b--;
        xtts_sb_puts(out, prefix);
        xtts_sb_putn(out, w.s + a, b - a);
    }
    if (w.failed) out->failed = 1;
    xtts_sb_free(&w);
    return rc;
}

static int ar_cardinal_double(double x, xtts_sb *out) {
    ar_state S = {0, NO_UNIT, NO_UNIT, ",", 0, 0};
    return convert_strip(&S, fabs(x), x < 0 ? "سالب " : "", out);
}

static int ar_cardinal(int64_t n, xtts_sb *out) {
    /* "{:.9f}".format(int) goes through a float */
    return ar_cardinal_double((double)n, out);
}

static int ar_ordinal(int64_t n, xtts_sb *out) {
    if (n < 0) return -1;
    if (n <= 19) {
        xtts_sb_puts(out, ORDINAL[n]);
        return 0;
    }
    ar_state S = {n < 100, NO_UNIT, NO_UNIT, "و", 0, 0};
    return convert_strip(&S, (double)n, "", out);
}

static int ar_float(const char *repr, xtts_sb *out) {
    double x = strtod(repr, NULL);
    return ar_cardinal_double(x, out);
}

static int ar_currency(const char *repr, const char *cur, xtts_sb *out) {
    (void)cur;
    double x = strtod(repr, NULL);
    if (x < 0) return -1; /* not followed: the library's groups do not read negative numbers */
    ar_state S = {0, RIYAL, HALALA, "و", 0, 0};
    xtts_sb w = {0};
    int rc = convert(&S, x, &w);
    if (rc == 0 && !w.failed) xtts_sb_puts(out, w.s ? w.s : "");
    if (w.failed) out->failed = 1;
    xtts_sb_free(&w);
    return rc;
}

const xtts_n2w_lang xtts_n2w_ar = {"ar", ar_cardinal, ar_ordinal, ar_float, ar_currency, NULL};
