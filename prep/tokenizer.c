/* tokenizer.c — one interface over the bytes, bpe and phoneme tokenizers (tokenizer.h),
 * and the bytes tokenizer itself (formats/tokens.md, "The bytes tokenizer"). */
#include "prep/tokenizer.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prep/strbuf.h"

struct xtts_tokenizer {
    xtts_tokenizer_kind kind;
    xtts_bpe *bpe;
    xtts_phonemizer *ph;
    int xtts_vocab;              /* bpe: has [SPACE] and language tokens */
    int32_t lang_ids[XTTS_N_LANGS]; /* bpe: id of "[lang]" or -1 */
    int32_t space_id;
};

int xtts_ids_push(xtts_ids *v, int32_t id) {
    if (v->n == v->cap) {
        size_t c = v->cap ? v->cap * 2 : 256;
        int32_t *n = realloc(v->ids, c * sizeof *n);
        if (!n) return -1;
        v->ids = n;
        v->cap = c;
    }
    v->ids[v->n++] = id;
    return 0;
}

xtts_status xtts_tokenizer_open(const char *name, const char *vocab_path, xtts_tokenizer **out, xtts_error *err) {
    *out = NULL;
    xtts_tokenizer *t = calloc(1, sizeof *t);
    if (!t) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    xtts_status st = XTTS_OK;
    if (!strcmp(name, "bytes")) {
        t->kind = XTTS_TOK_BYTES;
        if (vocab_path) st = xtts_error_set(err, XTTS_EUSAGE, "the bytes tokenizer takes no --vocab");
    } else if (!strcmp(name, "bpe")) {
        t->kind = XTTS_TOK_BPE;
        if (!vocab_path) st = xtts_error_set(err, XTTS_EUSAGE, "--tokenizer bpe needs --vocab tokenizer.json");
        else st = xtts_bpe_load(vocab_path, &t->bpe, err);
        if (!st) {
            t->space_id = xtts_bpe_token_id(t->bpe, "[SPACE]");
            int any_lang = 0;
            for (int l = 0; l < XTTS_N_LANGS; l++) {
                char tok[16];
                snprintf(tok, sizeof tok, "[%s]", xtts_lang_codes[l]);
                t->lang_ids[l] = xtts_bpe_token_id(t->bpe, tok);
                any_lang |= t->lang_ids[l] >= 0;
            }
            t->xtts_vocab = t->space_id >= 0 && any_lang;
        }
    } else if (!strcmp(name, "phonemes")) {
        t->kind = XTTS_TOK_PHONEMES;
        if (vocab_path) st = xtts_error_set(err, XTTS_EUSAGE, "the phonemes tokenizer takes no --vocab");
        else st = xtts_phonemizer_open(&t->ph, err);
    } else {
        st = xtts_error_set(err, XTTS_EUSAGE, "unknown tokenizer '%s' (bytes, bpe, phonemes)", name);
    }
    if (st) { xtts_tokenizer_free(t); return st; }
    *out = t;
    return XTTS_OK;
}

xtts_status xtts_tokenizer_set_threads(xtts_tokenizer *t, int n, xtts_error *err) {
    if (t->kind != XTTS_TOK_PHONEMES) return XTTS_OK;
    if (n <= 0) n = omp_get_max_threads();
    return xtts_phonemizer_start_workers(t->ph, n, err);
}

void xtts_tokenizer_free(xtts_tokenizer *t) {
    if (!t) return;
    xtts_bpe_free(t->bpe);
    xtts_phonemizer_free(t->ph);
    free(t);
}

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

xtts_status xtts_tokenizer_fill_header(const xtts_tokenizer *t, xtts_tokens_header *h, xtts_error *err) {
    xtts_status st = XTTS_OK;
    switch (t->kind) {
    case XTTS_TOK_BYTES:
    case XTTS_TOK_PHONEMES:
        strcpy(h->tokenizer, t->kind == XTTS_TOK_BYTES ? "bytes" : "phonemes");
        if (t->kind == XTTS_TOK_BYTES) bytes_hash(h->vocab_hash);
        else snprintf(h->vocab_hash, sizeof h->vocab_hash, "%s", xtts_phonemizer_hash(t->ph));
        h->vocab_size = t->kind == XTTS_TOK_BYTES ? XTTS_BYTES_VOCAB : xtts_phonemizer_vocab_size();
        h->pad_id = XTTS_BYTES_PAD;
        if (!st) st = set_int(h, "bos_id", XTTS_BYTES_START, err);
        if (!st) st = set_int(h, "eos_id", XTTS_BYTES_STOP, err);
        if (!st) st = set_int(h, "unk_id", XTTS_BYTES_UNK, err);
        break;
    case XTTS_TOK_BPE: {
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
        break;
    }
    }
    return st;
}

