/* bpe.c — Hugging Face tokenizers BPE (tokenizer.json), the subset XTTS-style vocabularies
 * use, giving the same ids as the Rust library:
 *   added tokens   matched in the raw text first, leftmost-longest, case-sensitively
 *                  (lstrip/rstrip/single_word honoured);
 *   normalizer     null, NFC, NFD, NFKC, NFKD, Lowercase, or a Sequence of these;
 *   pre-tokenizer  null, Whitespace (\w+|[^\w\s]+ with Unicode \w), WhitespaceSplit,
 *                  ByteLevel (GPT-2 split and byte-to-unicode map), or a Sequence;
 *   model          BPE: vocab, merges by rank (a pair listed twice keeps its LAST rank),
 *                  unk_token (fuse_unk), byte_fallback, continuing_subword_prefix,
 *                  end_of_word_suffix, ignore_merges.
 * Anything else in the file is refused at load time with the reason.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "common/strbuf.h"
#include "prep/text/tokenizer/tokenizer.h"
#include "prep/text/tokenizer/tokenizer_internal.h"

/* ---- string -> id and pair -> merge hash tables (open addressing) ---------------------- */

typedef struct {
    char **keys;     /* owned strings */
    int32_t *vals;
    size_t cap;      /* power of two */
    size_t n;
} str_map;

static uint64_t hash_str(const char *s, size_t n) { return xtts_fnv1a64(XTTS_FNV64_INIT, s, n); }

static int str_map_init(str_map *m, size_t want) {
    size_t cap = 16;
    while (cap < want * 2) cap *= 2;
    m->keys = calloc(cap, sizeof *m->keys);
    m->vals = calloc(cap, sizeof *m->vals);
    m->cap = cap;
    m->n = 0;
    return m->keys && m->vals ? 0 : -1;
}

static void str_map_free(str_map *m) {
    if (m->keys)
        for (size_t i = 0; i < m->cap; i++) free(m->keys[i]);
    free(m->keys);
    free(m->vals);
}

static int32_t str_map_get(const str_map *m, const char *s, size_t n) {
    size_t i = hash_str(s, n) & (m->cap - 1);
    while (m->keys[i]) {
        if (!strncmp(m->keys[i], s, n) && m->keys[i][n] == 0) return m->vals[i];
        i = (i + 1) & (m->cap - 1);
    }
    return -1;
}

/* Insert; returns 0, 1 if present (value untouched), -1 out of memory. Grows. */
static int str_map_put(str_map *m, const char *s, int32_t v) {
    if ((m->n + 1) * 2 > m->cap) {
        str_map big;
        if (str_map_init(&big, m->cap)) return -1;
        for (size_t i = 0; i < m->cap; i++) {
            if (!m->keys[i]) continue;
            size_t j = hash_str(m->keys[i], strlen(m->keys[i])) & (big.cap - 1);
            while (big.keys[j]) j = (j + 1) & (big.cap - 1);
            big.keys[j] = m->keys[i];
            big.vals[j] = m->vals[i];
            big.n++;
        }
        free(m->keys);
        free(m->vals);
        *m = big;
    }
    size_t n = strlen(s);
    size_t i = hash_str(s, n) & (m->cap - 1);
    while (m->keys[i]) {
        if (!strcmp(m->keys[i], s)) return 1;
        i = (i + 1) & (m->cap - 1);
    }
    m->keys[i] = strdup(s);
    if (!m->keys[i]) return -1;
    m->vals[i] = v;
    m->n++;
    return 0;
}

typedef struct {
    uint64_t *keys;  /* (a << 32 | b) + 1; 0 = empty */
    int32_t *rank, *merged;
    size_t cap;
} pair_map;

static uint64_t mix64(uint64_t x) {
    x ^= x >> 33; x *= 0xff51afd7ed558ccdULL; x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ULL; x ^= x >> 33;
    return x;
}

static int pair_map_get(const pair_map *m, int32_t a, int32_t b, int32_t *rank, int32_t *merged) {
    if (!m->cap) return 0;
    uint64_t k = (((uint64_t)(uint32_t)a << 32) | (uint32_t)b) + 1;
    size_t i = mix64(k) & (m->cap - 1);
    while (m->keys[i]) {
        if (m->keys[i] == k) { *rank = m->rank[i]; *merged = m->merged[i]; return 1; }
        i = (i + 1) & (m->cap - 1);
    }
    return 0;
}

/* ---- the tokenizer -------------------------------------------------------------------- */

enum { PRE_NONE = 0, PRE_WHITESPACE, PRE_WHITESPACE_SPLIT, PRE_BYTELEVEL };
enum { NORM_NFC = 1, NORM_NFD, NORM_NFKC, NORM_NFKD, NORM_LOWER };

typedef struct {
    char *content;
    size_t len;
    int32_t id;
    int single_word, lstrip, rstrip;
} added_token;

struct xtts_bpe {
    str_map vocab;
    pair_map merges;
    added_token *added;
    size_t n_added;
    int32_t unk_id;
    int fuse_unk, byte_fallback, ignore_merges;
    char *prefix, *suffix; /* continuing_subword_prefix, end_of_word_suffix (may be NULL) */
    int norm[8];
    int n_norm;
    int pre[8];
    int n_pre;
    int bytelevel_prefix_space;
    int vocab_size;
    char hash[72];
    int32_t byte_ids[256]; /* byte_fallback: id of "<0xAB>" or -1 */
    unsigned char added_start[256]; /* bytes an added token can start with */
};

