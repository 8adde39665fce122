/* n2w_slavic_internal.h — the number reading that num2words 0.5.12 shares between Polish, Czech and
 * Russian: groups of three digits, each said as hundreds, tens and ones, then the name of
 * its power of a thousand in one of three plural forms. Internal to prep/. */
#ifndef XTTS_N2W_SLAVIC_H
#define XTTS_N2W_SLAVIC_H

#include <stdint.h>

#include "prep/text/num2words/n2w_common_internal.h"
#include "common/strbuf.h"

typedef struct {
    const char *zero;
    const char *ones[10], *ones_fem[10]; /* ones_fem: Russian only (NULL elsewhere) */
    const char *teens[10];               /* 10..19 */
    const char *tens[10];                /* 20, 30, .. at [2..9] */
    const char *hundreds[10];
    const char *const (*scales)[3];      /* [i] = 1000^i in the three forms; [0] unused */
    int nscales;
    int omit_lone_one;                   /* pl, cs: "tysiąc", not "jeden tysiąc" */
    int ru_plural;                       /* Russian plural rule instead of the Polish/Czech one */
    const char *negword;
    int negative_ok;                     /* Russian only: pl and cs raise for negative numbers */
    const char *pointword;
} n2w_slavic;

/* Which of the three forms goes with n. */
int xtts_n2w_slavic_form(const n2w_slavic *L, int64_t n);
/* _int2word(n, feminine): -1 where num2words raises (a negative number without negword). */
int xtts_n2w_slavic_int(const n2w_slavic *L, int64_t n, int feminine, xtts_sb *out);
/* num2words(float): "<int> <pointword> <zero for each leading zero> <frac>". */
int xtts_n2w_slavic_float(const n2w_slavic *L, const char *repr, xtts_sb *out);
/* to_currency for a Python float, with the forms of this currency (units and cents). */
int xtts_n2w_slavic_currency(const n2w_slavic *L, const char *repr, const char *const unit[3],
                             const char *const cent[3], int fem_units, int fem_cents, xtts_sb *out);

#endif
