/* n2w_hu.c — num2words 0.5.12's number words for "hu" (see num2words.h). Not written yet:
 * every form reports that it cannot say the number. */
#include "prep/num2words.h"

const xtts_n2w_lang xtts_n2w_hu = {"hu", NULL, NULL, NULL, NULL};
