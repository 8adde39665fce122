/* slots.h — the records in flight (private to prep/melcache): a build moves through the
 * inputs two buffers of slots at a time, the workers computing one while the writer thread
 * writes the other. A slot holds one input and everything the pipeline learns of it: its
 * content key, whether it is carried over from a source cache, its samples, mel, sums and
 * encoded bytes. This file fills a buffer from the stream and gives its slots their keys.
 */
#ifndef XTTS_PREP_MELCACHE_SLOTS_H
#define XTTS_PREP_MELCACHE_SLOTS_H

#include <stddef.h>
#include <stdint.h>

#include "cache/store/keys.h"
#include "cache/store/writer.h"
#include "common/xtts_common.h"
#include "kernels/quality.h"
#include "prep/melcache/inputs.h"
#include "prep/melcache/update.h"

/* The large buffers a record needs until it is encoded. On the CPU path a worker loads,
 * computes and encodes one record at a time, so they are the worker's (a few hundred KB
 * each, reused); only the batch pipeline (the CUDA path), which computes a buffer's mels
 * a sub-batch at a time on the engine's thread, gives every record of the buffer being
 * computed its own: the k-th of a buffer's (the writer needs none of them: the record is
 * encoded by then). Fresh pages are not free: each costs a page fault the first time it is
 * touched (about 20 microseconds on some virtual machines). */
typedef struct {
    float *pcm;          /* a copy, when the mel is computed later (the batch pipeline), or the
                            int16-rounded signal when the waveform is stored */
    size_t cap_pcm;
    int16_t *wave;       /* --audio int16|flac: the stored waveform (s->src rounded) */
    size_t cap_wave;
    float *mel;          /* [n_mels][padded] */
    size_t cap_mel;
} xtts_melcache_slot_bufs;

void xtts_melcache_slot_bufs_free(xtts_melcache_slot_bufs *b);

/* One record in flight through the three phases of a buffer: load (worker threads),
 * mel (worker threads, or a sub-batch of the batch engine), finish (worker threads: check,
 * pad, encode). */
typedef struct {
    uint64_t input;      /* index in the token stream */
    xtts_melcache_input rec; /* that input (owned; the slot's next input replaces it; a record
                                an update keeps is not read: rec is then a stale one) */
    xtts_tokens_pos pos; /* where the stream's reader stood before reading it */
    xtts_sha256 keys_upto; /* the running digest of the keys up to this input, not finalized:
                              only a written record's commit saves it (a kept one's does not) */
    uint8_t key[XTTS_CONTENT_KEY_BYTES]; /* its content key */
    int reused;          /* carried over from the source cache: bytes and sums are its */
    int kept;            /* with reused: kept where the source stores it (a shared update): not
                            written, only counted in the statistics */
    uint64_t run_end;    /* with kept, in a shared update's build pass: the slot stands for the
                            inputs [input, run_end), all kept (none of them read from the stream) */
    xtts_cache_entry ent[XTTS_SHARD_MAX_DBS]; /* with reused: its entries in the records' own
                                                 databases (pointing into the source) */
    size_t n_ent;
    int ok;
    char reason[XTTS_ERRMSG_MAX];
    const float *src;    /* mono samples at the preset's rate: the worker's audio buffer, or b->pcm */
    size_t n_pcm;
    xtts_melcache_slot_bufs *b; /* the batch pipeline's k-th buffers, or (CPU path) the worker's:
                                   its record is encoded right after */
    uint32_t trim_start; /* samples cut at the start by --trim-db */
    int padded;
    size_t n_frames;
    float pad_value;
    uint8_t *bytes;
    size_t len;
    uint32_t n_tokens;
    uint8_t split;
    double *sum, *sumsq; /* [n_mels] */
    xtts_quality_metrics quality; /* measured in the load when the build stores metrics */
} xtts_melcache_slot;

/* What the content keys of a run are made with. */
typedef struct {
    char cfg_hash[65];          /* the configuration's hash */
    xtts_audio_hasher *hasher;
    const uint8_t *planned;     /* the keys of the inputs from planned_from on, when an update's
                                   plan computed them already ([n][32]), or NULL */
    uint64_t planned_from;
    int threads;                /* the threads that hash the audio files */
    size_t *to_read;            /* [chunk]: the slots of a buffer whose files are read */
} xtts_melcache_keys;

/* The two buffers of a run, chunk slots each (buffer b is slots + b * chunk), and what their
 * slots' keys are made with. */
typedef struct {
    size_t chunk;
    xtts_melcache_slot *slots;  /* [2 * chunk] */
    double *sums;               /* the slots' sum and sumsq, [2 * chunk][2][n_mels] */
    xtts_melcache_keys keys;
} xtts_melcache_buffers;

/* Buffers of chunk slots for n_mels channels, keyed with the configuration hash cfg_hash on
 * `threads` threads. Errors: XTTS_ENOMEM (what was made is freed by xtts_melcache_buffers_free). */
xtts_status xtts_melcache_buffers_init(xtts_melcache_buffers *bs, size_t chunk, int n_mels, const char *cfg_hash,
                                       int threads, xtts_error *err);
void xtts_melcache_buffers_free(xtts_melcache_buffers *bs);

/* The stream's next input, number input, into slot s (where the reader stood before it in
 * s->pos). Errors: those of xtts_melcache_inputs_next. */
xtts_status xtts_melcache_slot_read(xtts_melcache_inputs *in, xtts_melcache_slot *s, uint64_t input, xtts_error *err);

/* The next inputs before end into buf, cap at most; *m: how many; *next moves past them.
 * Errors: those of xtts_melcache_inputs_next. */
xtts_status xtts_melcache_buffer_fill(xtts_melcache_inputs *in, xtts_melcache_slot *buf, size_t cap, uint64_t *next,
                                      uint64_t end, size_t *m, xtts_error *err);

/* The content key of slot s: its file's hash from its stat record, or read. Thread-safe. */
void xtts_melcache_slot_key(const xtts_melcache_keys *k, xtts_melcache_slot *s);

/* The buffer's keys (on `threads` threads), then, in input order, the inputs' running digest
 * over them and each slot's copy of its state. */
void xtts_melcache_buffer_keys(const xtts_melcache_buffers *bs, xtts_melcache_inputs *in, xtts_melcache_slot *buf,
                               size_t m);

#endif
