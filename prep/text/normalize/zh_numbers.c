/* zh_numbers.c — Coqui XTTS's Chinese text normalization (zh_numbers.h).
 *
 * What Coqui runs for zh (TTS v0.22.0, TTS/tts/layers/xtts/zh_num2words.py, TextNorm() with
 * every option off) is, on the text framed as "^" text "$":
 *
 *   1 dates       \D+ then [year 年][month 月[day 日|号]]  year digit by digit, month and day
 *                 as numbers (2024年5月3日 -> 二零二四年五月三日)
 *   2 money       \D+ then number [多余几] unit [digit [unit]], units 亿 千万 百万 万 千 百 元
 *                 块 角 毛 分: every number inside read as a number (3元5角 -> 三元五角)
 *   3 mobile      \D [+86 ]1 3x|5x|7x|8x|9x and 8 digits \D: digit by digit
 *   4 fixed line  \D [0 area [-]] [1-9] and 6 or 7 digits \D: digit by digit
 *   5 fractions   a/b -> b分之a
 *   6 percent     (％ -> % first) n% -> 百分之n
 *   7 measure     a number before a measure word (个 本 年 米 ...): the number read
 *   8 digit runs  4 to 32 digits: digit by digit
 *   9 numbers     what is left: integers and decimals read with units
 *  10 letters 二 letters -> letters 2 letters (p二p -> p2p)
 *
 * then the frame removed (with any other '^' at the start and '$' at the end) and every
 * punctuation mark, Chinese or ASCII, replaced by ','.
 *
 * Each step first lists its matches in the text as the step finds it (Python's re.findall,
 * scanning left to right, matches not overlapping), then for each match in turn replaces the
 * FIRST occurrence of the matched string in the current text (str.replace(m, r, 1)), which
 * is not always the place where it was found: in "第13号有3个" step 7 finds "3" before 个 and
 * rewrites the 3 of 13. That is reproduced. The patterns are matched by hand-written scanners
 * that take the same alternatives in the same order as Python's engine; \d and \D are
 * Unicode decimal digits (category Nd), as in Python 3, and a digit's value is its place in
 * its run of ten.
 *
 * The text is held as code points; bytes that are not UTF-8 travel as RAW + byte and come
 * out unchanged.
 */
#include "prep/text/normalize/zh_numbers.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#define RAW 0x110000 /* RAW + b: a byte b that is not part of valid UTF-8 */

/* ---- code point vectors -------------------------------------------------------------- */

typedef struct {
    int32_t *v;
    size_t n, cap;
    int failed;
} cpv;

static int cpv_reserve(cpv *b, size_t extra) {
    if (b->failed) return -1;
    if (b->n + extra <= b->cap) return 0;
    size_t c = b->cap ? b->cap : 64;
    while (c < b->n + extra) c *= 2;
    int32_t *n = realloc(b->v, c * sizeof *n);
    if (!n) { b->failed = 1; return -1; }
    b->v = n;
    b->cap = c;
    return 0;
}
static void cpv_pushn(cpv *b, const int32_t *s, size_t n) {
    if (!n || cpv_reserve(b, n)) return;
    memcpy(b->v + b->n, s, n * sizeof *s);
    b->n += n;
}
static void cpv_push(cpv *b, int32_t c) { cpv_pushn(b, &c, 1); }
static void cpv_free(cpv *b) { free(b->v); memset(b, 0, sizeof *b); }

/* ---- characters ---------------------------------------------------------------------- */

enum {
    C_ZERO = 0x96F6, C_ONE = 0x4E00, C_TEN = 0x5341, C_LIANG = 0x4E24, C_POINT = 0x70B9,
    C_NIAN = 0x5E74, C_YUE = 0x6708, C_RI = 0x65E5, C_HAO = 0x53F7, C_DUO = 0x591A, C_YU = 0x4F59,
    C_JI = 0x51E0, C_YI = 0x4EBF, C_QIAN = 0x5343, C_BAI = 0x767E, C_WAN = 0x4E07, C_YUAN = 0x5143,
    C_KUAI = 0x5757, C_JIAO = 0x89D2, C_MAO = 0x6BDB, C_FEN = 0x5206, C_ZHI = 0x4E4B, C_KE = 0x514B,
    C_MI = 0x7C73, C_WEI = 0x5FAE, C_ER = 0x4E8C, C_FW_PERCENT = 0xFF05
};

/* 零一二三四五六七八九 */
static const int32_t digit_chars[10] = {0x96F6, 0x4E00, 0x4E8C, 0x4E09, 0x56DB, 0x4E94, 0x516D, 0x4E03, 0x516B, 0x4E5D};

