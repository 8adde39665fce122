/* zh_numbers_cat.c — reads lines on stdin; for each writes one line on stdout: with argument
 * "textnorm" xtts_zh_numbers_normalize(line), with "xtts" xtts_text_prepare(line, "zh-cn")
 * (the whole --normalize xtts path: cleaners, numbers, pinyin); "!ERROR <reason>" when it
 * refuses the line. The C side of tests/golden/check_zh_numbers_random.py. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "prep/text/normalize/xtts_text.h"
#include "prep/text/normalize/zh_numbers.h"
int main(int argc, char **argv) {
    int whole = argc > 1 && !strcmp(argv[1], "xtts");
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    xtts_sb o = {0};
    xtts_error err;
    while ((n = getline(&line, &cap, stdin)) >= 0) {
        if (n && line[n - 1] == '\n') line[--n] = 0;
        if (whole) {
            char *out = NULL;
            if (xtts_text_prepare(line, (size_t)n, "zh-cn", &out, &err)) printf("!ERROR %s\n", err.msg);
            else printf("%s\n", out);
            free(out);
        } else {
            xtts_sb_clear(&o);
            if (xtts_zh_numbers_normalize(line, (size_t)n, &o, &err)) printf("!ERROR %s\n", err.msg);
            else printf("%s\n", o.s ? o.s : "");
        }
    }
    free(line);
    xtts_sb_free(&o);
    return 0;
}
