/* romanize.c — xtts_romanize (romanize.h): picks the language's romanizer. Korean is in
 * romanize_ko.c, Chinese in romanize_zh.c, Japanese in romanize_ja.c (MeCab
 * with UniDic). */
#include <stdio.h>
#include <string.h>

#include "prep/text/romanize/romanize.h"
#include "prep/text/romanize/romanize_internal.h"

int xtts_romanize_why(const char *text, size_t len, const char *lang, xtts_sb *out, char *why, size_t why_size) {
    if (why && why_size) *why = 0;
    if (!lang || (!text && len)) return -1;
    if (!strcmp(lang, "ko")) return xtts_romanize_ko(text, len, out);
    if (!strcmp(lang, "zh-cn") || !strcmp(lang, "zh")) return xtts_romanize_zh(text, len, out);
    if (!strcmp(lang, "ja")) return xtts_romanize_ja(text ? text : "", len, out, why, why_size);
    if (why && why_size) snprintf(why, why_size, "no romanization for language '%s'", lang);
    return -1;
}

int xtts_romanize(const char *text, size_t len, const char *lang, xtts_sb *out) {
    return xtts_romanize_why(text, len, lang, out, NULL, 0);
}
