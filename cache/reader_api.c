/* reader_api.c — the stable C interface of reader_api.h over cache/reader.h.
 *
 * A handle owns one xtts_cache and a pool of xtts_cache_readers (each holds its read
 * transactions and a record decoder; the shards are opened MDB_NOTLS, so a reader may
 * move between threads as long as one thread uses it at a time). A batch call takes one
 * reader per thread it runs from the pool (making one when the pool is empty) and puts
 * them back, so concurrent calls on one handle do not share a reader. */
#include "cache/reader_api.h"
#include "cache/reader.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define API_MAX_THREADS 256

struct xtts_api_cache {
    xtts_cache *c;
    pid_t pid;
    pthread_mutex_t mu;
    xtts_cache_reader **pool;
    size_t n_pool, cap_pool;
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
    a->pid = getpid();
    return a;
}

void xtts_api_close(xtts_api_cache *a) {
    if (!a) return;
    for (size_t i = 0; i < a->n_pool; i++) xtts_cache_reader_delete(a->pool[i]);
    free(a->pool);
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

/* Take k readers from the pool (making the missing ones). */
static int pool_take(xtts_api_cache *a, xtts_cache_reader **out, size_t k) {
    pthread_mutex_lock(&a->mu);
    size_t got = 0;
    while (got < k && a->n_pool) out[got++] = a->pool[--a->n_pool];
    pthread_mutex_unlock(&a->mu);
    for (; got < k; got++) {
        xtts_error e;
        if (xtts_cache_reader_new(a->c, &out[got], &e)) {
            for (size_t i = 0; i < got; i++) xtts_cache_reader_delete(out[i]);
            return fail(e.code, e.msg);
        }
    }
    return 0;
}

static void pool_give(xtts_api_cache *a, xtts_cache_reader **rs, size_t k) {
    pthread_mutex_lock(&a->mu);
    if (a->n_pool + k > a->cap_pool) {
        size_t cap = a->cap_pool ? a->cap_pool : 4;
        while (cap < a->n_pool + k) cap *= 2;
        xtts_cache_reader **p = realloc(a->pool, cap * sizeof *p);
        if (p) {
            a->pool = p;
            a->cap_pool = cap;
        }
    }
    size_t i = 0;
    for (; i < k && a->n_pool < a->cap_pool; i++) a->pool[a->n_pool++] = rs[i];
    pthread_mutex_unlock(&a->mu);
    for (; i < k; i++) xtts_cache_reader_delete(rs[i]); /* no room: out of memory */
}

typedef struct {
    xtts_cache_reader *r;
    const uint64_t *indices;
    size_t n;
    xtts_batch b; /* a view of the caller's rows */
    xtts_error err;
    xtts_status st;
} job_t;

static void *run_job(void *arg) {
    job_t *j = arg;
    j->st = xtts_cache_reader_batch(j->r, j->indices, j->n, &j->b, &j->err);
    return NULL;
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
    if (tokens_cap == 0 || frames_cap == 0 || n_mels * frames_cap > SIZE_MAX / esize / n)
        return failf(XTTS_ERANGE, "%s: xtts_api_read_batch: rows of %zu tokens and %zu frames", xtts_cache_dir(a->c),
                     tokens_cap, frames_cap);
    size_t nt = threads < 1 ? 1 : (size_t)threads;
    if (nt > API_MAX_THREADS) nt = API_MAX_THREADS;
    if (nt > n) nt = n;

    job_t one, *jobs = &one;
    xtts_cache_reader *one_r, **rs = &one_r;
    pthread_t *tids = NULL;
    if (nt > 1) {
        jobs = calloc(nt, sizeof *jobs);
        rs = calloc(nt, sizeof *rs);
        tids = calloc(nt, sizeof *tids);
        if (!jobs || !rs || !tids) {
            free(jobs);
            free(rs);
            free(tids);
            return failf(XTTS_ENOMEM, "%s: out of memory for %zu threads", xtts_cache_dir(a->c), nt);
        }
    }
    int rc = pool_take(a, rs, nt);
    if (rc) {
        if (nt > 1) {
            free(jobs);
            free(rs);
            free(tids);
        }
        return rc;
    }
    size_t mel_row = n_mels * frames_cap * esize;
    for (size_t t = 0, start = 0; t < nt; t++) {
        size_t cnt = n / nt + (t < n % nt);
        job_t *j = &jobs[t];
        memset(j, 0, sizeof *j);
        j->r = rs[t];
        j->indices = indices + start;
        j->n = cnt;
        j->b.batch_size = cnt;
        j->b.max_tokens = tokens_cap;
        j->b.n_mels = n_mels;
        j->b.max_frames = frames_cap;
        j->b.mel_dtype = dt;
        j->b.tokens = tokens + start * tokens_cap;
        j->b.mel = (uint8_t *)mel + start * mel_row;
        j->b.n_tokens = n_tokens + start;
        j->b.n_frames = n_frames + start;
        j->b.speaker_id = speaker_id + start;
        j->b.lang_id = lang_id + start;
        j->b.split = split + start;
        j->b.index = NULL; /* set below: the batch writes it */
        start += cnt;
    }
    /* xtts_cache_reader_batch writes the indices of its rows into b->index. */
    uint64_t idx_one[1], *idx_rows = n == 1 ? idx_one : malloc(n * sizeof *idx_rows);
    if (!idx_rows) {
        pool_give(a, rs, nt);
        if (nt > 1) {
            free(jobs);
            free(rs);
            free(tids);
        }
        return failf(XTTS_ENOMEM, "%s: out of memory for a batch of %zu", xtts_cache_dir(a->c), n);
    }
    for (size_t t = 0, start = 0; t < nt; t++) {
        jobs[t].b.index = idx_rows + start;
        start += jobs[t].n;
    }
    size_t started = 1;
    for (size_t t = 1; t < nt; t++) {
        if (pthread_create(&tids[t], NULL, run_job, &jobs[t])) break; /* the rest run here */
        started++;
    }
    run_job(&jobs[0]);
    for (size_t t = started; t < nt; t++) run_job(&jobs[t]);
    for (size_t t = 1; t < started; t++) pthread_join(tids[t], NULL);
    rc = 0;
    for (size_t t = 0; t < nt && !rc; t++)
        if (jobs[t].st) rc = fail(jobs[t].st, jobs[t].err.msg);
    pool_give(a, rs, nt);
    if (idx_rows != idx_one) free(idx_rows);
    if (nt > 1) {
        free(jobs);
        free(rs);
        free(tids);
    }
    return rc;
}
