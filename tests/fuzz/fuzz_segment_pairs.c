/* fuzz_segment_pairs.c — libFuzzer target: xtts-segment's --pairs list (prep/segment/segment.h).
 * Whatever the input: a list that parses has no more pairs than lines, each with a non-empty
 * audio and text path without tabs and a language that is empty or a valid tag; a refused one
 * says why. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "prep/segment/segment.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    xtts_segment_pair *p = NULL;
    size_t n = 0;
    xtts_error err;
    if (xtts_segment_pairs_parse((const char *)data, size, "fuzz", &p, &n, &err)) {
        if (p || n || !err.msg[0]) abort();
        return 0;
    }
    size_t lines = 1;
    for (size_t i = 0; i < size; i++) lines += data[i] == '\n';
    if (n > lines) abort();
    for (size_t i = 0; i < n; i++) {
        if (!p[i].audio[0] || !p[i].text[0] || strchr(p[i].audio, '\t') || strchr(p[i].text, '\t')) abort();
        if (p[i].lang[0] && !xtts_lang_tag_valid(p[i].lang)) abort();
    }
    xtts_segment_pairs_free(p, n);
    return 0;
}
