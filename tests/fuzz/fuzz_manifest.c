/* fuzz_manifest.c — libFuzzer target for the manifest parser (formats/manifest.h).
 *
 * Any bytes go through xtts_manifest_parse; whatever it accepts must also survive the
 * configuration round trip (from_json -> to_json -> from_json -> same hash) and the
 * padded-frame lookup. Build: clang -fsanitize=fuzzer,address,undefined with libxtts.
 */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/manifest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    json_t *m = NULL;
    xtts_error err;
    if (xtts_manifest_parse((const char *)data, size, "fuzz.json", &m, &err) != XTTS_OK) {
        if (m) abort(); /* nothing is returned on failure */
        if (!memchr(err.msg, '\0', sizeof err.msg)) abort();
        return 0;
    }
    xtts_cache_config c, c2;
    if (xtts_cache_config_from_json(json_object_get(m, "config"), &c, "fuzz.json", &err) != XTTS_OK) abort();
    json_t *j = xtts_cache_config_to_json(&c);
    if (!j || xtts_cache_config_from_json(j, &c2, "round trip", &err) != XTTS_OK) abort();
    char h1[65], h2[65];
    xtts_cache_config_hash(&c, h1);
    xtts_cache_config_hash(&c2, h2);
    if (strcmp(h1, h2) || strcmp(h1, json_string_value(json_object_get(m, "config_hash")))) abort();
    for (int n = -1; n < 3000; n += 97) {
        int p = xtts_cache_config_padded_frames(&c, n);
        if (p != 0 && (p < n || p > c.max_frames)) abort();
    }
    json_decref(j);
    json_decref(m);
    return 0;
}
