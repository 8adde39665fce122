/* torch_save.c — a state dict written as torch.save writes it (torch_save.h): the pickle of the
 * dict and the stored zip around it. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/model/torch_save.h"

#define ARCHIVE "archive"
#define ALIGN 64

/* ---- the pickle ------------------------------------------------------------------------ */

typedef struct {
    uint8_t *p;
    size_t n, cap;
    int oom;
} bytes;

static void put(bytes *b, const void *s, size_t n) {
    if (b->oom) return;
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + n) cap *= 2;
        uint8_t *p = realloc(b->p, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->p = p, b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
}

static void op(bytes *b, uint8_t c) { put(b, &c, 1); }

static void le32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static void str(bytes *b, const char *s) { /* BINUNICODE */
    uint8_t h[5] = {'X'};
    le32(h + 1, (uint32_t)strlen(s));
    put(b, h, 5);
    put(b, s, strlen(s));
}

static void integer(bytes *b, int64_t v) { /* BININT, or LONG1 of 8 bytes */
    if (v >= INT32_MIN && v <= INT32_MAX) {
        uint8_t h[5] = {'J'};
        le32(h + 1, (uint32_t)(int32_t)v);
        put(b, h, 5);
        return;
    }
    uint8_t h[10] = {0x8a, 8};
    for (int i = 0; i < 8; i++) h[2 + i] = (uint8_t)((uint64_t)v >> (8 * i));
    put(b, h, 10);
}

static void global(bytes *b, const char *module, const char *name) {
    op(b, 'c');
    put(b, module, strlen(module));
    op(b, '\n');
    put(b, name, strlen(name));
    op(b, '\n');
}

static const char *storage_type(const char *dtype) {
    if (!dtype || !strcmp(dtype, "float32")) return "FloatStorage";
    if (!strcmp(dtype, "float16")) return "HalfStorage";
    if (!strcmp(dtype, "bfloat16")) return "BFloat16Storage";
    if (!strcmp(dtype, "int64")) return "LongStorage";
    return NULL;
}

static size_t numel_of(const xtts_pth_out_tensor *t) {
    size_t n = 1;
    for (int d = 0; d < t->ndim; d++) n *= (size_t)t->shape[d];
    return n;
}

/* _rebuild_tensor_v2(('storage', torch.XStorage, key, 'cpu', numel), 0, size, stride, False,
 * OrderedDict()) */
static void tensor(bytes *b, const xtts_pth_out_tensor *t, size_t key) {
    char k[32];
    snprintf(k, sizeof k, "%zu", key);
    global(b, "torch._utils", "_rebuild_tensor_v2");
    op(b, '(');
    op(b, '(');
    str(b, "storage");
    global(b, "torch", storage_type(t->dtype));
    str(b, k);
    str(b, "cpu");
    integer(b, (int64_t)numel_of(t));
    op(b, 't');
    op(b, 'Q');
    integer(b, 0);
    op(b, '(');
    for (int d = 0; d < t->ndim; d++) integer(b, t->shape[d]);
    op(b, 't');
    op(b, '(');
    int64_t stride = 1, strides[8];
    for (int d = t->ndim - 1; d >= 0; d--) strides[d] = stride, stride *= t->shape[d];
    for (int d = 0; d < t->ndim; d++) integer(b, strides[d]);
    op(b, 't');
    op(b, 0x89); /* requires_grad False */
    global(b, "collections", "OrderedDict");
    op(b, ')');
    op(b, 'R');
    op(b, 't');
    op(b, 'R');
}

static void pickle(bytes *b, const char *top_key, const xtts_pth_out_tensor *t, size_t n) {
    uint8_t proto[2] = {0x80, 2};
    put(b, proto, 2);
    if (top_key) {
        op(b, '}');
        str(b, top_key);
    }
    global(b, "collections", "OrderedDict");
    op(b, ')');
    op(b, 'R');
    op(b, '(');
    for (size_t i = 0; i < n; i++) {
        str(b, t[i].name);
        tensor(b, &t[i], i);
    }
    op(b, 'u');
    if (top_key) op(b, 's');
    op(b, '.');
}

/* ---- the zip --------------------------------------------------------------------------- */

typedef struct {
    FILE *f;
    uint64_t off;
    bytes cd; /* the central directory, built as entries are written */
    size_t n_entries;
    int failed;
} zip;

static void zput(zip *z, const void *p, size_t n) {
    if (!z->failed && fwrite(p, 1, n, z->f) != n) z->failed = 1;
    z->off += n;
}

/* one stored entry whose data starts on an ALIGN boundary (torch's "FB" extra field pads it) */
static void zip_entry(zip *z, const char *name, const void *data, size_t len) {
    size_t nl = strlen(name), pad = (ALIGN - (size_t)((z->off + 30 + nl + 4) % ALIGN)) % ALIGN;
    uint32_t crc = xtts_crc32(0, data, len);
    uint8_t h[30] = {0x50, 0x4b, 3, 4, 20, 0, 0, 0, 0, 0, 0, 0, 0x21, 0};
    le32(h + 14, crc), le32(h + 18, (uint32_t)len), le32(h + 22, (uint32_t)len);
    h[26] = (uint8_t)nl, h[27] = (uint8_t)(nl >> 8), h[28] = (uint8_t)(pad + 4), h[29] = (uint8_t)((pad + 4) >> 8);
    uint8_t c[46] = {0x50, 0x4b, 1, 2, 20, 0, 20, 0, 0, 0, 0, 0, 0, 0, 0x21, 0};
    le32(c + 16, crc), le32(c + 20, (uint32_t)len), le32(c + 24, (uint32_t)len);
    c[28] = h[26], c[29] = h[27];
    le32(c + 42, (uint32_t)z->off);
    put(&z->cd, c, 46);
    put(&z->cd, name, nl);
    z->n_entries++;
    if (z->off + 30 + nl + 4 + pad + len > UINT32_MAX) z->failed = 2;
    zput(z, h, 30);
    zput(z, name, nl);
    uint8_t extra[4 + ALIGN] = {'F', 'B', (uint8_t)pad, 0};
    zput(z, extra, 4 + pad);
    zput(z, data, len);
}