int xtts_bpe_vocab_size(const xtts_bpe *b) { return b->vocab_size; }
const char *xtts_bpe_hash(const xtts_bpe *b) { return b->hash; }
int xtts_bpe_lowercases(const xtts_bpe *b) {
    for (int i = 0; i < b->n_norm; i++)
        if (b->norm[i] == NORM_LOWER) return 1;
    return 0;
}

int xtts_bpe_unk_id(const xtts_bpe *b) { return b->unk_id; }
int xtts_bpe_has_piece(const xtts_bpe *b, const char *s, size_t n) { return str_map_get(&b->vocab, s, n) >= 0; }

int xtts_bpe_token_id(const xtts_bpe *b, const char *token) {
    for (size_t i = 0; i < b->n_added; i++)
        if (!strcmp(b->added[i].content, token)) return b->added[i].id;
    return str_map_get(&b->vocab, token, strlen(token));
}

void xtts_bpe_close(xtts_bpe *b) {
    if (!b) return;
    str_map_free(&b->vocab);
    free(b->merges.keys);
    free(b->merges.rank);
    free(b->merges.merged);
    for (size_t i = 0; i < b->n_added; i++) free(b->added[i].content);
    free(b->added);
    free(b->prefix);
    free(b->suffix);
    free(b);
}

static xtts_status parse_normalizer(xtts_bpe *b, json_t *n, const char *name, xtts_error *err) {
    if (!n || json_is_null(n)) return XTTS_OK;
    const char *type = json_string_value(json_object_get(n, "type"));
    if (!type) return xtts_error_set(err, XTTS_EINPUT, "%s: normalizer has no type", name);
    if (!strcmp(type, "Sequence")) {
        json_t *arr = json_object_get(n, "normalizers");
        if (!json_is_array(arr)) return xtts_error_set(err, XTTS_EINPUT, "%s: normalizer Sequence without a list", name);
        for (size_t i = 0; i < json_array_size(arr); i++) {
            xtts_status st = parse_normalizer(b, json_array_get(arr, i), name, err);
            if (st) return st;
        }
        return XTTS_OK;
    }
    int kind = !strcmp(type, "NFC") ? NORM_NFC : !strcmp(type, "NFD") ? NORM_NFD : !strcmp(type, "NFKC") ? NORM_NFKC
             : !strcmp(type, "NFKD") ? NORM_NFKD : !strcmp(type, "Lowercase") ? NORM_LOWER : 0;
    if (!kind) return xtts_error_set(err, XTTS_EINPUT, "%s: normalizer %s is not supported (NFC, NFD, NFKC, NFKD, Lowercase, Sequence)", name, type);
    if (b->n_norm >= 8) return xtts_error_set(err, XTTS_EINPUT, "%s: too many normalizers", name);
    b->norm[b->n_norm++] = kind;
    return XTTS_OK;
}

static xtts_status parse_pretok(xtts_bpe *b, json_t *p, const char *name, xtts_error *err) {
    if (!p || json_is_null(p)) return XTTS_OK;
    const char *type = json_string_value(json_object_get(p, "type"));
    if (!type) return xtts_error_set(err, XTTS_EINPUT, "%s: pre_tokenizer has no type", name);
    if (!strcmp(type, "Sequence")) {
        json_t *arr = json_object_get(p, "pretokenizers");
        if (!json_is_array(arr)) return xtts_error_set(err, XTTS_EINPUT, "%s: pre_tokenizer Sequence without a list", name);
        for (size_t i = 0; i < json_array_size(arr); i++) {
            xtts_status st = parse_pretok(b, json_array_get(arr, i), name, err);
            if (st) return st;
        }
        return XTTS_OK;
    }
    int kind = !strcmp(type, "Whitespace") ? PRE_WHITESPACE : !strcmp(type, "WhitespaceSplit") ? PRE_WHITESPACE_SPLIT
             : !strcmp(type, "ByteLevel") ? PRE_BYTELEVEL : 0;
    if (!kind) return xtts_error_set(err, XTTS_EINPUT, "%s: pre_tokenizer %s is not supported (Whitespace, WhitespaceSplit, ByteLevel, Sequence)", name, type);
    if (kind == PRE_BYTELEVEL) {
        json_t *ur = json_object_get(p, "use_regex");
        if (ur && json_is_false(ur)) return xtts_error_set(err, XTTS_EINPUT, "%s: ByteLevel with use_regex false is not supported", name);
        b->bytelevel_prefix_space = json_is_true(json_object_get(p, "add_prefix_space"));
    }
    if (b->n_pre >= 8) return xtts_error_set(err, XTTS_EINPUT, "%s: too many pre-tokenizers", name);
    b->pre[b->n_pre++] = kind;
    return XTTS_OK;
}

static int add_merge(pair_map *m, int32_t a, int32_t c, int32_t rank, int32_t merged) {
    uint64_t k = (((uint64_t)(uint32_t)a << 32) | (uint32_t)c) + 1;
    size_t i = mix64(k) & (m->cap - 1);
    while (m->keys[i]) {
        if (m->keys[i] == k) { /* listed again: the LAST listing's rank wins, as in HF, whose */
            m->rank[i] = rank;  /* merge map is filled in list order, later entries overwriting */
            m->merged[i] = merged;
            return 1;
        }
        i = (i + 1) & (m->cap - 1);
    }
    m->keys[i] = k;
    m->rank[i] = rank;
    m->merged[i] = merged;
    return 0;
}

