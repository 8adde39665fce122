/* fuzz_langid_model.c — libFuzzer target: the language n-gram table parser
 * (prep/text/langid/langid_model.h, formats/langid-ngrams.md). A table that parses must score text. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "prep/text/langid/langid_model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    xtts_langid_model *m = NULL;
    xtts_error err;
    if (xtts_langid_model_parse(data, size, "fuzz", &m, &err) == XTTS_OK) {
        static const char text[] = "Der Zug, le train, il treno, ça va? łódź";
        double ll[XTTS_N_LANGS];
        xtts_langid_model_score(m, text, sizeof text - 1, ll);
        for (int l = 0; l < XTTS_N_LANGS; l++)
            if (ll[l] > 0) abort();
        xtts_langid_model_delete(m);
    } else if (m || !err.msg[0]) {
        abort();
    }
    return 0;
}
