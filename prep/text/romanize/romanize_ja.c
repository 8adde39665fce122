/* romanize_ja.c — Japanese to Hepburn romaji as XTTS reads it: cutlet's Cutlet() defaults
 * (Hepburn, foreign spellings from UniDic lemmas, ASCII output) over MeCab with a UniDic
 * dictionary, before XTTS lowercases the result.
 *
 * The steps, each as the reference does them:
 *   1. normalize: NFKC, then the three quotation marks NFKC leaves (U+2018, U+2019,
 *      U+201D) as their ASCII forms (full-width to half-width Latin);
 *   2. MeCab cuts the text into words; each word carries its UniDic features (part of
 *      speech, lemma, pronunciation, kana) or is unknown with a character class;
 *   3. each word becomes romaji: a small exception list; digits and ASCII as they are;
 *      unknown kana through the kana table; other unknown words as one '?' per character;
 *      punctuation through the table (or dropped); particles read "wa" / "e" by their
 *      pronunciation; a foreign lemma ("タワー-tower") gives its spelling; otherwise the
 *      word's kana through the table (digraphs, small kana, long vowel mark, sokuon, n');
 *   4. spacing between words by part of speech (no space before suffixes, punctuation,
 *      conjunctive particles and auxiliary verbs other than です, after prefixes, inside
 *      digit runs), a sokuon left at the end of a word doubles the next word's first
 *      letter, and leftover sokuon are removed.
 * Capitalization (sentence start, proper nouns) is not done: XTTS lowercases the result.
 *
 * The dictionary: $XTTS_UNIDIC, else /var/lib/mecab/dic/unidic (Debian's unidic-mecab).
 * UniDic 2.1.2 binary (26 features) and 2.2 or later (29 features) are read; anything else
 * is refused with its reason. Loaded once, shared by all threads (each call has its own
 * MeCab tagger and lattice).
 */
#include <mecab.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <utf8proc.h>

#include "prep/text/romanize/romanize_internal.h"

/* ---- the kana table (Hepburn) -------------------------------------------------------- */

typedef struct {
    const char *k;
    const char *v;
} kv;

/* one code point each, or two where marked in the second list */
static const kv KANA1[] = {
    {"あ", "a"}, {"い", "i"}, {"う", "u"}, {"え", "e"}, {"お", "o"},
    {"か", "ka"}, {"き", "ki"}, {"く", "ku"}, {"け", "ke"}, {"こ", "ko"},
    {"が", "ga"}, {"ぎ", "gi"}, {"ぐ", "gu"}, {"げ", "ge"}, {"ご", "go"},
    {"さ", "sa"}, {"し", "shi"}, {"す", "su"}, {"せ", "se"}, {"そ", "so"},
    {"ざ", "za"}, {"じ", "ji"}, {"ず", "zu"}, {"ぜ", "ze"}, {"ぞ", "zo"},
    {"た", "ta"}, {"ち", "chi"}, {"つ", "tsu"}, {"て", "te"}, {"と", "to"},
    {"だ", "da"}, {"ぢ", "zi"}, {"づ", "zu"}, {"で", "de"}, {"ど", "do"},
    {"な", "na"}, {"に", "ni"}, {"ぬ", "nu"}, {"ね", "ne"}, {"の", "no"},
    {"は", "ha"}, {"ひ", "hi"}, {"ふ", "fu"}, {"へ", "he"}, {"ほ", "ho"},
    {"ば", "ba"}, {"び", "bi"}, {"ぶ", "bu"}, {"べ", "be"}, {"ぼ", "bo"},
    {"ぱ", "pa"}, {"ぴ", "pi"}, {"ぷ", "pu"}, {"ぺ", "pe"}, {"ぽ", "po"},
    {"ま", "ma"}, {"み", "mi"}, {"む", "mu"}, {"め", "me"}, {"も", "mo"},
    {"や", "ya"}, {"ゆ", "yu"}, {"よ", "yo"},
    {"ら", "ra"}, {"り", "ri"}, {"る", "ru"}, {"れ", "re"}, {"ろ", "ro"},
    {"わ", "wa"}, {"を", "wo"}, {"ん", "n"}, {"ゐ", "wi"}, {"ゑ", "we"},
    {"ゔ", "vu"}, {"ヸ", "vi"}, {"ヷ", "va"}, {"ヹ", "ve"}, {"ヺ", "vo"},
    /* small kana */
    {"ゃ", "ya"}, {"ゅ", "yu"}, {"ょ", "yo"}, {"ぁ", "a"}, {"ぃ", "i"}, {"ぅ", "u"}, {"ぇ", "e"},
    {"ぉ", "o"}, {"ゕ", "ka"}, {"ゖ", "ke"}, {"ヶ", "ga"}, {"ゎ", "wa"},
    /* small katakana for Ainu */
    {"ㇰ", "k"}, {"ㇱ", "shi"}, {"ㇲ", "su"}, {"ㇳ", "to"}, {"ㇴ", "nu"}, {"ㇵ", "ha"},
    {"ㇶ", "hi"}, {"ㇷ", "fu"}, {"ㇸ", "he"}, {"ㇹ", "ho"}, {"ㇺ", "mu"}, {"ㇻ", "ra"},
    {"ㇼ", "ri"}, {"ㇽ", "ru"}, {"ㇾ", "re"}, {"ㇿ", "ro"},
    /* small kana extension */
    {"\xf0\x9b\x85\x90", "wi"}, {"\xf0\x9b\x85\x91", "we"}, {"\xf0\x9b\x85\x92", "wo"},
    {"\xf0\x9b\x85\xa4", "wi"}, {"\xf0\x9b\x85\xa5", "we"}, {"\xf0\x9b\x85\xa6", "wo"},
    {"\xf0\x9b\x85\xa7", "n"},
    /* marks and punctuation */
    {"ー", "-"}, {"。", "."}, {"、", ","}, {"？", "?"}, {"！", "!"}, {"「", "\""}, {"」", "\""},
    {"『", "\""}, {"』", "\""}, {"：", ":"}, {"（", "("}, {"）", ")"}, {"《", "("}, {"》", ")"},
    {"【", "["}, {"】", "]"}, {"・", "/"}, {"，", ","},
    {"\xe3\x82\x9a", ""}, {"\xe3\x82\x99", ""}, /* combining (han)dakuten alone */
};

