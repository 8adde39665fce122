/* romanize.h — Chinese, Japanese and Korean turned into the Latin text XTTS's BPE reads, as
 * XTTS's VoiceBpeTokenizer.preprocess_text does it: zh-cn to tone-numbered pinyin (pypinyin
 * lazy_pinyin, Style.TONE3, neutral_tone_with_five), ja to lower-case Hepburn romaji
 * (cutlet), ko to hangul_romanize's academic transliteration. Thread-safe.
 */
#ifndef XTTS_ROMANIZE_H
#define XTTS_ROMANIZE_H

#include <stddef.h>

#include "prep/text/strbuf.h"

/* Append the romanization of text (UTF-8, len bytes) in language lang ("zh-cn", "ja" or
 * "ko") to out. Returns 0, or -1 (out unchanged) when lang is none of these or its data is
 * unavailable. */
int xtts_romanize(const char *text, size_t len, const char *lang, xtts_sb *out);

#endif
