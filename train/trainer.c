/* trainer.c — the training loop of xtts-train (see trainer.h).
 *
 * One step: take a ready batch from the loader ring (the time spent waiting is the input
 * stall), forward, backward, clip, AdamW, give the slot back. Everything that decides a
 * step's numbers — weights, moments, step count and loader position — is in the
 * checkpoint, so a resumed CPU run repeats an uninterrupted one bit for bit.
 */
#include "train/trainer.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache/store/read/reader.h"
#include "kernels/mel_cuda.h"
#include "train/checkpoint.h"
#include "train/cpu_level.h"
#include "train/loader.h"
#include "train/model.h"
#include "train/train_cuda.h"

void xtts_train_options_defaults(xtts_train_options *o) {
    memset(o, 0, sizeof *o);
    o->model_size = "tiny";
    o->steps = 1000;
    o->batch_size = 8;
    xtts_optim_config_defaults(&o->optim);
    o->optim.warmup_steps = -1;
    o->stop_pos_weight = 5.0f;
    o->seed = 1337;
    o->loader_threads = 2;
    o->log_every = 1;
    o->device = "auto";
    o->precision = "fp32";
}

/* --precision's word; -1 for another */
static int precision_parse(const char *s) {
    if (!strcmp(s, "fp32")) return XTTS_PRECISION_FP32;
    if (!strcmp(s, "tf32")) return XTTS_PRECISION_TF32;
    if (!strcmp(s, "bf16")) return XTTS_PRECISION_BF16;
    return -1;
}

/* ---- per-step figures and the summary -------------------------------------------------- */

typedef struct {
    double *step_ms, *stall_pct;
    size_t n, cap;
} step_stats;

static int stats_push(step_stats *s, double ms, double stall) {
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 256;
        double *a = realloc(s->step_ms, cap * sizeof(double));
        if (!a) return -1;
        s->step_ms = a;
        double *b = realloc(s->stall_pct, cap * sizeof(double));
        if (!b) return -1;
        s->stall_pct = b;
        s->cap = cap;
    }
    s->step_ms[s->n] = ms;
    s->stall_pct[s->n] = stall;
    s->n++;
    return 0;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(const double *v, size_t n) {
    if (n == 0) return 0.0;
    double *c = malloc(n * sizeof(double));
    if (!c) return v[0];
    memcpy(c, v, n * sizeof(double));
    qsort(c, n, sizeof(double), cmp_double);
    double m = n % 2 ? c[n / 2] : 0.5 * (c[n / 2 - 1] + c[n / 2]);
    free(c);
    return m;
}

/* ---- device -------------------------------------------------------------------------- */


/* ---- validation ------------------------------------------------------------------------ */

static xtts_status validate(xtts_model *model, xtts_cuda_trainer *gpu, xtts_cache *cache, const xtts_dataset *ds,
                            const xtts_train_options *o, double *val_loss, xtts_error *err) {
    xtts_loader_options lo = {o->batch_size, o->loader_threads, o->seed, XTTS_SPLIT_VAL, o->skip_corrupt, 0, 0};
    xtts_loader *l = NULL;
    xtts_status st = xtts_loader_new(cache, ds, &lo, &l, err);
    if (st) return st;
    double sum = 0.0;
    long frames = 0;
    for (;;) {
        xtts_loader_batch *b;
        st = xtts_loader_next(l, &b, NULL, err);
        if (st == XTTS_ENOTFOUND) {
            st = XTTS_OK;
            break;
        }
        if (st) break;
        st = xtts_model_check_batch(model, &b->view, err);
        if (!st && gpu) {
            float loss, ml, sl;
            int nf = 0;
            st = xtts_cuda_trainer_stage(gpu, &b->view, err);
            if (!st) st = xtts_cuda_trainer_forward(gpu, &loss, &ml, &sl, &nf, err);
            if (!st) sum += (double)loss * nf, frames += nf;
        } else if (!st) {
            xtts_model_forward(model, &b->view);
            sum += (double)model->loss * model->n_frames_total;
            frames += model->n_frames_total;
        }
        xtts_loader_release(l, b);
        if (st) break;
    }
    xtts_loader_delete(l);
    *val_loss = frames ? sum / frames : NAN;
    return st;
}