static void zip_end(zip *z) {
    uint64_t cd_off = z->off;
    zput(z, z->cd.p, z->cd.n);
    uint8_t e[22] = {0x50, 0x4b, 5, 6};
    e[8] = e[10] = (uint8_t)z->n_entries, e[9] = e[11] = (uint8_t)(z->n_entries >> 8);
    le32(e + 12, (uint32_t)z->cd.n), le32(e + 16, (uint32_t)cd_off);
    if (z->n_entries > 0xffff || cd_off > UINT32_MAX) z->failed = 2;
    zput(z, e, 22);
}

/* tensor i's bytes as stored (float32 as given, or rounded to float16 / bfloat16) */
static void *stored_bytes(const xtts_pth_out_tensor *t, size_t *len) {
    size_t n = numel_of(t);
    if (!t->dtype || !strcmp(t->dtype, "float32")) {
        *len = n * 4;
        return (void *)t->data;
    }
    if (!strcmp(t->dtype, "int64")) {
        int64_t *q = malloc((n ? n : 1) * 8);
        for (size_t i = 0; q && i < n; i++) q[i] = (int64_t)t->data[i];
        *len = n * 8;
        return q;
    }
    uint16_t *h = malloc((n ? n : 1) * 2);
    if (!h) return NULL;
    if (!strcmp(t->dtype, "float16")) xtts_f32_to_f16_n(t->data, h, n);
    else
        for (size_t i = 0; i < n; i++) {
            uint32_t u;
            memcpy(&u, &t->data[i], 4);
            h[i] = (u & 0x7fffffffu) > 0x7f800000u ? (uint16_t)((u >> 16) | 0x40) : (uint16_t)((u + 0x7fffu + ((u >> 16) & 1)) >> 16);
        }
    *len = n * 2;
    return h;
}

static xtts_status write_all(zip *z, const char *top_key, const xtts_pth_out_tensor *t, size_t n, xtts_error *err) {
    bytes pk = {0};
    pickle(&pk, top_key, t, n);
    if (pk.oom) return xtts_error_set(err, XTTS_ENOMEM, "torch.save: out of memory for the pickle");
    zip_entry(z, ARCHIVE "/data.pkl", pk.p, pk.n);
    free(pk.p);
    for (size_t i = 0; i < n && !z->failed; i++) {
        size_t len;
        void *data = stored_bytes(&t[i], &len);
        if (!data) return xtts_error_set(err, XTTS_ENOMEM, "torch.save: out of memory for %s", t[i].name);
        char name[64];
        snprintf(name, sizeof name, ARCHIVE "/data/%zu", i);
        zip_entry(z, name, data, len);
        if (data != t[i].data) free(data);
    }
    zip_entry(z, ARCHIVE "/version", "3\n", 2);
    zip_end(z);
    return z->cd.oom ? xtts_error_set(err, XTTS_ENOMEM, "torch.save: out of memory") : XTTS_OK;
}

xtts_status xtts_pth_save(const char *path, const char *top_key, const xtts_pth_out_tensor *t, size_t n,
                          xtts_error *err) {
    for (size_t i = 0; i < n; i++) {
        if (!storage_type(t[i].dtype) || t[i].ndim < 0 || t[i].ndim > 8)
            return xtts_error_set(err, XTTS_EUSAGE, "%s: tensor %s: dtype %s, %d dimensions not writable", path,
                                  t[i].name, t[i].dtype ? t[i].dtype : "float32", t[i].ndim);
        for (size_t j = 0; t[i].dtype && !strcmp(t[i].dtype, "int64") && j < numel_of(&t[i]); j++)
            if (t[i].data[j] != (float)(int64_t)t[i].data[j] || fabsf(t[i].data[j]) > 16777216.0f)
                return xtts_error_set(err, XTTS_ERANGE, "%s: tensor %s: %g is not an int64 that float32 holds exactly",
                                      path, t[i].name, t[i].data[j]);
    }
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    zip z = {.f = fopen(tmp, "wb")};
    if (!z.f) return xtts_error_set(err, XTTS_EIO, "%s: cannot write: %s", tmp, strerror(errno));
    xtts_status st = write_all(&z, top_key, t, n, err);
    free(z.cd.p);
    /* on the disk before the rename: a crash then leaves the old file or the whole new one */
    if (!st && !z.failed && (fflush(z.f) || fsync(fileno(z.f)))) z.failed = 1;
    if (fclose(z.f) && !st && !z.failed) z.failed = 1;
    if (!st && z.failed == 2) st = xtts_error_set(err, XTTS_ERANGE, "%s: over 4 GiB (no zip64 here)", path);
    else if (!st && z.failed) st = xtts_error_set(err, XTTS_EIO, "%s: cannot write: %s", tmp, strerror(errno));
    if (!st && rename(tmp, path)) st = xtts_error_set(err, XTTS_EIO, "%s: cannot rename into place: %s", path, strerror(errno));
    if (st) remove(tmp);
    else { /* the rename itself on the disk: fsync of the directory (a failure there is not the file's) */
        char dir[4200];
        const char *slash = strrchr(path, '/');
        snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) + (slash == path) : 1, slash ? path : ".");
        int fd = open(dir, O_RDONLY | O_DIRECTORY);
        if (fd >= 0) fsync(fd), close(fd);
    }
    return st;
}
