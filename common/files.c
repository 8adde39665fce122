/* files.c — whole files read and written atomically, paths, directories. */
#include "common/xtts_common.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- files ----------------------------------------------------------------- */

static int fsync_dir_of(const char *path) {
    char *dup = strdup(path);
    if (!dup) return -1;
    const char *dir = dirname(dup);
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    int rc = -1;
    if (fd >= 0) { rc = fsync(fd); close(fd); }
    free(dup);
    return rc;
}

xtts_status xtts_write_file_atomic(const char *path, const void *data, size_t len, xtts_error *err) {
    char tmp[4096];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= sizeof tmp)
        return xtts_error_set(err, XTTS_ERANGE, "%s: path too long", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return xtts_error_set(err, XTTS_EIO, "%s: cannot create: %s", tmp, strerror(errno));
    const uint8_t *p = data;
    size_t left = len;
    while (left) {
        ssize_t w = write(fd, p, left);
        if (w < 0) {
            if (errno == EINTR) continue;
            int e = errno;
            close(fd); unlink(tmp);
            return xtts_error_set(err, XTTS_EIO, "%s: write failed: %s", tmp, strerror(e));
        }
        p += w; left -= (size_t)w;
    }
    if (fsync(fd) != 0) {
        int e = errno;
        close(fd); unlink(tmp);
        return xtts_error_set(err, XTTS_EIO, "%s: fsync failed: %s", tmp, strerror(e));
    }
    if (close(fd) != 0) {
        int e = errno;
        unlink(tmp);
        return xtts_error_set(err, XTTS_EIO, "%s: close failed: %s", tmp, strerror(e));
    }
    if (rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return xtts_error_set(err, XTTS_EIO, "%s: rename failed: %s", path, strerror(e));
    }
    fsync_dir_of(path);
    return XTTS_OK;
}

xtts_status xtts_read_file(const char *path, size_t max_bytes, char **out, size_t *len, xtts_error *err) {
    *out = NULL;
    if (len) *len = 0;
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!f) return xtts_error_set(err, errno == ENOENT ? XTTS_ENOTFOUND : XTTS_EIO, "%s: cannot open: %s", path, strerror(errno));
    struct stat sb;
    if (f != stdin && fstat(fileno(f), &sb) == 0 && S_ISDIR(sb.st_mode)) { /* fopen opens one; its read says only "read error" */
        fclose(f);
        return xtts_error_set(err, XTTS_EINPUT, "%s: a directory, not a file", path);
    }
    size_t cap = max_bytes < 65536 ? max_bytes : 65536, n = 0;
    char *buf = malloc(cap + 1);
    if (!buf) { if (f != stdin) fclose(f); return xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", path); }
    for (;;) {
        if (n == cap) {
            /* a file of exactly max_bytes is fine: probe for one more byte (buf has room) */
            if (cap >= max_bytes && fread(buf + n, 1, 1, f) == 1) {
                free(buf); if (f != stdin) fclose(f);
                return xtts_error_set(err, XTTS_ERANGE, "%s: larger than %zu bytes", path, max_bytes);
            }
            if (cap >= max_bytes) break;
            size_t ncap = cap * 2 > max_bytes ? max_bytes : cap * 2;
            char *nb = realloc(buf, ncap + 1);
            if (!nb) { free(buf); if (f != stdin) fclose(f); return xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", path); }
            buf = nb; cap = ncap;
        }
        size_t r = fread(buf + n, 1, cap - n, f);
        n += r;
        if (r == 0) break;
    }
    int bad = ferror(f);
    if (f != stdin) fclose(f);
    if (bad) { free(buf); return xtts_error_set(err, XTTS_EIO, "%s: read error", path); }
    buf[n] = '\0';
    *out = buf;
    if (len) *len = n;
    return XTTS_OK;
}

size_t xtts_path_join(char *out, size_t cap, const char *dir, const char *name) {
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/') n--;
    const char *sep = n == 0 || dir[n - 1] == '/' ? "" : "/";
    int k = snprintf(out, cap, "%.*s%s%s", (int)n, dir, sep, name);
    return k < 0 ? cap : (size_t)k;
}

xtts_status xtts_mkdir_p(const char *path, xtts_error *err) {
    char buf[4096];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof buf) return xtts_error_set(err, XTTS_ERANGE, "bad directory path '%s'", path);
    memcpy(buf, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] == '/' || buf[i] == '\0') {
            char c = buf[i];
            buf[i] = '\0';
            if (mkdir(buf, 0755) != 0 && errno != EEXIST)
                return xtts_error_set(err, XTTS_EIO, "%s: cannot create directory: %s", buf, strerror(errno));
            buf[i] = c;
        }
    }
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return xtts_error_set(err, XTTS_EIO, "%s: not a directory", path);
    return XTTS_OK;
}