/* ---- loader only --------------------------------------------------------------------------- */

static xtts_status run_loader_only(xtts_cache *cache, const xtts_dataset *ds, const xtts_train_options *o,
                                   xtts_error *err) {
    xtts_loader_options lo = {o->batch_size, o->loader_threads, o->seed, XTTS_SPLIT_TRAIN, o->skip_corrupt, 0, 0};
    xtts_loader *l = NULL;
    xtts_status st = xtts_loader_new(cache, ds, &lo, &l, err);
    if (st) return st;
    long n = o->stop_after > 0 && o->stop_after < o->steps ? o->stop_after : o->steps;
    double t0 = xtts_now_s();
    size_t samples = 0, decoded = 0, stored = 0;
    long skipped = 0;
    for (long i = 0; i < n; i++) {
        xtts_loader_batch *b;
        st = xtts_loader_next(l, &b, NULL, err);
        if (st) break;
        samples += b->view.B;
        decoded += b->decoded_bytes;
        stored += b->stored_bytes;
        skipped += b->n_skipped;
        xtts_loader_release(l, b);
    }
    double dt = xtts_now_s() - t0;
    xtts_loader_delete(l);
    if (st) return st;
    if (dt <= 0) dt = 1e-9;
    fprintf(stderr,
            "xtts-train: loader only: %ld batches of %d in %.3f s with %d threads: %.1f batches/s, %.1f samples/s, "
            "%.1f MB/s decoded, %.1f MB/s stored%s\n",
            n, o->batch_size, dt, o->loader_threads, n / dt, samples / dt, decoded / dt / 1e6, stored / dt / 1e6,
            skipped ? " (corrupt records skipped)" : "");
    if (o->log_json) {
        FILE *f = strcmp(o->log_json, "-") == 0 ? stdout : fopen(o->log_json, "w");
        if (!f) return xtts_error_set(err, XTTS_EIO, "%s: cannot write the JSON log: %s", o->log_json, strerror(errno));
        fprintf(f,
                "{\"loader_only\":{\"batches\":%ld,\"batch_size\":%d,\"threads\":%d,\"seconds\":%.6f,"
                "\"batches_per_s\":%.3f,\"samples_per_s\":%.3f,\"decoded_mb_per_s\":%.3f,\"stored_mb_per_s\":%.3f,"
                "\"skipped\":%ld}}\n",
                n, o->batch_size, o->loader_threads, dt, n / dt, samples / dt, decoded / dt / 1e6, stored / dt / 1e6,
                skipped);
        if (f != stdout ? fclose(f) != 0 : (fflush(f) != 0 || ferror(f)))
            return xtts_error_set(err, XTTS_EIO, "%s: cannot write the JSON log: %s",
                                  f == stdout ? "standard output" : o->log_json, strerror(errno));
    }
    return XTTS_OK;
}

/* ---- training ------------------------------------------------------------------------------ */

static void ckpt_path(const char *dir_or_file, char *out, size_t n) {
    struct stat sb;
    if (stat(dir_or_file, &sb) == 0 && S_ISDIR(sb.st_mode))
        xtts_path_join(out, n, dir_or_file, XTTS_CKPT_FILE);
    else
        snprintf(out, n, "%s", dir_or_file);
}

/* A run killed while writing a checkpoint leaves DIR/train.ckpt.tmp.<pid> (as large as
 * the checkpoint). Remove those whose process is gone; the checkpoint itself is intact. */
static void remove_stale_checkpoint_temps(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return;
    static const char prefix[] = XTTS_CKPT_FILE ".tmp.";
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, prefix, sizeof prefix - 1)) continue;
        const char *digits = e->d_name + sizeof prefix - 1;
        char *end;
        long pid = strtol(digits, &end, 10);
        if (end == digits || *end || pid <= 0 || pid == (long)getpid()) continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue; /* alive, or not ours to judge */
        char path[4096];
        if (xtts_path_join(path, sizeof path, dir, e->d_name) >= sizeof path) continue;
        if (unlink(path) == 0) fprintf(stderr, "xtts-train: removed %s, left by an interrupted run\n", path);
    }
    closedir(d);
}

