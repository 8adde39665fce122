/* n2w_eu_internal.h — the machinery num2words 0.5.12 shares between its European languages
 * (Num2Word_Base.splitnum/clean with a per-language merge, float2tuple, the currency parts),
 * reproduced so that every n2w_<lang>.c only holds its words and its merge rule.
 */
#ifndef XTTS_N2W_EU_H
#define XTTS_N2W_EU_H

#include <stddef.h>
#include <stdint.h>

#include "common/strbuf.h"

/* One entry of num2words' cards table. */
typedef struct {
    int64_t num;
    const char *word;
} n2w_card;

/* merge(left, right) of num2words: writes the merged text into o and its value to *on. */
typedef void (*n2w_merge_fn)(const char *lt, int64_t ln, const char *rt, int64_t rn, xtts_sb *o, int64_t *on);

/* A run of cards, largest first. A language's table is up to four runs, one after the
 * other, so that a variant of it (the spoken words, num2words.h) shares the runs it keeps. */
typedef struct {
    const n2w_card *cards;
    size_t n;
} n2w_cards;
#define N2W_CARDS(table) {table, sizeof table / sizeof table[0]}

typedef struct {
    n2w_cards cards[4]; /* together largest first, ending with 0; unused runs are empty */
    n2w_merge_fn merge;
    const char *negword;   /* to_cardinal's word before a negative number ("minus") */
} n2w_eu;

/* The word of the card of value v in L's table, "" when there is none. */
const char *xtts_n2w_eu_word(const n2w_eu *L, int64_t v);

/* to_cardinal(n): negword, a space and the words of |n| for n < 0 (as Num2Word_Base; -1 for
 * INT64_MIN); -1 when n is beyond what is handled here (>= 10^19 is never passed: callers
 * give int64). */
int xtts_n2w_eu_cardinal(const n2w_eu *L, int64_t n, xtts_sb *out);

/* float2tuple: integer part, the digits after the point as num2words counts them (a string
 * of exactly *precision digits in post, at most 31) and whether the value is an integer.
 * -1 when the repr cannot be read or is too large. */
int xtts_n2w_float2tuple(const char *repr, int64_t *pre, char *post, int *precision, int *is_integer);

/* parse_currency_parts for a float given as its repr: ROUND_HALF_UP to cents on the exact
 * binary value. -1 when too large. */
int xtts_n2w_currency_parts(const char *repr, int64_t *units, int64_t *cents);

/* The generic to_cardinal of a float: "<pre> <pointword> <d> <d> ..." with cardinal() for
 * each part, or the integer's words when the float is integral. */
int xtts_n2w_generic_float(const char *repr, const char *pointword, int (*cardinal)(int64_t, xtts_sb *), xtts_sb *out);

/* Num2Word_Base.to_currency: "<units> <form> <separator> <cents> <form>"; forms are the
 * singular and plural unit, then singular and plural cent (pass the same word twice where
 * the language does not inflect). */
int xtts_n2w_generic_currency(const char *repr, int (*cardinal)(int64_t, xtts_sb *), const char *const forms[4],
                              const char *separator, xtts_sb *out);

/* 1 if s ends with suffix. */
int xtts_n2w_endswith(const char *s, size_t len, const char *suffix);

#endif
