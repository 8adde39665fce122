/* xtts_text.c — Coqui XTTS's text preparation (xtts_text.h), the steps of
 * TTS/tts/layers/xtts/tokenizer.py in their order:
 *
 *   multilingual_cleaners: drop '"'; (tr) İ Ö Ü -> i ö ü; str.lower(); numbers; abbreviations;
 *   symbols (each followed by one pass of "  " -> " ", then strip); \s+ -> " ".
 *   numbers: thousands separators removed (en ru: commas, others: dots, Python's own
 *   patterns including their quirks), currency £ $ € (a failure in one currency abandons it
 *   and the ones after it, as Coqui's try/except does), decimals (not tr), ordinals with
 *   each language's suffix list in Coqui's order, then every run of ASCII digits; for zh
 *   instead zh_num2words' TextNorm (prep/text/normalize/zh_numbers.c: numbers in Chinese characters,
 *   punctuation to ',').
 *   zh, ko: romanized after the cleaners; ja: romanized then lowercased; hi: lowercase and
 *   whitespace only.
 *
 * Each regular expression of Coqui's is matched here by a small hand-written matcher that
 * explores the same alternatives in the same order as Python's backtracking engine, with
 * Python's Unicode meanings of \b, \d and \s. Departures: docs/xtts-tokenize.md.
 */
#include "prep/text/normalize/xtts_text.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "prep/text/num2words/num2words.h"
#include "prep/text/romanize/romanize.h"
#include "common/strbuf.h"
#include "prep/text/normalize/zh_numbers.h"

/* ---- code points ------------------------------------------------------------------- */

/* Decode the code point at s[i] (len bytes in all); *n gets its byte length. Bad bytes
 * read as one code point U+FFFD of one byte. */
static int32_t cp_at(const char *s, size_t len, size_t i, size_t *n) {
    utf8proc_int32_t c;
    utf8proc_ssize_t k = utf8proc_iterate((const utf8proc_uint8_t *)s + i, (utf8proc_ssize_t)(len - i), &c);
    if (k <= 0) { *n = 1; return 0xFFFD; }
    *n = (size_t)k;
    return c;
}

/* Start of the code point before byte i (i > 0). */
static size_t cp_prev(const char *s, size_t i) {
    size_t j = i - 1;
    while (j > 0 && ((unsigned char)s[j] & 0xC0) == 0x80 && i - j < 4) j--;
    return j;
}

