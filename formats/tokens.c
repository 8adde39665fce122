/* tokens.c — token stream codec (formats/tokens.md, version 1). See tokens.h. */
#include "formats/tokens.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct xtts_tokens_reader {
    FILE *f;
    char name[256];
    size_t line_no;
    uint64_t bytes;       /* bytes read so far (bounded by XTTS_TOKENS_MAX_BYTES) */
    char *line;           /* current line, unescaped in place */
    size_t line_cap;
    char *in_buf;         /* what was read of the stream and not taken yet: in_buf[in_pos..in_len) */
    size_t in_pos, in_len;
    uint64_t in_at;       /* the stream offset of in_buf[0] */
    int32_t *ids;
    size_t ids_cap;
    xtts_tokens_header header;
    int n_fields;         /* 6 plus the fields the header's fields= declares */
    int split_field;      /* index of the split field, or -1 */
    int text_field;       /* index of the original-text field, or -1 */
    int lenient;
    char reject[96];
};

static const char *const required_keys[] = {"tokenizer", "vocab_hash", "vocab_size", "lang", "max_tokens", "pad_id"};
#define N_REQUIRED (sizeof required_keys / sizeof required_keys[0])

int xtts_utf8_valid(const char *str, size_t n) {
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0;
    while (i < n) {
        unsigned c = s[i];
        if (c < 0x80) { i++; continue; }
        size_t len;
        uint32_t cp;
        if (c >= 0xC2 && c <= 0xDF) { len = 2; cp = c & 0x1F; }
        else if (c >= 0xE0 && c <= 0xEF) { len = 3; cp = c & 0x0F; }
        else if (c >= 0xF0 && c <= 0xF4) { len = 4; cp = c & 0x07; }
        else return 0;
        if (n - i < len) return 0;
        for (size_t k = 1; k < len; k++) {
            if ((s[i + k] & 0xC0) != 0x80) return 0;
            cp = (cp << 6) | (s[i + k] & 0x3F);
        }
        if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF ||
            (cp >= 0xD800 && cp <= 0xDFFF))
            return 0;
        i += len;
    }
    return 1;
}

void xtts_tokens_header_defaults(xtts_tokens_header *h) {
    memset(h, 0, sizeof *h);
    h->version = XTTS_TOKENS_VERSION;
    h->max_tokens = 512;
    h->pad_id = 0;
}

static int is_required_key(const char *k) {
    for (size_t i = 0; i < N_REQUIRED; i++)
        if (!strcmp(k, required_keys[i])) return 1;
    return 0;
}

static int key_ok(const char *k) {
    size_t n = strlen(k);
    if (n == 0 || n >= sizeof(((xtts_tokens_kv *)0)->key)) return 0;
    for (size_t i = 0; i < n; i++) {
        char c = k[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.')) return 0;
    }
    return 1;
}

static int value_ok(const char *v, size_t max) {
    size_t n = strlen(v);
    if (n == 0 || n >= max) return 0;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)v[i] < 0x20 || v[i] == 0x7f) return 0;
    return xtts_utf8_valid(v, n);
}

xtts_status xtts_tokens_header_set(xtts_tokens_header *h, const char *key, const char *value, xtts_error *err) {
    if (!key_ok(key) || is_required_key(key))
        return xtts_error_set(err, XTTS_EINPUT, "token stream header: bad extra key '%s'", key);
    if (!value_ok(value, sizeof h->extra[0].value))
        return xtts_error_set(err, XTTS_EINPUT, "token stream header: bad value for key '%s'", key);
    for (size_t i = 0; i < h->n_extra; i++) {
        if (!strcmp(h->extra[i].key, key)) {
            snprintf(h->extra[i].value, sizeof h->extra[i].value, "%s", value);
            return XTTS_OK;
        }
    }
    if (h->n_extra >= XTTS_TOKENS_MAX_EXTRA)
        return xtts_error_set(err, XTTS_ERANGE, "token stream header: more than %d extra keys", XTTS_TOKENS_MAX_EXTRA);
    snprintf(h->extra[h->n_extra].key, sizeof h->extra[0].key, "%s", key);
    snprintf(h->extra[h->n_extra].value, sizeof h->extra[0].value, "%s", value);
    h->n_extra++;
    return XTTS_OK;
}

