/* n2w_ko.c — num2words 0.5.12's number words for "ko" (see num2words.h): Num2Word_KO.
 *
 * Cardinals: Sino-Korean words in groups of 10^4 (만 억 조 경; the library's larger units
 * are past int64), Num2Word_Base's splitnum/clean with the language's merge: a leading one
 * is silent before 10, 100, 1000 and 10000 (십, 백, 천, 만) but not before 10^8 and up
 * (일억), words inside a group of four digits are joined, groups are separated by a space.
 * Negative numbers get "마이너스 ".
 *
 * Ordinals: 1 is "첫 번째"; otherwise the last word of the cardinal is cut at its "백"s and
 * the part after the last one is rewritten with native numerals (일 → 한, 이십 → 스물,
 * ...), a space goes after every "백" of that word, and " 번째" is added. The library looks
 * the part up in its table and raises (KeyError) when it is not there: 0, numbers whose
 * last four digits are a round hundred (100, 1000, 1200) or have a thousand and no hundred
 * (1001, 2011), and most round numbers from 10000 up (10000, 20000, 1000000, 100000000);
 * 10001 is "만 한 번째", 100000 "열만 번째", 1210000 "백 스물일만 번째".
 *
 * Decimals: Num2Word_Base's, with "점" ("십이 점 오").
 *
 * Currency: only USD has a code the library knows ("달러", "센트"); EUR and GBP raise
 * (NotImplementedError). The amount's words lose their spaces and the unit follows without
 * one: "만이천삼백사십오달러 오십센트"; the cents are always said ("이십달러 영센트").
 */
#include <string.h>

#include "prep/text/num2words/n2w_common_internal.h"
#include "prep/text/num2words/n2w_eu_internal.h"
#include "prep/text/num2words/num2words.h"

static const n2w_card ko_cards[] = {
    {10000000000000000LL, "\xea\xb2\xbd"},     /* 경 */
    {1000000000000LL, "\xec\xa1\xb0"},         /* 조 */
    {100000000LL, "\xec\x96\xb5"},             /* 억 */
    {10000, "\xeb\xa7\x8c"},                   /* 만 */
    {1000, "\xec\xb2\x9c"},                    /* 천 */
    {100, "\xeb\xb0\xb1"},                     /* 백 */
    {10, "\xec\x8b\xad"},                      /* 십 */
    {9, "\xea\xb5\xac"},                       /* 구 */
    {8, "\xed\x8c\x94"},                       /* 팔 */
    {7, "\xec\xb9\xa0"},                       /* 칠 */
    {6, "\xec\x9c\xa1"},                       /* 육 */
    {5, "\xec\x98\xa4"},                       /* 오 */
    {4, "\xec\x82\xac"},                       /* 사 */
    {3, "\xec\x82\xbc"},                       /* 삼 */
    {2, "\xec\x9d\xb4"},                       /* 이 */
    {1, "\xec\x9d\xbc"},                       /* 일 */
    {0, "\xec\x98\x81"},                       /* 영 */
};

static void ko_merge(const char *lt, int64_t ln, const char *rt, int64_t rn, xtts_sb *o, int64_t *on) {
    if (ln == 1 && rn <= 10000) { xtts_sb_puts(o, rt); *on = rn; return; }
    xtts_sb_puts(o, lt);
    if (10000 > ln && ln > rn) *on = ln + rn;
    else if (ln >= 10000 && ln > rn) { xtts_sb_putc(o, ' '); *on = ln + rn; }
    else *on = ln * rn;
    xtts_sb_puts(o, rt);
}

/* negword "마이너스 " (xtts_n2w_eu_cardinal puts the space) */
static const n2w_eu ko_lang = {{N2W_CARDS(ko_cards)}, ko_merge,
                               "\xeb\xa7\x88\xec\x9d\xb4\xeb\x84\x88\xec\x8a\xa4"};

static int ko_cardinal(int64_t n, xtts_sb *out) { return xtts_n2w_eu_cardinal(&ko_lang, n, out); }

#define KO_SIP "\xec\x8b\xad" /* 십 */
#define KO_BAEK "\xeb\xb0\xb1" /* 백 */

