/* xtts_gpt_loader.c — batches for XTTS's GPT from an xtts cache (train/xtts_gpt_loader.h):
 * the records Coqui keeps, their order, and per row the tokens, the codes by content key, and
 * the conditioning mel of a prompt slice of the stored waveform. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/store/read/codes_read.h"
#include "kernels/mel.h"
#include "train/xtts_gpt_loader.h"

#define XTTS_GPT_SAMPLE_RATE 22050
#define STYLE_HOP 256

struct xtts_gpt_loader {
    xtts_gpt_config c;
    xtts_gpt_recipe r;
    xtts_gpt_loader_options o;
    xtts_cache_reader *reader;
    xtts_codes_reader *codes;
    xtts_mel *mel;
    char codes_path[4096];
    uint32_t *records; /* the split's kept records, in index order */
    uint64_t n, pos, epoch;
    int max_tokens, max_codes, cond_frames;
    /* the batch */
    xtts_gpt_batch batch;
    int32_t *text, *text_lengths, *codes_buf, *wav_lengths, *cond_idxs;
    float *cond_mels, *wav, *slice, *mel_scratch;
    int32_t *tok_scratch;
    uint16_t *code_scratch;
    int16_t *pcm;
};

static xtts_status style_mel_ctx(xtts_mel **out, xtts_error *err) {
    xtts_mel_overrides ov;
    xtts_mel_overrides_defaults(&ov);
    ov.n_fft = 2048, ov.win = 1024, ov.hop = STYLE_HOP, ov.n_mels = 80, ov.fmax = 8000.0;
    xtts_mel_params p;
    xtts_status st = xtts_mel_params_derive("xtts", &ov, &p, err);
    return st ? st : xtts_mel_new(&p, out, err);
}

/* the conditioning mel with a given context */
static xtts_status style_mel_with(xtts_mel *mel, const float *wav, size_t n, size_t pad_to, const float *norms,
                                  float *out, size_t *frames, xtts_error *err) {
    size_t len = n > pad_to ? n : pad_to;
    float *x = calloc(len ? len : 1, sizeof(float));
    if (!x) return xtts_error_set(err, XTTS_ENOMEM, "conditioning mel: out of memory");
    memcpy(x, wav, n * sizeof(float));
    size_t stride = len / STYLE_HOP + 1;
    xtts_status st = xtts_mel_compute(mel, x, len, out, stride, frames, NULL, err);
    free(x);
    if (st) return st;
    for (int m = 0; m < 80; m++)
        for (size_t t = 0; t < *frames; t++) out[m * stride + t] /= norms[m];
    return XTTS_OK;
}

xtts_status xtts_gpt_style_mel(const float *wav, size_t n, size_t pad_to, const float *norms, float *out,
                               size_t *frames, xtts_error *err) {
    xtts_mel *mel = NULL;
    xtts_status st = style_mel_ctx(&mel, err);
    if (!st) st = style_mel_with(mel, wav, n, pad_to, norms, out, frames, err);
    xtts_mel_delete(mel);
    return st;
}

/* the codes directory: the one named, or the cache's only codes-* */
static xtts_status find_codes_dir(xtts_cache *cache, const char *want, char *out, size_t cap, xtts_error *err) {
    const char *dir = xtts_cache_dir(cache);
    if (want) {
        if (strchr(want, '/')) snprintf(out, cap, "%s", want);
        else snprintf(out, cap, "%s/%s", dir, want);
        return XTTS_OK;
    }
    DIR *d = opendir(dir);
    if (!d) return xtts_error_set(err, XTTS_EIO, "%s: cannot list the cache's folder", dir);
    int found = 0;
    struct dirent *e;
    char first[XTTS_CODES_NAME_MAX] = {0};
    while ((e = readdir(d)))
        if (xtts_codes_dir_name_valid(e->d_name) && found++ == 0) {
            memcpy(first, e->d_name, strlen(e->d_name) < sizeof first ? strlen(e->d_name) : sizeof first - 1);
            first[sizeof first - 1] = 0;
        }
    closedir(d);
    if (found != 1)
        return xtts_error_set(err, XTTS_ENOTFOUND, "%s: %s codes directory (xtts-cache-codes writes one; --codes names it)",
                              dir, found ? "more than one" : "no");
    snprintf(out, cap, "%s/%s", dir, first);
    return XTTS_OK;
}

