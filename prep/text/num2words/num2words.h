/* num2words.h — number words exactly as the Python library num2words 0.5.12 writes them, for
 * the languages Coqui's XTTS text preparation hands to it: en es fr de it pt pl tr ru nl cs
 * ar hu ko (prep/text/normalize/xtts_text.c). Written in C as tables and rules per language
 * (prep/text/num2words/n2w_*.c); tests/golden/ holds the outputs of the real library that
 * these must equal.
 *
 * Every function appends words to out and returns 0, or returns -1 (out unchanged) when
 * num2words 0.5.12 raises for that input (NotImplementedError, OverflowError, ...), so the
 * caller can decide what to do instead. Thread-safe: no global state.
 */
#ifndef XTTS_NUM2WORDS_H
#define XTTS_NUM2WORDS_H

#include <stdint.h>

#include "common/strbuf.h"

/* ---- two variants of one engine ----------------------------------------------------------
 * The entries below (cardinal, ordinal, cardinal_float, currency) are the num2words 0.5.12
 * variant, the library's behaviour exactly, its bugs included (es "veintiuno mil", de
 * "einhunderteinstausend", it "centodicotto"): --normalize xtts must equal Coqui. The same
 * per-language code has a spoken variant for en es fr de it pt, what --normalize spoken reads
 * (prep/text/normalize/numbers.h): American English without "and", es with "veintiún mil"
 * (and millions of millions where num2words says billón), fr as num2words, de as num2words
 * but "einhunderteintausend", it with elision and "tré" only at the end of a compound,
 * Brazilian pt (dezesseis, bilhão, "mil e duzentos"); the feminine, the form before a noun
 * and the ordinals of each language (de in the weak inflection: "am dritten Mai"). Where the
 * variants agree they run the same code; each n2w_<lang>.c switches where they differ. */

/* The spoken variant says numbers below this (10^15); above it, -1. */
#define XTTS_N2W_SPOKEN_MAX 1000000000000000ULL

/* Forms of a spoken cardinal: masculine, feminine, and the form before a masculine noun (es
 * "un", "veintiún"; de "ein"; it "un"). */
enum { XTTS_N2W_MASC = 0, XTTS_N2W_FEM = 1, XTTS_N2W_BEFORE_NOUN = 2 };

/* A language's spoken variant. Each appends words to out and returns 0, or -1 (out
 * unchanged) for n >= XTTS_N2W_SPOKEN_MAX (ordinal: or n == 0). */
typedef struct {
    int (*cardinal)(uint64_t n, int form, xtts_sb *out);
    /* fem selects the feminine where the language has one */
    int (*ordinal)(uint64_t n, int fem, xtts_sb *out);
    /* a year read as a year (en: "nineteen oh five"); NULL where the language has no reading
     * of its own for years */
    int (*year)(uint64_t n, xtts_sb *out);
} xtts_n2w_spoken;

/* One language. Any member may be NULL: that form raises in num2words for this language
 * (spoken: the language has no spoken variant). */
typedef struct {
    const char *lang; /* XTTS language code: "en", "cs", ... (Coqui passes "cz" for cs) */
    /* num2words(n, lang=...) */
    int (*cardinal)(int64_t n, xtts_sb *out);
    /* num2words(n, ordinal=True, lang=...), n >= 0 */
    int (*ordinal)(int64_t n, xtts_sb *out);
    /* num2words(x, lang=...) for a Python float x; repr is Python's repr(x) ("3.5", "0.25",
     * "1e+16"), which num2words reads to find the number of decimals. */
    int (*cardinal_float)(const char *repr, xtts_sb *out);
    /* num2words(x, to="currency", currency=cur, lang=...) for a Python float x given as its
     * repr; cur is "EUR", "USD" or "GBP". */
    int (*currency)(const char *repr, const char *cur, xtts_sb *out);
    const xtts_n2w_spoken *spoken;
} xtts_n2w_lang;

/* The entry for an XTTS language code, or NULL when num2words is not used for it. */
const xtts_n2w_lang *xtts_n2w_find(const char *lang);

/* Python's repr() of a double (the shortest string that reads back to the same double,
 * in Python's choice of fixed or exponent notation) into buf (at least 32 bytes). */
void xtts_py_float_repr(double x, char *buf, size_t size);

/* The per-language entries (prep/n2w_<lang>.c). */
extern const xtts_n2w_lang xtts_n2w_en, xtts_n2w_es, xtts_n2w_fr, xtts_n2w_de, xtts_n2w_it, xtts_n2w_pt,
    xtts_n2w_nl, xtts_n2w_pl, xtts_n2w_tr, xtts_n2w_ru, xtts_n2w_cs, xtts_n2w_ar, xtts_n2w_hu, xtts_n2w_ko;

#endif
