/* numbers-compare — every output of the number-word code for a large fixed-seed sample, one line
 * each, so that a change to the engine can be proven to keep its behaviour byte for byte: hash
 * the output before and after (scripts/dev/numbers-compare.sh), diff it when the hashes differ.
 *
 * Usage: numbers-compare [SEED [SCALE]]   (defaults 1 and 100; SCALE is a percentage of the
 *        full sample, so 100 is some hundreds of thousands of lines and 2 a quick check)
 *        numbers-compare --golden          the small sample of the spoken forms that
 *        tests/golden/numbers_spoken_golden.tsv holds (tests/test_numbers_spoken.c)
 * Output, tab-separated: what was called, the language, the input, the return code, the words.
 * Covered: the spoken forms of prep/text/normalize/numbers.h (cardinal in its three forms,
 * ordinal in both genders, the English year, digit strings) for en es fr de it pt; the
 * num2words 0.5.12 entries of prep/text/num2words/num2words.h (cardinal, ordinal, float,
 * EUR/USD/GBP currency) for every language they have; and both text normalizers (spoken and
 * xtts) over random sentences with numbers, ordinals, decimals, currencies, times and years.
 * Values reach 10^15 - 1 for the spoken forms (and just past it, which they refuse) and
 * 10^18 for num2words, with the edges weighted: 0..1000 whole, round numbers, 10^k +- 1.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prep/text/normalize/normalize.h"
#include "prep/text/normalize/numbers.h"
#include "prep/text/num2words/num2words.h"

static uint64_t rng_state;

static uint64_t rng(void) { /* splitmix64 */
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static uint64_t below(uint64_t n) { return n ? rng() % n : 0; }

static uint64_t pow10u(int k) {
    uint64_t p = 1;
    while (k-- > 0) p *= 10;
    return p;
}

/* A value of 1 to max_digits digits: uniform digits, or mostly zeros (round-ish numbers). */
static uint64_t random_value(int max_digits) {
    int nd = 1 + (int)below((uint64_t)max_digits);
    int zero_pct = below(2) ? 10 : 65;
    uint64_t v = 0;
    for (int i = 0; i < nd; i++) {
        int d = (int)below(100) < zero_pct ? 0 : 1 + (int)below(9);
        if (i == 0 && d == 0 && nd > 1) d = 1 + (int)below(9);
        v = v * 10 + (uint64_t)d;
    }
    return v;
}

/* The values every form is asked for: 0..1000 whole, round numbers d * 10^k, 10^k +- 1 and 2,
 * then n_random random values of up to max_digits digits. */
static size_t edge_values(uint64_t *v, size_t cap, int max_digits, size_t n_random) {
    size_t n = 0;
    for (uint64_t i = 0; i <= 1000 && n < cap; i++) v[n++] = i;
    for (int k = 1; k <= max_digits && n + 1000 < cap; k++) {
        uint64_t p = pow10u(k);
        for (uint64_t d = 1; d <= 999; d += d < 30 ? 1 : 7)
            if (d * p < pow10u(max_digits)) v[n++] = d * p;
        v[n++] = p - 2;
        v[n++] = p - 1;
        v[n++] = p + 1;
        v[n++] = p + 2;
        v[n++] = p + 1000;
        v[n++] = p + 1000000 < pow10u(max_digits) ? p + 1000000 : p;
    }
    for (size_t i = 0; i < n_random && n < cap; i++) v[n++] = random_value(max_digits);
    return n;
}

static void emit(const char *what, const char *lang, const char *in, int rc, const xtts_sb *b) {
    printf("%s\t%s\t%s\t%d\t%.*s\n", what, lang, in, rc, (int)b->len, b->s ? b->s : "");
}

static const char *const spoken_langs[] = {"en", "es", "fr", "de", "it", "pt"};
static const char *const n2w_langs[] = {"en", "es", "fr", "de", "it", "pt", "nl", "pl",
                                        "tr", "ru", "cs", "ar", "hu", "ko"};