static const kv KANA2[] = {
    {"しゃ", "sha"}, {"しゅ", "shu"}, {"しょ", "sho"}, {"じゃ", "ja"}, {"じゅ", "ju"},
    {"じょ", "jo"}, {"ちゃ", "cha"}, {"ちゅ", "chu"}, {"ちょ", "cho"},
    {"わ\xe3\x82\x99", "va"}, {"ゑ\xe3\x82\x99", "ve"}, {"を\xe3\x82\x99", "vo"},
    {"ㇷ\xe3\x82\x9a", "p"},
};

/* whole words the reference spells its own way */
static const kv EXCEPTIONS[] = {
    {"ホッピー", "Hoppy"}, {"東京", "Tokyo"}, {"大阪", "Osaka"}, {"京都", "Kyoto"},
    {"柔道", "judo"}, {"弁当", "bento"}, {"ヒルズ", "hills"}, {"カービィ", "Kirby"},
};

static uint32_t cp_of(const char *s, size_t *adv) {
    return xtts_rz_utf8((const unsigned char *)s, 0, strlen(s), adv);
}

/* the single-code-point table as a sorted array for bsearch */
typedef struct {
    uint32_t cp;
    const char *v;
} cpv;
static cpv g_one[sizeof KANA1 / sizeof KANA1[0]];
static size_t g_n_one;

static int cmp_cpv(const void *a, const void *b) {
    uint32_t x = ((const cpv *)a)->cp, y = ((const cpv *)b)->cp;
    return x < y ? -1 : x > y;
}

/* the two-code-point keys, decoded once (table_init) */
static struct {
    uint32_t a, b;
    const char *v;
} g_two[sizeof KANA2 / sizeof KANA2[0]];

static void table_init(void) {
    for (size_t i = 0; i < sizeof KANA1 / sizeof KANA1[0]; i++) {
        size_t adv;
        g_one[g_n_one].cp = cp_of(KANA1[i].k, &adv);
        g_one[g_n_one++].v = KANA1[i].v;
    }
    qsort(g_one, g_n_one, sizeof g_one[0], cmp_cpv);
    for (size_t i = 0; i < sizeof KANA2 / sizeof KANA2[0]; i++) {
        size_t adv, adv2;
        g_two[i].a = cp_of(KANA2[i].k, &adv);
        g_two[i].b = cp_of(KANA2[i].k + adv, &adv2);
        g_two[i].v = KANA2[i].v;
    }
}

