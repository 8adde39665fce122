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
#include "cache/store/read/reader.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define API_MAX_THREADS 256

typedef struct job job_t;
typedef struct helper helper_t;

struct xtts_api_cache {
    xtts_cache *c;
    pid_t pid;
    pthread_mutex_t mu; /* the spare readers */
    xtts_cache_reader **pool;
    size_t n_pool, cap_pool;
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

xtts_api_cache *xtts_api_open(const char *dir) {
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
    if (xtts_cache_open(dir, &a->c, &e)) {
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
    for (size_t i = 0; i < a->n_pool; i++) xtts_cache_reader_delete(a->pool[i]);
    free(a->pool);
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

/* A spare reader (made when there is none). */
static int pool_take(xtts_api_cache *a, xtts_cache_reader **out) {
    pthread_mutex_lock(&a->mu);
    *out = a->n_pool ? a->pool[--a->n_pool] : NULL;
    pthread_mutex_unlock(&a->mu);
    if (*out) return 0;
    xtts_error e;
    if (xtts_cache_reader_new(a->c, out, &e)) return fail(e.code, e.msg);
    return 0;
}

static void pool_give(xtts_api_cache *a, xtts_cache_reader *r) {
    pthread_mutex_lock(&a->mu);
    if (a->n_pool == a->cap_pool) {
        size_t cap = a->cap_pool ? 2 * a->cap_pool : 4;
        xtts_cache_reader **p = realloc(a->pool, cap * sizeof *p);
        if (p) {
            a->pool = p;
            a->cap_pool = cap;
        }
    }
    if (a->n_pool < a->cap_pool) {
        a->pool[a->n_pool++] = r;
        r = NULL;
    }
    pthread_mutex_unlock(&a->mu);
    xtts_cache_reader_delete(r); /* no room: out of memory */
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
