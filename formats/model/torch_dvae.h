/* torch_dvae.h — the weights of Coqui's DiscreteVAE encoder (kernels/dvae.h) and the mel
 * norms, taken from model files read by formats/model/torch_pth.h, by Coqui's key names
 * (docs/model-files.md, "Coqui's files").
 *
 * XTTS-v2's dvae.pth is a flat state dict; a checkpoint that nests it under one key (e.g.
 * "model.") is found by the key of its first convolution. The sizes are read from the
 * shapes (channels, hidden, codebook size) and every other tensor is checked against them:
 * a missing key or another shape is an error naming the key, never random weights as
 * Coqui's load_state_dict(strict=False) would leave.
 */
#ifndef XTTS_TORCH_DVAE_H
#define XTTS_TORCH_DVAE_H

#include "common/xtts_common.h"
#include "formats/model/torch_pth.h"
#include "kernels/dvae.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Fill w with pointers into f's tensors (valid until xtts_pth_close(f)).
 * Errors: XTTS_ENOTFOUND (a key missing: "dvae.pth: key 'encoder.2.net.0.weight' missing"),
 * XTTS_EMISMATCH (a shape that does not fit the others), XTTS_EINPUT (no DiscreteVAE
 * encoder in the file, or two of them). */
xtts_status xtts_dvae_weights_from_pth(const xtts_pth *f, xtts_dvae_weights *w, xtts_error *err);

/* The mel norms of a file holding one tensor (torch.save(tensor), as mel_stats.pth) of
 * n_mels values, every one finite and positive. *norms points into f.
 * Errors: XTTS_ENOTFOUND (the file is a dict, not one tensor), XTTS_EMISMATCH (another
 * shape), XTTS_EINPUT (a value zero, negative or not finite: the index is named). */
xtts_status xtts_mel_norms_from_pth(const xtts_pth *f, int n_mels, const float **norms, xtts_error *err);

#ifdef __cplusplus
}
#endif

#endif
