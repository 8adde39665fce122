/* tokenizer.c — one interface over the bytes, bpe and phoneme tokenizers (tokenizer.h): a
 * table of back ends (struct backend), one row each,
 * and the bytes tokenizer itself (formats/tokens.md, "The bytes tokenizer"). */
#include "prep/text/tokenizer/tokenizer.h"
#include "prep/text/tokenizer/tokenizer_internal.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "common/strbuf.h"

typedef struct backend backend;

struct xtts_tokenizer {
    xtts_tokenizer_kind kind;
    const backend *be;
    xtts_bpe *bpe;
    xtts_phonemizer *ph;
    int xtts_vocab;              /* bpe: has [SPACE] and language tokens */
    int32_t lang_ids[XTTS_N_LANGS]; /* bpe: id of "[lang]" or -1 */
    int32_t space_id;
    int32_t unk_id;              /* bpe: the model's unk_token, or -1 */
    int allow_unk;               /* xtts bpe: let [UNK] ids through */
    char lang_list[128];         /* xtts bpe: its language codes, space-separated */
};

xtts_tokenizer_kind xtts_tokenizer_kind_of(const xtts_tokenizer *t) { return t->kind; }

static void bytes_hash(char out[72]) {
    static const char id[] = "xtts-bytes-tokenizer 1";
    xtts_sha256 s;
    uint8_t d[32];
    xtts_sha256_init(&s);
    xtts_sha256_update(&s, id, sizeof id - 1);
    xtts_sha256_final(&s, d);
    memcpy(out, "sha256:", 7);
    xtts_hex(d, 32, out + 7);
}

static xtts_status set_int(xtts_tokens_header *h, const char *key, int v, xtts_error *err) {
    char buf[16];
    snprintf(buf, sizeof buf, "%d", v);
    return xtts_tokens_header_set(h, key, buf, err);
}

int xtts_tokenizer_is_xtts(const xtts_tokenizer *t) { return t->kind == XTTS_TOK_BPE && t->xtts_vocab; }

void xtts_tokenizer_set_allow_unk(xtts_tokenizer *t, int allow) { t->allow_unk = allow; }

/* The text encoded to [UNK]: name the characters the vocabulary lacks (the XTTS form has
 * no normalizer and splits on whitespace, so a character is [UNK] exactly when it is not
 * a vocabulary token of its own). */
static xtts_status unk_error(const xtts_tokenizer *t, const char *text, xtts_error *err) {
    int32_t seen[8];
    int n_seen = 0, more = 0;
    xtts_sb m = {0};
    xtts_sb_puts(&m, "characters not in the vocabulary:");
    const uint8_t *p = (const uint8_t *)text;
    utf8proc_ssize_t left = (utf8proc_ssize_t)strlen(text);
    while (left > 0) {
        utf8proc_int32_t c;
        utf8proc_ssize_t k = utf8proc_iterate(p, left, &c);
        if (k <= 0) break;
        int cat = utf8proc_category(c);
        int white = c == ' ' || (c >= 9 && c <= 13) || cat == UTF8PROC_CATEGORY_ZS || c == 0x85 || c == 0x2028 || c == 0x2029;
        if (!white && !xtts_bpe_has_piece(t->bpe, (const char *)p, (size_t)k)) {
            int dup = 0;
            for (int i = 0; i < n_seen; i++) dup |= seen[i] == c;
            if (!dup && n_seen < 8) {
                char line[48];
                snprintf(line, sizeof line, "%s '%.*s' U+%04X", n_seen ? "," : "", (int)k, (const char *)p, (unsigned)c);
                xtts_sb_puts(&m, line);
                seen[n_seen++] = c;
            } else if (!dup) {
                more = 1;
            }
        }
        p += k;
        left -= k;
    }
    if (more) xtts_sb_puts(&m, ", ...");
    if (!n_seen) {
        xtts_sb_clear(&m);
        char line[80];
        snprintf(line, sizeof line, "the text encodes to [UNK] (id %d)", (int)t->unk_id);
        xtts_sb_puts(&m, line);
    }
    xtts_sb_puts(&m, " (--allow-unk keeps such records)");
    xtts_status st = m.failed ? xtts_error_set(err, XTTS_ENOMEM, "out of memory") : xtts_error_set(err, XTTS_EINPUT, "%s", m.s);
    xtts_sb_free(&m);
    return st;
}

/* ---- the back ends ------------------------------------------------------------------------ */

/* bytes (formats/tokens.md, "The bytes tokenizer") */

