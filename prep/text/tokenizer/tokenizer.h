/* tokenizer.h — text to token ids: bytes (built in), bpe (Hugging Face tokenizer.json),
 * phonemes (espeak-ng IPA). One interface so that xtts-tokenize does not care which.
 *
 * A tokenizer is opened once and then used from any number of threads at the same time
 * (xtts_tokenizer_encode is thread-safe; the phoneme tokenizer serializes its calls into
 * espeak-ng, or spreads them over worker processes after xtts_tokenizer_set_threads, see
 * docs/xtts-tokenize.md).
 */
#ifndef XTTS_TOKENIZER_H
#define XTTS_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

#include "common/xtts_common.h"
#include "prep/text/tokenizer/ids.h"
#include "formats/tokens.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { XTTS_TOK_BYTES = 0, XTTS_TOK_BPE = 1, XTTS_TOK_PHONEMES = 2 } xtts_tokenizer_kind;

typedef struct xtts_tokenizer xtts_tokenizer;

/* Open a tokenizer. "bytes" and "phonemes" take no file (vocab_path NULL); "bpe" needs
 * vocab_path (a tokenizer.json). Errors name the file and the reason (XTTS_EINPUT for an
 * invalid vocabulary, XTTS_EIO when it cannot be read, XTTS_EUSAGE for an unknown name).
 * Errors: XTTS_EUSAGE (unknown name; bpe without vocab_path, or bytes/phonemes with one),
 * those of xtts_bpe_open (XTTS_ENOTFOUND for a missing file, XTTS_EIO, XTTS_ERANGE,
 * XTTS_EINPUT, XTTS_ENOMEM) and of xtts_phonemizer_new (XTTS_EIO, XTTS_ENOMEM). */
xtts_status xtts_tokenizer_open(const char *name, const char *vocab_path, xtts_tokenizer **out, xtts_error *err);
/* NULL is allowed. */
void xtts_tokenizer_close(xtts_tokenizer *t);

xtts_tokenizer_kind xtts_tokenizer_kind_of(const xtts_tokenizer *t);

/* Fill tokenizer, vocab_hash, vocab_size and pad_id, and add bos_id/eos_id/unk_id extras
 * when the vocabulary has them.
 * Errors: those of xtts_tokens_header_set (XTTS_EINPUT, XTTS_ERANGE when h's extras are
 * full). */
xtts_status xtts_tokenizer_fill_header(const xtts_tokenizer *t, xtts_tokens_header *h, xtts_error *err);

/* 1 if text should be lowercased before this tokenizer (bytes: yes; bpe: XTTS
 * vocabularies and those whose normalizer lowercases; phonemes: no). */
int xtts_tokenizer_wants_lowercase(const xtts_tokenizer *t);

/* 1 if the tokenizer can encode text of language lang, a language id of xtts_lang_code()
 * (bytes: any; an XTTS vocabulary: has its "[code]" token; phonemes: espeak-ng has a voice
 * by that name). */
int xtts_tokenizer_has_lang(const xtts_tokenizer *t, int lang);
/* One line saying which languages the tokenizer serves (for an XTTS vocabulary: which of
 * XTTS's 17 it has a [xx] token for and which are missing), into buf. */
void xtts_tokenizer_lang_list(const xtts_tokenizer *t, char *buf, size_t n);

/* 1 for a BPE vocabulary in XTTS's form: it holds [SPACE] and [xx] language tokens, and
 * text is encoded as XTTS's VoiceBpeTokenizer does ([lang] prefix, spaces as [SPACE]). */
int xtts_tokenizer_is_xtts(const xtts_tokenizer *t);

/* With an XTTS vocabulary, xtts_tokenizer_encode refuses text whose ids hold [UNK], naming
 * the characters not in the vocabulary; allow 1 lets such ids through (--allow-unk). */
void xtts_tokenizer_set_allow_unk(xtts_tokenizer *t, int allow);

/* Encode normalized text of language lang into out (reset to n = 0 first). Thread-safe.
 * XTTS_EINPUT with a reason when the text cannot be encoded.
 * Errors: XTTS_EINPUT (no token or voice for lang; bpe: invalid UTF-8, [UNK] in an XTTS
 * vocabulary without allow_unk; phonemes: espeak-ng fails or gives nothing), XTTS_ENOMEM;
 * phonemes with workers also XTTS_EIO (a dead worker cannot be replaced). */
xtts_status xtts_tokenizer_encode(const xtts_tokenizer *t, const char *text, int lang, xtts_ids *out, xtts_error *err);

/* Let the tokenizer use n threads at once where it needs processes for that (phonemes:
 * worker processes, see xtts_phonemizer_start_workers); n 0 means OpenMP's default thread
 * count. Other tokenizers need nothing.
 * Errors: phonemes: those of xtts_phonemizer_start_workers (XTTS_EIO); others: none. */
xtts_status xtts_tokenizer_set_threads(xtts_tokenizer *t, int n, xtts_error *err);

#ifdef __cplusplus
}
#endif
#endif
