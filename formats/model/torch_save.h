/* torch_save.h — writes a state dict as torch.save writes it (the zip format of PyTorch 1.6 and
 * later), so that torch.load, torch.load(weights_only=True) and Coqui's loaders read it: a zip
 * archive (entries stored, CRC-32 checked) of ARCHIVE/data.pkl, ARCHIVE/version ("3") and
 * ARCHIVE/data/N, one entry per tensor. data.pkl is a protocol-2 pickle of
 * {top_key: OrderedDict(name -> tensor)} (or the OrderedDict itself when top_key is NULL) that
 * uses only the globals torch's weights-only unpickler and this project's restricted reader
 * (torch_pth.h) allow: collections.OrderedDict, torch._utils._rebuild_tensor_v2 and the storage
 * types. Tensors are contiguous, float32, float16 or bfloat16 (given as float32 values and
 * rounded to nearest even), or int64 (given as float32 values, integers of at most 2^24 in
 * magnitude, as the reader gives int64 tensors such as BatchNorm's num_batches_tracked).
 *
 * Limits: no zip64, so the file must stay under 4 GiB; names are UTF-8 without NUL.
 */
#ifndef XTTS_TORCH_SAVE_H
#define XTTS_TORCH_SAVE_H

#include <stddef.h>
#include <stdint.h>

#include "common/xtts_common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    const char *name;
    int ndim;          /* 0 to 8 */
    int64_t shape[8];
    const float *data; /* product(shape) values, row-major */
    const char *dtype; /* "float32" (NULL too), "float16", "bfloat16" or "int64": how it is stored */
} xtts_pth_out_tensor;

/* Writes the tensors to path (path.tmp first, then renamed over path). The data entries are
 * aligned to 64 bytes, as torch.save aligns them.
 * Errors: XTTS_EUSAGE (an unknown dtype, more than 8 dimensions), XTTS_ERANGE (over 4 GiB, an
 * int64 value that is not an integer of at most 2^24),
 * XTTS_EIO (cannot write or rename; the message names the file), XTTS_ENOMEM. */
xtts_status xtts_pth_save(const char *path, const char *top_key, const xtts_pth_out_tensor *t, size_t n,
                          xtts_error *err);

#ifdef __cplusplus
}
#endif
#endif