static void spoken_forms_of(int lang, const uint64_t *v, size_t n, int n_digit_strings) {
    const char *code = xtts_lang_code(lang);
    xtts_sb b = {0};
    char in[64];
    for (size_t i = 0; i < n; i++) {
        snprintf(in, sizeof in, "%" PRIu64, v[i]);
        for (int form = 0; form < 3; form++) {
            static const char *const names[3] = {"cardinal", "cardinal_fem", "cardinal_noun"};
            xtts_sb_clear(&b);
            emit(names[form], code, in, xtts_num_cardinal(lang, v[i], form, &b), &b);
        }
        for (int fem = 0; fem < 2; fem++) {
            xtts_sb_clear(&b);
            emit(fem ? "ordinal_fem" : "ordinal", code, in, xtts_num_ordinal(lang, v[i], fem, &b), &b);
        }
    }
    for (int i = 0; i < n_digit_strings; i++) { /* digit strings, with leading zeros and junk skipped */
        char d[24];
        int nd = 1 + (int)below(21);
        for (int k = 0; k < nd; k++) d[k] = below(30) ? (char)('0' + below(10)) : ' ';
        d[nd] = 0;
        xtts_sb_clear(&b);
        emit("digits", code, d, xtts_num_digits(lang, d, (size_t)nd, &b), &b);
    }
    xtts_sb_free(&b);
}

static void english_years(size_t n_random) {
    xtts_sb b = {0};
    char in[32];
    for (uint64_t y = 0; y < 3000 + n_random; y++) {
        uint64_t v = y < 3000 ? y : below(2) ? 3000 + below(7000) : random_value(15);
        snprintf(in, sizeof in, "%" PRIu64, v);
        xtts_sb_clear(&b);
        emit("year_en", "en", in, xtts_num_year_en(v, &b), &b);
    }
    xtts_sb_free(&b);
}

/* A Python float's repr for a random amount: integral, cents, or several decimals. */
static void random_repr(char *repr, size_t size, int max_digits) {
    double x = (double)random_value(max_digits);
    switch (below(4)) {
    case 0: break;
    case 1: x += (double)below(100) / 100.0; break;
    case 2: x += (double)below(1000) / 1000.0; break;
    default: x += (double)below(1000000) / 1000000.0; break;
    }
    if (!below(10)) x = -x;
    xtts_py_float_repr(x, repr, size);
}

static void num2words_forms(const char *code, const uint64_t *v, size_t n, size_t n_floats) {
    const xtts_n2w_lang *L = xtts_n2w_find(code);
    xtts_sb b = {0};
    char in[64];
    for (size_t i = 0; i < n; i++) {
        int64_t x = (int64_t)v[i];
        for (int neg = 0; neg < 2; neg++) {
            if (neg && (x == 0 || below(4))) continue;
            int64_t y = neg ? -x : x;
            snprintf(in, sizeof in, "%" PRId64, y);
            xtts_sb_clear(&b);
            emit("n2w_cardinal", code, in, L->cardinal ? L->cardinal(y, &b) : -2, &b);
            xtts_sb_clear(&b);
            emit("n2w_ordinal", code, in, L->ordinal && y >= 0 ? L->ordinal(y, &b) : -2, &b);
        }
    }
    for (size_t i = 0; i < n_floats; i++) {
        char repr[40];
        random_repr(repr, sizeof repr, i % 3 ? 7 : 18);
        xtts_sb_clear(&b);
        emit("n2w_float", code, repr, L->cardinal_float ? L->cardinal_float(repr, &b) : -2, &b);
        static const char *const curs[3] = {"EUR", "USD", "GBP"};
        for (int c = 0; c < 3; c++) {
            xtts_sb_clear(&b);
            emit(curs[c], code, repr, L->currency ? L->currency(repr, curs[c], &b) : -2, &b);
        }
    }
    xtts_sb_free(&b);
}

