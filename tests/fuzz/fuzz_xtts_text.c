/* fuzz_xtts_text.c — libFuzzer target: --normalize xtts (prep/text/normalize/xtts_text.h) and the
 * spoken-mode number words on arbitrary bytes. The first byte picks the language; the
 * result must be a NUL-terminated string or a reported error. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "prep/text/normalize/xtts_text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const char *const langs[] = {"en", "es", "fr", "de", "it", "pt", "pl", "tr", "ru", "nl",
                                        "cs", "ar", "hu", "zh-cn", "ja", "ko", "hi", "xx"};
    if (size < 1) return 0;
    const char *lang = langs[data[0] % (sizeof langs / sizeof langs[0])];
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    char *out = NULL;
    xtts_error err;
    xtts_status st = xtts_text_prepare(text, len, lang, &out, &err);
    if (st == XTTS_OK) {
        if (!out) abort();
        (void)strlen(out);
    } else if (out) abort();
    free(out);
    xtts_sb b = {0};
    if (!xtts_text_spoken_numbers(text, len, lang, &b) && b.failed) abort();
    xtts_sb_free(&b);
    return 0;
}
