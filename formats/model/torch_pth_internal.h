/* torch_pth_internal.h — what the restricted unpickler (torch_pickle.c) hands to the
 * model-file reader (torch_pth.c): the tensors a data.pkl describes, not yet read. */
#ifndef XTTS_TORCH_PTH_INTERNAL_H
#define XTTS_TORCH_PTH_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "common/xtts_common.h"
#include "formats/model/torch_pth.h"

/* Element types of torch storages, as torch.*Storage names them. */
typedef enum {
    XTTS_PTH_FLOAT32,
    XTTS_PTH_FLOAT16,
    XTTS_PTH_BFLOAT16,
    XTTS_PTH_FLOAT64,
    XTTS_PTH_INT64,
    XTTS_PTH_INT32,
    XTTS_PTH_INT16,
    XTTS_PTH_INT8,
    XTTS_PTH_UINT8,
    XTTS_PTH_BOOL,
} xtts_pth_dtype;

/* Bytes per element and the dtype's torch name ("float32", ...). */
size_t xtts_pth_dtype_size(xtts_pth_dtype t);
const char *xtts_pth_dtype_name(xtts_pth_dtype t);

/* One tensor named by the pickle: a contiguous run of numel elements of storage
 * storage_key starting at element offset. Sizes are checked non-negative and their
 * product checked against overflow; the storage bounds are checked by the reader. */
typedef struct {
    char *name;          /* dotted key path, "" for a top-level tensor */
    char *storage_key;   /* the N of ARCHIVE/data/N */
    xtts_pth_dtype dtype;
    uint64_t storage_numel; /* elements the storage declares */
    uint64_t offset;     /* first element in the storage */
    int ndim;
    int64_t shape[XTTS_PTH_MAX_DIMS];
    uint64_t numel;
} xtts_pth_ref;

typedef struct {
    xtts_pth_ref *refs;
    size_t n, cap;
} xtts_pth_refs;

/* Interpret data.pkl (pkl[0, len)) with the restricted unpickler and list the tensors its
 * result holds, in the order the pickle names them. label names the file in messages.
 * Errors: XTTS_EINPUT (an opcode or global outside the allowlist, a malformed pickle, a
 * tensor that is not contiguous or has bad sizes; the message names the offset or key),
 * XTTS_ERANGE (the values built exceed the interpreter's memory bound), XTTS_ENOMEM. */
xtts_status xtts_pth_unpickle(const uint8_t *pkl, size_t len, const char *label, xtts_pth_refs *out,
                              xtts_error *err);

/* Free what xtts_pth_unpickle or xtts_pth_refs_add filled. A zeroed struct is allowed. */
void xtts_pth_refs_free(xtts_pth_refs *r);

/* Append a copy of ref (its strings duplicated). Errors: XTTS_ENOMEM. */
xtts_status xtts_pth_refs_add(xtts_pth_refs *r, const xtts_pth_ref *ref, const char *name, const char *key);

/* The tensor table that xtts_pth_open fills (torch_pth.c, by torch.save's pickle; or
 * torch_safetensors.c) through xtts_pth_add_tensor (torch_tensor.c). */
struct xtts_pth {
    xtts_pth_tensor *t;
    size_t n, cap;
    const xtts_pth_tensor **by_name; /* sorted by name, for xtts_pth_find */
    uint64_t bytes, bytes_max;       /* float32 bytes held, and the bound on them */
    char *label;                     /* the file, for xtts_pth_expect's messages */
};

/* Read a .safetensors file in data[0, size) into the tensor table of f (torch_pth.c).
 * Errors: XTTS_EINPUT, XTTS_ERANGE, XTTS_ENOMEM, as xtts_pth_open. */
struct xtts_pth;
xtts_status xtts_pth_read_safetensors(struct xtts_pth *f, const uint8_t *data, size_t size, const char *label,
                                      xtts_error *err);

/* Add a tensor to f's table, converting numel elements of dtype at src to float32 (src
 * may be unaligned). The name is copied. Errors: XTTS_EINPUT (a duplicate name),
 * XTTS_ERANGE (the table's float32 copies would pass the reader's memory bound),
 * XTTS_ENOMEM. */
xtts_status xtts_pth_add_tensor(struct xtts_pth *f, const char *name, xtts_pth_dtype dtype, int ndim,
                                const int64_t *shape, uint64_t numel, const uint8_t *src, const char *label,
                                xtts_error *err);

#endif