/* Units by power of ten: 十 百 千 万, then (the "mid" system, ten thousand times each) 亿 兆 京
 * 垓 秭 穰 沟 涧 正 载. */
static const int unit_powers[] = {44, 40, 36, 32, 28, 24, 20, 16, 12, 8, 4, 3, 2, 1};
static int32_t unit_char(int p) {
    switch (p) {
    case 1: return 0x5341;
    case 2: return 0x767E;
    case 3: return 0x5343;
    case 4: return 0x4E07;
    default: {
        static const int32_t big[10] = {0x4EBF, 0x5146, 0x4EAC, 0x5793, 0x79ED, 0x7A70, 0x6C9F, 0x6DA7, 0x6B63, 0x8F7D};
        return big[p / 4 - 2];
    }
    }
}

/* Measure words that end step 7's number (single characters; 千克 微克 千米 微米 are the
 * two-character ones that do not start with one of these). */
static const int32_t measure_words[] = {
    0x4E08, 0x4E16, 0x4E18, 0x4E1D, 0x4E24, 0x4E2A, 0x4E38, 0x4EE3, 0x4EE4, 0x4EF6, 0x4F0F, 0x4F4D,
    0x51AC, 0x51FA, 0x5200, 0x5206, 0x523B, 0x52FA, 0x5339, 0x5347, 0x5355, 0x536E, 0x5398, 0x53CC,
    0x53E0, 0x53E3, 0x53EA, 0x5408, 0x540D, 0x5468, 0x5556, 0x56DE, 0x573A, 0x5757, 0x5761, 0x5802,
    0x5806, 0x5899, 0x58F3, 0x58F6, 0x590F, 0x591C, 0x5929, 0x5934, 0x5B63, 0x5BA2, 0x5BB6, 0x5BF8,
    0x5BF9, 0x5BFB, 0x5C3A, 0x5C3E, 0x5C42, 0x5C71, 0x5C81, 0x5CAD, 0x5E38, 0x5E62, 0x5E74, 0x5EA7,
    0x5F20, 0x5FFD, 0x6237, 0x624B, 0x624E, 0x6253, 0x62C5, 0x6311, 0x6346, 0x64AE, 0x652F, 0x6597,
    0x659B, 0x65A4, 0x65E5, 0x65EC, 0x65F6, 0x6625, 0x66F2, 0x66F4, 0x6708, 0x672C, 0x6761, 0x676F,
    0x677F, 0x679D, 0x6839, 0x6876, 0x68F5, 0x6BEB, 0x6C5F, 0x6CE1, 0x6EAA, 0x70AE, 0x7172, 0x7247,
    0x74F6, 0x76C6, 0x76CF, 0x76D2, 0x76D8, 0x77F3, 0x7823, 0x7897, 0x789F, 0x79CB, 0x79D2, 0x7A0B,
    0x7AA0, 0x7B3C, 0x7BA1, 0x7BA9, 0x7BB1, 0x7BEE, 0x7C0B, 0x7C92, 0x7EAA, 0x7EBF, 0x7F50, 0x7F51,
    0x7F57, 0x7FA4, 0x811A, 0x8154, 0x888B, 0x88AD, 0x8BFE, 0x8D2F, 0x8D34, 0x8DF3, 0x8EAB, 0x8F86,
    0x8F88, 0x9053, 0x91CC, 0x9488, 0x949F, 0x94A7, 0x94B1, 0x94B5, 0x94E2, 0x94FA, 0x9505, 0x9531,
    0x9619, 0x961F, 0x9635, 0x9762, 0x9875, 0x9876, 0x9897, 0x9996,
};

