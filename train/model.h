/* model.h — the xtts-train model: a decoder-only transformer over
 * [language token ; text tokens ; mel frames], in the manner of llm.c's train_gpt2.c.
 *
 * Every layer is a *_forward / *_backward pair with the same argument order; backward
 * functions ADD into their gradient outputs (the caller zeroes them). All parameters live
 * in one allocation (params_memory), their gradients in another of the same layout.
 *
 * Determinism: every OpenMP loop writes disjoint outputs and every sum runs in a fixed
 * order, so results are the same whatever the thread count or scheduling; this is what
 * makes a resumed run bit-identical to an uninterrupted one.
 *
 * Limits: CPU, float32, no dropout, no KV cache (training only).
 */
#ifndef XTTS_TRAIN_MODEL_H
#define XTTS_TRAIN_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "common/xtts_common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int n_layer;      /* L */
    int channels;     /* C */
    int n_head;       /* NH; C % NH == 0 */
    int n_mels;       /* M */
    int vocab_size;   /* V text tokens; XTTS_N_LANGS language tokens follow at V + lang_id */
    int max_text_pos; /* Pt positions in the text table: 1 (language) + max tokens */
    int max_mel_pos;  /* Pm positions in the mel table: max frames */
} xtts_model_config;

/* The named sizes: "tiny" (2, 128, 4), "small" (6, 384, 6), "base" (12, 768, 12).
 * Fills layers, width and heads only. Returns 0, or -1 for an unknown name. */
int xtts_model_size_preset(const char *name, int *n_layer, int *channels, int *n_head);

/* Checks a config (positive sizes, heads divide channels, sane limits).
 * Errors: XTTS_EUSAGE only. */
xtts_status xtts_model_config_check(const xtts_model_config *cfg, xtts_error *err);

#define XTTS_NUM_PARAM_TENSORS 22
typedef struct {
    float *wte;       /* (V + N_LANGS, C) token and language embeddings */
    float *wpe_text;  /* (Pt, C) text positions */
    float *wpe_mel;   /* (Pm, C) mel positions */
    float *melin_w;   /* (C, M) projection of the previous mel frame */
    float *melin_b;   /* (C) */
    float *mel_start; /* (M) learned frame before the first one */
    float *ln1w;      /* (L, C) */
    float *ln1b;      /* (L, C) */
    float *qkvw;      /* (L, 3C, C) */
    float *qkvb;      /* (L, 3C) */
    float *attprojw;  /* (L, C, C) */
    float *attprojb;  /* (L, C) */
    float *ln2w;      /* (L, C) */
    float *ln2b;      /* (L, C) */
    float *fcw;       /* (L, 4C, C) */
    float *fcb;       /* (L, 4C) */
    float *fcprojw;   /* (L, C, 4C) */
    float *fcprojb;   /* (L, C) */
    float *lnfw;      /* (C) */
    float *lnfb;      /* (C) */
    float *headw;     /* (M + 1, C) rows 0..M-1: mel frame, row M: stop logit */
    float *headb;     /* (M + 1) */
} xtts_param_tensors;

/* A batch as the model sees it. Row b holds n_text[b] text positions (language token,
 * then text tokens) followed directly by n_frames[b] mel positions, then padding up to
 * T; padding sits only at the end, so causal attention needs no mask.
 * Mel position j takes frame j-1 as input (mel_start for j = 0) and predicts frame j and
 * whether j is the last frame. */
typedef struct {
    int B;               /* rows in use */
    int T;               /* sequence length: max over rows of n_text + n_frames */
    int text_stride;     /* row stride of text (>= max n_text) */
    int mel_stride;      /* frames per row of mel (>= max n_frames) */
    const int32_t *text; /* (B, text_stride) token ids: text[b*text_stride + 0] is V + lang_id */
    const int *n_text;   /* (B) */
    const int *n_frames; /* (B) 0 marks an empty row (e.g. a skipped record) */
    const float *mel;    /* (B, mel_stride, M) time-major frames, normalized */
} xtts_model_batch;

