/* romanize.h — Chinese, Japanese and Korean turned into the Latin text XTTS's BPE reads, as
 * XTTS's VoiceBpeTokenizer.preprocess_text does it: zh-cn to tone-numbered pinyin (pypinyin
 * lazy_pinyin, Style.TONE3, neutral_tone_with_five), ja to lower-case Hepburn romaji
 * (cutlet's rules over MeCab with UniDic), ko to hangul_romanize's academic transliteration. Thread-safe.
 */
#ifndef XTTS_ROMANIZE_H
#define XTTS_ROMANIZE_H

#include <stddef.h>

#include "common/strbuf.h"

/* Append the romanization of text (UTF-8, len bytes) in language lang ("zh-cn", "ja" or
 * "ko") to out. Returns 0, or -1 (out unchanged) when lang is none of these or its data is
 * unavailable. */
int xtts_romanize(const char *text, size_t len, const char *lang, xtts_sb *out);

/* The same, with a reason: returns 0; -1 when the language or its data is unavailable
 * (ja without a UniDic dictionary: $XTTS_UNIDIC, else /var/lib/mecab/dic/unidic); -2 when
 * the reference itself fails on this text (a kana it has no romaji for, text that is not
 * UTF-8). why (may be NULL) gets a one-line reason; out may hold part of a result on -2. */
int xtts_romanize_why(const char *text, size_t len, const char *lang, xtts_sb *out, char *why, size_t why_size);

/* NULL when ja can be romanized here, else why not (one line) */
const char *xtts_romanize_ja_unavailable(void);

#endif