const char *xtts_tokens_header_get(const xtts_tokens_header *h, const char *key) {
    for (size_t i = 0; i < h->n_extra; i++)
        if (!strcmp(h->extra[i].key, key)) return h->extra[i].value;
    return NULL;
}

static int name_ok(const char *s) {
    if (!*s) return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_' || *s == '-')) return 0;
    return 1;
}

static int hash_ok(const char *s) {
    if (strncmp(s, "sha256:", 7)) return 0;
    s += 7;
    size_t n = 0;
    for (; s[n]; n++)
        if (!((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f'))) return 0;
    return n == 64;
}

xtts_status xtts_tokens_header_validate(const xtts_tokens_header *h, const char *name, xtts_error *err) {
    if (h->version != XTTS_TOKENS_VERSION)
        return xtts_error_set(err, XTTS_EMISMATCH, "%s:1: token stream version %d is not supported (this reader knows %d)",
                              name, h->version, XTTS_TOKENS_VERSION);
    if (!name_ok(h->tokenizer) || strlen(h->tokenizer) >= sizeof h->tokenizer)
        return xtts_error_set(err, XTTS_EINPUT, "%s:1: header: tokenizer must be a name of [a-z0-9_-]", name);
    if (!hash_ok(h->vocab_hash))
        return xtts_error_set(err, XTTS_EINPUT, "%s:1: header: vocab_hash must be sha256: and 64 hex digits", name);
    if (h->vocab_size < 1)
        return xtts_error_set(err, XTTS_EINPUT, "%s:1: header: vocab_size must be at least 1", name);
    if (strcmp(h->lang_mode, "auto") && strcmp(h->lang_mode, "column") && !xtts_lang_tag_valid(h->lang_mode))
        return xtts_error_set(err, XTTS_EINPUT, "%s:1: header: lang must be a language code, auto or column", name);
    const char *fields = xtts_tokens_header_get(h, "fields");
    if (fields && strcmp(fields, "split") && strcmp(fields, "text") && strcmp(fields, "split,text"))
        return xtts_error_set(err, XTTS_EINPUT,
                              "%s:1: header: fields=%.40s is not known (this reader knows split, text and split,text)", name, fields);
    if (h->max_tokens < 1 || h->max_tokens > XTTS_TOKENS_MAX_IDS)
        return xtts_error_set(err, XTTS_EINPUT, "%s:1: header: max_tokens must be in 1..%d", name, XTTS_TOKENS_MAX_IDS);
    if (h->pad_id < 0 || h->pad_id >= h->vocab_size)
        return xtts_error_set(err, XTTS_EINPUT, "%s:1: header: pad_id must be in 0..vocab_size-1", name);
    if (h->n_extra > XTTS_TOKENS_MAX_EXTRA)
        return xtts_error_set(err, XTTS_EINPUT, "%s:1: header: too many extra keys", name);
    for (size_t i = 0; i < h->n_extra; i++) {
        if (!key_ok(h->extra[i].key) || is_required_key(h->extra[i].key) ||
            !value_ok(h->extra[i].value, sizeof h->extra[i].value))
            return xtts_error_set(err, XTTS_EINPUT, "%s:1: header: bad extra pair '%.31s'", name, h->extra[i].key);
        for (size_t j = 0; j < i; j++)
            if (!strcmp(h->extra[i].key, h->extra[j].key))
                return xtts_error_set(err, XTTS_EINPUT, "%s:1: header: key '%s' given twice", name, h->extra[i].key);
    }
    return XTTS_OK;
}

xtts_status xtts_tokens_write_header(FILE *f, const xtts_tokens_header *h, xtts_error *err) {
    xtts_status st = xtts_tokens_header_validate(h, "token stream", err);
    if (st) return st;
    fprintf(f, "%s %d\ttokenizer=%s\tvocab_hash=%s\tvocab_size=%d\tlang=%s\tmax_tokens=%d\tpad_id=%d", XTTS_TOKENS_MAGIC,
            h->version, h->tokenizer, h->vocab_hash, h->vocab_size, h->lang_mode, h->max_tokens, h->pad_id);
    for (size_t i = 0; i < h->n_extra; i++) fprintf(f, "\t%s=%s", h->extra[i].key, h->extra[i].value);
    fputc('\n', f);
    if (ferror(f)) return xtts_error_set(err, XTTS_EIO, "token stream: write failed: %s", strerror(errno));
    return XTTS_OK;
}

/* ---- record formatting ------------------------------------------------------ */

static int reserve(char **buf, size_t *cap, size_t need) {
    if (need <= *cap) return 0;
    size_t c = *cap ? *cap : 256;
    while (c < need) c *= 2;
    char *nb = realloc(*buf, c);
    if (!nb) return -1;
    *buf = nb;
    *cap = c;
    return 0;
}

/* Escaped copy of s; returns bytes written. dst must hold 2*strlen(s). */
static size_t escape_into(char *dst, const char *s) {
    size_t k = 0;
    for (; *s; s++) {
        switch (*s) {
        case '\\': dst[k++] = '\\'; dst[k++] = '\\'; break;
        case '\t': dst[k++] = '\\'; dst[k++] = 't'; break;
        case '\n': dst[k++] = '\\'; dst[k++] = 'n'; break;
        case '\r': dst[k++] = '\\'; dst[k++] = 'r'; break;
        default: dst[k++] = *s;
        }
    }
    return k;
}

xtts_status xtts_tokens_format_record(const xtts_tokens_record *rec, char **buf, size_t *cap, size_t *len,
                                      xtts_error *err) {
    const char *id = rec->id ? rec->id : "";
    if (!*id) return xtts_error_set(err, XTTS_EINPUT, "token stream: record with an empty id");
    const char *fields[5] = {id, rec->speaker ? rec->speaker : "", rec->lang ? rec->lang : "",
                             rec->audio_path ? rec->audio_path : "", rec->text ? rec->text : ""};
    static const char *const names[5] = {"id", "speaker", "lang", "audio_path", "text"};
    size_t flen[5], need = 16;
    for (int i = 0; i < 5; i++) {
        flen[i] = strlen(fields[i]);
        if (!xtts_utf8_valid(fields[i], flen[i]))
            return xtts_error_set(err, XTTS_EINPUT, "record %.200s: %s is not valid UTF-8", id, names[i]);
        for (size_t k = 0; k < flen[i]; k++) {
            unsigned char c = (unsigned char)fields[i][k];
            if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f)
                return xtts_error_set(err, XTTS_EINPUT, "record %.200s: control character in %s", id, names[i]);
        }
        need += 2 * flen[i] + 1;
    }
    if (!xtts_lang_tag_valid(fields[2]))
        return xtts_error_set(err, XTTS_EINPUT, "record %.200s: unknown language '%.40s'", id, fields[2]);
    const char *split = rec->split;
    if (split && *split && strcmp(split, "train") && strcmp(split, "val") && strcmp(split, "test"))
        return xtts_error_set(err, XTTS_EINPUT, "record %.200s: split must be train, val, test or empty", id);
    if (split) need += strlen(split) + 1;
    if (!flen[3]) return xtts_error_set(err, XTTS_EINPUT, "record %.200s: empty audio path", id);
    if (!flen[4]) return xtts_error_set(err, XTTS_EINPUT, "record %.200s: empty text", id);
    if (rec->n_tokens == 0 || !rec->tokens) return xtts_error_set(err, XTTS_EINPUT, "record %.200s: no tokens", id);
    need += rec->n_tokens * 12;
    if (reserve(buf, cap, need)) return xtts_error_set(err, XTTS_ENOMEM, "record %.200s: out of memory", id);
    char *p = *buf;
    size_t k = 0;
    for (int i = 0; i < 4; i++) {
        k += escape_into(p + k, fields[i]);
        p[k++] = '\t';
    }
    for (size_t i = 0; i < rec->n_tokens; i++) {
        int32_t v = rec->tokens[i];
        if (v < 0) return xtts_error_set(err, XTTS_EINPUT, "record %.200s: negative token id %d", id, (int)v);
        if (i) p[k++] = ' ';
        char tmp[12];
        int n = 0;
        do { tmp[n++] = (char)('0' + v % 10); v /= 10; } while (v);
        while (n) p[k++] = tmp[--n];
    }
    p[k++] = '\t';
    k += escape_into(p + k, fields[4]);
    if (split) {
        p[k++] = '\t';
        memcpy(p + k, split, strlen(split));
        k += strlen(split);
    }
    if (rec->orig_text) { /* the original-text field (header fields=...text) */
        size_t ol = strlen(rec->orig_text);
        if (!xtts_utf8_valid(rec->orig_text, ol))
            return xtts_error_set(err, XTTS_EINPUT, "record %.200s: original text is not valid UTF-8", id);
        for (size_t i = 0; i < ol; i++) {
            unsigned char c = (unsigned char)rec->orig_text[i];
            if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f)
                return xtts_error_set(err, XTTS_EINPUT, "record %.200s: control character in the original text", id);
        }
        if (reserve(buf, cap, k + 2 * ol + 4)) return xtts_error_set(err, XTTS_ENOMEM, "record %.200s: out of memory", id);
        p = *buf;
        p[k++] = '\t';
        k += escape_into(p + k, rec->orig_text);
    }
    p[k++] = '\n';
    p[k] = 0;
    *len = k;
    return XTTS_OK;
}

/* ---- reading ---------------------------------------------------------------- */

#define READ_BUF (1u << 16)

/* The next block of the stream into in_buf: 1, 0 at its end, -1 on a read error. */
static int refill(xtts_tokens_reader *r) {
    if (!r->in_buf && !(r->in_buf = malloc(READ_BUF))) return errno = ENOMEM, -1;
    r->in_at += r->in_len;
    r->in_pos = 0;
    r->in_len = fread(r->in_buf, 1, READ_BUF, r->f);
    return r->in_len ? 1 : ferror(r->f) ? -1 : 0;
}

/* Room in r->line for need bytes. */
static int line_room(xtts_tokens_reader *r, size_t need, xtts_error *err) {
    if (need <= r->line_cap) return 0;
    size_t nc = r->line_cap ? r->line_cap : 4096;
    while (nc < need) nc *= 2;
    char *nl = realloc(r->line, nc);
    if (!nl) return xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", r->name), -1;
    r->line = nl;
    r->line_cap = nc;
    return 0;
}

/* Read one line into r->line without its '\n' (and a final '\r' removed). Returns 1, 0 at
 * EOF, -1 on error. The stream is read a block at a time, the line found with memchr. */
static int read_line(xtts_tokens_reader *r, size_t *out_len, xtts_error *err) {
    size_t n = 0;
    int any = 0;
    for (;;) {
        if (r->in_pos == r->in_len) {
            int rc = refill(r);
            if (rc < 0) {
                xtts_error_set(err, XTTS_EIO, "%s:%zu: read error: %s", r->name, r->line_no + 1, strerror(errno));
                return -1;
            }
            if (rc == 0) break;
        }
        const char *s = r->in_buf + r->in_pos, *nl = memchr(s, '\n', r->in_len - r->in_pos);
        size_t take = nl ? (size_t)(nl - s) : r->in_len - r->in_pos;
        any = 1;
        if (n + take + 1 > XTTS_TOKENS_MAX_LINE) {
            /* stop here: draining the rest of the line never ends on an endless input */
            r->line_no++;
            xtts_error_set(err, XTTS_EINPUT, "%s:%zu: line longer than %u bytes", r->name, r->line_no,
                           XTTS_TOKENS_MAX_LINE);
            return -1;
        }
        if (line_room(r, n + take + 2, err)) return -1;
        memcpy(r->line + n, s, take);
        n += take;
        r->in_pos += take + (nl != NULL);
        if (nl) break;
    }
    if (!any) return 0;
    r->line_no++;
    r->bytes += n + 1;
    if (r->bytes > XTTS_TOKENS_MAX_BYTES) {
        xtts_error_set(err, XTTS_EINPUT, "%s:%zu: token stream longer than %llu bytes", r->name, r->line_no,
                       (unsigned long long)XTTS_TOKENS_MAX_BYTES);
        return -1;
    }
    if (!r->line) {
        r->line = malloc(16);
        if (!r->line) return xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", r->name), -1;
        r->line_cap = 16;
    }
    if (n && r->line[n - 1] == '\r') n--;
    r->line[n] = 0;
    *out_len = n;
    return 1;
}

/* Unescape s in place. Returns 0, or -1 on a bad escape or a raw control character. */
static int unescape(char *s) {
    char *w = s;
    for (char *p = s; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c == '\\') {
            p++;
            switch (*p) {
            case '\\': *w++ = '\\'; break;
            case 't': *w++ = '\t'; break;
            case 'n': *w++ = '\n'; break;
            case 'r': *w++ = '\r'; break;
            default: return -1;
            }
        } else if (c < 0x20 || c == 0x7f) {
            return -1;
        } else {
            *w++ = (char)c;
        }
    }
    *w = 0;
    return 0;
}