static xtts_status save_checkpoint(const xtts_train_options *o, xtts_model *model, xtts_cuda_trainer *gpu, float *m,
                                   float *v, long step, const xtts_loader *l, const char *hash, xtts_error *err) {
    if (gpu) {
        xtts_status st = xtts_cuda_trainer_download(gpu, model->params_memory, m, v, err);
        if (st) return st;
    }
    char path[4096];
    xtts_path_join(path, sizeof path, o->ckpt_dir, XTTS_CKPT_FILE);
    xtts_ckpt_header h;
    memset(&h, 0, sizeof h);
    h.model = model->config;
    h.batch_size = (uint32_t)o->batch_size;
    h.num_parameters = model->num_parameters;
    h.step = (uint64_t)step;
    h.seed = o->seed;
    xtts_loader_position(l, &h.epoch, &h.batch_in_epoch);
    snprintf(h.cache_config_hash, sizeof h.cache_config_hash, "%s", hash);
    return xtts_ckpt_save(path, &h, model->params_memory, m, v, err);
}

/* An error about a corrupt record, with what to do about it. */
static void corrupt_hint(xtts_error *err, const char *cache_dir) {
    char msg[XTTS_ERRMSG_MAX];
    snprintf(msg, sizeof msg, "%.380s; check the cache with xtts-cache-verify %.60s, or pass --skip-corrupt", err->msg,
             cache_dir);
    snprintf(err->msg, sizeof err->msg, "%s", msg);
}

/* The model's shape: the named size, explicit fields, and what the cache dictates. The
 * cache's fields are checked first, on their own: a value read from its manifest that the
 * model cannot take is an input error naming the file (exit 2), while the same check on
 * --layers, --width and --heads is a usage error (exit 1). */
static xtts_status model_config(const xtts_train_options *o, const xtts_dataset *ds, xtts_model_config *mc,
                                xtts_error *err) {
    memset(mc, 0, sizeof *mc);
    /* the model's table is V + 17 rows; a cache with more languages widens it so that row
     * V + lang_id exists for each (ids past 16 take the rows after XTTS's 17) */
    int64_t vocab = (int64_t)ds->vocab_size + (ds->n_langs - XTTS_N_LANGS);
    xtts_model_config shape = {.n_layer = 1, .channels = 1, .n_head = 1, .n_mels = ds->n_mels,
                               .vocab_size = vocab > INT32_MAX ? INT32_MAX : (int)vocab,
                               .max_text_pos = ds->max_tokens + 1, .max_mel_pos = ds->max_frames};
    xtts_error sub;
    if (xtts_model_config_check(&shape, &sub) != XTTS_OK) {
        char manifest[4096];
        xtts_path_join(manifest, sizeof manifest, o->cache_dir, "manifest.json");
        const char *why = strncmp(sub.msg, "model: ", 7) == 0 ? sub.msg + 7 : sub.msg;
        return xtts_error_set(err, XTTS_EINPUT, "%s: %s (the model's limits)", manifest, why);
    }
    if (xtts_model_size_preset(o->model_size, &mc->n_layer, &mc->channels, &mc->n_head) != 0)
        return xtts_error_set(err, XTTS_EUSAGE, "--model %s: expected tiny, small or base", o->model_size);
    if (o->n_layer > 0) mc->n_layer = o->n_layer;
    if (o->channels > 0) mc->channels = o->channels;
    if (o->n_head > 0) mc->n_head = o->n_head;
    mc->n_mels = shape.n_mels;
    mc->vocab_size = shape.vocab_size;
    mc->max_text_pos = shape.max_text_pos;
    mc->max_mel_pos = shape.max_mel_pos;
    return XTTS_OK;
}

