/* n2w_dump.c — reads "lang<TAB>kind<TAB>input" lines (the first three columns of the golden
 * format) and writes each with the C words (or "!raise") as a fourth column; used by
 * tests/golden/check_n2w_wide.sh to compare the C forms with num2words on many inputs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prep/text/num2words/num2words.h"

int main(void) {
    char line[512];
    xtts_sb o = {0};
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\n")] = 0;
        char *lang = strtok(line, "\t"), *kind = strtok(NULL, "\t"), *in = strtok(NULL, "\t");
        if (!lang || !kind || !in) continue;
        const xtts_n2w_lang *L = xtts_n2w_find(lang);
        xtts_sb_clear(&o);
        int rc = -1;
        if (!L)
            rc = -1;
        else if (!strcmp(kind, "cardinal") && L->cardinal)
            rc = L->cardinal(strtoll(in, NULL, 10), &o);
        else if (!strcmp(kind, "ordinal") && L->ordinal)
            rc = L->ordinal(strtoll(in, NULL, 10), &o);
        else if (!strcmp(kind, "float") && L->cardinal_float)
            rc = L->cardinal_float(in, &o);
        else if (!strncmp(kind, "currency_", 9) && L->currency)
            rc = L->currency(in, kind + 9, &o);
        printf("%s\t%s\t%s\t%s\n", lang, kind, in, rc ? "!raise" : o.s ? o.s : "");
    }
    xtts_sb_free(&o);
    return 0;
}
