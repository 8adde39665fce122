/* n2w_fr.c — num2words 0.5.12's number words for "fr" (see num2words.h): Num2Word_FR, long
 * scale (million, milliard, billion, ...), its merge, ordinals and currency forms; and the
 * spoken variant: the same cardinals with a feminine ("vingt et une"), ordinals with
 * "première" and without the plural s ("quatre-vingtième", "deux centième"). */
#include <string.h>

#include "prep/text/num2words/n2w_common_internal.h"
#include "prep/text/num2words/n2w_eu_internal.h"
#include "prep/text/num2words/num2words.h"

static const n2w_card fr_cards[] = {
    {1000000000000000000LL, "trillion"}, {1000000000000000LL, "billiard"}, {1000000000000LL, "billion"},
    {1000000000LL, "milliard"}, {1000000LL, "million"}, {1000, "mille"}, {100, "cent"},
    {80, "quatre-vingts"}, {60, "soixante"}, {50, "cinquante"}, {40, "quarante"}, {30, "trente"},
    {20, "vingt"}, {19, "dix-neuf"}, {18, "dix-huit"}, {17, "dix-sept"}, {16, "seize"}, {15, "quinze"},
    {14, "quatorze"}, {13, "treize"}, {12, "douze"}, {11, "onze"}, {10, "dix"}, {9, "neuf"},
    {8, "huit"}, {7, "sept"}, {6, "six"}, {5, "cinq"}, {4, "quatre"}, {3, "trois"}, {2, "deux"},
    {1, "un"}, {0, "z\xc3\xa9ro"},
};

static void fr_merge(const char *ct, int64_t cn, const char *nt, int64_t nn, xtts_sb *o, int64_t *on) {
    size_t cl = strlen(ct), nl = strlen(nt);
    int nplural = 0;
    if (cn == 1) {
        if (nn < 1000000) { xtts_sb_puts(o, nt); *on = nn; return; }
    } else {
        if ((!((cn - 80) % 100) || (!(cn % 100) && cn < 1000)) && nn < 1000000 && cl && ct[cl - 1] == 's') cl--;
        if (cn < 1000 && nn != 1000 && nl && nt[nl - 1] != 's' && !(nn % 100)) nplural = 1;
    }
    xtts_sb_putn(o, ct, cl);
    if (nn < cn && cn < 100) {
        xtts_sb_puts(o, nn % 10 == 1 && cn != 80 ? " et " : "-");
        *on = cn + nn;
    } else if (nn > cn) {
        xtts_sb_putc(o, ' ');
        *on = cn * nn;
    } else {
        xtts_sb_putc(o, ' ');
        *on = cn + nn;
    }
    xtts_sb_putn(o, nt, nl);
    if (nplural) xtts_sb_putc(o, 's');
}

static const n2w_eu fr_lang = {{N2W_CARDS(fr_cards)}, fr_merge, "moins"};

static int fr_cardinal(int64_t n, xtts_sb *out) { return xtts_n2w_eu_cardinal(&fr_lang, n, out); }

/* spoken: the feminine of premier, and a final plural s dropped (but trois keeps its s) */
static int fr_ordinal_with(int64_t n, int fem, int spoken, xtts_sb *out) {
    if (n < 0) return -1;
    if (n == 1) { xtts_sb_puts(out, fem ? "premi\xc3\xa8re" : "premier"); return 0; }
    xtts_sb w = {0};
    if (fr_cardinal(n, &w) || w.failed) { xtts_sb_free(&w); return -1; }
    if (xtts_n2w_endswith(w.s, w.len, "cinq")) { xtts_sb_putn(out, w.s, w.len - 4); xtts_sb_puts(out, "cinqui\xc3\xa8me"); }
    else if (xtts_n2w_endswith(w.s, w.len, "neuf")) { xtts_sb_putn(out, w.s, w.len - 4); xtts_sb_puts(out, "neuvi\xc3\xa8me"); }
    else {
        size_t l = w.len;
        if (l && (w.s[l - 1] == 'e' || (spoken && w.s[l - 1] == 's' && !xtts_n2w_endswith(w.s, l, "trois")))) l--;
        xtts_sb_putn(out, w.s, l);
        xtts_sb_puts(out, "i\xc3\xa8me");
    }
    xtts_sb_free(&w);
    return 0;
}

static int fr_ordinal(int64_t n, xtts_sb *out) { return fr_ordinal_with(n, 0, 0, out); }

static int fr_float(const char *repr, xtts_sb *out) { return xtts_n2w_generic_float(repr, "virgule", fr_cardinal, out); }

static int fr_currency(const char *repr, const char *cur, xtts_sb *out) {
    static const char *const eur[4] = {"euro", "euros", "centime", "centimes"};
    static const char *const usd[4] = {"dollar", "dollars", "cent", "cents"};
    static const char *const gbp[4] = {"livre", "livres", "penny", "pence"};
    const char *const *f = !strcmp(cur, "EUR") ? eur : !strcmp(cur, "USD") ? usd : !strcmp(cur, "GBP") ? gbp : NULL;
    return f ? xtts_n2w_generic_currency(repr, fr_cardinal, f, " et", out) : -1;
}

/* ---- the spoken variant ---- */

static int fr_spoken_cardinal(uint64_t n, int form, xtts_sb *out) {
    static const char *const scales[] = {"mille", "illion", "illions", "illiard", "illiards", NULL};
    static const char *const une[][2] = {{"un", "une"}};
    if (n >= XTTS_N2W_SPOKEN_MAX) return -1;
    xtts_sb w = {0};
    int rc = fr_cardinal((int64_t)n, &w);
    if (!rc && form == XTTS_N2W_FEM) xtts_n2w_feminine_tail(&w, scales, une, 1, NULL);
    return xtts_n2w_take(&w, rc, out);
}

static int fr_spoken_ordinal(uint64_t n, int fem, xtts_sb *out) {
    return n && n < XTTS_N2W_SPOKEN_MAX ? fr_ordinal_with((int64_t)n, fem, 1, out) : -1;
}

static const xtts_n2w_spoken fr_spoken = {fr_spoken_cardinal, fr_spoken_ordinal, NULL};

const xtts_n2w_lang xtts_n2w_fr = {"fr", fr_cardinal, fr_ordinal, fr_float, fr_currency, &fr_spoken};