/* The device copy of the model; batches are copied from the loader's slots, pinned. */
static xtts_status gpu_setup(xtts_model *model, int ordinal, xtts_precision precision, xtts_loader *loader,
                             const xtts_train_options *o, const xtts_dataset *ds, const float *adam_m,
                             const float *adam_v, xtts_cuda_trainer **gpu, xtts_error *err) {
    xtts_status st = xtts_cuda_trainer_new(model, ordinal, precision, gpu, err);
    if (!st) st = xtts_cuda_trainer_upload(*gpu, model->params_memory, adam_m, adam_v, err);
    for (int k = 0; !st && k < XTTS_LOADER_SLOTS; k++) {
        xtts_loader_batch *s = xtts_loader_slot(loader, k);
        st = xtts_cuda_trainer_pin(*gpu, s->text, sizeof(int32_t) * (size_t)o->batch_size * s->view.text_stride, err);
        if (!st)
            st = xtts_cuda_trainer_pin(*gpu, s->mel, sizeof(float) * (size_t)o->batch_size * s->view.mel_stride * ds->n_mels,
                                       err);
    }
    return st;
}

/* The run's summary on stderr (and in the JSON log): the first step of a run warms caches and
 * fills the ring, so it is left out of the medians. */
static xtts_status print_summary(const step_stats *stats, long ran, double first_loss, double last_loss,
                                 double samples_total, double time_total, long skipped_total, FILE *jlog,
                                 const xtts_train_options *o, int on_cpu, xtts_error *err) {
    size_t skip = stats->n > 1 ? 1 : 0, n = stats->n - skip;
    double med_ms = median(stats->step_ms + skip, n), med_stall = median(stats->stall_pct + skip, n);
    double mean = 0.0, var = 0.0, mean_stall = 0.0;
    for (size_t i = skip; i < stats->n; i++) mean += stats->step_ms[i], mean_stall += stats->stall_pct[i];
    if (n) mean /= n, mean_stall /= n;
    for (size_t i = skip; i < stats->n; i++) var += (stats->step_ms[i] - mean) * (stats->step_ms[i] - mean);
    double cv = n > 1 && mean > 0 ? sqrt(var / (n - 1)) / mean : 0.0;
    double sps = time_total > 0 ? samples_total / time_total : 0.0;
    fprintf(stderr,
            "xtts-train: summary: %ld steps, loss %.4f -> %.4f, median step %.1f ms (cv %.3f), %.1f samples/s, "
            "median input stall %.2f%% (mean %.2f%%)%s\n",
            ran, first_loss, last_loss, med_ms, cv, sps, med_stall, mean_stall,
            skipped_total ? ", corrupt records skipped" : "");
    if (jlog && ran == 0) fprintf(jlog, "{\"summary\":{\"steps\":0}}\n");
    if (jlog && ran > 0)
        fprintf(jlog,
                "{\"summary\":{\"steps\":%ld,\"first_loss\":%.9g,\"last_loss\":%.9g,\"median_step_ms\":%.3f,"
                "\"step_ms_cv\":%.4f,\"samples_per_s\":%.3f,\"median_input_stall_pct\":%.4f,"
                "\"mean_input_stall_pct\":%.4f,\"skipped_records\":%ld,\"threads\":%d,\"loader_threads\":%d,"
                "\"cpu_loops\":\"%s\",\"device\":\"%s\",\"precision\":\"%s\"}}\n",
                ran, first_loss, last_loss, med_ms, cv, sps, med_stall, mean_stall, skipped_total, omp_get_max_threads(),
                o->loader_threads, on_cpu ? xtts_cpu_level_name(xtts_cpu_level_current()) : "none",
                on_cpu ? "cpu" : "cuda", o->precision);
    if (jlog && (fflush(jlog) != 0 || ferror(jlog)))
        return xtts_error_set(err, XTTS_EIO, "%s: cannot write the JSON log summary: %s",
                              jlog == stdout ? "standard output" : o->log_json, strerror(errno));
    return XTTS_OK;
}

/* ---- the run, as named steps over one context ------------------------------------------- */

