/* n2w_es.c — num2words 0.5.12's number words for "es" (see num2words.h): Num2Word_ES with
 * gender_stem "o", its merge (ciento, quinientos, millones), ordinals (décimo primero
 * written "décimoprimero" as the library does) and currency forms ("un euro", "una libra");
 * and the spoken variant: the same merge with "un" and "veintiún" before mil and millones
 * (num2words: "veintiuno mil"), without billón (a million millions), the feminine
 * (doscientas una), the form before a noun, and ordinals in one word below a hundred
 * (decimotercero, cuadragésimo) and as cardinals from a hundred on. */
#include <math.h>
#include <string.h>

#include "prep/text/num2words/n2w_common_internal.h"
#include "prep/text/num2words/n2w_eu_internal.h"
#include "prep/text/num2words/num2words.h"

static const n2w_card es_cards[] = {
    {1000000000000000000LL, "trill\xc3\xb3n"}, {1000000000000LL, "bill\xc3\xb3n"}, {1000000LL, "mill\xc3\xb3n"},
    {1000, "mil"}, {100, "cien"}, {90, "noventa"}, {80, "ochenta"}, {70, "setenta"}, {60, "sesenta"},
    {50, "cincuenta"}, {40, "cuarenta"}, {30, "treinta"}, {29, "veintinueve"}, {28, "veintiocho"},
    {27, "veintisiete"}, {26, "veintis\xc3\xa9is"}, {25, "veinticinco"}, {24, "veinticuatro"},
    {23, "veintitr\xc3\xa9s"}, {22, "veintid\xc3\xb3s"}, {21, "veintiuno"}, {20, "veinte"}, {19, "diecinueve"},
    {18, "dieciocho"}, {17, "diecisiete"}, {16, "diecis\xc3\xa9is"}, {15, "quince"}, {14, "catorce"},
    {13, "trece"}, {12, "doce"}, {11, "once"}, {10, "diez"}, {9, "nueve"}, {8, "ocho"}, {7, "siete"},
    {6, "seis"}, {5, "cinco"}, {4, "cuatro"}, {3, "tres"}, {2, "dos"}, {1, "uno"}, {0, "cero"},
};

/* s without its last k code points */
static size_t drop_chars(const char *s, size_t len, int k) {
    while (k-- > 0 && len > 0) {
        len--;
        while (len > 0 && ((unsigned char)s[len] & 0xC0) == 0x80) len--;
    }
    return len;
}

/* ct before mil or millones; with apocope (spoken) "veintiuno" -> "veintiún", "uno" -> "un" */
static void put_multiplier(xtts_sb *o, const char *ct, int apocope) {
    size_t cl = strlen(ct);
    if (apocope && xtts_n2w_endswith(ct, cl, "veintiuno")) {
        xtts_sb_putn(o, ct, cl - 3);
        xtts_sb_puts(o, "\xc3\xban");
    } else xtts_sb_putn(o, ct, apocope && xtts_n2w_endswith(ct, cl, "uno") ? cl - 1 : cl);
}

