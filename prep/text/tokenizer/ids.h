/* ids.h — the growable token-id buffer every tokenizer writes into, and the fixed ids of the
 * bytes tokenizer (formats/tokens.md). Shared by the tokenizer facade (tokenizer.c) and the
 * back ends (bpe.c, phonemes.c) without either calling the other.
 */
#ifndef XTTS_PREP_TEXT_IDS_H
#define XTTS_PREP_TEXT_IDS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Growable id buffer owned by the caller (ids may be NULL with cap 0; free(ids) at the end). */
typedef struct {
    int32_t *ids;
    size_t n, cap;
} xtts_ids;

/* Bytes tokenizer, version 1 (formats/tokens.md): fixed ids, vocab_size 288. */
#define XTTS_BYTES_PAD 0
#define XTTS_BYTES_START 1
#define XTTS_BYTES_STOP 2
#define XTTS_BYTES_UNK 3
#define XTTS_BYTES_LANG0 4
#define XTTS_BYTES_BYTE0 32
#define XTTS_BYTES_VOCAB 288

/* Append id; 0, or -1 when out of memory (the buffer is unchanged). */
int xtts_ids_push(xtts_ids *v, int32_t id);

#ifdef __cplusplus
}
#endif
#endif