static const char *tbl1(uint32_t c) {
    cpv key = {c, NULL};
    const cpv *f = bsearch(&key, g_one, g_n_one, sizeof g_one[0], cmp_cpv);
    return f ? f->v : NULL;
}

static const char *tbl2(uint32_t a, uint32_t b) {
    for (size_t i = 0; i < sizeof g_two / sizeof g_two[0]; i++)
        if (g_two[i].a == a && g_two[i].b == b) return g_two[i].v;
    return NULL;
}

static int in_set(uint32_t c, const uint32_t *set) {
    for (; *set; set++)
        if (*set == c) return 1;
    return 0;
}

static const uint32_t SUTEGANA[] = {0x3083, 0x3085, 0x3087, 0x3041, 0x3043, 0x3045, 0x3047, 0x3049, 0};
static const uint32_t VOWELS_SOKUON[] = {0x3042, 0x3044, 0x3046, 0x3048, 0x304A, 0x3063, 0};
static const uint32_t N_APOSTROPHE[] = {0x3042, 0x3044, 0x3046, 0x3048, 0x304A, 0x3084, 0x3086, 0x3088, 0};
#define SOKUON 0x3063u /* っ */
#define CHOON 0x30FCu  /* ー */

static void put_cp(xtts_sb *o, uint32_t c) {
    utf8proc_uint8_t b[4];
    utf8proc_ssize_t k = utf8proc_encode_char((utf8proc_int32_t)c, b);
    xtts_sb_putn(o, (const char *)b, (size_t)(k > 0 ? k : 0));
}

static uint32_t kata2hira(uint32_t c) {
    return (c >= 0x30A1 && c <= 0x30F6) || c == 0x30FD || c == 0x30FE ? c - 0x60 : c;
}

/* the voiced kana of an unvoiced one (か -> が), or 0 */
static uint32_t add_dakuten(uint32_t c) {
    static const uint32_t unv[] = {0x304B, 0x304D, 0x304F, 0x3051, 0x3053, 0x3055, 0x3057, 0x3059, 0x305B, 0x305D,
                                   0x305F, 0x3061, 0x3064, 0x3066, 0x3068, 0x306F, 0x3072, 0x3075, 0x3078, 0x307B};
    for (size_t i = 0; i < sizeof unv / sizeof unv[0]; i++)
        if (unv[i] == c) return c + 1; /* the voiced form follows each in the block */
    return 0;
}

/* Map kana (already hiragana where they have one) to romaji. Returns 0, or -1 with why
 * set where the reference fails (a kana it has no romaji for). */
static int map_kana(const uint32_t *k, size_t n, xtts_sb *o, char *why, size_t whyn) {
    for (size_t i = 0; i < n; i++) {
        uint32_t kk = k[i], pk = i ? k[i - 1] : 0, nk = i + 1 < n ? k[i + 1] : 0;
        const char *v;
        /* iteration marks: ゝ repeats the kana before, ゞ voices it; 々 and 〃 are dropped */
        if (kk == 0x3005 || kk == 0x3003 || kk == 0x309D || kk == 0x309E || kk == 0x30FD) {
            if (kk == 0x309D || kk == 0x30FD) {
                if (pk) put_cp(o, pk);
            } else if (kk == 0x309E) {
                uint32_t vv = pk ? add_dakuten(pk) : 0;
                if (vv && (v = tbl1(vv))) xtts_sb_puts(o, v);
            }
            continue;
        }
        if (pk && (v = tbl2(pk, kk))) { xtts_sb_puts(o, v); continue; }
        if (nk && tbl2(kk, nk)) continue;
        if (nk && in_set(nk, SUTEGANA)) {
            if (kk == SOKUON) continue;
            const char *a = tbl1(kk), *b = tbl1(nk);
            if (!a) goto unknown;
            size_t al = strlen(a);
            xtts_sb_putn(o, a, al ? al - 1 : 0);
            xtts_sb_puts(o, b);
            continue;
        }
        if (in_set(kk, SUTEGANA)) continue;
        if (kk == CHOON) {
            const char *p = pk ? tbl1(pk) : NULL;
            if (p) {
                size_t pl = strlen(p);
                if (!pl) { kk = pk; goto unknown; }
                xtts_sb_putc(o, p[pl - 1]);
            } else {
                xtts_sb_putc(o, '-');
            }
            continue;
        }
        if (kk == SOKUON) {
            if (!nk) {
                put_cp(o, SOKUON); /* the word-level pass doubles the next word's letter */
            } else if (nk == 0x3061) {
                xtts_sb_putc(o, 't');
            } else if (in_set(nk, VOWELS_SOKUON)) {
                xtts_sb_putc(o, '-');
            } else {
                const char *p = tbl1(nk);
                if (!p || !*p) { kk = nk; goto unknown; }
                xtts_sb_putc(o, p[0]);
            }
            continue;
        }
        if (kk == 0x3093) {
            xtts_sb_puts(o, nk && in_set(nk, N_APOSTROPHE) ? "n'" : "n");
            continue;
        }
        if (!(v = tbl1(kk))) goto unknown;
        xtts_sb_puts(o, v);
        continue;
    unknown:
        if (why) snprintf(why, whyn, "no romaji for the kana U+%04X", (unsigned)kk);
        return -1;
    }
    return 0;
}

