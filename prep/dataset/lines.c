/* lines.c — the bounded line source (zlib's gz reader, which also reads plain files, or a buffer), paths, and the sorted, bounded directory walk of the tree formats. */
#include "prep/dataset/metadata_internal.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* The directories a walk has entered, by device and inode (open addressing), so that a
 * symbolic link into a directory already read — a chapter linked into itself, a speaker
 * linked twice — is not read again: its transcripts would come back as duplicate ids (for
 * a loop, once more per level of the depth bound). Links to directories are followed after
 * every real directory (deferred), so that a link met early in the sorted order does not
 * take the place of the directory it points to. */
typedef struct { dev_t dev; ino_t ino; } dir_key;

typedef struct {
    const char *const *suffixes;
    strlist *out;
    dir_key *seen;       /* cap slots; ino 0 and dev 0 marks a free one */
    size_t n_seen, cap;
    strlist links;       /* links to directories, followed after the real ones */
    int *link_depth;     /* (links.cap) the depth left below each */
    size_t links_done;
    size_t skipped;      /* links into a directory already read */
    char first_skip[512];
} walker;

static int ls_fill(linesrc *s) { /* 1 more bytes, 0 eof, -1 error */
    if (s->eof) return 0;
    if (!s->gz) {
        size_t n = s->len - s->pos;
        if (n > sizeof s->chunk) n = sizeof s->chunk;
        memcpy(s->chunk, s->buf + s->pos, n);
        s->pos += n;
        s->cpos = 0;
        s->cend = n;
        if (!n) s->eof = 1;
        return n ? 1 : 0;
    }
    int n = gzread(s->gz, s->chunk, sizeof s->chunk);
    if (n < 0) return -1;
    s->total += (size_t)n;
    if (s->total > XTTS_META_MAX_BYTES) { /* an endless or huge input (/dev/zero) */
        s->too_big = 1;
        return -1;
    }
    s->cpos = 0;
    s->cend = (size_t)n;
    if (!n) { s->eof = 1; return 0; }
    return 1;
}

/* The error that stopped a line source: its size limit, or a read error. */
xtts_status xtts_meta_ls_error(const linesrc *s, const char *path, xtts_error *err) {
    if (s->too_big)
        return xtts_error_set(err, XTTS_EINPUT, "%s: larger than %zu bytes (metadata files are read up to that size)", path,
                              (size_t)XTTS_META_MAX_BYTES);
    return xtts_error_set(err, XTTS_EIO, "%s:%zu: read error", path, s->line_no + 1);
}

/* Next line without its line end. Returns 1, 0 at end, -1 read error. Over-long lines come
 * back empty with too_long set; a line holding a NUL byte has has_nul set. */
int xtts_meta_ls_next(linesrc *s, char **out, size_t *out_len) {
    if (s->replay) { s->replay = 0; *out = s->line; *out_len = s->last_len; return 1; }
    size_t n = 0;
    int any = 0;
    s->too_long = s->has_nul = 0;
    for (;;) {
        if (s->cpos == s->cend) {
            int r = ls_fill(s);
            if (r < 0) return -1;
            if (r == 0) break;
        }
        any = 1;
        char *start = s->chunk + s->cpos;
        size_t avail = s->cend - s->cpos;
        char *nl = memchr(start, '\n', avail);
        size_t take = nl ? (size_t)(nl - start) : avail;
        if (!s->too_long) {
            if (n + take + 1 > XTTS_META_MAX_LINE) s->too_long = 1;
            else {
                if (n + take + 1 > s->cap) {
                    size_t c = s->cap ? s->cap : 4096;
                    while (c < n + take + 1) c *= 2;
                    char *nb = realloc(s->line, c);
                    if (!nb) return -1;
                    s->line = nb;
                    s->cap = c;
                }
                memcpy(s->line + n, start, take);
                n += take;
            }
        }
        s->cpos += take + (nl ? 1 : 0);
        if (nl) break;
    }
    if (!any) return 0;
    if (!s->line) {
        s->line = malloc(16);
        if (!s->line) return -1;
        s->cap = 16;
    }
    if (s->too_long) n = 0;
    s->line[n] = 0;
    if (n && s->line[n - 1] == '\r') s->line[--n] = 0;
    s->line_no++;
    if (s->line_no == 1 && n >= 3 && !memcmp(s->line, "\xEF\xBB\xBF", 3)) {
        memmove(s->line, s->line + 3, n - 2);
        n -= 3;
    }
    if (strlen(s->line) != n) s->has_nul = 1;
    *out = s->line;
    *out_len = s->last_len = n;
    return 1;
}

