/* fuzz_checkpoint.c — libFuzzer target for the xtts-train checkpoint header parser.
 * Any bytes: xtts_ckpt_parse_header must return a status without reading past size,
 * and a header it accepts must survive an encode / parse round trip. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "train/checkpoint.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    xtts_ckpt_header h;
    xtts_error err;
    if (xtts_ckpt_parse_header(data, size, "fuzz", &h, &err) == XTTS_OK) {
        /* what was accepted survives an encode / parse round trip unchanged */
        uint8_t again[XTTS_CKPT_HEADER_BYTES];
        xtts_ckpt_header h2;
        xtts_ckpt_encode_header(&h, again);
        if (xtts_ckpt_parse_header(again, sizeof again, "fuzz", &h2, &err) != XTTS_OK) __builtin_trap();
        if (memcmp(&h.model, &h2.model, sizeof h.model) != 0 || h.step != h2.step ||
            strcmp(h.cache_config_hash, h2.cache_config_hash) != 0)
            __builtin_trap();
        xtts_model_config other = h.model;
        other.channels += 1;
        (void)xtts_ckpt_check(&h, "fuzz", &other, h.cache_config_hash, h.batch_size, &err);
    }
    return 0;
}
