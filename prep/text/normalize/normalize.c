/* normalize.c — text normalization (see normalize.h). The language rules are tables in
 * normalize_rules.c and number words come from numbers.h (the spoken variant of
 * prep/text/num2words/); this file is the scanner that applies them. */
#include "prep/text/normalize/normalize.h"
#include "prep/text/normalize/xtts_text.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "formats/tokens.h"
#include "prep/text/normalize/normalize_rules.h"
#include "prep/text/normalize/numbers.h"
#include "common/strbuf.h"

/* Marks a no-break or thin space between digit groups ("10 000") for the scanner. */
#define GROUP_MARK '\x01'

static int is_digit(char c) { return c >= '0' && c <= '9'; }
static int is_ascii_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
/* Letters and digits, counting every non-ASCII byte as part of a word. */
static int is_wordish(char c) { return is_digit(c) || is_ascii_alpha(c) || (unsigned char)c >= 0x80; }

/* ---- unification ------------------------------------------------------------------ */

/* Quotes, dashes, ellipsis, spaces and invisible characters to plain forms. */
static void unify(const uint8_t *s, size_t n, xtts_sb *b) {
    size_t i = 0;
    while (i < n) {
        int32_t cp;
        utf8proc_ssize_t k = utf8proc_iterate(s + i, (utf8proc_ssize_t)(n - i), &cp);
        if (k <= 0) { i++; continue; } /* validated before; defensive */
        switch (cp) {
        case 0x2018: case 0x2019: case 0x201A: case 0x201B: case 0x2032: case 0x00B4: case 0x02BC:
            xtts_sb_putc(b, '\''); break;
        case 0x201C: case 0x201D: case 0x201E: case 0x201F: case 0x2033: case 0x00AB: case 0x00BB:
            xtts_sb_putc(b, '"'); break;
        case 0x2010: case 0x2011: case 0x2012: case 0x2013: case 0x2014: case 0x2015: case 0x2212:
            xtts_sb_putc(b, '-'); break;
        case 0x2026:
            xtts_sb_puts(b, "..."); break;
        case 0x00AD: case 0x200B: case 0x2060: case 0xFEFF: case 0x200E: case 0x200F:
            break; /* invisible: soft hyphen, zero-width space, word joiner, BOM, direction marks */
        case 0x00A0: case 0x202F: case 0x2009: {
            int between_digits = b->len && is_digit(xtts_sb_last(b)) && i + (size_t)k < n && is_digit((char)s[i + k]);
            xtts_sb_putc(b, between_digits ? GROUP_MARK : ' ');
            break;
        }
        default: {
            utf8proc_category_t cat = utf8proc_category(cp);
            if (cat == UTF8PROC_CATEGORY_ZS || cat == UTF8PROC_CATEGORY_ZL || cat == UTF8PROC_CATEGORY_ZP ||
                cat == UTF8PROC_CATEGORY_CC || cp == 0x85)
                xtts_sb_putc(b, ' ');
            else
                xtts_sb_putn(b, (const char *)s + i, (size_t)k);
        }
        }
        i += (size_t)k;
    }
}

/* ---- expansion ---------------------------------------------------------------------- */

typedef struct {
    const char *s;   /* the unified text */
    size_t n;
    int lang;
    const xtts_lang_words *w;
    xtts_sb *out;
} scanner;

/* Start a run of words: a space unless the output ends in a space or an opening mark. */
static void word_start(xtts_sb *out) {
    char c = xtts_sb_last(out);
    if (out->len && (is_wordish(c) || strchr(".,;:!?%)]}\"", c))) xtts_sb_putc(out, ' ');
}

typedef struct {
    int neg;
    char ip[40]; size_t ni;  /* integer digits, separators removed */
    char fp[40]; size_t nf;  /* fraction digits */
    char frac_sep;           /* '.' or ',' when nf > 0 */
    int grouped;
    size_t end;              /* index after the number */
} number_tok;

