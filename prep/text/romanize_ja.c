/* romanize_ja.c — Japanese romanization: not in this build (xtts_romanize returns -1). */
#include "prep/text/romanize_int.h"

int xtts_romanize_ja(const char *text, size_t len, xtts_sb *out) {
    (void)text; (void)len; (void)out;
    return -1;
}
