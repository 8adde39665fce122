/* n2w_ru.c — num2words 0.5.12's number words for "ru" (see num2words.h). Cardinals read groups
 * of three with feminine ones before "тысяча" (n2w_slavic.c); ordinals rewrite the last one or
 * two words of the cardinal by the library's suffix rules, which are followed here as they are
 * ("двадцать  тысячный" keeps its double space). Currency knows EUR and USD (GBP raises). */
#include "prep/text/num2words/n2w_slavic_internal.h"
#include "prep/text/num2words/num2words.h"

#include <string.h>

static const char *const RU_SCALES[][3] = {
    {"", "", ""},
    {"тысяча", "тысячи", "тысяч"},
    {"миллион", "миллиона", "миллионов"},
    {"миллиард", "миллиарда", "миллиардов"},
    {"триллион", "триллиона", "триллионов"},
    {"квадриллион", "квадриллиона", "квадриллионов"},
    {"квинтиллион", "квинтиллиона", "квинтиллионов"},
    {"секстиллион", "секстиллиона", "секстиллионов"},
};

static const n2w_slavic RU = {
    .zero = "ноль",
    .ones = {"", "один", "два", "три", "четыре", "пять", "шесть", "семь", "восемь", "девять"},
    .ones_fem = {"", "одна", "две", "три", "четыре", "пять", "шесть", "семь", "восемь", "девять"},
    .teens = {"десять", "одиннадцать", "двенадцать", "тринадцать", "четырнадцать", "пятнадцать",
              "шестнадцать", "семнадцать", "восемнадцать", "девятнадцать"},
    .tens = {"", "", "двадцать", "тридцать", "сорок", "пятьдесят", "шестьдесят", "семьдесят",
             "восемьдесят", "девяносто"},
    .hundreds = {"", "сто", "двести", "триста", "четыреста", "пятьсот", "шестьсот", "семьсот",
                 "восемьсот", "девятьсот"},
    .scales = RU_SCALES,
    .nscales = 8,
    .ru_plural = 1,
    .negword = "минус",
    .negative_ok = 1,
    .pointword = "запятая",
};

static int ru_cardinal(int64_t n, xtts_sb *out) { return xtts_n2w_slavic_int(&RU, n, 0, out); }
static int ru_float(const char *repr, xtts_sb *out) { return xtts_n2w_slavic_float(&RU, repr, out); }

static int ru_currency(const char *repr, const char *cur, xtts_sb *out) {
    static const char *const EURO[3] = {"евро", "евро", "евро"};
    static const char *const USD[3] = {"доллар", "доллара", "долларов"};
    static const char *const CENT[3] = {"цент", "цента", "центов"};
    if (!strcmp(cur, "EUR")) return xtts_n2w_slavic_currency(&RU, repr, EURO, CENT, 0, 0, out);
    if (!strcmp(cur, "USD")) return xtts_n2w_slavic_currency(&RU, repr, USD, CENT, 0, 0, out);
    return -1;
}

/* ---- ordinals: the library's rewriting of the cardinal's words ----
 * All words here are Cyrillic, two bytes a letter in UTF-8, so letter k from the end is the
 * two bytes at len - 2k. */
#define RU_MAXW 32
typedef struct {
    char w[RU_MAXW][64];
    int n;
} ru_words;

static const char *const ORDS[][2] = {
    {"ноль", "нулевой"}, {"один", "первый"}, {"два", "второй"},  {"три", "третий"},
    {"четыре", "четвертый"}, {"пять", "пятый"}, {"шесть", "шестой"}, {"семь", "седьмой"},
    {"восемь", "восьмой"}, {"девять", "девятый"}, {"сто", "сотый"},
};
static const char *const ORDS_FEM[][2] = {
    {"один", ""}, {"одна", ""}, {"две", "двух"}, {"три", "трёх"}, {"четыре", "четырёх"},
    {"пять", "пяти"}, {"шесть", "шести"}, {"семь", "семи"}, {"восемь", "восьми"}, {"девять", "девяти"},
};

static const char *lookup(const char *const tab[][2], size_t n, const char *key) {
    for (size_t i = 0; i < n; i++)
        if (!strcmp(tab[i][0], key)) return tab[i][1];
    return NULL;
}
#define LOOKUP(tab, key) lookup(tab, sizeof tab / sizeof tab[0], key)

/* letter k from the end (1 = last) is the two bytes at s + len - 2k */
static int ends_letter(const char *s, int k, const char *letter) {
    size_t len = strlen(s);
    if ((size_t)(2 * k) > len) return 0;
    return !memcmp(s + len - 2 * k, letter, 2);
}