/* the split's records Coqui keeps (XTTSDataset's length limits); their longest tokens and codes */
static xtts_status scan_records(xtts_gpt_loader *l, xtts_cache *cache, xtts_error *err) {
    uint64_t n = xtts_cache_count(cache);
    l->records = malloc((n ? n : 1) * sizeof(uint32_t));
    if (!l->records) return xtts_error_set(err, XTTS_ENOMEM, "xtts-gpt loader: out of memory");
    for (uint64_t i = 0; i < n; i++) {
        xtts_record_header h;
        xtts_status st = xtts_cache_reader_header(l->reader, i, &h, err);
        if (st) return st;
        if (h.split != l->o.split || h.n_samples < XTTS_GPT_SAMPLE_RATE / 2 ||
            h.n_samples > (uint32_t)l->r.max_wav_samples || h.n_tokens > (uint32_t)l->r.max_text_tokens || !h.n_tokens)
            continue;
        l->records[l->n++] = (uint32_t)i;
        int codes = (int)(((h.n_samples / STYLE_HOP + 1) + 1) / 2 + 1) / 2;
        l->max_tokens = (int)h.n_tokens > l->max_tokens ? (int)h.n_tokens : l->max_tokens;
        l->max_codes = codes > l->max_codes ? codes : l->max_codes;
    }
    if (!l->n)
        return xtts_error_set(err, XTTS_ENOTFOUND, "%s: no %s records within Coqui's limits", xtts_cache_dir(cache),
                              l->o.split == XTTS_SPLIT_VAL ? "validation" : "training");
    return XTTS_OK;
}

static xtts_status alloc_batch(xtts_gpt_loader *l, xtts_error *err) {
    size_t B = (size_t)l->o.batch_size, F = (size_t)l->cond_frames, W = (size_t)l->r.max_wav_samples;
    size_t C = (size_t)l->r.max_cond_samples;
    l->text = calloc(B * l->max_tokens, sizeof(int32_t));
    l->text_lengths = calloc(B * 4, sizeof(int32_t));
    l->wav_lengths = l->text_lengths + B;
    l->cond_idxs = l->text_lengths + 2 * B;
    l->codes_buf = calloc(B * l->max_codes, sizeof(int32_t));
    l->cond_mels = calloc(B * 80 * F, sizeof(float));
    l->wav = malloc(W * sizeof(float));
    l->slice = calloc(C, sizeof(float));
    l->mel_scratch = malloc(80 * F * sizeof(float));
    l->tok_scratch = malloc((size_t)(xtts_cache_get_config(xtts_cache_reader_cache(l->reader))->max_tokens + 1) * 4);
    l->code_scratch = malloc(((size_t)l->max_codes + 1) * sizeof(uint16_t));
    l->pcm = malloc(W * sizeof(int16_t));
    if (!l->text || !l->text_lengths || !l->codes_buf || !l->cond_mels || !l->wav || !l->slice || !l->mel_scratch ||
        !l->tok_scratch || !l->code_scratch || !l->pcm)
        return xtts_error_set(err, XTTS_ENOMEM, "xtts-gpt loader: out of memory for a batch");
    return XTTS_OK;
}

