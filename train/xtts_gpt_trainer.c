/* xtts_gpt_trainer.c — `xtts-train --model xtts-gpt`: XTTS's GPT trained on an xtts cache as
 * GPTTrainer trains it (losses 0.01 text + 1.0 mel, AdamW with weight decay on weights only,
 * MultiStepLR, clipping when the config or --clip asks), or with --eval-only the validation
 * split's mean losses of the given weights, averaged batch by batch as Coqui's eval loop averages
 * its loss dict. The spine: config, model, weights, loader, then steps. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/optim.h"
#include "train/trainer.h"
#include "train/xtts_gpt.h"
#include "train/xtts_gpt_loader.h"

typedef struct {
    const xtts_train_options *o;
    xtts_gpt_config c;
    xtts_gpt_recipe r;
    xtts_cache *cache;
    xtts_gpt *m;
    FILE *json;
} gpt_run;

/* the run's line, once its loader has started */
static void describe(const gpt_run *R, const xtts_gpt_loader *l, const char *split) {
    fprintf(stderr, "xtts-train: xtts-gpt %d layers, %d channels, %d heads, %zu parameters (%s); %llu %s records\n",
            R->c.layers, R->c.dim, R->c.heads, xtts_gpt_num_params(R->m),
            R->o->gpt_init ? R->o->gpt_init : "Coqui's initialization", (unsigned long long)xtts_gpt_loader_count(l),
            split);
}

/* MultiStepLR: lr * gamma^(milestones passed) */
static float lr_at(const gpt_run *R, long step) {
    float lr = R->o->lr_set ? R->o->optim.lr : R->r.lr;
    for (int i = 0; i < R->r.n_milestones; i++)
        if (step >= R->r.milestones[i]) lr *= R->r.gamma;
    return lr;
}

/* config, model and weights */
static xtts_status gpt_setup(gpt_run *R, xtts_error *err) {
    const xtts_train_options *o = R->o;
    if (!o->gpt_config)
        return xtts_error_set(err, XTTS_EUSAGE, "--model xtts-gpt needs --config (the XTTS model folder's config.json)");
    if (o->resume)
        return xtts_error_set(err, XTTS_EUNSUPPORTED, "--model xtts-gpt: --resume is not there yet (--ckpt writes model.pth)");
    xtts_gpt_config_defaults(&R->c);
    xtts_gpt_recipe_defaults(&R->r);
    xtts_status st = xtts_gpt_config_load(o->gpt_config, &R->c, &R->r, err);
    if (!st && o->clip_set) R->r.grad_clip = o->optim.clip;
    if (!st && o->wd_set) R->r.weight_decay = o->optim.weight_decay;
    if (!st) st = xtts_cache_open(o->cache_dir, &R->cache, err);
    if (!st && xtts_gpt_new(&R->c, &R->m, err)) { /* the sizes are the config's: named with it */
        char line[XTTS_ERRMSG_MAX];
        snprintf(line, sizeof line, "%s", err->msg);
        return xtts_error_set(err, err->code, "%s: %s", o->gpt_config, line);
    }
    if (st) return st;
    if (o->ckpt_dir) st = xtts_mkdir_p(o->ckpt_dir, err); /* a --ckpt that cannot be made: now, not after the steps */
    if (!st && o->gpt_init && o->ckpt_dir) st = xtts_gpt_check_carry(R->m, o->gpt_init, err);
    if (st) return st;
    if (o->gpt_init) return xtts_gpt_load_weights(R->m, o->gpt_init, err);
    xtts_gpt_init_random(R->m, o->seed);
    return XTTS_OK;
}

/* the validation split's mean losses (weighted as GPTTrainer logs them, and the raw text CE) */
static xtts_status gpt_eval(gpt_run *R, long step, xtts_error *err) {
    xtts_gpt_loader_options lo = {.batch_size = R->o->batch_size, .seed = R->o->seed, .split = XTTS_SPLIT_VAL,
                                  .codes_dir = R->o->codes_dir};
    xtts_gpt_loader *l = NULL;
    xtts_status st = xtts_gpt_loader_new(R->cache, &R->c, &R->r, &lo, &l, err);
    if (!st && step == 0) describe(R, l, "validation");
    double sum_t = 0.0, sum_m = 0.0;
    long n = 0;
    while (!st) {
        const xtts_gpt_batch *bt;
        float lt, lm;
        st = xtts_gpt_loader_next(l, &bt, err);
        if (st == XTTS_ENOTFOUND) {
            st = XTTS_OK;
            break;
        }
        if (!st) st = xtts_gpt_forward(R->m, bt, &lt, &lm, err);
        if (!st) sum_t += lt, sum_m += lm, n++;
    }
    xtts_gpt_loader_delete(l);
    if (st) return st;
    double t = sum_t / n, mm = sum_m / n, tw = R->r.text_ce_weight * t, mw = R->r.mel_ce_weight * mm;
    fprintf(stderr, "xtts-train: eval step %ld: loss %.6f (loss_text_ce %.6f, loss_mel_ce %.6f; text CE %.6f, mel CE %.6f) over %ld batches\n",
            step, tw + mw, tw, mw, t, mm, n);
    if (R->json)
        fprintf(R->json, "{\"eval\": {\"step\": %ld, \"loss\": %.9g, \"loss_text_ce\": %.9g, \"loss_mel_ce\": %.9g, "
                "\"text_ce\": %.9g, \"mel_ce\": %.9g, \"batches\": %ld}}\n", step, tw + mw, tw, mw, t, mm, n);
    return XTTS_OK;
}