/* self.ords[key] for key = s[0..n), or NULL (a KeyError in the library) */
static const char *ko_ords(const char *s, size_t n) {
    static const char *const ORDS[][2] = {
        {"\xec\x9d\xbc", "\xed\x95\x9c"},                     /* 일 한 */
        {"\xec\x9d\xb4", "\xeb\x91\x90"},                     /* 이 두 */
        {"\xec\x82\xbc", "\xec\x84\xb8"},                     /* 삼 세 */
        {"\xec\x82\xac", "\xeb\x84\xa4"},                     /* 사 네 */
        {"\xec\x98\xa4", "\xeb\x8b\xa4\xec\x84\xaf"},         /* 오 다섯 */
        {"\xec\x9c\xa1", "\xec\x97\xac\xec\x84\xaf"},         /* 육 여섯 */
        {"\xec\xb9\xa0", "\xec\x9d\xbc\xea\xb3\xb1"},         /* 칠 일곱 */
        {"\xed\x8c\x94", "\xec\x97\xac\xeb\x8d\x9f"},         /* 팔 여덟 */
        {"\xea\xb5\xac", "\xec\x95\x84\xed\x99\x89"},         /* 구 아홉 */
        {KO_SIP, "\xec\x97\xb4"},                             /* 십 열 */
        {"\xec\x9d\xb4" KO_SIP, "\xec\x8a\xa4\xeb\xac\xbc"},  /* 이십 스물 */
        {"\xec\x82\xbc" KO_SIP, "\xec\x84\x9c\xeb\xa5\xb8"},  /* 삼십 서른 */
        {"\xec\x82\xac" KO_SIP, "\xeb\xa7\x88\xed\x9d\x94"},  /* 사십 마흔 */
        {"\xec\x98\xa4" KO_SIP, "\xec\x89\xb0"},              /* 오십 쉰 */
        {"\xec\x9c\xa1" KO_SIP, "\xec\x98\x88\xec\x88\x9c"},  /* 육십 예순 */
        {"\xec\xb9\xa0" KO_SIP, "\xec\x9d\xbc\xed\x9d\x94"},  /* 칠십 일흔 */
        {"\xed\x8c\x94" KO_SIP, "\xec\x97\xac\xeb\x93\xa0"},  /* 팔십 여든 */
        {"\xea\xb5\xac" KO_SIP, "\xec\x95\x84\xed\x9d\x94"},  /* 구십 아흔 */
    };
    for (size_t i = 0; i < sizeof ORDS / sizeof ORDS[0]; i++)
        if (strlen(ORDS[i][0]) == n && !memcmp(ORDS[i][0], s, n)) return ORDS[i][1];
    return NULL;
}

/* The last occurrence of needle in s[0..n), or NULL. */
static const char *last_of(const char *s, size_t n, const char *needle) {
    size_t k = strlen(needle);
    for (size_t i = n >= k ? n - k + 1 : 0; i-- > 0;)
        if (!memcmp(s + i, needle, k)) return s + i;
    return NULL;
}

/* to_ordinal's rewrite of the part after the last 백 (p[0..n)) into o; -1 on a KeyError.
 * With a 십: ten_one = split("십"), ten_one[0] = ords[ten_one[0] + "십"] (a KeyError raises),
 * ten_one[1] = ords[ten_one[1]] (kept as it is on a KeyError), then ''.join(ten_one). The
 * library's replace("스무", "스물") after it never finds 스무 in its own table's words. */
static int ko_ordinal_tail(const char *p, size_t n, xtts_sb *o) {
    const char *sip = memmem(p, n, KO_SIP, 3);
    if (!sip) {
        const char *w = ko_ords(p, n);
        if (!w) return -1;
        xtts_sb_puts(o, w);
        return 0;
    }
    size_t head = (size_t)(sip - p);
    char key[64];
    if (head + 3 >= sizeof key) return -1; /* longer than any key */
    memcpy(key, p, head);
    memcpy(key + head, KO_SIP, 3);
    const char *tens = ko_ords(key, head + 3);
    if (!tens) return -1;
    xtts_sb_puts(o, tens);
    /* the parts after the first 십, joined without it (a group of four digits has only one) */
    const char *q = sip + 3, *end = p + n;
    for (int part = 1; q <= end; part++) {
        const char *next = memmem(q, (size_t)(end - q), KO_SIP, 3);
        size_t len = (size_t)((next ? next : end) - q);
        const char *w = part == 1 ? ko_ords(q, len) : NULL;
        if (w) xtts_sb_puts(o, w);
        else xtts_sb_putn(o, q, len);
        if (!next) break;
        q = next + 3;
    }
    return 0;
}