/* ---- MeCab and the dictionary ---------------------------------------------------------- */

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static mecab_model_t *g_model;
static int g_kana_field; /* index of the kana feature: 20 (UniDic >= 2.2) or 17 (2.1.2) */
static char g_unavailable[300];

static void model_load(void) {
    table_init();
    const char *dir = getenv("XTTS_UNIDIC");
    if (!dir || !*dir) dir = "/var/lib/mecab/dic/unidic";
    char path[4096];
    struct stat st;
    snprintf(path, sizeof path, "%s/sys.dic", dir);
    if (stat(path, &st) != 0) {
        snprintf(g_unavailable, sizeof g_unavailable,
                 "no UniDic dictionary at %s (install Debian's unidic-mecab, or set XTTS_UNIDIC to a UniDic directory)", dir);
        return;
    }
    char *argv[] = {"xtts", "-r", "/dev/null", "-d", (char *)dir, NULL};
    mecab_model_t *m = mecab_model_new(5, argv);
    if (!m) {
        snprintf(g_unavailable, sizeof g_unavailable, "MeCab cannot load the dictionary at %s: %.120s", dir,
                 mecab_strerror(NULL));
        return;
    }
    /* which UniDic: count the features of a known word */
    mecab_t *t = mecab_model_new_tagger(m);
    mecab_lattice_t *lat = mecab_model_new_lattice(m);
    int nf = 0;
    if (t && lat) {
        mecab_lattice_set_sentence(lat, "日本");
        if (mecab_parse_lattice(t, lat)) {
            const mecab_node_t *nd = mecab_lattice_get_bos_node(lat)->next;
            if (nd && nd->stat != MECAB_EOS_NODE && nd->stat != MECAB_UNK_NODE) {
                int q = 0;
                nf = 1;
                for (const char *p = nd->feature; *p; p++) {
                    if (*p == '"') q = !q;
                    else if (*p == ',' && !q) nf++;
                }
            }
        }
    }
    if (lat) mecab_lattice_destroy(lat);
    if (t) mecab_destroy(t);
    if (nf == 29 || nf == 26) {
        g_kana_field = nf == 29 ? 20 : 17;
        g_model = m;
    } else {
        mecab_model_destroy(m);
        snprintf(g_unavailable, sizeof g_unavailable,
                 "the MeCab dictionary at %s is not UniDic (its entries have %d features; UniDic has 26 or 29)", dir, nf);
    }
}

const char *xtts_romanize_ja_unavailable(void) {
    pthread_once(&g_once, model_load);
    return g_model ? NULL : g_unavailable;
}

/* ---- words ----------------------------------------------------------------------------- */

enum { CHAR_DIGIT = 4, CHAR_ALPHA = 5, CHAR_HIRAGANA = 6, CHAR_KATAKANA = 7 };

typedef struct {
    const char *s; /* surface (in the normalized text) */
    size_t n;
    int unk, char_type, white; /* white: whitespace precedes it */
    xtts_sb f[5];              /* pos1 pos2 lemma pron kana */
    int has[5];
} word;
enum { F_POS1, F_POS2, F_LEMMA, F_PRON, F_KANA };