static int parse_int_field(const char *s, long lo, long hi, int *out) {
    long v;
    if (xtts_parse_long(s, lo, hi, &v)) return -1;
    *out = (int)v;
    return 0;
}

static xtts_status parse_header(xtts_tokens_reader *r, char *line, xtts_error *err) {
    xtts_tokens_header *h = &r->header;
    xtts_tokens_header_defaults(h);
    h->max_tokens = 0;
    h->pad_id = -1;
    size_t ml = strlen(XTTS_TOKENS_MAGIC);
    if (strncmp(line, XTTS_TOKENS_MAGIC, ml) || line[ml] != ' ')
        return xtts_error_set(err, XTTS_EINPUT,
                              "%.140s:1: not a token stream (first line must start with '%s 1'); a metadata file or "
                              "dataset folder is read by xtts-tokenize, which writes the token stream: "
                              "xtts-tokenize %.140s | xtts-melcache --out DIR",
                              r->name, XTTS_TOKENS_MAGIC, strcmp(r->name, "-") ? r->name : "METADATA");
    char *p = line + ml + 1;
    char *tab = strchr(p, '\t');
    if (tab) *tab = 0;
    if (parse_int_field(p, 0, 1000000, &h->version))
        return xtts_error_set(err, XTTS_EINPUT, "%s:1: bad token stream version '%.20s'", r->name, p);
    if (h->version != XTTS_TOKENS_VERSION)
        return xtts_error_set(err, XTTS_EMISMATCH, "%s:1: token stream version %d is not supported (this reader knows %d)",
                              r->name, h->version, XTTS_TOKENS_VERSION);
    unsigned seen = 0;
    while (tab) {
        p = tab + 1;
        tab = strchr(p, '\t');
        if (tab) *tab = 0;
        char *eq = strchr(p, '=');
        if (!eq || eq == p) return xtts_error_set(err, XTTS_EINPUT, "%s:1: header field '%.40s' is not key=value", r->name, p);
        *eq = 0;
        const char *k = p, *v = eq + 1;
        size_t ri;
        for (ri = 0; ri < N_REQUIRED; ri++)
            if (!strcmp(k, required_keys[ri])) break;
        if (ri < N_REQUIRED) {
            if (seen & (1u << ri)) return xtts_error_set(err, XTTS_EINPUT, "%s:1: header key '%s' given twice", r->name, k);
            seen |= 1u << ri;
        }
        int bad = 0;
        switch (ri) {
        case 0: bad = strlen(v) >= sizeof h->tokenizer; if (!bad) strcpy(h->tokenizer, v); break;
        case 1: bad = strlen(v) >= sizeof h->vocab_hash; if (!bad) strcpy(h->vocab_hash, v); break;
        case 2: bad = parse_int_field(v, 1, INT32_MAX, &h->vocab_size); break;
        case 3: bad = strlen(v) >= sizeof h->lang_mode; if (!bad) strcpy(h->lang_mode, v); break;
        case 4: bad = parse_int_field(v, 1, XTTS_TOKENS_MAX_IDS, &h->max_tokens); break;
        case 5: bad = parse_int_field(v, 0, INT32_MAX, &h->pad_id); break;
        default: {
            xtts_error e2;
            if (xtts_tokens_header_get(h, k))
                return xtts_error_set(err, XTTS_EINPUT, "%s:1: header key '%.31s' given twice", r->name, k);
            if (xtts_tokens_header_set(h, k, v, &e2))
                return xtts_error_set(err, XTTS_EINPUT, "%s:1: %s", r->name, e2.msg);
        }
        }
        if (bad) return xtts_error_set(err, XTTS_EINPUT, "%s:1: header: bad value for %s: '%.40s'", r->name, k, v);
    }
    for (size_t ri = 0; ri < N_REQUIRED; ri++)
        if (!(seen & (1u << ri)))
            return xtts_error_set(err, XTTS_EINPUT, "%s:1: header lacks the required key '%s'", r->name, required_keys[ri]);
    return xtts_tokens_header_validate(h, r->name, err);
}