/* Punctuation that becomes ',': ASCII punctuation and the Chinese marks Coqui lists. */
static const int32_t puncts[] = {
    0x0021, 0x0022, 0x0023, 0x0024, 0x0025, 0x0026, 0x0027, 0x0028, 0x0029, 0x002A, 0x002B, 0x002C,
    0x002D, 0x002E, 0x002F, 0x003A, 0x003B, 0x003C, 0x003D, 0x003E, 0x003F, 0x0040, 0x005B, 0x005C,
    0x005D, 0x005E, 0x005F, 0x0060, 0x007B, 0x007C, 0x007D, 0x007E, 0x00B7, 0x2013, 0x2014, 0x2018,
    0x2019, 0x201B, 0x201C, 0x201D, 0x201E, 0x201F, 0x2026, 0x2027, 0x3001, 0x3002, 0x3003, 0x3008,
    0x3009, 0x300A, 0x300B, 0x300C, 0x300D, 0x300E, 0x300F, 0x3010, 0x3011, 0x3014, 0x3015, 0x3016,
    0x3017, 0x3018, 0x3019, 0x301A, 0x301B, 0x301C, 0x301D, 0x301E, 0x301F, 0x3030, 0x303E, 0x303F,
    0xFE4F, 0xFF01, 0xFF02, 0xFF03, 0xFF04, 0xFF05, 0xFF06, 0xFF07, 0xFF08, 0xFF09, 0xFF0A, 0xFF0B,
    0xFF0C, 0xFF0D, 0xFF0F, 0xFF1A, 0xFF1B, 0xFF1C, 0xFF1D, 0xFF1E, 0xFF1F, 0xFF20, 0xFF3B, 0xFF3C,
    0xFF3D, 0xFF3E, 0xFF3F, 0xFF40, 0xFF5B, 0xFF5C, 0xFF5D, 0xFF5E, 0xFF5F, 0xFF60, 0xFF61, 0xFF62,
    0xFF63, 0xFF64,
};

static int in_sorted(const int32_t *a, size_t n, int32_t c) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (a[mid] == c) return 1;
        if (a[mid] < c) lo = mid + 1;
        else hi = mid;
    }
    return 0;
}