/* ---- reading a tokenizer.json, step by step ------------------------------------------- */

/* model.vocab: token -> id, ids distinct, non-negative and not far beyond the size */
static xtts_status load_vocab(xtts_bpe *b, json_t *vocab, const char *name, int32_t *max_id, xtts_error *err) {
    if (str_map_init(&b->vocab, json_object_size(vocab) + 16)) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    xtts_status st = XTTS_OK;
    size_t nv = json_object_size(vocab);
    unsigned char *seen = calloc(nv + 1, 1);
    if (!seen) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    const char *key;
    json_t *val;
    json_object_foreach(vocab, key, val) {
        if (!json_is_integer(val) || json_integer_value(val) < 0 || json_integer_value(val) > INT32_MAX - 1) {
            st = xtts_error_set(err, XTTS_EINPUT, "%s: vocab entry \"%.60s\" has a negative or non-integer id", name, key);
            break;
        }
        int32_t id = (int32_t)json_integer_value(val);
        if ((size_t)id <= nv) {
            if (seen[id]) { st = xtts_error_set(err, XTTS_EINPUT, "%s: vocab id %d is given to two tokens", name, id); break; }
            seen[id] = 1;
        } else if ((size_t)id > nv * 4 + 1024) {
            st = xtts_error_set(err, XTTS_EINPUT, "%s: vocab id %d is far beyond the vocabulary size %zu", name, id, nv);
            break;
        }
        if (str_map_put(&b->vocab, key, id) < 0) { st = xtts_error_set(err, XTTS_ENOMEM, "out of memory"); break; }
        if (id > *max_id) *max_id = id;
    }
    free(seen);
    return st;
}

/* One merge: "a b" or ["a", "b"], both parts and the merged token (without the second
 * part's continuing_subword_prefix) in the vocabulary; ranked by its position r. */
static xtts_status load_merge(xtts_bpe *b, json_t *m, size_t r, const char *pref, xtts_sb *joined, const char *name,
                              xtts_error *err) {
    const char *a = NULL, *c = NULL;
    size_t la = 0, lc = 0;
    if (json_is_string(m)) {
        const char *s = json_string_value(m);
        const char *sp = strchr(s, ' ');
        if (!sp || strchr(sp + 1, ' '))
            return xtts_error_set(err, XTTS_EINPUT, "%s: merge %zu (\"%.60s\") is not two tokens separated by one space", name, r, s);
        a = s; la = (size_t)(sp - s); c = sp + 1; lc = strlen(c);
    } else if (json_is_array(m) && json_array_size(m) == 2 && json_is_string(json_array_get(m, 0)) &&
               json_is_string(json_array_get(m, 1))) {
        a = json_string_value(json_array_get(m, 0)); la = strlen(a);
        c = json_string_value(json_array_get(m, 1)); lc = strlen(c);
    } else {
        return xtts_error_set(err, XTTS_EINPUT, "%s: merge %zu is neither \"a b\" nor [\"a\", \"b\"]", name, r);
    }
    int32_t ia = str_map_get(&b->vocab, a, la), ic = str_map_get(&b->vocab, c, lc);
    xtts_sb_clear(joined);
    xtts_sb_putn(joined, a, la);
    xtts_sb_putn(joined, c, lc);
    if (joined->failed) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    if (ia < 0) /* name only the first part */
        return xtts_error_set(err, XTTS_EINPUT, "%s: merge %zu names a token not in the vocabulary: \"%.*s\"", name, r,
                              (int)(la > 40 ? 40 : la), a);
    if (ic < 0)
        return xtts_error_set(err, XTTS_EINPUT, "%s: merge %zu names a token not in the vocabulary: \"%.40s\"", name, r,
                              joined->s + la);
    const char *mergedtok = joined->s;
    size_t pl = pref ? strlen(pref) : 0;
    char *alt = NULL;
    if (pl && !strncmp(c, pref, pl)) {
        size_t rest = strlen(c + pl);
        alt = malloc(la + rest + 1);
        if (!alt) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
        memcpy(alt, a, la);
        memcpy(alt + la, c + pl, rest + 1);
        mergedtok = alt;
    }
    int32_t im = str_map_get(&b->vocab, mergedtok, strlen(mergedtok));
    xtts_status st = XTTS_OK;
    if (im < 0) st = xtts_error_set(err, XTTS_EINPUT, "%s: merge %zu makes \"%.60s\", which is not in the vocabulary", name, r, mergedtok);
    else add_merge(&b->merges, ia, ic, (int32_t)r, im);
    free(alt);
    return st;
}

/* model.merges into the pair table (a later listing of the same pair wins, as in HF) */
static xtts_status load_merges(xtts_bpe *b, json_t *model, json_t *merges, const char *name, xtts_error *err) {
    size_t nm = json_array_size(merges);
    size_t cap = 16;
    while (cap < nm * 2 + 2) cap *= 2;
    b->merges.keys = calloc(cap, sizeof *b->merges.keys);
    b->merges.rank = calloc(cap, sizeof *b->merges.rank);
    b->merges.merged = calloc(cap, sizeof *b->merges.merged);
    b->merges.cap = cap;
    if (!b->merges.keys || !b->merges.rank || !b->merges.merged) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    const char *pref = json_string_value(json_object_get(model, "continuing_subword_prefix"));
    xtts_sb joined = {0};
    xtts_status st = XTTS_OK;
    for (size_t r = 0; r < nm && !st; r++) st = load_merge(b, json_array_get(merges, r), r, pref, &joined, name, err);
    xtts_sb_free(&joined);
    return st;
}

