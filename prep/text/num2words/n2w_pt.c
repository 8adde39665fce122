/* n2w_pt.c — num2words 0.5.12's number words for "pt" (see num2words.h): Num2Word_PT
 * (European Portuguese: dezasseis, milhões, mil milhões), its merge, the "mil e duzentos" ->
 * "mil duzentos" rewrite of its to_cardinal, its digit-by-digit ordinals and its currency
 * ("milhões de euros", no "e zero cêntimos"); and the spoken variant, Brazilian: dezesseis,
 * bilhão and trilhão (short scale), "e" where Brazilian puts it (pt_spoken_join), the
 * feminine (duzentas e uma), ordinals as num2words' below a hundred. */
#include <stdio.h>
#include <string.h>

#include "prep/text/num2words/n2w_common_internal.h"
#include "prep/text/num2words/n2w_eu_internal.h"
#include "prep/text/num2words/num2words.h"

/* The cards in runs: the scales and the teens that differ between European Portuguese
 * (num2words: milião, bilião at 10^12; dezasseis) and Brazilian (spoken: bilhão at 10^9;
 * dezesseis), and the runs both share. */
static const n2w_card pt_scales[] = {
    {1000000000000000000LL, "trili\xc3\xa3o"}, {1000000000000LL, "bili\xc3\xa3o"}, {1000000LL, "mili\xc3\xa3o"}};
static const n2w_card pt_scales_br[] = {
    {1000000000000LL, "trilh\xc3\xa3o"}, {1000000000LL, "bilh\xc3\xa3o"}, {1000000LL, "milh\xc3\xa3o"}};
static const n2w_card pt_tens[] = {
    {1000, "mil"}, {100, "cem"}, {90, "noventa"}, {80, "oitenta"}, {70, "setenta"}, {60, "sessenta"},
    {50, "cinquenta"}, {40, "quarenta"}, {30, "trinta"}, {20, "vinte"}};
static const n2w_card pt_teens[] = {{19, "dezanove"}, {18, "dezoito"}, {17, "dezassete"}, {16, "dezasseis"}};
static const n2w_card pt_teens_br[] = {{19, "dezenove"}, {18, "dezoito"}, {17, "dezessete"}, {16, "dezesseis"}};
static const n2w_card pt_units[] = {
    {15, "quinze"}, {14, "catorze"}, {13, "treze"}, {12, "doze"}, {11, "onze"}, {10, "dez"}, {9, "nove"},
    {8, "oito"}, {7, "sete"}, {6, "seis"}, {5, "cinco"}, {4, "quatro"}, {3, "tr\xc3\xaas"}, {2, "dois"},
    {1, "um"}, {0, "zero"},
};

static const char *const pt_hundreds[10] = {"", "cento", "duzentos", "trezentos", "quatrocentos", "quinhentos",
                                            "seiscentos", "setecentos", "oitocentos", "novecentos"};

static size_t drop_chars(const char *s, size_t len, int k) {
    while (k-- > 0 && len > 0) {
        len--;
        while (len > 0 && ((unsigned char)s[len] & 0xC0) == 0x80) len--;
    }
    return len;
}

/* What joins a number ending in a thousand or more to the rest nn below it, spoken: "e" before
 * the last group when it is below a hundred or a round hundred ("mil e duzentos", "mil
 * duzentos e cinquenta"), or before round thousands ("um milhão e duzentos mil"). */
static const char *pt_spoken_join(int64_t nn) {
    int64_t th = nn / 1000, u = nn % 1000;
    if (nn >= 1000000) return " ";
    if (th) return (u == 0 && th % 100 == 0) || th < 100 ? " e " : " ";
    return u < 100 || u % 100 == 0 ? " e " : " ";
}

/* spoken: Brazilian plurals (bilhões where num2words says biliões) and joins */
static void pt_merge_with(const char *ct, int64_t cn, const char *nt, int64_t nn, xtts_sb *o, int64_t *on, int spoken) {
    if (cn == 1) {
        if (nn < 1000000) { xtts_sb_puts(o, nt); *on = nn; return; }
        ct = "um";
    } else if (cn == 100 && nn % 1000 != 0) ct = "cento";
    if (nn < cn) {
        xtts_sb_puts(o, ct);
        xtts_sb_puts(o, spoken && cn >= 1000 ? pt_spoken_join(nn) : " e ");
        xtts_sb_puts(o, nt);
        *on = cn + nn;
        return;
    }
    char n2[64];
    snprintf(n2, sizeof n2, "%s", nt);
    if (!spoken && !(nn % 1000000000) && cn > 1) snprintf(n2 + drop_chars(nt, strlen(nt), 4), sizeof n2 - 8, "li\xc3\xb5" "es");
    else if (!(nn % 1000000) && cn > 1) snprintf(n2 + drop_chars(nt, strlen(nt), 4), sizeof n2 - 8, "lh\xc3\xb5" "es");
    if (!strcmp(n2, "mili\xc3\xa3o")) snprintf(n2, sizeof n2, "milh\xc3\xa3o");
    if (nn == 100) xtts_sb_puts(o, cn >= 0 && cn < 10 ? pt_hundreds[cn] : "");
    else {
        xtts_sb_puts(o, ct);
        xtts_sb_putc(o, ' ');
        xtts_sb_puts(o, n2);
    }
    *on = cn * nn;
}

