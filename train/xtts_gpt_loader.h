/* xtts_gpt_loader.h — batches for XTTS's GPT from an xtts cache, as Coqui's XTTSDataset and
 * GPTTrainer.format_batch_on_device make them, with nothing left to compute on the training
 * device: a record's BPE ids (the cache's tokens), its DVAE codes (the cache's codes directory,
 * by the record's content key), its waveform's length, and the conditioning mel of a slice of its
 * stored waveform chosen as get_prompt_slice chooses it (random length in [min, max]
 * conditioning samples and random start in training; the middle length from sample 0 in
 * evaluation; half the clip when it is shorter), zero-padded to the longest slice and turned
 * into the style encoder's TorchMelSpectrogram (n_fft 2048, hop 256, window 1024, 80 mels
 * 0-8000 Hz, log, divided by the mel norms the codes directory records).
 *
 * Records Coqui would skip are left out when the loader starts: shorter than half a second,
 * longer than max_wav_length samples or max_text_length tokens. The training split is
 * shuffled every epoch from the seed and the epoch alone (Coqui draws a random language, then
 * a random clip: the draws differ, the distribution of clips is the same for one language);
 * the validation split is read in order, once.
 *
 * Limits: one thread (no prefetch yet); the cache must store the waveform (--audio int16|flac)
 * at 22,050 Hz and have a codes directory (xtts-cache-codes).
 */
#ifndef XTTS_TRAIN_XTTS_GPT_LOADER_H
#define XTTS_TRAIN_XTTS_GPT_LOADER_H

#include <stdint.h>

#include "cache/store/read/reader.h"
#include "common/xtts_common.h"
#include "train/xtts_gpt.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int batch_size;
    uint64_t seed;
    int split;             /* XTTS_SPLIT_TRAIN (shuffled, endless) or XTTS_SPLIT_VAL (in order, once) */
    const char *codes_dir; /* a codes directory (path or name in the cache); NULL: the cache's only one */
} xtts_gpt_loader_options;

typedef struct xtts_gpt_loader xtts_gpt_loader;

/* A loader over cache (borrowed; must outlive it) for the model c and the recipe r's lengths.
 * Errors: XTTS_EUSAGE (batch size), XTTS_ENOTFOUND (no codes directory, or several and none
 * named; a split without records), XTTS_EMISMATCH (a cache not at 22,050 Hz or without stored
 * waveforms, codes of another codebook size than the model's), those of the cache and codes
 * readers (XTTS_ECORRUPT ...), XTTS_ENOMEM. */
xtts_status xtts_gpt_loader_new(xtts_cache *cache, const xtts_gpt_config *c, const xtts_gpt_recipe *r,
                                const xtts_gpt_loader_options *opt, xtts_gpt_loader **out, xtts_error *err);
void xtts_gpt_loader_delete(xtts_gpt_loader *l); /* NULL is fine */

/* Records the loader's split keeps. */
uint64_t xtts_gpt_loader_count(const xtts_gpt_loader *l);

/* The next batch (owned by the loader, valid until the next call). In evaluation its
 * cond_idxs is NULL (GPTTrainer.eval_step), in training it is the slices' [start, end) when
 * r->masking_gt_prompt. Errors: XTTS_ENOTFOUND (the validation pass is over), a record's read
 * errors naming the shard, index and id (XTTS_ECORRUPT; no codes for it), XTTS_ENOMEM. */
xtts_status xtts_gpt_loader_next(xtts_gpt_loader *l, const xtts_gpt_batch **out, xtts_error *err);

/* The style encoder's conditioning mel of n samples (zero-padded to pad_to; 0 for none) into
 * out (n_mels, frames), frames = max(n, pad_to) / 256 + 1, divided by norms (n_mels values). For
 * the loader and its test. Errors: XTTS_EINPUT (too short), XTTS_ENOMEM. */
xtts_status xtts_gpt_style_mel(const float *wav, size_t n, size_t pad_to, const float *norms, float *out,
                               size_t *frames, xtts_error *err);

#ifdef __cplusplus
}
#endif
#endif
