/* fuzz_melcache_env.c — libFuzzer target: xtts-melcache's two settings read from the
 * environment (prep/melcache/device.h), XTTS_MELCACHE_AUTO (the device-choice figures) and
 * XTTS_MELCACHE_BATCH (the batch pipeline). The first byte picks the parser, the rest is the
 * value. Whatever the value: an error leaves the settings as they were and says why; a value
 * taken gives settings within their documented ranges, and the choice made from them is 0 or
 * 1 with a reason. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "prep/melcache/device.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    char *spec = malloc(size);
    if (!spec) return 0;
    memcpy(spec, data + 1, size - 1);
    spec[size - 1] = '\0';
    xtts_error err;
    err.msg[0] = '\0';
    if (data[0] & 1) {
        xtts_melcache_batch_options b, before;
        xtts_melcache_batch_options_defaults(&b);
        before = b;
        if (xtts_melcache_batch_options_parse(&b, spec, &err)) {
            if (memcmp(&b, &before, sizeof b) || !err.msg[0]) abort();
        } else if (b.sub_batches < 1 || b.sub_batches > 64 || b.buffer_records < 0 || b.buffer_records > 1024 ||
                   (b.cpu_engine != 0 && b.cpu_engine != 1)) {
            abort();
        }
    } else {
        xtts_melcache_device_model m, before;
        xtts_melcache_device_model_defaults(&m);
        before = m;
        if (xtts_melcache_device_model_parse(&m, spec, &err)) {
            if (memcmp(&m, &before, sizeof m) || !err.msg[0]) abort();
        } else {
            if (!(m.cpu_core_s_per_hour >= 0) || !(m.gpu_s_per_hour >= 0) || !(m.gpu_start_s >= 0) ||
                !(m.clip_seconds > 0))
                abort();
            char why[160];
            double h = xtts_melcache_audio_hours_estimate(&m, 60000, 0.0);
            int pays = xtts_melcache_gpu_pays(&m, (int)(data[0] >> 1), h, why, sizeof why);
            if ((pays != 0 && pays != 1) || !why[0]) abort();
        }
    }
    free(spec);
    return 0;
}
