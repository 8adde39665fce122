/* normalize_rules.h — the tables the normalizer expands text with (normalize_rules.c).
 * Add a row to extend a language; each table ends with a row whose lang is -1. */
#ifndef XTTS_NORMALIZE_RULES_H
#define XTTS_NORMALIZE_RULES_H

/* An abbreviation, matched case-sensitively as a whole word (the character before and
 * after it is not a letter or digit). If need_upper, only when the next word starts with
 * an upper-case letter (fr "M. Dupont"); if need_digit, only before a number (en "No. 5"). */
typedef struct {
    int lang;
    const char *abbr;
    const char *expansion;
    int need_upper, need_digit;
} xtts_abbrev_rule;

/* A symbol read as a word (with spaces around it). */
typedef struct {
    int lang;
    const char *symbol;
    const char *word;
} xtts_symbol_rule;

/* A currency: symbol before or after the amount. *_fem: the noun is feminine. */
typedef struct {
    int lang;
    const char *symbol;
    const char *major_one, *major_many, *minor_one, *minor_many;
    int major_fem, minor_fem;
} xtts_currency_rule;

/* Words a language needs around numbers. */
typedef struct {
    int lang;
    const char *minus;      /* before a negative number */
    const char *point;      /* decimal separator read aloud when it is '.' */
    const char *comma;      /* decimal separator read aloud when it is ',' */
    const char *percent;
    const char *money_and;  /* between major and minor currency units */
    const char *hour_one, *hour_many; /* after the hour in a time ("heures", "Uhr"), "" for none */
    const char *time_join;  /* between hour and minutes */
    const char *oclock;     /* after a full hour ("o'clock"), "" for none */
    char decimal_sep;       /* '.' (en) or ',' */
    char group_sep;         /* ',' (en) or '.' */
} xtts_lang_words;

extern const xtts_abbrev_rule xtts_abbrev_rules[];
extern const xtts_symbol_rule xtts_symbol_rules[];
extern const xtts_currency_rule xtts_currency_rules[];
extern const xtts_lang_words xtts_lang_words_table[];
/* German words after which "N." is an ordinal (months, Jahrhundert). */
extern const char *const xtts_de_ordinal_nouns[];

#endif
