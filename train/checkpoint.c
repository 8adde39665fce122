/* checkpoint.c — checkpoint header codec, save and load (see checkpoint.h). */
#include "train/checkpoint.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void put_u64(uint8_t *p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static uint64_t get_u64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

void xtts_ckpt_encode_header(const xtts_ckpt_header *h, uint8_t *out) {
    memset(out, 0, XTTS_CKPT_HEADER_BYTES);
    memcpy(out, XTTS_CKPT_MAGIC, 8);
    xtts_put_le32(out + 8, XTTS_CKPT_VERSION);
    xtts_put_le32(out + 12, XTTS_CKPT_HEADER_BYTES);
    const int32_t dims[7] = {h->model.n_layer,  h->model.channels,     h->model.n_head,     h->model.n_mels,
                             h->model.vocab_size, h->model.max_text_pos, h->model.max_mel_pos};
    for (int i = 0; i < 7; i++) xtts_put_le32(out + 16 + 4 * i, (uint32_t)dims[i]);
    xtts_put_le32(out + 44, h->batch_size);
    put_u64(out + 48, h->num_parameters);
    put_u64(out + 56, h->step);
    put_u64(out + 64, h->seed);
    put_u64(out + 72, h->epoch);
    put_u64(out + 80, h->batch_in_epoch);
    put_u64(out + 88, h->payload_bytes);
    memcpy(out + 96, h->cache_config_hash, strnlen(h->cache_config_hash, 64));
    xtts_put_le32(out + 160, h->payload_crc);
    xtts_put_le32(out + 252, xtts_crc32(0, out, 252));
}

