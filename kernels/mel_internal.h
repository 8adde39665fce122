/* mel_internal.h — what the mel kernels share with each other and with their tests, outside
 * the library's API (not installed by `make install`).
 */
#ifndef XTTS_MEL_INTERNAL_H
#define XTTS_MEL_INTERNAL_H

#include "common/xtts_common.h"
#include "kernels/mel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The dense filterbank [n_mels][n_fft/2+1] (as torchaudio/librosa build it): the CPU and
 * CUDA paths make their sparse projections from it; the tests compare it with librosa's.
 * Errors: XTTS_EUSAGE (p fails xtts_mel_params_check). */
xtts_status xtts_mel_filterbank(const xtts_mel_params *p, float *fb, xtts_error *err);

#ifdef __cplusplus
}
#endif
#endif
