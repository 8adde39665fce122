/* loader.c — dataset scan, batch plans and the three-slot prefetch ring (see loader.h).
 *
 * Work is handed out per record: a thread takes the next row of the batch being filled,
 * so a large batch is decoded by all threads at once and a small one still overlaps the
 * step. A slot is refilled only after the step gave it back.
 */
#include "train/loader.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- dataset scan --------------------------------------------------------------------- */

static xtts_status read_stats(const xtts_cache *cache, xtts_dataset *ds) {
    /* the manifest's mean and std hold n_mels values each when present (formats/manifest.c) */
    const xtts_manifest_info *man = xtts_cache_manifest(cache);
    for (int c = 0; c < ds->n_mels; c++) ds->mel_mean[c] = 0.0f, ds->mel_std[c] = 1.0f;
    if (!man->mel_mean || !man->mel_std) return XTTS_OK;
    for (int c = 0; c < ds->n_mels; c++) {
        double m = man->mel_mean[c], s = man->mel_std[c];
        if (!(s > 1e-6)) return XTTS_OK; /* unusable stats: train on raw log-mels */
        ds->mel_mean[c] = (float)m;
        ds->mel_std[c] = (float)s;
    }
    ds->normalized = 1;
    return XTTS_OK;
}

xtts_status xtts_dataset_scan(xtts_cache *cache, int skip_corrupt, xtts_dataset *ds, xtts_error *err) {
    memset(ds, 0, sizeof *ds);
    const xtts_cache_config *cfg = xtts_cache_get_config(cache);
    uint64_t n = xtts_cache_count(cache);
    ds->n_mels = cfg->mel.n_mels;
    ds->max_tokens = cfg->max_tokens;
    ds->max_frames = xtts_cache_config_max_padded_frames(cfg);
    ds->vocab_size = cfg->vocab_size;
    if (n > UINT32_MAX)
        return xtts_error_set(err, XTTS_EINPUT, "%llu records: the loader reads caches of at most %lu records",
                              (unsigned long long)n, (unsigned long)UINT32_MAX);
    size_t nl = xtts_cache_manifest(cache)->n_languages;
    ds->n_langs = nl > XTTS_N_LANGS && nl <= XTTS_MAX_LANGS ? (int)nl : XTTS_N_LANGS;
    ds->train = malloc((n ? n : 1) * sizeof(uint32_t));
    ds->val = malloc((n ? n : 1) * sizeof(uint32_t));
    ds->train_bucket = malloc((n ? n : 1) * sizeof(uint32_t));
    ds->val_bucket = malloc((n ? n : 1) * sizeof(uint32_t));
    ds->mel_mean = malloc((ds->n_mels > 0 ? ds->n_mels : 1) * sizeof(float));
    ds->mel_std = malloc((ds->n_mels > 0 ? ds->n_mels : 1) * sizeof(float));
    if (!ds->train || !ds->val || !ds->train_bucket || !ds->val_bucket || !ds->mel_mean || !ds->mel_std) {
        xtts_dataset_free(ds);
        return xtts_error_set(err, XTTS_ENOMEM, "out of memory scanning %llu records", (unsigned long long)n);
    }
    read_stats(cache, ds);
    xtts_cache_reader *r = NULL;
    xtts_status st = xtts_cache_reader_new(cache, &r, err);
    if (st) {
        xtts_dataset_free(ds);
        return st;
    }
    for (uint64_t i = 0; i < n; i++) {
        xtts_record_header h;
        st = xtts_cache_reader_header(r, i, &h, err);
        if (st == XTTS_ECORRUPT && skip_corrupt) {
            if (ds->n_skipped++ == 0) snprintf(ds->skipped_msg, sizeof ds->skipped_msg, "%s", err ? err->msg : "");
            st = XTTS_OK;
            continue;
        }
        if (st) break;
        int seq = 1 + (int)h.n_tokens + (int)h.n_frames;
        if (seq > ds->max_seq) ds->max_seq = seq;
        if (h.split == XTTS_SPLIT_VAL) {
            ds->val[ds->n_val] = (uint32_t)i;
            ds->val_bucket[ds->n_val++] = h.frames_padded;
        } else {
            ds->train[ds->n_train] = (uint32_t)i;
            ds->train_bucket[ds->n_train++] = h.frames_padded;
        }
    }
    xtts_cache_reader_delete(r);
    if (st) xtts_dataset_free(ds);
    return st;
}

