/* xtts_text_cat.c — reads lines on stdin, writes xtts_text_prepare(line, argv[1]) of each on
 * stdout (or "ERROR: reason"); the C side of tests/golden/check_romanize_ja_random.py. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "prep/text/normalize/xtts_text.h"
int main(int argc, char **argv) {
    static char line[1 << 16];
    const char *lang = argc > 1 ? argv[1] : "ja";
    while (fgets(line, sizeof line, stdin)) {
        size_t n = strlen(line);
        if (n && line[n - 1] == '\n') line[--n] = 0;
        char *o = NULL;
        xtts_error e = {0};
        if (xtts_text_prepare(line, n, lang, &o, &e)) printf("ERROR: %s\n", e.msg);
        else printf("%s\n", o);
        free(o);
    }
    return 0;
}