/* Parse a number at s[i] (a digit, or '-' then a digit). Returns 0 or -1 (too long). */
static int parse_number(const scanner *sc, size_t i, number_tok *t) {
    const char *s = sc->s;
    size_t n = sc->n;
    memset(t, 0, sizeof *t);
    if (s[i] == '-') { t->neg = 1; i++; }
    char group = sc->w->group_sep, dec = sc->w->decimal_sep;
    while (i < n) {
        if (is_digit(s[i])) {
            if (t->ni >= sizeof t->ip - 1) return -1;
            t->ip[t->ni++] = s[i++];
        } else if ((s[i] == group || s[i] == GROUP_MARK || (s[i] == ' ' && sc->lang == 2)) && t->ni > 0 && i + 3 < n && is_digit(s[i + 1]) &&
                   is_digit(s[i + 2]) && is_digit(s[i + 3]) && (i + 4 >= n || !is_digit(s[i + 4])) &&
                   (t->grouped || t->ni <= 3)) {
            t->grouped = 1;
            i++;
        } else {
            break;
        }
    }
    /* decimal part: the language's separator, or '.' read as "point" in other languages */
    if (i + 1 < n && (s[i] == dec || s[i] == '.') && is_digit(s[i + 1])) {
        t->frac_sep = s[i];
        i++;
        while (i < n && is_digit(s[i])) {
            if (t->nf >= sizeof t->fp - 1) return -1;
            t->fp[t->nf++] = s[i++];
        }
    }
    t->end = i;
    return 0;
}

static uint64_t digits_value(const char *d, size_t n) {
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) v = v * 10 + (uint64_t)(d[i] - '0');
    return v;
}

/* An integer as words: digit by digit when it has a leading zero or is too long. */
static void say_integer(const scanner *sc, const char *d, size_t n, int form) {
    if (n == 0) return;
    if (n > 15 || (n > 1 && d[0] == '0')) xtts_num_digits(sc->lang, d, n, sc->out);
    else xtts_num_cardinal(sc->lang, digits_value(d, n), form, sc->out);
}

static void say_fraction(const scanner *sc, const number_tok *t) {
    xtts_sb_putc(sc->out, ' ');
    xtts_sb_puts(sc->out, t->frac_sep == ',' ? sc->w->comma : sc->w->point);
    xtts_sb_putc(sc->out, ' ');
    int as_number = sc->lang != 0 && sc->lang != 3 && t->nf <= 3 && t->fp[0] != '0';
    if (as_number) xtts_num_cardinal(sc->lang, digits_value(t->fp, t->nf), 0, sc->out);
    else xtts_num_digits(sc->lang, t->fp, t->nf, sc->out);
}

static void say_number(const scanner *sc, const number_tok *t, int form) {
    if (t->neg) { xtts_sb_puts(sc->out, sc->w->minus); xtts_sb_putc(sc->out, ' '); }
    say_integer(sc, t->ip, t->ni, form);
    if (t->nf) say_fraction(sc, t);
}

static const xtts_currency_rule *currency_at(const scanner *sc, size_t i, size_t *len) {
    for (const xtts_currency_rule *r = xtts_currency_rules; r->lang >= 0; r++) {
        if (r->lang != sc->lang) continue;
        size_t l = strlen(r->symbol);
        if (i + l <= sc->n && !memcmp(sc->s + i, r->symbol, l)) { *len = l; return r; }
    }
    return NULL;
}

static void say_money(const scanner *sc, const number_tok *t, const xtts_currency_rule *r) {
    xtts_sb *o = sc->out;
    if (t->neg) { xtts_sb_puts(o, sc->w->minus); xtts_sb_putc(o, ' '); }
    uint64_t major = digits_value(t->ip, t->ni);
    int cents_form = t->nf == 1 || t->nf == 2;
    uint64_t cents = !cents_form ? 0 : t->nf == 1 ? (uint64_t)(t->fp[0] - '0') * 10 : digits_value(t->fp, 2);
    if (t->nf && !cents_form) {
        say_integer(sc, t->ip, t->ni, 0);
        say_fraction(sc, t);
        xtts_sb_putc(o, ' ');
        xtts_sb_puts(o, r->major_many);
        return;
    }
    if (major > 0 || cents == 0 || t->ni > 15) {
        say_integer(sc, t->ip, t->ni, r->major_fem ? XTTS_NUM_FEM : XTTS_NUM_BEFORE_NOUN);
        xtts_sb_putc(o, ' ');
        xtts_sb_puts(o, major == 1 && t->ni <= 15 ? r->major_one : r->major_many);
    }
    if (cents > 0) {
        if (major > 0) { xtts_sb_putc(o, ' '); xtts_sb_puts(o, sc->w->money_and); xtts_sb_putc(o, ' '); }
        xtts_num_cardinal(sc->lang, cents, r->minor_fem ? XTTS_NUM_FEM : XTTS_NUM_BEFORE_NOUN, o);
        xtts_sb_putc(o, ' ');
        xtts_sb_puts(o, cents == 1 ? r->minor_one : r->minor_many);
    }
}

