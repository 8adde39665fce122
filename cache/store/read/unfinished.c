/* unfinished.c — a build running in a cache directory, and what a directory without
 * manifest.json holds, in words (cache/store/read/reader.h: xtts_cache_build_running,
 * xtts_cache_unfinished), so that every reader says "a build is running" or "unfinished"
 * instead of "cannot open" or reading shards a build is changing.
 *
 * A build takes its lock (XTTS_LOCK_NAME, and a part lock for a build in parts) before it
 * writes anything else into the directory, so a held lock names a build in progress from
 * its first instant. The lock is looked up in /proc/locks, without touching it: a reader
 * that took it, even for an instant, could make a build starting at that instant fail. Where
 * /proc/locks cannot be read, a non-blocking shared flock() on each lock file is the probe
 * (it sees the exclusive locks of a whole build, a merge and every part).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cache/store/read/names.h"
#include "cache/store/read/reader.h"

/* /proc/locks: the pid of another process holding a lock on the file (dev, ino), 0 when
 * none; -1 when the table cannot be read. This process's own locks are not another build. */
static long proc_locks_holder(dev_t dev, ino_t ino) {
    FILE *f = fopen("/proc/locks", "re");
    if (!f) return -1;
    char line[256];
    long holder = 0;
    while (!holder && fgets(line, sizeof line, f)) {
        /* "1: FLOCK  ADVISORY  WRITE 27592 fe:00:11429457 0 EOF"; waiters have "->" after
         * the number and hold nothing */
        long pid;
        unsigned maj, min;
        unsigned long long inode;
        char kind[16], mode[16], access[16];
        if (strstr(line, "->")) continue;
        if (sscanf(line, "%*d: %15s %15s %15s %ld %x:%x:%llu", kind, mode, access, &pid, &maj, &min, &inode) == 7 &&
            inode == (unsigned long long)ino && maj == major(dev) && min == minor(dev) && pid != (long)getpid())
            holder = pid > 0 ? pid : 1;
    }
    fclose(f);
    return holder;
}

/* The pid holding the lock file path (1 when the holder is not known), 0 when nobody. */
static long lock_holder(const char *path) {
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return 0;
    long pid = proc_locks_holder(st.st_dev, st.st_ino);
    if (pid >= 0) return pid;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return 0;
    long held = 0;
    if (flock(fd, LOCK_SH | LOCK_NB) != 0) held = 1;
    else flock(fd, LOCK_UN);
    if (held) { /* an exclusive holder wrote its pid (only a hint) */
        char buf[24];
        ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
        buf[n > 0 ? n : 0] = '\0';
        long p = strtol(buf, NULL, 10);
        if (p > 0) held = p;
    }
    close(fd);
    return held;
}

/* A build making dir: the directory does not exist yet, but a build is making it beside it
 * under a temporary name (DIR.xtts-new.PID, cache/store/writer.c: it is locked there and
 * renamed into place) and that process is alive. 1 with msg then, else 0. */
static int dir_being_made(const char *dir, char *msg, size_t cap) {
    char parent[4096];
    snprintf(parent, sizeof parent, "%s", dir);
    size_t n = strlen(parent);
    while (n > 1 && parent[n - 1] == '/') parent[--n] = '\0';
    char *slash = strrchr(parent, '/');
    const char *base = slash ? slash + 1 : parent;
    char prefix[300];
    if (!*base || snprintf(prefix, sizeof prefix, "%s.xtts-new.", base) >= (int)sizeof prefix) return 0;
    if (slash == parent) parent[1] = '\0';
    else if (slash) *slash = '\0';
    DIR *d = opendir(slash ? parent : ".");
    if (!d) return 0;
    long builder = 0;
    struct dirent *e;
    while (!builder && (e = readdir(d))) {
        if (strncmp(e->d_name, prefix, strlen(prefix))) continue;
        char *end;
        long pid = strtol(e->d_name + strlen(prefix), &end, 10);
        if (pid > 0 && !*end && pid != (long)getpid() && (kill((pid_t)pid, 0) == 0 || errno == EPERM)) builder = pid;
    }
    closedir(d);
    if (!builder) return 0;
    snprintf(msg, cap, "%s: a build is running in this directory (pid %ld is making it); read it when the build has finished",
             dir, builder);
    return 1;
}

int xtts_cache_build_running(const char *dir, char *msg, size_t cap) {
    DIR *d = opendir(dir);
    if (!d && errno == ENOENT) { /* a build's first instant: the directory is being made */
        if (dir_being_made(dir, msg, cap)) return 1;
        d = opendir(dir); /* renamed into place meanwhile, locked before */
    }
    if (!d) return 0;
    long builder = 0;
    char lock_name[256] = "";
    struct dirent *e;
    while (!builder && (e = readdir(d)))
        if (!strncmp(e->d_name, XTTS_LOCK_NAME, strlen(XTTS_LOCK_NAME))) {
            char path[4400];
            xtts_path_join(path, sizeof path, dir, e->d_name);
            if ((builder = lock_holder(path))) snprintf(lock_name, sizeof lock_name, "%s", e->d_name);
        }
    closedir(d);
    if (!builder) return 0;
    char by[40] = "";
    if (builder > 1) snprintf(by, sizeof by, " by pid %ld", builder);
    snprintf(msg, cap, "%s: a build is running in this directory (lock %s held%s); read it when the build has finished",
             dir, lock_name, by);
    return 1;
}

int xtts_cache_unfinished(const char *dir, char *msg, size_t cap) {
    if (xtts_cache_build_running(dir, msg, cap)) return 2;
    DIR *d = opendir(dir);
    if (!d) return 0;
    int parts_done = 0, n_parts = 0, shards = 0, others = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        others += strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
                  strncmp(e->d_name, XTTS_LOCK_NAME, strlen(XTTS_LOCK_NAME));
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
    else if (!others)
        snprintf(msg, cap, "%s: no cache here: the directory is empty (no manifest.json, no shards); build one with "
                 "xtts-melcache --out %s", dir, dir);
    else if (shards)
        snprintf(msg, cap, "%s: unfinished build (no manifest.json, %d shard director%s); re-run xtts-melcache to finish it",
                 dir, shards, shards == 1 ? "y" : "ies");
    else
        return 0;
    return 1;
}