static int ko_ordinal(int64_t n, xtts_sb *out) {
    if (n < 0) return -1;
    if (n == 1) {
        xtts_sb_puts(out, "\xec\xb2\xab \xeb\xb2\x88\xec\xa7\xb8"); /* 첫 번째 */
        return 0;
    }
    xtts_sb c = {0}, w = {0};
    int rc = ko_cardinal(n, &c);
    if (rc == 0 && !c.failed) {
        /* outwords[-1], then lastwords = its split("백"): every 백 of the word but the
         * last part is written back followed by a space ("백 ".join) */
        const char *sp = last_of(c.s, c.len, " ");
        size_t word = sp ? (size_t)(sp + 1 - c.s) : 0;
        const char *bk = last_of(c.s + word, c.len - word, KO_BAEK);
        size_t tail = bk ? (size_t)(bk + 3 - c.s) : word;
        xtts_sb_putn(&w, c.s, word);
        for (size_t i = word; i < tail; i++) {
            xtts_sb_putc(&w, c.s[i]);
            if (i >= word + 2 && !memcmp(c.s + i - 2, KO_BAEK, 3)) xtts_sb_putc(&w, ' ');
        }
        rc = ko_ordinal_tail(c.s + tail, c.len - tail, &w);
        xtts_sb_puts(&w, " \xeb\xb2\x88\xec\xa7\xb8"); /* " 번째" */
    }
    if (rc == 0 && !c.failed && !w.failed) xtts_sb_putn(out, w.s, w.len);
    if (c.failed || w.failed) out->failed = 1;
    xtts_sb_free(&c);
    xtts_sb_free(&w);
    return rc == 0 && !c.failed && !w.failed ? 0 : -1;
}

static int ko_float(const char *repr, xtts_sb *out) {
    return xtts_n2w_generic_float(repr, "\xec\xa0\x90", ko_cardinal, out); /* 점 */
}

/* to_currency(val, currency): cents=False, so a float's cents are always said */
static int ko_currency(const char *repr, const char *cur, xtts_sb *out) {
    if (strcmp(cur, "USD")) return -1; /* only KRW, USD, JPY are known */
    int64_t units;
    int cents, neg;
    if (xtts_n2w_money_parts(repr, &units, &cents, &neg)) return -1;
    xtts_sb u = {0}, w = {0};
    int rc = ko_cardinal(units, &u);
    if (rc == 0) {
        if (neg) xtts_sb_puts(&w, "\xeb\xa7\x88\xec\x9d\xb4\xeb\x84\x88\xec\x8a\xa4 "); /* 마이너스 */
        for (size_t i = 0; i < u.len; i++) /* ''.join(words.split()): the words hold only ' ' */
            if (u.s[i] != ' ') xtts_sb_putc(&w, u.s[i]);
        xtts_sb_puts(&w, "\xeb\x8b\xac\xeb\x9f\xac "); /* 달러 */
        rc = ko_cardinal(cents, &w);
        xtts_sb_puts(&w, "\xec\x84\xbc\xed\x8a\xb8"); /* 센트 */
    }
    int failed = u.failed || w.failed;
    if (rc == 0 && !failed) xtts_sb_putn(out, w.s, w.len);
    if (failed) out->failed = 1;
    xtts_sb_free(&u);
    xtts_sb_free(&w);
    return rc == 0 && !failed ? 0 : -1;
}

const xtts_n2w_lang xtts_n2w_ko = {"ko", ko_cardinal, ko_ordinal, ko_float, ko_currency, NULL};
