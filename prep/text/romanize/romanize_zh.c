/* romanize_zh.c — Chinese as XTTS romanizes it: pypinyin.pinyin(text, style=Style.TONE3,
 * heteronym=False, neutral_tone_with_five=True), first reading of each item, joined with no
 * separator. Like pypinyin, the text is cut into runs of Han characters (pypinyin's RE_HANS
 * ranges) and runs of anything else; other runs are copied unchanged; Han runs are cut into
 * words by pypinyin's forward maximum matching over its phrase dictionary (mmseg with
 * no_non_phrases), a word found there takes the phrase's readings, any other character its
 * default reading; a Han character with no reading is copied. The tables
 * (romanize_zh_data.c) are generated from pypinyin's own data by scripts/dev/make-pinyin-table.py.
 * The lookup structure is built once, on first use, and then only read (thread-safe). */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "prep/text/romanize/romanize_internal.h"

extern const size_t xtts_zh_nsyl;
extern const char *const xtts_zh_syl[];
extern const size_t xtts_zh_nchar;
extern const uint32_t xtts_zh_cp[];
extern const uint16_t xtts_zh_cpsyl[];
extern const char xtts_zh_phrases[];

/* One prefix of a phrase (or a whole phrase): bytes at xtts_zh_phrases + off. */
typedef struct {
    uint32_t off, hash;
    uint32_t rd;      /* offset of the phrase's own readings, or UINT32_MAX: per character */
    uint16_t len;     /* 0: empty slot */
    uint8_t phrase;   /* 1: a whole phrase, not only a prefix */
} zh_slot;

static zh_slot *g_tab;
static size_t g_mask;
static int g_ok;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static uint32_t fnv(const unsigned char *s, size_t n) {
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 16777619u;
    return h;
}

static zh_slot *find(const unsigned char *s, size_t n, uint32_t h) {
    for (size_t i = h & g_mask;; i = (i + 1) & g_mask) {
        zh_slot *e = &g_tab[i];
        if (!e->len) return e;
        if (e->hash == h && e->len == n && !memcmp(xtts_zh_phrases + e->off, s, n)) return e;
    }
}

static void build(void) {
    const char *d = xtts_zh_phrases;
    size_t nkeys = 0;
    for (const char *p = d; *p; p++) if ((unsigned char)*p >= 0xC0 || *p == '\n') nkeys++;
    size_t cap = 1024;
    while (cap < 2 * nkeys) cap *= 2;
    g_tab = calloc(cap, sizeof *g_tab);
    if (!g_tab) return;
    g_mask = cap - 1;
    for (const char *p = d; *p;) {
        const char *e = p;
        while (*e != '\n' && *e != '\t') e++;
        const char *nl = strchr(e, '\n');
        uint32_t rd = *e == '\t' ? (uint32_t)(e + 1 - d) : UINT32_MAX;
        const unsigned char *u = (const unsigned char *)p;
        size_t n = (size_t)(e - p);
        for (size_t i = 0; i < n;) {
            size_t adv;
            xtts_rz_utf8(u, i, n, &adv);
            i += adv;
            uint32_t h = fnv(u, i);
            zh_slot *s = find(u, i, h);
            if (!s->len) { s->off = (uint32_t)(p - d); s->len = (uint16_t)i; s->hash = h; s->rd = UINT32_MAX; }
            if (i == n) { s->phrase = 1; s->rd = rd; }
        }
        p = nl + 1;
    }
    g_ok = 1;
}

/* pypinyin's RE_HANS (wide build). */
static int is_han(uint32_t c) {
    return c == 0x3007 || (c >= 0xE815 && c <= 0xE864) || c == 0xFA18 || (c >= 0x3400 && c <= 0x4DBF) ||
           (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x20000 && c <= 0x2A6DF) ||
           (c >= 0x2A703 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81D) || (c >= 0x2B825 && c <= 0x2BF6E) ||
           (c >= 0x2C029 && c <= 0x2CE93) || c == 0x2D016 || (c >= 0x2D11B && c <= 0x2EBD9) ||
           (c >= 0x2F80A && c <= 0x2FA1F) || (c >= 0x30000 && c <= 0x3134A) || c == 0x30EDD || c == 0x30EDE ||
           (c >= 0x31350 && c <= 0x32389);
}

static const char *char_reading(uint32_t c) {
    size_t lo = 0, hi = xtts_zh_nchar;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (xtts_zh_cp[mid] < c) lo = mid + 1; else hi = mid;
    }
    return lo < xtts_zh_nchar && xtts_zh_cp[lo] == c ? xtts_zh_syl[xtts_zh_cpsyl[lo]] : NULL;
}

/* Han characters of one run: byte offsets (n + 1 of them) and code points. */
typedef struct { const char *text; const size_t *off; const uint32_t *cp; } zh_run;

static void put_chars(const zh_run *r, size_t a, size_t b, xtts_sb *out) {
    for (size_t k = a; k < b; k++) {
        const char *py = char_reading(r->cp[k]);
        if (py) xtts_sb_puts(out, py);
        else xtts_sb_putn(out, r->text + r->off[k], r->off[k + 1] - r->off[k]);
    }
}

static void put_word(const zh_run *r, size_t a, size_t b, const zh_slot *ph, xtts_sb *out) {
    if (!ph || ph->rd == UINT32_MAX) { put_chars(r, a, b, out); return; }
    for (const char *p = xtts_zh_phrases + ph->rd; *p != '\n'; p++)
        if (*p != ' ') xtts_sb_putc(out, *p);
}

static void run_han(const zh_run *r, size_t n, xtts_sb *out) {
    size_t pos = 0;
    const unsigned char *u = (const unsigned char *)r->text;
    while (pos < n) {
        size_t best = 0;
        const zh_slot *best_e = NULL;
        int all_prefix = 1;
        for (size_t j = pos; j < n; j++) {
            size_t len = r->off[j + 1] - r->off[pos];
            const unsigned char *w = u + r->off[pos];
            const zh_slot *e = len <= 0xFFFF ? find(w, len, fnv(w, len)) : NULL;
            if (!e || !e->len) { all_prefix = 0; break; }
            if (e->phrase) { best = j + 1; best_e = e; }
        }
        if (best) { put_word(r, pos, best, best_e, out); pos = best; }
        else if (!all_prefix) { put_chars(r, pos, pos + 1, out); pos++; }
        else { put_chars(r, pos, n, out); pos = n; }
    }
}

int xtts_romanize_zh(const char *text, size_t len, xtts_sb *out) {
    pthread_once(&g_once, build);
    if (!g_ok) return -1;
    const unsigned char *s = (const unsigned char *)text;
    size_t *off = malloc((len + 1) * sizeof *off);
    uint32_t *cp = malloc((len + 1) * sizeof *cp);
    if (!off || !cp) { free(off); free(cp); out->failed = 1; return 0; }
    for (size_t i = 0; i < len;) {
        size_t adv, n = 0;
        uint32_t c = xtts_rz_utf8(s, i, len, &adv);
        if (!is_han(c)) {
            size_t j = i;
            while (j < len) {
                c = xtts_rz_utf8(s, j, len, &adv);
                if (is_han(c)) break;
                j += adv;
            }
            xtts_sb_putn(out, text + i, j - i);
            i = j;
            continue;
        }
        while (i < len) {
            c = xtts_rz_utf8(s, i, len, &adv);
            if (!is_han(c)) break;
            off[n] = i;
            cp[n++] = c;
            i += adv;
        }
        off[n] = i;
        zh_run r = {text, off, cp};
        run_han(&r, n, out);
    }
    free(off);
    free(cp);
    return 0;
}
