/* trainer.h — the xtts-train run: open the cache, build or resume the model, train with
 * the prefetching loader, evaluate, checkpoint, log, summarize (docs/xtts-train.md). */
#ifndef XTTS_TRAIN_TRAINER_H
#define XTTS_TRAIN_TRAINER_H

#include <stdint.h>

#include "common/xtts_common.h"
#include "train/optim.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    const char *cache_dir;
    const char *model_size;      /* "tiny", "small", "base" */
    int n_layer, channels, n_head; /* > 0 overrides the size's field */
    long steps;                  /* total steps of the schedule */
    long stop_after;             /* > 0: stop after this many steps of this run */
    int batch_size;
    xtts_optim_config optim;     /* warmup_steps < 0: min(100, steps / 10) */
    float stop_pos_weight;
    uint64_t seed;
    int threads;                 /* OpenMP threads for the model; 0 = OpenMP's default */
    int loader_threads;
    const char *ckpt_dir;        /* NULL: no checkpoints */
    long ckpt_every;             /* 0: only at the end */
    const char *resume;          /* checkpoint file or directory holding train.ckpt */
    long eval_every;             /* 0: no validation */
    const char *log_json;        /* NULL: no JSON log; "-" for stdout */
    long log_every;              /* human line every N steps */
    int skip_corrupt;
    int loader_only;
    const char *device;          /* "auto", "cpu", "cuda", "cuda:N" */
    const char *precision;       /* "fp32" (default), "tf32", "bf16": the CUDA device's matrix products */
    /* --model xtts-gpt (train/xtts_gpt_trainer.c) */
    const char *gpt_config;      /* the XTTS model folder's config.json */
    const char *gpt_init;        /* model.pth or a GPTTrainer checkpoint; NULL: Coqui's initialization */
    const char *codes_dir;       /* the cache's codes directory; NULL: its only one */
    int eval_only;               /* the validation split's losses, then exit */
    int lr_set, clip_set, wd_set; /* --lr, --clip, --weight-decay given (over the config's) */
    int grad_accum;              /* batches per optimizer step (Trainer's grad_accum_steps); 0 = 1 */
} xtts_train_options;

void xtts_train_options_defaults(xtts_train_options *o);

/* Run training (or, with loader_only, the loader alone). Prints progress and the summary
 * on stderr. Returns XTTS_OK, or a status with err naming what stopped the run.
 * Errors: XTTS_EUSAGE (device or precision spelling, steps, batch size, loader threads, model size, a
 * model config xtts_model_new refuses), XTTS_EUNSUPPORTED (the CUDA device asked for is not
 * usable, a precision other than fp32 on the CPU, or the CUDA trainer cannot be loaded), those of xtts_cache_open, xtts_dataset_scan,
 * xtts_loader_new and xtts_loader_next (cache/store/read/reader.h: XTTS_ENOTFOUND, XTTS_ECORRUPT,
 * XTTS_EMISMATCH, XTTS_EIO, XTTS_EINPUT ...), of the checkpoint calls on resume and save
 * (XTTS_EIO, XTTS_EINPUT, XTTS_EMISMATCH for another model, cache or batch size,
 * XTTS_ECORRUPT) and of xtts_mkdir_p, XTTS_ERANGE (a batch the model or device refuses),
 * XTTS_EIO (the JSON log cannot be written; a CUDA failure), XTTS_EINPUT (the loss is not
 * finite), XTTS_ENOMEM. */
xtts_status xtts_train_run(const xtts_train_options *o, xtts_error *err);

/* --model xtts-gpt: XTTS's GPT on the cache (or its validation losses with eval_only).
 * Errors: XTTS_EUSAGE (no gpt_config), XTTS_EUNSUPPORTED (--ckpt, --resume), those of
 * xtts_gpt_config_load, xtts_gpt_load_weights, xtts_gpt_loader_new and _next, xtts_gpt_forward. */
xtts_status xtts_gpt_train_run(const xtts_train_options *o, xtts_error *err);

/* The checkpoint file a --ckpt directory holds. */
#define XTTS_CKPT_FILE "train.ckpt"

#ifdef __cplusplus
}
#endif
#endif