/* ---- sentences ---------------------------------------------------------------- */

static void put_value(xtts_sb *s, uint64_t v, char group) {
    char d[32];
    int n = snprintf(d, sizeof d, "%" PRIu64, v);
    for (int i = 0; i < n; i++) {
        if (group && i && (n - i) % 3 == 0) xtts_sb_putc(s, group);
        xtts_sb_putc(s, d[i]);
    }
}

static void random_token(xtts_sb *s, int lang) {
    static const char *const ord_marks[6][4] = {{"st", "nd", "rd", "th"}, {"º", "ª", ".º", ".ª"},
                                                {"er", "e", "re", "ème"},  {". Mai", ". Januar", ". Stock", ". Platz"},
                                                {"º", "ª", ".º", ".ª"},    {"º", "ª", ".º", ".ª"}};
    static const char *const curs[] = {"$", "€", "£"};
    static const char *const groups = ",. ";
    uint64_t v = below(3) ? below(1000) : random_value(below(5) ? 7 : 17);
    switch (below(12)) {
    case 0: put_value(s, v, 0); break;
    case 1: put_value(s, v, groups[below(3)]); break;
    case 2: xtts_sb_putc(s, '-'); put_value(s, v, 0); break;
    case 3: put_value(s, v, 0); xtts_sb_putc(s, below(2) ? '.' : ','); put_value(s, below(1000), 0); break;
    case 4: put_value(s, v, 0); xtts_sb_puts(s, below(2) ? "%" : " %"); break;
    case 5:
        if (below(2)) { xtts_sb_puts(s, curs[below(3)]); put_value(s, v, 0); }
        else { put_value(s, v, 0); xtts_sb_puts(s, below(2) ? " " : ""); xtts_sb_puts(s, curs[below(3)]); }
        break;
    case 6:
        xtts_sb_puts(s, curs[below(3)]);
        put_value(s, v, 0);
        xtts_sb_putc(s, '.');
        put_value(s, below(100), 0);
        break;
    case 7: put_value(s, 1 + below(200), 0); xtts_sb_puts(s, ord_marks[lang][below(4)]); break;
    case 8: put_value(s, 1000 + below(1300), 0); if (!below(4)) xtts_sb_putc(s, 's'); break;
    case 9: put_value(s, below(26), 0); xtts_sb_putc(s, ':'); put_value(s, 10 + below(50), 0); break;
    case 10: put_value(s, 21 + 10 * below(9), 0); xtts_sb_puts(s, " años"); break;
    default: xtts_sb_putc(s, '0'); put_value(s, v, 0); break;
    }
}

static void random_sentence(xtts_sb *s, int lang) {
    static const char *const fillers[] = {"the", "de", "y", "und", "le", "il", "e", "a", "Mai", "cats", "años",
                                          "páginas", "casas", "mars", "Uhr", ",", ".", "(", ")", "!"};
    int ntok = 1 + (int)below(5);
    for (int i = 0; i < ntok; i++) {
        if (s->len) xtts_sb_putc(s, ' ');
        if (below(3)) xtts_sb_puts(s, fillers[below(sizeof fillers / sizeof fillers[0])]), xtts_sb_putc(s, ' ');
        random_token(s, lang < 6 ? lang : 0);
    }
    if (below(2)) xtts_sb_putc(s, '.');
}

static void normalizers(int lang, size_t n) {
    const char *code = xtts_lang_code(lang);
    xtts_sb s = {0};
    for (size_t i = 0; i < n; i++) {
        xtts_sb_clear(&s);
        random_sentence(&s, lang);
        for (int m = 0; m < 2; m++) {
            xtts_normalize_options o = {0, 1, m ? XTTS_NORM_XTTS : XTTS_NORM_SPOKEN};
            char *out = NULL;
            unsigned flags = 0;
            xtts_error err = {0};
            xtts_status st = xtts_normalize(s.s, s.len, lang, &o, &out, &flags, &err);
            printf("%s\t%s\t%s\t%d\t%s\n", m ? "norm_xtts" : "norm_spoken", code, s.s, (int)st,
                   st == XTTS_OK ? out : err.msg);
            free(out);
        }
    }
    xtts_sb_free(&s);
}