/* split a feature string as CSV (quotes group commas, "" is a quote) into the fields we use */
static void word_features(word *w, const char *feat, int kana_field) {
    int want[5] = {0, 1, 7, 9, kana_field};
    int idx = 0;
    xtts_sb cur = {0};
    const char *p = feat;
    for (;;) {
        xtts_sb_clear(&cur);
        xtts_sb_cstr(&cur);
        if (*p == '"') {
            p++;
            for (; *p; p++) {
                if (*p == '"') {
                    if (p[1] == '"') { xtts_sb_putc(&cur, '"'); p++; continue; }
                    p++;
                    break;
                }
                xtts_sb_putc(&cur, *p);
            }
            while (*p && *p != ',') xtts_sb_putc(&cur, *p++);
        } else {
            while (*p && *p != ',') xtts_sb_putc(&cur, *p++);
        }
        for (int j = 0; j < 5; j++)
            if (want[j] == idx) {
                xtts_sb_putn(&w->f[j], cur.s, cur.len);
                xtts_sb_cstr(&w->f[j]);
                w->has[j] = 1;
            }
        idx++;
        if (*p != ',') break;
        p++;
    }
    xtts_sb_free(&cur);
}

static int feq(const word *w, int f, const char *s) { return w->has[f] && !strcmp(w->f[f].s, s); }

static int str_is_ascii(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] >= 0x80) return 0;
    return 1;
}

/* Python's str.isdigit: every character a digit (Unicode Nd here), and at least one */
static int str_is_digit(const char *s, size_t n) {
    if (!n) return 0;
    for (size_t i = 0; i < n;) {
        size_t adv;
        uint32_t c = xtts_rz_utf8((const unsigned char *)s, i, n, &adv);
        if (utf8proc_category((utf8proc_int32_t)c) != UTF8PROC_CATEGORY_ND) return 0;
        i += adv;
    }
    return 1;
}

static size_t n_cps(const char *s, size_t n) {
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80) k++;
    return k;
}

/* the foreign spelling of a lemma like "タワー-tower", or NULL */
static const char *foreign_lemma(const word *w) {
    if (memchr(w->s, '-', w->n)) return NULL;
    if (!w->has[F_LEMMA] || !w->f[F_LEMMA].len) return NULL;
    const char *d = strchr(w->f[F_LEMMA].s, '-');
    if (!d) return NULL;
    return str_is_ascii(d + 1, strlen(d + 1)) ? d + 1 : NULL;
}

static int kana_to_romaji(const char *s, size_t n, xtts_sb *o, char *why, size_t whyn) {
    uint32_t stackbuf[64], *cps = n <= 64 ? stackbuf : malloc(n * sizeof *cps);
    if (!cps) return -1;
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        size_t adv;
        cps[k++] = kata2hira(xtts_rz_utf8((const unsigned char *)s, i, n, &adv));
        i += adv;
    }
    int rc = map_kana(cps, k, o, why, whyn);
    if (cps != stackbuf) free(cps);
    return rc;
}

static int romaji_word(const word *w, xtts_sb *o, char *why, size_t whyn) {
    for (size_t i = 0; i < sizeof EXCEPTIONS / sizeof EXCEPTIONS[0]; i++)
        if (strlen(EXCEPTIONS[i].k) == w->n && !memcmp(EXCEPTIONS[i].k, w->s, w->n)) {
            xtts_sb_puts(o, EXCEPTIONS[i].v);
            return 0;
        }
    if (str_is_digit(w->s, w->n) || str_is_ascii(w->s, w->n)) {
        xtts_sb_putn(o, w->s, w->n);
        return 0;
    }
    if (w->unk) {
        if (w->char_type == CHAR_HIRAGANA || w->char_type == CHAR_KATAKANA) return kana_to_romaji(w->s, w->n, o, why, whyn);
        for (size_t i = n_cps(w->s, w->n); i > 0; i--) xtts_sb_putc(o, '?');
        return 0;
    }
    if (feq(w, F_POS1, "補助記号")) {
        size_t adv;
        uint32_t c = xtts_rz_utf8((const unsigned char *)w->s, 0, w->n, &adv);
        const char *v = adv == w->n ? tbl1(c) : NULL;
        if (v) xtts_sb_puts(o, v);
        return 0;
    }
    if (feq(w, F_POS1, "助詞") && feq(w, F_PRON, "ワ")) { xtts_sb_puts(o, "wa"); return 0; }
    if (feq(w, F_POS1, "助詞") && feq(w, F_PRON, "エ")) { xtts_sb_puts(o, "e"); return 0; }
    const char *fl = foreign_lemma(w);
    if (fl) { xtts_sb_puts(o, fl); return 0; }
    if (w->has[F_KANA] && w->f[F_KANA].len) return kana_to_romaji(w->f[F_KANA].s, w->f[F_KANA].len, o, why, whyn);
    xtts_sb_putn(o, w->s, w->n);
    return 0;
}

