/* codes.c — the audio codes of a cache's records (codes.h): model files in, the records
 * without codes found by content key, each clip's mel and codes computed alone, committed
 * in groups. The encoder's own OpenMP threads do the work (kernels/dvae.c). */
#include "prep/codes/codes.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cache/store/codes_store.h"
#include "cache/store/read/reader.h"
#include "formats/model/torch_dvae.h"
#include "kernels/dvae.h"
#include "kernels/mel.h"

void xtts_codes_options_defaults(xtts_codes_options *o) {
    memset(o, 0, sizeof *o);
    o->commit_every = 64;
}

typedef struct {
    xtts_pth *dvae_file, *norms_file;
    xtts_dvae_weights w;
    const float *norms;
    xtts_dvae *enc;
    xtts_mel *mel;
    xtts_mel_params mp;
    xtts_codes_header hdr;
    xtts_cache *cache;
    xtts_cache_reader *reader;
    xtts_codes_store *store;
    uint64_t *todo; /* indices of the records without codes */
    uint8_t *keys;  /* every record's content key (XTTS_CODES_KEY_BYTES each), sorted, each once */
    size_t n_keys;
    uint64_t n_todo;
    int16_t *wave; /* scratch, grown to the longest clip */
    float *samples, *logmel;
    uint16_t *codes;
    size_t cap_wave, cap_samples, cap_mel, cap_codes;
} run_ctx;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The DVAE, the norms, their hashes and the xtts mel. */
static xtts_status load_model(const xtts_codes_options *o, run_ctx *x, xtts_error *err) {
    xtts_status st;
    if ((st = xtts_sha256_file(o->dvae_path, x->hdr.dvae_sha256, err)) ||
        (st = xtts_sha256_file(o->norms_path, x->hdr.norms_sha256, err)) ||
        (st = xtts_pth_open(o->dvae_path, &x->dvae_file, err)) ||
        (st = xtts_dvae_weights_from_pth(x->dvae_file, &x->w, err)) ||
        (st = xtts_pth_open(o->norms_path, &x->norms_file, err)) ||
        (st = xtts_mel_norms_from_pth(x->norms_file, x->w.cfg.channels, &x->norms, err)) ||
        (st = xtts_dvae_new(&x->w, &x->enc, err)) || (st = xtts_mel_preset("xtts", &x->mp, err)))
        return st;
    if (x->mp.n_mels != x->w.cfg.channels || x->w.cfg.channels > XTTS_CODES_MAX_MELS)
        return xtts_error_set(err, XTTS_EMISMATCH, "%s: the DVAE takes %d mel channels, the xtts mel has %d", o->dvae_path,
                              x->w.cfg.channels, x->mp.n_mels);
    x->hdr.num_tokens = (uint32_t)x->w.cfg.num_tokens;
    x->hdr.n_mels = (uint32_t)x->w.cfg.channels;
    memcpy(x->hdr.mel_norms, x->norms, sizeof *x->norms * x->hdr.n_mels);
    return xtts_mel_new(&x->mp, &x->mel, err);
}

/* The cache, which must store the waveform the codes are computed from. */
static xtts_status open_cache(const xtts_codes_options *o, run_ctx *x, xtts_error *err) {
    xtts_status st = xtts_cache_open(o->cache_dir, &x->cache, err);
    if (st) return st;
    const xtts_cache_config *cfg = xtts_cache_get_config(x->cache);
    if (cfg->audio == XTTS_AUDIO_NONE)
        return xtts_error_set(err, XTTS_EUNSUPPORTED,
                              "%s: the cache stores no waveform (built with --audio none); the codes are computed from "
                              "it: rebuild it with `xtts-melcache ... --audio int16 --force` (or --audio flac)",
                              o->cache_dir);
    if (cfg->mel.sample_rate != x->mp.sample_rate)
        return xtts_error_set(err, XTTS_EUNSUPPORTED,
                              "%s: the cache's waveform is at %d Hz, XTTS's DVAE takes %d Hz: build it with `xtts-melcache "
                              "... --sample-rate %d --audio int16`",
                              o->cache_dir, cfg->mel.sample_rate, x->mp.sample_rate, x->mp.sample_rate);
    return xtts_cache_reader_new(x->cache, &x->reader, err);
}

