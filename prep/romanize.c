/* romanize.c — zh-cn, ja and ko romanization for --normalize xtts (romanize.h). Not written
 * yet: no language is romanized. */
#include "prep/romanize.h"

int xtts_romanize(const char *text, size_t len, const char *lang, xtts_sb *out) {
    (void)text; (void)len; (void)lang; (void)out;
    return -1;
}
