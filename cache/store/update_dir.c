/* update_dir.c — build an update beside a cache and exchange the two (update_dir.h). */
#include "cache/store/update_dir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache/store/codes_store.h"
#include "cache/store/writer_internal.h"

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

/* A name a cache directory holds of its own: manifests (and their temporary files), shard
 * directories, the locks and the update mark. */
static int is_cache_entry(const char *n) {
    int part, number;
    return !strcmp(n, "manifest.json") || (!strncmp(n, "manifest.part-", 14) && strstr(n, ".json")) ||
           (!strncmp(n, "manifest", 8) && strstr(n, ".json.tmp.")) || !strncmp(n, XTTS_LOCK_NAME, strlen(XTTS_LOCK_NAME)) ||
           !strcmp(n, XTTS_UPDATE_MARK) || xtts_shard_name_parse(n, &part, &number) || xtts_base_name_parse(n, &number) ||
           xtts_codes_dir_name_valid(n);
}

/* XTTS_EINPUT naming the first entry of dir that is not the cache's. */
static xtts_status check_only_cache(const char *dir, const char *why, xtts_error *err) {
    DIR *d = opendir(dir);
    if (!d) return errno == ENOENT ? XTTS_OK : xtts_error_set(err, XTTS_EIO, "%s: cannot list: %s", dir, strerror(errno));
    struct dirent *e;
    xtts_status st = XTTS_OK;
    while (!st && (e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && !is_cache_entry(e->d_name))
            st = xtts_error_set(err, XTTS_EINPUT, "%s: holds '%s', which is not the cache's; %s", dir, e->d_name, why);
    closedir(d);
    return st;
}

xtts_status xtts_cache_dir_probe(const char *dir, xtts_cache_dir_state *state, xtts_error *err) {
    xtts_dir_listing l;
    *state = XTTS_DIR_EMPTY;
    xtts_status st = xtts_dir_list(dir, &l, err);
    if (st == XTTS_ENOTFOUND) return XTTS_OK;
    if (st) return st;
    if (l.has_manifest) *state = XTTS_DIR_FINISHED;
    else if (l.n_shards || l.n_parts) *state = XTTS_DIR_UNFINISHED;
    xtts_dir_listing_free(&l);
    return XTTS_OK;
}

xtts_status xtts_update_dir_path(const char *dir, char *out, size_t cap, xtts_error *err) {
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/') n--;
    if ((size_t)snprintf(out, cap, "%.*s.update", (int)n, dir) >= cap)
        return xtts_error_set(err, XTTS_ERANGE, "%s: path too long", dir);
    return XTTS_OK;
}

static void fsync_dir(const char *dir) {
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
}

/* Remove a cache directory: the manifest first (it is no longer a finished cache), then
 * the shards, the other files and the directory. Anything not the cache's stops it first. */
static xtts_status remove_cache_dir(const char *dir, xtts_error *err) {
    xtts_status st = check_only_cache(dir, "remove it by hand", err);
    if (st) return st;
    char path[4096];
    xtts_path_join(path, sizeof path, dir, "manifest.json");
    if ((st = xtts_remove_file(path, err))) return st;
    DIR *d = opendir(dir);
    if (!d) return errno == ENOENT ? XTTS_OK : xtts_error_set(err, XTTS_EIO, "%s: cannot list: %s", dir, strerror(errno));
    struct dirent *e;
    while (!st && (e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        int part, number;
        xtts_path_join(path, sizeof path, dir, e->d_name);
        st = xtts_shard_name_parse(e->d_name, &part, &number) || xtts_base_name_parse(e->d_name, &number)
                 ? xtts_remove_shard_dir(path, err)
             : xtts_codes_dir_name_valid(e->d_name) ? xtts_codes_dir_remove(path, err)
                                                     : xtts_remove_file(path, err);
    }
    closedir(d);
    if (!st && rmdir(dir) != 0 && errno != ENOENT)
        st = xtts_error_set(err, XTTS_EIO, "%s: cannot remove: %s", dir, strerror(errno));
    return st;
}

static xtts_status write_mark(const char *stage, xtts_error *err) {
    char path[4096];
    xtts_path_join(path, sizeof path, stage, XTTS_UPDATE_MARK);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return xtts_error_set(err, XTTS_EIO, "%s: cannot create: %s", path, strerror(errno));
    int bad = fsync(fd) != 0;
    close(fd);
    if (bad) return xtts_error_set(err, XTTS_EIO, "%s: cannot sync: %s", path, strerror(errno));
    fsync_dir(stage);
    return XTTS_OK;
}

xtts_status xtts_update_dir_prepare(const char *dir, const char *stage, int *resumed, xtts_error *err) {
    *resumed = 0;
    xtts_status st = check_only_cache(dir, "an update replaces the whole directory: move it out first", err);
    if (st) return st;
    char mark[4096];
    xtts_path_join(mark, sizeof mark, dir, XTTS_UPDATE_MARK);
    if ((st = xtts_remove_file(mark, err))) return st; /* left by a kill right after an exchange */
    xtts_path_join(mark, sizeof mark, stage, XTTS_UPDATE_MARK);
    struct stat sb;
    if (stat(mark, &sb) == 0) {
        *resumed = 1;
        return xtts_remove_base_dirs(stage, err); /* links an earlier try made; made again at its end */
    }
    if (stat(stage, &sb) == 0 && (st = remove_cache_dir(stage, err))) return st;
    if (mkdir(stage, 0755) != 0 && errno != EEXIST)
        return xtts_error_set(err, XTTS_EIO, "%s: cannot create: %s", stage, strerror(errno));
    return write_mark(stage, err);
}

xtts_status xtts_update_dir_switch(const char *dir, const char *stage, xtts_error *err) {
    /* the audio codes follow the records' content keys: the new cache takes the old one's */
    xtts_status cst = xtts_codes_dirs_copy(dir, stage, err);
    if (cst) return cst;
    fsync_dir(stage);
    if (renameat2(AT_FDCWD, stage, AT_FDCWD, dir, RENAME_EXCHANGE) != 0)
        return xtts_error_set(err, errno == EINVAL || errno == ENOSYS ? XTTS_EUNSUPPORTED : XTTS_EIO,
                              "%s: cannot exchange with %s: %s", dir, stage, strerror(errno));
    /* the exchange is durable once the parent directory is */
    char parent[4096];
    snprintf(parent, sizeof parent, "%s", dir);
    char *slash = strrchr(parent, '/');
    while (slash && slash[1] == 0 && slash > parent) { *slash = 0; slash = strrchr(parent, '/'); }
    if (slash) {
        if (slash == parent) slash[1] = 0;
        else *slash = 0;
    } else {
        snprintf(parent, sizeof parent, ".");
    }
    fsync_dir(parent);
    xtts_status st = remove_cache_dir(stage, err);
    if (st) return st;
    char mark[4096];
    xtts_path_join(mark, sizeof mark, dir, XTTS_UPDATE_MARK);
    return xtts_remove_file(mark, err);
}

xtts_status xtts_update_dir_lock(const char *dir, int exclusive, int *fd, xtts_error *err) {
    return xtts_lock(dir, XTTS_LOCK_NAME, exclusive, fd,
                     exclusive ? "another build, merge or update is running in this directory"
                               : "a whole build, a merge or a whole update is running in this directory",
                     err);
}

void xtts_update_dir_unlock(int fd) { xtts_unlock(fd); }
