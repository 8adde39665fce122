/* numbers.h — numbers as words for the languages the normalizer expands (en es fr de it pt).
 *
 * Each function appends words to b and returns 0, or -1 when the language has no number
 * words or the value is too large (>= XTTS_NUM_MAX), in which case b is unchanged.
 * Languages are XTTS language indices (xtts_lang_index). Spelling: en American, es
 * Castilian, fr traditional (vingt et un, quatre-vingts), de one word below a million,
 * it with elision (ventuno, centottanta), pt Brazilian (dezesseis, cem, cento e um).
 */
#ifndef XTTS_NUMBERS_H
#define XTTS_NUMBERS_H

#include <stdint.h>

#include "common/strbuf.h"

#define XTTS_NUM_MAX 1000000000000000ULL /* 10^15 */

enum { XTTS_NUM_MASC = 0, XTTS_NUM_FEM = 1, XTTS_NUM_BEFORE_NOUN = 2 };

/* 1 if the language has number words here. */
int xtts_num_supported(int lang);

/* Cardinal: form is XTTS_NUM_MASC, XTTS_NUM_FEM, or XTTS_NUM_BEFORE_NOUN (the form before
 * a masculine noun: es "un", "veintiún"; de "ein"; it "un"). */
int xtts_num_cardinal(int lang, uint64_t n, int form, xtts_sb *b);

/* Ordinal (n >= 1): fem selects the feminine form where the language has one; for de the
 * weak inflection ending "-ten" ("am dritten Mai"). */
int xtts_num_ordinal(int lang, uint64_t n, int fem, xtts_sb *b);

/* An English year: 1984 -> nineteen eighty-four, 1900 -> nineteen hundred, 1905 ->
 * nineteen oh five, 2005 -> two thousand five, 2019 -> twenty nineteen. */
int xtts_num_year_en(uint64_t n, xtts_sb *b);

/* Digits one by one as cardinal words separated by spaces ("0 4 2"). */
int xtts_num_digits(int lang, const char *digits, size_t n, xtts_sb *b);

#endif
