/* fuzz_audio.c — libFuzzer target for the audio front end: arbitrary bytes through
 * xtts_audio_load_memory (libsndfile's format detection and decoders, the downmix, the
 * finite-sample check, soxr resampling and trimming). Any status is fine; crashes, leaks
 * and undefined behaviour are not. Seeds: tests/fuzz/corpus/audio/. */
#include <stddef.h>
#include <stdint.h>

#include "prep/audio/audio.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static xtts_audio *a;
    if (!a) {
        xtts_audio_options o = {.target_rate = 16000, .resampler = "soxr", .quality = "quick", .trim_db = 40.0,
                                 .max_seconds = 30.0};
        xtts_audio_new(&o, &a, NULL);
        if (!a) return 0;
    }
    const float *samples;
    size_t n;
    xtts_audio_info info;
    xtts_error err;
    (void)xtts_audio_load_memory(a, data, size, "fuzz", &samples, &n, &info, &err);
    return 0;
}
