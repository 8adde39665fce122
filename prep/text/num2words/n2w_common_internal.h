/* n2w_common_internal.h — helpers shared by the num2words languages (prep/n2w_*.c): reading the repr of
 * a Python float the way num2words does, and the rounding of currency amounts. Internal to
 * prep/. */
#ifndef XTTS_N2W_COMMON_H
#define XTTS_N2W_COMMON_H

#include <stdint.h>

#include "common/strbuf.h"

/* A Python float repr split as num2words' str(x).split('.') sees it: neg is 1 for a leading
 * '-', intpart the digits before the point, frac the digits after it (no sign, no exponent).
 * Returns -1 when the repr has an exponent, is inf/nan, or the parts do not fit an int64
 * (Python's int() of those strings raises, or the value is past what the C side handles). */
typedef struct {
    int neg;
    int64_t ipart;    /* value of the digits before the point */
    int64_t fpart;    /* value of the digits after the point */
    char frac[40];    /* the digits after the point, as written */
    int nfrac;        /* their count */
} n2w_repr;
int xtts_n2w_parse_repr(const char *repr, n2w_repr *r);

/* num2words' parse_currency_parts for a Python float: Decimal(x) quantized to cents with
 * ROUND_HALF_UP on the exact binary value. Returns -1 when |x| >= 2^63 or x is not finite. */
int xtts_n2w_money_parts(const char *repr, int64_t *units, int *cents, int *neg);

/* The end of a spoken form built in a buffer of its own: appends w to out when rc is 0 and
 * nothing failed, frees w, returns 0 or -1 (out unchanged). */
int xtts_n2w_take(xtts_sb *w, int rc, xtts_sb *out);

/* If b ends with from, replaces that end by to and returns 1; else 0. */
int xtts_n2w_replace_end(xtts_sb *b, const char *from, const char *to);

/* The feminine of a spoken cardinal (num2words.h): in the words of b after its last word
 * ending in one of scale_ends (NULL-terminated; the millions keep their gender), a word equal
 * to words[i][0] becomes words[i][1] and a word ending in suffix[0] ends in suffix[1] instead
 * (suffix may be NULL). Words are separated by spaces and hyphens. */
void xtts_n2w_feminine_tail(xtts_sb *b, const char *const *scale_ends, const char *const (*words)[2], size_t nwords,
                            const char *const suffix[2]);

/* The feminine of spoken ordinals (es pt it): every word of b ending in 'o' ends in 'a'. */
void xtts_n2w_feminine_o(xtts_sb *b);

/* Appends s n times. */
void xtts_n2w_repeat(xtts_sb *out, const char *s, int n);

#endif