/* Python's str.isspace / re \s. */
static int py_space(int32_t c) {
    return (c >= 9 && c <= 13) || (c >= 0x1c && c <= 0x20) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

/* Python's re \w for str patterns: str.isalnum() or '_'. */
static int py_word(int32_t c) {
    if (c == '_') return 1;
    if (c < 0x80) return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z');
    switch (utf8proc_category(c)) {
    case UTF8PROC_CATEGORY_LU: case UTF8PROC_CATEGORY_LL: case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM: case UTF8PROC_CATEGORY_LO: case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL: case UTF8PROC_CATEGORY_NO:
        return 1;
    default:
        return 0;
    }
}

/* Python's re \d for str patterns: Unicode decimal digits. */
static int py_digit(int32_t c) {
    if (c < 0x80) return c >= '0' && c <= '9';
    return utf8proc_category(c) == UTF8PROC_CATEGORY_ND;
}

static int word_before(const char *s, size_t i) {
    if (i == 0) return 0;
    size_t j = cp_prev(s, i), n;
    return py_word(cp_at(s, i, j, &n));
}
static int word_after(const char *s, size_t len, size_t i) {
    size_t n;
    return i < len && py_word(cp_at(s, len, i, &n));
}
/* re \b at byte i */
static int at_boundary(const char *s, size_t len, size_t i) { return word_before(s, i) != word_after(s, len, i); }

static int is_ascii_digit(char c) { return c >= '0' && c <= '9'; }

/* ---- string steps -------------------------------------------------------------------- */

/* str.lower(): full lowercase mapping (U+0130 becomes "i" + U+0307). */
static void py_lower(const char *s, size_t len, xtts_sb *o) {
    for (size_t i = 0; i < len;) {
        size_t n;
        int32_t c = cp_at(s, len, i, &n);
        if (c == 0x130) xtts_sb_puts(o, "i\xcc\x87");
        else if (c == 0xFFFD && n == 1) xtts_sb_putn(o, s + i, 1);
        else {
            utf8proc_uint8_t b[4];
            utf8proc_ssize_t k = utf8proc_encode_char(utf8proc_tolower(c), b);
            xtts_sb_putn(o, (const char *)b, (size_t)k);
        }
        i += n;
    }
}

/* ---- thousands separators ------------------------------------------------------------- */

/* \b\d{1,3}(G\d{3})*(F\d+)?\b at byte p, Python's order of trying: G is ',' (commas) or
 * any code point but '\n' (the dot pattern's unescaped '.'); F is '.' or ','. Returns the
 * end, or 0 for no match (a match is never empty). */
static size_t match_grouped(const char *s, size_t len, size_t p, int any_group, char group, char frac) {
    if (!at_boundary(s, len, p)) return 0;
    size_t d[4];
    int nd = 0;
    size_t q = p;
    d[0] = p;
    while (nd < 3 && q < len) {
        size_t n;
        if (!py_digit(cp_at(s, len, q, &n))) break;
        q += n;
        d[++nd] = q;
    }
    for (int k = nd; k >= 1; k--) {
        /* the greedy group repetitions: positions after 0..m groups */
        size_t g[256];
        int m = 0;
        g[0] = d[k];
        while (m < 255) {
            size_t x = g[m], n;
            if (x >= len) break;
            int32_t c = cp_at(s, len, x, &n);
            if (any_group ? c == '\n' : c != (unsigned char)group) break;
            x += n;
            int ok = 1;
            for (int j = 0; j < 3 && ok; j++) {
                size_t n2;
                if (x < len && py_digit(cp_at(s, len, x, &n2))) x += n2;
                else ok = 0;
            }
            if (!ok) break;
            g[++m] = x;
        }
        for (int i = m; i >= 0; i--) {
            size_t x = g[i];
            if (x < len && s[x] == frac) {
                size_t y = x + 1, ends[64];
                int ne = 0;
                while (y < len) {
                    size_t n;
                    if (!py_digit(cp_at(s, len, y, &n))) break;
                    y += n;
                    if (ne < 64) ends[ne++] = y;
                    else ends[ne - 1] = y;
                }
                for (int e = ne - 1; e >= 0; e--)
                    if (at_boundary(s, len, ends[e])) return ends[e];
            }
            if (at_boundary(s, len, x)) return x;
        }
    }
    return 0;
}

/* re.sub(pattern, remove 'drop' characters, text) */
static void strip_separators(xtts_sb *t, int commas) {
    xtts_sb o = {0};
    const char *s = t->s;
    size_t len = t->len;
    for (size_t i = 0; i < len;) {
        size_t e = commas ? match_grouped(s, len, i, 0, ',', '.') : match_grouped(s, len, i, 1, 0, ',');
        if (e) {
            char drop = commas ? ',' : '.';
            for (size_t j = i; j < e; j++)
                if (s[j] != drop) xtts_sb_putc(&o, s[j]);
            i = e;
        } else {
            size_t n;
            cp_at(s, len, i, &n);
            xtts_sb_putn(&o, s + i, n);
            i += n;
        }
    }
    if (o.failed) { t->failed = 1; xtts_sb_free(&o); return; }
    xtts_sb_move(t, &o);
}

/* ---- numbers -------------------------------------------------------------------------- */

typedef struct {
    const char *lang;      /* Coqui's language code */
    const xtts_n2w_lang *n2w;
    xtts_error *err;
    int failed;            /* a num2words call failed: Coqui raises */
    int keep_case;         /* spoken mode: no lowercasing of the number words */
} ctx;

/* Python's float(x) repr for a string of digits with at most one '.', or -1. */
static int float_repr(const char *s, size_t n, char *repr, size_t size) {
    char buf[512];
    int dots = 0, digits = 0;
    if (n == 0 || n >= sizeof buf) return -1;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '.') dots++;
        else if (is_ascii_digit(s[i])) digits++;
        else return -1;
    }
    if (dots > 1 || !digits) return -1;
    memcpy(buf, s, n);
    buf[n] = 0;
    double v = strtod(buf, NULL);
    xtts_py_float_repr(v, repr, size);
    return 0;
}

static const char *and_equivalent(const char *lang) {
    if (!strcmp(lang, "es")) return " con ";
    if (!strcmp(lang, "fr")) return " et ";
    if (!strcmp(lang, "de")) return " und ";
    if (!strcmp(lang, "pt") || !strcmp(lang, "it")) return " e ";
    return ", ";
}

static const char *currency_symbols[3][2] = {{"GBP", "\xc2\xa3"}, {"USD", "$"}, {"EUR", "\xe2\x82\xac"}};

/* One of Coqui's _currency_re at byte p: end or 0. */
static size_t match_currency(const char *s, size_t len, size_t p, const char *sym) {
    size_t sl = strlen(sym);
#define CUR_CLASS(c) (is_ascii_digit(c) || (c) == '.' || (c) == ',')
    if (p + sl <= len && !memcmp(s + p, sym, sl)) {
        size_t q = p + sl, last = 0;
        while (q < len && CUR_CLASS(s[q])) { if (is_ascii_digit(s[q])) last = q + 1; q++; }
        if (last) return last;
    }
    size_t q = p;
    while (q < len && CUR_CLASS(s[q])) q++;
    if (q > p && is_ascii_digit(s[q - 1]) && q + sl <= len && !memcmp(s + q, sym, sl)) return q + sl;
#undef CUR_CLASS
    return 0;
}

/* re.sub(_currency_re[cur], _expand_currency, text): 0, or -1 when Coqui's call raises
 * (the text is then left as it was). */