xtts_status xtts_tokens_reader_open(FILE *f, const char *name, xtts_tokens_reader **out, xtts_error *err) {
    *out = NULL;
    xtts_tokens_reader *r = calloc(1, sizeof *r);
    if (!r) return xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", name);
    r->f = f;
    snprintf(r->name, sizeof r->name, "%s", name ? name : "-");
    size_t n;
    int rc = read_line(r, &n, err);
    if (rc == 0) {
        xtts_error_set(err, XTTS_EINPUT, "%s: empty token stream (no header line)", r->name);
        xtts_tokens_reader_close(r);
        return XTTS_EINPUT;
    }
    if (rc < 0) {
        xtts_status st = err ? err->code : XTTS_EINPUT;
        xtts_tokens_reader_close(r);
        return st;
    }
    /* A UTF-8 byte order mark before the magic is tolerated. */
    char *line = r->line;
    if (!strncmp(line, "\xEF\xBB\xBF", 3)) line += 3;
    xtts_status st = parse_header(r, line, err);
    if (st) {
        xtts_tokens_reader_close(r);
        return st;
    }
    const char *extra = xtts_tokens_header_get(&r->header, "fields");
    r->split_field = r->text_field = -1;
    r->n_fields = 6;
    if (extra && strstr(extra, "split")) r->split_field = r->n_fields++;
    if (extra && strstr(extra, "text")) r->text_field = r->n_fields++;
    *out = r;
    return XTTS_OK;
}