typedef struct {
    xtts_sb s;
    int space;
} token;

static int ends_with_sokuon(const xtts_sb *s) {
    return s->len >= 3 && !memcmp(s->s + s->len - 3, "っ", 3);
}

/* is a a substring of the UTF-8 string hay (Python's `a in "..."` on strings) */
static int substr_of(const char *a, size_t an, const char *hay) {
    return an == 0 || memmem(hay, strlen(hay), a, an) != NULL;
}

static int tokens_build(word *w, size_t nw, xtts_sb *out, char *why, size_t whyn) {
    token *t = calloc(nw ? nw : 1, sizeof *t);
    if (!t) return -1;
    size_t nt = 0;
    int rc = 0;
    xtts_sb roma = {0};
    for (size_t i = 0; i < nw; i++) {
        token *po = nt ? &t[nt - 1] : NULL;
        const word *wd = &w[i], *nx = i + 1 < nw ? &w[i + 1] : NULL;
        /* a possessive apostrophe between Latin letters keeps its place */
        if (wd->n == 1 && wd->s[0] == '\'' && nx && nx->char_type == CHAR_ALPHA && !nx->white && !wd->white) {
            if (po) po->space = 0;
            xtts_sb_putn(&t[nt++].s, "'", 1);
            continue;
        }
        xtts_sb_clear(&roma);
        xtts_sb_cstr(&roma);
        if (romaji_word(wd, &roma, why, whyn)) { rc = -2; break; }
        if (roma.len && po && ends_with_sokuon(&po->s)) {
            size_t adv;
            (void)xtts_rz_utf8((const unsigned char *)roma.s, 0, roma.len, &adv);
            po->s.len -= 3;
            xtts_sb_putn(&po->s, roma.s, adv);
        }
        int foreign = foreign_lemma(wd) != NULL;
        token *tk = &t[nt];
        if (substr_of(wd->s, wd->n, "「『") || substr_of(roma.s, roma.len, "([")) {
            if (po) po->space = 1;
            xtts_sb_putn(&tk->s, roma.s, roma.len);
            nt++;
            continue;
        }
        if (roma.len == 1 && roma.s[0] == '/') {
            xtts_sb_putn(&tk->s, roma.s, roma.len);
            nt++;
            continue;
        }
        if (str_is_ascii(wd->s, wd->n) && nx && str_is_ascii(nx->s, nx->n)) {
            xtts_sb_putn(&tk->s, wd->s, wd->n);
            tk->space = nx->white;
            nt++;
            continue;
        }
        xtts_sb_putn(&tk->s, roma.s, roma.len);
        nt++;
        if (feq(wd, F_POS1, "接頭辞")) continue;
        if (nx && (feq(nx, F_POS1, "補助記号") || feq(nx, F_POS1, "接尾辞"))) continue;
        if (nx && nx->n == 1 && nx->s[0] == ',') continue;
        if (foreign && roma.len && roma.s[roma.len - 1] == '-') continue;
        if (nx && nx->has[F_POS2] && substr_of(nx->f[F_POS2].s, nx->f[F_POS2].len, "接続助詞")) continue;
        if (str_is_digit(wd->s, wd->n) && nx && str_is_digit(nx->s, nx->n)) continue;
        if (nx && (feq(wd, F_POS1, "動詞") || feq(wd, F_POS1, "助動詞") || feq(wd, F_POS1, "形容詞")) &&
            feq(nx, F_POS1, "助動詞") && !(nx->n == 6 && !memcmp(nx->s, "です", 6)))
            continue;
        tk->space = 1;
    }
    if (rc == 0) {
        xtts_sb j = {0};
        xtts_sb_cstr(&j);
        for (size_t i = 0; i < nt; i++) {
            for (size_t b = 0; b < t[i].s.len;) {
                if (b + 3 <= t[i].s.len && !memcmp(t[i].s.s + b, "っ", 3)) { b += 3; continue; }
                xtts_sb_putc(&j, t[i].s.s[b++]);
            }
            if (t[i].space) xtts_sb_putc(&j, ' ');
        }
        /* strip: the tokens hold no whitespace of their own but the spaces added */
        size_t a = 0, e = j.len;
        while (a < e && j.s[a] == ' ') a++;
        while (e > a && j.s[e - 1] == ' ') e--;
        xtts_sb_putn(out, j.s + a, e - a);
        if (j.failed) rc = -1;
        xtts_sb_free(&j);
    }
    for (size_t i = 0; i < nt; i++) xtts_sb_free(&t[i].s);
    free(t);
    xtts_sb_free(&roma);
    return rc;
}

