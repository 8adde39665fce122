/* xtts_text.h — Coqui XTTS's own text preparation (TTS/tts/layers/xtts/tokenizer.py,
 * VoiceBpeTokenizer.preprocess_text: multilingual_cleaners, or basic_cleaners for hi; zh, ja
 * and ko romanized), reproduced exactly except for the departures in docs/xtts-tokenize.md.
 * This is --normalize xtts; xtts_normalize() calls it for XTTS_NORM_XTTS.
 */
#ifndef XTTS_XTTS_TEXT_H
#define XTTS_XTTS_TEXT_H

#include <stddef.h>

#include "common/xtts_common.h"
#include "common/strbuf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Prepare text (UTF-8, as the dataset holds it: XTTS applies no Unicode normalization
 * before its cleaners) of language lang (an XTTS language code such as "en" or "zh-cn") as
 * XTTS does before BPE. *out is malloc'd (caller frees). XTTS_EINPUT
 * with a reason when Coqui's own code would fail on it; XTTS_ENOMEM.
 * Errors: XTTS_EINPUT (num2words cannot say a number, cutlet fails on ja text),
 * XTTS_EUNSUPPORTED (digits in zh text, no number words or romanization for the language in
 * this build, lang empty or NULL), XTTS_ENOMEM. */
xtts_status xtts_text_prepare(const char *text, size_t len, const char *lang, char **out, xtts_error *err);

/* Coqui's character limit for a line of language lang (VoiceBpeTokenizer.char_limits: en 250,
 * de 253, fr 273, es 239, it 213, pt 203, pl 224, zh 82, ar 166, cs 186, ru 182, nl 251, tr 226,
 * ja 71, hu 224, ko 95; the code before a '-' counts, 250 for any other language). XTTS warns
 * when the raw text of a line is longer ("this might cause truncated audio"). */
int xtts_text_char_limit(const char *lang);

/* The length Coqui compares with that limit: Python's len() of the raw text, in code points
 * (a byte that is not UTF-8 counts as one). */
size_t xtts_text_char_count(const char *text, size_t len);

/* Numbers as words for --normalize spoken in the languages without spoken number words (numbers.h)
 * (nl pl tr ru cs ar hu ko): the number steps of the XTTS preparation (separators, currency,
 * decimals, ordinals where the language's marker says so, cardinals) with num2words' words,
 * without lowercasing the rest. Appends to out and returns 0; the text is appended unchanged
 * when one of its numbers cannot be said; -1 (nothing appended) when lang has no number
 * words in this build. */
int xtts_text_spoken_numbers(const char *text, size_t len, const char *lang, xtts_sb *out);

#ifdef __cplusplus
}
#endif
#endif
