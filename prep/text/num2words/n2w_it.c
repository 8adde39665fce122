/* n2w_it.c — num2words 0.5.12's number words for "it" (see num2words.h): Num2Word_IT, which
 * builds its words itself (tens, hundreds, "mila", "milioni") with its phonetic
 * contractions and its accent rule for a final "tre", and reads floats digit by digit from
 * their repr; and the spoken variant (below). */
#include <stdio.h>
#include <string.h>

#include "prep/text/num2words/n2w_common_internal.h"
#include "prep/text/num2words/n2w_eu_internal.h"
#include "prep/text/num2words/num2words.h"

static const char *const it_card[20] = {
    "zero", "uno", "due", "tre", "quattro", "cinque", "sei", "sette", "otto", "nove", "dieci", "undici",
    "dodici", "tredici", "quattordici", "quindici", "sedici", "diciassette", "diciotto", "diciannove"};
static const char *const it_ord[20] = {
    "zero", "primo", "secondo", "terzo", "quarto", "quinto", "sesto", "settimo", "ottavo", "nono", "decimo",
    "undicesimo", "dodicesimo", "tredicesimo", "quattordicesimo", "quindicesimo", "sedicesimo",
    "diciassettesimo", "diciottesimo", "diciannovesimo"};
static const char *const it_exp[] = {"zero", "m", "b", "tr", "quadr", "quint", "sest", "sett", "ott", "nov", "dec"};

#define ACC_TRE "tr\xc3\xa9"

static void contraction(xtts_sb *b) {
    static const char *const p[][2] = {{"oo", "o"}, {"ao", "o"}, {"io", "o"}, {"au", "u"}, {"iu", "u"}};
    for (size_t i = 0; i < 5; i++) xtts_sb_replace(b, p[i][0], p[i][1], -1);
}

/* accentuate(): per whitespace-separated word */
static void accentuate(const char *s, xtts_sb *out) {
    int first = 1;
    const char *p = s;
    while (*p) {
        while (*p == ' ' || *p == '\t' || *p == '\n') p++;
        if (!*p) break;
        const char *e = p;
        while (*e && *e != ' ' && *e != '\t' && *e != '\n') e++;
        xtts_sb w = {0};
        char word[256];
        size_t wl = (size_t)(e - p) < sizeof word - 1 ? (size_t)(e - p) : sizeof word - 1;
        memcpy(word, p, wl);
        word[wl] = 0;
        xtts_sb_puts(&w, word);
        /* character length > 3 and ends with "tre" */
        size_t chars = 0;
        for (size_t i = 0; i < w.len; i++) chars += ((unsigned char)w.s[i] & 0xC0) != 0x80;
        int ends_tre = w.len >= 3 && !memcmp(w.s + w.len - 3, "tre", 3);
        xtts_sb_replace(&w, ACC_TRE, "tre", -1);
        if (!first) xtts_sb_putc(out, ' ');
        first = 0;
        if (ends_tre && chars > 3) {
            xtts_sb_putn(out, w.s, w.len - 3);
            xtts_sb_puts(out, ACC_TRE);
        } else xtts_sb_puts(out, w.s ? w.s : "");
        if (w.failed) out->failed = 1;
        xtts_sb_free(&w);
        p = e;
    }
}

static int it_cardinal_raw(int64_t n, xtts_sb *o);

/* The word of 10^explen (explen a multiple of 3 from 6 on): milione, miliardo, bilione, ... */
static void it_scale_word(size_t explen, char *buf, size_t size) {
    snprintf(buf, size, "%s%s", it_exp[explen / 6], explen % 6 ? "iliardo" : "ilione");
}

static int it_cardinal(int64_t n, xtts_sb *out) {
    xtts_sb r = {0};
    xtts_sb_puts(&r, "");
    int rc = it_cardinal_raw(n, &r);
    if (!rc) accentuate(r.s, out);
    if (r.failed) rc = -1;
    xtts_sb_free(&r);
    return rc;
}

static void put_unless_zero(xtts_sb *o, int64_t n) {
    if (n) it_cardinal(n, o);
}

