/* pipeline.h — the write pipeline of a build (private to prep/melcache): the part's inputs
 * not stored yet go through two buffers of slots; the calling thread fills one, gives its
 * slots their keys, looks them up in the source (plan.h) and has the workers compute the
 * rest (compute.h), while a writer thread appends the other buffer to the shard writer in
 * input order together with the running statistics (the only thread that touches the writer
 * and the statistics). A kill at any moment loses at most the uncommitted tail, and a re-run
 * recomputes exactly that.
 */
#ifndef XTTS_PREP_MELCACHE_PIPELINE_H
#define XTTS_PREP_MELCACHE_PIPELINE_H

#include <pthread.h>
#include <stdint.h>

#include "common/xtts_common.h"
#include "prep/melcache/compute.h"
#include "prep/melcache/inputs.h"
#include "prep/melcache/options.h"
#include "prep/melcache/result.h"
#include "prep/melcache/plan.h"
#include "prep/melcache/slots.h"
#include "prep/melcache/state.h"

typedef struct {
    /* the parts it drives, set by the caller */
    const xtts_melcache_options *o;
    xtts_melcache_inputs *in;
    xtts_melcache_buffers *bs;
    xtts_melcache_plan *plan;
    xtts_melcache_compute *compute;
    xtts_melcache_build *build;
    xtts_melcache_result *res;
    double t0;                 /* the run's start (the progress line's rate) */
    /* its own */
    pthread_t thread;          /* the writer */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int ready[2];              /* buffer b computed, waiting to be written */
    size_t m[2];
    int stop;                  /* no more buffers will come */
    xtts_status st;            /* the writer's first error; later buffers are drained unwritten */
    xtts_error err;
    xtts_progress prog;
    uint64_t done_sel;         /* records of the part done (stored before this run included) */
    double audio_at_start;
    uint8_t *keys_value;       /* a computed record's "keys" value, packed before its put */
    int quality_noted;         /* XTTS_MELCACHE_QUALITY_KEY is in the writer's state */
    int speakers_noted;        /* XTTS_MELCACHE_SPEAKERS_KEY is */
    xtts_cache_source_view *view; /* the writer thread's view of the source, for kept inputs */
} xtts_melcache_pipe;

/* The part's inputs from the build's start to in->hi, a buffer at a time, written; the
 * progress line (p->prog) counts the records stored before this run as done. p's parts are
 * set; the rest of p is the pipeline's (freed before it returns, the progress line's counts
 * kept for xtts_progress_finish).
 * Errors: XTTS_ENOMEM (the writer thread), those of the inputs, the source, the engine and
 * the writer (put, reject, state). */
xtts_status xtts_melcache_pipeline_run(xtts_melcache_pipe *p, xtts_error *err);

#endif