static int expand_currency(ctx *c, xtts_sb *t, int which) {
    const char *cur = currency_symbols[which][0], *sym = currency_symbols[which][1];
    if (!strstr(t->s ? t->s : "", sym)) return 0;
    xtts_sb o = {0};
    const char *s = t->s;
    size_t len = t->len;
    for (size_t i = 0; i < len;) {
        size_t e = match_currency(s, len, i, sym);
        if (!e) {
            size_t n;
            cp_at(s, len, i, &n);
            xtts_sb_putn(&o, s + i, n);
            i += n;
            continue;
        }
        char amount[512], repr[40];
        size_t an = 0;
        for (size_t j = i; j < e && an < sizeof amount - 1; j++) {
            if (is_ascii_digit(s[j]) || s[j] == '.') amount[an++] = s[j];
            else if (s[j] == ',') amount[an++] = '.';
        }
        xtts_sb w = {0};
        if (float_repr(amount, an, repr, sizeof repr) || !c->n2w->currency || c->n2w->currency(repr, cur, &w) ||
            w.failed) {
            xtts_sb_free(&w);
            xtts_sb_free(&o);
            return -1;
        }
        size_t wl = w.len;
        double amt = strtod(repr, NULL);
        if ((isfinite(amt) && amt == floor(amt)) || strchr(repr, 'e')) {
            /* amount.is_integer(): cut at the last "and" */
            const char *ae = and_equivalent(c->lang);
            size_t al = strlen(ae);
            for (size_t k = wl; k-- > 0;)
                if (k + al <= w.len && !memcmp(w.s + k, ae, al)) {
                    /* Departure (pt): num2words pt already leaves out "e zero cêntimos" (EUR,
                     * USD), so there the last " e " is inside the number and Coqui's cut would
                     * take "vinte e cinco euros" down to "vinte". The cut is made only where
                     * it removes the zero cents ("trinta libras e zero pence" -> "trinta
                     * libras", as in Coqui). */
                    if (!strcmp(c->lang, "pt") && strncmp(w.s + k + al, "zero ", 5)) break;
                    wl = k;
                    break;
                }
        }
        xtts_sb_putn(&o, w.s, wl);
        xtts_sb_free(&w);
        i = e;
    }
    if (o.failed) { t->failed = 1; xtts_sb_free(&o); return 0; }
    xtts_sb_move(t, &o);
    return 0;
}

static void n2w_failed(ctx *c, const char *what, const char *s, size_t n) {
    if (c->failed) return;
    c->failed = 1;
    xtts_error_set(c->err, XTTS_EINPUT, "--normalize xtts: num2words cannot say %s '%.*s' in '%s'", what,
                   (int)(n > 40 ? 40 : n), s, c->lang);
}

/* ([0-9]+[.,][0-9]+) -> num2words(float) */
static void expand_decimals(ctx *c, xtts_sb *t) {
    xtts_sb o = {0};
    const char *s = t->s;
    size_t len = t->len;
    for (size_t i = 0; i < len && !c->failed;) {
        if (is_ascii_digit(s[i])) {
            size_t q = i;
            while (q < len && is_ascii_digit(s[q])) q++;
            if (q + 1 < len && (s[q] == '.' || s[q] == ',') && is_ascii_digit(s[q + 1])) {
                size_t e = q + 1;
                while (e < len && is_ascii_digit(s[e])) e++;
                char amount[512], repr[40];
                size_t an = e - i;
                if (an < sizeof amount) {
                    memcpy(amount, s + i, an);
                    amount[q - i] = '.';
                }
                double v = an < sizeof amount ? strtod((amount[an] = 0, amount), NULL) : 1e300;
                if (an >= sizeof amount || v >= 9.2e18 || float_repr(amount, an, repr, sizeof repr) ||
                    !c->n2w->cardinal_float || c->n2w->cardinal_float(repr, &o)) {
                    n2w_failed(c, "the number", s + i, e - i);
                    break;
                }
                i = e;
                continue;
            }
            xtts_sb_putn(&o, s + i, q - i);
            i = q;
            continue;
        }
        xtts_sb_putc(&o, s[i++]);
    }
    if (o.failed) t->failed = 1;
    xtts_sb_move(t, &o);
}

/* Coqui's _ordinal_re: suffixes tried in order after a run of ASCII digits. A suffix "\\."
 * is a dot followed by whitespace or the end (the lookahead (?=\s|$)). */
typedef struct {
    const char *lang;
    const char *suffix[10];
} ordinal_rule;

