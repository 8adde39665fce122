/* num2words.h — number words exactly as the Python library num2words 0.5.12 writes them, for
 * the languages Coqui's XTTS text preparation hands to it: en es fr de it pt pl tr ru nl cs
 * ar hu ko (prep/text/normalize/xtts_text.c). Written in C as tables and rules per language (prep/n2w_*.c);
 * tests/golden/ holds the outputs of the real library that these must equal.
 *
 * Every function appends words to out and returns 0, or returns -1 (out unchanged) when
 * num2words 0.5.12 raises for that input (NotImplementedError, OverflowError, ...), so the
 * caller can decide what to do instead. Thread-safe: no global state.
 */
#ifndef XTTS_NUM2WORDS_H
#define XTTS_NUM2WORDS_H

#include <stdint.h>

#include "common/strbuf.h"

/* One language. Any member may be NULL: that form raises in num2words for this language. */
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