/* unk_token, fuse_unk, byte_fallback, ignore_merges, prefix/suffix, dropout, <0xNN> ids */
static xtts_status load_model_options(xtts_bpe *b, json_t *model, const char *name, xtts_error *err) {
    json_t *unk = json_object_get(model, "unk_token");
    if (json_is_string(unk)) {
        b->unk_id = str_map_get(&b->vocab, json_string_value(unk), strlen(json_string_value(unk)));
        if (b->unk_id < 0)
            return xtts_error_set(err, XTTS_EINPUT, "%s: unk_token \"%.40s\" is not in the vocabulary", name, json_string_value(unk));
    }
    b->fuse_unk = json_is_true(json_object_get(model, "fuse_unk"));
    b->byte_fallback = json_is_true(json_object_get(model, "byte_fallback"));
    b->ignore_merges = json_is_true(json_object_get(model, "ignore_merges"));
    const char *pref = json_string_value(json_object_get(model, "continuing_subword_prefix"));
    const char *suf = json_string_value(json_object_get(model, "end_of_word_suffix"));
    if (pref && *pref) b->prefix = strdup(pref);
    if (suf && *suf) b->suffix = strdup(suf);
    json_t *dropout = json_object_get(model, "dropout");
    if (dropout && !json_is_null(dropout) && json_number_value(dropout) > 0)
        return xtts_error_set(err, XTTS_EINPUT, "%s: BPE dropout is random; set it to null for a cache", name);
    for (int v = 0; v < 256; v++) {
        char t[8];
        snprintf(t, sizeof t, "<0x%02X>", v);
        b->byte_ids[v] = str_map_get(&b->vocab, t, strlen(t));
    }
    return XTTS_OK;
}

/* One added token: content and id, consistent with the vocabulary and the earlier ones. */
static xtts_status load_added_token(xtts_bpe *b, json_t *t, size_t i, json_t *vocab, const char *name, int32_t *max_id,
                                    xtts_error *err) {
    json_t *jid = json_object_get(t, "id");
    const char *content = json_string_value(json_object_get(t, "content"));
    if (!content || !*content || !json_is_integer(jid) || json_integer_value(jid) < 0 || json_integer_value(jid) > INT32_MAX - 1)
        return xtts_error_set(err, XTTS_EINPUT, "%s: added token %zu lacks a content or a non-negative id", name, i);
    int32_t id = (int32_t)json_integer_value(jid);
    int32_t in_vocab = str_map_get(&b->vocab, content, strlen(content));
    if (in_vocab >= 0 && in_vocab != id)
        return xtts_error_set(err, XTTS_EINPUT, "%s: added token \"%.40s\" has id %d but the vocabulary says %d", name, content, id, in_vocab);
    for (size_t j = 0; j < b->n_added; j++)
        if (b->added[j].id == id || !strcmp(b->added[j].content, content))
            return xtts_error_set(err, XTTS_EINPUT, "%s: added tokens %zu and %zu share an id or a content", name, j, i);
    if (in_vocab < 0) {
        /* an id the vocabulary already gives to another token is inconsistent */
        const char *k2;
        json_t *v2;
        json_object_foreach(vocab, k2, v2) {
            if (json_integer_value(v2) == id)
                return xtts_error_set(err, XTTS_EINPUT, "%s: added token \"%.40s\" reuses id %d of vocab token \"%.40s\"", name,
                                      content, id, k2);
        }
    }
    added_token *a = &b->added[b->n_added++];
    a->content = strdup(content);
    if (!a->content) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    a->len = strlen(content);
    a->id = id;
    a->single_word = json_is_true(json_object_get(t, "single_word"));
    a->lstrip = json_is_true(json_object_get(t, "lstrip"));
    a->rstrip = json_is_true(json_object_get(t, "rstrip"));
    if (id > *max_id) *max_id = id;
    b->added_start[(unsigned char)content[0]] = 1;
    return XTTS_OK;
}

static xtts_status load_added_tokens(xtts_bpe *b, json_t *root, json_t *vocab, const char *name, int32_t *max_id, xtts_error *err) {
    json_t *added = json_object_get(root, "added_tokens");
    if (!added || json_is_null(added)) return XTTS_OK;
    if (!json_is_array(added)) return xtts_error_set(err, XTTS_EINPUT, "%s: added_tokens is not a list", name);
    b->added = calloc(json_array_size(added) + 1, sizeof *b->added);
    if (!b->added) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    xtts_status st = XTTS_OK;
    for (size_t i = 0; i < json_array_size(added) && !st; i++)
        st = load_added_token(b, json_array_get(added, i), i, vocab, name, max_id, err);
    return st;
}

/* the model's shape: a BPE model object with a vocab object and a merges list */
static xtts_status check_model(json_t *root, json_t *model, const char *name, xtts_error *err) {
    const char *type = json_string_value(json_object_get(model, "type"));
    json_t *merges = json_object_get(model, "merges");
    if (!json_is_object(root) || !json_is_object(model))
        return xtts_error_set(err, XTTS_EINPUT, "%s: no \"model\" object (not a tokenizer.json)", name);
    if (!type) {
        /* old files omit model.type; they are BPE when they have merges */
        if (!json_is_array(merges)) return xtts_error_set(err, XTTS_EINPUT, "%s: model has no type", name);
    } else if (strcmp(type, "BPE")) {
        return xtts_error_set(err, XTTS_EINPUT, "%s: model type is %s, not BPE", name, type);
    }
    if (!json_is_object(json_object_get(model, "vocab")))
        return xtts_error_set(err, XTTS_EINPUT, "%s: model.vocab is not an object", name);
    if (!json_is_array(merges)) return xtts_error_set(err, XTTS_EINPUT, "%s: model.merges is not a list", name);
    return XTTS_OK;
}

