/* fuzz_tokens.c — libFuzzer target: the token stream reader (formats/tokens.h). Every
 * record read is formatted back and must read back the same. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/tokens.h"

static void read_all_records(const uint8_t *data, size_t size, int lenient) {
    FILE *f = fmemopen((void *)data, size, "r");
    if (!f) return;
    xtts_tokens_reader *r;
    xtts_error err;
    if (xtts_tokens_reader_open(f, "fuzz", &r, &err) == XTTS_OK) {
        xtts_tokens_reader_lenient(r, lenient);
        xtts_tokens_record rec;
        char *buf = NULL;
        size_t cap = 0, len;
        int rc, errors = 0;
        while ((rc = xtts_tokens_reader_next(r, &rec, &err)) != 0 && errors < 1000) {
            if (rc < 0) { errors++; continue; }
            if (rec.reject) {
                if (!lenient || !*rec.reject || rec.n_tokens) abort();
                continue;
            }
            if (xtts_tokens_format_record(&rec, &buf, &cap, &len, &err) != XTTS_OK) abort();
            if (len == 0 || buf[len - 1] != '\n') abort();
        }
        free(buf);
        xtts_tokens_reader_close(r);
    }
    fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    read_all_records(data, size, 0);
    read_all_records(data, size, 1);
    return 0;
}
