/* romanize.c — xtts_romanize (romanize.h): picks the language's romanizer. Korean is in
 * romanize_ko.c, Chinese in romanize_zh.c, Japanese in romanize_ja.c. */
#include <string.h>

#include "prep/text/romanize.h"
#include "prep/text/romanize_int.h"

int xtts_romanize(const char *text, size_t len, const char *lang, xtts_sb *out) {
    if (!lang || (!text && len)) return -1;
    if (!strcmp(lang, "ko")) return xtts_romanize_ko(text, len, out);
    if (!strcmp(lang, "zh-cn") || !strcmp(lang, "zh")) return xtts_romanize_zh(text, len, out);
    if (!strcmp(lang, "ja")) return xtts_romanize_ja(text, len, out);
    return -1;
}