xtts_status xtts_bpe_open_buffer(const char *text, size_t len, const char *name, xtts_bpe **out, xtts_error *err) {
    *out = NULL;
    json_error_t je;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    if (!root) return xtts_error_set(err, XTTS_EINPUT, "%s:%d:%d: not valid JSON: %s", name, je.line, je.column, je.text);
    xtts_bpe *b = calloc(1, sizeof *b);
    if (!b) { json_decref(root); return xtts_error_set(err, XTTS_ENOMEM, "out of memory"); }
    b->unk_id = -1;
    for (int i = 0; i < 256; i++) b->byte_ids[i] = -1;
    json_t *model = json_object_get(root, "model");
    int32_t max_id = -1;
    xtts_status st = check_model(root, model, name, err);
    if (!st) st = load_vocab(b, json_object_get(model, "vocab"), name, &max_id, err);
    if (!st) st = load_merges(b, model, json_object_get(model, "merges"), name, err);
    if (!st) st = load_model_options(b, model, name, err);
    if (!st) st = load_added_tokens(b, root, json_object_get(model, "vocab"), name, &max_id, err);
    if (!st) st = parse_normalizer(b, json_object_get(root, "normalizer"), name, err);
    if (!st) st = parse_pretok(b, json_object_get(root, "pre_tokenizer"), name, err);
    if (!st && max_id < 0) st = xtts_error_set(err, XTTS_EINPUT, "%s: empty vocabulary", name);
    json_decref(root);
    if (st) { xtts_bpe_close(b); return st; }
    b->vocab_size = max_id + 1;
    xtts_sha256 s;
    uint8_t d[32];
    xtts_sha256_init(&s);
    xtts_sha256_update(&s, text, len);
    xtts_sha256_final(&s, d);
    memcpy(b->hash, "sha256:", 7);
    xtts_hex(d, 32, b->hash + 7);
    *out = b;
    return XTTS_OK;
}

xtts_status xtts_bpe_open(const char *path, xtts_bpe **out, xtts_error *err) {
    char *buf;
    size_t len;
    xtts_status st = xtts_read_file(path, (size_t)1 << 30, &buf, &len, err);
    if (st) return st;
    st = xtts_bpe_open_buffer(buf, len, path, out, err);
    free(buf);
    return st;
}

/* ---- character classes -------------------------------------------------------------------- */

static int is_white_space(int32_t c) {
    return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) ||
           c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

/* Unicode \w as Oniguruma has it: Alphabetic, Mark, Decimal_Number, Connector_Punctuation,
 * Join_Control. Alphabetic beyond the letter categories: Nl and the circled/squared letters
 * that are So with Other_Alphabetic. */
static int is_word_char(int32_t c) {
    if (c < 0x80) return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (c == 0x200C || c == 0x200D) return 1;
    if ((c >= 0x24B6 && c <= 0x24E9) || (c >= 0x1F130 && c <= 0x1F149) || (c >= 0x1F150 && c <= 0x1F169) ||
        (c >= 0x1F170 && c <= 0x1F189))
        return 1;
    switch (utf8proc_category(c)) {
    case UTF8PROC_CATEGORY_LU: case UTF8PROC_CATEGORY_LL: case UTF8PROC_CATEGORY_LT: case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO: case UTF8PROC_CATEGORY_MN: case UTF8PROC_CATEGORY_MC: case UTF8PROC_CATEGORY_ME:
    case UTF8PROC_CATEGORY_ND: case UTF8PROC_CATEGORY_NL: case UTF8PROC_CATEGORY_PC:
        return 1;
    default:
        return 0;
    }
}

static int is_letter(int32_t c) {
    utf8proc_category_t k = utf8proc_category(c);
    return k >= UTF8PROC_CATEGORY_LU && k <= UTF8PROC_CATEGORY_LO;
}
static int is_number(int32_t c) {
    utf8proc_category_t k = utf8proc_category(c);
    return k >= UTF8PROC_CATEGORY_ND && k <= UTF8PROC_CATEGORY_NO;
}

static int32_t cp_at(const char *s, size_t n, size_t i, size_t *k) {
    int32_t c;
    utf8proc_ssize_t r = utf8proc_iterate((const uint8_t *)s + i, (utf8proc_ssize_t)(n - i), &c);
    if (r <= 0) { *k = 1; return 0xFFFD; }
    *k = (size_t)r;
    return c;
}

/* ---- BPE on one word ----------------------------------------------------------------------------- */

typedef struct {
    int32_t id;
    int32_t next, prev; /* linked list of live symbols */
} sym;

