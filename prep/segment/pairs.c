/* pairs.c — the --pairs list: AUDIO<TAB>TEXT[<TAB>LANG] a line (segment.h). */
#include <stdlib.h>
#include <string.h>

#include "prep/segment/segment.h"

void xtts_segment_pairs_free(xtts_segment_pair *pairs, size_t n) {
    if (!pairs) return;
    for (size_t i = 0; i < n; i++) {
        free(pairs[i].audio);
        free(pairs[i].text);
    }
    free(pairs);
}

static char *dup_n(const char *s, size_t n) {
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = 0;
    }
    return d;
}

/* Fields of one line (without its end) into p; XTTS_EINPUT with the reason in why. */
static xtts_status parse_line(const char *s, size_t n, xtts_segment_pair *p, const char **why) {
    const char *f[4];
    size_t fl[4], nf = 0;
    const char *b = s;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && s[i] != '\t') continue;
        if (nf == 4) { *why = "more than three fields (AUDIO<TAB>TEXT[<TAB>LANG])"; return XTTS_EINPUT; }
        f[nf] = b;
        fl[nf++] = (size_t)(s + i - b);
        b = s + i + 1;
    }
    if (nf < 2) { *why = "needs AUDIO<TAB>TEXT[<TAB>LANG] (no tab)"; return XTTS_EINPUT; }
    if (nf == 4) { *why = "more than three fields (AUDIO<TAB>TEXT[<TAB>LANG])"; return XTTS_EINPUT; }
    if (!fl[0] || !fl[1]) { *why = "an empty AUDIO or TEXT path"; return XTTS_EINPUT; }
    if (nf == 3 && fl[2]) {
        if (fl[2] >= sizeof p->lang) { *why = "the language tag is too long"; return XTTS_EINPUT; }
        memcpy(p->lang, f[2], fl[2]);
        p->lang[fl[2]] = 0;
        if (!xtts_lang_tag_normalize(p->lang)) { *why = "not a language tag (e.g. en, de, pt-br)"; return XTTS_EINPUT; }
    }
    p->audio = dup_n(f[0], fl[0]);
    p->text = dup_n(f[1], fl[1]);
    if (!p->audio || !p->text) return XTTS_ENOMEM;
    return XTTS_OK;
}

xtts_status xtts_segment_pairs_parse(const char *data, size_t len, const char *name, xtts_segment_pair **pairs,
                                     size_t *n, xtts_error *err) {
    *pairs = NULL;
    *n = 0;
    size_t cap = 0;
    int line = 0;
    size_t start = len >= 3 && !memcmp(data, "\xef\xbb\xbf", 3) ? 3 : 0; /* a UTF-8 BOM, as the text's reader skips one */
    for (size_t i = start; i < len;) {
        size_t e = i;
        while (e < len && data[e] != '\n') e++;
        size_t l = e - i;
        line++;
        if (l && data[i + l - 1] == '\r') l--;
        const char *s = data + i;
        i = e + 1;
        if (!l || s[0] == '#') continue;
        if (memchr(s, 0, l)) {
            xtts_segment_pairs_free(*pairs, *n);
            *pairs = NULL, *n = 0;
            return xtts_error_set(err, XTTS_EINPUT, "%s:%d: a NUL byte: not a text list", name, line);
        }
        if (*n == cap) {
            cap = cap ? 2 * cap : 16;
            xtts_segment_pair *np = realloc(*pairs, cap * sizeof *np);
            if (!np) goto oom;
            *pairs = np;
        }
        xtts_segment_pair *p = &(*pairs)[*n];
        memset(p, 0, sizeof *p);
        p->line = line;
        const char *why = "";
        xtts_status st = parse_line(s, l, p, &why);
        if (st == XTTS_ENOMEM) { (*n)++; goto oom; }
        if (st) {
            xtts_segment_pairs_free(*pairs, *n);
            *pairs = NULL, *n = 0;
            return xtts_error_set(err, XTTS_EINPUT, "%s:%d: %s", name, line, why);
        }
        (*n)++;
    }
    if (!*n) return xtts_error_set(err, XTTS_EINPUT, "%s: no pairs (AUDIO<TAB>TEXT lines)", name);
    return XTTS_OK;
oom:
    xtts_segment_pairs_free(*pairs, *n);
    *pairs = NULL, *n = 0;
    return xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", name);
}