/* DIR/model.pth as Xtts's loader reads it: the --init file's other tensors carried */
static xtts_status gpt_save(gpt_run *R, long step, xtts_error *err) {
    char path[4200];
    xtts_status st = xtts_mkdir_p(R->o->ckpt_dir, err);
    snprintf(path, sizeof path, "%s/model.pth", R->o->ckpt_dir);
    if (!st) st = xtts_gpt_save_pth(R->m, R->o->gpt_init, path, err);
    if (!st) fprintf(stderr, "xtts-train: step %ld: wrote %s\n", step, path);
    return st;
}

/* one optimizer step: forward and backward of grad_accum batches (each loss divided by their
 * count, as Trainer divides it), clipping, AdamW; *lt, *lm the batches' mean losses */
static xtts_status gpt_step(gpt_run *R, xtts_gpt_loader *l, float *m1, float *m2, long step, float *lt, float *lm,
                            double *waited, xtts_error *err) {
    int accum = R->o->grad_accum > 0 ? R->o->grad_accum : 1;
    xtts_status st = XTTS_OK;
    *waited = 0.0, *lt = *lm = 0.0f;
    xtts_gpt_zero_grad(R->m);
    for (int a = 0; a < accum && !st; a++) {
        const xtts_gpt_batch *bt;
        float t, m;
        double t0 = xtts_now_s();
        st = xtts_gpt_loader_next(l, &bt, err);
        *waited += xtts_now_s() - t0;
        if (!st) st = xtts_gpt_forward(R->m, bt, &t, &m, err);
        if (!st && (!isfinite(t) || !isfinite(m)))
            st = xtts_error_set(err, XTTS_EINPUT, "step %ld: the loss is not finite (text %g, mel %g)", step + 1, t, m);
        if (st) break;
        xtts_gpt_backward(R->m, R->r.text_ce_weight / accum, R->r.mel_ce_weight / accum);
        *lt += t / accum, *lm += m / accum;
    }
    if (st) return st;
    if (R->r.grad_clip > 0)
        xtts_grad_clip(xtts_gpt_grads(R->m), xtts_gpt_num_params(R->m), R->r.grad_clip);
    xtts_gpt_adamw(R->m, m1, m2, step + 1, &R->r, lr_at(R, step));
    return XTTS_OK;
}

static xtts_status gpt_train(gpt_run *R, xtts_error *err) {
    const xtts_train_options *o = R->o;
    xtts_gpt_loader_options lo = {.batch_size = o->batch_size, .seed = o->seed, .split = XTTS_SPLIT_TRAIN,
                                  .codes_dir = o->codes_dir};
    xtts_gpt_loader *l = NULL;
    xtts_status st = xtts_gpt_loader_new(R->cache, &R->c, &R->r, &lo, &l, err);
    if (!st) describe(R, l, "training");
    size_t n = xtts_gpt_num_params(R->m);
    float *m1 = st ? NULL : calloc(n, sizeof(float)), *m2 = st ? NULL : calloc(n, sizeof(float));
    if (!st && (!m1 || !m2)) st = xtts_error_set(err, XTTS_ENOMEM, "xtts-gpt: out of memory for AdamW's moments");
    long steps = o->stop_after > 0 && o->stop_after < o->steps ? o->stop_after : o->steps;
    for (long s = 0; s < steps && !st; s++) {
        float lt, lm;
        double t0 = xtts_now_s(), waited;
        st = gpt_step(R, l, m1, m2, s, &lt, &lm, &waited, err);
        if (st) break;
        double dt = xtts_now_s() - t0;
        float tw = R->r.text_ce_weight * lt, mw = R->r.mel_ce_weight * lm;
        if ((s + 1) % o->log_every == 0 || s + 1 == steps)
            fprintf(stderr, "xtts-train: step %ld/%ld loss %.6f (loss_text_ce %.6f, loss_mel_ce %.6f) lr %.3g %.0f ms, "
                    "input stall %.1f%%\n", s + 1, o->steps, tw + mw, tw, mw, lr_at(R, s), dt * 1e3, 100.0 * waited / dt);
        if (R->json)
            fprintf(R->json, "{\"step\": %ld, \"loss\": %.9g, \"loss_text_ce\": %.9g, \"loss_mel_ce\": %.9g, "
                    "\"lr\": %.9g, \"step_ms\": %.3f, \"stall_pct\": %.3f}\n", s + 1, tw + mw, tw, mw, lr_at(R, s),
                    dt * 1e3, 100.0 * waited / dt);
        if (o->eval_every > 0 && (s + 1) % o->eval_every == 0) st = gpt_eval(R, s + 1, err);
        if (!st && o->ckpt_dir && (s + 1 == steps || (o->ckpt_every > 0 && (s + 1) % o->ckpt_every == 0)))
            st = gpt_save(R, s + 1, err);
    }
    free(m1), free(m2);
    xtts_gpt_loader_delete(l);
    return st;
}

xtts_status xtts_gpt_train_run(const xtts_train_options *o, xtts_error *err) {
    gpt_run R = {.o = o};
    if (o->threads > 0) omp_set_num_threads(o->threads);
    xtts_status st = gpt_setup(&R, err);
    if (!st && o->log_json) {
        R.json = strcmp(o->log_json, "-") ? fopen(o->log_json, "w") : stdout;
        if (!R.json) st = xtts_error_set(err, XTTS_EIO, "%s: cannot write the JSON log", o->log_json);
    }
    if (!st) st = o->eval_only ? gpt_eval(&R, 0, err) : gpt_train(&R, err);
    if (R.json && R.json != stdout && fclose(R.json) && !st)
        st = xtts_error_set(err, XTTS_EIO, "%s: cannot write the JSON log", o->log_json);
    else if (R.json == stdout)
        fflush(stdout);
    xtts_gpt_delete(R.m);
    xtts_cache_close(R.cache);
    return st;
}