static void pt_merge(const char *ct, int64_t cn, const char *nt, int64_t nn, xtts_sb *o, int64_t *on) {
    pt_merge_with(ct, cn, nt, nn, o, on, 0);
}

static void pt_merge_spoken(const char *ct, int64_t cn, const char *nt, int64_t nn, xtts_sb *o, int64_t *on) {
    pt_merge_with(ct, cn, nt, nn, o, on, 1);
}

static const n2w_eu pt_lang = {
    {N2W_CARDS(pt_scales), N2W_CARDS(pt_tens), N2W_CARDS(pt_teens), N2W_CARDS(pt_units)}, pt_merge, "menos"};
static const n2w_eu pt_spoken_lang = {
    {N2W_CARDS(pt_scales_br), N2W_CARDS(pt_tens), N2W_CARDS(pt_teens_br), N2W_CARDS(pt_units)}, pt_merge_spoken, "menos"};

static int is_word_byte(unsigned char c) {
    return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') || c == '_' || c >= 0x80;
}

/* re.match('.*EXT e \w*entos? (?=.*e)', s) */
static int pt_rewrite_applies(const char *s, const char *ext) {
    size_t el = strlen(ext);
    for (const char *p = strstr(s, ext); p; p = strstr(p + 1, ext)) {
        const char *q = p + el;
        if (strncmp(q, " e ", 3)) continue;
        q += 3;
        const char *w = q;
        while (*w && is_word_byte((unsigned char)*w)) w++;
        if (*w != ' ') continue;
        size_t wl = (size_t)(w - q);
        int ento = (wl >= 4 && !memcmp(w - 4, "ento", 4)) || (wl >= 5 && !memcmp(w - 5, "entos", 5));
        if (ento && strchr(w + 1, 'e')) return 1;
    }
    return 0;
}

static void pt_fix(xtts_sb *b) {
    static const char *const ext[] = {"mil", "milh\xc3\xa3o", "milh\xc3\xb5" "es", "mil milh\xc3\xb5" "es",
                                      "bili\xc3\xa3o", "bili\xc3\xb5" "es", "mil bili\xc3\xb5" "es"};
    for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++) {
        if (!b->s || !pt_rewrite_applies(b->s, ext[i])) continue;
        char from[64];
        snprintf(from, sizeof from, "%s e", ext[i]);
        xtts_sb_replace(b, from, ext[i], -1);
    }
}

static int pt_cardinal(int64_t n, xtts_sb *out) {
    xtts_sb b = {0};
    xtts_sb_puts(&b, "");
    int rc = xtts_n2w_eu_cardinal(&pt_lang, n, &b);
    if (!rc) pt_fix(&b);
    if (b.failed) rc = -1;
    if (!rc) xtts_sb_puts(out, b.s);
    xtts_sb_free(&b);
    return rc;
}

static int pt_ordinal(int64_t n, xtts_sb *out) {
    static const char *const ords[3][10] = {
        {"", "primeiro", "segundo", "terceiro", "quarto", "quinto", "sexto", "s\xc3\xa9timo", "oitavo", "nono"},
        {"", "d\xc3\xa9" "cimo", "vig\xc3\xa9simo", "trig\xc3\xa9simo", "quadrag\xc3\xa9simo", "quinquag\xc3\xa9simo",
         "sexag\xc3\xa9simo", "septuag\xc3\xa9simo", "octog\xc3\xa9simo", "nonag\xc3\xa9simo"},
        {"", "cent\xc3\xa9simo", "ducent\xc3\xa9simo", "tricent\xc3\xa9simo", "quadrigent\xc3\xa9simo",
         "quingent\xc3\xa9simo", "seiscent\xc3\xa9simo", "septigent\xc3\xa9simo", "octigent\xc3\xa9simo",
         "nongent\xc3\xa9simo"},
    };
    static const char *const seps[6] = {"", "mil\xc3\xa9simo", "milion\xc3\xa9simo", "mil\xc3\xa9simo milion\xc3\xa9simo",
                                        "bilion\xc3\xa9simo", "mil\xc3\xa9simo bilion\xc3\xa9simo"};
    if (n < 0) return -1;
    char v[32];
    snprintf(v, sizeof v, "%lld", (long long)n);
    int len = (int)strlen(v);
    if (len > 18) return -1; /* thousand_separators has no entry for 18: KeyError */
    const char *parts[64];
    int np = 0;
    const char *sep = "";
    for (int idx = 0; idx < len; idx++) {
        char ch = v[len - 1 - idx];
        if (idx && idx % 3 == 0) sep = seps[idx / 3];
        if (ch != '0' && *sep) { parts[np++] = sep; sep = ""; }
        parts[np++] = ords[idx % 3][ch - '0'];
    }
    /* ' '.join(reversed), strip, \s+ -> ' ' */
    xtts_sb r = {0};
    xtts_sb_puts(&r, "");
    for (int i = np - 1; i >= 0; i--) {
        if (!*parts[i]) continue;
        if (r.len) xtts_sb_putc(&r, ' ');
        xtts_sb_puts(&r, parts[i]);
    }
    const char *s = r.s;
    if (!strncmp(s, "primeiro", 8) && strcmp(v, "1")) s = strlen(s) >= 9 ? s + 9 : "";
    xtts_sb_puts(out, s);
    int rc = r.failed ? -1 : 0;
    xtts_sb_free(&r);
    return rc;
}