typedef struct {
    xtts_train_options o;
    int ordinal;
    xtts_precision precision; /* o.precision's word */
    xtts_cache *cache;
    xtts_dataset ds;
    const char *hash;
    xtts_model_config mc;
    xtts_model *model;
    float *adam_m, *adam_v;
    xtts_loader *loader;
    xtts_cuda_trainer *gpu;
    FILE *jlog;
    step_stats stats;
    xtts_ckpt_header ck;
    char resume_path[4096];
    long step, end, skipped_total, ran;
    uint64_t start_epoch, start_batch;
    int T_max;
    double first_loss, last_loss, samples_total, time_total;
} train_run;

/* the cache and its records */
static xtts_status run_open(train_run *R, xtts_error *err) {
    xtts_status st = xtts_cache_open(R->o.cache_dir, &R->cache, err);
    if (st) return st;
    st = xtts_dataset_scan(R->cache, R->o.skip_corrupt, &R->ds, err);
    if (st) {
        if (st == XTTS_ECORRUPT) corrupt_hint(err, R->o.cache_dir);
        return st;
    }
    if (R->ds.n_skipped)
        fprintf(stderr, "xtts-train: warning: left out %zu record(s) with a corrupt header: %s\n", R->ds.n_skipped,
                R->ds.skipped_msg);
    R->hash = xtts_cache_config_hash_hex(R->cache);
    return XTTS_OK;
}

/* resume: refuse a checkpoint of another model or cache before allocating anything big */
static xtts_status run_check_resume(train_run *R, xtts_error *err) {
    if (!R->o.resume) return XTTS_OK;
    ckpt_path(R->o.resume, R->resume_path, sizeof R->resume_path);
    xtts_status st = xtts_ckpt_read_header(R->resume_path, &R->ck, err);
    if (!st) st = xtts_ckpt_check(&R->ck, R->resume_path, &R->mc, R->hash, (uint32_t)R->o.batch_size, err);
    if (st) return st;
    if (R->ck.seed != R->o.seed)
        fprintf(stderr, "xtts-train: resuming with the checkpoint's seed %llu\n", (unsigned long long)R->ck.seed);
    R->o.seed = R->ck.seed;
    return XTTS_OK;
}

/* the model and the optimizer state, loaded from the checkpoint when resuming */
static xtts_status run_model(train_run *R, xtts_error *err) {
    R->T_max = R->ds.max_seq > 0 ? R->ds.max_seq : 1;
    xtts_status st = xtts_model_new(&R->mc, R->o.batch_size, R->T_max, R->o.seed, &R->model, err);
    if (st) return st;
    R->model->stop_pos_weight = R->o.stop_pos_weight;
    R->adam_m = calloc(R->model->num_parameters, sizeof(float));
    R->adam_v = calloc(R->model->num_parameters, sizeof(float));
    if (!R->adam_m || !R->adam_v) return xtts_error_set(err, XTTS_ENOMEM, "out of memory for the optimizer state");
    if (R->o.resume) {
        st = xtts_ckpt_load(R->resume_path, &R->ck, R->model->params_memory, R->adam_m, R->adam_v,
                            R->model->num_parameters, err);
        if (st) return st;
        R->step = (long)R->ck.step;
        R->start_epoch = R->ck.epoch;
        R->start_batch = R->ck.batch_in_epoch;
        fprintf(stderr, "xtts-train: resumed %s at step %ld (epoch %llu, batch %llu)\n", R->resume_path, R->step,
                (unsigned long long)R->start_epoch, (unsigned long long)R->start_batch);
    }
    if (R->o.ckpt_dir) {
        st = xtts_mkdir_p(R->o.ckpt_dir, err);
        if (st) return st;
        remove_stale_checkpoint_temps(R->o.ckpt_dir);
    }
    if (R->o.optim.warmup_steps < 0) R->o.optim.warmup_steps = R->o.steps / 10 < 100 ? R->o.steps / 10 : 100;
    R->o.optim.total_steps = R->o.steps;
    return XTTS_OK;
}

