/* num2words.c — the table of num2words languages and the helpers they share (num2words.h). */
#include "prep/text/num2words/num2words.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const xtts_n2w_lang *const n2w_langs[] = {
    &xtts_n2w_en, &xtts_n2w_es, &xtts_n2w_fr, &xtts_n2w_de, &xtts_n2w_it, &xtts_n2w_pt, &xtts_n2w_nl,
    &xtts_n2w_pl, &xtts_n2w_tr, &xtts_n2w_ru, &xtts_n2w_cs, &xtts_n2w_ar, &xtts_n2w_hu, &xtts_n2w_ko,
};

const xtts_n2w_lang *xtts_n2w_find(const char *lang) {
    if (!lang) return NULL;
    for (size_t i = 0; i < sizeof n2w_langs / sizeof n2w_langs[0]; i++)
        if (!strcmp(n2w_langs[i]->lang, lang)) return n2w_langs[i];
    return NULL;
}

void xtts_py_float_repr(double x, char *buf, size_t size) {
    /* Shortest round-trip digits, then Python's layout rule: fixed notation when the decimal
     * exponent is in [-4, 16), exponent notation otherwise. */
    char tmp[40];
    int prec;
    if (x != x) { /* Python writes every NaN as "nan", whatever its sign bit */
        snprintf(buf, size, "nan");
        return;
    }
    for (prec = 1; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*e", prec - 1, x);
        if (strtod(tmp, NULL) == x) break;
    }
    /* tmp is d.ddde±XX */
    char *e = strchr(tmp, 'e');
    int exp10 = e ? atoi(e + 1) : 0;
    if (exp10 >= -4 && exp10 < 16) {
        int decimals = prec - 1 - exp10;
        if (decimals < 1) decimals = 1;
        snprintf(buf, size, "%.*f", decimals, x);
        /* drop zeros beyond the shortest digits, keeping one after the point */
        char *dot = strchr(buf, '.');
        if (dot) {
            char *end = buf + strlen(buf) - 1;
            while (end > dot + 1 && *end == '0') *end-- = 0;
        }
    } else {
        /* mantissa without trailing zeros, exponent with sign and at least two digits */
        char mant[40];
        size_t m = (size_t)(e - tmp);
        memcpy(mant, tmp, m);
        mant[m] = 0;
        if (strchr(mant, '.')) {
            char *end = mant + strlen(mant) - 1;
            while (*end == '0') *end-- = 0;
            if (*end == '.') *end = 0;
        }
        snprintf(buf, size, "%se%c%02d", mant, exp10 < 0 ? '-' : '+', exp10 < 0 ? -exp10 : exp10);
    }
}
