/* melcache.c — the cache build behind xtts-melcache (see melcache.h): a run's steps in order.
 *
 * A run opens the token stream at its header (inputs.h), which completes the configuration;
 * makes its workers and buffers (compute.h, slots.h); finds the cache it carries records
 * from, with --reuse or --update (plan.h); reads the whole stream once (small next to the
 * audio) to build the speaker table, so that every part of a sharded build agrees on it, and
 * a whole update keys and looks up its inputs in that same reading; opens the shard writer,
 * which tells where a previous run stopped (resume.h); plans a shared update; starts the
 * device that computes the mels (device.h);
 * then pushes the inputs not stored yet through the write pipeline (pipeline.h) and writes
 * the manifest. Each step's state lives with the step; this file holds them together and
 * releases them in one place.
 */
#include "prep/melcache/melcache.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/store/writer.h"
#include "formats/tokens.h"
#include "kernels/mel.h"
#include "prep/melcache/compute.h"
#include "prep/melcache/device.h"
#include "prep/melcache/inputs.h"
#include "prep/melcache/pipeline.h"
#include "prep/melcache/plan.h"
#include "prep/melcache/resume.h"
#include "prep/melcache/slots.h"
#include "prep/melcache/state.h"
#include "prep/melcache/update.h"

/* One build: the options, the result, and each step's part of the run. */
typedef struct {
    xtts_melcache_options o;     /* the caller's, with the tokenizer fields taken from the stream */
    const char *out_dir;         /* where the build is written: o.out_dir, or an update's stage */
    int force;                   /* replace what out_dir holds that is not this build's */
    const char *tokens_name;
    xtts_melcache_result *res;
    double t0;
    xtts_melcache_inputs in;     /* the token stream and the part's block of it */
    xtts_melcache_device dev;    /* what computes the mels */
    xtts_melcache_compute compute; /* the workers */
    xtts_melcache_buffers bufs;  /* the records in flight, and their keys */
    xtts_melcache_plan plan;     /* the source records are carried from */
    xtts_melcache_build build;   /* the shard writer and what it stored */
    xtts_melcache_pipe pipe;     /* the write pipeline */
} melcache_run;

static void run_init(melcache_run *r, const xtts_melcache_options *o, const char *tokens_name,
                     xtts_melcache_result *res) {
    memset(r, 0, sizeof *r);
    r->o = *o;
    r->tokens_name = tokens_name;
    r->res = res;
    memset(res, 0, sizeof *res);
    r->t0 = xtts_now_s();
    xtts_melcache_plan_init(&r->plan, &r->o.cfg, res, o->dry_run);
}

/* The options, the device, then the token stream opened: its header decides the tokenizer
 * fields of the configuration. */
static xtts_status run_open_inputs(melcache_run *r, FILE *tokens, xtts_error *err) {
    xtts_melcache_options *o = &r->o;
    xtts_status st = xtts_mel_params_check(&o->cfg.mel, err);
    if (st) return st;
    if (o->n_parts < 1 || o->part >= o->n_parts) return xtts_error_set(err, XTTS_EUSAGE, "--part: bad part number");
    if ((st = xtts_melcache_device_choose(&r->dev, o->device, err))) return st;
    st = xtts_melcache_inputs_open(tokens, r->tokens_name, o->cfg.val_fraction, o->exclude, &r->in, err);
    if (st) return st;
    const xtts_tokens_header *h = &r->in.hdr;
    snprintf(o->cfg.tokenizer, sizeof o->cfg.tokenizer, "%s", h->tokenizer);
    snprintf(o->cfg.vocab_hash, sizeof o->cfg.vocab_hash, "%s", h->vocab_hash);
    o->cfg.vocab_size = h->vocab_size;
    o->cfg.max_tokens = h->max_tokens;
    o->cfg.pad_token = h->pad_id;
    if (o->cfg.max_tokens <= 0 || o->cfg.max_tokens > XTTS_RECORD_MAX_TOKENS)
        return xtts_error_set(err, XTTS_EINPUT, "%s: header max_tokens=%d out of range", r->tokens_name, o->cfg.max_tokens);
    return XTTS_OK;
}

/* The rest of the first pass: the counts and the speaker table, with a whole update's plan
 * (keys and lookups) made as the stream is read; then the part's block of the inputs and the
 * stage an update is built in. */