/* Length of an ordinal marker at s[i] for the language (0 if none); *fem set. */
static size_t ordinal_marker(const scanner *sc, size_t i, int *fem) {
    const char *s = sc->s + i;
    size_t left = sc->n - i;
    *fem = 0;
#define AT(lit) (left >= sizeof(lit) - 1 && !memcmp(s, lit, sizeof(lit) - 1) && \
                 (left == sizeof(lit) - 1 || !is_wordish(s[sizeof(lit) - 1])))
    switch (sc->lang) {
    case 0:
        if (left >= 2 && (!strncasecmp(s, "st", 2) || !strncasecmp(s, "nd", 2) || !strncasecmp(s, "rd", 2) ||
                          !strncasecmp(s, "th", 2)) && (left == 2 || !is_wordish(s[2])))
            return 2;
        return 0;
    case 2:
        if (AT("er")) return 2;
        if (AT("re")) { *fem = 1; return 2; }
        if (AT("ère")) { *fem = 1; return 4; }
        if (AT("ème")) return 4;
        if (AT("eme")) return 3;
        if (AT("e")) return 1;
        if (AT("ᵉ")) return 3;
        return 0;
    case 1: case 4: case 5:
        if (AT("º")) return 2;
        if (AT("ª")) { *fem = 1; return 2; }
        if (AT(".º")) return 3;
        if (AT(".ª")) { *fem = 1; return 3; }
        return 0;
    case 3: {
        /* "3. Mai": '.', one space, then a listed noun */
        if (left < 3 || s[0] != '.' || s[1] != ' ') return 0;
        for (const char *const *w = xtts_de_ordinal_nouns; *w; w++) {
            size_t l = strlen(*w);
            if (left >= 2 + l && !memcmp(s + 2, *w, l) && (left == 2 + l || !is_wordish(s[2 + l]))) return 1;
        }
        return 0;
    }
    }
#undef AT
    return 0;
}