/* the batch loader, the GPU when asked for, the JSON log; then the one-line summary */
static xtts_status run_start(train_run *R, xtts_error *err) {
    xtts_train_options *o = &R->o;
    xtts_loader_options lo = {o->batch_size, o->loader_threads, o->seed, XTTS_SPLIT_TRAIN, o->skip_corrupt,
                              R->start_epoch, R->start_batch};
    xtts_status st = xtts_loader_new(R->cache, &R->ds, &lo, &R->loader, err);
    if (st) return st;
    if (R->ordinal >= 0) {
        st = gpu_setup(R->model, R->ordinal, R->precision, R->loader, o, &R->ds, R->adam_m, R->adam_v, &R->gpu, err);
        if (st) return st;
        R->model->stop_pos_weight = o->stop_pos_weight;
    }
    if (o->log_json) {
        R->jlog = strcmp(o->log_json, "-") == 0 ? stdout : fopen(o->log_json, o->resume ? "a" : "w");
        if (!R->jlog) return xtts_error_set(err, XTTS_EIO, "%s: cannot write the JSON log: %s", o->log_json, strerror(errno));
    }
    fprintf(stderr,
            "xtts-train: %s: %zu train / %zu val records, %llu batches per epoch; model %d layers, width %d, "
            "%d heads, %zu parameters; batch %d, up to %d positions; %d threads, %d loader threads%s%s%s%s%s\n",
            o->cache_dir, R->ds.n_train, R->ds.n_val, (unsigned long long)xtts_loader_batches_per_epoch(R->loader),
            R->mc.n_layer, R->mc.channels, R->mc.n_head, R->model->num_parameters, o->batch_size, R->T_max,
            omp_get_max_threads(), o->loader_threads, R->ordinal < 0 ? "; CPU loops: " : "",
            R->ordinal < 0 ? xtts_cpu_level_name(xtts_cpu_level_current()) : "",
            R->ordinal < 0 ? "" : "; precision ", R->ordinal < 0 ? "" : o->precision,
            R->ds.normalized ? "" : "; the manifest has no mel statistics, mels are not normalized");
    if (o->eval_every > 0 && R->ds.n_val == 0)
        fprintf(stderr,
                "xtts-train: warning: --eval-every %ld: %s has no validation records, so no validation loss is "
                "computed; build the cache with some (xtts-melcache --val-fraction F, e.g. 0.05, or a val split "
                "from xtts-tokenize --val-list FILE)\n",
                o->eval_every, o->cache_dir);
    R->end = o->steps;
    if (o->stop_after > 0 && R->step + o->stop_after < R->end) R->end = R->step + o->stop_after;
    R->skipped_total = (long)R->ds.n_skipped;
    R->first_loss = R->last_loss = NAN;
    return XTTS_OK;
}

/* one optimizer step on the next batch: on the GPU, or forward/backward/AdamW here */
static xtts_status run_step(train_run *R, float lr, int *B, int *T, float *norm, double *waited, xtts_error *err) {
    xtts_model *model = R->model;
    xtts_loader_batch *b;
    xtts_status st = xtts_loader_next(R->loader, &b, waited, err);
    if (st) {
        if (st == XTTS_ECORRUPT) corrupt_hint(err, R->o.cache_dir);
        return st;
    }
    if (b->n_skipped) {
        R->skipped_total += b->n_skipped;
        fprintf(stderr, "xtts-train: warning: skipped %d corrupt record(s) (%ld so far): %s\n", b->n_skipped,
                R->skipped_total, b->skipped_msg);
    }
    st = xtts_model_check_batch(model, &b->view, err);
    if (st) {
        xtts_loader_release(R->loader, b);
        return st;
    }
    *B = b->view.B;
    *T = b->view.T;
    if (R->gpu) {
        st = xtts_cuda_trainer_stage(R->gpu, &b->view, err);
        if (!st)
            st = xtts_cuda_trainer_step(R->gpu, R->step + 1, lr, &R->o.optim, &model->loss, &model->mel_loss,
                                        &model->stop_loss, norm, err);
        model->n_frames_total = 0;
        for (int r = 0; r < *B; r++) model->n_frames_total += b->view.n_frames[r];
        xtts_loader_release(R->loader, b);
        return st;
    }
    xtts_model_zero_grad(model);
    xtts_model_forward(model, &b->view);
    xtts_model_backward(model, &b->view);
    xtts_loader_release(R->loader, b);
    *norm = xtts_grad_clip(model->grads_memory, model->num_parameters, R->o.optim.clip);
    xtts_adamw_step(model->params_memory, model->grads_memory, R->adam_m, R->adam_v, model->num_parameters, R->step + 1,
                    lr, &R->o.optim);
    return XTTS_OK;
}