static int it_cardinal_raw(int64_t n, xtts_sb *o) {
    if (n < 0) { /* "meno " and the words of |n|, as Num2Word_IT.to_cardinal */
        if (n == INT64_MIN) return -1;
        xtts_sb_puts(o, "meno ");
        return it_cardinal_raw(-n, o);
    }
    if (n < 20) { xtts_sb_puts(o, it_card[n]); return 0; }
    if (n < 100) {
        xtts_sb t = {0};
        int64_t tens = n / 10, units = n % 10;
        if (tens == 2) xtts_sb_puts(&t, "venti");
        else if (tens == 3) xtts_sb_puts(&t, "trenta");
        else if (tens == 4) xtts_sb_puts(&t, "quaranta");
        else if (tens == 6) xtts_sb_puts(&t, "sessanta");
        else {
            xtts_sb_putn(&t, it_card[tens], strlen(it_card[tens]) - 1);
            xtts_sb_puts(&t, "anta");
        }
        if (units) xtts_sb_puts(&t, it_card[units]);
        contraction(&t);
        xtts_sb_puts(o, t.s ? t.s : "");
        xtts_sb_free(&t);
        return 0;
    }
    if (n < 1000) {
        xtts_sb t = {0};
        int64_t h = n / 100;
        if (h != 1) xtts_sb_puts(&t, it_card[h]);
        xtts_sb_puts(&t, "cento");
        put_unless_zero(&t, n % 100);
        contraction(&t);
        xtts_sb_puts(o, t.s ? t.s : "");
        xtts_sb_free(&t);
        return 0;
    }
    if (n < 1000000) {
        int64_t th = n / 1000;
        if (th == 1) xtts_sb_puts(o, "mille");
        else {
            if (it_cardinal(th, o)) return -1;
            xtts_sb_puts(o, "mila");
        }
        put_unless_zero(o, n % 1000);
        return 0;
    }
    char digits[32];
    snprintf(digits, sizeof digits, "%lld", (long long)n);
    size_t len = strlen(digits);
    size_t pre = len % 3 ? len % 3 : 3;
    size_t explen = len - pre;
    char infix[64];
    it_scale_word(explen, infix, sizeof infix);
    int64_t mult = 0, rest = 0;
    for (size_t i = 0; i < pre; i++) mult = mult * 10 + (digits[i] - '0');
    for (size_t i = pre; i < len; i++) rest = rest * 10 + (digits[i] - '0');
    if (mult == 1 && pre == 1) {
        xtts_sb_puts(o, "un ");
        xtts_sb_puts(o, infix);
    } else {
        if (it_cardinal(mult, o)) return -1;
        xtts_sb_putc(o, ' ');
        xtts_sb_putn(o, infix, strlen(infix) - 1);
        xtts_sb_putc(o, 'i');
    }
    if (rest) {
        xtts_sb post = {0};
        xtts_sb_puts(&post, "");
        if (it_cardinal(rest, &post)) { xtts_sb_free(&post); return -1; }
        xtts_sb_puts(o, strstr(post.s, " e ") ? ", " : " e ");
        xtts_sb_puts(o, post.s);
        xtts_sb_free(&post);
    }
    return 0;
}

/* s without its last code point */
static size_t drop_last_char(const char *s, size_t len) {
    if (!len) return 0;
    len--;
    while (len > 0 && ((unsigned char)s[len] & 0xC0) == 0x80) len--;
    return len;
}

static int it_ordinal(int64_t n, xtts_sb *out) {
    if (n < 0) return -1;
    if (n < 20) { xtts_sb_puts(out, it_ord[n]); return 0; }
    int64_t tens = n % 100;
    int outside = !(10 < tens && tens < 20);
    xtts_sb c = {0};
    xtts_sb_puts(&c, "");
    if (it_cardinal(n, &c) || c.failed) { xtts_sb_free(&c); return -1; }
    if (outside && tens % 10 == 6) {
        xtts_sb_puts(out, c.s);
        xtts_sb_puts(out, "esimo");
    } else {
        size_t l = drop_last_char(c.s, c.len);
        xtts_sb_putn(out, c.s, l);
        if (outside && tens % 10 == 3) xtts_sb_puts(out, "eesimo");
        else {
            if (l >= 3 && !memcmp(c.s + l - 3, "mil", 3)) xtts_sb_putc(out, 'l');
            xtts_sb_puts(out, "esimo");
        }
    }
    xtts_sb_free(&c);
    return 0;
}

static int it_float(const char *repr, xtts_sb *out) {
    const char *dot = strchr(repr, '.');
    if (!dot || strpbrk(repr, "eE")) return -1; /* str(float).split('.')[1] fails in Python */
    int64_t ip = 0;
    for (const char *p = repr; p < dot; p++) {
        if (*p < '0' || *p > '9' || ip > 900000000000000000LL) return -1;
        ip = ip * 10 + (*p - '0');
    }
    xtts_sb r = {0};
    int rc = it_cardinal(ip, &r);
    xtts_sb_puts(&r, " virgola ");
    for (const char *p = dot + 1; *p && !rc; p++) {
        if (p != dot + 1) xtts_sb_putc(&r, ' ');
        rc = it_cardinal(*p - '0', &r);
    }
    if (!rc && !r.failed) accentuate(r.s, out);
    if (r.failed) rc = -1;
    xtts_sb_free(&r);
    return rc;
}