static xtts_status bytes_open(xtts_tokenizer *t, const char *vocab_path, xtts_error *err) {
    (void)t;
    return vocab_path ? xtts_error_set(err, XTTS_EUSAGE, "the bytes tokenizer takes no --vocab") : XTTS_OK;
}

static xtts_status fixed_ids_header(xtts_tokens_header *h, xtts_error *err) {
    h->pad_id = XTTS_BYTES_PAD;
    xtts_status st = set_int(h, "bos_id", XTTS_BYTES_START, err);
    if (!st) st = set_int(h, "eos_id", XTTS_BYTES_STOP, err);
    if (!st) st = set_int(h, "unk_id", XTTS_BYTES_UNK, err);
    return st;
}

static xtts_status bytes_header(const xtts_tokenizer *t, xtts_tokens_header *h, xtts_error *err) {
    (void)t;
    strcpy(h->tokenizer, "bytes");
    bytes_hash(h->vocab_hash);
    h->vocab_size = XTTS_BYTES_VOCAB;
    return fixed_ids_header(h, err);
}

static int bytes_lowercase(const xtts_tokenizer *t) { (void)t; return 1; }
static int bytes_has_lang(const xtts_tokenizer *t, int lang) { (void)t; (void)lang; return 1; }
static void bytes_lang_list(const xtts_tokenizer *t, char *buf, size_t n) { (void)t; snprintf(buf, n, "bytes: any ISO 639 language code"); }

static xtts_status bytes_encode(const xtts_tokenizer *t, const char *text, int lang, xtts_ids *out, xtts_error *err) {
    (void)t;
    /* languages beyond XTTS's 17 have no language token: [START] bytes [STOP] */
    int fail = xtts_ids_push(out, XTTS_BYTES_START) || (lang < XTTS_N_LANGS && xtts_ids_push(out, XTTS_BYTES_LANG0 + lang));
    for (const unsigned char *p = (const unsigned char *)text; *p && !fail; p++)
        fail = xtts_ids_push(out, XTTS_BYTES_BYTE0 + *p);
    if (!fail) fail = xtts_ids_push(out, XTTS_BYTES_STOP);
    return fail ? xtts_error_set(err, XTTS_ENOMEM, "out of memory") : XTTS_OK;
}

/* bpe: a tokenizer.json, in XTTS's form when it has [SPACE] and language tokens */

static xtts_status bpe_open(xtts_tokenizer *t, const char *vocab_path, xtts_error *err) {
    if (!vocab_path) return xtts_error_set(err, XTTS_EUSAGE, "--tokenizer bpe needs --vocab tokenizer.json");
    xtts_status st = xtts_bpe_open(vocab_path, &t->bpe, err);
    if (st) return st;
    t->space_id = xtts_bpe_token_id(t->bpe, "[SPACE]");
    int any_lang = 0;
    for (int l = 0; l < XTTS_N_LANGS; l++) {
        char tok[16];
        snprintf(tok, sizeof tok, "[%s]", xtts_lang_codes[l]);
        t->lang_ids[l] = xtts_bpe_token_id(t->bpe, tok);
        any_lang |= t->lang_ids[l] >= 0;
        if (t->lang_ids[l] >= 0 && strlen(t->lang_list) + strlen(xtts_lang_codes[l]) + 2 < sizeof t->lang_list) {
            if (t->lang_list[0]) strcat(t->lang_list, " ");
            strcat(t->lang_list, xtts_lang_codes[l]);
        }
    }
    t->xtts_vocab = t->space_id >= 0 && any_lang;
    t->unk_id = xtts_bpe_unk_id(t->bpe);
    return XTTS_OK;
}

static xtts_status bpe_header(const xtts_tokenizer *t, xtts_tokens_header *h, xtts_error *err) {
    xtts_status st = XTTS_OK;
    strcpy(h->tokenizer, "bpe");
    snprintf(h->vocab_hash, sizeof h->vocab_hash, "%s", xtts_bpe_hash(t->bpe));
    h->vocab_size = xtts_bpe_vocab_size(t->bpe);
    int pad = xtts_bpe_token_id(t->bpe, "[PAD]");
    if (pad < 0) pad = xtts_bpe_token_id(t->bpe, "<pad>");
    if (pad < 0) pad = xtts_bpe_token_id(t->bpe, "[STOP]");
    h->pad_id = pad < 0 ? 0 : pad;
    int bos = xtts_bpe_token_id(t->bpe, "[START]"), eos = xtts_bpe_token_id(t->bpe, "[STOP]");
    int unk = xtts_bpe_token_id(t->bpe, "[UNK]");
    if (bos >= 0) st = set_int(h, "bos_id", bos, err);
    if (!st && eos >= 0) st = set_int(h, "eos_id", eos, err);
    if (!st && unk >= 0) st = set_int(h, "unk_id", unk, err);
    if (!st) st = xtts_tokens_header_set(h, "bpe_format", t->xtts_vocab ? "xtts" : "plain", err);
    return st;
}

