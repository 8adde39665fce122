/* n2w_cs.c — num2words 0.5.12's number words for "cs" (the library's "cz"; see num2words.h).
 * Cardinals read groups of three (n2w_slavic.c); the library has no Czech ordinals (they
 * raise) and its currency knows EUR only. Negative numbers raise, as in the library. */
#include "prep/text/num2words/n2w_slavic_internal.h"
#include "prep/text/num2words/num2words.h"

#include <string.h>

static const char *const CS_SCALES[][3] = {
    {"", "", ""},
    {"tisíc", "tisíce", "tisíc"},
    {"milion", "miliony", "milionů"},
    {"miliarda", "miliardy", "miliard"},
    {"bilion", "biliony", "bilionů"},
    {"biliarda", "biliardy", "biliard"},
    {"trilion", "triliony", "trilionů"},
    {"triliarda", "triliardy", "triliard"},
};

static const n2w_slavic CS = {
    .zero = "nula",
    .ones = {"", "jedna", "dva", "tři", "čtyři", "pět", "šest", "sedm", "osm", "devět"},
    .teens = {"deset", "jedenáct", "dvanáct", "třináct", "čtrnáct", "patnáct", "šestnáct", "sedmnáct",
              "osmnáct", "devatenáct"},
    .tens = {"", "", "dvacet", "třicet", "čtyřicet", "padesát", "šedesát", "sedmdesát", "osmdesát",
             "devadesát"},
    .hundreds = {"", "sto", "dvěstě", "třista", "čtyřista", "pětset", "šestset", "sedmset", "osmset",
                 "devětset"},
    .scales = CS_SCALES,
    .nscales = 8,
    .omit_lone_one = 1,
    .negword = "mínus",
    .pointword = "celá",
};

static int cs_cardinal(int64_t n, xtts_sb *out) { return xtts_n2w_slavic_int(&CS, n, 0, out); }
static int cs_float(const char *repr, xtts_sb *out) { return xtts_n2w_slavic_float(&CS, repr, out); }
static int cs_currency(const char *repr, const char *cur, xtts_sb *out) {
    static const char *const EURO[3] = {"euro", "euro", "euro"}, *const CENT[3] = {"cent", "centy", "centů"};
    if (strcmp(cur, "EUR")) return -1;
    return xtts_n2w_slavic_currency(&CS, repr, EURO, CENT, 0, 0, out);
}

const xtts_n2w_lang xtts_n2w_cs = {"cs", cs_cardinal, NULL, cs_float, cs_currency, NULL};