/* Record index's content key. */
static xtts_status record_key(run_ctx *x, uint64_t index, uint8_t key[XTTS_CODES_KEY_BYTES], xtts_error *err) {
    const void *v;
    size_t len;
    xtts_status st = xtts_cache_reader_value(x->reader, index, XTTS_CACHE_DB_KEYS, &v, &len, err);
    if (st == XTTS_ENOTFOUND)
        return xtts_error_set(err, XTTS_EUNSUPPORTED,
                              "%s: index %llu has no content key (a cache built before them): rebuild it with "
                              "`xtts-melcache ... --force`",
                              xtts_cache_dir(x->cache), (unsigned long long)index);
    if (st) return st;
    if (len < XTTS_CODES_KEY_BYTES)
        return xtts_error_set(err, XTTS_ECORRUPT, "%s: index %llu: a \"keys\" value of %zu bytes",
                              xtts_cache_dir(x->cache), (unsigned long long)index, len);
    memcpy(key, v, XTTS_CODES_KEY_BYTES);
    return XTTS_OK;
}

static xtts_status grow(void **p, size_t *cap, size_t n, size_t size, xtts_error *err) {
    if (n <= *cap) return XTTS_OK;
    void *q = realloc(*p, n * size);
    if (!q) return xtts_error_set(err, XTTS_ENOMEM, "out of memory (%zu bytes)", n * size);
    *p = q;
    *cap = n;
    return XTTS_OK;
}

static int cmp_keys(const void *a, const void *b) { return memcmp(a, b, XTTS_CODES_KEY_BYTES); }

/* x->keys sorted, each once. */
static void keys_sort(run_ctx *x) {
    if (x->n_keys) qsort(x->keys, x->n_keys, XTTS_CODES_KEY_BYTES, cmp_keys);
    size_t d = 0;
    for (size_t i = 0; i < x->n_keys; i++)
        if (!d || memcmp(x->keys + (d - 1) * XTTS_CODES_KEY_BYTES, x->keys + i * XTTS_CODES_KEY_BYTES, XTTS_CODES_KEY_BYTES))
            memmove(x->keys + d++ * XTTS_CODES_KEY_BYTES, x->keys + i * XTTS_CODES_KEY_BYTES, XTTS_CODES_KEY_BYTES);
    x->n_keys = d;
}

/* The records without valid codes into x->todo; *present counts the others. Every record's
 * content key into x->keys (the entries under other keys are pruned). */
static xtts_status find_missing(run_ctx *x, uint64_t *present, xtts_error *err) {
    uint64_t n = xtts_cache_count(x->cache);
    x->todo = malloc((n ? n : 1) * sizeof *x->todo);
    x->keys = malloc((n ? n : 1) * XTTS_CODES_KEY_BYTES);
    if (!x->todo || !x->keys) return xtts_error_set(err, XTTS_ENOMEM, "out of memory");
    *present = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint8_t key[XTTS_CODES_KEY_BYTES];
        xtts_record_header h;
        size_t got;
        xtts_status st = record_key(x, i, key, err);
        if (!st) st = xtts_cache_reader_header(x->reader, i, &h, err);
        if (st) return st;
        memcpy(x->keys + x->n_keys++ * XTTS_CODES_KEY_BYTES, key, XTTS_CODES_KEY_BYTES);
        size_t want = xtts_codes_expected(h.n_samples);
        if ((st = grow((void **)&x->codes, &x->cap_codes, want ? want : 1, sizeof *x->codes, err))) return st;
        st = xtts_codes_store_get(x->store, key, x->codes, x->cap_codes, &got, err);
        if (st == XTTS_OK && got == want) ++*present;
        else x->todo[x->n_todo++] = i; /* missing, damaged or of another length: computed again */
    }
    keys_sort(x);
    return XTTS_OK;
}