/* The golden sample: the spoken forms of a few dozen values per language (the small ones,
 * the round ones, 10^k - 1, 10^k, 10^k + 1 and a few random ones), a sample of English years
 * and a few digit strings. */
static int golden(void) {
    uint64_t v[128];
    rng_state = 7;
    for (int l = 0; l < 6; l++) {
        size_t n = 0;
        for (uint64_t i = 0; i <= 22; i++) v[n++] = i;
        static const uint64_t round_values[] = {30, 31, 70, 71, 80, 81, 91, 99, 100, 101, 111, 180, 200,
                                                201, 500, 999, 1000, 1001, 2000, 21000, 101000, 1000000,
                                                2000000, 21000000, 1000000000, 1000000000000};
        for (size_t i = 0; i < sizeof round_values / sizeof round_values[0]; i++) v[n++] = round_values[i];
        for (int k = 3; k <= 15; k += 3) {
            v[n++] = pow10u(k) - 1;
            if (k < 15) v[n++] = pow10u(k) + 1;
        }
        for (int i = 0; i < 10; i++) v[n++] = random_value(i < 5 ? 6 : 15);
        spoken_forms_of(xtts_lang_index(spoken_langs[l]), v, n, 4);
    }
    xtts_sb b = {0};
    char in[32];
    for (uint64_t y = 999; y < 3010; y += y < 1010 || (y >= 1900 && y < 1912) || y >= 2000 ? 1 : 37) {
        if (y >= 2025 && y < 3000) y = 3000;
        snprintf(in, sizeof in, "%" PRIu64, y);
        xtts_sb_clear(&b);
        emit("year_en", "en", in, xtts_num_year_en(y, &b), &b);
    }
    xtts_sb_free(&b);
    return fflush(stdout) || ferror(stdout) ? 2 : 0;
}

int main(int argc, char **argv) {
    if (argc == 2 && !strcmp(argv[1], "--golden")) return golden();
    unsigned long seed = argc > 1 ? strtoul(argv[1], NULL, 10) : 1;
    unsigned long scale = argc > 2 ? strtoul(argv[2], NULL, 10) : 100;
    if (argc > 3 || scale == 0 || scale > 1000) {
        fprintf(stderr, "usage: numbers-compare [SEED [SCALE]]  (SCALE: 1 to 1000 percent of the full sample)\n");
        return 1;
    }
    rng_state = seed;
    size_t cap = 40000 + 400 * scale;
    uint64_t *v = malloc(cap * sizeof *v);
    if (!v) return 2;
    for (int l = 0; l < 6; l++) { /* spoken forms, up to and just past 10^15 */
        size_t n = edge_values(v, cap, 15, 300 * scale);
        v[n++] = XTTS_NUM_MAX - 1;
        v[n++] = XTTS_NUM_MAX;
        spoken_forms_of(xtts_lang_index(spoken_langs[l]), v, n, 3000);
    }
    english_years(20 * scale);
    for (size_t l = 0; l < sizeof n2w_langs / sizeof n2w_langs[0]; l++) {
        int concerned = l < 6;
        size_t n = edge_values(v, cap, 18, (concerned ? 100 : 10) * scale);
        num2words_forms(n2w_langs[l], v, n, (concerned ? 50 : 5) * scale);
    }
    for (size_t l = 0; l < sizeof n2w_langs / sizeof n2w_langs[0]; l++)
        normalizers(xtts_lang_index(n2w_langs[l]), (l < 6 ? 40 : 5) * scale);
    free(v);
    return fflush(stdout) || ferror(stdout) ? 2 : 0;
}