xtts_status xtts_gpt_loader_new(xtts_cache *cache, const xtts_gpt_config *c, const xtts_gpt_recipe *r,
                                const xtts_gpt_loader_options *opt, xtts_gpt_loader **out, xtts_error *err) {
    *out = NULL;
    if (opt->batch_size < 1) return xtts_error_set(err, XTTS_EUSAGE, "xtts-gpt loader: batch size %d", opt->batch_size);
    const xtts_cache_config *cc = xtts_cache_get_config(cache);
    if (cc->mel.sample_rate != XTTS_GPT_SAMPLE_RATE || cc->audio == XTTS_AUDIO_NONE)
        return xtts_error_set(err, XTTS_EMISMATCH,
                              "%s: XTTS's GPT needs the waveform stored at 22050 Hz (xtts-melcache --preset xtts --audio "
                              "int16|flac); this cache has %d Hz, audio %s",
                              xtts_cache_dir(cache), cc->mel.sample_rate, xtts_audio_store_name(cc->audio));
    xtts_gpt_loader *l = calloc(1, sizeof *l);
    if (!l) return xtts_error_set(err, XTTS_ENOMEM, "xtts-gpt loader: out of memory");
    l->c = *c, l->r = *r, l->o = *opt;
    l->cond_frames = r->max_cond_samples / STYLE_HOP + 1;
    xtts_status st = find_codes_dir(cache, opt->codes_dir, l->codes_path, sizeof l->codes_path, err);
    if (!st) st = xtts_codes_reader_open(l->codes_path, &l->codes, err);
    if (!st && xtts_codes_reader_header(l->codes)->num_tokens + 2 != (uint32_t)c->n_audio_tokens)
        st = xtts_error_set(err, XTTS_EMISMATCH, "%s: codes of a %u-entry codebook, the model has %d audio tokens (%d + 2)",
                            l->codes_path, xtts_codes_reader_header(l->codes)->num_tokens, c->n_audio_tokens,
                            c->n_audio_tokens - 2);
    if (!st) st = xtts_cache_reader_new(cache, &l->reader, err);
    if (!st) st = style_mel_ctx(&l->mel, err);
    if (!st) st = scan_records(l, cache, err);
    if (!st) st = alloc_batch(l, err);
    if (st) {
        xtts_gpt_loader_delete(l);
        return st;
    }
    *out = l;
    return XTTS_OK;
}

void xtts_gpt_loader_delete(xtts_gpt_loader *l) {
    if (!l) return;
    xtts_cache_reader_delete(l->reader);
    xtts_codes_reader_close(l->codes);
    xtts_mel_delete(l->mel);
    free(l->records), free(l->text), free(l->text_lengths), free(l->codes_buf), free(l->cond_mels);
    free(l->wav), free(l->slice), free(l->mel_scratch), free(l->tok_scratch), free(l->code_scratch), free(l->pcm);
    free(l);
}

uint64_t xtts_gpt_loader_count(const xtts_gpt_loader *l) { return l->n; }

/* the k-th record of the epoch: training shuffles by a seeded Fisher-Yates of the epoch */
static uint32_t record_at(xtts_gpt_loader *l, uint64_t k) {
    if (l->o.split == XTTS_SPLIT_VAL) return l->records[k];
    if (k == 0) { /* a new epoch: shuffle in place from (seed, epoch) */
        uint64_t s = l->o.seed ^ (0x9e3779b97f4a7c15ULL * (l->epoch + 1));
        for (uint64_t i = l->n - 1; i > 0; i--) {
            uint64_t j = xtts_splitmix64(&s) % (i + 1);
            uint32_t t = l->records[i];
            l->records[i] = l->records[j], l->records[j] = t;
        }
    }
    return l->records[k];
}

/* get_prompt_slice's [start, end) for a clip of n samples */
static void prompt_slice(const xtts_gpt_loader *l, uint64_t *rng, int n, int *start, int *end) {
    int lo = l->r.min_cond_samples, hi = l->r.max_cond_samples, eval = l->o.split == XTTS_SPLIT_VAL;
    int len = eval ? (int)((lo + hi) / 2) : lo + (int)(xtts_splitmix64(rng) % (uint64_t)(hi - lo + 1));
    if (n - len < 0) len = n / 2;
    *start = eval ? 0 : (int)(xtts_splitmix64(rng) % (uint64_t)(n - len + 1));
    *end = *start + len;
}

