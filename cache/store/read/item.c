/* item.c — one record read once for a dataset item (item.h).
 *
 * A dataset item wants a record's header, tokens, mel and waveform and its content key. Each
 * of the reader's own calls (xtts_cache_reader_get, _wave) looks the record up and parses its
 * header again; here the stored value is looked up once (xtts_cache_reader_raw, a pointer into
 * LMDB's map), its header parsed once and each section decompressed once, all under the fault
 * guard, since the bytes are the mapped file's. Unpadded outputs: a record stored padded
 * (version 1, or a bucket wider than its frames) is decoded into scratch rows and its real
 * part copied out. */
#include "cache/store/read/item.h"
#include "cache/store/read/cache_internal.h"
#include "cache/store/read/guard.h"

#include <stdlib.h>
#include <string.h>

struct xtts_item_state {
    xtts_record_decoder *dec;
    int32_t *tokens; /* scratch: tokens_padded ids */
    size_t tokens_cap;
    uint8_t *mel;    /* scratch: [n_mels][frames_padded] */
    size_t mel_bytes;
};

xtts_status xtts_item_state_new(xtts_item_state **out, xtts_error *err) {
    *out = calloc(1, sizeof **out);
    if (!*out || xtts_record_decoder_new(&(*out)->dec)) {
        free(*out);
        *out = NULL;
        return xtts_error_set(err, XTTS_ENOMEM, "out of memory for a record decoder");
    }
    return XTTS_OK;
}

void xtts_item_state_delete(xtts_item_state *s) {
    if (!s) return;
    xtts_record_decoder_delete(s->dec);
    free(s->tokens);
    free(s->mel);
    free(s);
}

/* Room for n bytes at *p (of *have): 0, or -1 when it cannot be had. */
static int scratch(void **p, size_t *have, size_t n) {
    if (n <= *have) return 0;
    void *q = realloc(*p, n);
    if (!q) return -1;
    *p = q;
    *have = n;
    return 0;
}

/* "shard: index N, id 'ID': " before the message of e (the reader's form) */
static xtts_status item_error(const xtts_cache *c, uint64_t index, const char *id, const xtts_error *e,
                              xtts_error *err) {
    return xtts_cache_record_error(xtts_cache_shard_of(c, index), index, id, e, err);
}

/* The ids a record carries index the manifest's tables, and its mel channels are the cache's. */
static xtts_status check_ids(const xtts_cache *c, uint64_t index, const xtts_record_header *h, xtts_error *err) {
    xtts_error e;
    if (xtts_cache_check_table_ids(c, h, &e) == XTTS_OK) {
        int n_mels = xtts_cache_get_config(c)->mel.n_mels;
        if (h->n_mels == (uint32_t)n_mels) return XTTS_OK;
        xtts_error_set(&e, XTTS_ECORRUPT, "%u mel channels, the cache has %d", h->n_mels, n_mels);
    }
    return item_error(c, index, h->id, &e, err);
}

/* Tokens and mel of the record at buf into w's unpadded buffers (the header already parsed
 * into h and checked against the caps). Under the guard; 0 or the decoder's status in e. */
static xtts_status decode_rows(xtts_item_state *s, const void *buf, size_t len, const xtts_record_header *h,
                               const xtts_item_want *w, xtts_error *e) {
    size_t esize = xtts_dtype_size(w->mel_dtype);
    int tokens_direct = w->tokens && w->tokens_cap >= h->tokens_padded;
    int mel_direct = w->mel && h->frames_padded == h->n_frames;
    if (w->tokens && !tokens_direct && scratch((void **)&s->tokens, &s->tokens_cap, 4 * (size_t)h->tokens_padded))
        return xtts_error_set(e, XTTS_ENOMEM, "out of memory for %u tokens", h->tokens_padded);
    if (w->mel && !mel_direct && scratch((void **)&s->mel, &s->mel_bytes, (size_t)h->n_mels * h->frames_padded * esize))
        return xtts_error_set(e, XTTS_ENOMEM, "out of memory for a mel of %u frames", h->frames_padded);
    int32_t *tok = !w->tokens ? NULL : tokens_direct ? w->tokens : s->tokens;
    void *mel = !w->mel ? NULL : mel_direct ? w->mel : s->mel;
    xtts_status st = xtts_record_decode(s->dec, buf, len, NULL, tok, tok ? (tokens_direct ? w->tokens_cap
                                                                                          : h->tokens_padded) : 0,
                                        mel, w->mel_dtype, h->n_mels, h->frames_padded, e);
    if (st) return st;
    if (tok && !tokens_direct) memcpy(w->tokens, s->tokens, 4 * (size_t)h->n_tokens);
    if (mel && !mel_direct)
        for (size_t ch = 0; ch < h->n_mels; ch++)
            memcpy((uint8_t *)w->mel + ch * h->n_frames * esize, s->mel + ch * h->frames_padded * esize,
                   h->n_frames * esize);
    return XTTS_OK;
}