const xtts_tokens_header *xtts_tokens_reader_header(const xtts_tokens_reader *r) { return &r->header; }

size_t xtts_tokens_reader_line(const xtts_tokens_reader *r) { return r->line_no; }

void xtts_tokens_reader_lenient(xtts_tokens_reader *r, int on) { r->lenient = on != 0; }

void xtts_tokens_reader_tell(const xtts_tokens_reader *r, xtts_tokens_pos *pos) {
    pos->offset = r->bytes;
    pos->line_no = r->line_no;
}

xtts_status xtts_tokens_reader_seek(xtts_tokens_reader *r, const xtts_tokens_pos *pos, xtts_error *err) {
    if (pos->offset >= r->in_at && pos->offset - r->in_at <= r->in_len) {
        r->in_pos = (size_t)(pos->offset - r->in_at); /* in the block read ahead: no read */
    } else {
        if (pos->offset > (uint64_t)INT64_MAX || fseeko(r->f, (off_t)pos->offset, SEEK_SET) != 0)
            return xtts_error_set(err, XTTS_EIO, "%s: cannot return to line %zu: %s", r->name, pos->line_no + 1,
                                  strerror(errno));
        r->in_at = pos->offset; /* what was read ahead is not the stream from there */
        r->in_pos = r->in_len = 0;
    }
    r->bytes = pos->offset;
    r->line_no = pos->line_no;
    return XTTS_OK;
}

