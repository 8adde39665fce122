/* sentences.c — the text file's checks and its sentences (segment.h). The splitter works on
 * bytes: the marks it looks for are ASCII or a few fixed UTF-8 sequences, and every other byte
 * is copied as it is. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "prep/segment/segment.h"

/* Length of the valid UTF-8 sequence at p (1..4), or 0. */
static size_t utf8_len(const unsigned char *p, size_t left) {
    unsigned c = p[0];
    size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (!n || n > left) return 0;
    for (size_t i = 1; i < n; i++)
        if ((p[i] & 0xc0) != 0x80) return 0;
    if (n == 2 && c < 0xc2) return 0;
    if (n == 3 && ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] >= 0xa0))) return 0;
    if (n == 4 && ((c == 0xf0 && p[1] < 0x90) || c > 0xf4 || (c == 0xf4 && p[1] >= 0x90))) return 0;
    return n;
}

xtts_status xtts_segment_text_check(const char *text, size_t len, const char *name, size_t *skip, xtts_error *err) {
    const unsigned char *u = (const unsigned char *)text;
    *skip = 0;
    if (len >= 2 && ((u[0] == 0xff && u[1] == 0xfe) || (u[0] == 0xfe && u[1] == 0xff)))
        return xtts_error_set(err, XTTS_EINPUT, "%s: UTF-16 text; the text must be UTF-8 (iconv -f UTF-16 -t UTF-8)",
                              name);
    if (len >= 3 && u[0] == 0xef && u[1] == 0xbb && u[2] == 0xbf) *skip = 3;
    int line = 1, letters = 0;
    for (size_t i = *skip; i < len;) {
        if (u[i] == 0)
            return xtts_error_set(err, XTTS_EINPUT, "%s:%d: a NUL byte: not a UTF-8 text file (UTF-16 text must be converted: iconv -t UTF-8)",
                                  name, line);
        size_t n = utf8_len(u + i, len - i);
        if (!n)
            return xtts_error_set(err, XTTS_EINPUT,
                                  "%s:%d: byte 0x%02x at offset %zu is not UTF-8; convert the text (e.g. iconv -f latin1 -t UTF-8)",
                                  name, line, u[i], i);
        if (u[i] == '\n') line++;
        if (n > 1 || isalnum(u[i])) letters = 1;
        i += n;
    }
    if (!letters) return xtts_error_set(err, XTTS_EINPUT, "%s: no text (nothing but white space and marks)", name);
    return XTTS_OK;
}

/* ---- the splitter -------------------------------------------------------------------------- */

static const char *const abbreviations[] = {
    "mr", "mrs", "ms", "dr", "prof", "st", "jr", "sr", "mt", "no", "vs", "etc", "e.g", "i.e", "cf", "fig", "vol",
    "ch", "p", "pp", "approx", "dept", "inc", "ltd", "co", "gen", "col", "capt", "lt", "sgt", "rev", "hon", "gov",
    "sen", "rep", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec", "a.m", "p.m",
    "u.s", "u.k", "m", "mme", "mlle", "sra", "sr", "srta", "hr", "fr", "frau", "nr", "bzw", "usw", "z.b", "ca", "s"};

/* The word (letters and inner dots) that ends at the '.' at text[i], lower-cased, is an
 * abbreviation or a single letter (an initial). */
static int before_is_abbreviation(const char *t, size_t i) {
    size_t b = i;
    while (b > 0 && (isalpha((unsigned char)t[b - 1]) || t[b - 1] == '.')) b--;
    size_t n = i - b;
    if (n == 0 || n > 8) return 0;
    char w[9];
    for (size_t k = 0; k < n; k++) w[k] = (char)tolower((unsigned char)t[b + k]);
    w[n] = 0;
    if (n == 1 && isupper((unsigned char)t[b])) return 1; /* an initial: "J. R. R. Tolkien" */
    for (size_t k = 0; k < sizeof abbreviations / sizeof *abbreviations; k++)
        if (!strcmp(w, abbreviations[k])) return 1;
    return 0;
}

/* Bytes of a closing quote or bracket at p (0 when none). */
static size_t closer_len(const char *p, const char *end) {
    if (p >= end) return 0;
    if (*p == '"' || *p == '\'' || *p == ')' || *p == ']') return 1;
    static const char *const closers[] = {"\xe2\x80\x9d", "\xe2\x80\x99", "\xc2\xbb", "\xe3\x80\x8d", "\xe3\x80\x8f",
                                          "\xef\xbc\x89"};
    for (size_t k = 0; k < sizeof closers / sizeof *closers; k++) {
        size_t n = strlen(closers[k]);
        if ((size_t)(end - p) >= n && !memcmp(p, closers[k], n)) return n;
    }
    return 0;
}

