/* n2w_en.c — num2words 0.5.12's number words for "en" (see num2words.h): Num2Word_EN, its
 * cards (short scale), merge, ordinal suffixes and the EUR/USD/GBP forms of Num2Word_EU;
 * and the spoken variant: the same merge without "and" and commas (American English), its
 * ordinals, and years read as years. */
#include <stdio.h>
#include <string.h>

#include "prep/text/num2words/n2w_common_internal.h"
#include "prep/text/num2words/n2w_eu_internal.h"
#include "prep/text/num2words/num2words.h"

static const n2w_card en_cards[] = {
    {1000000000000000000LL, "quintillion"}, {1000000000000000LL, "quadrillion"}, {1000000000000LL, "trillion"},
    {1000000000LL, "billion"}, {1000000LL, "million"}, {1000, "thousand"}, {100, "hundred"},
    {90, "ninety"}, {80, "eighty"}, {70, "seventy"}, {60, "sixty"}, {50, "fifty"}, {40, "forty"},
    {30, "thirty"}, {20, "twenty"}, {19, "nineteen"}, {18, "eighteen"}, {17, "seventeen"},
    {16, "sixteen"}, {15, "fifteen"}, {14, "fourteen"}, {13, "thirteen"}, {12, "twelve"},
    {11, "eleven"}, {10, "ten"}, {9, "nine"}, {8, "eight"}, {7, "seven"}, {6, "six"},
    {5, "five"}, {4, "four"}, {3, "three"}, {2, "two"}, {1, "one"}, {0, "zero"},
};

/* and_word joins hundreds and what follows them, comma a thousand and hundreds (num2words:
 * " and ", ", "; spoken: " ", " "). */
static void en_merge_with(const char *lt, int64_t ln, const char *rt, int64_t rn, xtts_sb *o, int64_t *on,
                          const char *and_word, const char *comma) {
    if (ln == 1 && rn < 100) { xtts_sb_puts(o, rt); *on = rn; return; }
    xtts_sb_puts(o, lt);
    if (100 > ln && ln > rn) { xtts_sb_putc(o, '-'); *on = ln + rn; }
    else if (ln >= 100 && 100 > rn) { xtts_sb_puts(o, and_word); *on = ln + rn; }
    else if (rn > ln) { xtts_sb_putc(o, ' '); *on = ln * rn; }
    else { xtts_sb_puts(o, comma); *on = ln + rn; }
    xtts_sb_puts(o, rt);
}

static void en_merge(const char *lt, int64_t ln, const char *rt, int64_t rn, xtts_sb *o, int64_t *on) {
    en_merge_with(lt, ln, rt, rn, o, on, " and ", ", ");
}

static void en_merge_spoken(const char *lt, int64_t ln, const char *rt, int64_t rn, xtts_sb *o, int64_t *on) {
    en_merge_with(lt, ln, rt, rn, o, on, " ", " ");
}

static const n2w_eu en_lang = {{N2W_CARDS(en_cards)}, en_merge, "minus"};
static const n2w_eu en_spoken_lang = {{N2W_CARDS(en_cards)}, en_merge_spoken, "minus"};

static int en_cardinal(int64_t n, xtts_sb *out) { return xtts_n2w_eu_cardinal(&en_lang, n, out); }

/* The ordinal of the words cardinal gives for n: its last word made ordinal. */
static int en_ordinal_of(int (*cardinal)(int64_t, xtts_sb *), int64_t n, xtts_sb *out) {
    static const char *const ords[][2] = {
        {"one", "first"}, {"two", "second"}, {"three", "third"}, {"four", "fourth"}, {"five", "fifth"},
        {"six", "sixth"}, {"seven", "seventh"}, {"eight", "eighth"}, {"nine", "ninth"}, {"ten", "tenth"},
        {"eleven", "eleventh"}, {"twelve", "twelfth"},
    };
    xtts_sb c = {0};
    if (n < 0 || cardinal(n, &c) || c.failed) { xtts_sb_free(&c); return -1; }
    /* the last word after the last space, then after its last hyphen */
    size_t cut = c.len;
    while (cut > 0 && c.s[cut - 1] != ' ' && c.s[cut - 1] != '-') cut--;
    const char *last = c.s + cut;
    xtts_sb_putn(out, c.s, cut);
    size_t i;
    for (i = 0; i < sizeof ords / sizeof ords[0]; i++)
        if (!strcmp(last, ords[i][0])) break;
    if (i < sizeof ords / sizeof ords[0]) xtts_sb_puts(out, ords[i][1]);
    else {
        size_t ll = strlen(last);
        if (ll && last[ll - 1] == 'y') { xtts_sb_putn(out, last, ll - 1); xtts_sb_puts(out, "ie"); }
        else xtts_sb_puts(out, last);
        xtts_sb_puts(out, "th");
    }
    xtts_sb_free(&c);
    return 0;
}

static int en_ordinal(int64_t n, xtts_sb *out) { return en_ordinal_of(en_cardinal, n, out); }

static int en_float(const char *repr, xtts_sb *out) { return xtts_n2w_generic_float(repr, "point", en_cardinal, out); }

static int en_currency(const char *repr, const char *cur, xtts_sb *out) {
    static const char *const eur[4] = {"euro", "euro", "cent", "cents"};
    static const char *const usd[4] = {"dollar", "dollars", "cent", "cents"};
    static const char *const gbp[4] = {"pound sterling", "pounds sterling", "penny", "pence"};
    const char *const *f = !strcmp(cur, "EUR") ? eur : !strcmp(cur, "USD") ? usd : !strcmp(cur, "GBP") ? gbp : NULL;
    return f ? xtts_n2w_generic_currency(repr, en_cardinal, f, ",", out) : -1;
}

/* ---- the spoken variant ---- */

static int en_spoken_words(int64_t n, xtts_sb *out) { return xtts_n2w_eu_cardinal(&en_spoken_lang, n, out); }

static int en_spoken_cardinal(uint64_t n, int form, xtts_sb *out) {
    (void)form;
    return n < XTTS_N2W_SPOKEN_MAX ? en_spoken_words((int64_t)n, out) : -1;
}

static int en_spoken_ordinal(uint64_t n, int fem, xtts_sb *out) {
    (void)fem;
    return n && n < XTTS_N2W_SPOKEN_MAX ? en_ordinal_of(en_spoken_words, (int64_t)n, out) : -1;
}

/* 1984 nineteen eighty-four, 1900 nineteen hundred, 1905 nineteen oh five; as a cardinal the
 * years of a round thousand's first decade (2005 two thousand five) and outside 1000..9999. */
static int en_spoken_year(uint64_t n, xtts_sb *out) {
    int64_t hi = (int64_t)n / 100, lo = (int64_t)n % 100;
    if (n < 1000 || n > 9999 || (hi % 10 == 0 && lo < 10) || (n >= 2000 && n < 2010))
        return en_spoken_cardinal(n, XTTS_N2W_MASC, out);
    xtts_sb y = {0};
    en_spoken_words(hi, &y);
    if (lo == 0) xtts_sb_puts(&y, " hundred");
    else {
        xtts_sb_puts(&y, lo < 10 ? " oh " : " ");
        en_spoken_words(lo, &y);
    }
    return xtts_n2w_take(&y, 0, out);
}

static const xtts_n2w_spoken en_spoken = {en_spoken_cardinal, en_spoken_ordinal, en_spoken_year};

const xtts_n2w_lang xtts_n2w_en = {"en", en_cardinal, en_ordinal, en_float, en_currency, &en_spoken};