/* Expand a number starting at i; returns the index after what was consumed. */
static size_t expand_number(const scanner *sc, size_t i) {
    number_tok t;
    xtts_sb *o = sc->out;
    if (parse_number(sc, i, &t)) {
        /* absurdly long: copy the digits as they are */
        size_t j = i;
        while (j < sc->n && (is_digit(sc->s[j]) || sc->s[j] == '-')) j++;
        xtts_sb_putn(o, sc->s + i, j - i);
        return j;
    }
    size_t e = t.end;
    const char *s = sc->s;
    word_start(o);
    /* time: H:MM */
    if (!t.neg && !t.nf && !t.grouped && t.ni <= 2 && e + 2 < sc->n + 0 && s[e] == ':' && is_digit(s[e + 1]) &&
        is_digit(s[e + 2]) && (e + 3 >= sc->n || !is_digit(s[e + 3]))) {
        unsigned h = (unsigned)digits_value(t.ip, t.ni), m = (unsigned)((s[e + 1] - '0') * 10 + (s[e + 2] - '0'));
        if (h < 24 && m < 60) {
            const xtts_lang_words *w = sc->w;
            int form = sc->lang == 3 ? XTTS_NUM_BEFORE_NOUN : sc->lang == 0 ? XTTS_NUM_MASC : XTTS_NUM_FEM;
            xtts_num_cardinal(sc->lang, h, form, o);
            if (*w->hour_one) { xtts_sb_putc(o, ' '); xtts_sb_puts(o, h == 1 ? w->hour_one : w->hour_many); }
            if (m == 0) {
                if (*w->oclock) {
                    xtts_sb_putc(o, ' ');
                    xtts_sb_puts(o, sc->lang == 5 && h == 1 ? "hora" : w->oclock);
                }
            } else {
                xtts_sb_puts(o, w->time_join);
                if (sc->lang == 0 && m < 10) xtts_sb_puts(o, "oh ");
                xtts_num_cardinal(sc->lang, m, 0, o);
            }
            return e + 3;
        }
    }
    /* percent */
    size_t pe = e;
    if (pe < sc->n && (s[pe] == ' ' || s[pe] == GROUP_MARK) && pe + 1 < sc->n && s[pe + 1] == '%') pe++;
    if (pe < sc->n && s[pe] == '%') {
        say_number(sc, &t, 0);
        xtts_sb_putc(o, ' ');
        xtts_sb_puts(o, sc->w->percent);
        return pe + 1;
    }
    /* currency after the amount: "5 €", "5€" */
    size_t ce = e, clen;
    if (ce < sc->n && (s[ce] == ' ' || s[ce] == GROUP_MARK)) ce++;
    const xtts_currency_rule *cur = ce < sc->n ? currency_at(sc, ce, &clen) : NULL;
    if (cur) {
        say_money(sc, &t, cur);
        return ce + clen;
    }
    /* ordinals */
    int fem;
    size_t ol = (!t.neg && !t.nf && !t.grouped && t.ni <= 6) ? ordinal_marker(sc, e, &fem) : 0;
    if (ol) {
        uint64_t v = digits_value(t.ip, t.ni);
        if (v > 0 && !xtts_num_ordinal(sc->lang, v, fem, o)) return e + ol;
    }
    /* English years, and decades: 1984, the 1980s */
    if (sc->lang == 0 && !t.neg && !t.nf && !t.grouped && t.ni == 4) {
        uint64_t v = digits_value(t.ip, t.ni);
        if (v >= 1100 && v <= 2099 && t.ip[0] != '0') {
            int decade = e < sc->n && s[e] == 's' && (e + 1 >= sc->n || !is_wordish(s[e + 1])) && v % 10 == 0;
            xtts_num_year_en(v, o);
            if (decade) {
                if (xtts_sb_last(o) == 'y') { o->len--; xtts_sb_puts(o, "ies"); }
                else xtts_sb_putc(o, 's');
                return e + 1;
            }
            return e;
        }
    }
    /* Spanish: 21, 31, 101 ... before a word take the short form (veintiún años, treinta y
     * un días), which the RAE accepts before nouns of either gender */
    int form = 0;
    if (sc->lang == 1 && !t.nf && t.ni <= 15 && t.ni >= 2 && t.ip[t.ni - 1] == '1' && t.ip[t.ni - 2] != '1' &&
        e + 1 < sc->n && s[e] == ' ' && (is_ascii_alpha(s[e + 1]) || (unsigned char)s[e + 1] >= 0xC3)) {
        /* not before a function word: "el 21 de mayo" is veintiuno */
        static const char *const not_nouns[] = {"de", "del", "y", "e", "o", "u", "a", "al", "en", "por", "para", "con",
                                                "que", "es", "son", "fue", "más", "menos", "entre", "sobre", NULL};
        size_t w0 = e + 1, w1 = w0;
        while (w1 < sc->n && is_wordish(s[w1])) w1++;
        int function_word = 0;
        for (const char *const *f = not_nouns; *f; f++)
            if (strlen(*f) == w1 - w0 && !strncasecmp(s + w0, *f, w1 - w0)) function_word = 1;
        if (!function_word) form = XTTS_NUM_BEFORE_NOUN;
    }
    say_number(sc, &t, form);
    return e;
}

static int match_abbrev(const scanner *sc, size_t i, const xtts_abbrev_rule **hit) {
    const char *s = sc->s;
    for (const xtts_abbrev_rule *r = xtts_abbrev_rules; r->lang >= 0; r++) {
        if (r->lang != sc->lang) continue;
        size_t l = strlen(r->abbr);
        if (i + l > sc->n || memcmp(s + i, r->abbr, l)) continue;
        size_t e = i + l;
        if (e < sc->n && is_wordish(s[e]) && is_wordish(r->abbr[l - 1])) continue;
        if (r->need_upper) {
            if (!(e + 1 < sc->n && s[e] == ' ' && ((s[e + 1] >= 'A' && s[e + 1] <= 'Z') || (unsigned char)s[e + 1] >= 0xC3)))
                continue;
        }
        if (r->need_digit) {
            size_t k = e;
            while (k < sc->n && s[k] == ' ') k++;
            if (!(k < sc->n && is_digit(s[k]))) continue;
        }
        *hit = r;
        return (int)l;
    }
    return 0;
}

/* For each language, the bytes that can start an abbreviation, symbol or currency rule:
 * every other byte is copied without looking at the tables. Built once. */
static unsigned char rule_start[6][256];
static pthread_once_t rule_start_once = PTHREAD_ONCE_INIT;

static void build_rule_start(void) {
    for (const xtts_abbrev_rule *r = xtts_abbrev_rules; r->lang >= 0; r++)
        if (r->lang < 6) rule_start[r->lang][(unsigned char)r->abbr[0]] = 1;
    for (const xtts_symbol_rule *r = xtts_symbol_rules; r->lang >= 0; r++)
        if (r->lang < 6) rule_start[r->lang][(unsigned char)r->symbol[0]] = 1;
    for (const xtts_currency_rule *r = xtts_currency_rules; r->lang >= 0; r++)
        if (r->lang < 6) rule_start[r->lang][(unsigned char)r->symbol[0]] = 1;
}

