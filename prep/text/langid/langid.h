/* langid.h — language identification among XTTS's 17 languages.
 *
 * A writing system other than Latin decides on its own (Hangul -> ko, kana -> ja, Han ->
 * zh-cn, Arabic -> ar, Devanagari -> hi, Cyrillic -> ru). Latin text is scored per
 * language: character 1- to 5-gram statistics (prep/text/langid/langid_model.h) plus bonuses for
 * CLD2's answer (restricted to the 17, close relatives such as Galician or Slovak mapped
 * to the XTTS language they stand for), for letters only one Latin language uses (ñ ¿ ¡
 * es, ß de, ő ű hu, ł ą ę ś ź ż pl, ř ě ů ... cs, ı ğ ş tr, ã õ pt) and for each
 * language's frequent function words. xtts_langid_choose() adds the dataset's and the
 * speaker's language distribution as a prior. Accuracy per language and the cost:
 * docs/langid.md.
 * Thread-safe.
 */
#ifndef XTTS_LANGID_H
#define XTTS_LANGID_H

#include <stddef.h>

#include "common/xtts_common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    char code[16]; /* CLD2 language code ("en", "zh", "un" for unknown) */
    int percent;   /* share of the text's bytes */
    double score;  /* CLD2's normalized score */
} xtts_cld2_guess;

/* CLD2's best three languages for text (prep/text/langid/langid_cld2.cc). hint: comma-separated codes
 * to boost, or NULL. Returns CLD2's "reliable" flag (rarely false; not trusted here). */
int xtts_cld2_detect(const char *text, size_t len, const char *hint, xtts_cld2_guess out[3]);

typedef struct {
    int lang;           /* XTTS language index (the best score), or -1 when nothing could be said */
    int sure;           /* 1 when the best score leads the second by XTTS_LANGID_SURE or more */
    const char *method; /* "script" (decided by the writing system), "text" (scores), "none" */
    /* log-posterior per language (natural log, uniform prior; all 0 when lang is -1) */
    double score[XTTS_N_LANGS];
    /* 0, or (xtts_langid_detect_quick) the most that the evidence left out could add to any
     * one language's score, in nats */
    double open;
} xtts_langid_result;

/* A lead of this many nats (odds of about 150:1) makes a detection sure. */
#define XTTS_LANGID_SURE 5.0

/* Identify the language of UTF-8 text on its own. */
void xtts_langid_detect(const char *text, size_t len, xtts_langid_result *r);

/* The same, but CLD2 (the costliest part) is left out when the rest of the evidence already
 * leads by XTTS_LANGID_SURE + 4 nats or more: lang and sure are then exactly those of
 * xtts_langid_detect, the scores lack CLD2's bonus (r->open = 3, at most that much to one
 * language). Else the result is xtts_langid_detect's (r->open = 0). For a dataset's first
 * pass: xtts_langid_prior_settles() tells, once the prior is known, whether the left-out
 * bonus could change the choice (then score the text again with xtts_langid_detect). */
void xtts_langid_detect_quick(const char *text, size_t len, xtts_langid_result *r);

/* Choose the languages of a whole dataset: each record's scores (from xtts_langid_detect,
 * in record order) plus the log of a prior, the language distribution of the record's
 * speaker shrunk towards that of the dataset, both estimated from the sure records. A
 * one-language dataset sends short unsure lines to its language; in a balanced one the
 * text decides. speaker: one name per record (NULL, or NULL entries, for none). out[i]:
 * the chosen language, -1 when record i has no letters and no record is sure. Returns the
 * number of records whose choice differs from their own best score. Deterministic. */
size_t xtts_langid_choose(size_t n, const xtts_langid_result *res, const char *const *speaker, int *out);

/* The same choice for a stream too large to hold: add every record's result (first pass),
 * then choose record by record (second pass, the same results again). Memory grows with
 * the number of speakers, not of records. xtts_langid_choose is these three steps. */
typedef struct {
    double ds[XTTS_N_LANGS], n_sure;   /* sure records per language, and in all */
    double p_ds[XTTS_N_LANGS];         /* after xtts_langid_prior_done: the dataset prior */
    double lp_ds[XTTS_N_LANGS];        /* and its log */
    char **names;                      /* speaker names by index (first appearance) */
    double *sc;                        /* per speaker: sure counts per language, then the total */
    size_t n_spk, cap_spk;
    size_t *slot, cap_slot;            /* open addressing: speaker index + 1 */
    int failed;                        /* out of memory: the speaker prior is left out */
} xtts_langid_prior;

void xtts_langid_prior_init(xtts_langid_prior *p);
/* Count one record's result (speaker NULL or "" for none). */
void xtts_langid_prior_add(xtts_langid_prior *p, const xtts_langid_result *r, const char *speaker);
/* After the last add. */
void xtts_langid_prior_done(xtts_langid_prior *p);
/* The language chosen for one record, -1 when it has no letters and no record is sure. */
int xtts_langid_prior_choose(const xtts_langid_prior *p, const xtts_langid_result *r, const char *speaker);
/* 1 when xtts_langid_prior_choose(p, r, speaker) is the choice the full scores would give:
 * always when r->open is 0, else when the choice leads every other language by more than
 * r->open. 0: score the text with xtts_langid_detect and choose with that result. */
int xtts_langid_prior_settles(const xtts_langid_prior *p, const xtts_langid_result *r, const char *speaker);
/* NULL is allowed. */
void xtts_langid_prior_free(xtts_langid_prior *p);

/* Results kept from a stream's first pass for its second, so that each text is scored once
 * (xtts-tokenize scores every record while it gathers the prior, and chooses from the kept
 * results). Kept exactly, in 3 to 101 bytes (the scores of the 11 Latin-script languages
 * and the common score of the 6 others for text, nothing more for the writing system or no
 * letters), in record order, up to `limit` bytes: the results put after that are not kept,
 * and the second pass scores those records again. */
typedef struct {
    unsigned char *buf;
    size_t len, cap, limit;
    size_t pos;                 /* xtts_langid_store_get: the next entry */
    size_t last_put, last_got;  /* keys, for the deltas */
    int full;
} xtts_langid_store;

void xtts_langid_store_init(xtts_langid_store *s, size_t limit);
/* Keep r as the result of record `key` (keys increasing). 0 when it was not kept (the store
 * is full, or out of memory): nothing after it is kept either. */
int xtts_langid_store_put(xtts_langid_store *s, size_t key, const xtts_langid_result *r);
/* The kept result of record `key` (keys asked for in increasing order): 1 and *r filled
 * (r->method as xtts_langid_detect names it), 0 when it was not kept. */
int xtts_langid_store_get(xtts_langid_store *s, size_t key, xtts_langid_result *r);
/* NULL is allowed. */
void xtts_langid_store_free(xtts_langid_store *s);

#ifdef __cplusplus
}
#endif
#endif
