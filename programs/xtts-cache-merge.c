/* xtts-cache-merge — join the partial manifests that `xtts-melcache --part K` jobs
 * wrote into one cache (DIR/manifest.json). See docs/xtts-cache-merge.md. */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

#include "cache/store/writer.h"

static const char *USAGE =
    "usage: xtts-cache-merge [OPTIONS] DIR\n"
    "Join the partial manifests (manifest.part-KKKKK.json) that `xtts-melcache --part K`\n"
    "jobs wrote in DIR into DIR/manifest.json. Every part 0..N-1 must be finished, and all\n"
    "must share one configuration and the same speaker and language tables.\n"
    "\n"
    "  -q, --quiet     print nothing on success\n"
    "  -h, --help      show this help and exit\n"
    "  -V, --version   show the version and exit\n"
    "\n"
    "Exit status: 0 merged; 1 usage error; 2 the merge was refused or failed.\n";

int main(int argc, char **argv) {
    xtts_check_stdout_at_exit("xtts-cache-merge");
    static const struct option opts[] = {
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    int quiet = 0, c;
    while ((c = getopt_long(argc, argv, "qhV", opts, NULL)) != -1) {
        switch (c) {
        case 'q': quiet = 1; break;
        case 'h': fputs(USAGE, stdout); return 0;
        case 'V': printf("xtts-cache-merge %s\n", XTTS_VERSION); return 0;
        default: xtts_usage_hint("xtts-cache-merge"); return 1;
        }
    }
    if (argc - optind != 1) {
        fprintf(stderr, "xtts-cache-merge: expected one directory\n");
        xtts_usage_hint("xtts-cache-merge");
        return 1;
    }
    const char *dir = argv[optind];
    xtts_error err;
    xtts_error_clear(&err);
    xtts_status st = xtts_cache_merge(dir, &err);
    if (st) {
        xtts_error_print("xtts-cache-merge", &err);
        return xtts_exit_code(st);
    }
    if (!quiet) {
        char path[4096];
        xtts_path_join(path, sizeof path, dir, "manifest.json");
        json_t *m = NULL;
        if (xtts_manifest_load(path, &m, &err) == XTTS_OK) {
            fprintf(stderr, "xtts-cache-merge: %s: %zu shards, %lld records, %lld rejected\n", path,
                    json_array_size(json_object_get(m, "shards")), (long long)json_integer_value(json_object_get(m, "records")),
                    (long long)json_integer_value(json_object_get(m, "rejected")));
            json_decref(m);
        }
    }
    return 0;
}
