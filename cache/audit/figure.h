/* figure.h — a record's mel as a readable figure (figure.c), drawn through png.h. Not
 * installed. */
#ifndef XTTS_CACHE_FIGURE_H
#define XTTS_CACHE_FIGURE_H

#include <stddef.h>

#include "cache/audit/png.h"
#include "common/mel_params.h"
#include "common/xtts_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a figure says besides the mel. */
typedef struct {
    const char *title;          /* one line above the mel (characters outside ASCII drawn as '?'); NULL: none */
    const xtts_mel_params *mel; /* the axes: seconds from sample_rate and hop, Hz where the preset's mel
                                   scale puts them (fmin..fmax), the colour bar's unit from the log kind;
                                   NULL: frames, channels and "stored value" */
} xtts_png_labels;

/* Write the mel as a readable figure (figure.c): the spectrogram (scaled as
 * xtts_png_options says) in a frame, a time axis in seconds below it, a frequency axis in Hz
 * left of it with ticks where those frequencies fall on the mel scale, a colour bar with
 * ticks in the stored units and the unit's name right of it, the title above; black on
 * white, drawn with a built-in 5x7 font at twice its size.
 * Errors: XTTS_EINPUT (n_mels or n_frames 0), XTTS_ERANGE (over 60 million pixels),
 * XTTS_ENOMEM, XTTS_EIO (cannot open or write path, a libpng error). */
xtts_status xtts_png_write_figure(const char *path, const float *mel, size_t n_mels, size_t n_frames, size_t stride,
                                  const xtts_png_labels *labels, const xtts_png_options *o, xtts_error *err);

#ifdef __cplusplus
}
#endif
#endif