/* Codes of record index into x->codes; *n_codes and *n_samples set. */
static xtts_status encode_record(run_ctx *x, uint64_t index, size_t *n_codes, uint32_t *n_samples, xtts_error *err) {
    xtts_record_header h;
    xtts_status st = xtts_cache_reader_header(x->reader, index, &h, err);
    if (st) return st;
    size_t ns = h.n_samples, frames = xtts_mel_n_frames(&x->mp, ns), nc = xtts_dvae_codes_len(frames);
    if (!frames)
        return xtts_error_set(err, XTTS_EINPUT, "%s: index %llu (%s): %zu samples, too short for one mel frame",
                              xtts_cache_dir(x->cache), (unsigned long long)index, h.id, ns);
    if ((st = grow((void **)&x->wave, &x->cap_wave, ns, sizeof *x->wave, err)) ||
        (st = grow((void **)&x->samples, &x->cap_samples, ns, sizeof *x->samples, err)) ||
        (st = grow((void **)&x->logmel, &x->cap_mel, (size_t)x->mp.n_mels * frames, sizeof *x->logmel, err)) ||
        (st = grow((void **)&x->codes, &x->cap_codes, nc, sizeof *x->codes, err)))
        return st;
    if ((st = xtts_cache_reader_wave(x->reader, index, x->wave, 0, ns, err))) return st;
    for (size_t i = 0; i < ns; i++) x->samples[i] = (float)x->wave[i] / 32768.0f;
    size_t got;
    if ((st = xtts_mel_compute(x->mel, x->samples, ns, x->logmel, frames, &got, NULL, err))) return st;
    for (size_t c = 0; c < (size_t)x->mp.n_mels; c++)
        for (size_t t = 0; t < frames; t++) x->logmel[c * frames + t] /= x->norms[c];
    if ((st = xtts_dvae_encode(x->enc, x->logmel, frames, x->codes, NULL, err))) {
        char msg[XTTS_ERRMSG_MAX];
        snprintf(msg, sizeof msg, "%s", err->msg);
        return xtts_error_set(err, st, "index %llu (%s): %s", (unsigned long long)index, h.id, msg);
    }
    *n_codes = nc;
    *n_samples = h.n_samples;
    return XTTS_OK;
}

/* Compute and store the codes of x->todo, committing every o->commit_every records. */
static xtts_status compute_missing(const xtts_codes_options *o, run_ctx *x, xtts_codes_summary *sum, xtts_error *err) {
    xtts_progress pr;
    xtts_progress_init(&pr, "xtts-cache-codes", o->progress);
    double t0 = now_s();
    uint64_t every = o->commit_every ? o->commit_every : 1;
    for (uint64_t k = 0; k < x->n_todo; k++) {
        uint8_t key[XTTS_CODES_KEY_BYTES];
        size_t nc = 0;
        uint32_t ns = 0;
        xtts_status st = record_key(x, x->todo[k], key, err);
        if (!st) st = encode_record(x, x->todo[k], &nc, &ns, err);
        if (!st) st = xtts_codes_store_put(x->store, key, x->codes, nc, err);
        if (!st && ((k + 1) % every == 0 || k + 1 == x->n_todo)) st = xtts_codes_store_commit(x->store, err);
        if (st) return st;
        sum->computed++;
        sum->codes_bytes += 2 * nc;
        sum->audio_seconds += (double)ns / x->mp.sample_rate;
        xtts_progress_update(&pr, k + 1, x->n_todo, NULL);
    }
    sum->seconds = now_s() - t0;
    xtts_progress_finish(&pr, x->n_todo, x->n_todo, NULL);
    return XTTS_OK;
}

static void run_free(run_ctx *x) {
    xtts_codes_store_close(x->store);
    xtts_cache_reader_delete(x->reader);
    xtts_cache_close(x->cache);
    xtts_mel_delete(x->mel);
    xtts_dvae_delete(x->enc);
    xtts_pth_close(x->dvae_file);
    xtts_pth_close(x->norms_file);
    free(x->todo);
    free(x->keys);
    free(x->wave);
    free(x->samples);
    free(x->logmel);
    free(x->codes);
}

xtts_status xtts_codes_run(const xtts_codes_options *o, xtts_codes_summary *sum, xtts_error *err) {
    memset(sum, 0, sizeof *sum);
    run_ctx x;
    memset(&x, 0, sizeof x);
    if (o->threads > 0) omp_set_num_threads(o->threads);
    xtts_status st = load_model(o, &x, err);
    if (!st) st = open_cache(o, &x, err);
    if (!st) st = xtts_codes_store_create(o->cache_dir, &x.hdr, &x.store, err);
    if (!st) {
        snprintf(sum->dir, sizeof sum->dir, "%s", xtts_codes_store_path(x.store));
        sum->records = xtts_cache_count(x.cache);
        st = find_missing(&x, &sum->present, err);
    }
    if (!st) st = compute_missing(o, &x, sum, err);
    if (!st) st = xtts_codes_store_prune(x.store, x.keys, x.n_keys, &sum->pruned, err);
    run_free(&x);
    return st;
}