static xtts_status run_count_inputs(melcache_run *r, xtts_error *err) {
    xtts_melcache_options *o = &r->o;
    int plan = r->plan.staging && r->plan.src && o->part < 0 && !o->compact; /* xtts_melcache_plan_share's */
    xtts_status st = plan ? xtts_melcache_plan_walk(&r->plan, &r->in, &r->bufs, err) : xtts_melcache_inputs_scan_rest(&r->in, err);
    if (st) return st;
    r->res->inputs = r->in.n;
    r->res->test_held_out = r->in.n_test;
    r->res->excluded = r->in.n_excluded;
    r->res->split_given = r->in.split_given;
    r->res->val_by_fraction = r->in.val_by_fraction;
    if (o->part >= 0) xtts_part_block(r->in.n, o->part, o->n_parts, &r->in.lo, &r->in.hi);
    r->plan.lo = r->in.lo;
    return xtts_melcache_plan_stage(&r->plan, err);
}

/* A worker a thread, and the two buffers of records in flight. */
static xtts_status run_start_workers(melcache_run *r, xtts_error *err) {
    char cfg_hash[65];
    xtts_cache_config_hash(&r->o.cfg, cfg_hash);
    xtts_status st = xtts_melcache_compute_init(&r->compute, &r->o.cfg, r->o.threads, &r->dev.batch, err);
    if (!st) st = xtts_melcache_buffers_init(&r->bufs, r->compute.chunk, r->o.cfg.mel.n_mels, cfg_hash,
                                             r->compute.threads, err);
    if (!st && !r->o.rehash) r->plan.hasher = r->bufs.keys.hasher; /* the source's stat records go there */
    return st;
}

/* The device, now that the build's size is known: the records this run will compute (the
 * part's inputs not stored yet, less those an update keeps in the old shards). */
static xtts_status run_start_device(melcache_run *r, xtts_error *err) {
    uint64_t from = r->build.start > r->in.lo ? r->build.start : r->in.lo;
    uint64_t n = xtts_melcache_plan_to_compute(&r->plan, from, r->in.hi);
    xtts_status st = xtts_melcache_device_start(&r->dev, &r->o.cfg, r->compute.threads, r->compute.chunk, n, err);
    if (!st) xtts_melcache_compute_engine(&r->compute, &r->dev);
    return st;
}

/* The part's inputs not stored yet through the write pipeline. */
static xtts_status run_pipeline(melcache_run *r, xtts_error *err) {
    r->pipe = (xtts_melcache_pipe){.o = &r->o, .in = &r->in, .bs = &r->bufs, .plan = &r->plan, .compute = &r->compute,
                                   .build = &r->build, .res = r->res, .t0 = r->t0};
    return xtts_melcache_pipeline_run(&r->pipe, err);
}

/* ---- the manifest ------------------------------------------------------------- */

/* What the build adds to the manifest; mean and std are filled here, the rest points into in
 * and s. */
static void manifest_extra(const xtts_melcache_inputs *in, const xtts_melcache_stats *s, const char **langs,
                           double *mean, double *sd, xtts_manifest_extra *x) {
    for (int i = 0; i < in->n_langs; i++) langs[i] = in->langs[i];
    for (size_t c = 0; c < s->n_mels; c++) {
        double n = s->frames ? (double)s->frames : 1.0;
        mean[c] = s->sum[c] / n;
        double var = s->sumsq[c] / n - mean[c] * mean[c];
        sd[c] = var > 0 ? sqrt(var) : 0.0;
    }
    *x = (xtts_manifest_extra){
        .has_speakers = 1, .speakers = (const char *const *)in->speakers, .n_speakers = in->n_speakers,
        .languages = langs, .n_languages = (size_t)in->n_langs,
        .has_splits = 1, .split_train = s->train, .split_val = s->val,
        .has_totals = 1, .audio_seconds = s->audio_seconds, .total_frames = s->frames, .total_tokens = s->tokens,
        .stats_frames = s->frames, .n_mels = s->n_mels, .mel_sum = s->sum, .mel_sumsq = s->sumsq,
        .mel_mean = mean, .mel_std = sd, .token_stream = &in->hdr};
}

/* The last part to finish joins the parts; earlier ones find parts missing. */
static xtts_status run_join_parts(melcache_run *r, xtts_error *err) {
    xtts_error me;
    xtts_status ms = xtts_cache_merge(r->out_dir, &me);
    if (ms == XTTS_OK) r->res->merged = 1;
    /* parts still missing, or another part merging right now: not this run's business;
     * anything else (parts built with other options, an id in two parts) is */
    else if (ms != XTTS_ENOTFOUND && ms != XTTS_EBUSY) return xtts_error_set(err, XTTS_EINPUT, "cannot join the parts: %s", me.msg);
    return XTTS_OK;
}

