/* n2w_nl.c — num2words 0.5.12's number words for "nl" (see num2words.h): Num2Word_NL, long
 * scale (miljoen, miljard, biljoen, ...), its merge, ordinals and currency forms (never
 * plural). */
#include <string.h>

#include "prep/text/num2words/n2w_eu_internal.h"
#include "prep/text/num2words/num2words.h"

static const n2w_card nl_cards[] = {
    {1000000000000000000LL, "triljoen"}, {1000000000000000LL, "biljard"}, {1000000000000LL, "biljoen"},
    {1000000000LL, "miljard"}, {1000000LL, "miljoen"}, {1000, "duizend"}, {100, "honderd"},
    {90, "negentig"}, {80, "tachtig"}, {70, "zeventig"}, {60, "zestig"}, {50, "vijftig"},
    {40, "veertig"}, {30, "dertig"}, {20, "twintig"}, {19, "negentien"}, {18, "achttien"},
    {17, "zeventien"}, {16, "zestien"}, {15, "vijftien"}, {14, "veertien"}, {13, "dertien"},
    {12, "twaalf"}, {11, "elf"}, {10, "tien"}, {9, "negen"}, {8, "acht"}, {7, "zeven"}, {6, "zes"},
    {5, "vijf"}, {4, "vier"}, {3, "drie"}, {2, "twee"}, {1, "\xc3\xa9\xc3\xa9n"}, {0, "nul"},
};

static void nl_merge(const char *ct, int64_t cn, const char *nt, int64_t nn, xtts_sb *o, int64_t *on) {
    if (cn == 1) {
        if (nn < 1000000) { xtts_sb_puts(o, nt); *on = nn; return; }
        ct = "een";
    }
    if (nn > cn) {
        xtts_sb_puts(o, ct);
        if (nn >= 1000000) xtts_sb_putc(o, ' ');
        xtts_sb_puts(o, nt);
        *on = cn * nn;
        return;
    }
    *on = cn + nn;
    if (nn < 10 && 10 < cn && cn < 100) {
        /* units first: "een" + "en"/"ën" + tens */
        const char *u = nn == 1 ? "een" : nt;
        xtts_sb_puts(o, u);
        xtts_sb_puts(o, xtts_n2w_endswith(u, strlen(u), "e") ? "\xc3\xabn" : "en");
        xtts_sb_puts(o, ct);
        return;
    }
    xtts_sb_puts(o, ct);
    if (cn >= 1000000) xtts_sb_putc(o, ' ');
    xtts_sb_puts(o, nt);
}

static const n2w_eu nl_lang = {{N2W_CARDS(nl_cards)}, nl_merge, "min"};

static int nl_cardinal(int64_t n, xtts_sb *out) { return xtts_n2w_eu_cardinal(&nl_lang, n, out); }

static int nl_ordinal(int64_t n, xtts_sb *out) {
    static const char *const ords[][2] = {
        {"nul", "nuld"}, {"\xc3\xa9\xc3\xa9n", "eerst"}, {"twee", "tweed"}, {"drie", "derd"}, {"vier", "vierd"},
        {"vijf", "vijfd"}, {"zes", "zesd"}, {"zeven", "zevend"}, {"acht", "achtst"}, {"negen", "negend"},
        {"tien", "tiend"}, {"elf", "elfd"}, {"twaalf", "twaalfd"}, {"ig", "igst"}, {"erd", "erdst"},
        {"end", "endst"}, {"joen", "joenst"}, {"rd", "rdst"},
    };
    xtts_sb w = {0};
    if (n < 0 || nl_cardinal(n, &w) || w.failed) { xtts_sb_free(&w); return -1; }
    size_t i, n_ords = sizeof ords / sizeof ords[0];
    for (i = 0; i < n_ords; i++)
        if (xtts_n2w_endswith(w.s, w.len, ords[i][0])) break;
    if (i < n_ords) {
        size_t k = strlen(ords[i][0]);
        xtts_sb_putn(out, w.s, w.len > k ? w.len - k : 0);
        xtts_sb_puts(out, ords[i][1]);
    } else xtts_sb_putn(out, w.s, w.len);
    xtts_sb_putc(out, 'e');
    xtts_sb_free(&w);
    return 0;
}

static int nl_float(const char *repr, xtts_sb *out) { return xtts_n2w_generic_float(repr, "komma", nl_cardinal, out); }

static int nl_currency(const char *repr, const char *cur, xtts_sb *out) {
    static const char *const eur[4] = {"euro", "euro", "cent", "cent"};
    static const char *const usd[4] = {"dollar", "dollar", "cent", "cent"};
    static const char *const gbp[4] = {"pond", "pond", "penny", "penny"};
    const char *const *f = !strcmp(cur, "EUR") ? eur : !strcmp(cur, "USD") ? usd : !strcmp(cur, "GBP") ? gbp : NULL;
    return f ? xtts_n2w_generic_currency(repr, nl_cardinal, f, ",", out) : -1;
}

const xtts_n2w_lang xtts_n2w_nl = {"nl", nl_cardinal, nl_ordinal, nl_float, nl_currency, NULL};
