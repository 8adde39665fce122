/* reader_api.c — the stable C interface of reader_api.h over cache/store/read/reader.h.
 *
 * A handle owns one xtts_cache, a pool of spare xtts_cache_readers (each holds its read
 * transactions and a record decoder; the shards are opened MDB_NOTLS, so a reader may
 * move between threads as long as one thread uses it at a time) and, once a call asks for
 * more than one thread, helper threads that live until the handle is closed, each with
 * its own reader.
 *
 * A batch call takes a reader from the spare pool for the calling thread (making one when
 * the pool is empty), so concurrent calls on one handle never share a reader. With
 * threads > 1 it publishes the batch to threads - 1 helpers and decodes too; every
 * participant claims rows one at a time from an atomic counter, so a helper that the
 * kernel schedules late (a busy machine) finds the rows done instead of holding the call
 * up; the call returns when no helper is inside one of its rows. One call at a time uses
 * the helpers; a concurrent call that finds them busy decodes on its own thread. Streaming
 * (non-temporal) stores are chosen for the whole batch, as xtts_cache_reader_batch would
 * for one call of that size. */
#include "cache/store/read/reader_api.h"
#include "cache/store/read/codes_read.h"
#include "cache/store/read/item.h"
#include "cache/store/read/reader.h"
#include "formats/quality_flags.h"

#include <jansson.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define API_MAX_THREADS 256

typedef struct job job_t;
/* A stack of spare objects of one kind, kept under the handle's mu. */
typedef struct {
    void **v;
    size_t n, cap;
} spare_t;
typedef struct helper helper_t;

struct xtts_api_cache {
    xtts_cache *c;
    pid_t pid;
    pthread_mutex_t mu; /* the spare readers */
    spare_t readers; /* the spare xtts_cache_readers, under mu */
    spare_t items;   /* the spare item decoders of xtts_api_read_items, under mu */
    /* helpers */
    pthread_mutex_t call_mu; /* held by the one call using the helpers */
    pthread_mutex_t wmu;     /* guards the fields below */
    pthread_cond_t work_cv, done_cv;
    helper_t **helpers;
    size_t n_helpers;
    job_t *job;   /* the published batch, NULL when none */
    uint64_t gen; /* bumped for every published batch */
    int stop;
};

/* One batch: the caller's arrays and the row counter. */
struct job {
    const uint64_t *indices;
    size_t n;
    xtts_batch all; /* the caller's arrays as one batch of n rows */
    uint64_t *index_rows;
    size_t mel_row_bytes;
    int streaming;
    size_t limit;          /* helpers 0..limit-1 take part */
    atomic_size_t next;    /* next unclaimed row */
    atomic_int failed;     /* stop claiming */
    size_t busy;           /* helpers inside the batch (under wmu) */
    pthread_mutex_t err_mu;
    size_t err_row;        /* first failing row (n when none) */
    xtts_error err;
};

struct helper {
    xtts_api_cache *a;
    size_t id;
    pthread_t tid;
    xtts_cache_reader *r;
    uint64_t seen;
};

static __thread char last_error[XTTS_ERRMSG_MAX];

static int fail(int code, const char *msg) {
    snprintf(last_error, sizeof last_error, "%s", msg);
    return code;
}

