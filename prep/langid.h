/* langid.h — language identification among XTTS's 17 languages.
 *
 * Order of evidence: the writing system (Hangul -> ko, kana -> ja, Han -> zh-cn, Arabic ->
 * ar, Devanagari -> hi, Cyrillic -> ru); for Latin text, letters only one of the 11 Latin
 * languages uses (ñ ¿ ¡ es, ß de, ő ű hu, ł ą ę ś ź ż pl, ř ě ů cs, ı ğ ş tr, ã õ pt);
 * then CLD2's statistics, restricted to the 17 (its close relatives such as Galician or
 * Slovak mapped to the XTTS language they stand for), cross-checked against each
 * language's most frequent function words. Accuracy per language: docs/langid.md.
 * Thread-safe.
 */
#ifndef XTTS_LANGID_H
#define XTTS_LANGID_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    char code[16]; /* CLD2 language code ("en", "zh", "un" for unknown) */
    int percent;   /* share of the text's bytes */
    double score;  /* CLD2's normalized score */
} xtts_cld2_guess;

/* CLD2's best three languages for text (prep/langid_cld2.cc). hint: comma-separated codes
 * to boost, or NULL. Returns CLD2's "reliable" flag (rarely false; not trusted here). */
int xtts_cld2_detect(const char *text, size_t len, const char *hint, xtts_cld2_guess out[3]);

typedef struct {
    int lang;           /* XTTS language index, or -1 when nothing could be said */
    int sure;           /* 1 when the evidence is strong (script, unique letters, or long text) */
    const char *method; /* "script", "letters", "cld2", "words", "none" */
} xtts_langid_result;

/* Identify the language of UTF-8 text. */
void xtts_langid_detect(const char *text, size_t len, xtts_langid_result *r);

#ifdef __cplusplus
}
#endif
#endif
