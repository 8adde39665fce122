/* fuzz_romanize.c — libFuzzer target for prep/text/romanize/romanize.c: arbitrary bytes (any UTF-8, or
 * none) romanized as ko, zh-cn and ja (ja only where a UniDic dictionary is installed). Any output is fine; crashes, leaks and undefined
 * behaviour are not. Seeds: tests/fuzz/corpus/romanize/. */
#include <stddef.h>
#include <stdint.h>

#include "prep/text/romanize/romanize.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const char *const langs[] = {"ko", "zh-cn", "ja"};
    for (int i = 0; i < 3; i++) {
        xtts_sb b = {0};
        (void)xtts_romanize((const char *)data, size, langs[i], &b);
        xtts_sb_free(&b);
    }
    return 0;
}