void xtts_dataset_free(xtts_dataset *ds) {
    if (!ds) return;
    free(ds->train);
    free(ds->val);
    free(ds->train_bucket);
    free(ds->val_bucket);
    free(ds->mel_mean);
    free(ds->mel_std);
    memset(ds, 0, sizeof *ds);
}

/* ---- batch plans --------------------------------------------------------------------- */

/* Uniform in [0, n) without modulo bias. */
static uint64_t rand_below(uint64_t *s, uint64_t n) {
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do x = xtts_splitmix64(s);
    while (x >= limit);
    return x % n;
}

/* A keyed bijection of [0, n): a four-round Feistel network on the smallest even number
 * of bits that holds n, walked again while it lands outside [0, n) (fewer than four
 * walks on average; each stays a bijection of the domain, so the walk ends). */
static uint64_t shuffle_position(uint64_t key, uint64_t n, uint64_t j) {
    if (n < 2) return j;
    int bits = 0;
    while (bits < 64 && (n - 1) >> bits) bits++;
    int half = (bits + 1) / 2;
    uint64_t mask = (UINT64_C(1) << half) - 1;
    uint64_t x = j;
    do {
        uint64_t left = x >> half, right = x & mask;
        for (uint64_t round = 0; round < 4; round++) {
            uint64_t st = key ^ (right + 1) * 0x9e3779b97f4a7c15ULL ^ round * 0xbf58476d1ce4e5b9ULL;
            uint64_t f = xtts_splitmix64(&st) & mask;
            uint64_t t = right;
            right = left ^ f;
            left = t;
        }
        x = left << half | right;
    } while (x >= n);
    return x;
}

/* The batches' order of one epoch: batch k of the epoch is canonical batch order[k]
 * (canonical batches: each bucket's positions cut into runs of the batch size, buckets
 * ascending). */
typedef struct {
    int valid;
    uint64_t epoch;
    uint32_t *order;
} epoch_plan;

struct xtts_loader {
    xtts_cache *cache;
    const xtts_dataset *ds;
    xtts_loader_options opt;
    size_t n_records;
    /* distinct buckets, ascending: the split's records grouped by bucket, index order
     * within one (grouped[bucket_first[b] .. bucket_first[b + 1])), and each bucket's
     * first canonical batch (batch_first[n_buckets] is the batches of an epoch) */
    size_t n_buckets;
    uint32_t *grouped;
    size_t *bucket_first;
    uint64_t *batch_first;
    uint64_t batches_per_epoch;
    int text_stride, mel_stride;

    pthread_mutex_t mu;
    pthread_cond_t cv;
    epoch_plan plans[2];
    xtts_loader_batch slots[XTTS_LOADER_SLOTS];
    int state[XTTS_LOADER_SLOTS]; /* 0 free, 1 filling, 2 ready, 3 taken */
    size_t rows_total[XTTS_LOADER_SLOTS], rows_done[XTTS_LOADER_SLOTS];
    xtts_error slot_err[XTTS_LOADER_SLOTS];
    uint64_t fill_seq;  /* batch being handed out row by row */
    size_t fill_row;
    uint64_t take_seq;  /* next batch the step takes */
    uint64_t end_seq;   /* validation: batches in the one pass; UINT64_MAX for training */
    int stop;
    int n_threads;
    pthread_t *threads;
    void *workers_memory; /* worker[opt.n_threads] */
};

static void plan_free(epoch_plan *p) {
    free(p->order);
    memset(p, 0, sizeof *p);
}

