/* train_cuda.h — the xtts-train step on a CUDA device: the model of train/model.h with
 * cuBLAS for the matrix products and kernels for the rest, whose per-element math is the
 * functions of train/train_math.h that the CPU path runs.
 *
 * The host keeps the model (train/model.h) for its shape, initial weights and checkpoints;
 * the device holds parameters, gradients, AdamW moments and activations. Batches are
 * copied from the loader's slots (pinned with xtts_cuda_trainer_pin) on a copy stream, and
 * the compute stream waits on the copy's event.
 *
 * Unlike the CPU path, results are not bit-reproducible (embedding gradients are summed
 * with atomics). A build without nvcc gets train/train_cuda_host.c, where every call
 * returns XTTS_EUNSUPPORTED.
 *
 * Errors of every call below: XTTS_EUNSUPPORTED (a build without CUDA, or the CUDA plugin or
 * its function cannot be loaded) and XTTS_EIO (any CUDA or cuBLAS call fails, an allocation
 * on the device included: unlike kernels/mel_cuda.h, device out-of-memory is not
 * XTTS_ENOMEM here). The "Errors:" lines name what a call adds.
 */
#ifndef XTTS_TRAIN_CUDA_H
#define XTTS_TRAIN_CUDA_H

#include <stddef.h>

#include "common/xtts_common.h"
#include "train/model.h"
#include "train/optim.h"
#include "kernels/cuda_plugin.h" /* the plugin's names, inside the plugin */

#ifdef __cplusplus
extern "C" {
#endif

typedef struct xtts_cuda_trainer xtts_cuda_trainer;

/* How the device's matrix products round (docs/xtts-train.md, "Precision"). Everything else
 * (layer norms, softmax, losses, the gradient norm, AdamW, the master weights and moments)
 * is float32 in every mode.
 *   FP32: float32 products (cuBLAS's default math; PyTorch's default on the same GPU).
 *   TF32: TF32 tensor cores: operands rounded to 10-bit mantissas, float32 accumulation.
 *   BF16: bf16 tensor cores: operands rounded to bf16, float32 accumulation and outputs, as
 *         PyTorch's torch.autocast(dtype=torch.bfloat16) rounds its matrix products' inputs. */
typedef enum { XTTS_PRECISION_FP32 = 0, XTTS_PRECISION_TF32 = 1, XTTS_PRECISION_BF16 = 2 } xtts_precision;

/* Allocate the device copy of m (same config, B_max, T_max) on device ordinal, computing at
 * the given precision, and upload m's parameters; moments start at zero.
 * Errors: XTTS_EUSAGE (a precision not in the enum), XTTS_ENOMEM (host memory), besides the
 * common ones. On an error after the host object exists, *out is set and
 * xtts_cuda_trainer_delete frees it. */
xtts_status xtts_cuda_trainer_new(const xtts_model *m, int ordinal, xtts_precision precision, xtts_cuda_trainer **out,
                                  xtts_error *err);
/* NULL is allowed. */
void xtts_cuda_trainer_delete(xtts_cuda_trainer *t);

/* Page-lock host memory that batches are copied from (a loader slot's buffers).
 * Errors: the common ones only. */
xtts_status xtts_cuda_trainer_pin(xtts_cuda_trainer *t, void *ptr, size_t bytes, xtts_error *err);

/* Parameters and AdamW moments, host <-> device (each num_parameters floats).
 * Errors: the common ones only. */
xtts_status xtts_cuda_trainer_upload(xtts_cuda_trainer *t, const float *params, const float *m, const float *v,
                                     xtts_error *err);
xtts_status xtts_cuda_trainer_download(xtts_cuda_trainer *t, float *params, float *m, float *v, xtts_error *err);

/* Start copying a batch to the device (asynchronous; the host buffers must stay untouched
 * until the next step or forward returns).
 * Errors: XTTS_ERANGE (the batch does not fit the device buffers), besides the common ones. */
xtts_status xtts_cuda_trainer_stage(xtts_cuda_trainer *t, const xtts_model_batch *bt, xtts_error *err);

/* On the staged batch: forward only (validation), or a whole step (forward, backward,
 * clipping, AdamW with lr at 1-based step t_step). Blocks until the losses are known.
 * Errors: the common ones only. */
xtts_status xtts_cuda_trainer_forward(xtts_cuda_trainer *t, float *loss, float *mel_loss, float *stop_loss,
                                      int *frames, xtts_error *err);
xtts_status xtts_cuda_trainer_step(xtts_cuda_trainer *t, long t_step, float lr, const xtts_optim_config *o,
                                   float *loss, float *mel_loss, float *stop_loss, float *grad_norm, xtts_error *err);

#ifdef __cplusplus
}
#endif
#endif