/* row b of the batch from record index */
static xtts_status load_row(xtts_gpt_loader *l, int b, uint64_t index, uint64_t *rng, xtts_error *err) {
    xtts_record_header h;
    const xtts_cache_config *cc = xtts_cache_get_config(xtts_cache_reader_cache(l->reader));
    xtts_status st = xtts_cache_reader_get(l->reader, index, &h, l->tok_scratch, (size_t)cc->max_tokens + 1, NULL,
                                           XTTS_DTYPE_F32, 0, 0, err);
    if (st) return st;
    const void *key;
    size_t key_len, nc = 0;
    st = xtts_cache_reader_value(l->reader, index, XTTS_CACHE_DB_KEYS, &key, &key_len, err);
    if (!st && key_len < XTTS_CODES_KEY_BYTES)
        st = xtts_error_set(err, XTTS_ECORRUPT, "%s: index %llu: no content key",
                            xtts_cache_shard_of(xtts_cache_reader_cache(l->reader), index), (unsigned long long)index);
    if (!st) st = xtts_codes_reader_get(l->codes, key, l->code_scratch, (size_t)l->max_codes + 1, &nc, err);
    if (st == XTTS_ENOTFOUND)
        return xtts_error_set(err, XTTS_ENOTFOUND, "%s: index %llu (%s) has no codes: run xtts-cache-codes again",
                              l->codes_path, (unsigned long long)index, h.id);
    if (!st) st = xtts_cache_reader_wave(l->reader, index, l->pcm, 0, h.n_samples, err);
    if (st) return st;
    int n = (int)h.n_samples, start, end;
    for (int i = 0; i < n; i++) l->wav[i] = l->pcm[i] / 32768.0f;
    prompt_slice(l, rng, n, &start, &end);
    size_t frames;
    st = style_mel_with(l->mel, l->wav + start, (size_t)(end - start), (size_t)l->r.max_cond_samples,
                        xtts_codes_reader_header(l->codes)->mel_norms, l->cond_mels + (size_t)b * 80 * l->cond_frames,
                        &frames, err);
    if (st) return st;
    memcpy(l->text + (size_t)b * l->max_tokens, l->tok_scratch, h.n_tokens * sizeof(int32_t));
    for (size_t i = 0; i < nc && i < (size_t)l->max_codes; i++)
        l->codes_buf[(size_t)b * l->max_codes + i] = l->code_scratch[i];
    l->text_lengths[b] = (int32_t)h.n_tokens, l->wav_lengths[b] = n;
    l->cond_idxs[2 * b] = start, l->cond_idxs[2 * b + 1] = end;
    return XTTS_OK;
}

xtts_status xtts_gpt_loader_next(xtts_gpt_loader *l, const xtts_gpt_batch **out, xtts_error *err) {
    int eval = l->o.split == XTTS_SPLIT_VAL;
    if (eval && l->pos >= l->n) return xtts_error_set(err, XTTS_ENOTFOUND, "the validation pass is over");
    int B = 0;
    memset(l->text, 0, (size_t)l->o.batch_size * l->max_tokens * sizeof(int32_t));
    memset(l->codes_buf, 0, (size_t)l->o.batch_size * l->max_codes * sizeof(int32_t));
    while (B < l->o.batch_size && !(eval && l->pos >= l->n)) {
        if (l->pos >= l->n) l->pos = 0, l->epoch++;
        uint64_t rng = l->o.seed ^ (l->epoch * 0x100000001b3ULL) ^ (l->pos * 0x9e3779b97f4a7c15ULL);
        uint32_t idx = record_at(l, l->pos);
        xtts_status st = load_row(l, B, idx, &rng, err);
        if (st) return st;
        l->pos++, B++;
    }
    xtts_gpt_batch bt = {.B = B, .text_stride = l->max_tokens, .text = l->text, .text_lengths = l->text_lengths,
                         .codes_stride = l->max_codes, .codes = l->codes_buf, .wav_lengths = l->wav_lengths,
                         .cond_frames = l->cond_frames, .cond_mels = l->cond_mels,
                         .cond_idxs = !eval && l->r.masking_gt_prompt ? l->cond_idxs : NULL};
    l->batch = bt;
    *out = &l->batch;
    return XTTS_OK;
}
