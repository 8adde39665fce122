/* torch_safetensors.c — .safetensors files for the model-file reader (torch_pth.h):
 * an 8-byte little-endian header length, a JSON header naming each tensor's dtype, shape
 * and byte range in the data that follows, then the data. Only JSON is parsed; nothing in
 * the file is executed by any reader, which is the point of the format. */
#include <jansson.h>
#include <string.h>

#include "formats/model/torch_pth_internal.h"

static const struct {
    const char *name;
    xtts_pth_dtype dtype;
} st_dtypes[] = {
    {"F32", XTTS_PTH_FLOAT32}, {"F16", XTTS_PTH_FLOAT16}, {"BF16", XTTS_PTH_BFLOAT16}, {"F64", XTTS_PTH_FLOAT64},
    {"I64", XTTS_PTH_INT64},   {"I32", XTTS_PTH_INT32},   {"I16", XTTS_PTH_INT16},     {"I8", XTTS_PTH_INT8},
    {"U8", XTTS_PTH_UINT8},    {"BOOL", XTTS_PTH_BOOL},
};

/* One header entry: check it against the data (data_size bytes at data) and add it. */
static xtts_status add_entry(struct xtts_pth *f, const char *name, json_t *v, const uint8_t *data, uint64_t data_size,
                             const char *label, xtts_error *err) {
    json_t *dt = json_object_get(v, "dtype"), *shape = json_object_get(v, "shape"), *offs = json_object_get(v, "data_offsets");
    if (!json_is_string(dt) || !json_is_array(shape) || !json_is_array(offs) || json_array_size(offs) != 2 ||
        !json_is_integer(json_array_get(offs, 0)) || !json_is_integer(json_array_get(offs, 1)))
        return xtts_error_set(err, XTTS_EINPUT, "%s: tensor '%s': header entry needs dtype, shape and two data_offsets",
                              label, name);
    int found = -1;
    for (size_t k = 0; k < sizeof st_dtypes / sizeof st_dtypes[0]; k++)
        if (strcmp(json_string_value(dt), st_dtypes[k].name) == 0) found = (int)k;
    if (found < 0)
        return xtts_error_set(err, XTTS_EINPUT, "%s: tensor '%s': dtype %.16s not supported", label, name, json_string_value(dt));
    xtts_pth_dtype dtype = st_dtypes[found].dtype;
    size_t ndim = json_array_size(shape);
    if (ndim > XTTS_PTH_MAX_DIMS)
        return xtts_error_set(err, XTTS_EINPUT, "%s: tensor '%s': %zu dimensions (at most %d)", label, name, ndim, XTTS_PTH_MAX_DIMS);
    int64_t dims[XTTS_PTH_MAX_DIMS];
    uint64_t numel = 1, bytes;
    for (size_t d = 0; d < ndim; d++) {
        json_t *x = json_array_get(shape, d);
        if (!json_is_integer(x) || json_integer_value(x) < 0)
            return xtts_error_set(err, XTTS_EINPUT, "%s: tensor '%s': shape[%zu] is not a non-negative integer", label, name, d);
        dims[d] = json_integer_value(x);
        if (__builtin_mul_overflow(numel, (uint64_t)dims[d], &numel))
            return xtts_error_set(err, XTTS_EINPUT, "%s: tensor '%s': sizes overflow", label, name);
    }
    json_int_t b = json_integer_value(json_array_get(offs, 0)), e = json_integer_value(json_array_get(offs, 1));
    if (__builtin_mul_overflow(numel, (uint64_t)xtts_pth_dtype_size(dtype), &bytes) || b < 0 || e < b ||
        (uint64_t)e > data_size || (uint64_t)(e - b) != bytes)
        return xtts_error_set(err, XTTS_EINPUT,
                              "%s: tensor '%s': data_offsets [%lld, %lld] do not hold its %llu %s values inside the %llu data bytes",
                              label, name, (long long)b, (long long)e, (unsigned long long)numel,
                              xtts_pth_dtype_name(dtype), (unsigned long long)data_size);
    return xtts_pth_add_tensor(f, name, dtype, (int)ndim, dims, numel, data + b, label, err);
}

xtts_status xtts_pth_read_safetensors(struct xtts_pth *f, const uint8_t *data, size_t size, const char *label,
                                      xtts_error *err) {
    uint64_t n = 0;
    for (int k = 7; k >= 0; k--) n = n << 8 | data[k];
    if (n > XTTS_PTH_MAX_PICKLE)
        return xtts_error_set(err, XTTS_ERANGE, "%s: safetensors header of %llu bytes (at most %u)", label,
                              (unsigned long long)n, XTTS_PTH_MAX_PICKLE);
    if (n > size - 8)
        return xtts_error_set(err, XTTS_EINPUT, "%s: safetensors header of %llu bytes runs past the end of the file (truncated?)",
                              label, (unsigned long long)n);
    json_error_t je;
    json_t *root = json_loadb((const char *)data + 8, (size_t)n, JSON_REJECT_DUPLICATES, &je);
    if (!root) return xtts_error_set(err, XTTS_EINPUT, "%s: safetensors header offset %d: %s", label, je.position + 8, je.text);
    xtts_status st = XTTS_OK;
    if (!json_is_object(root)) st = xtts_error_set(err, XTTS_EINPUT, "%s: safetensors header is not a JSON object", label);
    const char *name;
    json_t *v;
    json_object_foreach(root, name, v) {
        if (st != XTTS_OK) break;
        if (strcmp(name, "__metadata__") == 0) continue;
        if (!json_is_object(v)) st = xtts_error_set(err, XTTS_EINPUT, "%s: tensor '%s': header entry is not an object", label, name);
        else st = add_entry(f, name, v, data + 8 + n, size - 8 - n, label, err);
    }
    json_decref(root);
    return st;
}