typedef struct {
    float *encoded;   /* (B, T, C) */
    float *ln1;       /* (L, B, T, C) */
    float *ln1_mean;  /* (L, B, T) */
    float *ln1_rstd;  /* (L, B, T) */
    float *qkv;       /* (L, B, T, 3C) */
    float *atty;      /* (L, B, T, C) */
    float *att;       /* (L, B, NH, T, T) softmax output, lower triangle used */
    float *residual2; /* (L, B, T, C) */
    float *ln2;       /* (L, B, T, C) */
    float *ln2_mean;  /* (L, B, T) */
    float *ln2_rstd;  /* (L, B, T) */
    float *fch;       /* (L, B, T, 4C) */
    float *fch_gelu;  /* (L, B, T, 4C) */
    float *residual3; /* (L, B, T, C) */
    float *lnf;       /* (B, T, C) */
    float *lnf_mean;  /* (B, T) */
    float *lnf_rstd;  /* (B, T) */
    float *head;      /* (B, T, M + 1) */
} xtts_activations;

/* Gradient scratch for backward: one layer's worth, reused layer after layer. */
typedef struct {
    float *dresidual; /* (B, T, C) */
    float *dhead;     /* (B, T, M + 1) */
    float *dln;       /* (B, T, C) */
    float *datty;     /* (B, T, C) */
    float *dqkv;      /* (B, T, 3C) */
    float *dfch;      /* (B, T, 4C) */
    float *dfch_gelu; /* (B, T, 4C) */
} xtts_grad_scratch;

typedef struct {
    xtts_model_config config;
    size_t param_sizes[XTTS_NUM_PARAM_TENSORS];
    size_t num_parameters;
    xtts_param_tensors params;
    float *params_memory;
    xtts_param_tensors grads;
    float *grads_memory;
    /* activations, allocated for B_max x T_max */
    int B_max, T_max;
    xtts_activations acts;
    float *acts_memory;
    xtts_grad_scratch scratch;
    float *scratch_memory;
    float stop_pos_weight; /* BCE positive weight of the stop head */
    /* results of the last forward */
    float loss, mel_loss, stop_loss;
    int n_frames_total; /* real frames in the last batch */
} xtts_model;

/* Allocate a model for batches up to B_max rows of T_max positions. Parameters are
 * initialised from seed (GPT-2's scheme: N(0, 0.02), output projections scaled by
 * 1/sqrt(2L), LayerNorm weights 1, biases 0). Returns XTTS_ENOMEM or XTTS_EUSAGE.
 * Errors: XTTS_EUSAGE (a config xtts_model_config_check refuses, an empty batch shape),
 * XTTS_ENOMEM. */
xtts_status xtts_model_new(const xtts_model_config *cfg, int B_max, int T_max, uint64_t seed,
                           xtts_model **out, xtts_error *err);
/* NULL is allowed. */
void xtts_model_delete(xtts_model *m);

/* Number of parameters of a model of this config. */
size_t xtts_model_num_parameters(const xtts_model_config *cfg);

/* Name of parameter tensor i (e.g. "qkvw"). */
const char *xtts_param_name(int i);
/* Pointer to tensor i inside a params- or grads-layout buffer. */
float *xtts_param_tensor(const xtts_model *m, float *memory, int i);

/* Check a batch against the model (token ids, lengths, positions, B and T).
 * Errors: XTTS_ERANGE only (the field out of range, named). */
xtts_status xtts_model_check_batch(const xtts_model *m, const xtts_model_batch *bt, xtts_error *err);

/* Forward: fills activations, loss = mel_loss + stop_loss. mel_loss is the mean L1 over
 * real frames and mel channels; stop_loss the mean BCE over real frames. */
void xtts_model_forward(xtts_model *m, const xtts_model_batch *bt);
void xtts_model_zero_grad(xtts_model *m);
/* Backward of the last forward (same batch): adds into grads. */
void xtts_model_backward(xtts_model *m, const xtts_model_batch *bt);

#ifdef __cplusplus
}
#endif
#endif