static int push_unk_or_bytes(const xtts_bpe *b, const char *ch, size_t n, sym *syms, int *ns, int *last_unk) {
    if (b->byte_fallback) {
        int ok = 1;
        for (size_t i = 0; i < n; i++)
            if (b->byte_ids[(unsigned char)ch[i]] < 0) ok = 0;
        if (ok) {
            for (size_t i = 0; i < n; i++) syms[(*ns)++].id = b->byte_ids[(unsigned char)ch[i]];
            *last_unk = 0;
            return 0;
        }
    }
    if (b->unk_id < 0) return -1;
    if (b->fuse_unk && *last_unk) return 0;
    syms[(*ns)++].id = b->unk_id;
    *last_unk = 1;
    return 0;
}

/* Long words: the same merge order (lowest rank, then leftmost) kept in a binary heap of
 * candidate pairs, as the Rust library does, so a word of n symbols costs O(n log n). A
 * popped candidate is skipped when its symbols have changed since it was pushed. */
typedef struct { int32_t rank, pos, merged; } merge_cand;

static int cand_less(const merge_cand *a, const merge_cand *b) {
    return a->rank < b->rank || (a->rank == b->rank && a->pos < b->pos);
}

static int heap_push(merge_cand **h, size_t *n, size_t *cap, merge_cand c) {
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 64;
        merge_cand *nh = realloc(*h, nc * sizeof *nh);
        if (!nh) return -1;
        *h = nh;
        *cap = nc;
    }
    size_t i = (*n)++;
    while (i > 0 && cand_less(&c, &(*h)[(i - 1) / 2])) { (*h)[i] = (*h)[(i - 1) / 2]; i = (i - 1) / 2; }
    (*h)[i] = c;
    return 0;
}

static merge_cand heap_pop(merge_cand *h, size_t *n) {
    merge_cand top = h[0], last = h[--(*n)];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= *n) break;
        if (c + 1 < *n && cand_less(&h[c + 1], &h[c])) c++;
        if (!cand_less(&h[c], &last)) break;
        h[i] = h[c];
        i = c;
    }
    if (*n) h[i] = last;
    return top;
}

static int merge_with_heap(const xtts_bpe *b, sym *syms, int ns) {
    merge_cand *h = NULL;
    size_t n = 0, cap = 0;
    int32_t r, m;
    for (int i = 0; i + 1 < ns; i++)
        if (pair_map_get(&b->merges, syms[i].id, syms[i + 1].id, &r, &m) && heap_push(&h, &n, &cap, (merge_cand){r, i, m})) goto oom;
    while (n) {
        merge_cand c = heap_pop(h, &n);
        int i = c.pos, j = syms[i].next;
        if (syms[i].id < 0 || j < 0) continue;
        if (!pair_map_get(&b->merges, syms[i].id, syms[j].id, &r, &m) || m != c.merged) continue; /* as HF: same merged token */
        syms[i].id = c.merged;
        syms[i].next = syms[j].next;
        syms[j].id = -1; /* merged away */
        if (syms[j].next >= 0) syms[syms[j].next].prev = i;
        if (syms[i].prev >= 0 && pair_map_get(&b->merges, syms[syms[i].prev].id, syms[i].id, &r, &m) &&
            heap_push(&h, &n, &cap, (merge_cand){r, syms[i].prev, m}))
            goto oom;
        if (syms[i].next >= 0 && pair_map_get(&b->merges, syms[i].id, syms[syms[i].next].id, &r, &m) &&
            heap_push(&h, &n, &cap, (merge_cand){r, i, m}))
            goto oom;
    }
    free(h);
    return 0;
oom:
    free(h);
    return -1;
}

static xtts_status bpe_word(const xtts_bpe *b, const char *w, size_t n, xtts_ids *out, xtts_error *err) {
    if (!n) return XTTS_OK;
    if (b->ignore_merges) {
        int32_t id = str_map_get(&b->vocab, w, n);
        if (id >= 0) return xtts_ids_push(out, id) ? xtts_error_set(err, XTTS_ENOMEM, "out of memory") : XTTS_OK;
    }
    sym local[64];
    sym *syms = n <= 64 ? local : malloc(n * sizeof *syms);
    if (!syms) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    int ns = 0, last_unk = 0;
    xtts_sb piece = {0};
    for (size_t i = 0; i < n;) {
        size_t k;
        cp_at(w, n, i, &k);
        int32_t id;
        int first = i == 0, last = i + k == n;
        if ((b->prefix && !first) || (b->suffix && last)) {
            xtts_sb_clear(&piece);
            if (b->prefix && !first) xtts_sb_puts(&piece, b->prefix);
            xtts_sb_putn(&piece, w + i, k);
            if (b->suffix && last) xtts_sb_puts(&piece, b->suffix);
            id = piece.failed ? -1 : str_map_get(&b->vocab, piece.s, piece.len);
        } else {
            id = str_map_get(&b->vocab, w + i, k);
        }
        if (id >= 0) {
            syms[ns++].id = id;
            last_unk = 0;
        } else if (push_unk_or_bytes(b, w + i, k, syms, &ns, &last_unk)) {
            /* no unk token: HF drops the character */
        }
        i += k;
    }
    xtts_sb_free(&piece);
    for (int i = 0; i < ns; i++) { syms[i].prev = i - 1; syms[i].next = i + 1 < ns ? i + 1 : -1; }
    if (ns <= 32) {
        /* short words: merge the lowest-ranked adjacent pair, leftmost first, until none applies */
        for (;;) {
            int32_t best_rank = INT32_MAX, best_new = -1;
            int best = -1;
            for (int i = 0; i >= 0 && i < ns && syms[i].next >= 0; i = syms[i].next) {
                int32_t r, m;
                if (pair_map_get(&b->merges, syms[i].id, syms[syms[i].next].id, &r, &m) && r < best_rank) {
                    best_rank = r; best_new = m; best = i;
                }
            }
            if (best < 0) break;
            int j = syms[best].next;
            syms[best].id = best_new;
            syms[best].next = syms[j].next;
            if (syms[j].next >= 0) syms[syms[j].next].prev = best;
        }
    } else if (merge_with_heap(b, syms, ns)) {
        if (syms != local) free(syms);
        return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    }
    int fail = 0;
    for (int i = ns ? 0 : -1; i >= 0; i = syms[i].next) fail |= xtts_ids_push(out, syms[i].id);
    if (syms != local) free(syms);
    return fail ? xtts_error_set(err, XTTS_ENOMEM, "out of memory") : XTTS_OK;
}

