/* numbers.c — numbers as words (see numbers.h). The word lists are the tables at the top;
 * the composition rules of each language follow them. */
#include "prep/text/normalize/numbers.h"

#include <stdio.h>
#include <string.h>

enum { EN = 0, ES = 1, FR = 2, DE = 3, IT = 4, PT = 5 };

/* ---- word tables ------------------------------------------------------------- */

static const char *const en_small[20] = {"zero", "one", "two", "three", "four", "five", "six", "seven", "eight",
                                         "nine", "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen",
                                         "sixteen", "seventeen", "eighteen", "nineteen"};
static const char *const en_tens[10] = {"", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"};

static const char *const es_small[30] = {
    "cero", "uno", "dos", "tres", "cuatro", "cinco", "seis", "siete", "ocho", "nueve",
    "diez", "once", "doce", "trece", "catorce", "quince", "dieciséis", "diecisiete", "dieciocho", "diecinueve",
    "veinte", "veintiuno", "veintidós", "veintitrés", "veinticuatro", "veinticinco", "veintiséis", "veintisiete",
    "veintiocho", "veintinueve"};
static const char *const es_tens[10] = {"", "", "", "treinta", "cuarenta", "cincuenta", "sesenta", "setenta", "ochenta", "noventa"};
static const char *const es_hundreds[10] = {"", "ciento", "doscientos", "trescientos", "cuatrocientos", "quinientos",
                                            "seiscientos", "setecientos", "ochocientos", "novecientos"};

static const char *const fr_small[20] = {"zéro", "un", "deux", "trois", "quatre", "cinq", "six", "sept", "huit", "neuf",
                                         "dix", "onze", "douze", "treize", "quatorze", "quinze", "seize", "dix-sept",
                                         "dix-huit", "dix-neuf"};
static const char *const fr_tens[7] = {"", "", "vingt", "trente", "quarante", "cinquante", "soixante"};

static const char *const de_small[20] = {"null", "eins", "zwei", "drei", "vier", "fünf", "sechs", "sieben", "acht", "neun",
                                         "zehn", "elf", "zwölf", "dreizehn", "vierzehn", "fünfzehn", "sechzehn",
                                         "siebzehn", "achtzehn", "neunzehn"};
static const char *const de_tens[10] = {"", "", "zwanzig", "dreißig", "vierzig", "fünfzig", "sechzig", "siebzig", "achtzig", "neunzig"};

static const char *const it_small[20] = {"zero", "uno", "due", "tre", "quattro", "cinque", "sei", "sette", "otto", "nove",
                                         "dieci", "undici", "dodici", "tredici", "quattordici", "quindici", "sedici",
                                         "diciassette", "diciotto", "diciannove"};
static const char *const it_tens[10] = {"", "", "venti", "trenta", "quaranta", "cinquanta", "sessanta", "settanta", "ottanta", "novanta"};

static const char *const pt_small[20] = {"zero", "um", "dois", "três", "quatro", "cinco", "seis", "sete", "oito", "nove",
                                         "dez", "onze", "doze", "treze", "catorze", "quinze", "dezesseis", "dezessete",
                                         "dezoito", "dezenove"};
static const char *const pt_tens[10] = {"", "", "vinte", "trinta", "quarenta", "cinquenta", "sessenta", "setenta", "oitenta", "noventa"};
static const char *const pt_hundreds[10] = {"", "cento", "duzentos", "trezentos", "quatrocentos", "quinhentos",
                                            "seiscentos", "setecentos", "oitocentos", "novecentos"};

/* Large scales: word for 10^(3k) in singular and plural, k = 2 (million), 3, 4. */
typedef struct { const char *one, *many; } scale_words;
static const scale_words en_scales[5] = {{0, 0}, {0, 0}, {"million", "million"}, {"billion", "billion"}, {"trillion", "trillion"}};
static const scale_words fr_scales[5] = {{0, 0}, {0, 0}, {"million", "millions"}, {"milliard", "milliards"}, {"billion", "billions"}};
static const scale_words de_scales[5] = {{0, 0}, {0, 0}, {"Million", "Millionen"}, {"Milliarde", "Milliarden"}, {"Billion", "Billionen"}};
static const scale_words it_scales[5] = {{0, 0}, {0, 0}, {"milione", "milioni"}, {"miliardo", "miliardi"}, {"bilione", "bilioni"}};
static const scale_words pt_scales[5] = {{0, 0}, {0, 0}, {"milhão", "milhões"}, {"bilhão", "bilhões"}, {"trilhão", "trilhões"}};

/* Ordinals with their own words. */
static const char *const es_ord_units[10] = {"", "primero", "segundo", "tercero", "cuarto", "quinto", "sexto", "séptimo", "octavo", "noveno"};
static const char *const es_ord_teens[10] = {"décimo", "undécimo", "duodécimo", "decimotercero", "decimocuarto", "decimoquinto",
                                             "decimosexto", "decimoséptimo", "decimoctavo", "decimonoveno"};
static const char *const es_ord_tens[10] = {"", "", "vigésimo", "trigésimo", "cuadragésimo", "quincuagésimo", "sexagésimo",
                                            "septuagésimo", "octogésimo", "nonagésimo"};
static const char *const pt_ord_units[10] = {"", "primeiro", "segundo", "terceiro", "quarto", "quinto", "sexto", "sétimo", "oitavo", "nono"};
static const char *const pt_ord_tens[10] = {"", "décimo", "vigésimo", "trigésimo", "quadragésimo", "quinquagésimo", "sexagésimo",
                                            "septuagésimo", "octogésimo", "nonagésimo"};
static const char *const it_ord_units[11] = {"", "primo", "secondo", "terzo", "quarto", "quinto", "sesto", "settimo", "ottavo",
                                             "nono", "decimo"};
static const char *const en_ord_irregular[][2] = {{"one", "first"}, {"two", "second"}, {"three", "third"}, {"five", "fifth"},
                                                  {"eight", "eighth"}, {"nine", "ninth"}, {"twelve", "twelfth"}};

int xtts_num_supported(int lang) { return lang >= EN && lang <= PT; }

static void sp(xtts_sb *b) {
    if (b->len && xtts_sb_last(b) != ' ') xtts_sb_putc(b, ' ');
}

/* ---- below one thousand -------------------------------------------------------- */

static void en_999(unsigned n, xtts_sb *b) {
    if (n >= 100) {
        xtts_sb_puts(b, en_small[n / 100]);
        xtts_sb_puts(b, " hundred");
        n %= 100;
        if (!n) return;
        xtts_sb_putc(b, ' ');
    }
    if (n < 20) { xtts_sb_puts(b, en_small[n]); return; }
    xtts_sb_puts(b, en_tens[n / 10]);
    if (n % 10) { xtts_sb_putc(b, '-'); xtts_sb_puts(b, en_small[n % 10]); }
}

static void es_999(unsigned n, int fem, xtts_sb *b) {
    if (n == 100) { xtts_sb_puts(b, "cien"); return; }
    if (n >= 100) {
        const char *h = es_hundreds[n / 100];
        if (fem && n / 100 >= 2) {
            size_t l = strlen(h);
            xtts_sb_putn(b, h, l - 2);
            xtts_sb_puts(b, "as");
        } else {
            xtts_sb_puts(b, h);
        }
        n %= 100;
        if (!n) return;
        xtts_sb_putc(b, ' ');
    }
    if (n < 30) {
        if (fem && n == 1) xtts_sb_puts(b, "una");
        else if (fem && n == 21) xtts_sb_puts(b, "veintiuna");
        else xtts_sb_puts(b, es_small[n]);
        return;
    }
    xtts_sb_puts(b, es_tens[n / 10]);
    if (n % 10) {
        xtts_sb_puts(b, " y ");
        xtts_sb_puts(b, fem && n % 10 == 1 ? "una" : es_small[n % 10]);
    }
}

/* plural_s: 80 and 200..900 take an -s when they end the number (not before mille). */
static void fr_99(unsigned n, int fem, int plural_s, xtts_sb *b) {
    if (n < 17 || (n >= 17 && n < 20)) {
        xtts_sb_puts(b, n == 1 && fem ? "une" : fr_small[n]);
        return;
    }
    if (n < 70) {
        xtts_sb_puts(b, fr_tens[n / 10]);
        unsigned u = n % 10;
        if (u == 1) xtts_sb_puts(b, fem ? " et une" : " et un");
        else if (u) { xtts_sb_putc(b, '-'); xtts_sb_puts(b, fr_small[u]); }
        return;
    }
    if (n < 80) {
        xtts_sb_puts(b, "soixante");
        if (n == 71) { xtts_sb_puts(b, " et onze"); return; }
        xtts_sb_putc(b, '-');
        xtts_sb_puts(b, fr_small[n - 60]);
        return;
    }
    if (n == 80) { xtts_sb_puts(b, plural_s ? "quatre-vingts" : "quatre-vingt"); return; }
    xtts_sb_puts(b, "quatre-vingt-");
    xtts_sb_puts(b, n - 80 == 1 && fem ? "une" : fr_small[n - 80]);
}

static void fr_999(unsigned n, int fem, int plural_s, xtts_sb *b) {
    if (n >= 100) {
        unsigned h = n / 100, r = n % 100;
        if (h > 1) { xtts_sb_puts(b, fr_small[h]); xtts_sb_putc(b, ' '); }
        xtts_sb_puts(b, h > 1 && !r && plural_s ? "cents" : "cent");
        if (!r) return;
        xtts_sb_putc(b, ' ');
        n = r;
    }
    fr_99(n, fem, plural_s, b);
}

/* final: n ends the number ("eins") or is followed by more ("ein"). */
static void de_999(unsigned n, int final, xtts_sb *b) {
    if (n >= 100) {
        xtts_sb_puts(b, n / 100 == 1 ? "ein" : de_small[n / 100]);
        xtts_sb_puts(b, "hundert");
        n %= 100;
        if (!n) return;
    }
    if (n < 20) {
        xtts_sb_puts(b, n == 1 && !final ? "ein" : de_small[n]);
        return;
    }
    unsigned u = n % 10;
    if (u) {
        xtts_sb_puts(b, u == 1 ? "ein" : de_small[u]);
        xtts_sb_puts(b, "und");
    }
    xtts_sb_puts(b, de_tens[n / 10]);
}

static void it_99(unsigned n, int fem, xtts_sb *b) {
    if (n < 20) { xtts_sb_puts(b, n == 1 && fem ? "una" : it_small[n]); return; }
    const char *t = it_tens[n / 10];
    unsigned u = n % 10;
    size_t tl = strlen(t);
    if (u == 1 || u == 8) tl--; /* ventuno, trentotto */
    xtts_sb_putn(b, t, tl);
    if (u == 3) xtts_sb_puts(b, "tré");
    else if (u == 1 && fem) xtts_sb_puts(b, "una");
    else if (u) xtts_sb_puts(b, it_small[u]);
}

static void it_999(unsigned n, int fem, xtts_sb *b) {
    if (n >= 100) {
        unsigned h = n / 100, r = n % 100;
        if (h > 1) xtts_sb_puts(b, it_small[h]);
        xtts_sb_puts(b, r / 10 == 8 ? "cent" : "cento"); /* centottanta */
        if (!r) return;
        n = r;
    }
    it_99(n, fem, b);
}

static void pt_999(unsigned n, int fem, xtts_sb *b) {
    if (n == 100) { xtts_sb_puts(b, "cem"); return; }
    if (n >= 100) {
        const char *h = pt_hundreds[n / 100];
        if (fem && n / 100 >= 2) {
            xtts_sb_putn(b, h, strlen(h) - 2);
            xtts_sb_puts(b, "as");
        } else {
            xtts_sb_puts(b, h);
        }
        n %= 100;
        if (!n) return;
        xtts_sb_puts(b, " e ");
    }
    if (n < 20) {
        if (fem && n == 1) xtts_sb_puts(b, "uma");
        else if (fem && n == 2) xtts_sb_puts(b, "duas");
        else xtts_sb_puts(b, pt_small[n]);
        return;
    }
    xtts_sb_puts(b, pt_tens[n / 10]);
    unsigned u = n % 10;
    if (u) {
        xtts_sb_puts(b, " e ");
        xtts_sb_puts(b, fem && u == 1 ? "uma" : fem && u == 2 ? "duas" : pt_small[u]);
    }
}

/* ---- cardinals -------------------------------------------------------------------- */

static void en_card(uint64_t n, xtts_sb *b) {
    if (n == 0) { xtts_sb_puts(b, "zero"); return; }
    uint64_t scale = 1000000000000ULL;
    for (int k = 4; k >= 1; k--, scale /= 1000) {
        unsigned part = (unsigned)(n / scale);
        if (!part) continue;
        sp(b);
        en_999(part, b);
        xtts_sb_putc(b, ' ');
        xtts_sb_puts(b, k == 1 ? "thousand" : en_scales[k].one);
        n %= scale;
    }
    if (n) { sp(b); en_999((unsigned)n, b); }
}

static void es_card(uint64_t n, int fem, xtts_sb *b) {
    if (n == 0) { xtts_sb_puts(b, "cero"); return; }
    uint64_t mill = n / 1000000, rest = n % 1000000;
    if (mill) {
        if (mill == 1) xtts_sb_puts(b, "un millón");
        else {
            size_t at = b->len;
            es_card(mill, 0, b);
            /* apocope before the noun: veintiuno -> veintiún, uno -> un */
            if (b->len - at >= 9 && !strcmp(b->s + b->len - 9, "veintiuno")) { b->len -= 3; xtts_sb_puts(b, "ún"); }
            else if (b->len - at >= 3 && !strcmp(b->s + b->len - 3, "uno")) { b->len -= 1; b->s[b->len] = 0; }
            xtts_sb_puts(b, " millones");
        }
        if (!rest) return;
        xtts_sb_putc(b, ' ');
    }
    unsigned th = (unsigned)(rest / 1000), u = (unsigned)(rest % 1000);
    if (th) {
        if (th > 1) {
            size_t at = b->len;
            es_999(th, fem, b);
            if (!fem) {
                if (b->len - at >= 9 && !strcmp(b->s + b->len - 9, "veintiuno")) { b->len -= 3; xtts_sb_puts(b, "ún"); }
                else if (b->len - at >= 3 && !strcmp(b->s + b->len - 3, "uno")) { b->len -= 1; b->s[b->len] = 0; }
            }
            xtts_sb_putc(b, ' ');
        }
        xtts_sb_puts(b, "mil");
        if (!u) return;
        xtts_sb_putc(b, ' ');
    }
    if (u) es_999(u, fem, b);
}

static void fr_card(uint64_t n, int fem, xtts_sb *b) {
    if (n == 0) { xtts_sb_puts(b, "zéro"); return; }
    uint64_t scale = 1000000000000ULL;
    for (int k = 4; k >= 2; k--, scale /= 1000) {
        unsigned part = (unsigned)(n / scale);
        if (!part) continue;
        sp(b);
        fr_999(part, 0, 1, b);
        xtts_sb_putc(b, ' ');
        xtts_sb_puts(b, part > 1 ? fr_scales[k].many : fr_scales[k].one);
        n %= scale;
    }
    unsigned th = (unsigned)(n / 1000), u = (unsigned)(n % 1000);
    if (th) {
        sp(b);
        if (th > 1) { fr_999(th, 0, 0, b); xtts_sb_putc(b, ' '); }
        xtts_sb_puts(b, "mille");
    }
    if (u) { sp(b); fr_999(u, fem, 1, b); }
}

static void de_card(uint64_t n, xtts_sb *b) {
    if (n == 0) { xtts_sb_puts(b, "null"); return; }
    uint64_t scale = 1000000000000ULL;
    for (int k = 4; k >= 2; k--, scale /= 1000) {
        unsigned part = (unsigned)(n / scale);
        if (!part) continue;
        sp(b);
        if (part == 1) xtts_sb_puts(b, "eine");
        else de_999(part, 1, b);
        xtts_sb_putc(b, ' ');
        xtts_sb_puts(b, part > 1 ? de_scales[k].many : de_scales[k].one);
        n %= scale;
    }
    if (!n) return;
    sp(b);
    unsigned th = (unsigned)(n / 1000), u = (unsigned)(n % 1000);
    if (th) {
        de_999(th, 0, b);
        xtts_sb_puts(b, "tausend");
    }
    if (u) de_999(u, 1, b);
}

static void it_card(uint64_t n, int fem, xtts_sb *b) {
    if (n == 0) { xtts_sb_puts(b, "zero"); return; }
    uint64_t scale = 1000000000000ULL;
    for (int k = 4; k >= 2; k--, scale /= 1000) {
        unsigned part = (unsigned)(n / scale);
        if (!part) continue;
        sp(b);
        if (part == 1) xtts_sb_puts(b, "un");
        else it_999(part, 0, b);
        xtts_sb_putc(b, ' ');
        xtts_sb_puts(b, part > 1 ? it_scales[k].many : it_scales[k].one);
        n %= scale;
    }
    if (!n) return;
    sp(b);
    unsigned th = (unsigned)(n / 1000), u = (unsigned)(n % 1000);
    if (th == 1) xtts_sb_puts(b, "mille");
    else if (th) { it_999(th, 0, b); xtts_sb_puts(b, "mila"); }
    if (u) it_999(u, fem, b);
}

static void pt_card(uint64_t n, int fem, xtts_sb *b) {
    if (n == 0) { xtts_sb_puts(b, "zero"); return; }
    uint64_t scale = 1000000000000ULL;
    int any = 0;
    for (int k = 4; k >= 2; k--, scale /= 1000) {
        unsigned part = (unsigned)(n / scale);
        if (!part) continue;
        sp(b);
        pt_999(part, 0, b);
        xtts_sb_putc(b, ' ');
        xtts_sb_puts(b, part > 1 ? pt_scales[k].many : pt_scales[k].one);
        n %= scale;
        any = 1;
    }
    unsigned th = (unsigned)(n / 1000), u = (unsigned)(n % 1000);
    if (th) {
        if (any) xtts_sb_puts(b, (u == 0 && th % 100 == 0) || th < 100 ? " e " : " ");
        if (th > 1) { pt_999(th, fem, b); xtts_sb_putc(b, ' '); }
        xtts_sb_puts(b, "mil");
        any = 1;
    }
    if (u) {
        if (any) xtts_sb_puts(b, u < 100 || u % 100 == 0 ? " e " : " ");
        pt_999(u, fem, b);
    }
}

static int cardinal_into(int lang, uint64_t n, int form, xtts_sb *b);

/* The composition helpers look at the buffer's last byte to place spaces, so each number
 * is built in a fresh buffer and then appended. */
int xtts_num_cardinal(int lang, uint64_t n, int form, xtts_sb *out) {
    if (!xtts_num_supported(lang) || n >= XTTS_NUM_MAX) return -1;
    xtts_sb b = {0};
    int r = cardinal_into(lang, n, form, &b);
    if (!r && b.len) xtts_sb_putn(out, b.s, b.len);
    xtts_sb_free(&b);
    return r || out->failed ? -1 : 0;
}

static int cardinal_into(int lang, uint64_t n, int form, xtts_sb *b) {
    int fem = form == XTTS_NUM_FEM;
    size_t at = b->len;
    switch (lang) {
    case EN: en_card(n, b); break;
    case ES: es_card(n, fem, b); break;
    case FR: fr_card(n, fem, b); break;
    case DE: de_card(n, b); break;
    case IT: it_card(n, fem, b); break;
    case PT: pt_card(n, fem, b); break;
    }
    if (form == XTTS_NUM_BEFORE_NOUN && b->len > at) {
        char *s = b->s + at;
        size_t l = b->len - at;
        if (lang == ES && l >= 9 && !strcmp(s + l - 9, "veintiuno")) { b->len -= 3; b->s[b->len] = 0; xtts_sb_puts(b, "ún"); }
        else if (lang == ES && l >= 3 && !strcmp(s + l - 3, "uno")) { b->len -= 1; b->s[b->len] = 0; }
        else if (lang == DE && l >= 4 && !strcmp(s + l - 4, "eins")) { b->len -= 1; b->s[b->len] = 0; }
        else if (lang == IT && l == 3 && !strcmp(s, "uno")) { b->len -= 1; b->s[b->len] = 0; }
    }
    return b->failed ? -1 : 0;
}

/* ---- ordinals ---------------------------------------------------------------------- */

/* Replace the last word of b (after at) by its English ordinal form. */
static void en_ordinalize(xtts_sb *b, size_t at) {
    size_t i = b->len;
    while (i > at && b->s[i - 1] != ' ' && b->s[i - 1] != '-') i--;
    char word[32];
    snprintf(word, sizeof word, "%s", b->s + i);
    b->len = i;
    b->s[i] = 0;
    for (size_t k = 0; k < sizeof en_ord_irregular / sizeof en_ord_irregular[0]; k++) {
        if (!strcmp(word, en_ord_irregular[k][0])) { xtts_sb_puts(b, en_ord_irregular[k][1]); return; }
    }
    size_t l = strlen(word);
    if (l && word[l - 1] == 'y') { xtts_sb_putn(b, word, l - 1); xtts_sb_puts(b, "ieth"); return; }
    xtts_sb_puts(b, word);
    xtts_sb_puts(b, "th");
}

static void fr_ordinalize(xtts_sb *b, size_t at) {
    size_t i = b->len;
    while (i > at && b->s[i - 1] != ' ' && b->s[i - 1] != '-') i--;
    char word[32];
    snprintf(word, sizeof word, "%s", b->s + i);
    b->len = i;
    b->s[i] = 0;
    size_t l = strlen(word);
    if (!strcmp(word, "cinq")) xtts_sb_puts(b, "cinquième");
    else if (!strcmp(word, "neuf")) xtts_sb_puts(b, "neuvième");
    else {
        if (l && (word[l - 1] == 'e' || (word[l - 1] == 's' && l > 1 && strcmp(word, "trois")))) l--; /* quatre, vingts, cents, millions */
        xtts_sb_putn(b, word, l);
        xtts_sb_puts(b, "ième");
    }
}

static void fem_o_to_a(xtts_sb *b, size_t at) {
    /* every word of b after at ending in 'o' takes 'a' (es, pt, it ordinals) */
    for (size_t i = at; i < b->len; i++)
        if (b->s[i] == 'o' && (i + 1 == b->len || b->s[i + 1] == ' ')) b->s[i] = 'a';
}

static int ordinal_into(int lang, uint64_t n, int fem, xtts_sb *b);

int xtts_num_ordinal(int lang, uint64_t n, int fem, xtts_sb *out) {
    if (!xtts_num_supported(lang) || n == 0 || n >= XTTS_NUM_MAX) return -1;
    xtts_sb b = {0};
    int r = ordinal_into(lang, n, fem, &b);
    if (!r && b.len) xtts_sb_putn(out, b.s, b.len);
    xtts_sb_free(&b);
    return r || out->failed ? -1 : 0;
}

static int ordinal_into(int lang, uint64_t n, int fem, xtts_sb *b) {
    size_t at = b->len;
    switch (lang) {
    case EN:
        en_card(n, b);
        en_ordinalize(b, at);
        break;
    case FR:
        if (n == 1) { xtts_sb_puts(b, fem ? "première" : "premier"); break; }
        fr_card(n, 0, b);
        fr_ordinalize(b, at);
        break;
    case ES:
        if (n >= 100) { es_card(n, fem, b); break; } /* large ordinals are read as cardinals */
        if (n < 10) xtts_sb_puts(b, es_ord_units[n]);
        else if (n < 20) xtts_sb_puts(b, es_ord_teens[n - 10]);
        else {
            xtts_sb_puts(b, es_ord_tens[n / 10]);
            if (n % 10) { xtts_sb_putc(b, ' '); xtts_sb_puts(b, es_ord_units[n % 10]); }
        }
        if (fem) fem_o_to_a(b, at);
        break;
    case PT:
        if (n >= 100) { pt_card(n, fem, b); break; }
        if (n >= 10) {
            xtts_sb_puts(b, pt_ord_tens[n / 10]);
            if (n % 10) xtts_sb_putc(b, ' ');
        }
        if (n % 10) xtts_sb_puts(b, pt_ord_units[n % 10]);
        if (fem) fem_o_to_a(b, at);
        break;
    case IT:
        if (n <= 10) xtts_sb_puts(b, it_ord_units[n]);
        else {
            it_card(n, 0, b);
            size_t l = b->len;
            if (l >= 4 && !strcmp(b->s + l - 4, "tré")) { b->len -= 2; b->s[b->len] = 0; xtts_sb_puts(b, "e"); }
            else if (l >= 3 && !strcmp(b->s + l - 3, "sei")) { /* ventiseiesimo keeps the vowel */ }
            else { b->len--; b->s[b->len] = 0; }
            xtts_sb_puts(b, "esimo");
        }
        if (fem) fem_o_to_a(b, at);
        break;
    case DE: {
        unsigned last = (unsigned)(n % 100);
        de_card(n, b);
        size_t l = b->len;
        if (last >= 20 || (n >= 100 && last == 0)) xtts_sb_puts(b, "sten");
        else if (l >= 4 && !strcmp(b->s + l - 4, "eins")) { b->len -= 4; b->s[b->len] = 0; xtts_sb_puts(b, "ersten"); }
        else if (l >= 4 && !strcmp(b->s + l - 4, "drei")) { b->len -= 4; b->s[b->len] = 0; xtts_sb_puts(b, "dritten"); }
        else if (l >= 6 && !strcmp(b->s + l - 6, "sieben")) { b->len -= 6; b->s[b->len] = 0; xtts_sb_puts(b, "siebten"); }
        else if (l >= 4 && !strcmp(b->s + l - 4, "acht")) xtts_sb_puts(b, "en");
        else xtts_sb_puts(b, "ten");
        break;
    }
    }
    return b->failed ? -1 : 0;
}

static int year_into(uint64_t n, xtts_sb *b);

int xtts_num_year_en(uint64_t n, xtts_sb *out) {
    xtts_sb b = {0};
    int r = year_into(n, &b);
    if (!r && b.len) xtts_sb_putn(out, b.s, b.len);
    xtts_sb_free(&b);
    return r || out->failed ? -1 : 0;
}

static int year_into(uint64_t n, xtts_sb *b) {
    if (n < 1000 || n > 9999) return xtts_num_cardinal(EN, n, 0, b);
    unsigned hi = (unsigned)(n / 100), lo = (unsigned)(n % 100);
    if ((hi % 10 == 0 && lo < 10) || (n >= 2000 && n < 2010)) return xtts_num_cardinal(EN, n, 0, b);
    en_999(hi, b);
    if (lo == 0) xtts_sb_puts(b, " hundred");
    else if (lo < 10) { xtts_sb_puts(b, " oh "); xtts_sb_puts(b, en_small[lo]); }
    else { xtts_sb_putc(b, ' '); en_999(lo, b); }
    return b->failed ? -1 : 0;
}

int xtts_num_digits(int lang, const char *digits, size_t n, xtts_sb *b) {
    if (!xtts_num_supported(lang)) return -1;
    for (size_t i = 0; i < n; i++) {
        if (digits[i] < '0' || digits[i] > '9') continue;
        if (i) xtts_sb_putc(b, ' ');
        xtts_num_cardinal(lang, (uint64_t)(digits[i] - '0'), 0, b);
    }
    return b->failed ? -1 : 0;
}
