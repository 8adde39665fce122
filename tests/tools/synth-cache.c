/* synth-cache — test helper: writes a small synthetic cache (tests/synth.h) for the trainer's
 * and the readers' smoke tests and benchmarks. Not installed.
 *   synth-cache DIR [--records N] [--frames N]
 * N records (default 64) padded to N frames (default 96); exit 0, 1 usage, 2 write error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/synth.h"

static int num(const char *s, long lo, long hi, int *out) {
    char *end;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < lo || v > hi) return -1;
    *out = (int)v;
    return 0;
}

int main(int argc, char **argv) {
    xtts_synth_options so;
    xtts_synth_options_defaults(&so);
    const char *dir = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--records") && i + 1 < argc) {
            if (num(argv[++i], 1, 10000000, &so.n_records)) goto usage;
        } else if (!strcmp(argv[i], "--frames") && i + 1 < argc) {
            if (num(argv[++i], 8, 65536, &so.max_frames)) goto usage;
        } else if (argv[i][0] != '-' && !dir) {
            dir = argv[i];
        } else {
            goto usage;
        }
    }
    if (!dir) goto usage;
    so.max_tokens = so.max_frames / so.frames_per_token < 24 ? so.max_frames / so.frames_per_token : so.max_frames / 4;
    if (so.max_tokens < so.min_tokens) so.max_tokens = so.min_tokens;
    xtts_error err;
    xtts_error_clear(&err);
    xtts_status st = xtts_synth_cache_write(dir, &so, &err);
    if (st) {
        xtts_error_print("synth-cache", &err);
        return xtts_exit_code(st);
    }
    fprintf(stderr, "synth-cache: wrote a synthetic cache of %d records to %s\n", so.n_records, dir);
    return 0;
usage:
    fprintf(stderr, "usage: synth-cache DIR [--records N] [--frames N]\n");
    return 1;
}