static int plan_build(xtts_loader *l, uint64_t epoch, epoch_plan *p) {
    plan_free(p);
    uint64_t nb = l->batches_per_epoch;
    p->order = malloc(nb * sizeof(uint32_t));
    if (!p->order) return -1;
    for (uint64_t i = 0; i < nb; i++) p->order[i] = (uint32_t)i;
    if (l->opt.split != XTTS_SPLIT_VAL) {
        uint64_t s = l->opt.seed * 0x100000001b3ULL ^ (epoch + 1) * 0xd1b54a32d192ed03ULL;
        for (uint64_t i = nb; i > 1; i--) {
            uint64_t j = rand_below(&s, i);
            uint32_t t = p->order[i - 1];
            p->order[i - 1] = p->order[j];
            p->order[j] = t;
        }
    }
    p->epoch = epoch;
    p->valid = 1;
    return 0;
}

/* The plan of an epoch (under mu). Keeps the two most recent epochs. */
static epoch_plan *plan_get(xtts_loader *l, uint64_t epoch) {
    for (int i = 0; i < 2; i++)
        if (l->plans[i].valid && l->plans[i].epoch == epoch) return &l->plans[i];
    epoch_plan *victim = !l->plans[0].valid ? &l->plans[0]
                         : !l->plans[1].valid ? &l->plans[1]
                         : l->plans[0].epoch < l->plans[1].epoch ? &l->plans[0] : &l->plans[1];
    return plan_build(l, epoch, victim) == 0 ? victim : NULL;
}

/* The records of batch k of an epoch, in idx[0 .. returned count). */
static size_t plan_batch(const xtts_loader *l, const epoch_plan *p, uint64_t k, uint64_t *idx) {
    uint64_t c = p->order[k];
    size_t b = 0, hi = l->n_buckets;
    while (hi - b > 1) { /* the bucket whose batches hold c */
        size_t mid = b + (hi - b) / 2;
        if (l->batch_first[mid] <= c) b = mid;
        else hi = mid;
    }
    uint64_t first = l->bucket_first[b], cnt = l->bucket_first[b + 1] - first;
    uint64_t off = (c - l->batch_first[b]) * (uint64_t)l->opt.batch_size;
    size_t len = cnt - off < (uint64_t)l->opt.batch_size ? (size_t)(cnt - off) : (size_t)l->opt.batch_size;
    int shuffle = l->opt.split != XTTS_SPLIT_VAL;
    uint64_t key = l->opt.seed * 0x100000001b3ULL ^ (p->epoch + 1) * 0x9e3779b97f4a7c15ULL ^ (b + 1);
    for (size_t r = 0; r < len; r++) {
        uint64_t j = off + r;
        idx[r] = l->grouped[first + (shuffle ? shuffle_position(key, cnt, j) : j)];
    }
    return len;
}

static void seq_position(const xtts_loader *l, uint64_t seq, uint64_t *epoch, uint64_t *batch) {
    uint64_t abs = l->opt.start_batch + seq;
    *epoch = l->opt.start_epoch + abs / l->batches_per_epoch;
    *batch = abs % l->batches_per_epoch;
}

/* ---- decoding threads ---------------------------------------------------------------- */

typedef struct {
    xtts_loader *l;
    xtts_cache_reader *reader;
    int32_t *tokens;
    size_t tokens_cap;
    float *mel; /* (n_mels, max_frames) channel-major, as stored */
} worker;