void xtts_meta_ls_close(linesrc *s) {
    if (s->gz) gzclose(s->gz);
    free(s->line);
    memset(s, 0, sizeof *s);
}

xtts_status xtts_meta_ls_open(linesrc *s, const char *path, const char *data, size_t len, xtts_error *err) {
    memset(s, 0, sizeof *s);
    if (data) { s->buf = data; s->len = len; return XTTS_OK; }
    if (!strcmp(path, "-")) {
        int fd = dup(0);
        s->gz = fd >= 0 ? gzdopen(fd, "rb") : NULL;
        if (!s->gz && fd >= 0) close(fd);
    } else {
        s->gz = gzopen(path, "rb");
    }
    if (!s->gz) return xtts_error_set(err, XTTS_EIO, "%s: cannot open: %s", path, strerror(errno ? errno : ENOENT));
    gzbuffer(s->gz, 1 << 17);
    return XTTS_OK;
}

char *xtts_meta_path_join(const char *a, const char *b) {
    if (b[0] == '/' || !*a) return strdup(b);
    size_t n = strlen(a) + strlen(b) + 2;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s%s%s", a, a[strlen(a) - 1] == '/' ? "" : "/", b);
    return p;
}

char *xtts_meta_abs_path(const char *p) {
    char *r = realpath(p, NULL);
    if (r) return r;
    if (p[0] == '/') return strdup(p);
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) strcpy(cwd, ".");
    return xtts_meta_path_join(cwd, p);
}

/* Absolute directory of a file path; "-" and a pipe named by /dev/fd/N, /dev/stdin or
 * <(...) (a directory under /dev or /proc, where no dataset lives) stand for the current
 * directory, as standard input does. */
char *xtts_meta_dir_of(const char *path) {
    if (!strcmp(path, "-")) return xtts_meta_abs_path(".");
    char *c = strdup(path);
    if (!c) return NULL;
    char *slash = strrchr(c, '/');
    if (slash == c) c[1] = 0;
    else if (slash) *slash = 0;
    else strcpy(c, ".");
    char *r = xtts_meta_abs_path(c);
    free(c);
    if (r && (!strcmp(r, "/dev") || !strncmp(r, "/dev/", 5) || !strncmp(r, "/proc/", 6))) {
        free(r);
        return xtts_meta_abs_path(".");
    }
    return r;
}

const char *xtts_meta_base_of(const char *path) {
    const char *b = strrchr(path, '/');
    return b ? b + 1 : path;
}

int xtts_meta_is_dir(const char *p) { struct stat st; return !stat(p, &st) && S_ISDIR(st.st_mode); }

int xtts_meta_is_file(const char *p) { struct stat st; return !stat(p, &st) && S_ISREG(st.st_mode); }

int xtts_meta_ends_with(const char *s, const char *suf) {
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && !strcmp(s + a - b, suf);
}

int xtts_meta_sub_is_dir(const char *dir, const char *name) {
    char *p = xtts_meta_path_join(dir, name);
    int r = p && xtts_meta_is_dir(p);
    free(p);
    return r;
}

void xtts_meta_sl_add(strlist *l, char *s) {
    if (!s) { l->failed = 1; return; }
    if (l->n == l->cap) {
        size_t c = l->cap ? l->cap * 2 : 256;
        char **nv = realloc(l->v, c * sizeof *nv);
        if (!nv) { free(s); l->failed = 1; return; }
        l->v = nv;
        l->cap = c;
    }
    l->v[l->n++] = s;
}