void xtts_tokens_reader_close(xtts_tokens_reader *r) {
    if (!r) return;
    free(r->line);
    free(r->in_buf);
    free(r->ids);
    free(r);
}

static int record_error(xtts_tokens_reader *r, xtts_error *err, const char *what, const char *field) {
    xtts_error_set(err, XTTS_EINPUT, "%s:%zu: %s%s", r->name, r->line_no, what, field ? field : "");
    return -1;
}

/* Cut the line (n bytes, no NUL inside) at its tabs into the stream's fields, their lengths
 * into len; -1 when it has another number of them. */
static int split_fields(xtts_tokens_reader *r, char *line, size_t n, char *f[8], size_t len[8], xtts_error *err) {
    int nf = 0;
    const int want = r->n_fields;
    char *p = line, *end = line + n;
    for (;;) {
        char *tab = memchr(p, '\t', (size_t)(end - p));
        f[nf] = p;
        len[nf] = (size_t)((tab ? tab : end) - p);
        nf++;
        if (!tab) break;
        if (nf == want) {
            char msg[64];
            snprintf(msg, sizeof msg, "more than %d tab-separated fields", want);
            return record_error(r, err, msg, NULL);
        }
        *tab = 0;
        p = tab + 1;
    }
    if (nf != want) {
        char msg[64];
        snprintf(msg, sizeof msg, "expected %d tab-separated fields, found %d", want, nf);
        return record_error(r, err, msg, NULL);
    }
    return 0;
}

