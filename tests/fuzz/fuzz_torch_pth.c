/* fuzz_torch_pth.c — libFuzzer target for the model-file reader (formats/model/torch_pth.h).
 * The first byte picks what the rest is:
 *   even: a whole file (torch.save zip, safetensors, anything), read as xtts_pth_open would;
 *   odd:  a data.pkl, put into a torch.save zip built here with storages "0" (64 float32),
 *         "1" (64 float16) and "2" (64 bytes), so that mutations reach the unpickler
 *         instead of stopping at the zip's CRC-32.
 * Whatever the bytes, the reader returns a status without reading out of bounds, and a
 * file it accepts has tensors whose every value can be read and found again by name, and
 * which the DVAE's and the mel norms' binders (formats/model/torch_dvae.h) take or refuse. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/xtts_common.h"
#include "formats/model/torch_dvae.h"
#include "formats/model/torch_pth.h"

typedef struct {
    uint8_t *b;
    size_t n;
} zbuf;

static void put(zbuf *o, const void *p, size_t n) {
    memcpy(o->b + o->n, p, n);
    o->n += n;
}
static void put16(zbuf *o, unsigned v) {
    uint8_t c[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
    put(o, c, 2);
}
static void put32(zbuf *o, uint32_t v) {
    put16(o, v & 0xffff);
    put16(o, v >> 16);
}

/* A stored zip of the given entries (the layout torch.save writes, less its alignment). */
static size_t zip_stored(uint8_t *out, const char **names, const uint8_t **data, const size_t *len, int n) {
    zbuf o = {out, 0};
    uint32_t offs[4], crcs[4];
    for (int i = 0; i < n; i++) {
        offs[i] = (uint32_t)o.n;
        crcs[i] = xtts_crc32(0, data[i], len[i]);
        put32(&o, 0x04034b50); put16(&o, 20); put16(&o, 0); put16(&o, 0); put16(&o, 0); put16(&o, 0);
        put32(&o, crcs[i]); put32(&o, (uint32_t)len[i]); put32(&o, (uint32_t)len[i]);
        put16(&o, (unsigned)strlen(names[i])); put16(&o, 0);
        put(&o, names[i], strlen(names[i]));
        put(&o, data[i], len[i]);
    }
    uint32_t cd = (uint32_t)o.n;
    for (int i = 0; i < n; i++) {
        put32(&o, 0x02014b50); put16(&o, 20); put16(&o, 20); put16(&o, 0); put16(&o, 0); put16(&o, 0); put16(&o, 0);
        put32(&o, crcs[i]); put32(&o, (uint32_t)len[i]); put32(&o, (uint32_t)len[i]);
        put16(&o, (unsigned)strlen(names[i])); put16(&o, 0); put16(&o, 0); put16(&o, 0); put16(&o, 0); put32(&o, 0);
        put32(&o, offs[i]);
        put(&o, names[i], strlen(names[i]));
    }
    uint32_t cd_size = (uint32_t)o.n - cd;
    put32(&o, 0x06054b50); put16(&o, 0); put16(&o, 0); put16(&o, (unsigned)n); put16(&o, (unsigned)n);
    put32(&o, cd_size); put32(&o, cd); put16(&o, 0);
    return o.n;
}

static void check_accepted(const xtts_pth *f) {
    volatile float sink = 0;
    for (size_t i = 0; i < xtts_pth_count(f); i++) {
        const xtts_pth_tensor *t = xtts_pth_tensor_at(f, i);
        if (xtts_pth_find(f, t->name) != t || t->ndim < 0 || t->ndim > XTTS_PTH_MAX_DIMS) __builtin_trap();
        size_t numel = 1;
        for (int d = 0; d < t->ndim; d++) numel *= (size_t)t->shape[d];
        if (numel != t->numel) __builtin_trap();
        for (size_t k = 0; k < t->numel; k++) sink += t->data[k];
    }
    /* the DVAE's and the norms' binders take any table: an answer, one line */
    xtts_dvae_weights w;
    const float *norms;
    xtts_error err;
    if (xtts_dvae_weights_from_pth(f, &w, &err) != XTTS_OK && strchr(err.msg, '\n')) __builtin_trap();
    if (xtts_mel_norms_from_pth(f, 8, &norms, &err) != XTTS_OK && strchr(err.msg, '\n')) __builtin_trap();
    (void)sink;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1 || size > (1u << 20)) return 0;
    uint8_t mode = data[0];
    data++, size--;
    uint8_t *zip = NULL;
    const uint8_t *file = data;
    size_t file_len = size;
    if (mode & 1) {
        static uint8_t s0[256], s1[128], s2[64];
        for (int k = 0; k < 64; k++) {
            float v = (float)k;
            memcpy(s0 + 4 * k, &v, 4);
            uint16_t h = xtts_f32_to_f16(v / 8);
            memcpy(s1 + 2 * k, &h, 2);
            s2[k] = (uint8_t)k;
        }
        const char *names[4] = {"archive/data.pkl", "archive/data/0", "archive/data/1", "archive/data/2"};
        const uint8_t *parts[4] = {data, s0, s1, s2};
        size_t lens[4] = {size, sizeof s0, sizeof s1, sizeof s2};
        zip = malloc(size + 1024);
        if (!zip) return 0;
        file_len = zip_stored(zip, names, parts, lens, 4);
        file = zip;
    }
    xtts_pth *f = NULL;
    xtts_error err;
    if (xtts_pth_open_mem(file, file_len, "fuzz", &f, &err) == XTTS_OK) check_accepted(f);
    else if (strchr(err.msg, '\n')) __builtin_trap(); /* one line, always */
    xtts_pth_close(f);
    free(zip);
    return 0;
}