int xtts_tokenizer_wants_lowercase(const xtts_tokenizer *t) {
    switch (t->kind) {
    case XTTS_TOK_BYTES: return 1;
    case XTTS_TOK_BPE: return t->xtts_vocab || xtts_bpe_lowercases(t->bpe);
    case XTTS_TOK_PHONEMES: return 0;
    }
    return 0;
}

/* Id of the "[code]" token of a language in an XTTS vocabulary, or -1. */
static int32_t bpe_lang_id(const xtts_tokenizer *t, int lang) {
    if (lang < XTTS_N_LANGS) return t->lang_ids[lang];
    char tok[24];
    snprintf(tok, sizeof tok, "[%s]", xtts_lang_code(lang));
    return xtts_bpe_token_id(t->bpe, tok);
}

int xtts_tokenizer_has_lang(const xtts_tokenizer *t, int lang) {
    if (!xtts_lang_code(lang)) return 0;
    switch (t->kind) {
    case XTTS_TOK_BYTES: return 1;
    case XTTS_TOK_BPE: return !t->xtts_vocab || bpe_lang_id(t, lang) >= 0;
    case XTTS_TOK_PHONEMES: return xtts_phonemizer_has_lang(t->ph, lang);
    }
    return 0;
}

void xtts_tokenizer_lang_list(const xtts_tokenizer *t, char *buf, size_t n) {
    if (!n) return;
    buf[0] = 0;
    switch (t->kind) {
    case XTTS_TOK_BYTES: snprintf(buf, n, "bytes: any ISO 639 language code"); return;
    case XTTS_TOK_PHONEMES: snprintf(buf, n, "phonemes: the languages of espeak-ng's voices, see espeak-ng --voices"); return;
    case XTTS_TOK_BPE:
        if (!t->xtts_vocab) { snprintf(buf, n, "this vocabulary has no language tokens and takes any code"); return; }
        /* an XTTS vocabulary: its [xx] tokens among XTTS's languages */
        size_t k = (size_t)snprintf(buf, n, "the vocabulary has a [xx] token for:");
        for (int l = 0; l < XTTS_N_LANGS && k < n; l++)
            if (t->lang_ids[l] >= 0) k += (size_t)snprintf(buf + k, n - k, " %s", xtts_lang_codes[l]);
        if (k < n) k += (size_t)snprintf(buf + k, n - k, "; missing:");
        for (int l = 0; l < XTTS_N_LANGS && k < n; l++)
            if (t->lang_ids[l] < 0) k += (size_t)snprintf(buf + k, n - k, " %s", xtts_lang_codes[l]);
        return;
    }
}

xtts_status xtts_tokenizer_encode(const xtts_tokenizer *t, const char *text, int lang, xtts_ids *out, xtts_error *err) {
    out->n = 0;
    if (!xtts_tokenizer_has_lang(t, lang))
        return xtts_error_set(err, XTTS_EINPUT, "the tokenizer has no token for language %s",
                              xtts_lang_code(lang) ? xtts_lang_code(lang) : "?");
    switch (t->kind) {
    case XTTS_TOK_BYTES: {
        /* languages beyond XTTS's 17 have no language token: [START] bytes [STOP] */
        int fail = xtts_ids_push(out, XTTS_BYTES_START) || (lang < XTTS_N_LANGS && xtts_ids_push(out, XTTS_BYTES_LANG0 + lang));
        for (const unsigned char *p = (const unsigned char *)text; *p && !fail; p++)
            fail = xtts_ids_push(out, XTTS_BYTES_BYTE0 + *p);
        if (!fail) fail = xtts_ids_push(out, XTTS_BYTES_STOP);
        return fail ? xtts_error_set(err, XTTS_ENOMEM, "out of memory") : XTTS_OK;
    }
    case XTTS_TOK_BPE: {
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
        return st;
    }
    case XTTS_TOK_PHONEMES:
        return xtts_phonemizer_encode(t->ph, text, lang, out, err);
    }
    return XTTS_EUNSUPPORTED;
}
