/* zh_numbers.h — Chinese text normalization as Coqui XTTS applies it to zh before pinyin:
 * the step `zh_num2words()(text)` of TTS/tts/layers/xtts/tokenizer.py (v0.22.0)
 * expand_numbers_multilingual, that is TextNorm() with its default options from
 * TTS/tts/layers/xtts/zh_num2words.py: numbers in their forms (dates, money, mobile and fixed
 * telephone numbers, fractions, percentages, numbers before a measure word, digit strings,
 * plain cardinals and decimals) written in Chinese characters, then every punctuation mark
 * (Chinese and ASCII) replaced by ','. Our own implementation of that behaviour, quirks
 * included (docs/xtts-tokenize.md, "zh numbers"). Thread-safe, no global state.
 */
#ifndef XTTS_ZH_NUMBERS_H
#define XTTS_ZH_NUMBERS_H

#include <stddef.h>

#include "common/xtts_common.h"
#include "common/strbuf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The longest integer part (in digits, leading zeros not counted) read with units (十 百 千
 * 万 亿 ...); a longer one is refused. Coqui's reader recurses once per 44 digits and raises
 * RecursionError from about 43,000 digits (44,000 in a bare TextNorm call). */
#define XTTS_ZH_MAX_DIGITS 40000

/* Append text (UTF-8, len bytes; text already lowercased as Coqui's cleaner does first)
 * normalized as Coqui's zh TextNorm does to out. Bytes that are not UTF-8 are copied through.
 * XTTS_OK; XTTS_EINPUT with a one-line reason for a number longer than XTTS_ZH_MAX_DIGITS;
 * XTTS_ENOMEM. On error out may hold part of the text. */
xtts_status xtts_zh_numbers_normalize(const char *text, size_t len, xtts_sb *out, xtts_error *err);

#ifdef __cplusplus
}
#endif
#endif
