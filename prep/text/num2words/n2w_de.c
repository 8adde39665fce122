/* n2w_de.c — num2words 0.5.12's number words for "de" (see num2words.h): Num2Word_DE, long
 * scale with capitalised Million/Milliarde/..., its merge, ordinals (with the
 * "hundertste"/"millionste" exceptions) and currency forms ("ein Euro"); and the spoken
 * variant: the same words but "ein" before "tausend" ("einhunderteintausend", where num2words
 * says "einhunderteinstausend"), "ein" before a noun, ordinals in the weak inflection ("am
 * dritten Mai"). */
#include <string.h>

#include "prep/text/num2words/n2w_common_internal.h"
#include "prep/text/num2words/n2w_eu_internal.h"
#include "prep/text/num2words/num2words.h"

static const n2w_card de_cards[] = {
    {1000000000000000000LL, "Trillion"}, {1000000000000000LL, "Billiarde"}, {1000000000000LL, "Billion"},
    {1000000000LL, "Milliarde"}, {1000000LL, "Million"}, {1000, "tausend"}, {100, "hundert"},
    {90, "neunzig"}, {80, "achtzig"}, {70, "siebzig"}, {60, "sechzig"}, {50, "f\xc3\xbcnfzig"},
    {40, "vierzig"}, {30, "drei\xc3\x9fig"}, {20, "zwanzig"}, {19, "neunzehn"}, {18, "achtzehn"},
    {17, "siebzehn"}, {16, "sechzehn"}, {15, "f\xc3\xbcnfzehn"}, {14, "vierzehn"}, {13, "dreizehn"},
    {12, "zw\xc3\xb6lf"}, {11, "elf"}, {10, "zehn"}, {9, "neun"}, {8, "acht"}, {7, "sieben"},
    {6, "sechs"}, {5, "f\xc3\xbcnf"}, {4, "vier"}, {3, "drei"}, {2, "zwei"}, {1, "eins"}, {0, "null"},
};

/* spoken: a number ending in "eins" says "ein" before "tausend" */
static void de_merge_with(const char *ct, int64_t cn, const char *nt, int64_t nn, xtts_sb *o, int64_t *on, int spoken) {
    if (cn == 1) {
        if (nn == 100 || nn == 1000) { xtts_sb_puts(o, "ein"); xtts_sb_puts(o, nt); *on = nn; return; }
        if (nn < 1000000) { xtts_sb_puts(o, nt); *on = nn; return; }
        ct = "eine";
    }
    if (nn > cn) {
        size_t cl = strlen(ct);
        xtts_sb_putn(o, ct, spoken && nn == 1000 && xtts_n2w_endswith(ct, cl, "eins") ? cl - 1 : cl);
        if (nn >= 1000000) xtts_sb_putc(o, ' ');
        xtts_sb_puts(o, nt);
        if (nn >= 1000000 && cn > 1) xtts_sb_puts(o, xtts_n2w_endswith(nt, strlen(nt), "e") ? "n" : "en");
        *on = cn * nn;
        return;
    }
    *on = cn + nn;
    if (nn < 10 && 10 < cn && cn < 100) {
        xtts_sb_puts(o, nn == 1 ? "ein" : nt);
        xtts_sb_puts(o, "und");
        xtts_sb_puts(o, ct);
        return;
    }
    xtts_sb_puts(o, ct);
    if (cn >= 1000000) xtts_sb_putc(o, ' ');
    xtts_sb_puts(o, nt);
}

static void de_merge(const char *ct, int64_t cn, const char *nt, int64_t nn, xtts_sb *o, int64_t *on) {
    de_merge_with(ct, cn, nt, nn, o, on, 0);
}

static void de_merge_spoken(const char *ct, int64_t cn, const char *nt, int64_t nn, xtts_sb *o, int64_t *on) {
    de_merge_with(ct, cn, nt, nn, o, on, 1);
}

static const n2w_eu de_lang = {{N2W_CARDS(de_cards)}, de_merge, "minus"};
static const n2w_eu de_spoken_lang = {{N2W_CARDS(de_cards)}, de_merge_spoken, "minus"};

/* Endings of a cardinal and their ordinal stems (num2words' Num2Word_DE.to_ordinal); the
 * first DE_ORD_OWN are the numbers with stems of their own, which the spoken variant shares. */
static const char *const de_ord_stems[][2] = {
    {"eins", "ers"}, {"drei", "drit"}, {"acht", "ach"}, {"sieben", "sieb"}, {"ig", "igs"}, {"ert", "erts"},
    {"end", "ends"}, {"ion", "ions"}, {"nen", "ns"}, {"rde", "rds"}, {"rden", "rds"},
};
enum { DE_ORD_OWN = 4 };

static int de_cardinal(int64_t n, xtts_sb *out) { return xtts_n2w_eu_cardinal(&de_lang, n, out); }

/* " <[a-z]+(illion|illiard)ste>" at the end of s: the offset of that space, or -1. */
static long big_ordinal_word(const char *s, size_t len) {
    if (!xtts_n2w_endswith(s, len, "illionste") && !xtts_n2w_endswith(s, len, "illiardste")) return -1;
    size_t suf = xtts_n2w_endswith(s, len, "illionste") ? 9 : 10;
    size_t i = len;
    while (i > 0 && s[i - 1] >= 'a' && s[i - 1] <= 'z') i--;
    if (len - i <= suf || i == 0 || s[i - 1] != ' ') return -1;
    return (long)i - 1;
}