static int pt_float(const char *repr, xtts_sb *out) {
    xtts_sb b = {0};
    xtts_sb_puts(&b, "");
    int rc = xtts_n2w_generic_float(repr, "v\xc3\xadrgula", pt_cardinal, &b);
    if (!rc) pt_fix(&b);
    if (b.failed) rc = -1;
    if (!rc) xtts_sb_puts(out, b.s);
    xtts_sb_free(&b);
    return rc;
}

static int pt_currency(const char *repr, const char *cur, xtts_sb *out) {
    static const char *const eur[4] = {"euro", "euros", "c\xc3\xaantimo", "c\xc3\xaantimos"};
    static const char *const usd[4] = {"d\xc3\xb3lar", "d\xc3\xb3lares", "c\xc3\xaantimo", "c\xc3\xaantimos"};
    static const char *const gbp[4] = {"libra", "libras", "p\xc3\xa9ni", "pence"};
    static const char *const ext[] = {"milh\xc3\xa3o", "milh\xc3\xb5" "es", "bili\xc3\xa3o", "bili\xc3\xb5" "es",
                                      "trili\xc3\xa3o", "trili\xc3\xb5" "es"};
    const char *const *f = !strcmp(cur, "EUR") ? eur : !strcmp(cur, "USD") ? usd : !strcmp(cur, "GBP") ? gbp : NULL;
    if (!f) return -1;
    xtts_sb t = {0};
    xtts_sb_puts(&t, "");
    if (xtts_n2w_generic_currency(repr, pt_cardinal, f, " e", &t) || t.failed) { xtts_sb_free(&t); return -1; }
    for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++) {
        /* re.match('.*EXT (?=PLURAL)') */
        char pat[64], to[64];
        snprintf(pat, sizeof pat, "%s %s", ext[i], f[1]);
        if (!strstr(t.s, pat)) continue;
        snprintf(to, sizeof to, "%s de", ext[i]);
        xtts_sb_replace(&t, ext[i], to, 1);
    }
    xtts_sb_replace(&t, " e zero c\xc3\xaantimos", "", -1);
    int rc = t.failed ? -1 : 0;
    if (!rc) xtts_sb_puts(out, t.s);
    xtts_sb_free(&t);
    return rc;
}

/* ---- the spoken variant ---- */

static int pt_spoken_cardinal(uint64_t n, int form, xtts_sb *out) {
    static const char *const scales[] = {"lh\xc3\xa3o", "lh\xc3\xb5" "es", NULL};
    static const char *const uma[][2] = {{"um", "uma"}, {"dois", "duas"}};
    static const char *const entas[2] = {"entos", "entas"};
    if (n >= XTTS_N2W_SPOKEN_MAX) return -1;
    xtts_sb w = {0};
    int rc = xtts_n2w_eu_cardinal(&pt_spoken_lang, (int64_t)n, &w);
    if (!rc && form == XTTS_N2W_FEM) xtts_n2w_feminine_tail(&w, scales, uma, 2, entas);
    return xtts_n2w_take(&w, rc, out);
}

/* num2words' ordinals below a hundred, read as cardinals from a hundred on */
static int pt_spoken_ordinal(uint64_t n, int fem, xtts_sb *out) {
    if (!n || n >= XTTS_N2W_SPOKEN_MAX) return -1;
    if (n >= 100) return pt_spoken_cardinal(n, fem ? XTTS_N2W_FEM : XTTS_N2W_MASC, out);
    xtts_sb w = {0};
    int rc = pt_ordinal((int64_t)n, &w);
    if (fem) xtts_n2w_feminine_o(&w);
    return xtts_n2w_take(&w, rc, out);
}

static const xtts_n2w_spoken pt_spoken = {pt_spoken_cardinal, pt_spoken_ordinal, NULL};

const xtts_n2w_lang xtts_n2w_pt = {"pt", pt_cardinal, pt_ordinal, pt_float, pt_currency, &pt_spoken};
