/* romanize_ko.c — Korean as XTTS romanizes it: hangul_romanize's "academic" rule. Each
 * precomposed Hangul syllable (U+AC00..U+D7A3) becomes initial + vowel + final in the Revised
 * Romanization letters, letter by letter (no sound changes: 값 -> gabs). A hyphen goes
 * before a syllable that follows another syllable when its initial is the silent ㅇ, or when
 * the previous final's letters followed by this initial's letters can be split into a final
 * and an initial in more than one way (e.g. n+g vs ng). Everything else is copied as is. */
#include <string.h>

#include "prep/text/romanize/romanize_internal.h"

static const char *const KO_INI[19] = {"g", "kk", "n", "d", "tt", "l", "m", "b", "pp", "s",
                                       "ss", "", "j", "jj", "ch", "k", "t", "p", "h"};
static const char *const KO_VOW[21] = {"a", "ae", "ya", "yae", "eo", "e", "yeo", "ye", "o", "wa", "wae",
                                       "oe", "yo", "u", "wo", "we", "wi", "yu", "eu", "ui", "i"};
static const char *const KO_FIN[28] = {"", "g", "kk", "gs", "n", "nj", "nh", "d", "l", "lg",
                                       "lm", "lb", "ls", "lt", "lp", "lh", "m", "b", "bs", "s",
                                       "ss", "ng", "j", "ch", "k", "t", "p", "h"};

static int in_list(const char *s, size_t n, const char *const *list, int count) {
    for (int i = 0; i < count; i++)
        if (strlen(list[i]) == n && !memcmp(list[i], s, n)) return 1;
    return 0;
}

/* 1 when final f's letters + initial i's letters split as (final, non-empty initial) in two
 * or more ways. */
static int ambiguous(int f, int i) {
    char c[8];
    size_t a = strlen(KO_FIN[f]), b = strlen(KO_INI[i]);
    memcpy(c, KO_FIN[f], a);
    memcpy(c + a, KO_INI[i], b);
    int ways = 0;
    for (size_t k = 0; k < a + b; k++)
        if (in_list(c, k, KO_FIN, 28) && in_list(c + k, a + b - k, KO_INI, 19)) ways++;
    return ways >= 2;
}

int xtts_romanize_ko(const char *text, size_t len, xtts_sb *out) {
    const unsigned char *s = (const unsigned char *)text;
    int prev_final = -1; /* final of the previous character when it was a syllable */
    for (size_t i = 0; i < len;) {
        size_t adv;
        uint32_t c = xtts_rz_utf8(s, i, len, &adv);
        if (c < 0xAC00 || c > 0xD7A3) {
            xtts_sb_putn(out, text + i, adv);
            prev_final = -1;
        } else {
            int idx = (int)(c - 0xAC00), ini = idx / 588, vow = (idx / 28) % 21, fin = idx % 28;
            if (prev_final >= 0 && (ini == 11 || ambiguous(prev_final, ini))) xtts_sb_putc(out, '-');
            xtts_sb_puts(out, KO_INI[ini]);
            xtts_sb_puts(out, KO_VOW[vow]);
            xtts_sb_puts(out, KO_FIN[fin]);
            prev_final = fin;
        }
        i += adv;
    }
    return 0;
}
