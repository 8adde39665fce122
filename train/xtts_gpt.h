/* xtts_gpt.h — XTTS's GPT (Coqui TTS, TTS/tts/layers/xtts/gpt.py) in its training forward and
 * backward, in the manner of llm.c's train_gpt2.c: the conditioning encoder (latent_encoder.py:
 * a 1x1 convolution and six attention blocks with group norm), the perceiver resampler
 * (perceiver_encoder.py: 32 latents, two cross-attention and GEGLU feed-forward layers, RMS norm),
 * the text and audio-code embeddings with learned positions, HF's GPT-2 stack with the padding
 * masks of Coqui's attention_mask, GPT-2's final norm and Coqui's final_norm, the text and mel
 * heads, and the two cross-entropies with Coqui's targets and masks (GPT.forward).
 *
 * Parameters are Coqui's tensors, named by their keys in GPT's state dict (Xtts's model.pth adds
 * "gpt."), all in one allocation in that order; HF GPT-2's Conv1D weights, stored (in, out) by
 * Coqui, are kept here (out, in) as every other linear map (xtts_gpt_set_tensor and
 * xtts_gpt_get_tensor convert). Gradients have the same layout.
 *
 * Limits: CPU, float32, no dropout (Coqui trains with GPT-2's dropouts of 0.1; a run with them
 * cannot be compared step for step), the perceiver resampler only (XTTS-v2; v1's prompt
 * embedding is refused), one conditioning input per row.
 */
#ifndef XTTS_TRAIN_XTTS_GPT_H
#define XTTS_TRAIN_XTTS_GPT_H

#include <stddef.h>
#include <stdint.h>

#include "common/xtts_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* GPT's constructor arguments as Xtts.init_models passes them (config.json's model_args). */
typedef struct {
    int layers, dim, heads;          /* gpt_layers, gpt_n_model_channels, gpt_n_heads */
    int n_text_tokens;               /* gpt_number_text_tokens */
    int n_audio_tokens;              /* gpt_num_audio_tokens */
    int start_text_token, stop_text_token, start_audio_token, stop_audio_token;
    int max_text_tokens, max_audio_tokens, max_prompt_tokens;
    int code_stride;                 /* gpt_code_stride_len: waveform samples per code */
    int use_perceiver;               /* gpt_use_perceiver_resampler (must be 1) */
    int cond_compression;            /* perceiver_cond_length_compression (256) */
    int n_mels;                      /* conditioning mel channels (80) */
} xtts_gpt_config;

/* XTTS-v2's released config (30 layers, 1024 channels, 16 heads, 6681 text tokens, start 261,
 * stop 0, 1026 audio tokens, start 1024, stop 1025, max 402 / 605 / 70 tokens, stride 1024). */
void xtts_gpt_config_defaults(xtts_gpt_config *c);

/* Checks sizes and token ids. Errors: XTTS_EUSAGE (a bad value, named), XTTS_EUNSUPPORTED
 * (use_perceiver 0). */
xtts_status xtts_gpt_config_check(const xtts_gpt_config *c, xtts_error *err);

#define XTTS_GPT_MAX_MILESTONES 16

/* What GPTTrainer trains with besides the model: GPTArgs' fields and the recipe's optimizer and
 * schedule (recipes/ljspeech/xtts_v2/train_gpt_xtts.py). */
typedef struct {
    float lr, beta1, beta2, eps, weight_decay; /* AdamW; lr 5e-6, betas 0.9/0.96, eps 1e-8, wd 1e-2 */
    int wd_only_on_weights;                    /* optimizer_wd_only_on_weights (1) */
    float grad_clip;                           /* 0: none */
    long milestones[XTTS_GPT_MAX_MILESTONES];  /* MultiStepLR, in optimizer steps */
    int n_milestones;
    float gamma;                               /* 0.5 */
    float text_ce_weight, mel_ce_weight;       /* gpt_loss_text_ce_weight 0.01, gpt_loss_mel_ce_weight 1 */
    int min_cond_samples, max_cond_samples;    /* min/max_conditioning_length: 66150, 132300 */
    int max_wav_samples, max_text_tokens;      /* max_wav_length 255995, max_text_length 200 */
    int masking_gt_prompt;                     /* gpt_use_masking_gt_prompt_approach (1) */
} xtts_gpt_recipe;

void xtts_gpt_recipe_defaults(xtts_gpt_recipe *r);

/* Reads an XTTS config.json: model_args into c and r (on top of what they hold), the recipe's
 * lr, optimizer_params, optimizer_wd_only_on_weights, grad_clip and lr_scheduler_params into r.
 * Where there is a vocabulary (model_args.tokenizer_file, else vocab.json beside the config) the
 * number of text tokens and the start/stop text tokens are its own, as Xtts.init_models takes
 * them. Errors: XTTS_ENOTFOUND (no config; null start/stop tokens without a vocabulary),
 * XTTS_EINPUT (bad JSON, a field of the wrong type, named), those of xtts_gpt_config_check. */
xtts_status xtts_gpt_config_load(const char *config_json, xtts_gpt_config *c, xtts_gpt_recipe *r, xtts_error *err);