static const ordinal_rule ordinal_rules[] = {
    {"en", {"st", "nd", "rd", "th"}},
    {"es", {"\xc2\xba", "\xc2\xaa", "er", "o", "a", "os", "as"}},
    {"fr", {"\xc2\xba", "\xc2\xaa", "er", "re", "e", "\xc3\xa8me"}},
    {"de", {"st", "nd", "rd", "th", "\xc2\xba", "\xc2\xaa", "\\."}},
    {"pt", {"\xc2\xba", "\xc2\xaa", "o", "a", "os", "as"}},
    {"it", {"\xc2\xba", "\xc2\xb0", "\xc2\xaa", "o", "a", "i", "e"}},
    {"pl", {"\xc2\xba", "\xc2\xaa", "st", "nd", "rd", "th"}},
    {"ar", {"\xd9\x88\xd9\x86", "\xd9\x8a\xd9\x86", "\xd8\xab", "\xd8\xb1", "\xd9\x89"}},
    {"cs", {"\\."}},
    {"ru", {"-\xd0\xb9", "-\xd1\x8f", "-\xd0\xb5", "-\xd0\xbe\xd0\xb5", "-\xd1\x8c\xd0\xb5", "-\xd0\xb3\xd0\xbe"}},
    {"nl", {"de", "ste", "e"}},
    {"tr", {".", "inci", "nci", "uncu", "\xc3\xbc\x6e\x63\xc3\xbc", "."}},
    {"hu", {".", "adik", "edik", "odik", "edik", "\xc3\xb6" "dik", "\xc3\xb6" "dike", "ik"}},
    {"ko", {"\xeb\xb2\x88\xec\xa7\xb8", "\xeb\xb2\x88", "\xec\xb0\xa8", "\xec\xa7\xb8"}},
};

static const ordinal_rule *ordinal_rule_for(const char *lang) {
    for (size_t i = 0; i < sizeof ordinal_rules / sizeof ordinal_rules[0]; i++)
        if (!strcmp(ordinal_rules[i].lang, lang)) return &ordinal_rules[i];
    return NULL;
}

