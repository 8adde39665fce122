/* numbers.c — the spoken number words of numbers.h: the spoken variant of each language's
 * num2words code (prep/text/num2words/num2words.h), found by XTTS language index. */
#include "prep/text/normalize/numbers.h"

#include "common/xtts_common.h"
#include "prep/text/num2words/num2words.h"

static const xtts_n2w_spoken *spoken_of(int lang) {
    const xtts_n2w_lang *L = xtts_n2w_find(xtts_lang_code(lang));
    return L ? L->spoken : NULL;
}

int xtts_num_supported(int lang) { return spoken_of(lang) != NULL; }

int xtts_num_cardinal(int lang, uint64_t n, int form, xtts_sb *b) {
    const xtts_n2w_spoken *s = spoken_of(lang);
    return s ? s->cardinal(n, form, b) : -1;
}

int xtts_num_ordinal(int lang, uint64_t n, int fem, xtts_sb *b) {
    const xtts_n2w_spoken *s = spoken_of(lang);
    return s ? s->ordinal(n, fem, b) : -1;
}

int xtts_num_year_en(uint64_t n, xtts_sb *b) { return xtts_n2w_en.spoken->year(n, b); }

int xtts_num_digits(int lang, const char *digits, size_t n, xtts_sb *b) {
    const xtts_n2w_spoken *s = spoken_of(lang);
    if (!s) return -1;
    for (size_t i = 0; i < n; i++) {
        if (digits[i] < '0' || digits[i] > '9') continue;
        if (i) xtts_sb_putc(b, ' ');
        s->cardinal((uint64_t)(digits[i] - '0'), XTTS_N2W_MASC, b);
    }
    return b->failed ? -1 : 0;
}