/* One batch as GPTTrainer.train_step hands it to GPT.forward. */
typedef struct {
    int B;
    int text_stride;             /* columns of text */
    const int32_t *text;         /* (B, text_stride): BPE ids without start/stop, padded (0) */
    const int32_t *text_lengths; /* (B) */
    int codes_stride;            /* columns of codes */
    const int32_t *codes;        /* (B, codes_stride): DVAE codes of the padded clip */
    const int32_t *wav_lengths;  /* (B) waveform samples */
    int cond_frames;             /* frames of cond_mels */
    const float *cond_mels;      /* (B, n_mels, cond_frames) */
    const int32_t *cond_idxs;    /* (B, 2) start and end sample of the prompt slice, or NULL
                                    (evaluation: GPTTrainer.eval_step sets None) */
} xtts_gpt_batch;

typedef struct {
    const char *name;   /* GPT's state-dict key */
    int ndim;
    int64_t shape[3];   /* Coqui's shape */
    size_t offset;      /* floats from the start of the parameters */
    size_t numel;
    int hf_conv1d;      /* Coqui stores it (in, out); kept here (out, in) */
    int decay;          /* weight decay applies (GPTTrainer's optimizer_wd_only_on_weights) */
} xtts_gpt_tensor;

typedef struct xtts_gpt xtts_gpt;

/* A model with zeroed parameters. Errors: those of xtts_gpt_config_check, XTTS_ENOMEM. */
xtts_status xtts_gpt_new(const xtts_gpt_config *c, xtts_gpt **out, xtts_error *err);
void xtts_gpt_delete(xtts_gpt *m); /* NULL is fine */

size_t xtts_gpt_num_tensors(const xtts_gpt *m);
const xtts_gpt_tensor *xtts_gpt_tensor_at(const xtts_gpt *m, size_t i);
/* Index of the tensor named key, or -1. */
long xtts_gpt_find_tensor(const xtts_gpt *m, const char *key);
size_t xtts_gpt_num_params(const xtts_gpt *m);
float *xtts_gpt_params(xtts_gpt *m);
float *xtts_gpt_grads(xtts_gpt *m);

/* Copies tensor i in from (or out to) Coqui's layout (numel floats). */
void xtts_gpt_set_tensor(xtts_gpt *m, size_t i, const float *coqui);
void xtts_gpt_get_tensor(const xtts_gpt *m, size_t i, int grad, float *coqui);

/* Forward of a batch: the text and mel cross-entropies (unweighted, as GPT.forward returns
 * them); the activations are kept for xtts_gpt_backward. Errors: XTTS_EINPUT (a token, length
 * or position out of the model's range, named with its row), XTTS_ENOMEM. */
xtts_status xtts_gpt_forward(xtts_gpt *m, const xtts_gpt_batch *bt, float *loss_text, float *loss_mel,
                             xtts_error *err);

/* Adds to the gradients those of text_weight * loss_text + mel_weight * loss_mel of the last
 * forward. */
void xtts_gpt_backward(xtts_gpt *m, float text_weight, float mel_weight);
void xtts_gpt_zero_grad(xtts_gpt *m);

/* Coqui's initialization (torch's and HF GPT-2's rules per module; docs/xtts-train.md), from a
 * seeded generator of our own (not torch's: the distributions are Coqui's, the values not). */
void xtts_gpt_init_random(xtts_gpt *m, uint64_t seed);

/* Reads GPT's tensors from a model file by the restricted reader: Xtts's model.pth (keys gpt.*),
 * a GPTTrainer checkpoint (xtts.gpt.*), either under "model", or GPT's own state dict; every
 * tensor's shape checked against the config. Errors: those of xtts_pth_open, XTTS_ENOTFOUND (a
 * tensor missing, named), XTTS_EMISMATCH (a shape, named with both shapes). */
xtts_status xtts_gpt_load_weights(xtts_gpt *m, const char *pth, xtts_error *err);

/* Whether xtts_gpt_save_pth can write every tensor of init_pth that is not GPT's (checked before a
 * run, so that a file it cannot carry is refused before the steps, not after them). */
xtts_status xtts_gpt_check_carry(const xtts_gpt *m, const char *init_pth, xtts_error *err);

/* Writes path as torch.save writes Xtts's model.pth ({"model": state dict}): with init_pth
 * (the file the weights came from) every tensor of its model in its order and dtype, GPT's
 * replaced by this model's (float32, Coqui's layout; a GPTTrainer checkpoint's keys keep their
 * "xtts." prefix, which Xtts's loader strips; its optimizer and config are left out); without,
 * GPT's tensors alone as "gpt.*". Errors: those of xtts_pth_open and xtts_pth_save,
 * XTTS_EUNSUPPORTED (a tensor to carry of another dtype than float32, float16, bfloat16, int64), XTTS_ENOMEM. */
xtts_status xtts_gpt_save_pth(xtts_gpt *m, const char *init_pth, const char *path, xtts_error *err);

/* One AdamW step (torch.optim.AdamW), step t (1-based), weight decay on every tensor, or with
 * wd_only_on_weights only on those whose decay flag is set (GPTTrainer's rule). m1, m2 are the
 * moments (num_params each, zeroed before the first step). */
void xtts_gpt_adamw(xtts_gpt *m, float *m1, float *m2, long t, const xtts_gpt_recipe *r, float lr);

#ifdef __cplusplus
}
#endif
#endif
