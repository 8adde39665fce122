/* xtts_text.c — Coqui XTTS's text preparation (xtts_text.h). Not written yet: returns the
 * text unchanged. */
#include "prep/xtts_text.h"

#include <stdlib.h>
#include <string.h>

xtts_status xtts_text_prepare(const char *text, size_t len, const char *lang, char **out, xtts_error *err) {
    (void)lang;
    char *s = malloc(len + 1);
    if (!s) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    memcpy(s, text, len);
    s[len] = 0;
    *out = s;
    return XTTS_OK;
}