static int bpe_lowercase(const xtts_tokenizer *t) { return t->xtts_vocab || xtts_bpe_lowercases(t->bpe); }

/* Id of the "[code]" token of a language in an XTTS vocabulary, or -1. */
static int32_t bpe_lang_id(const xtts_tokenizer *t, int lang) {
    if (lang < XTTS_N_LANGS) return t->lang_ids[lang];
    char tok[24];
    snprintf(tok, sizeof tok, "[%s]", xtts_lang_code(lang));
    return xtts_bpe_token_id(t->bpe, tok);
}

static int bpe_has_lang(const xtts_tokenizer *t, int lang) { return !t->xtts_vocab || bpe_lang_id(t, lang) >= 0; }

static void bpe_lang_list(const xtts_tokenizer *t, char *buf, size_t n) {
    if (!t->xtts_vocab) { snprintf(buf, n, "this vocabulary has no language tokens and takes any code"); return; }
    /* an XTTS vocabulary: its [xx] tokens among XTTS's languages */
    size_t k = (size_t)snprintf(buf, n, "the vocabulary has a [xx] token for:");
    for (int l = 0; l < XTTS_N_LANGS && k < n; l++)
        if (t->lang_ids[l] >= 0) k += (size_t)snprintf(buf + k, n - k, " %s", xtts_lang_codes[l]);
    if (k < n) k += (size_t)snprintf(buf + k, n - k, "; missing:");
    for (int l = 0; l < XTTS_N_LANGS && k < n; l++)
        if (t->lang_ids[l] < 0) k += (size_t)snprintf(buf + k, n - k, " %s", xtts_lang_codes[l]);
}

static xtts_status bpe_no_lang(const xtts_tokenizer *t, const char *code, xtts_error *err) {
    return xtts_error_set(err, XTTS_EINPUT, "the vocabulary has no token for language %s ([%s]; it has: %s)", code, code, t->lang_list);
}

static xtts_status bpe_encode(const xtts_tokenizer *t, const char *text, int lang, xtts_ids *out, xtts_error *err) {
    if (!t->xtts_vocab) return xtts_bpe_encode(t->bpe, text, out, err);
    /* XTTS's VoiceBpeTokenizer: "[lang]" + text with every space as "[SPACE]" */
    xtts_sb s = {0};
    xtts_sb_putc(&s, '[');
    xtts_sb_puts(&s, xtts_lang_code(lang));
    xtts_sb_putc(&s, ']');
    for (const char *p = text; *p; p++) {
        if (*p == ' ') xtts_sb_puts(&s, "[SPACE]");
        else xtts_sb_putc(&s, *p);
    }
    if (s.failed) { xtts_sb_free(&s); return xtts_error_set(err, XTTS_ENOMEM, "out of memory"); }
    xtts_status st = xtts_bpe_encode(t->bpe, s.s, out, err);
    xtts_sb_free(&s);
    if (!st && !t->allow_unk && t->unk_id >= 0)
        for (size_t i = 0; i < out->n; i++)
            if (out->ids[i] == t->unk_id) return unk_error(t, text, err);
    return st;
}

/* phonemes: espeak-ng IPA, in worker processes after set_threads (phonemes.c) */

static xtts_status phonemes_open(xtts_tokenizer *t, const char *vocab_path, xtts_error *err) {
    if (vocab_path) return xtts_error_set(err, XTTS_EUSAGE, "the phonemes tokenizer takes no --vocab");
    return xtts_phonemizer_new(&t->ph, err);
}

static xtts_status phonemes_header(const xtts_tokenizer *t, xtts_tokens_header *h, xtts_error *err) {
    strcpy(h->tokenizer, "phonemes");
    snprintf(h->vocab_hash, sizeof h->vocab_hash, "%s", xtts_phonemizer_hash(t->ph));
    h->vocab_size = xtts_phonemizer_vocab_size();
    return fixed_ids_header(h, err);
}

static int phonemes_lowercase(const xtts_tokenizer *t) { (void)t; return 0; }
static int phonemes_has_lang(const xtts_tokenizer *t, int lang) { return xtts_phonemizer_has_lang(t->ph, lang); }
static void phonemes_lang_list(const xtts_tokenizer *t, char *buf, size_t n) {
    (void)t;
    snprintf(buf, n, "phonemes: the languages of espeak-ng's voices, see espeak-ng --voices");
}
static xtts_status phonemes_encode(const xtts_tokenizer *t, const char *text, int lang, xtts_ids *out, xtts_error *err) {
    return xtts_phonemizer_encode(t->ph, text, lang, out, err);
}
static xtts_status phonemes_threads(xtts_tokenizer *t, int n, xtts_error *err) {
    if (n <= 0) n = omp_get_max_threads();
    return xtts_phonemizer_start_workers(t->ph, n, err);
}