xtts_status xtts_item_read(xtts_cache_reader *r, xtts_item_state *s, uint64_t index, const xtts_item_want *w,
                           xtts_record_header *hdr, uint32_t *frame_crc, xtts_error *err) {
    const xtts_cache *c = xtts_cache_reader_cache(r);
    const void *buf;
    size_t len;
    xtts_status st = xtts_cache_reader_raw(r, index, &buf, &len, err);
    if (st) return st;
    xtts_error e;
    xtts_error_clear(&e);
    volatile xtts_status vst = XTTS_OK;
    volatile int decoded = 0;
    GUARD(sig)
    vst = xtts_record_parse_header(buf, len, hdr, &e);
    if (!vst) *frame_crc = xtts_get_le32((const uint8_t *)buf + 56);
    GUARD_END(sig)
    char id[80];
    if (sig || vst) {
        GUARD(sig_id)
        xtts_record_claimed_id(buf, len, id, sizeof id);
        GUARD_END(sig_id)
        if (sig_id) strcpy(id, "?");
        if (sig) return xtts_error_set(err, XTTS_ECORRUPT, "%s: index %llu: fault reading the record (%s)",
                                       xtts_cache_shard_of(c, index), (unsigned long long)index, xtts_guard_signame(sig));
        return item_error(c, index, id, &e, err);
    }
    if ((st = check_ids(c, index, hdr, err))) return st;
    if (w->wave && (hdr->version < 2 || hdr->audio == XTTS_AUDIO_NONE)) {
        xtts_error_set(&e, XTTS_ENOTFOUND, "no waveform (%s)",
                       hdr->version < 2 ? "record version 1" : "built with --audio none");
        return item_error(c, index, hdr->id, &e, err);
    }
    size_t n_mel = (size_t)hdr->n_mels * hdr->n_frames;
    const char *small = w->tokens && w->tokens_cap < hdr->n_tokens ? "tokens"
                      : w->mel && w->mel_cap < n_mel ? "mel"
                      : w->wave && w->wave_cap < hdr->n_samples ? "waveform" : NULL;
    if (small) {
        xtts_error_set(&e, XTTS_ERANGE, "room for %zu %s values, the record has %zu", !strcmp(small, "tokens")
                       ? w->tokens_cap : !strcmp(small, "mel") ? w->mel_cap : w->wave_cap, small,
                       !strcmp(small, "tokens") ? (size_t)hdr->n_tokens : !strcmp(small, "mel") ? n_mel
                       : (size_t)hdr->n_samples);
        return item_error(c, index, hdr->id, &e, err);
    }
    GUARD(sig2)
    vst = w->tokens || w->mel ? decode_rows(s, buf, len, hdr, w, &e) : XTTS_OK;
    if (!vst && w->wave) vst = xtts_record_decode_wave(s->dec, buf, len, w->wave, 0, hdr->n_samples, &e);
    decoded = 1;
    GUARD_END(sig2)
    if (sig2 || !decoded)
        return xtts_error_set(err, XTTS_ECORRUPT, "%s: index %llu, id '%s': fault reading the record (%s)",
                              xtts_cache_shard_of(c, index), (unsigned long long)index, hdr->id,
                              xtts_guard_signame(sig2));
    if (vst) return item_error(c, index, hdr->id, &e, err);
    if (!w->key) return XTTS_OK;
    /* last: the lookup ends the borrowing of buf */
    st = xtts_cache_reader_value(r, index, XTTS_CACHE_DB_KEYS, &buf, &len, err);
    const char *shard = xtts_cache_shard_of(c, index);
    if (st == XTTS_ENOTFOUND && xtts_cache_shards_with_db(c, XTTS_CACHE_DB_KEYS) == 0)
        return xtts_error_set(err, XTTS_ENOTFOUND, "%s: no \"keys\" database (a cache built before content keys)",
                              shard);
    if (st == XTTS_ENOTFOUND || (!st && len < 32))
        return xtts_error_set(err, XTTS_ECORRUPT, "%s: index %llu: no content key", shard, (unsigned long long)index);
    if (st) return st;
    GUARD(sig3)
    memcpy(w->key, buf, 32);
    GUARD_END(sig3)
    if (sig3)
        return xtts_error_set(err, XTTS_ECORRUPT, "%s: index %llu: fault reading the content key (%s)", shard,
                              (unsigned long long)index, xtts_guard_signame(sig3));
    return XTTS_OK;
}
