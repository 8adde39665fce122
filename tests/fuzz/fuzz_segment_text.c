/* fuzz_segment_text.c — libFuzzer target: xtts-segment's text reader (prep/segment/segment.h):
 * the checks of a text file and the sentence splitter. Whatever the input: a text the checks
 * accept splits into sentences that are non-empty, have no tab, newline or doubled space, and
 * carry line numbers that never go back; a refused one says why. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "prep/segment/segment.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    xtts_error err;
    size_t skip = 0;
    const char *t = (const char *)data;
    if (xtts_segment_text_check(t, size, "fuzz", &skip, &err)) {
        if (!err.msg[0]) abort();
        return 0;
    }
    xtts_sentences s;
    if (xtts_sentences_split(t + skip, size - skip, &s, &err)) return 0;
    int line = 0;
    for (size_t k = 0; k < s.n; k++) {
        const char *x = s.s[k].text;
        if (!x[0] || strchr(x, '\t') || strchr(x, '\n') || strstr(x, "  ") || x[0] == ' ') abort();
        if (s.s[k].line < line) abort();
        line = s.s[k].line;
    }
    xtts_sentences_free(&s);
    return 0;
}
