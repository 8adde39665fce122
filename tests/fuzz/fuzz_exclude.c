/* fuzz_exclude.c — libFuzzer target: the --exclude lists (cache/store/exclude.h), a report's TSV or a
 * plain list of ids. Whatever the input: no more ids kept than it has lines, and every
 * non-empty line of a plain list that reads without error is found again. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/store/exclude.h"

static void check(const uint8_t *data, size_t size, uint32_t flags) {
    FILE *f = fmemopen((void *)data, size, "r");
    if (!f) return;
    xtts_exclude *x = NULL;
    xtts_error err;
    xtts_status st = xtts_exclude_read(f, "fuzz", flags, &x, &err);
    fclose(f);
    if (st) {
        if (x || !err.msg[0]) abort();
        return;
    }
    size_t lines = 1;
    for (size_t i = 0; i < size; i++) lines += data[i] == '\n';
    if (xtts_exclude_count(x) > lines) abort();
    /* a plain list keeps every line that is not empty (its trailing CRs dropped) */
    /* a TSV is one whose first line is the report's header: "id<TAB>flags", alone or with
     * more columns */
    /* (a UTF-8 byte-order mark before the first line is not part of it) */
    size_t bom = size >= 3 && !memcmp(data, "\xEF\xBB\xBF", 3) ? 3 : 0;
    size_t first = bom;
    while (first < size && data[first] != '\n') first++;
    while (first > bom && data[first - 1] == '\r') first--;
    first -= bom;
    int tsv = (first >= 9 && !memcmp(data + bom, "id\tflags\t", 9)) || (first == 8 && !memcmp(data + bom, "id\tflags", 8));
    char *line = malloc(size + 1);
    if (!line) abort();
    for (size_t i = bom; i < size && !tsv;) {
        size_t n = 0;
        while (i < size && data[i] != '\n') line[n++] = (char)data[i++];
        i++;
        while (n && line[n - 1] == '\r') n--;
        line[n] = '\0';
        if (n && !xtts_exclude_has(x, line)) abort();
    }
    free(line);
    xtts_exclude_free(x);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    check(data, size, XTTS_EXCLUDE_ALL_FLAGS);
    check(data, size, 1u << 4);
    return 0;
}