xtts_status xtts_ckpt_parse_header(const void *buf, size_t len, const char *name, xtts_ckpt_header *h,
                                   xtts_error *err) {
    const uint8_t *p = buf;
    memset(h, 0, sizeof *h);
    if (len < XTTS_CKPT_HEADER_BYTES || memcmp(p, XTTS_CKPT_MAGIC, 8) != 0)
        return xtts_error_set(err, XTTS_EINPUT, "%s: not an xtts-train checkpoint (no XTTSCKPT header)", name);
    h->version = xtts_get_le32(p + 8);
    if (h->version != XTTS_CKPT_VERSION)
        return xtts_error_set(err, XTTS_EMISMATCH, "%s: checkpoint version %u, this build reads version %d", name,
                              h->version, XTTS_CKPT_VERSION);
    if (xtts_get_le32(p + 12) != XTTS_CKPT_HEADER_BYTES)
        return xtts_error_set(err, XTTS_ECORRUPT, "%s: header size %u, expected %d", name, xtts_get_le32(p + 12),
                              XTTS_CKPT_HEADER_BYTES);
    uint32_t crc = xtts_crc32(0, p, 252);
    if (crc != xtts_get_le32(p + 252))
        return xtts_error_set(err, XTTS_ECORRUPT, "%s: header checksum mismatch (stored %08x, computed %08x)", name,
                              xtts_get_le32(p + 252), crc);
    int32_t d[7];
    for (int i = 0; i < 7; i++) d[i] = (int32_t)xtts_get_le32(p + 16 + 4 * i);
    h->model = (xtts_model_config){d[0], d[1], d[2], d[3], d[4], d[5], d[6]};
    h->batch_size = xtts_get_le32(p + 44);
    h->num_parameters = get_u64(p + 48);
    h->step = get_u64(p + 56);
    h->seed = get_u64(p + 64);
    h->epoch = get_u64(p + 72);
    h->batch_in_epoch = get_u64(p + 80);
    h->payload_bytes = get_u64(p + 88);
    memcpy(h->cache_config_hash, p + 96, 64);
    h->cache_config_hash[64] = '\0';
    h->payload_crc = xtts_get_le32(p + 160);
    xtts_error sub;
    if (xtts_model_config_check(&h->model, &sub) != XTTS_OK)
        return xtts_error_set(err, XTTS_ECORRUPT, "%s: %s", name, sub.msg);
    if (h->num_parameters != xtts_model_num_parameters(&h->model))
        return xtts_error_set(err, XTTS_ECORRUPT, "%s: %llu parameters stored, the model it names has %zu", name,
                              (unsigned long long)h->num_parameters, xtts_model_num_parameters(&h->model));
    if (h->payload_bytes != h->num_parameters * 12)
        return xtts_error_set(err, XTTS_ECORRUPT, "%s: payload of %llu bytes, expected %llu", name,
                              (unsigned long long)h->payload_bytes, (unsigned long long)h->num_parameters * 12);
    if (h->batch_size == 0) return xtts_error_set(err, XTTS_ECORRUPT, "%s: batch size 0", name);
    for (int i = 0; i < 64; i++) {
        char c = h->cache_config_hash[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
            return xtts_error_set(err, XTTS_ECORRUPT, "%s: cache configuration hash is not hex", name);
    }
    return XTTS_OK;
}

xtts_status xtts_ckpt_check(const xtts_ckpt_header *h, const char *name, const xtts_model_config *m,
                            const char *cache_config_hash, uint32_t batch_size, xtts_error *err) {
    const xtts_model_config *c = &h->model;
    if (c->n_layer != m->n_layer || c->channels != m->channels || c->n_head != m->n_head)
        return xtts_error_set(err, XTTS_EMISMATCH,
                              "%s: checkpoint of another model size (%d layers, width %d, %d heads; this run: %d, %d, %d)",
                              name, c->n_layer, c->channels, c->n_head, m->n_layer, m->channels, m->n_head);
    if (c->n_mels != m->n_mels || c->vocab_size != m->vocab_size || c->max_text_pos != m->max_text_pos ||
        c->max_mel_pos != m->max_mel_pos)
        return xtts_error_set(err, XTTS_EMISMATCH,
                              "%s: checkpoint made for another cache shape (n_mels %d, vocabulary %d, positions %d/%d; "
                              "this cache: %d, %d, %d/%d)",
                              name, c->n_mels, c->vocab_size, c->max_text_pos, c->max_mel_pos, m->n_mels, m->vocab_size,
                              m->max_text_pos, m->max_mel_pos);
    if (strcmp(h->cache_config_hash, cache_config_hash) != 0)
        return xtts_error_set(err, XTTS_EMISMATCH,
                              "%s: checkpoint trained on a cache with another configuration (hash %.12s..., this cache %.12s...)",
                              name, h->cache_config_hash, cache_config_hash);
    if (h->batch_size != batch_size)
        return xtts_error_set(err, XTTS_EMISMATCH,
                              "%s: checkpoint trained with --batch-size %u, this run asks for %u (resume needs the same)",
                              name, h->batch_size, batch_size);
    return XTTS_OK;
}

xtts_status xtts_ckpt_save(const char *path, xtts_ckpt_header *h, const float *params, const float *m,
                           const float *v, xtts_error *err) {
    size_t P = h->num_parameters, bytes = XTTS_CKPT_HEADER_BYTES + 12 * P;
    uint8_t *buf = malloc(bytes);
    if (!buf) return xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory for a %zu-byte checkpoint", path, bytes);
    /* float32 little-endian: this is the host layout on every target xtts-train builds for */
    memcpy(buf + XTTS_CKPT_HEADER_BYTES, params, 4 * P);
    memcpy(buf + XTTS_CKPT_HEADER_BYTES + 4 * P, m, 4 * P);
    memcpy(buf + XTTS_CKPT_HEADER_BYTES + 8 * P, v, 4 * P);
    h->version = XTTS_CKPT_VERSION;
    h->payload_bytes = 12 * P;
    h->payload_crc = xtts_crc32(0, buf + XTTS_CKPT_HEADER_BYTES, 12 * P);
    xtts_ckpt_encode_header(h, buf);
    xtts_status st = xtts_write_file_atomic(path, buf, bytes, err);
    free(buf);
    return st;
}

/* A checkpoint opened for reading in *out. It is read twice (its header before the model is
 * allocated, then the whole file), so it must be a regular file: a FIFO or a pipe given as
 * /dev/fd/N would give its bytes to the first read only, and the second would wait for a
 * writer for ever. O_NONBLOCK keeps open() itself from waiting on a FIFO. */
static xtts_status open_checkpoint(const char *path, FILE **out, xtts_error *err) {
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return xtts_error_set(err, XTTS_EIO, "%s: cannot open checkpoint: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || fcntl(fd, F_SETFL, O_RDONLY) != 0) {
        close(fd);
        return xtts_error_set(err, XTTS_EINPUT,
                              "%s: not a regular file (a checkpoint is read twice: header, then payload)", path);
    }
    if (!(*out = fdopen(fd, "rb"))) {
        int e = errno;
        close(fd);
        return xtts_error_set(err, XTTS_EIO, "%s: cannot open checkpoint: %s", path, strerror(e));
    }
    return XTTS_OK;
}

xtts_status xtts_ckpt_read_header(const char *path, xtts_ckpt_header *h, xtts_error *err) {
    FILE *f;
    xtts_status st = open_checkpoint(path, &f, err);
    if (st) return st;
    uint8_t hdr[XTTS_CKPT_HEADER_BYTES];
    size_t n = fread(hdr, 1, sizeof hdr, f);
    fclose(f);
    return xtts_ckpt_parse_header(hdr, n, path, h, err);
}

xtts_status xtts_ckpt_load(const char *path, xtts_ckpt_header *h, float *params, float *m, float *v,
                           size_t expected_params, xtts_error *err) {
    FILE *f;
    xtts_status st = open_checkpoint(path, &f, err);
    if (st) return st;
    uint8_t hdr[XTTS_CKPT_HEADER_BYTES];
    size_t n = fread(hdr, 1, sizeof hdr, f);
    st = xtts_ckpt_parse_header(hdr, n, path, h, err);
    if (st) goto done;
    if (h->num_parameters != expected_params) {
        st = xtts_error_set(err, XTTS_EMISMATCH, "%s: %llu parameters, this model has %zu", path,
                            (unsigned long long)h->num_parameters, expected_params);
        goto done;
    }
    size_t P = expected_params;
    uint32_t crc = 0;
    float *dst[3] = {params, m, v};
    for (int i = 0; i < 3; i++) {
        if (fread(dst[i], 4, P, f) != P) {
            st = xtts_error_set(err, XTTS_ECORRUPT, "%s: truncated (payload shorter than %llu bytes)", path,
                                (unsigned long long)h->payload_bytes);
            goto done;
        }
        crc = xtts_crc32(crc, dst[i], 4 * P);
    }
    if (fgetc(f) != EOF) {
        st = xtts_error_set(err, XTTS_ECORRUPT, "%s: bytes after the payload", path);
        goto done;
    }
    if (crc != h->payload_crc)
        st = xtts_error_set(err, XTTS_ECORRUPT, "%s: payload checksum mismatch (stored %08x, computed %08x)", path,
                            h->payload_crc, crc);
done:
    fclose(f);
    return st;
}