/* Decode record idx into row r of slot s. Returns a status with err filled. */
static xtts_status decode_row(worker *w, xtts_loader_batch *s, size_t r, uint64_t idx, xtts_error *err) {
    xtts_loader *l = w->l;
    const xtts_dataset *ds = l->ds;
    xtts_record_header h;
    xtts_status st = xtts_cache_reader_get(w->reader, idx, &h, w->tokens, w->tokens_cap, w->mel, XTTS_DTYPE_F32,
                                           (size_t)ds->n_mels, (size_t)ds->max_frames, err);
    if (st) return st;
    const char *shard = xtts_cache_shard_of(l->cache, idx);
    if (h.n_mels != ds->n_mels || h.n_frames == 0 || (int)h.n_frames > l->mel_stride ||
        (int)h.n_tokens + 1 > l->text_stride || h.lang_id >= (uint32_t)ds->n_langs)
        return xtts_error_set(err, XTTS_ECORRUPT,
                              "%s: index %llu (%s): shape outside the cache configuration (%u mels, %u frames, "
                              "%u tokens, language %u)",
                              shard ? shard : "?", (unsigned long long)idx, h.id, h.n_mels, h.n_frames, h.n_tokens,
                              h.lang_id);
    int32_t *text = s->text + r * l->text_stride;
    text[0] = ds->vocab_size + (int32_t)h.lang_id;
    for (uint32_t i = 0; i < h.n_tokens; i++) {
        if (w->tokens[i] < 0 || w->tokens[i] >= ds->vocab_size)
            return xtts_error_set(err, XTTS_ECORRUPT, "%s: index %llu (%s): token %d outside the vocabulary (%d)",
                                  shard ? shard : "?", (unsigned long long)idx, h.id, (int)w->tokens[i],
                                  ds->vocab_size);
        text[1 + i] = w->tokens[i];
    }
    int M = ds->n_mels, F = (int)h.n_frames;
    float *out = s->mel + r * (size_t)l->mel_stride * M;
    for (int j = 0; j < F; j++)
        for (int c = 0; c < M; c++)
            out[(size_t)j * M + c] = (w->mel[(size_t)c * ds->max_frames + j] - ds->mel_mean[c]) / ds->mel_std[c];
    s->n_text[r] = 1 + (int)h.n_tokens;
    s->n_frames[r] = F;
    s->index[r] = idx;
    return XTTS_OK;
}

static void finish_slot(xtts_loader *l, int k) {
    xtts_loader_batch *s = &l->slots[k];
    int T = 1;
    for (size_t r = 0; r < l->rows_total[k]; r++)
        if (s->n_frames[r] > 0 && s->n_text[r] + s->n_frames[r] > T) T = s->n_text[r] + s->n_frames[r];
    s->view.B = (int)l->rows_total[k];
    s->view.T = T;
    l->state[k] = 2;
}

static void *worker_main(void *arg) {
    worker *w = arg;
    xtts_loader *l = w->l;
    pthread_mutex_lock(&l->mu);
    for (;;) {
        /* claim the next row */
        int k = -1;
        size_t row = 0;
        uint64_t idx = 0;
        while (!l->stop) {
            if (l->fill_seq >= l->end_seq) {
                pthread_cond_wait(&l->cv, &l->mu);
                continue;
            }
            int slot = (int)(l->fill_seq % XTTS_LOADER_SLOTS);
            if (l->state[slot] == 0) { /* start filling this batch */
                uint64_t epoch, batch;
                seq_position(l, l->fill_seq, &epoch, &batch);
                epoch_plan *p = plan_get(l, epoch);
                xtts_loader_batch *s = &l->slots[slot];
                s->epoch = epoch;
                s->batch = batch;
                s->seq = l->fill_seq;
                s->decoded_bytes = s->stored_bytes = 0;
                s->n_skipped = 0;
                s->skipped_msg[0] = '\0';
                xtts_error_clear(&l->slot_err[slot]);
                l->rows_done[slot] = 0;
                l->state[slot] = 1;
                l->fill_row = 0;
                if (!p) {
                    xtts_error_set(&l->slot_err[slot], XTTS_ENOMEM, "loader: out of memory planning epoch %llu",
                                   (unsigned long long)epoch);
                    l->rows_total[slot] = 0;
                    finish_slot(l, slot);
                    l->fill_seq++;
                    pthread_cond_broadcast(&l->cv);
                    continue;
                }
                l->rows_total[slot] = plan_batch(l, p, batch, s->index);
                for (size_t r = 0; r < l->rows_total[slot]; r++) s->n_text[r] = s->n_frames[r] = 0;
            }
            if (l->state[slot] == 1 && l->slots[slot].seq == l->fill_seq && l->fill_row < l->rows_total[slot]) {
                k = slot;
                row = l->fill_row++;
                idx = l->slots[slot].index[row];
                if (l->fill_row == l->rows_total[slot]) l->fill_seq++;
                break;
            }
            pthread_cond_wait(&l->cv, &l->mu);
        }
        if (l->stop) break;
        pthread_mutex_unlock(&l->mu);

        xtts_loader_batch *s = &l->slots[k];
        xtts_error e;
        xtts_error_clear(&e);
        xtts_status st = decode_row(w, s, row, idx, &e);
        size_t bytes = st ? 0 : (size_t)s->n_frames[row] * l->ds->n_mels * 4 + (size_t)s->n_text[row] * 4;
        const void *raw;
        size_t raw_len = 0;
        if (!st && xtts_cache_reader_raw(w->reader, idx, &raw, &raw_len, NULL) != XTTS_OK) raw_len = 0;
        if (st) s->n_frames[row] = 0, s->n_text[row] = 0;

        pthread_mutex_lock(&l->mu);
        s->decoded_bytes += bytes;
        s->stored_bytes += raw_len;
        if (st) {
            if (l->opt.skip_corrupt && st == XTTS_ECORRUPT) {
                if (s->n_skipped++ == 0) snprintf(s->skipped_msg, sizeof s->skipped_msg, "%s", e.msg);
            } else if (l->slot_err[k].code == XTTS_OK) {
                l->slot_err[k] = e;
            }
        }
        if (++l->rows_done[k] == l->rows_total[k]) {
            finish_slot(l, k);
            pthread_cond_broadcast(&l->cv);
        }
    }
    pthread_mutex_unlock(&l->mu);
    return NULL;
}

