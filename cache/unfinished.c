/* unfinished.c — what a cache directory without manifest.json holds, in words (cache/reader.h:
 * xtts_cache_unfinished), so that every reader says "unfinished" instead of "cannot open". */
#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include "cache/reader.h"

int xtts_cache_unfinished(const char *dir, char *msg, size_t cap) {
    DIR *d = opendir(dir);
    if (!d) return 0;
    int parts_done = 0, n_parts = 0, shards = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strncmp(e->d_name, "shard-", 6)) shards++;
        if (!strncmp(e->d_name, "manifest.part-", 14) && strstr(e->d_name, ".json") &&
            !strstr(e->d_name, ".tmp")) {
            parts_done++;
            if (!n_parts) {
                char path[4400];
                xtts_path_join(path, sizeof path, dir, e->d_name);
                n_parts = xtts_manifest_part_count(path);
            }
        }
    }
    closedir(d);
    if (parts_done) {
        char of[16] = "?";
        if (n_parts) snprintf(of, sizeof of, "%d", n_parts);
        snprintf(msg, cap, "%s: unfinished: %d of %s parts done; re-run the build of the missing parts, or run "
                 "xtts-cache-merge when all are done", dir, parts_done, of);
    }
    else if (shards)
        snprintf(msg, cap, "%s: unfinished build (no manifest.json, %d shard director%s); re-run xtts-melcache to finish it",
                 dir, shards, shards == 1 ? "y" : "ies");
    else
        return 0;
    return 1;
}
