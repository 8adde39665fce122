/* fuzz_tokenizer_json.c — libFuzzer target: loading a tokenizer.json (prep/text/tokenizer/bpe.c) and, when
 * it loads, encoding a few fixed texts and the input itself as text. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "prep/text/tokenizer/tokenizer.h"
#include "prep/text/tokenizer/tokenizer_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    xtts_bpe *b;
    xtts_error err;
    if (xtts_bpe_open_buffer((const char *)data, size, "fuzz.json", &b, &err) != XTTS_OK) return 0;
    static const char *const texts[] = {"hello world", "[en]a[SPACE]b", "  \xC3\xA9t\xC3\xA9 \xF0\x9F\x91\x8D ", "", "'s 're 123"};
    xtts_ids ids = {0};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        ids.n = 0;
        xtts_bpe_encode(b, texts[i], &ids, &err);
        for (size_t k = 0; k < ids.n; k++)
            if (ids.ids[k] < 0 || ids.ids[k] >= xtts_bpe_vocab_size(b)) abort();
    }
    char *text = malloc(size + 1);
    if (text) {
        memcpy(text, data, size);
        text[size] = 0;
        ids.n = 0;
        if (xtts_utf8_valid(text, strlen(text))) xtts_bpe_encode(b, text, &ids, &err);
        free(text);
    }
    free(ids.ids);
    xtts_bpe_close(b);
    return 0;
}
