/* compute.h — a buffer of records computed by the worker threads (private to prep/melcache).
 *
 * On the CPU path each worker takes one record at a time through its three steps (record.h).
 * Where a device computes the mels (the CUDA path), the buffer goes through the batch
 * pipeline instead: cut into sub-batches, the engine (kernels/mel_batch.h) computes one on a
 * thread of its own while the workers load the next and finish the one before. The CPU
 * batch engine runs the same pipeline on the CPU (XTTS_MELCACHE_BATCH), so that it is tested
 * where there is no GPU.
 */
#ifndef XTTS_PREP_MELCACHE_COMPUTE_H
#define XTTS_PREP_MELCACHE_COMPUTE_H

#include <stddef.h>

#include "formats/manifest.h"
#include "kernels/quality.h"
#include "prep/melcache/builder.h"
#include "prep/melcache/device.h"
#include "prep/melcache/slots.h"

typedef struct xtts_melcache_engine_thread xtts_melcache_engine_thread;

typedef struct {
    const xtts_cache_config *cfg;
    int threads;
    size_t chunk;                   /* records a buffer holds */
    xtts_record_builder *wk;        /* [threads]: one worker state a thread */
    xtts_melcache_slot_bufs *wbufs; /* [threads]: the workers' buffers of the CPU path */
    xtts_melcache_slot_bufs *own;   /* [chunk]: the batch pipeline's, one a record of the buffer computed */
    xtts_quality_state **qs;        /* [threads] when the build stores quality metrics, else NULL */
    xtts_melcache_device *dev;      /* with dev->batched: the batch engine's (xtts_melcache_compute_engine) */
    xtts_melcache_engine_thread *thr; /* the thread the engine computes on, or NULL */
} xtts_melcache_compute;

/* Workers for configuration cfg (kept by pointer): threads_asked of them (<= 0: all cores),
 * and the size of a buffer: 16 records a thread within 32..1024, or batch->buffer_records.
 * Errors: XTTS_ENOMEM, those of xtts_record_builder_init (what was made is freed by
 * xtts_melcache_compute_free). */
xtts_status xtts_melcache_compute_init(xtts_melcache_compute *c, const xtts_cache_config *cfg, int threads_asked,
                                       const xtts_melcache_batch_options *batch, xtts_error *err);
/* A quality-metrics state a worker, when the build stores metrics (measure).
 * Errors: XTTS_ENOMEM, those of xtts_quality_state_new. */
xtts_status xtts_melcache_compute_measure(xtts_melcache_compute *c, int measure, xtts_error *err);
/* The batch pipeline's engine: with dev->batched, the engine's thread is made (once a run). */
void xtts_melcache_compute_engine(xtts_melcache_compute *c, xtts_melcache_device *dev);

/* The slots of buf[0..m) not carried over, through load, mel and finish. A record that fails
 * is rejected in its slot; a failure of the engine stops the run.
 * Errors: the engine's (xtts_mel_batch_compute's, or the CUDA start-up's). */
xtts_status xtts_melcache_compute_buffer(xtts_melcache_compute *c, xtts_melcache_slot *buf, size_t m, xtts_error *err);

/* The engine's thread stopped (before the device's engine is deleted), everything freed. */
void xtts_melcache_compute_free(xtts_melcache_compute *c);

#endif