static int it_currency(const char *repr, const char *cur, xtts_sb *out) {
    static const char *const eur[4] = {"euro", "euro", "centesimo", "centesimi"};
    static const char *const usd[4] = {"dollaro", "dollari", "centesimo", "centesimi"};
    static const char *const gbp[4] = {"sterlina", "sterline", "penny", "penny"};
    int gb = !strcmp(cur, "GBP");
    const char *const *f = !strcmp(cur, "EUR") ? eur : !strcmp(cur, "USD") ? usd : gb ? gbp : NULL;
    if (!f) return -1;
    xtts_sb t = {0};
    if (xtts_n2w_generic_currency(repr, it_cardinal, f, " e", &t) || t.failed) { xtts_sb_free(&t); return -1; }
    if (gb && !strncmp(t.s, "uno ", 4)) { t.s[2] = 'a'; }
    xtts_sb_replace(&t, "uno", "un", -1);
    int rc = t.failed ? -1 : 0;
    if (!rc) xtts_sb_puts(out, t.s);
    xtts_sb_free(&t);
    return rc;
}

/* ---- the spoken variant ----
 * num2words' words below a hundred (ventuno, trentotto, ventitré) and for the scales, put
 * together as Italian writes them: an accent only at the end of a compound below a hundred
 * ("centotre", "ventitrémila"; num2words: "centotré", "ventitremila"), no contraction after
 * cento but before ottanta ("centootto", "centottanta"; num2words: "centotto",
 * "centodicotto"), "un milione uno" (num2words: "un milione e uno"). */

static void it_spoken_99(int64_t n, int fem, xtts_sb *o) {
    size_t at = o->len;
    it_cardinal(n, o);
    if (fem && !o->failed && xtts_n2w_endswith(o->s + at, o->len - at, "uno")) o->s[o->len - 1] = 'a';
}

static void it_spoken_999(int64_t n, int fem, xtts_sb *o) {
    if (n >= 100) {
        int64_t h = n / 100, r = n % 100;
        if (h > 1) xtts_sb_puts(o, it_card[h]);
        xtts_sb_puts(o, r / 10 == 8 ? "cent" : "cento");
        if (!r) return;
        n = r;
    }
    it_spoken_99(n, fem, o);
}

static void it_spoken_words(uint64_t n, int fem, xtts_sb *o) {
    if (n == 0) { xtts_sb_puts(o, it_card[0]); return; }
    uint64_t scale = 1000000000000ULL;
    for (size_t explen = 12; explen >= 6; explen -= 3, scale /= 1000) {
        int64_t part = (int64_t)(n / scale);
        if (!part) continue;
        char word[64];
        it_scale_word(explen, word, sizeof word);
        if (o->len) xtts_sb_putc(o, ' ');
        if (part == 1) xtts_sb_puts(o, "un ");
        else {
            it_spoken_999(part, 0, o);
            xtts_sb_putc(o, ' ');
            word[strlen(word) - 1] = 'i';
        }
        xtts_sb_puts(o, word);
        n %= scale;
    }
    if (!n) return;
    if (o->len) xtts_sb_putc(o, ' ');
    int64_t th = (int64_t)(n / 1000), u = (int64_t)(n % 1000);
    if (th == 1) xtts_sb_puts(o, "mille");
    else if (th) { it_spoken_999(th, 0, o); xtts_sb_puts(o, "mila"); }
    if (u) it_spoken_999(u, fem, o);
}

static int it_spoken_cardinal(uint64_t n, int form, xtts_sb *out) {
    if (n >= XTTS_N2W_SPOKEN_MAX) return -1;
    xtts_sb w = {0};
    it_spoken_words(n, form == XTTS_N2W_FEM, &w);
    if (form == XTTS_N2W_BEFORE_NOUN && w.len == 3 && !memcmp(w.s, "uno", 3)) w.len--;
    return xtts_n2w_take(&w, 0, out);
}

/* num2words' words to decimo, then the cardinal with -esimo: ventitreesimo, ventiseiesimo,
 * duemilesimo (num2words: duemillesimo) */
static int it_spoken_ordinal(uint64_t n, int fem, xtts_sb *out) {
    if (!n || n >= XTTS_N2W_SPOKEN_MAX) return -1;
    xtts_sb w = {0};
    if (n <= 10) xtts_sb_puts(&w, it_ord[n]);
    else {
        it_spoken_words(n, 0, &w);
        if (!xtts_n2w_replace_end(&w, ACC_TRE, "tre") && !xtts_n2w_endswith(w.s, w.len, "sei") && w.len) w.len--;
        xtts_sb_puts(&w, "esimo");
    }
    if (fem) xtts_n2w_feminine_o(&w);
    return xtts_n2w_take(&w, 0, out);
}

static const xtts_n2w_spoken it_spoken = {it_spoken_cardinal, it_spoken_ordinal, NULL};

const xtts_n2w_lang xtts_n2w_it = {"it", it_cardinal, it_ordinal, it_float, it_currency, &it_spoken};
