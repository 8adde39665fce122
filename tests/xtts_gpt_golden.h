/* xtts_gpt_golden.h — the golden files of XTTS's GPT (tests/golden/make_xtts_gpt_golden.py:
 * layout there) read for tests/test_xtts_gpt.c and tests/tools/xtts-gpt-grads.c. Test code. */
#ifndef XTTS_TESTS_XTTS_GPT_GOLDEN_H
#define XTTS_TESTS_XTTS_GPT_GOLDEN_H

#include <stddef.h>
#include <stdint.h>

#include "train/xtts_gpt.h"

typedef struct {
    int32_t cfg[20];
    double opt[7]; /* lr beta1 beta2 eps wd text_w mel_w */
    int version;   /* 1: init, grad, after; 2: init only */
    int B, L, MC, NM, S, steps;
    int32_t *text_lengths, *wav_lengths, *cond_idxs, *text, *codes;
    float *cond;
    double eval_loss[2], step_loss[16];
    int nt;
    char **names;
    int *decay, *ndim;
    int32_t (*shape)[4];
    size_t *numel, total;
    float *init, *grad, *after; /* grad, after NULL in version 2 */
} golden;

/* 0, or -1 for a file that cannot be read or is out of form */
int xtts_test_golden_load(const char *path, golden *g);
void xtts_test_golden_free(golden *g);
/* the model config the golden was made with */
void xtts_test_golden_config(const golden *g, xtts_gpt_config *c);
/* the golden's batch, with prompt masking (train) or without */
xtts_gpt_batch xtts_test_golden_batch(const golden *g, int train);

#endif