/* the step's line on stderr and object in the JSON log */
static xtts_status run_log(train_run *R, float lr, float norm, int B, int T, double ms, double sps, double stall,
                           int evaluated, double val_loss, xtts_error *err) {
    const xtts_model *m = R->model;
    long step = R->step;
    if (R->o.log_every > 0 && ((step + 1) % R->o.log_every == 0 || step + 1 == R->end || evaluated)) {
        fprintf(stderr,
                "step %ld/%ld | loss %.4f (mel %.4f, stop %.4f) | lr %.2e | norm %.3f | %.1f ms | %.1f samples/s | "
                "stall %.1f%%",
                step + 1, R->o.steps, m->loss, m->mel_loss, m->stop_loss, lr, norm, ms, sps, stall);
        if (evaluated) fprintf(stderr, " | val %.4f", val_loss);
        fputc('\n', stderr);
    }
    if (!R->jlog) return XTTS_OK;
    fprintf(R->jlog,
            "{\"step\":%ld,\"loss\":%.9g,\"mel_loss\":%.9g,\"stop_loss\":%.9g,\"lr\":%.9g,\"grad_norm\":%.9g,"
            "\"step_ms\":%.3f,\"samples_per_s\":%.3f,\"input_stall_pct\":%.4f,\"batch\":%d,\"seq_len\":%d,"
            "\"frames\":%d",
            step + 1, m->loss, m->mel_loss, m->stop_loss, lr, norm, ms, sps, stall, B, T, m->n_frames_total);
    if (evaluated && isfinite(val_loss)) fprintf(R->jlog, ",\"val_loss\":%.9g", val_loss);
    fprintf(R->jlog, "}\n");
    /* a full disk or a size limit must not leave a silently truncated log */
    if (fflush(R->jlog) != 0 || ferror(R->jlog))
        return xtts_error_set(err, XTTS_EIO, "%s: cannot write the JSON log at step %ld: %s",
                              R->jlog == stdout ? "standard output" : R->o.log_json, step + 1, strerror(errno));
    return XTTS_OK;
}

/* steps until the end (or --stop-after), with validation, logs and checkpoints */
static xtts_status run_loop(train_run *R, xtts_error *err) {
    xtts_train_options *o = &R->o;
    for (; R->step < R->end; R->step++) {
        double t0 = xtts_now_s(), waited = 0.0;
        int B = 0, T = 0;
        float lr = xtts_lr_at(&o->optim, R->step), norm = 0.0f;
        xtts_status st = run_step(R, lr, &B, &T, &norm, &waited, err);
        if (st) return st;
        double dt = xtts_now_s() - t0;
        double ms = dt * 1e3, stall = dt > 0 ? 100.0 * waited / dt : 0.0, sps = dt > 0 ? B / dt : 0.0;
        if (stats_push(&R->stats, ms, stall) != 0) return xtts_error_set(err, XTTS_ENOMEM, "out of memory for step statistics");
        R->ran++;
        R->samples_total += B;
        R->time_total += dt;
        float loss = R->model->loss;
        if (isnan(R->first_loss)) R->first_loss = loss;
        R->last_loss = loss;
        if (!isfinite(loss))
            return xtts_error_set(err, XTTS_EINPUT, "step %ld: the loss is %f; lower --lr or check the cache", R->step + 1, loss);
        /* validation reuses the model's activations: keep this step's results first */
        float keep[3] = {R->model->loss, R->model->mel_loss, R->model->stop_loss};
        int keep_frames = R->model->n_frames_total;
        double val_loss = NAN;
        int evaluated = 0;
        if (o->eval_every > 0 && (R->step + 1) % o->eval_every == 0 && R->ds.n_val > 0) {
            st = validate(R->model, R->gpu, R->cache, &R->ds, o, &val_loss, err);
            if (st) return st;
            evaluated = 1;
        }
        R->model->loss = keep[0];
        R->model->mel_loss = keep[1];
        R->model->stop_loss = keep[2];
        R->model->n_frames_total = keep_frames;
        st = run_log(R, lr, norm, B, T, ms, sps, stall, evaluated, val_loss, err);
        if (st) return st;
        if (o->ckpt_dir && o->ckpt_every > 0 && (R->step + 1) % o->ckpt_every == 0 && R->step + 1 < R->end) {
            st = save_checkpoint(o, R->model, R->gpu, R->adam_m, R->adam_v, R->step + 1, R->loader, R->hash, err);
            if (st) return st;
        }
    }
    if (o->ckpt_dir) {
        xtts_status st = save_checkpoint(o, R->model, R->gpu, R->adam_m, R->adam_v, R->step, R->loader, R->hash, err);
        if (st) return st;
        char path[4096];
        xtts_path_join(path, sizeof path, o->ckpt_dir, XTTS_CKPT_FILE);
        fprintf(stderr, "xtts-train: checkpoint %s at step %ld\n", path, R->step);
    }
    return XTTS_OK;
}

