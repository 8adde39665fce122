/* dvae.h — the encoder of Coqui's DiscreteVAE in XTTS's configuration and its codebook
 * search: a clip's normalized log-mel in, one audio code per 4 mel frames out (what
 * `DiscreteVAE.get_codebook_indices` gives the GPT trainer; TTS/tts/layers/xtts/dvae.py).
 *
 * XTTS builds the DVAE with positional_dims=1, num_layers=2, num_resnet_blocks=3,
 * kernel_size=3, stride 2, ReLU, no encoder norm. Its encoder is then:
 *   conv0  Conv1d(channels -> hidden, k3, stride 2, pad 1), ReLU     // (hidden, T1)
 *   conv1  Conv1d(hidden -> 2*hidden, k3, stride 2, pad 1), ReLU    // (inner, T2)
 *   res[3] x + Conv1d_k1(ReLU(Conv1d_k3(ReLU(Conv1d_k3(x)))))      // (inner, T2)
 *   proj   Conv1d(inner -> codebook_dim, k1)                       // (D, T2)
 * and each column of the result takes the index of the nearest codebook entry (squared
 * Euclidean distance, the lowest index on a tie, as torch's max). T1 = (T+1)/2 and
 * T2 = (T1+1)/2, integer division. XTTS-v2: channels 80, hidden 512, D 512, 1024 entries.
 *
 * The weights are the caller's (plain arrays in torch's layouts; formats/model/torch_dvae.h fills
 * them from a checkpoint by Coqui's key names) and must outlive the encoder. An encoder keeps
 * scratch memory between calls: one encoder per thread.
 */
#ifndef XTTS_DVAE_H
#define XTTS_DVAE_H

#include <stddef.h>
#include <stdint.h>

#include "common/xtts_common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define XTTS_DVAE_RES_BLOCKS 3
#define XTTS_DVAE_MAX_FRAMES (1 << 24) /* mel frames of one clip (about 53 hours at hop 256, 22050 Hz) */

typedef struct {
    int channels;     /* mel channels in (80) */
    int hidden;       /* conv0's output channels (512); the residual blocks have 2*hidden */
    int codebook_dim; /* D: proj's output channels and the codebook entries' length (512) */
    int num_tokens;   /* codebook entries (1024 in XTTS-v2) */
} xtts_dvae_config;

/* Conv weights are (out, in, kernel) row-major, biases (out); the codebook is Quantize's
 * `embed`, (codebook_dim, num_tokens) row-major. res_w[b][0] and [1] are the kernel-3
 * convs of block b (net.0, net.2), res_w[b][2] the kernel-1 conv (net.4). */
typedef struct {
    xtts_dvae_config cfg;
    const float *conv0_w, *conv0_b;
    const float *conv1_w, *conv1_b;
    const float *res_w[XTTS_DVAE_RES_BLOCKS][3], *res_b[XTTS_DVAE_RES_BLOCKS][3];
    const float *proj_w, *proj_b;
    const float *codebook;
} xtts_dvae_weights;

typedef struct xtts_dvae xtts_dvae;

/* Codes for a clip of frames mel frames (0 for 0 frames). */
size_t xtts_dvae_codes_len(size_t frames);

/* Make an encoder over w (borrowed). Errors: XTTS_EUSAGE (a size below 1 or past 65536
 * tokens, a missing array), XTTS_ENOMEM. */
xtts_status xtts_dvae_new(const xtts_dvae_weights *w, xtts_dvae **out, xtts_error *err);

/* Encode one clip: mel is (channels, frames) row-major, already divided by the mel norms.
 * Writes xtts_dvae_codes_len(frames) codes to codes and, when latent is not NULL, the
 * encoder's output before the search, (codebook_dim, codes) row-major.
 * Errors: XTTS_EUSAGE (frames 0 or over XTTS_DVAE_MAX_FRAMES), XTTS_ENOMEM. */
xtts_status xtts_dvae_encode(xtts_dvae *d, const float *mel, size_t frames, uint16_t *codes, float *latent,
                             xtts_error *err);

/* Free the encoder (not the weights). NULL is allowed. */
void xtts_dvae_delete(xtts_dvae *d);

#ifdef __cplusplus
}
#endif

#endif
