/* xtts-cache-codes — add the XTTS DVAE's audio codes of every record to a finished cache
 * (prep/codes/codes.h). See docs/xtts-cache-codes.md. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "cache/store/read/reader.h"
#include "prep/codes/codes.h"

static const char *USAGE =
    "usage: xtts-cache-codes CACHE --dvae dvae.pth --mel-norms mel_stats.pth [OPTIONS]\n"
    "Add to a finished cache the audio codes of XTTS's DiscreteVAE for every record: the\n"
    "xtts-preset log-mel of the stored 22,050 Hz waveform (a cache built with --audio int16 or\n"
    "flac), divided by the mel norms, through the DVAE's encoder. The codes go into\n"
    "CACHE/codes-<16 hex>/, named after the two files' SHA-256; only records without codes\n"
    "are computed, so a killed run, or one after an --update, goes on where it stopped.\n"
    "\n"
    "  --dvae FILE         the DVAE checkpoint (XTTS's dvae.pth, or .safetensors)\n"
    "  --mel-norms FILE    the mel norms (XTTS's mel_stats.pth, or .safetensors)\n"
    "  -j, --threads N     encoder threads (default: OpenMP's, all cores)\n"
    "  --commit-every N    records per commit (default 64)\n"
    "  --progress          the progress line also when stderr is not a terminal\n"
    "  -q, --quiet         print nothing on success\n"
    "  -h, --help          show this help and exit\n"
    "  -V, --version       show the version and exit\n"
    "\n"
    "Exit status: 0 done; 1 usage error; 2 a model file, the cache or a record was refused\n"
    "(one line naming it), or another run is writing the same codes.\n";

static int parse_count(const char *s, long max, long *out) {
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end || v < 1 || v > max) return -1;
    *out = v;
    return 0;
}

int main(int argc, char **argv) {
    xtts_check_stdout_at_exit("xtts-cache-codes");
    xtts_cache_guard_faults();
    static const struct option opts[] = {
        {"dvae", required_argument, NULL, 'd'},     {"mel-norms", required_argument, NULL, 'n'},
        {"threads", required_argument, NULL, 'j'},  {"commit-every", required_argument, NULL, 'c'},
        {"progress", no_argument, NULL, 'p'},       {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},           {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    xtts_codes_options o;
    xtts_codes_options_defaults(&o);
    int quiet = 0, c;
    long v;
    while ((c = getopt_long(argc, argv, "j:qhV", opts, NULL)) != -1) {
        switch (c) {
        case 'd': o.dvae_path = optarg; break;
        case 'n': o.norms_path = optarg; break;
        case 'j':
            if (parse_count(optarg, 4096, &v)) goto bad_number;
            o.threads = (int)v;
            break;
        case 'c':
            if (parse_count(optarg, 1000000, &v)) goto bad_number;
            o.commit_every = (uint64_t)v;
            break;
        case 'p': o.progress = 1; break;
        case 'q': quiet = 1; break;
        case 'h': fputs(USAGE, stdout); return 0;
        case 'V': printf("xtts-cache-codes %s\n", XTTS_VERSION); return 0;
        default: xtts_usage_hint("xtts-cache-codes"); return 1;
        }
    }
    if (argc - optind != 1 || !o.dvae_path || !o.norms_path) {
        fprintf(stderr, "xtts-cache-codes: expected one cache directory, --dvae and --mel-norms\n");
        xtts_usage_hint("xtts-cache-codes");
        return 1;
    }
    o.cache_dir = argv[optind];
    xtts_codes_summary sum;
    xtts_error err;
    xtts_error_clear(&err);
    xtts_status st = xtts_codes_run(&o, &sum, &err);
    if (st) {
        xtts_error_print("xtts-cache-codes", &err);
        return xtts_exit_code(st);
    }
    if (!quiet)
        fprintf(stderr, "xtts-cache-codes: %s: %llu records, %llu had codes, %llu computed (%.1f h of audio in %.1f s, %.0f h/h)\n",
                sum.dir, (unsigned long long)sum.records, (unsigned long long)sum.present,
                (unsigned long long)sum.computed, sum.audio_seconds / 3600, sum.seconds,
                sum.seconds > 0 ? sum.audio_seconds / sum.seconds : 0.0);
    return 0;
bad_number:
    fprintf(stderr, "xtts-cache-codes: %s: expected a positive count, not '%s'\n", argv[optind - 1], optarg);
    return 1;
}
