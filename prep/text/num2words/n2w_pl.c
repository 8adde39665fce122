/* n2w_pl.c — num2words 0.5.12's number words for "pl" (see num2words.h). Cardinals read groups
 * of three (n2w_slavic.c); ordinals change the last group, or join it to the ordinal of its
 * power of a thousand ("dwutysięczny"); currency knows EUR only (USD and GBP raise). The
 * library's own spellings are kept as they are ("dziewięćdzisiąty", "milairdowy"). */
#include "prep/text/num2words/n2w_slavic_internal.h"
#include "prep/text/num2words/num2words.h"

#include <string.h>

static const char *const PL_SCALES[][3] = {
    {"", "", ""},
    {"tysiąc", "tysiące", "tysięcy"},
    {"milion", "miliony", "milionów"},
    {"miliard", "miliardy", "miliardów"},
    {"bilion", "biliony", "bilionów"},
    {"biliard", "biliardy", "biliardów"},
    {"trylion", "tryliony", "trylionów"},
    {"tryliard", "tryliardy", "tryliardów"},
};

static const n2w_slavic PL = {
    .zero = "zero",
    .ones = {"", "jeden", "dwa", "trzy", "cztery", "pięć", "sześć", "siedem", "osiem", "dziewięć"},
    .teens = {"dziesięć", "jedenaście", "dwanaście", "trzynaście", "czternaście", "piętnaście", "szesnaście",
              "siedemnaście", "osiemnaście", "dziewiętnaście"},
    .tens = {"", "", "dwadzieścia", "trzydzieści", "czterdzieści", "pięćdziesiąt", "sześćdziesiąt",
             "siedemdziesiąt", "osiemdziesiąt", "dziewięćdziesiąt"},
    .hundreds = {"", "sto", "dwieście", "trzysta", "czterysta", "pięćset", "sześćset", "siedemset", "osiemset",
                 "dziewięćset"},
    .scales = PL_SCALES,
    .nscales = 8,
    .omit_lone_one = 1,
    .negword = "minus",
    .pointword = "przecinek",
};

/* [n][0]: the ordinal word, [n][1]: its stem joined to "tysięczny" etc. */
static const char *const ONES_ORD[20][2] = {
    {"", ""},
    {"pierwszy", "pierwszo"},
    {"drugi", "dwu"},
    {"trzeci", "trzy"},
    {"czwarty", "cztero"},
    {"piąty", "pięcio"},
    {"szósty", "sześcio"},
    {"siódmy", "siedmio"},
    {"ósmy", "ośmio"},
    {"dziewiąty", "dziewięcio"},
    {"dziesiąty", "dziesięcio"},
    {"jedenasty", "jedenasto"},
    {"dwunasty", "dwunasto"},
    {"trzynasty", "trzynasto"},
    {"czternasty", "czternasto"},
    {"piętnasty", "piętnasto"},
    {"szesnasty", "szesnasto"},
    {"siedemnasty", "siedemnasto"},
    {"osiemnasty", "osiemnasto"},
    {"dziewiętnasty", "dziewiętnasto"},
};
static const char *const TENS_ORD[10][2] = {
    {"", ""},
    {"", ""},
    {"dwudziesty", "dwudziesto"},
    {"trzydziesty", "trzydiesto"},
    {"czterdziesty", "czterdziesto"},
    {"pięćdziesiąty", "pięćdziesięcio"},
    {"sześćdziesiąty", "sześćdziesięcio"},
    {"siedemdziesiąty", "siedemdziesięcio"},
    {"osiemdziesiąty", "osiemdziesięcio"},
    {"dziewięćdzisiąty", "dziewięćdziesięcio"},
};
static const char *const HUNDREDS_ORD[10][2] = {
    {"", ""},
    {"setny", "stu"},
    {"dwusetny", "dwustu"},
    {"trzysetny", "trzystu"},
    {"czterysetny", "czterystu"},
    {"pięćsetny", "pięcset"},
    {"sześćsetny", "sześćset"},
    {"siedemsetny", "siedemset"},
    {"osiemsetny", "ośiemset"},
    {"dziewięćsetny", "dziewięćset"},
};
static const char *const LEVEL_ORD[4] = {"", "tysięczny", "milionowy", "milairdowy"};

static int pl_cardinal(int64_t n, xtts_sb *out) { return xtts_n2w_slavic_int(&PL, n, 0, out); }

static void add(xtts_sb *w, const char *s) {
    if (w->len) xtts_sb_putc(w, ' ');
    xtts_sb_puts(w, s);
}

/* last_fragment_to_ordinal: -1 where the library indexes past its tuples. */
static int last_fragment(int last, int level, xtts_sb *w) {
    int n1 = last % 10, n2 = last / 10 % 10, n3 = last / 100, two = last % 100;
    if (two == 0) {
        add(w, HUNDREDS_ORD[n3][level]);
    } else if (level == 1 && last == 1) {
        return 0;
    } else if (two < 20) {
        if (n3 > 0) {
            if (level) return -1; /* HUNDREDS has one form only */
            add(w, PL.hundreds[n3]);
        }
        add(w, ONES_ORD[two][level]);
    } else if (two % 10 == 0) {
        if (n3 > 0) {
            if (level) return -1;
            add(w, PL.hundreds[n3]);
        }
        add(w, TENS_ORD[n2][level]);
    } else {
        if (n3 > 0) add(w, PL.hundreds[n3]);
        add(w, TENS_ORD[n2][0]);
        add(w, ONES_ORD[n1][0]);
    }
    return 0;
}

static int pl_ordinal(int64_t n, xtts_sb *out) {
    if (n <= 0) return -1; /* 0 runs out of groups; negative groups do not parse */
    int level = 0;
    int64_t v = n, scale = 1;
    while (v % 1000 == 0) {
        v /= 1000;
        scale *= 1000;
        level++;
    }
    if (level >= 4) return -1;
    int last = (int)(v % 1000);
    xtts_sb w = {0};
    int rc = 0;
    if (v >= 1000) rc = xtts_n2w_slavic_int(&PL, n - (int64_t)last * scale, 0, &w);
    if (rc == 0) rc = last_fragment(last, level ? 1 : 0, &w);
    if (rc == 0) {
        if (last == 1 && level > 0 && w.len) xtts_sb_putc(&w, ' ');
        if (level > 0) xtts_sb_puts(&w, LEVEL_ORD[level]);
        if (!w.failed) xtts_sb_puts(out, w.s ? w.s : "");
    }
    if (w.failed) out->failed = 1;
    xtts_sb_free(&w);
    return rc;
}

static int pl_float(const char *repr, xtts_sb *out) { return xtts_n2w_slavic_float(&PL, repr, out); }

static int pl_currency(const char *repr, const char *cur, xtts_sb *out) {
    static const char *const EURO[3] = {"euro", "euro", "euro"}, *const CENT[3] = {"cent", "centy", "centów"};
    if (strcmp(cur, "EUR")) return -1;
    return xtts_n2w_slavic_currency(&PL, repr, EURO, CENT, 0, 0, out);
}

const xtts_n2w_lang xtts_n2w_pl = {"pl", pl_cardinal, pl_ordinal, pl_float, pl_currency, NULL};