/* One row per tokenizer: adding one is a row here and its functions. */
struct backend {
    xtts_tokenizer_kind kind;
    const char *name;
    xtts_status (*open)(xtts_tokenizer *t, const char *vocab_path, xtts_error *err);
    xtts_status (*header)(const xtts_tokenizer *t, xtts_tokens_header *h, xtts_error *err);
    int (*lowercase)(const xtts_tokenizer *t);
    int (*has_lang)(const xtts_tokenizer *t, int lang);
    void (*lang_list)(const xtts_tokenizer *t, char *buf, size_t n);
    /* the message for a language it lacks (NULL: the generic one) */
    xtts_status (*no_lang)(const xtts_tokenizer *t, const char *code, xtts_error *err);
    xtts_status (*encode)(const xtts_tokenizer *t, const char *text, int lang, xtts_ids *out, xtts_error *err);
    xtts_status (*threads)(xtts_tokenizer *t, int n, xtts_error *err); /* NULL: nothing to start */
};

static const backend backends[] = {
    {XTTS_TOK_BYTES, "bytes", bytes_open, bytes_header, bytes_lowercase, bytes_has_lang, bytes_lang_list, NULL,
     bytes_encode, NULL},
    {XTTS_TOK_BPE, "bpe", bpe_open, bpe_header, bpe_lowercase, bpe_has_lang, bpe_lang_list, bpe_no_lang, bpe_encode,
     NULL},
    {XTTS_TOK_PHONEMES, "phonemes", phonemes_open, phonemes_header, phonemes_lowercase, phonemes_has_lang,
     phonemes_lang_list, NULL, phonemes_encode, phonemes_threads},
};

/* ---- the facade ------------------------------------------------------------------------------ */

xtts_status xtts_tokenizer_open(const char *name, const char *vocab_path, xtts_tokenizer **out, xtts_error *err) {
    *out = NULL;
    const backend *be = NULL;
    for (size_t i = 0; i < sizeof backends / sizeof backends[0]; i++)
        if (!strcmp(name, backends[i].name)) be = &backends[i];
    if (!be) return xtts_error_set(err, XTTS_EUSAGE, "unknown tokenizer '%s' (bytes, bpe, phonemes)", name);
    xtts_tokenizer *t = calloc(1, sizeof *t);
    if (!t) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    t->kind = be->kind;
    t->be = be;
    xtts_status st = be->open(t, vocab_path, err);
    if (st) { xtts_tokenizer_close(t); return st; }
    *out = t;
    return XTTS_OK;
}

void xtts_tokenizer_close(xtts_tokenizer *t) {
    if (!t) return;
    xtts_bpe_close(t->bpe);
    xtts_phonemizer_delete(t->ph);
    free(t);
}

xtts_status xtts_tokenizer_set_threads(xtts_tokenizer *t, int n, xtts_error *err) {
    return t->be->threads ? t->be->threads(t, n, err) : XTTS_OK;
}

xtts_status xtts_tokenizer_fill_header(const xtts_tokenizer *t, xtts_tokens_header *h, xtts_error *err) {
    return t->be->header(t, h, err);
}

int xtts_tokenizer_wants_lowercase(const xtts_tokenizer *t) { return t->be->lowercase(t); }

int xtts_tokenizer_has_lang(const xtts_tokenizer *t, int lang) {
    return xtts_lang_code(lang) ? t->be->has_lang(t, lang) : 0;
}

void xtts_tokenizer_lang_list(const xtts_tokenizer *t, char *buf, size_t n) {
    if (!n) return;
    buf[0] = 0;
    t->be->lang_list(t, buf, n);
}

xtts_status xtts_tokenizer_encode(const xtts_tokenizer *t, const char *text, int lang, xtts_ids *out, xtts_error *err) {
    out->n = 0;
    if (!xtts_tokenizer_has_lang(t, lang)) {
        const char *code = xtts_lang_code(lang) ? xtts_lang_code(lang) : "?";
        if (t->be->no_lang) return t->be->no_lang(t, code, err);
        return xtts_error_set(err, XTTS_EINPUT, "the tokenizer has no token for language %s", code);
    }
    return t->be->encode(t, text, lang, out, err);
}