/* 1 when the n bytes at s are all printable ASCII without a backslash (0x20-0x7e but '\\'):
 * valid UTF-8 with nothing to unescape, the usual field. Eight bytes a step (the tests for
 * a byte below 0x20, or equal to '\\' or 0x7f, in a word are exact: Mycroft's, as in
 * "Bit Twiddling Hacks"). */
static int plain_ascii(const char *s, size_t n) {
    const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w, bs, del;
        memcpy(&w, s + i, 8);
        bs = w ^ (ones * 0x5c);
        del = w ^ (ones * 0x7f);
        uint64_t bad = w | ((w - ones * 0x20) & ~w) | ((bs - ones) & ~bs) | ((del - ones) & ~del);
        if (bad & highs) return 0;
    }
    for (; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c >= 0x7f || c == '\\') return 0;
    }
    return 1;
}

/* Every field but the token ids valid UTF-8 with its escapes undone; id, audio path and text
 * not empty. len: the fields' lengths (those unescaped shrink: their strings end earlier). */
static int check_fields(xtts_tokens_reader *r, char *f[8], size_t len[8], xtts_error *err) {
    const char *names[8] = {"id", "speaker", "lang", "audio_path", "tokens", "text", "", ""};
    if (r->split_field >= 0) names[r->split_field] = "split";
    if (r->text_field >= 0) names[r->text_field] = "original text";
    for (int i = 0; i < r->n_fields; i++) {
        if (i == 4 || plain_ascii(f[i], len[i])) continue;
        if (!xtts_utf8_valid(f[i], len[i])) return record_error(r, err, "invalid UTF-8 in ", names[i]);
        if (unescape(f[i])) return record_error(r, err, "bad escape or control character in ", names[i]);
        len[i] = strlen(f[i]);
    }
    if (!*f[0]) return record_error(r, err, "empty id", NULL);
    if (!*f[3]) return record_error(r, err, "empty audio_path", NULL);
    if (!*f[5]) return record_error(r, err, "empty text", NULL);
    return 0;
}

/* What makes a lenient reader reject this record alone, into r->reject: an unknown language
 * (an error for a strict reader) or an over-long id. */
static int note_reject_reason(xtts_tokens_reader *r, char *f[8], const size_t len[8], xtts_error *err) {
    r->reject[0] = 0;
    if (!xtts_lang_tag_valid(f[2])) {
        if (r->lenient) snprintf(r->reject, sizeof r->reject, "unknown language '%.40s'", f[2]);
        else return xtts_error_set(err, XTTS_EINPUT, "%s:%zu: unknown language '%.40s'", r->name, r->line_no, f[2]), -1;
    }
    if (r->lenient && !r->reject[0] && len[0] > XTTS_ID_MAX_BYTES)
        snprintf(r->reject, sizeof r->reject, "id of %zu bytes, longer than %d", len[0], XTTS_ID_MAX_BYTES);
    return 0;
}