void xtts_meta_sl_free(strlist *l) {
    for (size_t i = 0; i < l->n; i++) free(l->v[i]);
    free(l->v);
    memset(l, 0, sizeof *l);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static size_t dir_slot(dev_t dev, ino_t ino, size_t cap) {
    uint64_t v[2] = {(uint64_t)dev, (uint64_t)ino};
    return (size_t)xtts_fnv1a64(XTTS_FNV64_INIT, v, sizeof v) & (cap - 1);
}

/* 1 when (dev, ino) was not seen before (and now is), 0 when it was, -1 out of memory. */
static int walker_enter(walker *w, dev_t dev, ino_t ino) {
    if (2 * (w->n_seen + 1) > w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 256;
        dir_key *nk = calloc(cap, sizeof *nk);
        if (!nk) return -1;
        for (size_t i = 0; i < w->cap; i++) {
            if (!w->seen[i].ino && !w->seen[i].dev) continue;
            size_t j = dir_slot(w->seen[i].dev, w->seen[i].ino, cap);
            while (nk[j].ino || nk[j].dev) j = (j + 1) & (cap - 1);
            nk[j] = w->seen[i];
        }
        free(w->seen);
        w->seen = nk;
        w->cap = cap;
    }
    size_t j = dir_slot(dev, ino, w->cap);
    for (; w->seen[j].ino || w->seen[j].dev; j = (j + 1) & (w->cap - 1))
        if (w->seen[j].dev == dev && w->seen[j].ino == ino) return 0;
    w->seen[j] = (dir_key){dev, ino};
    w->n_seen++;
    return 1;
}

/* A link to a directory, depth levels to walk below it, kept for later (p is taken). */
static void walker_defer(walker *w, char *p, int depth) {
    size_t n = w->links.n;
    xtts_meta_sl_add(&w->links, p);
    if (w->links.n == n) { w->out->failed = 1; return; }
    int *nd = realloc(w->link_depth, w->links.cap * sizeof *nd);
    if (!nd) { w->out->failed = 1; return; }
    w->link_depth = nd;
    nd[n] = depth;
}

/* Files under dir (depth levels down at most) whose name ends with one of the suffixes,
 * in sorted path order. Hidden entries are skipped; links to directories are deferred. */
static void walk_dir(walker *w, const char *dir, int depth) {
    strlist *out = w->out;
    if (out->failed || out->n >= XTTS_META_MAX_FILES) return;
    DIR *d = opendir(dir);
    if (!d) return;
    strlist names = {0};
    struct dirent *de;
    while ((de = readdir(d)) && names.n < XTTS_META_MAX_FILES) {
        if (de->d_name[0] == '.') continue;
        xtts_meta_sl_add(&names, strdup(de->d_name));
    }
    closedir(d);
    if (names.n) qsort(names.v, names.n, sizeof *names.v, cmp_str);
    for (size_t i = 0; i < names.n && !out->failed; i++) {
        char *p = xtts_meta_path_join(dir, names.v[i]);
        if (!p) { out->failed = 1; break; }
        struct stat st, lst;
        if (stat(p, &st) || lstat(p, &lst)) { free(p); continue; }
        if (S_ISDIR(st.st_mode)) {
            if (depth > 0 && S_ISLNK(lst.st_mode)) { walker_defer(w, p, depth - 1); continue; }
            int fresh = depth > 0 ? walker_enter(w, st.st_dev, st.st_ino) : 0;
            if (fresh < 0) out->failed = 1;
            if (fresh > 0) walk_dir(w, p, depth - 1);
            free(p);
            continue;
        }
        int want = 0;
        for (const char *const *s = w->suffixes; *s && !want; s++) want = xtts_meta_ends_with(names.v[i], *s);
        if (want && S_ISREG(st.st_mode)) xtts_meta_sl_add(out, p);
        else free(p);
    }
    xtts_meta_sl_free(&names);
}

/* walk_dir from dir (which counts as entered), then the links to directories it met, in
 * the order met, each unless its directory was read already. Returns the number of links
 * skipped; the first one's path in first_skip (may be NULL). */
size_t xtts_meta_walk(const char *dir, int depth, const char *const *suffixes, strlist *out, char *first_skip,
                   size_t skip_cap) {
    walker w = {.suffixes = suffixes, .out = out};
    struct stat st;
    if (stat(dir, &st) == 0 && walker_enter(&w, st.st_dev, st.st_ino) < 0) out->failed = 1;
    walk_dir(&w, dir, depth);
    for (; w.links_done < w.links.n && !out->failed; w.links_done++) {
        const char *p = w.links.v[w.links_done];
        int fresh = stat(p, &st) == 0 ? walker_enter(&w, st.st_dev, st.st_ino) : 1;
        if (fresh < 0) out->failed = 1;
        if (fresh > 0) walk_dir(&w, p, w.link_depth[w.links_done]);
        if (fresh == 0 && w.skipped++ == 0) snprintf(w.first_skip, sizeof w.first_skip, "%s", p);
    }
    free(w.seen);
    free(w.link_depth);
    xtts_meta_sl_free(&w.links);
    if (first_skip && skip_cap) snprintf(first_skip, skip_cap, "%s", w.first_skip);
    return w.skipped;
}

/* Whether dir/name is a file. */
int xtts_meta_sub_is_file(const char *dir, const char *name) {
    char *p = xtts_meta_path_join(dir, name);
    int r = p && xtts_meta_is_file(p);
    free(p);
    return r;
}
