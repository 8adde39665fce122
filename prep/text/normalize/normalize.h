/* normalize.h — text normalization before tokenizing.
 *
 * Steps, in order (XTTS_NORM_XTTS has its own, prep/text/normalize/xtts_text.h): Unicode NFC
 * (utf8proc); quotes, dashes, ellipses and invisible characters unified; per-language
 * expansion of abbreviations, symbols and numbers
 * (cardinals, ordinals, decimals, negatives, percentages, currency, times, English years)
 * for en es fr de it pt; whitespace collapsed and trimmed; lowercasing when asked.
 * The rules live in tables (prep/text/normalize/normalize_rules.c) that a reader can extend.
 *
 * Thread-safe: no global state.
 */
#ifndef XTTS_NORMALIZE_H
#define XTTS_NORMALIZE_H

#include <stddef.h>

#include "common/xtts_common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define XTTS_NORMALIZER_VERSION "1"
/* --normalize xtts: 2 since it reads the text as given (1 applied NFC and unification first,
 * now XTTS_NORM_XTTS_UNIFIED, recorded as xtts-unify-2) */
#define XTTS_NORMALIZER_VERSION_XTTS "2"

/* Flags returned by xtts_normalize. */
#define XTTS_NORM_DIGITS_KEPT 0x1u /* the language has no number expansion; digits stayed */

/* What normalization does (xtts-tokenize --normalize). Spoken and none start with NFC and
 * unification; xtts does not. */
typedef enum {
    XTTS_NORM_SPOKEN = 0, /* our own reading: years as years, per-language expansion (numbers.h) */
    XTTS_NORM_XTTS = 1,   /* Coqui XTTS's own text preparation, exactly (prep/text/normalize/xtts_text.c),
                             on the text as given: no NFC, no unification */
    XTTS_NORM_NONE = 2,   /* NFC, unification and whitespace only (was --no-expand) */
    XTTS_NORM_XTTS_UNIFIED = 3, /* NFC and unification, then Coqui's steps (--normalize xtts --unify) */
} xtts_norm_mode;

typedef struct {
    int lowercase; /* lowercase the result (full Unicode lowercasing) */
    int expand;    /* expand numbers, abbreviations and symbols (default on); 0 acts as XTTS_NORM_NONE */
    xtts_norm_mode mode; /* XTTS_NORM_SPOKEN when zero-initialized */
} xtts_normalize_options;

/* Normalize text (UTF-8, len bytes) for language lang (an XTTS language index). On success
 * *out is a malloc'd NUL-terminated string the caller frees (possibly empty) and *flags
 * holds XTTS_NORM_* bits. Fails with XTTS_EINPUT for invalid UTF-8 and XTTS_ENOMEM.
 * Errors: XTTS_EINPUT (invalid UTF-8, Unicode normalization fails), XTTS_ENOMEM; with
 * XTTS_NORM_XTTS also those of xtts_text_prepare (XTTS_EINPUT, XTTS_EUNSUPPORTED). */
xtts_status xtts_normalize(const char *text, size_t len, int lang, const xtts_normalize_options *opts, char **out,
                           unsigned *flags, xtts_error *err);

/* NFC, unification and whitespace only (no expansion, no lowercasing): what language
 * identification looks at. Same contract as xtts_normalize.
 * Errors: XTTS_EINPUT (invalid UTF-8, Unicode normalization fails), XTTS_ENOMEM. */
xtts_status xtts_normalize_basic(const char *text, size_t len, char **out, xtts_error *err);

#ifdef __cplusplus
}
#endif
#endif
