/* exclude.c — the ids a build leaves out (exclude.h): a report's TSV or a plain list, into an
 * exact set of ids (open addressing over the ids' hashes, the ids themselves compared). */
#include "cache/store/exclude.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/quality.h"

struct xtts_exclude {
    char **slots;     /* cap entries, NULL when free */
    uint64_t *hashes; /* the slots' id hashes */
    size_t cap, n;
};

static int grow(xtts_exclude *x) {
    size_t nc = x->cap ? 2 * x->cap : 1024;
    char **ns = calloc(nc, sizeof *ns);
    uint64_t *nh = calloc(nc, sizeof *nh);
    if (!ns || !nh) {
        free(ns);
        free(nh);
        return -1;
    }
    for (size_t i = 0; i < x->cap; i++) {
        if (!x->slots[i]) continue;
        size_t j = x->hashes[i] & (nc - 1);
        while (ns[j]) j = (j + 1) & (nc - 1);
        ns[j] = x->slots[i];
        nh[j] = x->hashes[i];
    }
    free(x->slots);
    free(x->hashes);
    x->slots = ns;
    x->hashes = nh;
    x->cap = nc;
    return 0;
}

/* 0 added or present, -1 out of memory. */
static int add(xtts_exclude *x, const char *id, size_t len) {
    if ((x->n + 1) * 2 > x->cap && grow(x)) return -1;
    uint64_t h = xtts_id_hash(id, len);
    size_t j = h & (x->cap - 1);
    for (; x->slots[j]; j = (j + 1) & (x->cap - 1))
        if (x->hashes[j] == h && strlen(x->slots[j]) == len && !memcmp(x->slots[j], id, len)) return 0;
    if (!(x->slots[j] = strndup(id, len))) return -1;
    x->hashes[j] = h;
    x->n++;
    return 0;
}

int xtts_exclude_has(const xtts_exclude *x, const char *id) {
    if (!x || !x->n) return 0;
    size_t len = strlen(id);
    uint64_t h = xtts_id_hash(id, len);
    for (size_t j = h & (x->cap - 1); x->slots[j]; j = (j + 1) & (x->cap - 1))
        if (x->hashes[j] == h && !strcmp(x->slots[j], id)) return 1;
    return 0;
}

size_t xtts_exclude_count(const xtts_exclude *x) { return x ? x->n : 0; }

void xtts_exclude_free(xtts_exclude *x) {
    if (!x) return;
    for (size_t i = 0; i < x->cap; i++) free(x->slots[i]);
    free(x->slots);
    free(x->hashes);
    free(x);
}

static void vocabulary(char *out, size_t cap) {
    size_t n = 0;
    out[0] = '\0';
    for (int f = 0; f < XTTS_QUALITY_N_FLAGS && n + 1 < cap; f++)
        n += (size_t)snprintf(out + n, cap - n, "%s%s", f ? " " : "", xtts_quality_flag_name(f));
}

xtts_status xtts_exclude_parse_flags(const char *list, uint32_t *mask, xtts_error *err) {
    *mask = 0;
    const char *p = list;
    for (;;) {
        const char *c = strchr(p, ',');
        size_t n = c ? (size_t)(c - p) : strlen(p);
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)(n < sizeof name ? n : sizeof name - 1), p);
        int f = n && n < sizeof name ? xtts_quality_flag_parse(name) : -1;
        if (f < 0) {
            char voc[400];
            vocabulary(voc, sizeof voc);
            return xtts_error_set(err, XTTS_EUSAGE, "--exclude-flags %s: '%s' is not a flag (flags: %s)", list, name, voc);
        }
        *mask |= 1u << f;
        if (!c) break;
        p = c + 1;
    }
    return XTTS_OK;
}