static void expand(const scanner *sc) {
    const char *s = sc->s;
    xtts_sb *o = sc->out;
    size_t i = 0;
    pthread_once(&rule_start_once, build_rule_start);
    const unsigned char *starts = rule_start[sc->lang];
    while (i < sc->n) {
        char c = s[i];
        if (!starts[(unsigned char)c] && !is_digit(c) && c != '-') {
            /* copy the run of bytes no rule can start with */
            size_t j = i + 1;
            while (j < sc->n && !starts[(unsigned char)s[j]] && !is_digit(s[j]) && s[j] != '-') j++;
            xtts_sb_putn(o, s + i, j - i);
            i = j;
            continue;
        }
        int prev_word = i > 0 && is_wordish(s[i - 1]);
        if (!prev_word && c != ' ') {
            const xtts_abbrev_rule *r;
            int l = match_abbrev(sc, i, &r);
            if (l) {
                word_start(o);
                xtts_sb_puts(o, r->expansion);
                i += (size_t)l;
                if (i < sc->n && is_wordish(s[i])) xtts_sb_putc(o, ' ');
                continue;
            }
        }
        size_t clen;
        const xtts_currency_rule *cur = currency_at(sc, i, &clen);
        if (cur) {
            size_t j = i + clen;
            if (j < sc->n && s[j] == ' ') j++;
            if (j < sc->n && is_digit(s[j])) {
                number_tok t;
                if (!parse_number(sc, j, &t)) {
                    word_start(o);
                    say_money(sc, &t, cur);
                    i = t.end;
                    if (i < sc->n && is_wordish(s[i])) xtts_sb_putc(o, ' ');
                    continue;
                }
            }
        }
        if (is_digit(c) || (c == '-' && i + 1 < sc->n && is_digit(s[i + 1]) && (i == 0 || strchr(" (\"'", s[i - 1])))) {
            /* "-" inside "1990-1995" or "A-4" is a dash, not a sign */
            i = expand_number(sc, i);
            if (i < sc->n && is_wordish(s[i])) xtts_sb_putc(o, ' ');
            continue;
        }
        int sym = 0;
        for (const xtts_symbol_rule *r = xtts_symbol_rules; r->lang >= 0 && !sym; r++) {
            if (r->lang != sc->lang) continue;
            size_t l = strlen(r->symbol);
            if (i + l <= sc->n && !memcmp(s + i, r->symbol, l)) {
                xtts_sb_putc(o, ' ');
                xtts_sb_puts(o, r->word);
                xtts_sb_putc(o, ' ');
                i += l;
                sym = 1;
            }
        }
        if (sym) continue;
        xtts_sb_putc(o, c);
        i++;
    }
}

/* ---- whitespace and case ---------------------------------------------------------------- */

static void collapse(const char *s, size_t n, xtts_sb *b) {
    int space = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i] == GROUP_MARK ? ' ' : s[i];
        if (c == ' ') { space = 1; continue; }
        if (space && b->len) xtts_sb_putc(b, ' ');
        space = 0;
        xtts_sb_putc(b, c);
    }
}

static void lowercase(const char *s, size_t n, xtts_sb *b) {
    size_t i = 0;
    while (i < n) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x80) {
            xtts_sb_putc(b, (char)(c >= 'A' && c <= 'Z' ? c + 32 : c));
            i++;
            continue;
        }
        int32_t cp;
        utf8proc_ssize_t k = utf8proc_iterate((const uint8_t *)s + i, (utf8proc_ssize_t)(n - i), &cp);
        if (k <= 0) { i++; continue; }
        uint8_t enc[4];
        utf8proc_ssize_t el = utf8proc_encode_char(utf8proc_tolower(cp), enc);
        xtts_sb_putn(b, (const char *)enc, (size_t)el);
        i += (size_t)k;
    }
}

