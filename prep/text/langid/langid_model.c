/* langid_model.c — the character n-gram statistics (see langid_model.h). */
#include "prep/text/langid/langid_model.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

/* The table, compiled in. The path is relative to the directory make runs in (the
 * repository root). */
__asm__(".section .rodata\n"
        ".balign 16\n"
        ".global xtts_langid_ngrams_start\n"
        "xtts_langid_ngrams_start:\n"
        ".incbin \"prep/text/langid/langid_ngrams.bin\"\n"
        ".global xtts_langid_ngrams_end\n"
        "xtts_langid_ngrams_end:\n"
        ".byte 0\n"
        ".previous\n");
extern const uint8_t xtts_langid_ngrams_start[], xtts_langid_ngrams_end[];

#define NG_MAXBYTES 20 /* 5 code points of at most 4 bytes */
#define NG_ORDERS 5
#define NG_ABSENT 255
#define NG_SCALE 10.0 /* cost = -ln p * NG_SCALE */

typedef struct {
    uint8_t len;
    char key[NG_MAXBYTES];
    uint8_t cost[XTTS_N_LANGS]; /* a language that does not list the n-gram: its floor */
} ng_entry;

struct xtts_langid_model {
    uint8_t floor[XTTS_N_LANGS][NG_ORDERS];
    ng_entry *entries;
    size_t n_entries;
    uint64_t *slots; /* high 32 bits of the key's hash << 32 | entry index + 1; 0 = empty */
    size_t n_slots;  /* power of two */
    uint64_t serial; /* tells the tables apart in the word cache (never reused) */
};