static void set(char *dst, const char *a, size_t alen, const char *b) {
    char tmp[64];
    size_t blen = strlen(b);
    if (alen + blen >= sizeof tmp) alen = blen = 0;
    memcpy(tmp, a, alen);
    memcpy(tmp + alen, b, blen);
    tmp[alen + blen] = 0;
    strcpy(dst, tmp);
}

static int ru_ordinal(int64_t n, xtts_sb *out) {
    if (n < 0) return -1;
    xtts_sb card = {0};
    if (xtts_n2w_slavic_int(&RU, n, 0, &card) || card.failed) {
        int f = card.failed;
        xtts_sb_free(&card);
        if (f) out->failed = 1;
        return f ? 0 : -1;
    }
    ru_words W = {.n = 0};
    for (char *p = card.s;;) {
        char *sp = strchr(p, ' ');
        size_t l = sp ? (size_t)(sp - p) : strlen(p);
        if (W.n == RU_MAXW || l >= sizeof W.w[0]) {
            xtts_sb_free(&card);
            return -1;
        }
        memcpy(W.w[W.n], p, l);
        W.w[W.n++][l] = 0;
        if (!sp) break;
        p = sp + 1;
    }
    xtts_sb_free(&card);
    char *last = W.w[W.n - 1];
    if (W.n > 1) {
        char *prev = W.w[W.n - 2];
        const char *f = LOOKUP(ORDS_FEM, prev);
        if (f)
            strcpy(prev, f);
        else if (!strcmp(prev, "десять"))
            set(prev, prev, strlen(prev) - 2, "и");
    }
    if (W.n == 3 && (!strcmp(W.w[0], "один") || !strcmp(W.w[0], "одна"))) W.w[0][0] = 0;
    const char *o = LOOKUP(ORDS, last);
    size_t len = strlen(last);
    char head[64];
    if (len >= 6) {
        memcpy(head, last, len - 6);
        head[len - 6] = 0;
    } else {
        head[0] = 0;
    }
    if (o) {
        strcpy(last, o);
    } else if (len >= 6 && LOOKUP(ORDS_FEM, head)) {
        set(last, LOOKUP(ORDS_FEM, head), strlen(LOOKUP(ORDS_FEM, head)), "сотый");
    } else if (ends_letter(last, 1, "ь") || ends_letter(last, 2, "т")) {
        set(last, last, len - 2, "ый");
    } else if (ends_letter(last, 1, "к")) {
        set(last, last, len, "овой");
    } else if (len >= 10 && !strcmp(last + len - 10, "десят")) {
        /* every "ь" becomes "и", then "ый" */
        char t[64];
        size_t k = 0;
        for (size_t i = 0; i < len && k + 2 < sizeof t; i += 2) {
            const char *l = memcmp(last + i, "ь", 2) ? last + i : "и";
            t[k++] = l[0];
            t[k++] = l[1];
        }
        set(last, t, k, "ый");
    } else if (ends_letter(last, 2, "ч") || ends_letter(last, 1, "ч")) {
        if (ends_letter(last, 2, "ч")) set(last, last, len - 2, "ный");
        if (ends_letter(last, 1, "ч")) set(last, last, strlen(last), "ный");
    } else if (ends_letter(last, 1, "н") || ends_letter(last, 2, "н")) {
        const char *r = NULL;
        for (const char *p = strstr(last, "н"); p; p = strstr(p + 2, "н")) r = p;
        set(last, last, (size_t)(r - last) + 2, "ный");
    } else if (ends_letter(last, 1, "д") || ends_letter(last, 2, "д")) {
        const char *r = NULL;
        for (const char *p = strstr(last, "д"); p; p = strstr(p + 2, "д")) r = p;
        set(last, last, (size_t)(r - last) + 2, "ный");
    }
    /* " ".join(words).strip() */
    xtts_sb j = {0};
    for (int i = 0; i < W.n; i++) {
        if (i) xtts_sb_putc(&j, ' ');
        xtts_sb_puts(&j, W.w[i]);
    }
    size_t a = 0, b = j.len;
    while (a < b && j.s[a] == ' ') a++;
    while (b > a && j.s[b - 1] == ' ') b--;
    if (!j.failed) xtts_sb_putn(out, j.s + a, b - a);
    else out->failed = 1;
    xtts_sb_free(&j);
    return 0;
}

const xtts_n2w_lang xtts_n2w_ru = {"ru", ru_cardinal, ru_ordinal, ru_float, ru_currency, NULL};