/* ---- the ring ---------------------------------------------------------------------- */

static xtts_status out_of_memory(const xtts_loader *l, xtts_error *err) {
    return xtts_error_set(err, XTTS_ENOMEM, "loader: out of memory for %d batch slots of %d rows", XTTS_LOADER_SLOTS,
                          l->opt.batch_size);
}

/* Where bucket v sits in value[0..n) (ascending): its index, or where it would go. */
static size_t bucket_position(const uint32_t *value, size_t n, uint32_t v) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (value[mid] < v) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* The distinct buckets of buckets[0..n), ascending, into *value with their record counts in
 * *count (l->n_buckets of them; the caller frees both, also after a failure). -1 when out
 * of memory. */
static int count_buckets(xtts_loader *l, const uint32_t *buckets, size_t n, uint32_t **value, size_t **count) {
    size_t cap = 0;
    for (size_t i = 0; i < n; i++) {
        size_t lo = bucket_position(*value, l->n_buckets, buckets[i]);
        if (lo == l->n_buckets || (*value)[lo] != buckets[i]) {
            if (l->n_buckets == cap) {
                cap = cap ? 2 * cap : 16;
                uint32_t *v = realloc(*value, cap * sizeof *v);
                if (v) *value = v;
                size_t *c = v ? realloc(*count, cap * sizeof *c) : NULL;
                if (c) *count = c;
                if (!v || !c) return -1;
            }
            memmove(*value + lo + 1, *value + lo, (l->n_buckets - lo) * sizeof **value);
            memmove(*count + lo + 1, *count + lo, (l->n_buckets - lo) * sizeof **count);
            (*value)[lo] = buckets[i];
            (*count)[lo] = 0;
            l->n_buckets++;
        }
        (*count)[lo]++;
    }
    return 0;
}

/* The split's records grouped by bucket, index order within one, with each bucket's first
 * record and first canonical batch (the layout struct xtts_loader describes). */
static xtts_status group_records(xtts_loader *l, const uint32_t *records, const uint32_t *buckets,
                                 xtts_error *err) {
    size_t n = l->n_records;
    uint32_t *value = NULL;
    size_t *count = NULL;
    xtts_status st = XTTS_OK;
    if (count_buckets(l, buckets, n, &value, &count)) {
        st = out_of_memory(l, err);
        goto done;
    }
    l->grouped = malloc(n * sizeof *l->grouped);
    l->bucket_first = malloc((l->n_buckets + 1) * sizeof *l->bucket_first);
    l->batch_first = malloc((l->n_buckets + 1) * sizeof *l->batch_first);
    if (!l->grouped || !l->bucket_first || !l->batch_first) {
        st = out_of_memory(l, err);
        goto done;
    }
    l->bucket_first[0] = 0;
    l->batch_first[0] = 0;
    size_t B = (size_t)l->opt.batch_size;
    for (size_t j = 0; j < l->n_buckets; j++) { /* count[] becomes each bucket's fill cursor */
        l->bucket_first[j + 1] = l->bucket_first[j] + count[j];
        l->batch_first[j + 1] = l->batch_first[j] + (count[j] + B - 1) / B;
        count[j] = l->bucket_first[j];
    }
    for (size_t i = 0; i < n; i++) l->grouped[count[bucket_position(value, l->n_buckets, buckets[i])]++] = records[i];
    l->batches_per_epoch = l->batch_first[l->n_buckets];
done:
    free(value);
    free(count);
    return st;
}

