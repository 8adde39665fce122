/* langid_model.h — character n-gram statistics (1- to 5-grams) of XTTS's 17 languages
 * (format: formats/langid-ngrams.md; built by scripts/dev/langid-build-model.py from texts in
 * Debian packages). The statistics are compiled into the library (prep/text/langid/langid_ngrams.bin);
 * the parser also takes any bytes, so that a damaged table is refused with a message.
 */
#ifndef XTTS_LANGID_MODEL_H
#define XTTS_LANGID_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "common/xtts_common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct xtts_langid_model xtts_langid_model;

/* Parse a table (the whole file in data). name is used in messages.
 * Errors: XTTS_EINPUT (bad magic, wrong language or order count, truncated, a bad entry
 * length or cost, trailing bytes, a floor out of range), XTTS_ENOMEM. */
xtts_status xtts_langid_model_parse(const uint8_t *data, size_t len, const char *name, xtts_langid_model **out,
                                    xtts_error *err);
/* NULL is allowed. */
void xtts_langid_model_delete(xtts_langid_model *m);

/* The compiled-in table, parsed once (thread-safe). NULL only if it failed to parse, which
 * the tests rule out. */
const xtts_langid_model *xtts_langid_model_builtin(void);

/* Log-likelihood in nats of UTF-8 text under each language's n-gram statistics (NFC,
 * lowercase, words of letters padded with a space, n = 1..5). Languages in XTTS index order.
 * Returns the number of n-grams any language knows (0: nothing to go by, ll all 0). */
size_t xtts_langid_model_score(const xtts_langid_model *m, const char *text, size_t len, double ll[XTTS_N_LANGS]);

#ifdef __cplusplus
}
#endif
#endif
