/* torch_tensor.c — the model reader's tensor table: the stored dtypes' names and sizes, and a
 * tensor added as float32 (converted from float16, bfloat16 or float64 as stored), under the
 * reader's memory bound. Shared by the torch.save reader (torch_pth.c) and the .safetensors
 * reader (torch_safetensors.c). */
#include "formats/model/torch_pth.h"

#include <stdlib.h>
#include <string.h>

#include "formats/model/torch_pth_internal.h"

size_t xtts_pth_dtype_size(xtts_pth_dtype t) {
    static const size_t sizes[] = {4, 2, 2, 8, 8, 4, 2, 1, 1, 1};
    return sizes[t];
}

const char *xtts_pth_dtype_name(xtts_pth_dtype t) {
    static const char *names[] = {"float32", "float16", "bfloat16", "float64", "int64", "int32", "int16", "int8", "uint8", "bool"};
    return names[t];
}

/* Convert n elements of dtype at src (any alignment, little-endian) to float32. */
static void convert(xtts_pth_dtype dtype, const uint8_t *src, size_t n, float *dst) {
    size_t es = xtts_pth_dtype_size(dtype);
    if (dtype == XTTS_PTH_FLOAT32) {
        memcpy(dst, src, n * 4);
        return;
    }
    for (size_t k = 0; k < n; k++, src += es) {
        uint16_t h;
        uint32_t b;
        double d;
        int64_t i64;
        int32_t i32;
        int16_t i16;
        switch (dtype) {
        case XTTS_PTH_FLOAT16: memcpy(&h, src, 2); dst[k] = xtts_f16_to_f32(h); break;
        case XTTS_PTH_BFLOAT16:
            memcpy(&h, src, 2);
            b = (uint32_t)h << 16;
            memcpy(&dst[k], &b, 4);
            break;
        case XTTS_PTH_FLOAT64: memcpy(&d, src, 8); dst[k] = (float)d; break;
        case XTTS_PTH_INT64: memcpy(&i64, src, 8); dst[k] = (float)i64; break;
        case XTTS_PTH_INT32: memcpy(&i32, src, 4); dst[k] = (float)i32; break;
        case XTTS_PTH_INT16: memcpy(&i16, src, 2); dst[k] = (float)i16; break;
        case XTTS_PTH_INT8: dst[k] = (float)(int8_t)src[0]; break;
        case XTTS_PTH_UINT8: dst[k] = (float)src[0]; break;
        case XTTS_PTH_BOOL: dst[k] = src[0] != 0; break;
        default: dst[k] = 0; break;
        }
    }
}

xtts_status xtts_pth_add_tensor(xtts_pth *f, const char *name, xtts_pth_dtype dtype, int ndim, const int64_t *shape,
                                uint64_t numel, const uint8_t *src, const char *label, xtts_error *err) {
    if (numel > (f->bytes_max - f->bytes) / 4)
        return xtts_error_set(err, XTTS_ERANGE,
                              "%s: tensor '%s': %llu values; the file's tensors as float32 would pass %llu MiB (storages shared many times?)",
                              label, name, (unsigned long long)numel, (unsigned long long)(f->bytes_max >> 20));
    if (f->n == f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 64;
        xtts_pth_tensor *t = realloc(f->t, cap * sizeof *t);
        if (!t) return xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", label);
        f->t = t;
        f->cap = cap;
    }
    xtts_pth_tensor *t = &f->t[f->n];
    memset(t, 0, sizeof *t);
    char *copy = strdup(name);
    float *data = malloc(numel ? (size_t)numel * 4 : 4);
    if (!copy || !data) {
        free(copy);
        free(data);
        return xtts_error_set(err, XTTS_ENOMEM, "%s: tensor '%s': out of memory for %llu values", label, name,
                              (unsigned long long)numel);
    }
    convert(dtype, src, (size_t)numel, data);
    t->name = copy;
    t->ndim = ndim;
    memcpy(t->shape, shape, (size_t)ndim * sizeof *shape);
    t->numel = (size_t)numel;
    t->data = data;
    t->stored_dtype = xtts_pth_dtype_name(dtype);
    f->bytes += numel * 4;
    f->n++;
    return XTTS_OK;
}