/* Token ids: decimal, single spaces between, below vocab_size, max_tokens of them at most into
 * r->ids (a lenient reader counts those beyond for the reject reason); *count: how many. */
static int parse_token_ids(xtts_tokens_reader *r, const char *p, size_t *count, xtts_error *err) {
    const int vocab = r->header.vocab_size;
    const size_t max_ids = (size_t)r->header.max_tokens;
    *count = 0;
    if (!*p) return record_error(r, err, "no token ids", NULL);
    for (;;) {
        if (*p < '0' || *p > '9') return record_error(r, err, "token ids must be decimal numbers separated by single spaces", NULL);
        long v = 0;
        while (*p >= '0' && *p <= '9') {
            v = v * 10 + (*p - '0');
            if (v >= vocab) {
                xtts_error_set(err, XTTS_EINPUT, "%s:%zu: token id out of range (vocab_size %d)", r->name, r->line_no, vocab);
                return -1;
            }
            p++;
        }
        if (*count >= max_ids && r->lenient) {
            (*count)++;
            if (!*p) break;
            if (*p != ' ') return record_error(r, err, "token ids must be decimal numbers separated by single spaces", NULL);
            p++;
            continue;
        }
        if (*count >= max_ids) {
            xtts_error_set(err, XTTS_EINPUT, "%s:%zu: more than max_tokens=%zu token ids", r->name, r->line_no, max_ids);
            return -1;
        }
        if (*count >= r->ids_cap) {
            size_t nc = r->ids_cap ? r->ids_cap * 2 : 256;
            if (nc > max_ids) nc = max_ids;
            int32_t *ni = realloc(r->ids, nc * sizeof *ni);
            if (!ni) return xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", r->name), -1;
            r->ids = ni;
            r->ids_cap = nc;
        }
        r->ids[(*count)++] = (int32_t)v;
        if (!*p) break;
        if (*p != ' ') return record_error(r, err, "token ids must be decimal numbers separated by single spaces", NULL);
        p++;
    }
    return 0;
}

int xtts_tokens_reader_next(xtts_tokens_reader *r, xtts_tokens_record *rec, xtts_error *err) {
    size_t n;
    int rc = read_line(r, &n, err);
    if (rc <= 0) return rc;
    char *line = r->line;
    if (n == 0) return record_error(r, err, "empty line", NULL);
    if (memchr(line, 0, n)) return record_error(r, err, "NUL byte in line", NULL);
    char *f[8];
    size_t len[8];
    if (split_fields(r, line, n, f, len, err) || check_fields(r, f, len, err)) return -1;
    rec->reject = NULL;
    if (note_reject_reason(r, f, len, err)) return -1;
    const char *split = r->split_field >= 0 ? f[r->split_field] : NULL;
    if (split && *split && strcmp(split, "train") && strcmp(split, "val") && strcmp(split, "test"))
        return record_error(r, err, "split must be train, val, test or empty", NULL);
    size_t count;
    if (parse_token_ids(r, f[4], &count, err)) return -1;
    rec->id = f[0];
    rec->speaker = f[1];
    rec->lang = f[2];
    rec->audio_path = f[3];
    rec->text = f[5];
    rec->split = split;
    rec->orig_text = r->text_field >= 0 ? f[r->text_field] : NULL;
    rec->tokens = r->ids;
    rec->n_tokens = count;
    const size_t max_ids = (size_t)r->header.max_tokens;
    if (r->lenient && !r->reject[0] && count > max_ids)
        snprintf(r->reject, sizeof r->reject, "%zu tokens, more than max_tokens=%zu", count, max_ids);
    if (r->reject[0]) {
        rec->reject = r->reject;
        rec->n_tokens = 0;
    }
    return 1;
}
