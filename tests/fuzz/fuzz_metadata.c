/* fuzz_metadata.c — libFuzzer target: the metadata reader (prep/dataset/metadata.h) in every format,
 * normalization, language identification and the bytes tokenizer, through xtts_tokenize_run
 * on a buffer. For the tree formats (vctk, libritts, mailabs) the buffer stands for one of
 * their transcript files. The first byte picks the format (byte % 10: ljspeech tsv coqui vctk
 * libritts commonvoice mailabs nemo lhotse, 9 = auto) and the language mode (byte / 10); a first
 * byte from 200 up also reads the text from --text-column normalized_text.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "prep/tokenize/tokenize_run.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static xtts_tokenizer *tok;
    static FILE *sink;
    if (!tok) {
        xtts_error err;
        if (xtts_tokenizer_open("bytes", NULL, &tok, &err)) abort();
        sink = fopen("/dev/null", "w");
        if (!sink) abort();
    }
    if (size < 1) return 0;
    xtts_tokenize_options o;
    xtts_tokenize_options_defaults(&o);
    o.input = "fuzz";
    o.input_data = (const char *)data + 1;
    o.input_len = size - 1;
    int f = data[0] % 10;
    o.format = f == 9 ? XTTS_META_AUTO : (xtts_meta_format)f;
    int lm = (data[0] / 10) % 8;
    o.lang = lm == 0 ? -1 : (int)((data[0] / 10) % 17);
    o.tok = tok;
    o.threads = 1;
    o.quiet = 1;
    o.max_tokens = 64 + (data[0] >> 4) * 64;
    o.expand = 1;
    o.text_column = data[0] >= 200 ? "normalized_text" : NULL;
    xtts_tokenize_stats st;
    xtts_error err;
    xtts_tokenize_run(&o, sink, &st, &err);
    return 0;
}