/* The three batch slots, each with rows for a full batch. */
static xtts_status alloc_slots(xtts_loader *l, xtts_error *err) {
    size_t B = (size_t)l->opt.batch_size, M = (size_t)l->ds->n_mels;
    for (int k = 0; k < XTTS_LOADER_SLOTS; k++) {
        xtts_loader_batch *s = &l->slots[k];
        s->text = calloc(B * l->text_stride, sizeof(int32_t));
        s->n_text = calloc(B, sizeof(int));
        s->n_frames = calloc(B, sizeof(int));
        s->mel = calloc(B * l->mel_stride * M, sizeof(float));
        s->index = calloc(B, sizeof(uint64_t));
        if (!s->text || !s->n_text || !s->n_frames || !s->mel || !s->index) return out_of_memory(l, err);
        s->view = (xtts_model_batch){0, 0, l->text_stride, l->mel_stride, s->text, s->n_text, s->n_frames, s->mel};
    }
    return XTTS_OK;
}

/* The decoding threads, each with its own reader and scratch. The workers' array is the
 * loader's from the start, so that xtts_loader_delete frees what a failure leaves. */
static xtts_status start_workers(xtts_loader *l, xtts_cache *cache, xtts_error *err) {
    int n = l->opt.n_threads;
    const xtts_dataset *ds = l->ds;
    l->threads = calloc(n, sizeof(pthread_t));
    worker *ws = l->workers_memory = calloc(n, sizeof(worker));
    if (!l->threads || !ws) return out_of_memory(l, err);
    for (int i = 0; i < n; i++) {
        worker *w = &ws[i];
        w->l = l;
        w->tokens_cap = (size_t)(ds->max_tokens > 0 ? ds->max_tokens : 1);
        w->tokens = malloc(w->tokens_cap * sizeof(int32_t));
        w->mel = malloc((size_t)ds->n_mels * (size_t)ds->max_frames * sizeof(float));
        if (!w->tokens || !w->mel) return xtts_error_set(err, XTTS_ENOMEM, "loader: out of memory");
        xtts_status st = xtts_cache_reader_new(cache, &w->reader, err);
        if (st) return st;
    }
    for (int i = 0; i < n; i++) {
        if (pthread_create(&l->threads[i], NULL, worker_main, &ws[i]) != 0)
            return xtts_error_set(err, XTTS_EIO, "loader: cannot start thread %d", i);
        l->n_threads++;
    }
    return XTTS_OK;
}

xtts_status xtts_loader_new(xtts_cache *cache, const xtts_dataset *ds, const xtts_loader_options *opt,
                            xtts_loader **out, xtts_error *err) {
    *out = NULL;
    if (opt->batch_size < 1 || opt->n_threads < 1)
        return xtts_error_set(err, XTTS_EUSAGE, "loader: batch size and threads must be at least 1");
    int val = opt->split == XTTS_SPLIT_VAL;
    size_t n = val ? ds->n_val : ds->n_train;
    if (n == 0)
        return xtts_error_set(err, XTTS_EINPUT, "loader: the cache has no %s records", val ? "validation" : "training");
    xtts_loader *l = calloc(1, sizeof *l);
    if (!l) return xtts_error_set(err, XTTS_ENOMEM, "loader: out of memory");
    l->cache = cache;
    l->ds = ds;
    l->opt = *opt;
    l->n_records = n;
    l->text_stride = ds->max_tokens + 1;
    l->mel_stride = ds->max_frames;
    pthread_mutex_init(&l->mu, NULL);
    pthread_cond_init(&l->cv, NULL);
    xtts_status st = group_records(l, val ? ds->val : ds->train, val ? ds->val_bucket : ds->train_bucket, err);
    if (st) goto fail;
    l->end_seq = val ? l->batches_per_epoch : UINT64_MAX;
    if (val) l->opt.start_epoch = 0, l->opt.start_batch = 0;
    if (l->opt.start_batch >= l->batches_per_epoch) { /* a checkpoint of a cache with another record count */
        st = xtts_error_set(err, XTTS_EMISMATCH, "loader: start batch %llu beyond the %llu batches of an epoch",
                            (unsigned long long)opt->start_batch, (unsigned long long)l->batches_per_epoch);
        goto fail;
    }
    if ((st = alloc_slots(l, err)) || (st = start_workers(l, cache, err))) goto fail;
    *out = l;
    return XTTS_OK;
fail:
    xtts_loader_delete(l);
    return st;
}