/* FNV-1a 64 (xtts_fnv1a64), inline: it runs for every byte of every n-gram looked up */
static inline uint64_t fnv_step(uint64_t h, const char *k, size_t n) {
    for (size_t i = 0; i < n; i++) {
        h ^= (uint8_t)k[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

static size_t ng_hash(const char *k, size_t n) { return (size_t)fnv_step(XTTS_FNV64_INIT, k, n); }

static ng_entry *ng_find_h(const xtts_langid_model *m, const char *k, size_t n, size_t h) {
    size_t i = h & (m->n_slots - 1);
    uint32_t tag = (uint32_t)((uint64_t)h >> 32);
    for (uint64_t sl; (sl = m->slots[i]) != 0; i = (i + 1) & (m->n_slots - 1)) {
        if ((uint32_t)(sl >> 32) != tag) continue; /* decided without touching the entry */
        ng_entry *e = &m->entries[(uint32_t)sl - 1];
        if (e->len == n && !memcmp(e->key, k, n)) return e;
    }
    return NULL;
}

void xtts_langid_model_delete(xtts_langid_model *m) {
    if (!m) return;
    free(m->entries);
    free(m->slots);
    free(m);
}

static uint32_t rd32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

xtts_status xtts_langid_model_parse(const uint8_t *data, size_t len, const char *name, xtts_langid_model **out,
                                    xtts_error *err) {
    *out = NULL;
    size_t hdr = 8 + 8 + XTTS_N_LANGS * NG_ORDERS;
    if (len < hdr || memcmp(data, "XTLIDNG1", 8))
        return xtts_error_set(err, XTTS_EINPUT, "%s: not a language n-gram table (magic XTLIDNG1)", name);
    if (rd32(data + 8) != XTTS_N_LANGS || rd32(data + 12) != NG_ORDERS)
        return xtts_error_set(err, XTTS_EINPUT, "%s: table is for %u languages and %u orders, want %d and %d", name,
                              rd32(data + 8), rd32(data + 12), XTTS_N_LANGS, NG_ORDERS);
    /* first pass: validate and count */
    size_t total = 0, pos = hdr;
    for (int l = 0; l < XTTS_N_LANGS; l++) {
        if (len - pos < 4) return xtts_error_set(err, XTTS_EINPUT, "%s: truncated at language %d", name, l);
        uint32_t n = rd32(data + pos);
        pos += 4;
        for (uint32_t i = 0; i < n; i++) {
            if (pos >= len) return xtts_error_set(err, XTTS_EINPUT, "%s: truncated in language %d entry %u", name, l, i);
            size_t k = data[pos];
            if (k < 1 || k > NG_MAXBYTES || len - pos - 1 < k + 1)
                return xtts_error_set(err, XTTS_EINPUT, "%s: language %d entry %u: bad length %zu at byte %zu", name, l, i, k, pos);
            if (data[pos + 1 + k] >= NG_ABSENT)
                return xtts_error_set(err, XTTS_EINPUT, "%s: language %d entry %u: cost out of range at byte %zu", name, l, i, pos);
            pos += k + 2;
        }
        total += n;
    }
    if (pos != len) return xtts_error_set(err, XTTS_EINPUT, "%s: %zu bytes after the last entry", name, len - pos);
    for (int l = 0; l < XTTS_N_LANGS; l++)
        for (int o = 0; o < NG_ORDERS; o++)
            if (data[16 + l * NG_ORDERS + o] >= NG_ABSENT)
                return xtts_error_set(err, XTTS_EINPUT, "%s: floor of language %d order %d out of range", name, l, o + 1);
    xtts_langid_model *m = calloc(1, sizeof *m);
    if (!m) return xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", name);
    memcpy(m->floor, data + 16, sizeof m->floor);
    static uint64_t next_serial;
    m->serial = __atomic_add_fetch(&next_serial, 1, __ATOMIC_RELAXED);
    m->n_slots = 16;
    while (m->n_slots < total * 2) m->n_slots *= 2;
    m->entries = malloc((total ? total : 1) * sizeof *m->entries);
    m->slots = calloc(m->n_slots, sizeof *m->slots);
    if (!m->entries || !m->slots) {
        xtts_langid_model_delete(m);
        return xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", name);
    }
    pos = hdr;
    for (int l = 0; l < XTTS_N_LANGS; l++) {
        uint32_t n = rd32(data + pos);
        pos += 4;
        for (uint32_t i = 0; i < n; i++) {
            size_t k = data[pos];
            const char *key = (const char *)data + pos + 1;
            size_t h = ng_hash(key, k);
            ng_entry *e = ng_find_h(m, key, k, h);
            if (!e) {
                size_t s = h & (m->n_slots - 1);
                while (m->slots[s]) s = (s + 1) & (m->n_slots - 1);
                e = &m->entries[m->n_entries++];
                m->slots[s] = ((uint64_t)h >> 32) << 32 | (uint32_t)m->n_entries;
                e->len = (uint8_t)k;
                memcpy(e->key, key, k);
                memset(e->cost, NG_ABSENT, sizeof e->cost);
            }
            e->cost[l] = data[pos + 1 + k];
            pos += k + 2;
        }
    }
    /* resolve the absent costs to the floors of the n-gram's order (its code points) */
    uint8_t fl[NG_ORDERS][XTTS_N_LANGS];
    for (int o = 0; o < NG_ORDERS; o++)
        for (int l = 0; l < XTTS_N_LANGS; l++) fl[o][l] = m->floor[l][o];
    for (size_t i = 0; i < m->n_entries; i++) {
        ng_entry *e = &m->entries[i];
        size_t order = 0;
        for (size_t b = 0; b < e->len; b++) order += ((uint8_t)e->key[b] & 0xC0) != 0x80;
        if (order < 1) order = 1;
        if (order > NG_ORDERS) order = NG_ORDERS;
        const uint8_t *f = fl[order - 1];
        for (int l = 0; l < XTTS_N_LANGS; l++) e->cost[l] = e->cost[l] == NG_ABSENT ? f[l] : e->cost[l];
    }
    *out = m;
    return XTTS_OK;
}

static xtts_langid_model *builtin;
static pthread_once_t builtin_once = PTHREAD_ONCE_INIT;

static void builtin_load(void) {
    xtts_error e;
    if (xtts_langid_model_parse(xtts_langid_ngrams_start, (size_t)(xtts_langid_ngrams_end - xtts_langid_ngrams_start),
                                "prep/text/langid/langid_ngrams.bin", &builtin, &e))
        builtin = NULL;
}

const xtts_langid_model *xtts_langid_model_builtin(void) {
    pthread_once(&builtin_once, builtin_load);
    return builtin;
}

static int is_letter(int32_t c) {
    utf8proc_category_t cat = utf8proc_category(c);
    return (cat >= UTF8PROC_CATEGORY_LU && cat <= UTF8PROC_CATEGORY_LO) ||
           (cat >= UTF8PROC_CATEGORY_MN && cat <= UTF8PROC_CATEGORY_ME);
}

/* Add the costs of the n-grams of one padded word (off: its code points' byte offsets).
 * The hash of an n-gram extends that of its (n-1)-gram prefix (FNV-1a is incremental); an
 * n-gram no language lists ends the run of longer ones starting at the same place, whose
 * prefix it is (they are rarer still, and almost never listed either). */
static size_t score_word(const xtts_langid_model *m, const char *buf, const size_t *off, size_t n_cp, int64_t cost[XTTS_N_LANGS]) {
    size_t known = 0;
    for (size_t i = 0; i < n_cp; i++) {
        uint64_t h = XTTS_FNV64_INIT;
        for (size_t n = 1; n <= NG_ORDERS && i + n <= n_cp; n++) {
            h = fnv_step(h, buf + off[i + n - 1], off[i + n] - off[i + n - 1]);
            if (n == 1 && buf[off[i]] == ' ') continue;
            size_t b = off[i + n] - off[i];
            if (b > NG_MAXBYTES) break;
            const ng_entry *e = ng_find_h(m, buf + off[i], b, (size_t)h);
            if (!e) break;
            known++;
            for (int l = 0; l < XTTS_N_LANGS; l++) cost[l] += e->cost[l];
        }
    }
    return known;
}

/* ---- the word cache ------------------------------------------------------------------- */

/* A word's n-grams do not depend on its neighbours, so the sum of their costs is kept per
 * word, in a small direct-mapped cache per thread: running text repeats its words (in
 * English prose the 1,000 most frequent words are about three quarters of all), and a hit
 * costs one comparison and one addition per language instead of some twenty look-ups.
 * Words of up to WC_KEY bytes are kept; a word's n-gram costs then sum to at most
 * 5 * (16 + 2) * 254 = 22,860, which fits 16 bits. The cache only memoizes a function of
 * the word and the table (it is keyed by the table's serial number), so scores are the
 * same with it or without it, in any thread, in any order. */
#define WC_KEY 16
#define WC_SLOTS 4096 /* 64 bytes each: 256 KiB per thread */

typedef struct {
    uint64_t k0, k1;              /* the word's bytes, zero-padded */
    uint8_t len, known;           /* len 0: empty */
    uint16_t cost[XTTS_N_LANGS];
} wc_entry;

typedef struct {
    uint64_t serial;
    wc_entry e[WC_SLOTS];
} word_cache;

static pthread_key_t wc_key;
static int wc_key_ok;
static pthread_once_t wc_once = PTHREAD_ONCE_INIT;

static void wc_init(void) { wc_key_ok = pthread_key_create(&wc_key, free) == 0; }

static word_cache *wc_get(const xtts_langid_model *m) {
    pthread_once(&wc_once, wc_init);
    if (!wc_key_ok) return NULL;
    word_cache *c = pthread_getspecific(wc_key);
    if (!c) {
        c = calloc(1, sizeof *c);
        if (!c || pthread_setspecific(wc_key, c)) { free(c); return NULL; }
    }
    if (c->serial != m->serial) {
        memset(c->e, 0, sizeof c->e);
        c->serial = m->serial;
    }
    return c;
}

/* The padded word in buf (" " + word + " ", code points at off[0..n_cp]): its costs added
 * to cost, through the cache when it has one. */
static size_t score_word_cached(const xtts_langid_model *m, word_cache *wc, const char *buf, size_t bl, const size_t *off,
                                size_t n_cp, int64_t cost[XTTS_N_LANGS]) {
    size_t wl = bl - 2;
    if (!wc || wl > WC_KEY) return score_word(m, buf, off, n_cp, cost);
    uint64_t k[2] = {0, 0};
    memcpy(k, buf + 1, wl);
    uint64_t h = (k[0] ^ (k[1] * 0x9E3779B97F4A7C15ULL) ^ wl) * 0xff51afd7ed558ccdULL;
    wc_entry *e = &wc->e[(h >> 40) & (WC_SLOTS - 1)];
    if (e->len != wl || e->k0 != k[0] || e->k1 != k[1]) {
        int64_t c[XTTS_N_LANGS] = {0};
        size_t known = score_word(m, buf, off, n_cp, c);
        e->k0 = k[0];
        e->k1 = k[1];
        e->len = (uint8_t)wl;
        e->known = (uint8_t)known;
        for (int l = 0; l < XTTS_N_LANGS; l++) e->cost[l] = (uint16_t)c[l];
    }
    for (int l = 0; l < XTTS_N_LANGS; l++) cost[l] += e->cost[l];
    return e->known;
}

/* 1 when NFC leaves the text as it is because all its code points are below U+0300 (valid
 * UTF-8 of one or two bytes): ASCII and most Latin-script text. No character below U+0300
 * decomposes, and none combines with what precedes it (the combining marks start at
 * U+0300). */
static int nfc_as_is(const char *text, size_t n) {
    const uint8_t *s = (const uint8_t *)text;
    size_t i = 0;
    while (i < n) {
        if (i + 8 <= n) {
            uint64_t w;
            memcpy(&w, s + i, 8);
            if (!(w & 0x8080808080808080ULL)) { i += 8; continue; }
        }
        if (s[i] < 0x80) i++;
        else if (s[i] >= 0xC2 && s[i] <= 0xCB && i + 1 < n && (s[i + 1] & 0xC0) == 0x80) i += 2;
        else return 0;
    }
    return 1;
}

size_t xtts_langid_model_score(const xtts_langid_model *m, const char *text, size_t len, double ll[XTTS_N_LANGS]) {
    for (int l = 0; l < XTTS_N_LANGS; l++) ll[l] = 0;
    if (!m || !len) return 0;
    uint8_t *nfc = NULL;
    const uint8_t *t = (const uint8_t *)text;
    utf8proc_ssize_t r = (utf8proc_ssize_t)len;
    if (!nfc_as_is(text, len)) {
        r = utf8proc_map((const uint8_t *)text, (utf8proc_ssize_t)len, &nfc, UTF8PROC_STABLE | UTF8PROC_COMPOSE);
        if (r < 0) return 0;
        t = nfc;
    }
    word_cache *wc = wc_get(m);
    /* one word at a time: " " + lowercase letters + " " */
    char buf[4 * 64 + 8];
    size_t off[64 + 3];
    size_t n_cp = 0, bl = 0, known = 0;
    int64_t cost[XTTS_N_LANGS] = {0};
    buf[0] = ' ';
    off[0] = 0;
    bl = 1;
    n_cp = 1;
    for (utf8proc_ssize_t i = 0;;) {
        int32_t c = ' ';
        utf8proc_ssize_t k = 0;
        int letter = 0;
        if (i < r) {
            if (t[i] < 0x80) {
                c = t[i];
                k = 1;
                letter = (uint32_t)((c | 0x20) - 'a') < 26;
            } else {
                k = utf8proc_iterate(t + i, r - i, &c);
                if (k <= 0) { k = 1; c = ' '; }
                letter = is_letter(c);
            }
        }
        if (letter && n_cp < 64 + 1) {
            off[n_cp] = bl;
            if (c < 0x80) buf[bl++] = (char)(c | 0x20);
            else bl += (size_t)utf8proc_encode_char(utf8proc_tolower(c), (uint8_t *)buf + bl);
            n_cp++;
        } else if (!letter && n_cp > 1) {
            off[n_cp] = bl;
            buf[bl++] = ' ';
            n_cp++;
            off[n_cp] = bl;
            known += score_word_cached(m, wc, buf, bl, off, n_cp, cost);
            bl = 1;
            n_cp = 1;
        }
        if (i >= r) break;
        i += k;
    }
    free(nfc);
    if (known)
        for (int l = 0; l < XTTS_N_LANGS; l++) ll[l] = -(double)cost[l] / NG_SCALE;
    return known;
}
