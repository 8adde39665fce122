/* numbers.h — numbers as words for --normalize spoken, by XTTS language index (xtts_lang_index):
 * a thin face over the spoken variant of the num2words code (prep/text/num2words/num2words.h,
 * which says what each language's spoken conventions are), for the languages that have one
 * (en es fr de it pt).
 *
 * Each function appends words to b and returns 0, or -1 when the language has no spoken
 * number words or the value is too large (>= XTTS_NUM_MAX), in which case b is unchanged.
 */
#ifndef XTTS_NUMBERS_H
#define XTTS_NUMBERS_H

#include <stdint.h>

#include "common/strbuf.h"
#include "prep/text/num2words/num2words.h"

#define XTTS_NUM_MAX XTTS_N2W_SPOKEN_MAX /* 10^15 */

enum { XTTS_NUM_MASC = XTTS_N2W_MASC, XTTS_NUM_FEM = XTTS_N2W_FEM, XTTS_NUM_BEFORE_NOUN = XTTS_N2W_BEFORE_NOUN };

/* 1 if the language has spoken number words. */
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