/* Python's \d: a Unicode decimal digit (Nd). */
static int is_d(int32_t c) {
    if (c < 0x80) return c >= '0' && c <= '9';
    /* none below U+0660, none from U+1C5A to U+A61F (CJK) or from U+AC00 to U+FF0F (Hangul) */
    if (c < 0x660 || (c >= 0x1C5A && c < 0xA620) || (c >= 0xAC00 && c < 0xFF10)) return 0;
    return c < 0x110000 && utf8proc_category(c) == UTF8PROC_CATEGORY_ND;
}
/* Decimal digits come in runs of ten code points, 0 to 9 (some runs adjoin). */
static int digit_value(int32_t c) {
    if (c < 0x80) return c - '0';
    int k = 0;
    while (is_d(c - 1 - k)) k++;
    return k % 10;
}
static int is_ascii_letter(int32_t c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static int starts_number(int32_t c) { return c == '+' || is_d(c); }

/* text[i], or -1 past the end */
#define AT(t, n, i) ((i) < (n) ? (t)[i] : -1)

/* ---- reading a number (num2chn) ------------------------------------------------------ */

typedef struct {
    xtts_error *err;
    xtts_status st;
} zctx;

/* symbols: 0-9 digits, SYM_LIANG, SYM_POINT, SYM_UNIT + power */
enum { SYM_LIANG = 10, SYM_POINT = 11, SYM_UNIT = 100 };

static void value_symbols(const int32_t *s, size_t a, size_t b, cpv *sym) {
    size_t z = a;
    while (z < b && s[z] == '0') z++;
    size_t l = b - z;
    if (!l) return;
    if (l == 1) {
        if (b - a != 1) cpv_push(sym, 0);
        cpv_push(sym, digit_value(s[z]));
        return;
    }
    int p = 1;
    for (size_t i = 0; i < sizeof unit_powers / sizeof unit_powers[0]; i++)
        if ((size_t)unit_powers[i] < l) { p = unit_powers[i]; break; }
    value_symbols(s, a, b - (size_t)p, sym);
    cpv_push(sym, SYM_UNIT + p);
    value_symbols(s, b - (size_t)p, b, sym);
}

/* s: digits with at most one '.'. units: read with 十 百 千 ...; else digit by digit (then
 * two is never 两). */
static void read_number(zctx *c, const int32_t *s, size_t n, int units, cpv *out) {
    size_t ip = 0;
    while (ip < n && s[ip] != '.') ip++;
    cpv sym = {0}, r = {0};
    if (units && ip > 1) {
        size_t z = 0;
        while (z < ip && s[z] == '0') z++;
        if (ip - z > XTTS_ZH_MAX_DIGITS) {
            c->st = xtts_error_set(c->err, XTTS_EINPUT, "--normalize xtts: zh number of %zu digits (more than %d)",
                                   ip - z, XTTS_ZH_MAX_DIGITS);
            return;
        }
        value_symbols(s, 0, ip, &sym);
    } else {
        for (size_t i = 0; i < ip; i++) cpv_push(&sym, digit_value(s[i]));
    }
    if (ip + 1 < n) {
        cpv_push(&sym, SYM_POINT);
        for (size_t i = ip + 1; i < n; i++) cpv_push(&sym, digit_value(s[i]));
    }
    if (units) {
        /* a 2 before a unit other than 十, after nothing or a unit other than 十, is 两 */
        for (size_t i = 0; i < sym.n; i++) {
            if (sym.v[i] != 2 || i + 1 >= sym.n || sym.v[i + 1] < SYM_UNIT) continue;
            if (sym.v[i + 1] == SYM_UNIT + 1) continue;
            if (i > 0 && (sym.v[i - 1] < SYM_UNIT || sym.v[i - 1] == SYM_UNIT + 1)) continue;
            sym.v[i] = SYM_LIANG;
        }
    }
    for (size_t i = 0; i < sym.n; i++) {
        int32_t v = sym.v[i];
        cpv_push(&r, v < 10 ? digit_chars[v] : v == SYM_LIANG ? C_LIANG : v == SYM_POINT ? C_POINT : unit_char(v - SYM_UNIT));
    }
    if (r.n && r.v[0] == C_POINT) {
        cpv_push(out, C_ZERO);
        cpv_pushn(out, r.v, r.n);
    } else if (r.n >= 2 && r.v[0] == C_ONE && r.v[1] == C_TEN) {
        cpv_pushn(out, r.v + 1, r.n - 1); /* 一十五 -> 十五 */
    } else {
        cpv_pushn(out, r.v, r.n);
    }
    if (sym.failed || r.failed) out->failed = 1;
    cpv_free(&sym);
    cpv_free(&r);
}

/* ---- matches and str.replace(m, r, 1) one after another ------------------------------ */

typedef struct {
    size_t at, n;   /* the matched string: text[at, at + n) */
    size_t r, rn;   /* its replacement: pool[r, r + rn) */
} match;

typedef struct {
    match *m;
    size_t n, cap;
    cpv pool;
    int failed;
} matches;

static void add_match(matches *ms, size_t at, size_t n, size_t r) {
    if (ms->n == ms->cap) {
        size_t c = ms->cap ? ms->cap * 2 : 16;
        match *m = realloc(ms->m, c * sizeof *m);
        if (!m) { ms->failed = 1; return; }
        ms->m = m;
        ms->cap = c;
    }
    ms->m[ms->n++] = (match){at, n, r, ms->pool.n - r};
}

typedef struct {
    size_t *v;
    size_t n, cap;
    int failed;
} posv;

static void posv_push(posv *p, size_t i) {
    if (p->n == p->cap) {
        size_t c = p->cap ? p->cap * 2 : 16;
        size_t *v = realloc(p->v, c * sizeof *v);
        if (!v) { p->failed = 1; return; }
        p->v = v;
        p->cap = c;
    }
    p->v[p->n++] = i;
}

/* Append src to d, noting where a string to be replaced could start. */
static void append_noting(cpv *d, posv *starts, int (*can_start)(int32_t), const int32_t *src, size_t n) {
    size_t base = d->n;
    cpv_pushn(d, src, n);
    if (d->failed) return;
    for (size_t i = 0; i < n; i++)
        if (can_start(src[i])) posv_push(starts, base + i);
}

/* The text t[0, n) after each match's string, in order, had its first occurrence in the
 * text as it then was replaced. The result is built in d from the left: an occurrence after
 * what d holds is the usual case (the match's own place or an earlier leftover of the same
 * string), one inside d (or across its end) is rarer and spliced in. can_start(c) is true of
 * every first character a matched string can have. */
static void replace_each_first(const int32_t *t, size_t n, const matches *ms, int (*can_start)(int32_t), cpv *d) {
    posv starts = {0};
    size_t o = 0; /* t[o, n) is the part not yet in d */
    for (size_t k = 0; k < ms->n && !d->failed; k++) {
        const int32_t *nd = t + ms->m[k].at, *rep = ms->pool.v ? ms->pool.v + ms->m[k].r : NULL; /* "" for 00 */
        size_t len = ms->m[k].n, rn = ms->m[k].rn;
        if (!len) continue;
        size_t found = SIZE_MAX;
        for (size_t s = 0; s < starts.n && found == SIZE_MAX; s++) {
            size_t i = starts.v[s], j = 0;
            for (; j < len; j++) {
                size_t p = i + j;
                int32_t ch = p < d->n ? d->v[p] : AT(t, n, o + (p - d->n));
                if (ch != nd[j]) break;
            }
            if (j == len) found = i;
        }
        if (found != SIZE_MAX) {
            size_t in_d = d->n - found;
            if (in_d >= len) {
                if (rn > len && cpv_reserve(d, rn - len)) break;
                memmove(d->v + found + rn, d->v + found + len, (d->n - found - len) * sizeof *d->v);
                if (rn) memcpy(d->v + found, rep, rn * sizeof *rep);
                d->n = d->n - len + rn;
            } else {
                d->n = found;
                cpv_pushn(d, rep, rn);
                o += len - in_d;
            }
            starts.n = 0;
            for (size_t i = 0; i < d->n; i++)
                if (can_start(d->v[i])) posv_push(&starts, i);
        } else {
            size_t x = o;
            while (x < ms->m[k].at && !(t[x] == nd[0] && !memcmp(t + x, nd, len * sizeof *nd))) x++;
            append_noting(d, &starts, can_start, t + o, x - o);
            append_noting(d, &starts, can_start, rep, rn);
            o = x + len;
        }
        if (starts.failed) d->failed = 1;
    }
    cpv_pushn(d, t + o, n - o);
    free(starts.v);
}

/* ---- the patterns -------------------------------------------------------------------- */

static size_t digit_run(const int32_t *t, size_t n, size_t i) {
    while (i < n && is_d(t[i])) i++;
    return i;
}

/* [year 年][month 月[day 日|号]] at q: its length (0: none). */
static size_t date_at(const int32_t *t, size_t n, size_t q) {
    size_t i = q;
    int32_t a = AT(t, n, i), b = AT(t, n, i + 1);
    if ((a == '0' || a == '8' || a == '9') && is_d(b) && AT(t, n, i + 2) == C_NIAN) i += 3;
    else if (((a == '1' && b == '9') || (a == '2' && b == '0')) && is_d(AT(t, n, i + 2)) && is_d(AT(t, n, i + 3)) &&
             AT(t, n, i + 4) == C_NIAN)
        i += 5;
    size_t j;
    if (is_d(AT(t, n, i)) && is_d(AT(t, n, i + 1)) && AT(t, n, i + 2) == C_YUE) j = i + 3;
    else if (is_d(AT(t, n, i)) && AT(t, n, i + 1) == C_YUE) j = i + 2;
    else return i - q;
    int32_t d2 = AT(t, n, j + 2), d1 = AT(t, n, j + 1);
    if (is_d(AT(t, n, j)) && is_d(d1) && (d2 == C_RI || d2 == C_HAO)) j += 3;
    else if (is_d(AT(t, n, j)) && (d1 == C_RI || d1 == C_HAO)) j += 2;
    return j - q;
}

/* Money units, first alternative that matches: 亿 千万 百万 万 千 百 元 块 角 毛 分. */
static size_t money_unit_at(const int32_t *t, size_t n, size_t i) {
    int32_t a = AT(t, n, i), b = AT(t, n, i + 1);
    if (a == C_YI) return 1;
    if ((a == C_QIAN || a == C_BAI) && b == C_WAN) return 2;
    if (a == C_WAN || a == C_QIAN || a == C_BAI || a == C_YUAN || a == C_KUAI || a == C_JIAO || a == C_MAO || a == C_FEN)
        return 1;
    return 0;
}

/* After the number at k: [多余几] unit [digit [unit]]; the end, or 0 when it does not match. */
static size_t money_tail(const int32_t *t, size_t n, size_t k) {
    for (int with_approx = 1; with_approx >= 0; with_approx--) {
        size_t i = k;
        if (with_approx) {
            int32_t a = AT(t, n, i);
            if (a != C_DUO && a != C_YU && a != C_JI) continue;
            i++;
        }
        size_t u = money_unit_at(t, n, i);
        if (!u) continue;
        i += u;
        if (is_d(AT(t, n, i))) {
            i++;
            i += money_unit_at(t, n, i);
        }
        return i;
    }
    return 0;
}

/* number then [多余几] then a measure word at k? */
static int measure_tail(const int32_t *t, size_t n, size_t k) {
    for (int with_approx = 1; with_approx >= 0; with_approx--) {
        size_t i = k;
        if (with_approx) {
            int32_t a = AT(t, n, i);
            if (a != C_DUO && a != C_YU && a != C_JI) continue;
            i++;
        }
        int32_t a = AT(t, n, i), b = AT(t, n, i + 1);
        if (a >= 0 && in_sorted(measure_words, sizeof measure_words / sizeof measure_words[0], a)) return 1;
        if ((a == C_QIAN || a == C_WEI) && (b == C_KE || b == C_MI)) return 1;
    }
    return 0;
}

/* A mobile number starting at s (after one non-digit): the end of the number, which a
 * non-digit must follow, or 0. Country code options in Python's order. */
static size_t mobile_at(const int32_t *t, size_t n, size_t s) {
    size_t opts[5];
    int no = 0;
    size_t c = s;
    if (AT(t, n, c) == '+') c++;
    if (AT(t, n, c) == '8' && AT(t, n, c + 1) == '6') {
        if (AT(t, n, c + 2) == ' ') opts[no++] = c + 3;
        opts[no++] = c + 2;
    }
    opts[no++] = s;
    for (int k = 0; k < no; k++) {
        size_t i = opts[k];
        int32_t a = AT(t, n, i + 1), b = AT(t, n, i + 2);
        if (AT(t, n, i) != '1') continue;
        int ok = ((a == '3' || a == '8') && is_d(b)) || (a == '5' && b >= '0' && b <= '9' && b != '4') ||
                 (a == '7' && b >= '6' && b <= '8') || (a == '9' && (b == '8' || b == '9'));
        if (!ok) continue;
        size_t e = i + 3, j = 0;
        while (j < 8 && is_d(AT(t, n, e + j))) j++;
        if (j < 8) continue;
        e += 8;
        if (e < n && !is_d(t[e])) return e;
    }
    return 0;
}

/* A fixed-line number starting at s: [0 area [-]] [1-9] and 6 or 7 digits, a non-digit
 * after; its end or 0. */
static size_t fixed_at(const int32_t *t, size_t n, size_t s) {
    size_t opts[3];
    int no = 0;
    if (AT(t, n, s) == '0') {
        int32_t a = AT(t, n, s + 1), b = AT(t, n, s + 2);
        size_t e = 0;
        if (a == '1' && b == '0') e = s + 3;
        else if (a == '2' && b >= '1' && b <= '3') e = s + 3;
        else if (a >= '3' && a <= '9' && is_d(b) && is_d(AT(t, n, s + 3))) e = s + 4;
        if (e) {
            if (AT(t, n, e) == '-') opts[no++] = e + 1;
            opts[no++] = e;
        }
    }
    opts[no++] = s;
    for (int k = 0; k < no; k++) {
        size_t i = opts[k];
        int32_t a = AT(t, n, i);
        if (a < '1' || a > '9') continue;
        size_t j = 0;
        while (j < 7 && is_d(AT(t, n, i + 1 + j))) j++;
        for (size_t m = j; m >= 6; m--) {
            size_t e = i + 1 + m;
            if (e < n && !is_d(t[e])) return e;
        }
    }
    return 0;
}

/* ---- the steps ---------------------------------------------------------------------- */

static void put_digits(const int32_t *s, size_t n, cpv *out) {
    for (size_t i = 0; i < n; i++)
        if (is_d(s[i])) cpv_push(out, digit_chars[digit_value(s[i])]);
}

static void find_dates(zctx *c, const int32_t *t, size_t n, matches *ms) {
    for (size_t pos = 0; pos < n && c->st == XTTS_OK;) {
        size_t p = pos;
        while (p < n && is_d(t[p])) p++;
        if (p >= n) break;
        size_t q = p;
        while (q < n && !is_d(t[q])) q++;
        size_t g = q < n ? date_at(t, n, q) : 0;
        if (g) {
            const int32_t *s = t + q;
            size_t r = ms->pool.n, y = 0, i = 0;
            while (y < g && s[y] != C_NIAN) y++;
            if (y < g) {
                read_number(c, s, y, 0, &ms->pool);
                cpv_push(&ms->pool, C_NIAN);
                i = y + 1;
            }
            if (i < g) {
                size_t m = i;
                while (s[m] != C_YUE) m++;
                read_number(c, s + i, m - i, 1, &ms->pool);
                cpv_push(&ms->pool, C_YUE);
                if (m + 1 < g) {
                    read_number(c, s + m + 1, g - m - 2, 1, &ms->pool);
                    cpv_push(&ms->pool, s[g - 1]);
                }
            }
            add_match(ms, q, g, r);
        }
        pos = q + g;
    }
}

static void find_numbers(zctx *c, const int32_t *t, size_t n, matches *ms);

static void find_money(zctx *c, const int32_t *t, size_t n, matches *ms) {
    for (size_t pos = 0; pos < n && c->st == XTTS_OK;) {
        size_t p = pos;
        while (p < n && is_d(t[p])) p++;
        if (p >= n) break;
        size_t q = p;
        while (q < n && !is_d(t[q])) q++;
        if (q >= n) break;
        size_t e = digit_run(t, n, q), end = 0;
        if (AT(t, n, e) == '.' && is_d(AT(t, n, e + 1))) end = money_tail(t, n, digit_run(t, n, e + 1));
        if (!end) end = money_tail(t, n, e);
        if (!end) { pos = q; continue; }
        /* every number inside read as a number, one str.replace after another */
        matches inner = {0};
        find_numbers(c, t + q, end - q, &inner);
        size_t r = ms->pool.n;
        cpv tmp = {0};
        replace_each_first(t + q, end - q, &inner, starts_number, &tmp);
        cpv_pushn(&ms->pool, tmp.v, tmp.n);
        if (tmp.failed || inner.failed || inner.pool.failed) ms->failed = 1;
        cpv_free(&tmp);
        cpv_free(&inner.pool);
        free(inner.m);
        add_match(ms, q, end - q, r);
        pos = end;
    }
}

/* phone numbers: a run that at (after a non-digit) ends at the returned end, read digit by
 * digit */
static void find_phone(const int32_t *t, size_t n, matches *ms, size_t (*at)(const int32_t *, size_t, size_t)) {
    for (size_t p = 0; p + 1 < n;) {
        size_t e = !is_d(t[p]) ? at(t, n, p + 1) : 0;
        if (!e) { p++; continue; }
        size_t r = ms->pool.n;
        put_digits(t + p + 1, e - p - 1, &ms->pool);
        add_match(ms, p + 1, e - p - 1, r);
        p = e + 1;
    }
}

static void find_mobile(zctx *c, const int32_t *t, size_t n, matches *ms) {
    (void)c;
    find_phone(t, n, ms, mobile_at);
}

static void find_fixed(zctx *c, const int32_t *t, size_t n, matches *ms) {
    (void)c;
    find_phone(t, n, ms, fixed_at);
}

static void find_fractions(zctx *c, const int32_t *t, size_t n, matches *ms) {
    for (size_t p = 0; p < n && c->st == XTTS_OK;) {
        if (!is_d(t[p])) { p++; continue; }
        size_t q = digit_run(t, n, p);
        if (AT(t, n, q) == '/' && is_d(AT(t, n, q + 1))) {
            size_t e = digit_run(t, n, q + 1), r = ms->pool.n;
            read_number(c, t + q + 1, e - q - 1, 1, &ms->pool);
            cpv_push(&ms->pool, C_FEN);
            cpv_push(&ms->pool, C_ZHI);
            read_number(c, t + p, q - p, 1, &ms->pool);
            add_match(ms, p, e - p, r);
            p = e;
        } else p = q;
    }
}

static void find_percent(zctx *c, const int32_t *t, size_t n, matches *ms) {
    for (size_t p = 0; p < n && c->st == XTTS_OK;) {
        if (!is_d(t[p])) { p++; continue; }
        size_t q = digit_run(t, n, p), e = 0;
        if (AT(t, n, q) == '.' && is_d(AT(t, n, q + 1))) {
            size_t d = digit_run(t, n, q + 1);
            if (AT(t, n, d) == '%') e = d;
        }
        if (!e && AT(t, n, q) == '%') e = q;
        if (!e) { p = q; continue; }
        size_t r = ms->pool.n;
        cpv_push(&ms->pool, C_BAI);
        cpv_push(&ms->pool, C_FEN);
        cpv_push(&ms->pool, C_ZHI);
        read_number(c, t + p, e - p, 1, &ms->pool);
        add_match(ms, p, e + 1 - p, r);
        p = e + 1;
    }
}

static void find_measured(zctx *c, const int32_t *t, size_t n, matches *ms) {
    for (size_t p = 0; p < n && c->st == XTTS_OK;) {
        if (!is_d(t[p])) { p++; continue; }
        size_t q = digit_run(t, n, p), e = 0;
        if (AT(t, n, q) == '.' && is_d(AT(t, n, q + 1))) {
            size_t d = digit_run(t, n, q + 1);
            if (measure_tail(t, n, d)) e = d;
        }
        if (!e && measure_tail(t, n, q)) e = q;
        if (!e) { p = q; continue; }
        size_t r = ms->pool.n;
        read_number(c, t + p, e - p, 1, &ms->pool);
        add_match(ms, p, e - p, r);
        p = e; /* what the measure word took holds no digit */
    }
}

static void find_digit_runs(zctx *c, const int32_t *t, size_t n, matches *ms) {
    (void)c;
    for (size_t p = 0; p < n;) {
        if (!is_d(t[p])) { p++; continue; }
        size_t q = digit_run(t, n, p);
        while (q - p >= 4) {
            size_t m = q - p < 32 ? q - p : 32, r = ms->pool.n;
            put_digits(t + p, m, &ms->pool);
            add_match(ms, p, m, r);
            p += m;
        }
        p = q;
    }
}

static void find_numbers(zctx *c, const int32_t *t, size_t n, matches *ms) {
    for (size_t p = 0; p < n && c->st == XTTS_OK;) {
        if (!is_d(t[p])) { p++; continue; }
        size_t e = digit_run(t, n, p);
        if (AT(t, n, e) == '.' && is_d(AT(t, n, e + 1))) e = digit_run(t, n, e + 1);
        size_t r = ms->pool.n;
        read_number(c, t + p, e - p, 1, &ms->pool);
        add_match(ms, p, e - p, r);
        p = e;
    }
}

static void find_letters_two(zctx *c, const int32_t *t, size_t n, matches *ms) {
    (void)c;
    for (size_t p = 0; p < n;) {
        if (!is_ascii_letter(t[p])) { p++; continue; }
        size_t q = p;
        while (q < n && is_ascii_letter(t[q])) q++;
        if (AT(t, n, q) == C_ER && is_ascii_letter(AT(t, n, q + 1))) {
            size_t e = q + 1, r = ms->pool.n;
            while (e < n && is_ascii_letter(t[e])) e++;
            cpv_pushn(&ms->pool, t + p, q - p);
            cpv_push(&ms->pool, '2');
            cpv_pushn(&ms->pool, t + q + 1, e - q - 1);
            add_match(ms, p, e - p, r);
            p = e;
        } else p = q;
    }
}

/* One step: find the matches in *t, then replace each one's first occurrence in turn. */
static void step(zctx *c, cpv *t, void (*find)(zctx *, const int32_t *, size_t, matches *), int (*can_start)(int32_t)) {
    if (c->st != XTTS_OK || t->failed) return;
    matches ms = {0};
    find(c, t->v, t->n, &ms);
    if (ms.failed || ms.pool.failed) t->failed = 1;
    if (c->st == XTTS_OK && !t->failed && ms.n) {
        cpv d = {0};
        if (cpv_reserve(&d, t->n + 16)) t->failed = 1;
        else {
            replace_each_first(t->v, t->n, &ms, can_start, &d);
            if (d.failed) t->failed = 1;
            cpv_free(t);
            *t = d;
        }
    }
    cpv_free(&ms.pool);
    free(ms.m);
}

xtts_status xtts_zh_numbers_normalize(const char *text, size_t len, xtts_sb *out, xtts_error *err) {
    zctx c = {err, XTTS_OK};
    cpv t = {0};
    cpv_push(&t, '^');
    int any_digit = 0;
    for (size_t i = 0; i < len;) {
        utf8proc_int32_t ch;
        utf8proc_ssize_t k = utf8proc_iterate((const utf8proc_uint8_t *)text + i, (utf8proc_ssize_t)(len - i), &ch);
        if (k <= 0) {
            cpv_push(&t, RAW + (unsigned char)text[i]);
            i++;
        } else {
            cpv_push(&t, ch);
            any_digit |= is_d(ch);
            i += (size_t)k;
        }
    }
    cpv_push(&t, '$');
    if (any_digit) {
        step(&c, &t, find_dates, starts_number);
        step(&c, &t, find_money, starts_number);
        step(&c, &t, find_mobile, starts_number);
        step(&c, &t, find_fixed, starts_number);
        step(&c, &t, find_fractions, starts_number);
        for (size_t i = 0; i < t.n; i++)
            if (t.v[i] == C_FW_PERCENT) t.v[i] = '%';
        step(&c, &t, find_percent, starts_number);
        step(&c, &t, find_measured, starts_number);
        step(&c, &t, find_digit_runs, starts_number);
        step(&c, &t, find_numbers, starts_number);
    }
    step(&c, &t, find_letters_two, is_ascii_letter);
    if (c.st != XTTS_OK || t.failed) {
        cpv_free(&t);
        return c.st != XTTS_OK ? c.st : xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    }
    size_t a = 0, b = t.n;
    while (a < b && t.v[a] == '^') a++;
    while (b > a && t.v[b - 1] == '$') b--;
    for (size_t i = a; i < b; i++) {
        int32_t ch = t.v[i];
        if (ch >= RAW) {
            char byte = (char)(ch - RAW);
            xtts_sb_putn(out, &byte, 1);
            continue;
        }
        if (ch < 0x10000 && in_sorted(puncts, sizeof puncts / sizeof puncts[0], ch)) ch = ',';
        utf8proc_uint8_t buf[4];
        utf8proc_ssize_t k = utf8proc_encode_char(ch, buf);
        xtts_sb_putn(out, (const char *)buf, (size_t)k);
    }
    cpv_free(&t);
    if (out->failed) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    return XTTS_OK;
}