/* Digits s[0..n) as int64, or -1 when too large. */
static int64_t digits_value(const char *s, size_t n) {
    int64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (v > (INT64_MAX - 9) / 10) return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

/* Ordinals (when rule) or plain numbers (rule NULL): every run of ASCII digits. */
static void expand_integers(ctx *c, xtts_sb *t, const ordinal_rule *rule) {
    xtts_sb o = {0};
    const char *s = t->s;
    size_t len = t->len;
    for (size_t i = 0; i < len && !c->failed;) {
        if (!is_ascii_digit(s[i])) { xtts_sb_putc(&o, s[i++]); continue; }
        size_t q = i;
        while (q < len && is_ascii_digit(s[q])) q++;
        size_t sl = 0;
        int matched = !rule;
        for (int k = 0; rule && k < 10 && rule->suffix[k]; k++) {
            const char *suf = rule->suffix[k];
            if (!strcmp(suf, "\\.")) {
                size_t n;
                if (q < len && s[q] == '.' && (q + 1 == len || py_space(cp_at(s, len, q + 1, &n)))) { sl = 1; matched = 1; break; }
            } else {
                size_t l = strlen(suf);
                if (q + l <= len && !memcmp(s + q, suf, l)) { sl = l; matched = 1; break; }
            }
        }
        if (!matched) { xtts_sb_putn(&o, s + i, q - i); i = q; continue; }
        int64_t v = digits_value(s + i, q - i);
        int rc = v < 0 ? -1 : rule ? (c->n2w->ordinal ? c->n2w->ordinal(v, &o) : -1)
                                   : (c->n2w->cardinal ? c->n2w->cardinal(v, &o) : -1);
        if (rc) { n2w_failed(c, rule ? "the ordinal" : "the number", s + i, q - i); break; }
        i = q + sl;
    }
    if (o.failed) t->failed = 1;
    xtts_sb_move(t, &o);
}

static void expand_numbers(ctx *c, xtts_sb *t) {
    strip_separators(t, !strcmp(c->lang, "en") || !strcmp(c->lang, "ru"));
    for (int k = 0; k < 3; k++)
        if (expand_currency(c, t, k)) break;
    if (strcmp(c->lang, "tr")) expand_decimals(c, t);
    /* Departure: where num2words has no ordinals (cs), Coqui's cleaner raises on every
     * "<digits>." before a space; here the dot stays and the number is read as a cardinal. */
    const ordinal_rule *r = c->n2w->ordinal ? ordinal_rule_for(c->lang) : NULL;
    if (r && !c->failed) expand_integers(c, t, r);
    if (!c->failed) expand_integers(c, t, NULL);
    /* Departure: num2words' own capitals (de "Komma", "Euro", "Million") survive Coqui's
     * lowercasing, which ran before; they are lowercased here. */
    if (!c->failed && !t->failed && !c->keep_case) {
        xtts_sb low = {0};
        py_lower(t->s, t->len, &low);
        xtts_sb_cstr(&low);
        xtts_sb_move(t, &low);
    }
}

/* ---- abbreviations and symbols ---------------------------------------------------------- */

typedef struct {
    const char *lang;
    const char *pairs[20][2];
} word_table;

/* _abbreviations: "\b<abbr>\." case-insensitive (ru: "\b<abbr>\b"). */
static const word_table abbreviations[] = {
    {"en", {{"mrs", "misess"}, {"mr", "mister"}, {"dr", "doctor"}, {"st", "saint"}, {"co", "company"},
            {"jr", "junior"}, {"maj", "major"}, {"gen", "general"}, {"drs", "doctors"}, {"rev", "reverend"},
            {"lt", "lieutenant"}, {"hon", "honorable"}, {"sgt", "sergeant"}, {"capt", "captain"},
            {"esq", "esquire"}, {"ltd", "limited"}, {"col", "colonel"}, {"ft", "fort"}}},
    {"es", {{"sra", "se\xc3\xb1ora"}, {"sr", "se\xc3\xb1or"}, {"dr", "doctor"}, {"dra", "doctora"}, {"st", "santo"},
            {"co", "compa\xc3\xb1\xc3\xad" "a"}, {"jr", "junior"}, {"ltd", "limitada"}}},
    {"fr", {{"mme", "madame"}, {"mr", "monsieur"}, {"dr", "docteur"}, {"st", "saint"}, {"co", "compagnie"},
            {"jr", "junior"}, {"ltd", "limit\xc3\xa9" "e"}}},
    {"de", {{"fr", "frau"}, {"dr", "doktor"}, {"st", "sankt"}, {"co", "firma"}, {"jr", "junior"}}},
    {"pt", {{"sra", "senhora"}, {"sr", "senhor"}, {"dr", "doutor"}, {"dra", "doutora"}, {"st", "santo"},
            {"co", "companhia"}, {"jr", "j\xc3\xbanior"}, {"ltd", "limitada"}}},
    {"it", {{"sig", "signore"}, {"dr", "dottore"}, {"st", "santo"}, {"co", "compagnia"}, {"jr", "junior"},
            {"ltd", "limitata"}}},
    {"pl", {{"p", "pani"}, {"m", "pan"}, {"dr", "doktor"}, {"sw", "\xc5\x9bwi\xc4\x99ty"}, {"jr", "junior"}}},
    {"cs", {{"dr", "doktor"}, {"ing", "in\xc5\xbe" "en\xc3\xbdr"}, {"p", "pan"}}},
    {"ru", {{"\xd0\xb3-\xd0\xb6\xd0\xb0", "\xd0\xb3\xd0\xbe\xd1\x81\xd0\xbf\xd0\xbe\xd0\xb6\xd0\xb0"},
            {"\xd0\xb3-\xd0\xbd", "\xd0\xb3\xd0\xbe\xd1\x81\xd0\xbf\xd0\xbe\xd0\xb4\xd0\xb8\xd0\xbd"},
            {"\xd0\xb4-\xd1\x80", "\xd0\xb4\xd0\xbe\xd0\xba\xd1\x82\xd0\xbe\xd1\x80"}}},
    {"nl", {{"dhr", "de heer"}, {"mevr", "mevrouw"}, {"dr", "dokter"}, {"jhr", "jonkheer"}}},
    {"tr", {{"b", "bay"}, {"byk", "b\xc3\xbcy\xc3\xbck"}, {"dr", "doktor"}}},
    {"hu", {{"dr", "doktor"}, {"b", "b\xc3\xa1" "csi"}, {"n\xc5\x91v", "n\xc5\x91v\xc3\xa9r"}}},
};

/* _symbols_multilingual: each symbol becomes " word ". */
static const word_table symbols[] = {
    {"en", {{"&", " and "}, {"@", " at "}, {"%", " percent "}, {"#", " hash "}, {"$", " dollar "},
            {"\xc2\xa3", " pound "}, {"\xc2\xb0", " degree "}}},
    {"es", {{"&", " y "}, {"@", " arroba "}, {"%", " por ciento "}, {"#", " numeral "}, {"$", " dolar "},
            {"\xc2\xa3", " libra "}, {"\xc2\xb0", " grados "}}},
    {"fr", {{"&", " et "}, {"@", " arobase "}, {"%", " pour cent "}, {"#", " di\xc3\xa8se "}, {"$", " dollar "},
            {"\xc2\xa3", " livre "}, {"\xc2\xb0", " degr\xc3\xa9s "}}},
    {"de", {{"&", " und "}, {"@", " at "}, {"%", " prozent "}, {"#", " raute "}, {"$", " dollar "},
            {"\xc2\xa3", " pfund "}, {"\xc2\xb0", " grad "}}},
    {"pt", {{"&", " e "}, {"@", " arroba "}, {"%", " por cento "}, {"#", " cardinal "}, {"$", " d\xc3\xb3lar "},
            {"\xc2\xa3", " libra "}, {"\xc2\xb0", " graus "}}},
    {"it", {{"&", " e "}, {"@", " chiocciola "}, {"%", " per cento "}, {"#", " cancelletto "},
            {"$", " dollaro "}, {"\xc2\xa3", " sterlina "}, {"\xc2\xb0", " gradi "}}},
    {"pl", {{"&", " i "}, {"@", " ma\xc5\x82pa "}, {"%", " procent "}, {"#", " krzy\xc5\xbcyk "}, {"$", " dolar "},
            {"\xc2\xa3", " funt "}, {"\xc2\xb0", " stopnie "}}},
    {"ar", {{"&", " \xd9\x88 "}, {"@", " \xd8\xb9\xd9\x84\xd9\x89 "},
            {"%", " \xd9\x81\xd9\x8a \xd8\xa7\xd9\x84\xd9\x85\xd8\xa6\xd8\xa9 "}, {"#", " \xd8\xb1\xd9\x82\xd9\x85 "},
            {"$", " \xd8\xaf\xd9\x88\xd9\x84\xd8\xa7\xd8\xb1 "}, {"\xc2\xa3", " \xd8\xac\xd9\x86\xd9\x8a\xd9\x87 "},
            {"\xc2\xb0", " \xd8\xaf\xd8\xb1\xd8\xac\xd8\xa9 "}}},
    {"zh", {{"&", " \xe5\x92\x8c "}, {"@", " \xe5\x9c\xa8 "}, {"%", " \xe7\x99\xbe\xe5\x88\x86\xe4\xb9\x8b "},
            {"#", " \xe5\x8f\xb7 "}, {"$", " \xe7\xbe\x8e\xe5\x85\x83 "}, {"\xc2\xa3", " \xe8\x8b\xb1\xe9\x95\x91 "},
            {"\xc2\xb0", " \xe5\xba\xa6 "}}},
    {"cs", {{"&", " a "}, {"@", " na "}, {"%", " procento "}, {"#", " k\xc5\x99\xc3\xad\xc5\xbe" "ek "},
            {"$", " dolar "}, {"\xc2\xa3", " libra "}, {"\xc2\xb0", " stupn\xc4\x9b "}}},
    {"ru", {{"&", " \xd0\xb8 "}, {"@", " \xd1\x81\xd0\xbe\xd0\xb1\xd0\xb0\xd0\xba\xd0\xb0 "},
            {"%", " \xd0\xbf\xd1\x80\xd0\xbe\xd1\x86\xd0\xb5\xd0\xbd\xd1\x82\xd0\xbe\xd0\xb2 "},
            {"#", " \xd0\xbd\xd0\xbe\xd0\xbc\xd0\xb5\xd1\x80 "}, {"$", " \xd0\xb4\xd0\xbe\xd0\xbb\xd0\xbb\xd0\xb0\xd1\x80 "},
            {"\xc2\xa3", " \xd1\x84\xd1\x83\xd0\xbd\xd1\x82 "}, {"\xc2\xb0", " \xd0\xb3\xd1\x80\xd0\xb0\xd0\xb4\xd1\x83\xd1\x81 "}}},
    {"nl", {{"&", " en "}, {"@", " bij "}, {"%", " procent "}, {"#", " hekje "}, {"$", " dollar "},
            {"\xc2\xa3", " pond "}, {"\xc2\xb0", " graden "}}},
    {"tr", {{"&", " ve "}, {"@", " at "}, {"%", " y\xc3\xbcz" "de "}, {"#", " diyez "}, {"$", " dolar "},
            {"\xc2\xa3", " sterlin "}, {"\xc2\xb0", " derece "}}},
    {"hu", {{"&", " \xc3\xa9s "}, {"@", " kukac "}, {"%", " sz\xc3\xa1zal\xc3\xa9k "}, {"#", " kett\xc5\x91skereszt "},
            {"$", " doll\xc3\xa1r "}, {"\xc2\xa3", " font "}, {"\xc2\xb0", " fok "}}},
    {"ko", {{"&", " \xea\xb7\xb8\xeb\xa6\xac\xea\xb3\xa0 "}, {"@", " \xec\x97\x90 "},
            {"%", " \xed\x8d\xbc\xec\x84\xbc\xed\x8a\xb8 "}, {"#", " \xeb\xb2\x88\xed\x98\xb8 "},
            {"$", " \xeb\x8b\xac\xeb\x9f\xac "}, {"\xc2\xa3", " \xed\x8c\x8c\xec\x9a\xb4\xeb\x93\x9c "},
            {"\xc2\xb0", " \xeb\x8f\x84 "}}},
};

static const word_table *table_for(const word_table *t, size_t n, const char *lang) {
    for (size_t i = 0; i < n; i++)
        if (!strcmp(t[i].lang, lang)) return &t[i];
    return NULL;
}

/* ASCII letters compare without case (re.IGNORECASE; the text is already lowercased). */
static int match_ci(const char *s, size_t len, size_t p, const char *w) {
    size_t l = strlen(w);
    if (p + l > len) return 0;
    for (size_t i = 0; i < l; i++) {
        char a = s[p + i], b = w[i];
        if (a >= 'A' && a <= 'Z') a = (char)(a - 'A' + 'a');
        if (a != b) return 0;
    }
    return 1;
}

static void expand_abbreviations(xtts_sb *t, const char *lang) {
    const word_table *w = table_for(abbreviations, sizeof abbreviations / sizeof abbreviations[0], lang);
    int ru = !strcmp(lang, "ru");
    for (int k = 0; w && k < 20 && w->pairs[k][0] && !t->failed; k++) {
        const char *a = w->pairs[k][0];
        size_t al = strlen(a);
        /* most texts hold none of the abbreviations: look before rebuilding the text (outside
         * ru an abbreviation ends at a dot, so only the bytes before each dot need a look) */
        int any = 0;
        if (ru) {
            for (size_t i = 0; i + al <= t->len && !any; i++) any = match_ci(t->s, t->len, i, a);
        } else {
            for (const char *d = memchr(t->s, '.', t->len); d && !any; d = memchr(d + 1, '.', t->len - (size_t)(d + 1 - t->s)))
                any = (size_t)(d - t->s) >= al && match_ci(t->s, t->len, (size_t)(d - t->s) - al, a);
        }
        if (!any) continue;
        xtts_sb o = {0};
        for (size_t i = 0; i < t->len;) {
            int m = match_ci(t->s, t->len, i, a) && at_boundary(t->s, t->len, i) &&
                    (ru ? at_boundary(t->s, t->len, i + al) : (i + al < t->len && t->s[i + al] == '.'));
            if (m) {
                xtts_sb_puts(&o, w->pairs[k][1]);
                i += al + (ru ? 0 : 1);
            } else {
                size_t n;
                cp_at(t->s, t->len, i, &n);
                xtts_sb_putn(&o, t->s + i, n);
                i += n;
            }
        }
        if (o.failed) t->failed = 1;
        xtts_sb_move(t, &o);
    }
}

/* str.strip() */
static void py_strip(xtts_sb *t) {
    size_t a = 0, b = 0, n;
    while (a < t->len && py_space(cp_at(t->s, t->len, a, &n))) a += n;
    /* forward, so that malformed bytes are read the same way as everywhere else */
    for (size_t i = a; i < t->len; i += n)
        if (!py_space(cp_at(t->s, t->len, i, &n))) b = i + n;
    if (b < a) b = a;
    memmove(t->s, t->s + a, b - a);
    t->len = b - a;
    t->s[t->len] = 0;
}

static void expand_symbols(xtts_sb *t, const char *lang) {
    const word_table *w = table_for(symbols, sizeof symbols / sizeof symbols[0], lang);
    for (int k = 0; w && k < 20 && w->pairs[k][0]; k++) {
        xtts_sb_replace(t, w->pairs[k][0], w->pairs[k][1], -1);
        xtts_sb_replace(t, "  ", " ", -1);
    }
    if (t->len) py_strip(t);
}

/* re.sub(r"\s+", " ", text) */
static void collapse_whitespace(xtts_sb *t) {
    xtts_sb o = {0};
    for (size_t i = 0; i < t->len;) {
        size_t n;
        int32_t c = cp_at(t->s, t->len, i, &n);
        if (py_space(c)) {
            while (i < t->len && py_space(cp_at(t->s, t->len, i, &n))) i += n;
            xtts_sb_putc(&o, ' ');
        } else {
            xtts_sb_putn(&o, t->s + i, n);
            i += n;
        }
    }
    if (o.failed) t->failed = 1;
    xtts_sb_move(t, &o);
}

/* ---- the whole preparation ---------------------------------------------------------- */

static int has_ascii_digit(const xtts_sb *t) {
    for (size_t i = 0; i < t->len; i++)
        if (is_ascii_digit(t->s[i])) return 1;
    return 0;
}

static int is_one_of(const char *lang, const char *const *list) {
    for (; *list; list++)
        if (!strcmp(lang, *list)) return 1;
    return 0;
}

xtts_status xtts_text_prepare(const char *text, size_t len, const char *lang_in, char **out, xtts_error *err) {
    static const char *const multilingual[] = {"ar", "cs", "de", "en", "es", "fr", "hu", "it", "nl",
                                               "pl", "pt", "ru", "tr", "zh", "ko", NULL};
    char lang[8];
    size_t ll = 0;
    *out = NULL;
    while (lang_in && lang_in[ll] && lang_in[ll] != '-' && ll < sizeof lang - 1) {
        lang[ll] = lang_in[ll];
        ll++;
    }
    lang[ll] = 0;
    xtts_sb t = {0};
    xtts_status st = XTTS_OK;
    if (is_one_of(lang, multilingual)) {
        ctx c = {lang, xtts_n2w_find(lang), err, 0, 0};
        xtts_sb_cstr(&t);
        for (size_t i = 0; i < len; i++)
            if (text[i] != '"') xtts_sb_putc(&t, text[i]);
        if (!strcmp(lang, "tr")) {
            xtts_sb_replace(&t, "\xc4\xb0", "i", -1);
            xtts_sb_replace(&t, "\xc3\x96", "\xc3\xb6", -1);
            xtts_sb_replace(&t, "\xc3\x9c", "\xc3\xbc", -1);
        }
        xtts_sb low = {0};
        py_lower(t.s, t.len, &low);
        xtts_sb_cstr(&low);
        xtts_sb_move(&t, &low);
        if (!strcmp(lang, "zh")) {
            /* expand_numbers_multilingual for zh: zh_num2words' TextNorm (prep/text/normalize/zh_numbers.c) */
            xtts_sb z = {0};
            xtts_status zs = xtts_zh_numbers_normalize(t.s, t.len, &z, err);
            xtts_sb_free(&t);
            if (zs != XTTS_OK) { xtts_sb_free(&z); return zs; }
            xtts_sb_cstr(&z);
            xtts_sb_move(&t, &z);
        } else if (has_ascii_digit(&t) || strstr(t.s, "\xe2\x82\xac") || strchr(t.s, '$') || strstr(t.s, "\xc2\xa3")) {
            if (!c.n2w || !c.n2w->cardinal) {
                if (has_ascii_digit(&t)) {
                    xtts_sb_free(&t);
                    return xtts_error_set(err, XTTS_EUNSUPPORTED,
                                          "--normalize xtts: no number words for language '%s' in this build", lang);
                }
            } else {
                expand_numbers(&c, &t);
                if (c.failed) { xtts_sb_free(&t); return XTTS_EINPUT; }
            }
        }
        expand_abbreviations(&t, lang);
        expand_symbols(&t, lang);
        collapse_whitespace(&t);
        if (!strcmp(lang, "zh") || !strcmp(lang, "ko")) {
            xtts_sb r = {0};
            if (xtts_romanize(t.s, t.len, !strcmp(lang, "zh") ? "zh-cn" : "ko", &r)) {
                xtts_sb_free(&r);
                st = xtts_error_set(err, XTTS_EUNSUPPORTED, "--normalize xtts: no romanization for '%s' in this build", lang);
            } else {
                xtts_sb_move(&t, &r);
            }
        }
    } else if (!strcmp(lang, "ja")) {
        xtts_sb r = {0};
        char why[320];
        int rc = xtts_romanize_why(text, len, "ja", &r, why, sizeof why);
        if (rc == -1) {
            st = xtts_error_set(err, XTTS_EUNSUPPORTED, "--normalize xtts: no romanization for 'ja': %s", why);
        } else if (rc) {
            st = xtts_error_set(err, XTTS_EINPUT, "--normalize xtts: ja: %s", why);
        } else {
            xtts_sb_cstr(&r);
            py_lower(r.s, r.len, &t);
        }
        xtts_sb_free(&r);
    } else if (*lang) {
        /* hi goes through basic_cleaners (lowercase, whitespace); so does any language Coqui's
         * preprocess_text does not know (it raises for them): a vocabulary extended with a new
         * [xx] token then trains on text prepared the way XTTS prepares hi (a departure,
         * docs/xtts-tokenize.md) */
        py_lower(text, len, &t);
        xtts_sb_cstr(&t);
        collapse_whitespace(&t);
    } else {
        return xtts_error_set(err, XTTS_EUNSUPPORTED, "--normalize xtts: no language given");
    }
    if (st != XTTS_OK) { xtts_sb_free(&t); return st; }
    xtts_sb_cstr(&t);
    if (t.failed) { xtts_sb_free(&t); return xtts_error_set(err, XTTS_ENOMEM, "out of memory"); }
    *out = t.s;
    return XTTS_OK;
}

/* VoiceBpeTokenizer.char_limits; check_input_length takes the code before its first '-'
 * and 250 for a language the table lacks. */
int xtts_text_char_limit(const char *lang) {
    static const struct { const char *lang; int limit; } limits[] = {
        {"en", 250}, {"de", 253}, {"fr", 273}, {"es", 239}, {"it", 213}, {"pt", 203},
        {"pl", 224}, {"zh", 82},  {"ar", 166}, {"cs", 186}, {"ru", 182}, {"nl", 251},
        {"tr", 226}, {"ja", 71},  {"hu", 224}, {"ko", 95},
    };
    size_t n = lang ? strcspn(lang, "-") : 0;
    for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++)
        if (strlen(limits[i].lang) == n && !strncmp(limits[i].lang, lang, n)) return limits[i].limit;
    return 250;
}

/* len(txt) of Python: code points (a malformed byte counts as one). */
size_t xtts_text_char_count(const char *text, size_t len) {
    size_t n = 0;
    for (size_t i = 0; i < len;) {
        size_t k;
        cp_at(text, len, i, &k);
        i += k;
        n++;
    }
    return n;
}

int xtts_text_spoken_numbers(const char *text, size_t len, const char *lang, xtts_sb *out) {
    const xtts_n2w_lang *n = xtts_n2w_find(lang);
    if (!n || !n->cardinal) return -1;
    xtts_error err;
    ctx c = {lang, n, &err, 0, 1};
    xtts_sb t = {0};
    for (size_t i = 0; i < len; i++) xtts_sb_putc(&t, text[i]);
    xtts_sb_cstr(&t);
    expand_numbers(&c, &t);
    if (c.failed || t.failed) {
        /* a number num2words cannot say: the text keeps its digits */
        xtts_sb_putn(out, text, len);
    } else xtts_sb_putn(out, t.s ? t.s : "", t.len);
    xtts_sb_free(&t);
    return 0;
}