static int failf(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int failf(int code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return code;
}

int xtts_api_abi_version(void) { return XTTS_API_ABI_VERSION; }

const char *xtts_api_version(void) { return XTTS_VERSION; }

const char *xtts_api_last_error(void) { return last_error; }

xtts_api_cache *xtts_api_open(const char *dir) { return xtts_api_open_ex(dir, 0); }

xtts_api_cache *xtts_api_open_ex(const char *dir, unsigned flags) {
    if (!dir) {
        fail(XTTS_EUSAGE, "xtts_api_open: no directory given");
        return NULL;
    }
    xtts_cache_guard_faults();
    xtts_api_cache *a = calloc(1, sizeof *a);
    if (!a) {
        failf(XTTS_ENOMEM, "%s: out of memory", dir);
        return NULL;
    }
    xtts_error e;
    if (xtts_cache_open_ex(dir, flags & XTTS_API_OPEN_TOLERANT ? XTTS_CACHE_OPEN_TOLERANT : 0, &a->c, &e)) {
        fail(e.code, e.msg);
        free(a);
        return NULL;
    }
    pthread_mutex_init(&a->mu, NULL);
    pthread_mutex_init(&a->call_mu, NULL);
    pthread_mutex_init(&a->wmu, NULL);
    pthread_cond_init(&a->work_cv, NULL);
    pthread_cond_init(&a->done_cv, NULL);
    a->pid = getpid();
    return a;
}

void xtts_api_close(xtts_api_cache *a) {
    if (!a) return;
    if (a->pid == getpid()) { /* a forked child has no helper threads to stop */
        pthread_mutex_lock(&a->wmu);
        a->stop = 1;
        pthread_cond_broadcast(&a->work_cv);
        pthread_mutex_unlock(&a->wmu);
        for (size_t i = 0; i < a->n_helpers; i++) {
            pthread_join(a->helpers[i]->tid, NULL);
            xtts_cache_reader_delete(a->helpers[i]->r);
            free(a->helpers[i]);
        }
    }
    free(a->helpers);
    for (size_t i = 0; i < a->readers.n; i++) xtts_cache_reader_delete(a->readers.v[i]);
    free(a->readers.v);
    for (size_t i = 0; i < a->items.n; i++) xtts_item_state_delete(a->items.v[i]);
    free(a->items.v);
    pthread_cond_destroy(&a->work_cv);
    pthread_cond_destroy(&a->done_cv);
    pthread_mutex_destroy(&a->wmu);
    pthread_mutex_destroy(&a->call_mu);
    pthread_mutex_destroy(&a->mu);
    xtts_cache_close(a->c);
    free(a);
}

uint64_t xtts_api_count(const xtts_api_cache *a) { return a ? xtts_cache_count(a->c) : 0; }
uint32_t xtts_api_n_mels(const xtts_api_cache *a) {
    return a ? (uint32_t)xtts_cache_get_config(a->c)->mel.n_mels : 0;
}
uint32_t xtts_api_max_tokens(const xtts_api_cache *a) {
    return a ? (uint32_t)xtts_cache_get_config(a->c)->max_tokens : 0;
}
uint32_t xtts_api_max_frames(const xtts_api_cache *a) { return a ? (uint32_t)xtts_cache_max_frames(a->c) : 0; }
int32_t xtts_api_pad_token(const xtts_api_cache *a) { return a ? xtts_cache_get_config(a->c)->pad_token : 0; }
uint32_t xtts_api_format_version(const xtts_api_cache *a) {
    return a ? (uint32_t)xtts_cache_get_config(a->c)->format_version : 0;
}

/* A spare object of p, NULL when there is none. */
static void *spare_take(xtts_api_cache *a, spare_t *p) {
    pthread_mutex_lock(&a->mu);
    void *v = p->n ? p->v[--p->n] : NULL;
    pthread_mutex_unlock(&a->mu);
    return v;
}

/* Keep v in p: 1, or 0 when there is no room (out of memory: the caller deletes it). */
static int spare_give(xtts_api_cache *a, spare_t *p, void *v) {
    pthread_mutex_lock(&a->mu);
    if (p->n == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 4;
        void **q = realloc(p->v, cap * sizeof *q);
        if (q) {
            p->v = q;
            p->cap = cap;
        }
    }
    int kept = p->n < p->cap;
    if (kept) p->v[p->n++] = v;
    pthread_mutex_unlock(&a->mu);
    return kept;
}

/* A spare reader (made when there is none). */
static int pool_take(xtts_api_cache *a, xtts_cache_reader **out) {
    if ((*out = spare_take(a, &a->readers))) return 0;
    xtts_error e;
    if (xtts_cache_reader_new(a->c, out, &e)) return fail(e.code, e.msg);
    return 0;
}

static void pool_give(xtts_api_cache *a, xtts_cache_reader *r) {
    if (!spare_give(a, &a->readers, r)) xtts_cache_reader_delete(r);
}

/* Claim rows one at a time and decode them with r until none is left. */
static void run_rows(job_t *j, xtts_cache_reader *r) {
    xtts_cache_reader_set_batch_streaming(r, j->streaming);
    for (;;) {
        if (atomic_load_explicit(&j->failed, memory_order_relaxed)) break;
        size_t k = atomic_fetch_add_explicit(&j->next, 1, memory_order_relaxed);
        if (k >= j->n) break;
        xtts_batch b = j->all;
        b.batch_size = 1;
        b.tokens = j->all.tokens + k * j->all.max_tokens;
        b.mel = (uint8_t *)j->all.mel + k * j->mel_row_bytes;
        b.n_tokens += k;
        b.n_frames += k;
        b.speaker_id += k;
        b.lang_id += k;
        b.split += k;
        b.index = j->index_rows + k;
        xtts_error e;
        if (xtts_cache_reader_batch(r, j->indices + k, 1, &b, &e)) {
            pthread_mutex_lock(&j->err_mu);
            if (k < j->err_row) {
                j->err_row = k;
                j->err = e;
            }
            pthread_mutex_unlock(&j->err_mu);
            atomic_store(&j->failed, 1);
        }
    }
    xtts_cache_reader_set_batch_streaming(r, -1);
}

static void *helper_main(void *arg) {
    helper_t *h = arg;
    xtts_api_cache *a = h->a;
    pthread_mutex_lock(&a->wmu);
    for (;;) {
        while (!a->stop && (!a->job || h->seen == a->gen || h->id >= a->job->limit)) {
            if (a->job) h->seen = a->gen; /* not asked to take part in this one */
            pthread_cond_wait(&a->work_cv, &a->wmu);
        }
        if (a->stop) break;
        job_t *j = a->job;
        h->seen = a->gen;
        j->busy++;
        pthread_mutex_unlock(&a->wmu);
        run_rows(j, h->r);
        pthread_mutex_lock(&a->wmu);
        if (--j->busy == 0) pthread_cond_broadcast(&a->done_cv);
    }
    pthread_mutex_unlock(&a->wmu);
    return NULL;
}

/* Make helpers until there are want of them (fewer when a thread cannot be made). */
static void helpers_grow(xtts_api_cache *a, size_t want) {
    if (want <= a->n_helpers) return;
    helper_t **p = realloc(a->helpers, want * sizeof *p);
    if (!p) return;
    a->helpers = p;
    while (a->n_helpers < want) {
        helper_t *h = calloc(1, sizeof *h);
        if (!h) return;
        h->a = a;
        h->id = a->n_helpers;
        xtts_error e;
        if (xtts_cache_reader_new(a->c, &h->r, &e)) {
            free(h);
            return;
        }
        pthread_mutex_lock(&a->wmu);
        h->seen = a->gen;
        pthread_mutex_unlock(&a->wmu);
        if (pthread_create(&h->tid, NULL, helper_main, h)) {
            xtts_cache_reader_delete(h->r);
            free(h);
            return;
        }
        a->helpers[a->n_helpers++] = h;
    }
}

int xtts_api_read_batch(xtts_api_cache *a, const uint64_t *indices, size_t n, int32_t *tokens, size_t tokens_cap,
                        void *mel, int mel_dtype, size_t frames_cap, uint32_t *n_tokens, uint32_t *n_frames,
                        uint32_t *speaker_id, uint32_t *lang_id, uint8_t *split, int threads) {
    if (!a) return fail(XTTS_EUSAGE, "xtts_api_read_batch: no cache handle");
    if (a->pid != getpid())
        return failf(XTTS_EUSAGE, "%s: handle opened by process %ld used in process %ld; open the cache again",
                     xtts_cache_dir(a->c), (long)a->pid, (long)getpid());
    if (n == 0) return 0;
    if (!indices || !tokens || !mel || !n_tokens || !n_frames || !speaker_id || !lang_id || !split)
        return failf(XTTS_EUSAGE, "%s: xtts_api_read_batch: an output array is NULL", xtts_cache_dir(a->c));
    if (mel_dtype != XTTS_API_MEL_F32 && mel_dtype != XTTS_API_MEL_F16)
        return failf(XTTS_EUSAGE, "%s: xtts_api_read_batch: mel dtype %d (0 float32, 1 float16)",
                     xtts_cache_dir(a->c), mel_dtype);
    size_t n_mels = xtts_api_n_mels(a);
    xtts_dtype dt = mel_dtype == XTTS_API_MEL_F16 ? XTTS_DTYPE_F16 : XTTS_DTYPE_F32;
    size_t esize = xtts_dtype_size(dt);
    if (tokens_cap == 0 || frames_cap == 0 || n_mels * frames_cap > SIZE_MAX / esize / n ||
        tokens_cap > SIZE_MAX / sizeof(int32_t) / n)
        return failf(XTTS_ERANGE, "%s: xtts_api_read_batch: rows of %zu tokens and %zu frames", xtts_cache_dir(a->c),
                     tokens_cap, frames_cap);
    size_t nt = threads < 1 ? 1 : (size_t)threads;
    if (nt > API_MAX_THREADS) nt = API_MAX_THREADS;
    if (nt > n) nt = n;

    xtts_cache_reader *r;
    int rc = pool_take(a, &r);
    if (rc) return rc;
    uint64_t idx_one, *index_rows = n == 1 ? &idx_one : malloc(n * sizeof *index_rows);
    if (!index_rows) {
        pool_give(a, r);
        return failf(XTTS_ENOMEM, "%s: out of memory for a batch of %zu", xtts_cache_dir(a->c), n);
    }
    xtts_batch all = {.batch_size = n, .max_tokens = tokens_cap, .n_mels = n_mels, .max_frames = frames_cap,
                      .mel_dtype = dt, .tokens = tokens, .mel = mel, .n_tokens = n_tokens, .n_frames = n_frames,
                      .speaker_id = speaker_id, .lang_id = lang_id, .split = split, .index = index_rows};
    if (nt > 1 && pthread_mutex_trylock(&a->call_mu) != 0) nt = 1; /* the helpers are busy: decode here */
    if (nt == 1) {
        xtts_error e;
        if (xtts_cache_reader_batch(r, indices, n, &all, &e)) rc = fail(e.code, e.msg);
    } else {
        job_t j = {.indices = indices, .n = n, .all = all, .index_rows = index_rows,
                   .mel_row_bytes = n_mels * frames_cap * esize, .err_row = n};
        j.streaming = n * j.mel_row_bytes >= ((size_t)1 << 20);
        atomic_init(&j.next, 0);
        atomic_init(&j.failed, 0);
        pthread_mutex_init(&j.err_mu, NULL);
        helpers_grow(a, nt - 1);
        pthread_mutex_lock(&a->wmu);
        j.limit = nt - 1;
        a->job = &j;
        a->gen++;
        pthread_cond_broadcast(&a->work_cv);
        pthread_mutex_unlock(&a->wmu);
        run_rows(&j, r);
        pthread_mutex_lock(&a->wmu);
        a->job = NULL; /* no helper joins from now on */
        while (j.busy) pthread_cond_wait(&a->done_cv, &a->wmu);
        pthread_mutex_unlock(&a->wmu);
        pthread_mutex_unlock(&a->call_mu);
        pthread_mutex_destroy(&j.err_mu);
        if (j.err_row < n) rc = fail(j.err.code, j.err.msg);
    }
    pool_give(a, r);
    if (index_rows != &idx_one) free(index_rows);
    return rc;
}

int xtts_api_quality(xtts_api_cache *a, uint64_t index, uint8_t *out, size_t cap, size_t *len) {
    if (!a || !out || !len) return fail(XTTS_EUSAGE, "xtts_api_quality: a NULL argument");
    if (index >= xtts_cache_count(a->c))
        return failf(XTTS_ERANGE, "%s: index %llu out of range (%llu records)", xtts_cache_dir(a->c),
                     (unsigned long long)index, (unsigned long long)xtts_cache_count(a->c));
    if (!xtts_cache_shards_with_db(a->c, XTTS_CACHE_DB_QUALITY))
        return failf(XTTS_ENOTFOUND, "%s: the cache stores no quality metrics (built before them)", xtts_cache_dir(a->c));
    xtts_cache_reader *r;
    int rc = pool_take(a, &r);
    if (rc) return rc;
    const void *buf;
    size_t n;
    xtts_error e;
    xtts_status st = xtts_cache_reader_value(r, index, XTTS_CACHE_DB_QUALITY, &buf, &n, &e);
    if (st == XTTS_ENOTFOUND) rc = failf(XTTS_ECORRUPT, "%s: quality metrics missing", e.msg);
    else if (st) rc = fail(st, e.msg);
    else if (n < 4 || xtts_get_le32((const uint8_t *)buf + n - 4) != xtts_crc32(0, buf, n - 4))
        rc = failf(XTTS_ECORRUPT, "%s: index %llu: quality metrics damaged (checksum mismatch)",
                   xtts_cache_shard_of(a->c, index), (unsigned long long)index);
    else if (n > cap) rc = failf(XTTS_ERANGE, "%s: index %llu: %zu bytes of quality metrics, room for %zu",
                                 xtts_cache_dir(a->c), (unsigned long long)index, n, cap);
    else {
        memcpy(out, buf, n);
        *len = n;
    }
    pool_give(a, r);
    return rc;
}

int xtts_api_metrics(xtts_api_cache *a, uint64_t index, uint32_t *ints, float *floats, uint64_t *hash) {
    if (!ints || !floats || !hash) return fail(XTTS_EUSAGE, "xtts_api_metrics: a NULL argument");
    uint8_t buf[XTTS_QUALITY_BYTES + 8];
    size_t len = 0;
    int rc = xtts_api_quality(a, index, buf, sizeof buf, &len);
    if (rc) return rc;
    xtts_quality_metrics m;
    xtts_error e;
    if (len != XTTS_QUALITY_BYTES || xtts_quality_decode(buf, &m, &e))
        return failf(XTTS_ECORRUPT, "%s: index %llu: quality metrics damaged (%s)", xtts_cache_shard_of(a->c, index),
                     (unsigned long long)index, len != XTTS_QUALITY_BYTES ? "wrong size" : e.msg);
    uint32_t iv[] = {m.version, m.status, m.cut_start, m.cut_end, m.sample_rate, m.native_rate, m.n_chars, m.n_tokens};
    float fv[] = {m.duration_s,   m.lead_silence_s, m.trail_silence_s, m.speech_s,      m.start_edge_db, m.end_edge_db,
                  m.peak_dbfs,    m.rms_dbfs,       m.active_dbfs,     m.noise_dbfs,    m.clip_fraction, m.snr_db,
                  m.bandwidth_hz, m.chars_per_s,    m.tokens_per_s,    m.dc_offset};
    memcpy(ints, iv, sizeof iv);
    memcpy(floats, fv, sizeof fv);
    hash[0] = m.audio_hash[0];
    hash[1] = m.audio_hash[1];
    return 0;
}

/* Every record's metrics decoded into m[0..n) and speaker into spk[0..n), with reader r. */
static int quality_load_all(xtts_api_cache *a, xtts_cache_reader *r, xtts_quality_metrics *m, uint32_t *spk, size_t n) {
    xtts_error e;
    for (size_t i = 0; i < n; i++) {
        const void *buf;
        size_t len;
        xtts_status st = xtts_cache_reader_value(r, i, XTTS_CACHE_DB_QUALITY, &buf, &len, &e);
        if (st == XTTS_ENOTFOUND) return failf(XTTS_ECORRUPT, "%s: quality metrics missing", e.msg);
        if (st) return fail(st, e.msg);
        if (len != XTTS_QUALITY_BYTES || xtts_quality_decode(buf, &m[i], &e))
            return failf(XTTS_ECORRUPT, "%s: index %zu: quality metrics damaged (%s)", xtts_cache_shard_of(a->c, i), i,
                         len != XTTS_QUALITY_BYTES ? "wrong size" : e.msg);
    }
    xtts_lengths *l = malloc((n ? n : 1) * sizeof *l);
    if (!l) return fail(XTTS_ENOMEM, "quality flags: out of memory");
    xtts_status st = xtts_cache_lengths(r, l, &e);
    for (size_t i = 0; !st && i < n; i++) spk[i] = l[i].speaker_id;
    free(l);
    return st ? fail(st, e.msg) : 0;
}

int xtts_api_quality_flags(xtts_api_cache *a, const char *thresholds, size_t thresholds_len, uint32_t *flags,
                           int64_t *dup_of, size_t n) {
    if (!a || !flags || !dup_of) return fail(XTTS_EUSAGE, "xtts_api_quality_flags: a NULL argument");
    if (n != xtts_cache_count(a->c))
        return failf(XTTS_ERANGE, "%s: room for %zu records' flags, the cache has %llu", xtts_cache_dir(a->c), n,
                     (unsigned long long)xtts_cache_count(a->c));
    if (!xtts_cache_shards_with_db(a->c, XTTS_CACHE_DB_QUALITY))
        return failf(XTTS_ENOTFOUND, "%s: the cache stores no quality metrics (built before them)", xtts_cache_dir(a->c));
    xtts_quality_thresholds t;
    xtts_quality_thresholds_defaults(&t);
    xtts_error e;
    if (thresholds && xtts_quality_thresholds_parse(thresholds, thresholds_len, "thresholds", &t, &e))
        return fail(e.code, e.msg);
    xtts_quality_metrics *m = malloc((n ? n : 1) * sizeof *m);
    uint32_t *spk = malloc((n ? n : 1) * sizeof *spk);
    xtts_cache_reader *r = NULL;
    int rc = m && spk ? pool_take(a, &r) : fail(XTTS_ENOMEM, "quality flags: out of memory");
    if (!rc) {
        rc = quality_load_all(a, r, m, spk, n);
        pool_give(a, r);
    }
    if (!rc && xtts_quality_flag_all(m, spk, n, &t, flags, dup_of, &e)) rc = fail(e.code, e.msg);
    free(m);
    free(spk);
    return rc;
}

/* ---- one record, one value ------------------------------------------------------------ */

/* A reader of the pool for one call on a handle of this process: 0, or a status with the
 * message set. */
static int call_begin(xtts_api_cache *a, const char *fn, xtts_cache_reader **r) {
    if (!a) return failf(XTTS_EUSAGE, "%s: no cache handle", fn);
    if (a->pid != getpid())
        return failf(XTTS_EUSAGE, "%s: handle opened by process %ld used in process %ld; open the cache again",
                     xtts_cache_dir(a->c), (long)a->pid, (long)getpid());
    return pool_take(a, r);
}

/* Give r back; the reader's status as the call's, its message as the last error. */
static int call_end(xtts_api_cache *a, xtts_cache_reader *r, xtts_status st, const xtts_error *e) {
    pool_give(a, r);
    return st ? fail(st, e->msg) : 0;
}

/* Copy src[0..n) into out[0..cap) with the size in *len: 0, or 7 when it does not fit. */
static int copy_out(const char *what, const void *src, size_t n, void *out, size_t cap, size_t *len) {
    *len = n;
    if (n > cap) return failf(XTTS_ERANGE, "%s: %zu bytes, room for %zu", what, n, cap);
    if (n) memcpy(out, src, n);
    return 0;
}

int xtts_api_record(xtts_api_cache *a, uint64_t index, void *out, size_t cap, size_t *len) {
    if (!len || (cap && !out)) return fail(XTTS_EUSAGE, "xtts_api_record: a NULL argument");
    xtts_cache_reader *r;
    int rc = call_begin(a, "xtts_api_record", &r);
    if (rc) return rc;
    const void *buf;
    size_t n;
    xtts_error e;
    xtts_status st = xtts_cache_reader_raw(r, index, &buf, &n, &e);
    if (!st) {
        char what[96];
        snprintf(what, sizeof what, "%s: index %llu", xtts_cache_shard_of(a->c, index), (unsigned long long)index);
        rc = copy_out(what, buf, n, out, cap, len);
    }
    return st ? call_end(a, r, st, &e) : (pool_give(a, r), rc);
}

int xtts_api_text(xtts_api_cache *a, uint64_t index, char *orig, size_t orig_cap, size_t *orig_len, char *norm,
                  size_t norm_cap, size_t *norm_len) {
    if (!orig_len || !norm_len || (orig_cap && !orig) || (norm_cap && !norm))
        return fail(XTTS_EUSAGE, "xtts_api_text: a NULL argument");
    xtts_cache_reader *r;
    int rc = call_begin(a, "xtts_api_text", &r);
    if (rc) return rc;
    const char *o, *nm;
    size_t on, nn;
    xtts_error e;
    xtts_status st = xtts_cache_reader_text(r, index, &o, &on, &nm, &nn, &e);
    if (!st) { /* the decoder's own buffer: copied before the reader goes back */
        *orig_len = on;
        *norm_len = nn;
        if (on > orig_cap || nn > norm_cap)
            rc = failf(XTTS_ERANGE, "%s: index %llu: text of %zu and %zu bytes, room for %zu and %zu",
                       xtts_cache_shard_of(a->c, index), (unsigned long long)index, on, nn, orig_cap, norm_cap);
        else {
            if (on) memcpy(orig, o, on);
            if (nn) memcpy(norm, nm, nn);
        }
    }
    return st ? call_end(a, r, st, &e) : (pool_give(a, r), rc);
}

int xtts_api_waveform(xtts_api_cache *a, uint64_t index, int16_t *out, size_t first, size_t n) {
    if (n && !out) return fail(XTTS_EUSAGE, "xtts_api_waveform: a NULL argument");
    xtts_cache_reader *r;
    int rc = call_begin(a, "xtts_api_waveform", &r);
    if (rc) return rc;
    xtts_error e;
    return call_end(a, r, xtts_cache_reader_wave(r, index, out, first, n, &e), &e);
}

int xtts_api_find(xtts_api_cache *a, const char *id, uint64_t *index) {
    if (!id || !index) return fail(XTTS_EUSAGE, "xtts_api_find: a NULL argument");
    xtts_cache_reader *r;
    int rc = call_begin(a, "xtts_api_find", &r);
    if (rc) return rc;
    xtts_error e;
    return call_end(a, r, xtts_cache_reader_find(r, id, index, &e), &e);
}

int xtts_api_meta(xtts_api_cache *a, size_t shard, const char *key, void *out, size_t cap, size_t *len) {
    if (!key || !len || (cap && !out)) return fail(XTTS_EUSAGE, "xtts_api_meta: a NULL argument");
    xtts_cache_reader *r;
    int rc = call_begin(a, "xtts_api_meta", &r);
    if (rc) return rc;
    char *val;
    size_t n;
    xtts_error e;
    xtts_status st = xtts_cache_reader_meta(r, shard, key, &val, &n, &e);
    if (!st) {
        char what[96];
        snprintf(what, sizeof what, "%s: meta \"%.40s\"", xtts_cache_dir(a->c), key);
        rc = copy_out(what, val, n, out, cap, len);
        free(val);
    }
    return st ? call_end(a, r, st, &e) : (pool_give(a, r), rc);
}

int xtts_api_content_key(xtts_api_cache *a, uint64_t index, uint8_t *out) {
    if (!out) return fail(XTTS_EUSAGE, "xtts_api_content_key: a NULL argument");
    xtts_cache_reader *r;
    int rc = call_begin(a, "xtts_api_content_key", &r);
    if (rc) return rc;
    const void *buf;
    size_t n;
    xtts_error e;
    xtts_status st = xtts_cache_reader_value(r, index, XTTS_CACHE_DB_KEYS, &buf, &n, &e);
    const char *shard = xtts_cache_shard_of(a->c, index);
    if (st == XTTS_ENOTFOUND && xtts_cache_shards_with_db(a->c, XTTS_CACHE_DB_KEYS) == 0)
        st = xtts_error_set(&e, XTTS_ENOTFOUND, "%s: no \"keys\" database (a cache built before content keys)", shard);
    else if (st == XTTS_ENOTFOUND || (!st && n < 32))
        st = xtts_error_set(&e, XTTS_ECORRUPT, "%s: index %llu: no content key", shard, (unsigned long long)index);
    else if (!st) memcpy(out, buf, 32);
    return call_end(a, r, st, &e);
}

int xtts_api_lengths(xtts_api_cache *a, uint32_t *out, size_t n) {
    if (!out && n) return fail(XTTS_EUSAGE, "xtts_api_lengths: a NULL argument");
    if (a && n != xtts_cache_count(a->c))
        return failf(XTTS_ERANGE, "%s: room for %zu records' lengths, the cache has %llu", xtts_cache_dir(a->c), n,
                     (unsigned long long)xtts_cache_count(a->c));
    xtts_cache_reader *r;
    int rc = call_begin(a, "xtts_api_lengths", &r);
    if (rc) return rc;
    xtts_lengths *l = malloc((n ? n : 1) * sizeof *l);
    xtts_error e;
    xtts_status st = l ? xtts_cache_lengths(r, l, &e) : xtts_error_set(&e, XTTS_ENOMEM, "lengths: out of memory");
    for (size_t i = 0; !st && i < n; i++) {
        uint32_t row[7] = {l[i].n_frames, l[i].n_tokens, l[i].n_samples, l[i].speaker_id, l[i].lang_id, l[i].split,
                           l[i].has_wave};
        memcpy(out + 7 * i, row, sizeof row);
    }
    free(l);
    return call_end(a, r, st, &e);
}

size_t xtts_api_shards_with(const xtts_api_cache *a, const char *db) {
    return a && db ? xtts_cache_shards_with_db(a->c, db) : 0;
}

/* ---- audio codes directories ---------------------------------------------------------- */

struct xtts_api_codes {
    xtts_codes_reader *r;
    pid_t pid;
};

xtts_api_codes *xtts_api_codes_open(const char *path) {
    if (!path) {
        fail(XTTS_EUSAGE, "xtts_api_codes_open: no directory given");
        return NULL;
    }
    xtts_cache_guard_faults();
    xtts_api_codes *h = calloc(1, sizeof *h);
    if (!h) {
        failf(XTTS_ENOMEM, "%s: out of memory", path);
        return NULL;
    }
    xtts_error e;
    if (xtts_codes_reader_open(path, &h->r, &e)) {
        fail(e.code, e.msg);
        free(h);
        return NULL;
    }
    h->pid = getpid();
    return h;
}

void xtts_api_codes_close(xtts_api_codes *h) {
    if (!h) return;
    xtts_codes_reader_close(h->r);
    free(h);
}

int xtts_api_codes_header(xtts_api_codes *h, char *dvae_sha256, char *norms_sha256, uint32_t *num_tokens,
                          float *mel_norms, size_t cap, size_t *n_mels) {
    if (!h || !dvae_sha256 || !norms_sha256 || !num_tokens || !n_mels || (cap && !mel_norms))
        return fail(XTTS_EUSAGE, "xtts_api_codes_header: a NULL argument");
    const xtts_codes_header *hd = xtts_codes_reader_header(h->r);
    memcpy(dvae_sha256, hd->dvae_sha256, sizeof hd->dvae_sha256);
    memcpy(norms_sha256, hd->norms_sha256, sizeof hd->norms_sha256);
    *num_tokens = hd->num_tokens;
    return copy_out("mel norms", hd->mel_norms, hd->n_mels * sizeof(float), mel_norms, cap * sizeof(float), n_mels)
               ? (*n_mels = hd->n_mels, XTTS_ERANGE)
               : (*n_mels = hd->n_mels, 0);
}

int xtts_api_codes_get(xtts_api_codes *h, const uint8_t *key, uint16_t *out, size_t cap, size_t *n) {
    if (!h || !key || !n || (cap && !out)) return fail(XTTS_EUSAGE, "xtts_api_codes_get: a NULL argument");
    if (h->pid != getpid())
        return failf(XTTS_EUSAGE, "codes handle opened by process %ld used in process %ld; open it again", (long)h->pid,
                     (long)getpid());
    xtts_error e;
    xtts_status st = xtts_codes_reader_get(h->r, key, out, cap, n, &e);
    return st ? fail(st, e.msg) : 0;
}

/* ---- dataset items ---------------------------------------------------------------------- */

/* A spare item decoder (made when there is none). */
static int items_take(xtts_api_cache *a, xtts_item_state **out) {
    if ((*out = spare_take(a, &a->items))) return 0;
    xtts_error e;
    if (xtts_item_state_new(out, &e)) return fail(e.code, e.msg);
    return 0;
}

static void items_give(xtts_api_cache *a, xtts_item_state *s) {
    if (!spare_give(a, &a->items, s)) xtts_item_state_delete(s);
}

/* Row k's fields from the header h (the layout of reader_api.h). */
static void item_fields(uint64_t *f, const xtts_record_header *h, uint32_t frame_crc) {
    memset(f, 0, XTTS_API_ITEM_FIELDS * sizeof *f);
    uint32_t pad_bits;
    memcpy(&pad_bits, &h->pad_value, 4);
    uint64_t v[] = {h->version,   h->dtype,      h->flags,         h->n_mels,       h->split,
                    h->id_len,    h->n_tokens,   h->tokens_padded, h->n_frames,     h->frames_padded,
                    h->speaker_id, h->lang_id,   h->n_samples,     pad_bits,        h->pad_token,
                    h->trim_start, h->audio,     h->n_sections,    h->payload_bytes, h->frame_bytes,
                    frame_crc};
    memcpy(f, v, sizeof v);
    for (size_t i = 0; i < h->n_sections && i < XTTS_API_ITEM_MAX_SECTIONS; i++) {
        const xtts_record_section *s = &h->sections[i];
        uint64_t *o = f + XTTS_API_F_SECTIONS + 7 * i;
        o[0] = s->kind, o[1] = s->codec, o[2] = s->flags, o[3] = s->offset, o[4] = s->stored_bytes;
        o[5] = s->raw_bytes, o[6] = s->crc32;
    }
}

int xtts_api_read_items(xtts_api_cache *a, xtts_api_codes *codes, const uint64_t *indices, size_t n, int mel_dtype,
                        void *const *bufs, const size_t *caps, uint64_t *fields, char *ids, size_t id_cap) {
    if (n && (!indices || !bufs || !caps || !fields)) return fail(XTTS_EUSAGE, "xtts_api_read_items: a NULL argument");
    if (mel_dtype != XTTS_API_MEL_F32 && mel_dtype != XTTS_API_MEL_F16)
        return failf(XTTS_EUSAGE, "xtts_api_read_items: mel dtype %d (0 float32, 1 float16)", mel_dtype);
    if (ids && id_cap < XTTS_RECORD_MAX_ID + 1)
        return failf(XTTS_EUSAGE, "xtts_api_read_items: room for ids of %zu bytes, %d needed", id_cap,
                     XTTS_RECORD_MAX_ID + 1);
    if (codes && codes->pid != getpid())
        return failf(XTTS_EUSAGE, "codes handle opened by process %ld used in process %ld; open it again",
                     (long)codes->pid, (long)getpid());
    xtts_cache_reader *r;
    int rc = call_begin(a, "xtts_api_read_items", &r);
    if (rc) return rc;
    xtts_item_state *s;
    if ((rc = items_take(a, &s))) {
        pool_give(a, r);
        return rc;
    }
    xtts_error e;
    for (size_t k = 0; k < n && !rc; k++) {
        void *const *b = bufs + k * XTTS_API_ITEM_PARTS;
        const size_t *cp = caps + k * XTTS_API_ITEM_PARTS;
        uint8_t key_own[32];
        uint16_t *codes_out = b[XTTS_API_PART_CODES];
        if (codes_out && !codes) {
            rc = fail(XTTS_EUSAGE, "xtts_api_read_items: codes asked without a codes handle");
            break;
        }
        if (b[XTTS_API_PART_KEY] && cp[XTTS_API_PART_KEY] < 32) {
            rc = failf(XTTS_ERANGE, "xtts_api_read_items: room for a content key of %zu bytes, 32 needed",
                       cp[XTTS_API_PART_KEY]);
            break;
        }
        xtts_item_want w = {.tokens = b[XTTS_API_PART_TOKENS], .tokens_cap = cp[XTTS_API_PART_TOKENS],
                            .mel = b[XTTS_API_PART_MEL], .mel_cap = cp[XTTS_API_PART_MEL],
                            .mel_dtype = mel_dtype == XTTS_API_MEL_F16 ? XTTS_DTYPE_F16 : XTTS_DTYPE_F32,
                            .wave = b[XTTS_API_PART_WAVE], .wave_cap = cp[XTTS_API_PART_WAVE],
                            .key = b[XTTS_API_PART_KEY] ? b[XTTS_API_PART_KEY] : codes_out ? key_own : NULL};
        xtts_record_header h;
        h.id_len = 0; /* stays 0 unless the header parsed */
        uint32_t frame_crc = 0;
        uint64_t *f = fields + k * XTTS_API_ITEM_FIELDS;
        memset(f, 0, XTTS_API_ITEM_FIELDS * sizeof *f);
        xtts_status st = xtts_item_read(r, s, indices[k], &w, &h, &frame_crc, &e);
        if (!st || st == XTTS_ERANGE) {
            /* the header parsed: its fields go out even when a buffer was too small */
            if (!st || h.id_len) item_fields(f, &h, frame_crc);
            if (ids && (!st || h.id_len)) memcpy(ids + k * id_cap, h.id, (size_t)h.id_len + 1);
        }
        if (st) {
            rc = fail(st, e.msg);
            break;
        }
        if (codes_out) {
            size_t got = 0;
            st = xtts_codes_reader_get(codes->r, w.key, codes_out, cp[XTTS_API_PART_CODES], &got, &e);
            f[XTTS_API_F_N_CODES] = got;
            if (st == XTTS_ENOTFOUND)
                rc = failf(st, "%s: index %llu, id '%s': no audio codes", xtts_cache_dir(a->c),
                           (unsigned long long)indices[k], h.id);
            else if (st)
                rc = fail(st, e.msg);
        }
    }
    items_give(a, s);
    pool_give(a, r);
    return rc;
}

/* ---- the manifest ------------------------------------------------------------------------ */

int xtts_api_manifest_check(const char *path) {
    if (!path) return fail(XTTS_EUSAGE, "xtts_api_manifest_check: no path given");
    char dir[4096];
    const char *slash = strrchr(path, '/');
    size_t n = slash ? (size_t)(slash - path) : 1;
    if (n >= sizeof dir) return failf(XTTS_EINPUT, "%.200s...: path too long", path);
    memcpy(dir, slash ? path : ".", n);
    dir[n ? n : 1] = 0;
    if (slash == path) strcpy(dir, "/");
    char msg[XTTS_ERRMSG_MAX];
    if (xtts_cache_build_running(dir, msg, sizeof msg)) return fail(XTTS_EBUSY, msg);
    json_t *j = NULL;
    xtts_error e;
    xtts_status st = xtts_manifest_load(path, &j, &e);
    json_decref(j);
    if (st == XTTS_ENOTFOUND && access(path, F_OK) != 0) {
        int u = xtts_cache_unfinished(dir, msg, sizeof msg);
        if (u) return fail(u == 2 ? XTTS_EBUSY : XTTS_ENOTFOUND, msg);
    }
    return st ? fail(st, e.msg) : 0;
}

int xtts_api_config_hash(const char *config_json, size_t len, char *out) {
    if (!config_json || !out) return fail(XTTS_EUSAGE, "xtts_api_config_hash: a NULL argument");
    json_error_t je;
    json_t *j = json_loadb(config_json, len, JSON_REJECT_DUPLICATES, &je);
    if (!j) return failf(XTTS_EINPUT, "config: invalid JSON: %s (line %d)", je.text, je.line);
    xtts_cache_config cfg;
    xtts_error e;
    xtts_status st = xtts_cache_config_from_json(j, &cfg, "config", &e);
    json_decref(j);
    if (st) return fail(st, e.msg);
    xtts_cache_config_hash(&cfg, out);
    return 0;
}