/* NFKC, then the quotation marks the reference turns half-width (U+2018 `, U+2019 ',
 * U+201D "); NULL if the text is not valid UTF-8 */
static char *normalize(const char *text, size_t len) {
    utf8proc_uint8_t *d = NULL;
    utf8proc_ssize_t n = utf8proc_map((const utf8proc_uint8_t *)text, (utf8proc_ssize_t)len, &d,
                                      UTF8PROC_STABLE | UTF8PROC_COMPOSE | UTF8PROC_COMPAT);
    if (n < 0) return NULL;
    xtts_sb o = {0};
    xtts_sb_cstr(&o);
    for (utf8proc_ssize_t i = 0; i < n;) {
        if (i + 3 <= n && d[i] == 0xE2 && d[i + 1] == 0x80 && (d[i + 2] == 0x98 || d[i + 2] == 0x99 || d[i + 2] == 0x9D)) {
            xtts_sb_putc(&o, d[i + 2] == 0x98 ? '`' : d[i + 2] == 0x99 ? '\'' : '"');
            i += 3;
            continue;
        }
        xtts_sb_putc(&o, (char)d[i++]);
    }
    free(d);
    if (o.failed) { xtts_sb_free(&o); return NULL; }
    return o.s;
}

int xtts_romanize_ja(const char *text, size_t len, xtts_sb *out, char *why, size_t whyn) {
    if (xtts_romanize_ja_unavailable()) {
        if (why) snprintf(why, whyn, "%s", g_unavailable);
        return -1;
    }
    /* the reference hands MeCab a C string: the text ends at a NUL */
    const char *z = memchr(text, 0, len);
    if (z) len = (size_t)(z - text);
    if (!len) return 0;
    char *norm = normalize(text, len);
    if (!norm) {
        if (why) snprintf(why, whyn, "the text is not valid UTF-8");
        return -2;
    }
    mecab_t *tg = mecab_model_new_tagger(g_model);
    mecab_lattice_t *lat = mecab_model_new_lattice(g_model);
    int rc = 0;
    word *w = NULL;
    size_t nw = 0, cap = 0;
    if (!tg || !lat) { rc = -1; goto done; }
    mecab_lattice_set_sentence(lat, norm);
    if (!mecab_parse_lattice(tg, lat)) {
        if (why) snprintf(why, whyn, "MeCab: %.200s", mecab_lattice_strerror(lat));
        rc = -2;
        goto done;
    }
    for (const mecab_node_t *nd = mecab_lattice_get_bos_node(lat)->next; nd && nd->stat != MECAB_EOS_NODE; nd = nd->next) {
        if (nw == cap) {
            size_t nc = cap ? cap * 2 : 32;
            word *g = realloc(w, nc * sizeof *g);
            if (!g) { rc = -1; goto done; }
            memset(g + cap, 0, (nc - cap) * sizeof *g);
            w = g;
            cap = nc;
        }
        word *x = &w[nw++];
        x->s = nd->surface;
        x->n = nd->length;
        x->unk = nd->stat == MECAB_UNK_NODE;
        x->char_type = nd->char_type;
        x->white = nd->rlength > nd->length;
        word_features(x, nd->feature, g_kana_field);
        if (x->unk) x->has[F_LEMMA] = x->has[F_PRON] = x->has[F_KANA] = 0; /* unknown words: 6 features */
    }
    if (rc == 0) rc = tokens_build(w, nw, out, why, whyn);
done:
    for (size_t i = 0; i < nw; i++)
        for (int j = 0; j < 5; j++) xtts_sb_free(&w[i].f[j]);
    free(w);
    if (lat) mecab_lattice_destroy(lat);
    if (tg) mecab_destroy(tg);
    free(norm);
    return rc;
}