static int de_ordinal(int64_t n, xtts_sb *out) {
    const char *const (*ords)[2] = de_ord_stems;
    xtts_sb w = {0}, r = {0};
    if (n < 0 || de_cardinal(n, &w) || w.failed) { xtts_sb_free(&w); return -1; }
    for (size_t i = 0; i < w.len; i++)
        if (w.s[i] >= 'A' && w.s[i] <= 'Z') w.s[i] = (char)(w.s[i] - 'A' + 'a');
    size_t i, n_ords = sizeof de_ord_stems / sizeof de_ord_stems[0];
    for (i = 0; i < n_ords; i++)
        if (xtts_n2w_endswith(w.s, w.len, ords[i][0])) break;
    if (i < n_ords) {
        w.s[w.len - strlen(ords[i][0])] = 0;
        xtts_sb_puts(&r, w.s);
        xtts_sb_puts(&r, ords[i][1]);
    } else xtts_sb_puts(&r, w.s);
    xtts_sb_puts(&r, "te");
    xtts_sb_free(&w);
    if (r.failed) { xtts_sb_free(&r); out->failed = 1; return -1; }
    char *s = r.s;
    size_t len = r.len;
    if (!strcmp(s, "eintausendste") || !strcmp(s, "einhundertste")) { s += 3; len -= 3; }
    long sp = big_ordinal_word(s, len);
    if (sp >= 4 && !memcmp(s + sp - 4, "eine", 4)) {
        /* "eine millionste" -> "millionste" */
        memmove(s + sp - 4, s + sp + 1, len - (size_t)sp);
        len -= 5;
        sp = big_ordinal_word(s, len);
    }
    if (sp > 0) memmove(s + sp, s + sp + 1, len - (size_t)sp), len--;
    xtts_sb_putn(out, s, len);
    xtts_sb_free(&r);
    return 0;
}

static int de_float(const char *repr, xtts_sb *out) { return xtts_n2w_generic_float(repr, "Komma", de_cardinal, out); }

static int de_currency(const char *repr, const char *cur, xtts_sb *out) {
    static const char *const eur[4] = {"Euro", "Euro", "Cent", "Cent"};
    static const char *const usd[4] = {"Dollar", "Dollar", "Cent", "Cent"};
    static const char *const gbp[4] = {"Pfund", "Pfund", "Penny", "Pence"};
    const char *const *f = !strcmp(cur, "EUR") ? eur : !strcmp(cur, "USD") ? usd : !strcmp(cur, "GBP") ? gbp : NULL;
    if (!f) return -1;
    xtts_sb t = {0};
    int rc = xtts_n2w_generic_currency(repr, de_cardinal, f, " und", &t);
    if (!rc && !t.failed) {
        /* result.replace("eins ", "ein ") */
        const char *p = t.s;
        while (*p) {
            if (!strncmp(p, "eins ", 5)) { xtts_sb_puts(out, "ein "); p += 5; }
            else xtts_sb_putc(out, *p++);
        }
    }
    if (t.failed) rc = -1;
    xtts_sb_free(&t);
    return rc;
}

/* ---- the spoken variant ---- */

static int de_spoken_cardinal(uint64_t n, int form, xtts_sb *out) {
    if (n >= XTTS_N2W_SPOKEN_MAX) return -1;
    xtts_sb w = {0};
    int rc = xtts_n2w_eu_cardinal(&de_spoken_lang, (int64_t)n, &w);
    if (!rc && form == XTTS_N2W_BEFORE_NOUN) xtts_n2w_replace_end(&w, "eins", "ein");
    return xtts_n2w_take(&w, rc, out);
}

/* The weak inflection: "-sten" after 20 and up and after round hundreds, the numbers' own stems
 * (ersten, dritten, achten, siebten), "-ten" otherwise. */
static int de_spoken_ordinal(uint64_t n, int fem, xtts_sb *out) {
    (void)fem;
    if (!n || n >= XTTS_N2W_SPOKEN_MAX) return -1;
    xtts_sb w = {0};
    int rc = xtts_n2w_eu_cardinal(&de_spoken_lang, (int64_t)n, &w);
    uint64_t last = n % 100;
    if (!rc && (last >= 20 || (n >= 100 && last == 0))) xtts_sb_puts(&w, "sten");
    else if (!rc) {
        for (size_t i = 0; i < DE_ORD_OWN; i++)
            if (xtts_n2w_replace_end(&w, de_ord_stems[i][0], de_ord_stems[i][1])) break;
        xtts_sb_puts(&w, "ten");
    }
    return xtts_n2w_take(&w, rc, out);
}

static const xtts_n2w_spoken de_spoken = {de_spoken_cardinal, de_spoken_ordinal, NULL};

const xtts_n2w_lang xtts_n2w_de = {"de", de_cardinal, de_ordinal, de_float, de_currency, &de_spoken};