/* ---- pre-tokenizers ------------------------------------------------------------------------------ */

/* GPT-2 byte-to-unicode table: printable bytes map to themselves, the rest to 256+. */
static int32_t byte_to_cp(unsigned v) {
    static int32_t table[256];
    static int ready = 0;
    if (!ready) { /* idempotent, so a benign race at most recomputes the same values */
        int32_t t[256];
        int n = 0;
        for (unsigned c = 0; c < 256; c++) {
            if ((c >= '!' && c <= '~') || (c >= 0xA1 && c <= 0xAC) || (c >= 0xAE && c <= 0xFF)) t[c] = (int32_t)c;
            else t[c] = 256 + n++;
        }
        memcpy(table, t, sizeof t);
        __atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
    }
    return table[v];
}

static xtts_status emit_word(const xtts_bpe *b, int stage, const char *w, size_t n, xtts_ids *out, xtts_error *err);

/* Split s by pre-tokenizer number stage and pass each piece on. */
static xtts_status pretokenize(const xtts_bpe *b, int stage, const char *s, size_t n, xtts_ids *out, xtts_error *err) {
    if (stage >= b->n_pre) return bpe_word(b, s, n, out, err);
    int kind = b->pre[stage];
    xtts_status st = XTTS_OK;
    if (kind == PRE_WHITESPACE || kind == PRE_WHITESPACE_SPLIT) {
        size_t i = 0;
        while (i < n && !st) {
            size_t k;
            int32_t c = cp_at(s, n, i, &k);
            if (is_white_space(c)) { i += k; continue; }
            int cls = kind == PRE_WHITESPACE_SPLIT ? 2 : is_word_char(c);
            size_t j = i + k;
            while (j < n) {
                int32_t d = cp_at(s, n, j, &k);
                if (is_white_space(d)) break;
                if (kind == PRE_WHITESPACE && is_word_char(d) != cls) break;
                j += k;
            }
            st = emit_word(b, stage, s + i, j - i, out, err);
            i = j;
        }
        return st;
    }
    /* ByteLevel: 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+ */
    xtts_sb tmp = {0};
    if (b->bytelevel_prefix_space && stage == 0 && n && s[0] != ' ') {
        xtts_sb_putc(&tmp, ' ');
        xtts_sb_putn(&tmp, s, n);
        if (tmp.failed) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
        s = tmp.s;
        n = tmp.len;
    }
    size_t i = 0;
    while (i < n && !st) {
        size_t j = i, k;
        if (s[i] == '\'') {
            static const char *const conts[] = {"s", "t", "re", "ve", "m", "ll", "d"};
            size_t best = 0;
            for (int q = 0; q < 7; q++) {
                size_t l = strlen(conts[q]);
                if (i + 1 + l <= n && !memcmp(s + i + 1, conts[q], l) && l > best) best = l;
            }
            /* the alternatives are tried in order; "'re" before "'r"... all distinct prefixes */
            if (best) { st = emit_word(b, stage, s + i, 1 + best, out, err); i += 1 + best; continue; }
        }
        int32_t c = cp_at(s, n, i, &k);
        size_t start = i;
        int32_t c2 = c;
        size_t k2 = k;
        if (c == ' ' && i + k < n) {
            c2 = cp_at(s, n, i + k, &k2);
            if (!is_white_space(c2)) j = i + k; else c2 = c;
        }
        if (j > i || !is_white_space(c)) {
            /* ' ?' consumed when j > i; classify the next char */
            int32_t d = j > i ? c2 : c;
            size_t dk = j > i ? k2 : k;
            int cls = is_letter(d) ? 1 : is_number(d) ? 2 : 3;
            j += dk;
            while (j < n) {
                int32_t e = cp_at(s, n, j, &k);
                int ec = is_white_space(e) ? 0 : is_letter(e) ? 1 : is_number(e) ? 2 : 3;
                if (ec != cls) break;
                j += k;
            }
            st = emit_word(b, stage, s + start, j - start, out, err);
            i = j;
            continue;
        }
        /* whitespace run: \s+(?!\S) takes all but the last space when a non-space follows */
        j = i;
        size_t lastk = 0;
        while (j < n) {
            int32_t e = cp_at(s, n, j, &k);
            if (!is_white_space(e)) break;
            lastk = k;
            j += k;
        }
        if (j < n && j - i > lastk) j -= lastk; /* leave one whitespace char for " ?X" */
        st = emit_word(b, stage, s + i, j - i, out, err);
        i = j;
    }
    xtts_sb_free(&tmp);
    return st;
}