/* One line of a report's TSV: its id when one of its flags is in mask. *take = 0 otherwise. */
static xtts_status tsv_line(char *line, const char *path, size_t lineno, uint32_t mask, int *take, xtts_error *err) {
    *take = 0;
    char *tab = strchr(line, '\t');
    if (!tab) return xtts_error_set(err, XTTS_EINPUT, "%s:%zu: no flags field (a report's lines are id<TAB>flags<TAB>...)", path, lineno);
    *tab = '\0';
    char *flags = tab + 1, *end = strchr(flags, '\t');
    if (end) *end = '\0';
    if (!strcmp(flags, "-")) return XTTS_OK;
    for (char *save = NULL, *tok = strtok_r(flags, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int f = xtts_quality_flag_parse(tok);
        if (f < 0) return xtts_error_set(err, XTTS_EINPUT, "%s:%zu: record '%s': unknown flag '%s'", path, lineno, line, tok);
        if (mask & (1u << f)) *take = 1;
    }
    return XTTS_OK;
}

/* The longest line read: a report's line is an id (at most XTTS_ID_MAX_BYTES) and its metrics. */
#define LINE_MAX_BYTES (64 * 1024)

/* One line of f into buf (cap bytes), without its end (\n, \r\n); *n its length. 1 a line, 0
 * the end of the file, -1 a line longer than cap - 1 (read no further: an endless line stops
 * here, in bounded memory). */
static int next_line(FILE *f, char *buf, size_t cap, size_t *n) {
    int c;
    *n = 0;
    while ((c = getc_unlocked(f)) != EOF && c != '\n') {
        if (*n + 1 >= cap) return -1;
        buf[(*n)++] = (char)c;
    }
    if (c == EOF && *n == 0) return 0;
    while (*n && buf[*n - 1] == '\r') (*n)--;
    buf[*n] = '\0';
    return 1;
}

/* The lines of f into x: a report's TSV (its header first) or a plain list, one id a line; a
 * byte-order mark before the first line, CRLF ends and blank lines are taken as they come; a
 * NUL byte, a tab in a plain list's id and a line past LINE_MAX_BYTES are refused by line. */
static xtts_status read_lines(FILE *f, const char *path, uint32_t mask, xtts_exclude *x, xtts_error *err) {
    char *buf = malloc(LINE_MAX_BYTES), *line;
    if (!buf) return xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", path);
    size_t n, lineno = 0;
    int tsv = -1, got;
    xtts_status st = XTTS_OK;
    while (!st && (got = next_line(f, buf, LINE_MAX_BYTES, &n)) != 0) {
        lineno++;
        if (got < 0) {
            st = xtts_error_set(err, XTTS_EINPUT, "%s:%zu: a line longer than %d bytes (not an id list or a report's TSV)",
                                path, lineno, LINE_MAX_BYTES - 1);
            break;
        }
        line = buf;
        if (lineno == 1 && n >= 3 && !memcmp(line, "\xEF\xBB\xBF", 3)) line += 3, n -= 3;
        if (strlen(line) != n) { st = xtts_error_set(err, XTTS_EINPUT, "%s:%zu: a NUL byte", path, lineno); break; }
        if (tsv < 0) {
            tsv = !strncmp(line, "id\tflags\t", 9) || !strcmp(line, "id\tflags");
            if (tsv) continue;
        }
        int take = 1;
        if (tsv) st = tsv_line(line, path, lineno, mask, &take, err);
        else if (strchr(line, '\t'))
            st = xtts_error_set(err, XTTS_EINPUT, "%s:%zu: a tab in an id (a plain list holds one id a line; a report's TSV "
                                "starts with its header line id<TAB>flags)", path, lineno);
        if (st || !take || !*line) continue;
        if (strlen(line) > XTTS_ID_MAX_BYTES)
            st = xtts_error_set(err, XTTS_EINPUT, "%s:%zu: an id of %zu bytes (ids are at most %d)", path, lineno, strlen(line), XTTS_ID_MAX_BYTES);
        else if (add(x, line, strlen(line)))
            st = xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", path);
    }
    if (!st && ferror(f)) st = xtts_error_set(err, XTTS_EIO, "%s: read error: %s", path, strerror(errno));
    free(buf);
    return st;
}

xtts_status xtts_exclude_read(FILE *f, const char *name, uint32_t flags, xtts_exclude **out, xtts_error *err) {
    *out = NULL;
    xtts_exclude *x = calloc(1, sizeof *x);
    if (!x) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    xtts_status st = read_lines(f, name, flags, x, err);
    if (st) {
        xtts_exclude_free(x);
        return st;
    }
    *out = x;
    return XTTS_OK;
}

xtts_status xtts_exclude_load(const char *path, uint32_t flags, xtts_exclude **out, xtts_error *err) {
    *out = NULL;
    int std = !strcmp(path, "-");
    FILE *f = std ? stdin : fopen(path, "r");
    if (!f) {
        xtts_status code = errno == ENOENT ? XTTS_ENOTFOUND : XTTS_EIO;
        return xtts_error_set(err, code, "%s: cannot open: %s", path, strerror(errno));
    }
    xtts_status st = xtts_exclude_read(f, path, flags, out, err);
    if (!std) fclose(f);
    return st;
}