/* Bytes of a sentence end at t+i (0 when none); CJK marks end without a following space. */
static size_t end_mark_len(const char *t, size_t i, size_t len, int *cjk) {
    static const char *const cjk_marks[] = {"\xe3\x80\x82", "\xef\xbc\x81", "\xef\xbc\x9f"}; /* 。！？ */
    *cjk = 0;
    for (size_t k = 0; k < 3; k++)
        if (len - i >= 3 && !memcmp(t + i, cjk_marks[k], 3)) { *cjk = 1; return 3; }
    if (len - i >= 3 && !memcmp(t + i, "\xe2\x80\xa6", 3)) return 3; /* … */
    if (t[i] == '!' || t[i] == '?') return 1;
    if (t[i] != '.') return 0;
    if (i > 0 && isdigit((unsigned char)t[i - 1]) && i + 1 < len && isdigit((unsigned char)t[i + 1])) return 0;
    if (before_is_abbreviation(t, i)) return 0;
    return 1;
}

/* After the end mark (and more marks and closers) at j: white space then a sentence start
 * (not a lower-case letter), or the text's end. Returns where the sentence ends, or 0. */
static size_t sentence_end_at(const char *t, size_t j, size_t len, int cjk) {
    int dummy;
    for (;;) {
        size_t n = closer_len(t + j, t + len);
        if (!n && j < len && (t[j] == '.' || t[j] == '!' || t[j] == '?')) n = 1;
        if (!n && j < len) n = end_mark_len(t, j, len, &dummy) == 3 ? 3 : 0;
        if (!n) break;
        j += n;
    }
    if (j >= len || cjk) return j;
    if (!isspace((unsigned char)t[j])) return 0;
    size_t k = j;
    while (k < len && isspace((unsigned char)t[k])) k++;
    if (k < len && islower((unsigned char)t[k])) return 0;
    return j;
}

static xtts_status push_sentence(xtts_sentences *out, const char *t, size_t b, size_t e, int line, int para) {
    xtts_sb sb = {0};
    int space = 0;
    for (size_t i = b; i < e; i++) {
        if (isspace((unsigned char)t[i])) {
            /* a word hyphenated at a line's end ("forty-\ntwo") is one word */
            int wrapped = t[i] == '\n' && sb.len >= 2 && sb.s[sb.len - 1] == '-' && isalpha((unsigned char)sb.s[sb.len - 2]);
            if (!wrapped || space != 2) space = wrapped ? 2 : space == 2 ? 2 : sb.len > 0;
            continue;
        }
        if (space == 1) xtts_sb_putc(&sb, ' ');
        space = 0;
        xtts_sb_putc(&sb, t[i]);
    }
    if (sb.failed) { xtts_sb_free(&sb); return XTTS_ENOMEM; }
    if (!sb.len) return XTTS_OK;
    if (out->n == out->cap) {
        size_t c = out->cap ? 2 * out->cap : 64;
        xtts_sentence *s = realloc(out->s, c * sizeof *s);
        if (!s) { xtts_sb_free(&sb); return XTTS_ENOMEM; }
        out->s = s;
        out->cap = c;
    }
    out->s[out->n++] = (xtts_sentence){sb.s, line, para};
    return XTTS_OK;
}

/* One pass; by_lines: every line end ends a sentence too. */
static xtts_status split_pass(const char *t, size_t len, int by_lines, xtts_sentences *out, int *found_end) {
    size_t b = 0;
    int line = 1, para = 0, start_line = 1;
    for (size_t i = 0; i < len;) {
        int cjk = 0;
        size_t m = end_mark_len(t, i, len, &cjk);
        size_t e = m ? sentence_end_at(t, i + m, len, cjk) : 0;
        int para_break = t[i] == '\n' && (by_lines || (i + 1 < len && (t[i + 1] == '\n' || (t[i + 1] == '\r' && i + 2 < len && t[i + 2] == '\n'))));
        if (e) *found_end = 1;
        if (e || para_break) {
            size_t stop = e ? e : i;
            if (push_sentence(out, t, b, stop, start_line, para)) return XTTS_ENOMEM;
            for (size_t k = i; k < stop; k++) line += t[k] == '\n';
            i = stop;
            while (i < len && isspace((unsigned char)t[i])) {
                if (t[i] == '\n') line++;
                i++;
            }
            if (para_break) para++;
            b = i;
            start_line = line;
            continue;
        }
        if (t[i] == '\n') line++;
        if (b == i && isspace((unsigned char)t[i])) { b++; start_line = line; }
        i++;
    }
    return push_sentence(out, t, b, len, start_line, para) ? XTTS_ENOMEM : XTTS_OK;
}

xtts_status xtts_sentences_split(const char *text, size_t len, xtts_sentences *out, xtts_error *err) {
    memset(out, 0, sizeof *out);
    int found = 0;
    if (split_pass(text, len, 0, out, &found)) goto oom;
    if (!found) {
        xtts_sentences_free(out);
        memset(out, 0, sizeof *out);
        if (split_pass(text, len, 1, out, &found)) goto oom;
        out->no_sentence_end = 1;
    }
    return XTTS_OK;
oom:
    xtts_sentences_free(out);
    memset(out, 0, sizeof *out);
    return xtts_error_set(err, XTTS_ENOMEM, "out of memory splitting sentences");
}

void xtts_sentences_free(xtts_sentences *s) {
    if (!s) return;
    for (size_t i = 0; i < s->n; i++) free(s->s[i].text);
    free(s->s);
    s->s = NULL;
    s->n = s->cap = 0;
}
