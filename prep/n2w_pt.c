/* n2w_pt.c — num2words 0.5.12's number words for "pt" (see num2words.h). Not written yet:
 * every form reports that it cannot say the number. */
#include "prep/num2words.h"

const xtts_n2w_lang xtts_n2w_pt = {"pt", NULL, NULL, NULL, NULL};