static xtts_status run_free(train_run *R, xtts_status st, xtts_error *err) {
    if (R->jlog && R->jlog != stdout && fclose(R->jlog) != 0 && !st)
        st = xtts_error_set(err, XTTS_EIO, "%s: cannot write the JSON log: %s", R->o.log_json, strerror(errno));
    free(R->stats.step_ms);
    free(R->stats.stall_pct);
    xtts_loader_delete(R->loader);
    xtts_cuda_trainer_delete(R->gpu);
    free(R->adam_m);
    free(R->adam_v);
    xtts_model_delete(R->model);
    xtts_dataset_free(&R->ds);
    if (R->cache) xtts_cache_close(R->cache);
    return st;
}

xtts_status xtts_train_run(const xtts_train_options *opt, xtts_error *err) {
    if (opt->model_size && !strcmp(opt->model_size, "xtts-gpt")) return xtts_gpt_train_run(opt, err);
    train_run R;
    memset(&R, 0, sizeof R);
    R.o = *opt;
    R.ordinal = -1;
    xtts_status st = xtts_cpu_level_init(err); /* XTTS_CPU, read once */
    int precision = R.o.precision ? precision_parse(R.o.precision) : -1;
    if (!st && precision < 0)
        st = xtts_error_set(err, XTTS_EUSAGE, "--precision %s: expected fp32, tf32 or bf16",
                            R.o.precision ? R.o.precision : "(null)");
    R.precision = (xtts_precision)precision;
    if (!st) st = xtts_device_choose(R.o.device, "xtts-train", &R.ordinal, err);
    if (!st && R.ordinal < 0 && R.precision != XTTS_PRECISION_FP32 && !R.o.loader_only)
        st = xtts_error_set(err, XTTS_EUNSUPPORTED,
                            "--precision %s runs on a CUDA device only; this run is on the CPU, which computes in "
                            "fp32 (leave --precision out, or use --device cuda on a machine with a GPU)",
                            R.o.precision);
    if (st) return st;
    if (R.o.steps < 1 || R.o.batch_size < 1 || R.o.loader_threads < 1)
        return xtts_error_set(err, XTTS_EUSAGE, "--steps, --batch-size and --loader-threads must be at least 1");
    if (R.o.threads > 0) omp_set_num_threads(R.o.threads);
    st = run_open(&R, err);
    if (!st && R.o.loader_only) return run_free(&R, run_loader_only(R.cache, &R.ds, &R.o, err), err);
    if (!st) st = model_config(&R.o, &R.ds, &R.mc, err);
    if (!st) st = run_check_resume(&R, err);
    if (!st) st = run_model(&R, err);
    if (!st) st = run_start(&R, err);
    if (!st) st = run_loop(&R, err);
    if (!st)
        st = print_summary(&R.stats, R.ran, R.first_loss, R.last_loss, R.samples_total, R.time_total, R.skipped_total,
                           R.jlog, &R.o, R.ordinal < 0, err);
    return run_free(&R, st, err);
}
