/* torch_pth.h — tensors from PyTorch checkpoints (torch.save's zip format) and
 * .safetensors files, read without running any of the file's code (docs/model-files.md).
 *
 * A .pth written by torch.save (PyTorch 1.6 and later) is a zip archive holding
 * ARCHIVE/data.pkl, a pickle, and ARCHIVE/data/KEY, one entry per storage. torch.load runs
 * that pickle, which may call any Python function it names. Here the pickle is read by a
 * restricted interpreter that knows the opcodes torch.save emits and only the globals
 * that build dicts and tensors (collections.OrderedDict, torch._utils._rebuild_tensor_v2,
 * torch._utils._rebuild_parameter, the torch.*Storage types); any other global, and any
 * call of something that is not one of those, is refused by name with the pickle offset.
 * Nothing is executed: the interpreter only builds values.
 *
 * What it returns is a table of float32 tensors by name: a state dict (dict or
 * OrderedDict of tensors, nested dicts joined with '.', as "model.encoder.0.0.weight"), or
 * a single tensor (torch.save(tensor), e.g. Coqui's mel_stats.pth), named "". Values that
 * are not tensors (numbers, strings, lists of them) are read and dropped. float32, float16
 * and bfloat16 tensors are accepted (the others are read as float32); tensors must be
 * contiguous; every tensor is checked to lie inside its storage and every storage inside
 * its zip entry, with sizes that cannot overflow. A .safetensors file (8-byte header
 * length, JSON header, data) with F32, F16 or BF16 tensors gives the same table.
 * The legacy (pre-1.6) torch.save format is refused with a line saying how to re-save it.
 *
 * Errors name the file and the tensor's key or the pickle's byte offset, in one line:
 *   dvae.pth: data.pkl offset 1234: global os.system not allowed
 */
#ifndef XTTS_TORCH_PTH_H
#define XTTS_TORCH_PTH_H

#include <stddef.h>
#include <stdint.h>

#include "common/xtts_common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define XTTS_PTH_MAX_DIMS 8
#define XTTS_PTH_MAX_PICKLE (64u << 20)         /* bytes of data.pkl, and of a safetensors header */
#define XTTS_PTH_MAX_ENTRY ((uint64_t)16 << 30) /* bytes of one storage once read */

/* One tensor of the file, in float32, owned by the file (valid until xtts_pth_close). */
typedef struct {
    const char *name;                  /* "" for a file that is one tensor */
    int ndim;                          /* 0 (a scalar) to XTTS_PTH_MAX_DIMS */
    int64_t shape[XTTS_PTH_MAX_DIMS];
    size_t numel;                      /* product of shape (1 for a scalar) */
    const float *data;                 /* numel values, row-major */
    const char *stored_dtype;          /* "float32", "float16" or "bfloat16" */
} xtts_pth_tensor;

typedef struct xtts_pth xtts_pth;

/* Open a model file: a torch.save zip or a .safetensors file (by content, not by name).
 * Every tensor is read, checked and converted before it returns.
 * Errors: XTTS_ENOTFOUND (no such file), XTTS_EIO (cannot open or map it), XTTS_EINPUT
 * (not a zip or safetensors file, the legacy format, a corrupt or truncated archive, a
 * pickle that uses a global or opcode outside the allowlist, a tensor outside its storage,
 * a non-contiguous tensor, an unsupported dtype; the message names the key or offset),
 * XTTS_ERANGE (an entry or header over the limits above), XTTS_ENOMEM. */
xtts_status xtts_pth_open(const char *path, xtts_pth **out, xtts_error *err);

/* The same from bytes in memory; label names them in messages. The bytes are not kept.
 * Errors: as xtts_pth_open, but XTTS_ENOTFOUND and XTTS_EIO. */
xtts_status xtts_pth_open_mem(const void *data, size_t size, const char *label, xtts_pth **out, xtts_error *err);

/* The tensor named name ("" for a single-tensor file), or NULL. */
const xtts_pth_tensor *xtts_pth_find(const xtts_pth *f, const char *name);

/* Number of tensors, and tensor i in the file's order (0 <= i < count). */
size_t xtts_pth_count(const xtts_pth *f);
const xtts_pth_tensor *xtts_pth_tensor_at(const xtts_pth *f, size_t i);

/* The tensor named name, checked to have exactly the ndim dimensions in shape; the
 * error names the file, the key and both shapes.
 * Errors: XTTS_ENOTFOUND (no tensor of that name), XTTS_EMISMATCH (another shape). */
xtts_status xtts_pth_expect(const xtts_pth *f, const char *name, int ndim, const int64_t *shape,
                            const xtts_pth_tensor **out, xtts_error *err);

/* The file's name as given to xtts_pth_open (or the label of xtts_pth_open_mem). */
const char *xtts_pth_label(const xtts_pth *f);

/* Free the file and its tensors. NULL is allowed. */
void xtts_pth_close(xtts_pth *f);

#ifdef __cplusplus
}
#endif

#endif