void xtts_loader_delete(xtts_loader *l) {
    if (!l) return;
    pthread_mutex_lock(&l->mu);
    l->stop = 1;
    pthread_cond_broadcast(&l->cv);
    pthread_mutex_unlock(&l->mu);
    for (int i = 0; i < l->n_threads; i++) pthread_join(l->threads[i], NULL);
    worker *ws = l->workers_memory;
    if (ws) {
        for (int i = 0; i < l->opt.n_threads; i++) {
            xtts_cache_reader_delete(ws[i].reader);
            free(ws[i].tokens);
            free(ws[i].mel);
        }
        free(ws);
    }
    free(l->threads);
    for (int k = 0; k < XTTS_LOADER_SLOTS; k++) {
        free(l->slots[k].text);
        free(l->slots[k].n_text);
        free(l->slots[k].n_frames);
        free(l->slots[k].mel);
        free(l->slots[k].index);
    }
    for (int i = 0; i < 2; i++) plan_free(&l->plans[i]);
    free(l->grouped);
    free(l->bucket_first);
    free(l->batch_first);
    pthread_cond_destroy(&l->cv);
    pthread_mutex_destroy(&l->mu);
    free(l);
}

uint64_t xtts_loader_batches_per_epoch(const xtts_loader *l) { return l->batches_per_epoch; }

xtts_status xtts_loader_next(xtts_loader *l, xtts_loader_batch **out, double *waited_s, xtts_error *err) {
    *out = NULL;
    double t0 = xtts_now_s();
    pthread_mutex_lock(&l->mu);
    if (l->take_seq >= l->end_seq) {
        pthread_mutex_unlock(&l->mu);
        if (waited_s) *waited_s = 0.0;
        return xtts_error_set(err, XTTS_ENOTFOUND, "loader: the validation pass is over");
    }
    int k = (int)(l->take_seq % XTTS_LOADER_SLOTS);
    while (!(l->state[k] == 2 && l->slots[k].seq == l->take_seq)) pthread_cond_wait(&l->cv, &l->mu);
    l->state[k] = 3;
    l->take_seq++;
    xtts_error e = l->slot_err[k];
    pthread_mutex_unlock(&l->mu);
    if (waited_s) *waited_s = xtts_now_s() - t0;
    if (e.code != XTTS_OK) {
        if (err) *err = e;
        xtts_loader_release(l, &l->slots[k]);
        return e.code;
    }
    *out = &l->slots[k];
    return XTTS_OK;
}

void xtts_loader_release(xtts_loader *l, xtts_loader_batch *b) {
    int k = (int)(b - l->slots);
    pthread_mutex_lock(&l->mu);
    l->state[k] = 0;
    pthread_cond_broadcast(&l->cv);
    pthread_mutex_unlock(&l->mu);
}

void xtts_loader_position(const xtts_loader *l, uint64_t *epoch, uint64_t *batch) {
    seq_position(l, l->take_seq, epoch, batch);
}

xtts_loader_batch *xtts_loader_slot(xtts_loader *l, int k) {
    return k >= 0 && k < XTTS_LOADER_SLOTS ? &l->slots[k] : NULL;
}