static xtts_status nfc_unify(const char *text, size_t len, xtts_sb *unified, xtts_error *err) {
    if (!xtts_utf8_valid(text, len)) return xtts_error_set(err, XTTS_EINPUT, "text is not valid UTF-8");
    size_t ascii = 0;
    while (ascii < len && (unsigned char)text[ascii] < 0x80) ascii++;
    if (ascii == len) {
        /* ASCII is already NFC and has nothing to unify but control characters */
        if (xtts_sb_reserve(unified, len)) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
        for (size_t i = 0; i < len; i++) {
            char c = text[i];
            unified->s[unified->len++] = (unsigned char)c < 0x20 || c == 0x7f ? ' ' : c;
        }
        unified->s[unified->len] = 0;
        return XTTS_OK;
    }
    uint8_t *nfc = NULL;
    utf8proc_ssize_t r = utf8proc_map((const uint8_t *)text, (utf8proc_ssize_t)len, &nfc,
                                      UTF8PROC_STABLE | UTF8PROC_COMPOSE);
    if (r < 0) {
        free(nfc);
        return xtts_error_set(err, r == UTF8PROC_ERROR_NOMEM ? XTTS_ENOMEM : XTTS_EINPUT, "Unicode normalization: %s",
                              utf8proc_errmsg(r));
    }
    unify(nfc, (size_t)r, unified);
    free(nfc);
    if (unified->failed) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    return XTTS_OK;
}

xtts_status xtts_normalize_basic(const char *text, size_t len, char **out, xtts_error *err) {
    xtts_sb u = {0}, c = {0};
    *out = NULL;
    xtts_status st = nfc_unify(text, len, &u, err);
    if (!st) {
        collapse(u.s ? u.s : "", u.len, &c);
        xtts_sb_cstr(&c);
        if (c.failed) st = xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    }
    xtts_sb_free(&u);
    if (st) { xtts_sb_free(&c); return st; }
    *out = c.s;
    return XTTS_OK;
}

xtts_status xtts_normalize(const char *text, size_t len, int lang, const xtts_normalize_options *opts, char **out,
                           unsigned *flags, xtts_error *err) {
    xtts_sb u = {0}, e = {0}, c = {0}, l = {0};
    *out = NULL;
    *flags = 0;
    if (opts->mode == XTTS_NORM_XTTS && opts->expand) {
        /* XTTS's cleaners see the text as the dataset holds it: no NFC, no unification */
        if (!xtts_utf8_valid(text, len)) return xtts_error_set(err, XTTS_EINPUT, "text is not valid UTF-8");
        return xtts_text_prepare(text, len, xtts_lang_code(lang) ? xtts_lang_code(lang) : "", out, err);
    }
    xtts_status st = nfc_unify(text, len, &u, err);
    if (st) { xtts_sb_free(&u); return st; }
    xtts_sb_cstr(&u);
    if (opts->mode == XTTS_NORM_XTTS_UNIFIED && opts->expand) {
        st = xtts_text_prepare(u.s, u.len, xtts_lang_code(lang) ? xtts_lang_code(lang) : "", out, err);
        xtts_sb_free(&u);
        return st;
    }
    xtts_sb *cur = &u;
    if (opts->expand && opts->mode != XTTS_NORM_NONE && xtts_num_supported(lang)) {
        const xtts_lang_words *w = NULL;
        for (const xtts_lang_words *p = xtts_lang_words_table; p->lang >= 0; p++)
            if (p->lang == lang) w = p;
        scanner sc = {u.s, u.len, lang, w, &e};
        xtts_sb_cstr(&e);
        expand(&sc);
        cur = &e;
    } else {
        /* languages without spoken number words: num2words' words (prep/text/normalize/xtts_text.c) */
        if (opts->expand && opts->mode == XTTS_NORM_SPOKEN && lang >= 0 && lang < XTTS_N_LANGS) {
            xtts_sb_cstr(&e);
            if (!xtts_text_spoken_numbers(u.s, u.len, xtts_lang_codes[lang], &e)) cur = &e;
        }
        for (size_t i = 0; i < cur->len; i++)
            if (is_digit(cur->s[i])) { *flags |= XTTS_NORM_DIGITS_KEPT; break; }
    }
    collapse(cur->s, cur->len, &c);
    xtts_sb_cstr(&c);
    cur = &c;
    if (opts->lowercase) {
        xtts_sb_cstr(&l);
        lowercase(c.s, c.len, &l);
        cur = &l;
    }
    int failed = u.failed || e.failed || c.failed || l.failed;
    char *res = cur->s;
    cur->s = NULL;
    xtts_sb_free(&u); xtts_sb_free(&e); xtts_sb_free(&c); xtts_sb_free(&l);
    if (failed) { free(res); return xtts_error_set(err, XTTS_ENOMEM, "out of memory"); }
    *out = res;
    return XTTS_OK;
}