/* The stat records of the audio files this run read or found unchanged, into the last commit. */
static xtts_status save_stat_records(melcache_run *r, xtts_error *err) {
    void *blob;
    size_t len;
    xtts_status st = xtts_audio_hasher_save(r->bufs.keys.hasher, &blob, &len, err);
    if (st) return st;
    st = xtts_cache_writer_set_state(r->build.w, XTTS_MELCACHE_STAT_KEY, blob, len, err);
    free(blob);
    return st;
}

/* Count what the cache (or part) holds, write its manifest with the speakers, languages and
 * statistics, join the parts when this was one, and finish an update. */
static xtts_status run_finish(melcache_run *r, xtts_error *err) {
    xtts_melcache_result *res = r->res;
    const char *langs[XTTS_MAX_LANGS];
    double mean[XTTS_RECORD_MAX_MELS], sd[XTTS_RECORD_MAX_MELS];
    xtts_manifest_extra extra;
    manifest_extra(&r->in, r->build.stats, langs, mean, sd, &extra);
    res->stored = xtts_cache_writer_count(r->build.w);
    res->rejected = xtts_cache_writer_rejected(r->build.w);
    xtts_status st = save_stat_records(r, err);
    if (st) return st; /* run_free aborts the writer: what it committed stays */
    st = xtts_cache_writer_finish(r->build.w, &extra, err);
    r->build.w = NULL;
    xtts_progress_finish(&r->pipe.prog, r->pipe.done_sel, res->selected, NULL);
    if (!st && r->o.part >= 0) st = run_join_parts(r, err);
    return xtts_melcache_plan_finish(&r->plan, r->o.part < 0, st, err);
}

/* The one cleanup of a run, whichever step it stopped at: an unfinished writer is aborted
 * (what it committed stays for a re-run). */
static void run_free(melcache_run *r) {
    if (r->build.w) xtts_cache_writer_abort(r->build.w);
    xtts_melcache_compute_free(&r->compute); /* the engine's thread ends before the engine */
    xtts_melcache_device_free(&r->dev);
    if (r->bufs.keys.hasher) xtts_audio_hasher_counts(r->bufs.keys.hasher, &r->res->audio_read, &r->res->audio_known);
    xtts_melcache_buffers_free(&r->bufs);
    if (r->build.stats) r->res->audio_seconds = r->build.stats->audio_seconds;
    free(r->build.stats);
    xtts_melcache_inputs_free(&r->in);
    xtts_melcache_plan_free(&r->plan);
    snprintf(r->res->device, sizeof r->res->device, "%s", r->dev.name);
    r->res->wall_seconds = xtts_now_s() - r->t0;
}

xtts_status xtts_melcache_run(const xtts_melcache_options *o, FILE *tokens, const char *tokens_name,
                              xtts_melcache_result *res, xtts_error *err) {
    melcache_run r;
    run_init(&r, o, tokens_name, res);
    xtts_status st = run_open_inputs(&r, tokens, err);
    if (!st) st = run_start_workers(&r, err);
    if (!st && o->reuse_dir) st = xtts_melcache_plan_source(&r.plan, o->reuse_dir, 0, err);
    if (!st && o->update) st = xtts_melcache_plan_update(&r.plan, &r.o, err);
    r.out_dir = r.plan.staging ? r.plan.stage : o->out_dir; /* an update is built in its stage, */
    r.force = o->force || r.plan.staging;                   /* its own: what is not this build's goes */
    if (!st) st = run_count_inputs(&r, err);
    if (!st && o->dry_run) {
        st = xtts_melcache_plan_dry(&r.plan, o->part < 0, &r.in, &r.bufs, err);
        run_free(&r);
        return st;
    }
    if (!st) st = xtts_melcache_resume_open(&r.build, &r.o, r.out_dir, r.force, &r.in, &r.bufs, res, err);
    r.plan.measure = r.build.measure;
    if (!st && r.plan.staging && o->part < 0) st = xtts_melcache_plan_share(&r.plan, &r.build, o->compact, &r.bufs, err);
    if (!st) st = xtts_melcache_compute_measure(&r.compute, r.build.measure, err);
    if (!st) st = run_start_device(&r, err);
    if (!st) st = run_pipeline(&r, err);
    if (!st) st = run_finish(&r, err);
    run_free(&r);
    return st;
}
