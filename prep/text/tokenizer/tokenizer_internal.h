/* tokenizer_internal.h — the per-kind tokenizers behind xtts_tokenizer_open (bpe.c,
 * phonemes.c), for tokenizer.c and for the tests that check each kind on its own; outside
 * the library's API (not installed by `make install`): a caller opens any kind through
 * tokenizer.h.
 */
#ifndef XTTS_TOKENIZER_INTERNAL_H
#define XTTS_TOKENIZER_INTERNAL_H

#include <stddef.h>

#include "common/xtts_common.h"
#include "prep/text/tokenizer/ids.h"
#include "prep/text/tokenizer/tokenizer.h"

#ifdef __cplusplus
extern "C" {
#endif

/* BPE over a parsed tokenizer.json (prep/text/tokenizer/bpe.c). */
typedef struct xtts_bpe xtts_bpe;
/* Errors (open_buffer): XTTS_EINPUT (not JSON, a duplicate key, a model, vocabulary, merge,
 * added token, normalizer or pre-tokenizer it does not accept, an empty vocabulary),
 * XTTS_ENOMEM. Errors (open): those of xtts_read_file (XTTS_ENOTFOUND, XTTS_EIO, XTTS_ERANGE
 * past 1 GiB, XTTS_ENOMEM) and of open_buffer. */
xtts_status xtts_bpe_open(const char *path, xtts_bpe **out, xtts_error *err);
xtts_status xtts_bpe_open_buffer(const char *json, size_t len, const char *name, xtts_bpe **out, xtts_error *err);
/* NULL is allowed. */
void xtts_bpe_close(xtts_bpe *b);
/* Encode raw text exactly as the HF tokenizers library does for this tokenizer.json
 * (added tokens, normalizer subset, pre-tokenizer, BPE model), no XTTS formatting.
 * Errors: XTTS_EINPUT (Unicode normalization fails, e.g. invalid UTF-8), XTTS_ENOMEM. */
xtts_status xtts_bpe_encode(const xtts_bpe *b, const char *text, xtts_ids *out, xtts_error *err);
int xtts_bpe_vocab_size(const xtts_bpe *b);
/* Id of a token string in the vocabulary or added tokens, or -1. */
int xtts_bpe_token_id(const xtts_bpe *b, const char *token);
const char *xtts_bpe_hash(const xtts_bpe *b); /* "sha256:..." of the file's bytes */
int xtts_bpe_lowercases(const xtts_bpe *b);   /* its normalizer includes Lowercase */
int xtts_bpe_unk_id(const xtts_bpe *b);       /* the model's unk_token id, or -1 */
/* 1 if the n bytes at s are a token of the model's vocabulary (added tokens not counted). */
int xtts_bpe_has_piece(const xtts_bpe *b, const char *s, size_t n);

/* Phonemes (prep/text/tokenizer/phonemes.c). */
typedef struct xtts_phonemizer xtts_phonemizer;
/* Errors: XTTS_EIO (espeak-ng cannot initialize), XTTS_ENOMEM. */
xtts_status xtts_phonemizer_new(xtts_phonemizer **out, xtts_error *err);
/* NULL is allowed. */
void xtts_phonemizer_delete(xtts_phonemizer *p);
int xtts_phonemizer_has_lang(const xtts_phonemizer *p, int lang);
/* Fork n worker processes (at least one), each with its own espeak-ng, so that n threads
 * can phonemize at once (thread t uses worker t % n) and a crash inside espeak-ng costs one
 * text, not the process: a worker that dies is replaced and the text tried once more in
 * the new one; a second death is XTTS_EINPUT for that text. Call before any parallel
 * region. The workers end when the phonemizer is freed.
 * Errors: XTTS_EIO only (socketpair or fork fails); with workers already started, none. */
xtts_status xtts_phonemizer_start_workers(xtts_phonemizer *p, int n, xtts_error *err);
int xtts_phonemizer_workers(const xtts_phonemizer *p);
/* Process id of worker i (0 <= i < workers), or -1. */
int xtts_phonemizer_worker_pid(const xtts_phonemizer *p, int i);
/* IPA of text as UTF-8 (malloc'd, caller frees). Serialized internally.
 * Errors: XTTS_EINPUT (no voice for lang, espeak-ng cannot select it, a worker died twice on
 * the text, text over 4 GiB), XTTS_ENOMEM, XTTS_EIO (a dead worker cannot be replaced). */
xtts_status xtts_phonemizer_ipa(xtts_phonemizer *p, const char *text, int lang, char **ipa, xtts_error *err);
/* Map IPA to ids: [START] [lang] symbols [STOP].
 * Errors: those of xtts_phonemizer_ipa, XTTS_ENOMEM, XTTS_EINPUT (no phonemes came out). */
xtts_status xtts_phonemizer_encode(xtts_phonemizer *p, const char *text, int lang, xtts_ids *out, xtts_error *err);
int xtts_phonemizer_vocab_size(void);
/* The symbol of a phoneme id: "[PAD]".."[UNK]", a language code for 4-20, " " for 21, the
 * IPA symbol (one code point) from 22 on; NULL outside the vocabulary. */
const char *xtts_phonemizer_symbol(int id);
const char *xtts_phonemizer_hash(const xtts_phonemizer *p);

#ifdef __cplusplus
}
#endif
#endif
