/* cuda_plugin.h — where the CUDA code lives: a plugin, libxtts-cuda.so, that the programs
 * load the first time a CUDA device is asked for, so one build runs on CPU-only nodes (no
 * CUDA library needed to start) and on GPU nodes alike.
 *
 * The plugin holds kernels/mel.cu and train/train_cuda.cu with their own copies of the
 * common and mel helpers, linked against cuFFT, cuBLAS and the CUDA runtime; it exports only
 * the xtts_cudaplugin_* functions. Inside the plugin (XTTS_CUDA_PLUGIN defined) the public
 * names of kernels/mel_cuda.h and train/train_cuda.h are those prefixed names; in the
 * programs the same public names are small forwarding functions (kernels/mel_cuda_host.c,
 * train/train_cuda_host.c) that look the plugin's functions up here.
 *
 * Where the plugin is looked for, first hit wins: $XTTS_CUDA_PLUGIN (a file path); next to
 * the program as ../lib/xtts-prep/libxtts-cuda.so (an install) or ../lib/libxtts-cuda.so (the
 * build tree: build/bin, build/tests); XTTS_CUDA_PLUGIN_DIR/libxtts-cuda.so (the configured
 * install directory). A plugin from another version or build is refused (ABI string).
 */
#ifndef XTTS_CUDA_PLUGIN_H
#define XTTS_CUDA_PLUGIN_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What the program and the plugin must agree on: the plugin interface's own version and the
 * release, whose structs (xtts_mel_params, xtts_model, ...) cross between them. */
#define XTTS_CUDA_PLUGIN_ABI "xtts-cuda-plugin 3 " XTTS_VERSION

/* The address of the plugin's function `name` (an xtts_cudaplugin_* name), loading the
 * plugin on first use. NULL when the plugin cannot be found or loaded, or lacks the name;
 * then why (may be NULL) says why in one line. Thread-safe. */
void *xtts_cuda_plugin_symbol(const char *name, char *why, size_t why_len);

#ifdef XTTS_CUDA_PLUGIN
#define xtts_cuda_device_usable xtts_cudaplugin_device_usable
#define xtts_cuda_plugin_abi xtts_cudaplugin_abi
#define xtts_mel_cuda_new xtts_cudaplugin_mel_cuda_new
#define xtts_mel_cuda_delete xtts_cudaplugin_mel_cuda_delete
#define xtts_mel_cuda_compute_batch xtts_cudaplugin_mel_cuda_compute_batch
#define xtts_cuda_trainer_new xtts_cudaplugin_trainer_new
#define xtts_cuda_trainer_delete xtts_cudaplugin_trainer_delete
#define xtts_cuda_trainer_pin xtts_cudaplugin_trainer_pin
#define xtts_cuda_trainer_upload xtts_cudaplugin_trainer_upload
#define xtts_cuda_trainer_download xtts_cudaplugin_trainer_download
#define xtts_cuda_trainer_stage xtts_cudaplugin_trainer_stage
#define xtts_cuda_trainer_forward xtts_cudaplugin_trainer_forward
#define xtts_cuda_trainer_step xtts_cudaplugin_trainer_step
/* The plugin's ABI string (XTTS_CUDA_PLUGIN_ABI as the plugin was built). */
const char *xtts_cuda_plugin_abi(void);
#endif

#ifdef __cplusplus
}
#endif
#endif