static void es_merge_with(const char *ct, int64_t cn, const char *nt, int64_t nn, xtts_sb *o, int64_t *on, int apocope) {
    int ciento = 0;
    if (cn == 1) {
        if (nn < 1000000) { xtts_sb_puts(o, nt); *on = nn; return; }
        ct = "un";
    } else if (cn == 100 && nn % 1000 != 0) ciento = 1;
    /* spoken, without billón: a million millions multiplies though its left side is larger */
    if (nn < cn && !(apocope && nn == 1000000)) {
        xtts_sb_puts(o, ct);
        if (ciento) xtts_sb_puts(o, "to");
        xtts_sb_puts(o, cn < 100 ? " y " : " ");
        xtts_sb_puts(o, nt);
        *on = cn + nn;
        return;
    }
    size_t nl = strlen(nt);
    int lones = !(nn % 1000000) && cn > 1;
    if (nn == 100) {
        if (cn == 5) { xtts_sb_puts(o, "quinien"); xtts_sb_puts(o, "tos"); *on = cn * nn; return; }
        xtts_sb_puts(o, cn == 7 ? "sete" : cn == 9 ? "nove" : ct);
        if (ciento && cn != 7 && cn != 9) xtts_sb_puts(o, "to");
        xtts_sb_putn(o, nt, lones ? drop_chars(nt, nl, 3) : nl);
        if (lones) xtts_sb_puts(o, "lones");
        xtts_sb_puts(o, "tos");
    } else {
        put_multiplier(o, ct, apocope);
        if (ciento) xtts_sb_puts(o, "to");
        xtts_sb_putc(o, ' ');
        xtts_sb_putn(o, nt, lones ? drop_chars(nt, nl, 3) : nl);
        if (lones) xtts_sb_puts(o, "lones");
    }
    *on = cn * nn;
}

static void es_merge(const char *ct, int64_t cn, const char *nt, int64_t nn, xtts_sb *o, int64_t *on) {
    es_merge_with(ct, cn, nt, nn, o, on, 0);
}

static void es_merge_spoken(const char *ct, int64_t cn, const char *nt, int64_t nn, xtts_sb *o, int64_t *on) {
    es_merge_with(ct, cn, nt, nn, o, on, 1);
}

static const n2w_eu es_lang = {{N2W_CARDS(es_cards)}, es_merge, "menos"};
/* spoken: the cards from millón down (no billón, trillón) */
static const n2w_eu es_spoken_lang = {{{es_cards + 2, sizeof es_cards / sizeof es_cards[0] - 2}}, es_merge_spoken, "menos"};

static int es_cardinal(int64_t n, xtts_sb *out) { return xtts_n2w_eu_cardinal(&es_lang, n, out); }