static xtts_status emit_word(const xtts_bpe *b, int stage, const char *w, size_t n, xtts_ids *out, xtts_error *err) {
    if (b->pre[stage] != PRE_BYTELEVEL) return pretokenize(b, stage + 1, w, n, out, err);
    xtts_sb m = {0};
    for (size_t i = 0; i < n; i++) {
        uint8_t enc[4];
        utf8proc_ssize_t l = utf8proc_encode_char(byte_to_cp((unsigned char)w[i]), enc);
        xtts_sb_putn(&m, (const char *)enc, (size_t)l);
    }
    xtts_status st = m.failed ? xtts_error_set(err, XTTS_ENOMEM, "out of memory")
                              : pretokenize(b, stage + 1, m.s ? m.s : "", m.len, out, err);
    xtts_sb_free(&m);
    return st;
}

/* ---- normalizer ---------------------------------------------------------------------------------- */

static xtts_status apply_normalizers(const xtts_bpe *b, const char *s, size_t n, char **out, size_t *outn, xtts_error *err) {
    char *cur = malloc(n + 1);
    if (!cur) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    memcpy(cur, s, n);
    cur[n] = 0;
    size_t len = n;
    for (int i = 0; i < b->n_norm; i++) {
        if (b->norm[i] == NORM_LOWER) {
            xtts_sb l = {0};
            xtts_sb_cstr(&l);
            for (size_t p = 0; p < len;) {
                size_t k;
                int32_t c = cp_at(cur, len, p, &k);
                if (c == 0x130) xtts_sb_puts(&l, "i\xCC\x87"); /* İ lowercases to two code points */
                else {
                    uint8_t enc[4];
                    utf8proc_ssize_t el = utf8proc_encode_char(utf8proc_tolower(c), enc);
                    xtts_sb_putn(&l, (const char *)enc, (size_t)el);
                }
                p += k;
            }
            free(cur);
            if (l.failed) { xtts_sb_free(&l); return xtts_error_set(err, XTTS_ENOMEM, "out of memory"); }
            cur = l.s;
            len = l.len;
            continue;
        }
        int opt = UTF8PROC_STABLE | (b->norm[i] == NORM_NFC || b->norm[i] == NORM_NFKC ? UTF8PROC_COMPOSE : UTF8PROC_DECOMPOSE) |
                  (b->norm[i] == NORM_NFKC || b->norm[i] == NORM_NFKD ? UTF8PROC_COMPAT : 0);
        uint8_t *dst = NULL;
        utf8proc_ssize_t r = utf8proc_map((const uint8_t *)cur, (utf8proc_ssize_t)len, &dst, (utf8proc_option_t)opt);
        free(cur);
        if (r < 0) { free(dst); return xtts_error_set(err, XTTS_EINPUT, "Unicode normalization: %s", utf8proc_errmsg(r)); }
        cur = (char *)dst;
        len = (size_t)r;
    }
    *out = cur;
    *outn = len;
    return XTTS_OK;
}

static xtts_status encode_segment(const xtts_bpe *b, const char *s, size_t n, xtts_ids *out, xtts_error *err) {
    if (!n) return XTTS_OK;
    if (!b->n_norm) return pretokenize(b, 0, s, n, out, err);
    char *norm = NULL;
    size_t nn = 0;
    xtts_status st = apply_normalizers(b, s, n, &norm, &nn, err);
    if (st) return st;
    st = pretokenize(b, 0, norm, nn, out, err);
    free(norm);
    return st;
}

/* ---- added tokens and the whole encode ------------------------------------------------------------ */

static int word_boundary_ok(const char *s, size_t n, size_t start, size_t end) {
    /* single_word: no word character touching the match on either side */
    if (start > 0) {
        size_t p = start - 1;
        while (p > 0 && ((unsigned char)s[p] & 0xC0) == 0x80) p--;
        size_t k;
        if (is_word_char(cp_at(s, n, p, &k))) return 0;
    }
    if (end < n) {
        size_t k;
        if (is_word_char(cp_at(s, n, end, &k))) return 0;
    }
    return 1;
}

xtts_status xtts_bpe_encode(const xtts_bpe *b, const char *text, xtts_ids *out, xtts_error *err) {
    size_t n = strlen(text), seg = 0, i = 0;
    while (i < n) {
        /* leftmost-longest added token starting at i */
        if (!b->added_start[(unsigned char)text[i]]) { i++; continue; }
        const added_token *hit = NULL;
        for (size_t t = 0; t < b->n_added; t++) {
            const added_token *a = &b->added[t];
            if (a->len <= n - i && !memcmp(text + i, a->content, a->len) && (!hit || a->len > hit->len) &&
                (!a->single_word || word_boundary_ok(text, n, i, i + a->len)))
                hit = a;
        }
        if (!hit) { i++; continue; }
        size_t mstart = i, mend = i + hit->len;
        if (hit->lstrip)
            while (mstart > seg) {
                size_t p = mstart - 1;
                while (p > seg && ((unsigned char)text[p] & 0xC0) == 0x80) p--;
                size_t k;
                if (!is_white_space(cp_at(text, n, p, &k))) break;
                mstart = p;
            }
        if (hit->rstrip)
            while (mend < n) {
                size_t k;
                if (!is_white_space(cp_at(text, n, mend, &k))) break;
                mend += k;
            }
        xtts_status st = encode_segment(b, text + seg, mstart - seg, out, err);
        if (st) return st;
        if (xtts_ids_push(out, hit->id)) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
        seg = i = mend;
    }
    return encode_segment(b, text + seg, n - seg, out, err);
}