static const char *es_ord_stem(int64_t v) {
    static const struct { int64_t v; const char *w; } t[] = {
        {1, "primer"}, {2, "segund"}, {3, "tercer"}, {4, "cuart"}, {5, "quint"}, {6, "sext"},
        {7, "s\xc3\xa9ptim"}, {8, "octav"}, {9, "noven"}, {10, "d\xc3\xa9" "cim"}, {20, "vig\xc3\xa9sim"},
        {30, "trig\xc3\xa9sim"}, {40, "quadrag\xc3\xa9sim"}, {50, "quincuag\xc3\xa9sim"}, {60, "sexag\xc3\xa9sim"},
        {70, "septuag\xc3\xa9sim"}, {80, "octog\xc3\xa9sim"}, {90, "nonag\xc3\xa9sim"}, {100, "cent\xc3\xa9sim"},
        {200, "ducent\xc3\xa9sim"}, {300, "tricent\xc3\xa9sim"}, {400, "cuadrigent\xc3\xa9sim"},
        {500, "quingent\xc3\xa9sim"}, {600, "sexcent\xc3\xa9sim"}, {700, "septigent\xc3\xa9sim"},
        {800, "octigent\xc3\xa9sim"}, {900, "noningent\xc3\xa9sim"}, {1000, "mil\xc3\xa9sim"},
        {1000000, "millon\xc3\xa9sim"}, {1000000000LL, "billon\xc3\xa9sim"}, {1000000000000LL, "trillon\xc3\xa9sim"},
        {1000000000000000LL, "cuadrillon\xc3\xa9sim"},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (t[i].v == v) return t[i].w;
    return NULL;
}

/* to_ordinal before its final strip(); -1 on failure (Python would raise). */
static int es_ordinal_raw(int64_t v, xtts_sb *o, int depth) {
    if (depth > 40) return -1;
    if (v == 0) return 0;
    if (v <= 10) { xtts_sb_puts(o, es_ord_stem(v)); xtts_sb_putc(o, 'o'); return 0; }
    xtts_sb inner = {0};
    int rc = 0;
    if (v <= 12) {
        xtts_sb_puts(o, es_ord_stem(10));
        xtts_sb_putc(o, 'o');
        rc = es_ordinal_raw(v - 10, &inner, depth + 1);
    } else if (v <= 1000) {
        int64_t d = v <= 100 ? (v / 10) * 10 : (v / 100) * 100;
        xtts_sb_puts(o, es_ord_stem(d));
        xtts_sb_puts(o, "o ");
        rc = es_ordinal_raw(v - d, &inner, depth + 1);
    } else if (v < 1000000000000000000LL) {
        int k = (int)(log((double)v) / log(1000.0)); /* int(math.log(int(value), 1000)) */
        int64_t dec = 1;
        for (int i = 0; i < k; i++) dec *= 1000;
        const char *stem = es_ord_stem(dec);
        if (!stem) return -1;
        int64_t high = v / dec, low = v % dec;
        if (high != 1) rc = es_cardinal(high, o);
        xtts_sb_puts(o, stem);
        xtts_sb_puts(o, "o ");
        if (!rc) rc = es_ordinal_raw(low, &inner, depth + 1);
    } else rc = es_cardinal(v, o);
    /* the inner call strips its own result */
    if (!rc && inner.len) {
        size_t a = 0, b = inner.len;
        while (a < b && inner.s[a] == ' ') a++;
        while (b > a && inner.s[b - 1] == ' ') b--;
        xtts_sb_putn(o, inner.s + a, b - a);
    }
    if (inner.failed) rc = -1;
    xtts_sb_free(&inner);
    return rc;
}

static int es_ordinal(int64_t n, xtts_sb *out) {
    xtts_sb o = {0};
    if (n < 0 || es_ordinal_raw(n, &o, 0) || o.failed) { xtts_sb_free(&o); return -1; }
    size_t a = 0, b = o.len;
    while (a < b && o.s[a] == ' ') a++;
    while (b > a && o.s[b - 1] == ' ') b--;
    xtts_sb_putn(out, o.s ? o.s + a : "", b - a);
    xtts_sb_free(&o);
    return 0;
}

static int es_float(const char *repr, xtts_sb *out) { return xtts_n2w_generic_float(repr, "punto", es_cardinal, out); }

static void replace_into(const char *s, size_t len, const char *from, const char *to, xtts_sb *o) {
    size_t fl = strlen(from);
    for (size_t i = 0; i < len;) {
        if (i + fl <= len && !memcmp(s + i, from, fl)) { xtts_sb_puts(o, to); i += fl; }
        else xtts_sb_putc(o, s[i++]);
    }
}

/* part.replace(from, to) for a list of pairs */
static void fix_part(const char *s, const char *const (*pairs)[2], size_t n, xtts_sb *out) {
    xtts_sb a = {0}, b = {0};
    xtts_sb_puts(&a, s);
    xtts_sb_cstr(&a);
    for (size_t i = 0; i < n; i++) {
        xtts_sb_clear(&b);
        xtts_sb_cstr(&b);
        replace_into(a.s, a.len, pairs[i][0], pairs[i][1], &b);
        xtts_sb_swap(&a, &b);
    }
    if (a.failed) out->failed = 1;
    xtts_sb_puts(out, a.s ? a.s : "");
    xtts_sb_free(&a);
    xtts_sb_free(&b);
}

static int es_currency(const char *repr, const char *cur, xtts_sb *out) {
    static const char *const eur[4] = {"euro", "euros", "c\xc3\xa9ntimo", "c\xc3\xa9ntimos"};
    static const char *const usd[4] = {"d\xc3\xb3lar", "d\xc3\xb3lares", "centavo", "centavos"};
    static const char *const gbp[4] = {"libra", "libras", "penique", "peniques"};
    static const char *const una[][2] = {{"uno", "una"}, {"cientos", "cientas"}, {"veintiuno", "veinti\xc3\xban"}, {"uno", "un"}};
    int fem = !strcmp(cur, "GBP");
    const char *const *f = !strcmp(cur, "EUR") ? eur : !strcmp(cur, "USD") ? usd : fem ? gbp : NULL;
    if (!f) return -1;
    xtts_sb t = {0};
    int rc = xtts_n2w_generic_currency(repr, es_cardinal, f, " con", &t);
    if (rc || t.failed) { xtts_sb_free(&t); return -1; }
    char *sep = strstr(t.s, " con ");
    if (sep) *sep = 0;
    fix_part(t.s, fem ? una : una + 2, fem ? 4 : 2, out);
    if (sep) {
        xtts_sb_puts(out, " con ");
        fix_part(sep + 5, una + 2, 2, out);
    }
    xtts_sb_free(&t);
    return out->failed ? -1 : 0;
}

/* ---- the spoken variant ---- */

static int es_spoken_cardinal(uint64_t n, int form, xtts_sb *out) {
    static const char *const scales[] = {"ll\xc3\xb3n", "llones", NULL};
    static const char *const una[][2] = {{"uno", "una"}, {"un", "una"}, {"veintiuno", "veintiuna"},
                                         {"veinti\xc3\xban", "veintiuna"}};
    static const char *const ientas[2] = {"ientos", "ientas"};
    if (n >= XTTS_N2W_SPOKEN_MAX) return -1;
    xtts_sb w = {0};
    int rc = xtts_n2w_eu_cardinal(&es_spoken_lang, (int64_t)n, &w);
    if (!rc && form == XTTS_N2W_FEM) xtts_n2w_feminine_tail(&w, scales, una, 4, ientas);
    if (!rc && form == XTTS_N2W_BEFORE_NOUN && !xtts_n2w_replace_end(&w, "veintiuno", "veinti\xc3\xban"))
        xtts_n2w_replace_end(&w, "uno", "un");
    return xtts_n2w_take(&w, rc, out);
}

/* The ordinal word of 1..99: num2words' stems, but cuadragésimo (num2words: quadragésimo),
 * undécimo, duodécimo and decimotercero... in one word (num2words: décimo tercero). */
static void es_spoken_ordinal_word(uint64_t n, xtts_sb *o) {
    if (n >= 20) {
        xtts_sb_puts(o, n / 10 == 4 ? "cuadrag\xc3\xa9sim" : es_ord_stem((int64_t)(n / 10 * 10)));
        xtts_sb_putc(o, 'o');
        if (n % 10) xtts_sb_putc(o, ' ');
        n %= 10;
    } else if (n == 11 || n == 12) {
        xtts_sb_puts(o, n == 11 ? "und\xc3\xa9" "cimo" : "duod\xc3\xa9" "cimo");
        return;
    } else if (n > 12) {
        xtts_sb_puts(o, n == 18 ? "decim" : "decimo"); /* decimoctavo */
        n -= 10;
    }
    if (n) { xtts_sb_puts(o, es_ord_stem((int64_t)n)); xtts_sb_putc(o, 'o'); }
}

static int es_spoken_ordinal(uint64_t n, int fem, xtts_sb *out) {
    if (!n || n >= XTTS_N2W_SPOKEN_MAX) return -1;
    if (n >= 100) return es_spoken_cardinal(n, fem ? XTTS_N2W_FEM : XTTS_N2W_MASC, out);
    xtts_sb w = {0};
    es_spoken_ordinal_word(n, &w);
    if (fem) xtts_n2w_feminine_o(&w);
    return xtts_n2w_take(&w, 0, out);
}

static const xtts_n2w_spoken es_spoken = {es_spoken_cardinal, es_spoken_ordinal, NULL};

const xtts_n2w_lang xtts_n2w_es = {"es", es_cardinal, es_ordinal, es_float, es_currency, &es_spoken};
