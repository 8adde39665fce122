/* png.h — the pictures of the audit tools: colormaps, the libpng writer (to a path or an open
 * stream) and the bare mel picture. The figure with axes (figure.h), xtts-cache-inspect --png
 * (inspect.c) and the report's strips (report_svg.c) draw through it. Not installed.
 */
#ifndef XTTS_CACHE_PNG_H
#define XTTS_CACHE_PNG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/xtts_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An output file of the pictures and of inspect's .npy export: path opened for writing, "-"
 * standard output; NULL with err set (XTTS_EIO) when it cannot be opened. */
FILE *xtts_out_open(const char *path, xtts_error *err);
/* Close what xtts_out_open gave (standard output is flushed, not closed).
 * Errors: XTTS_EIO (a write or the close failed). */
xtts_status xtts_out_close(FILE *f, const char *path, xtts_error *err);

typedef enum { XTTS_CMAP_VIRIDIS = 0, XTTS_CMAP_MAGMA = 1, XTTS_CMAP_GRAY = 2 } xtts_colormap;
/* "viridis", "magma", "gray" -> colormap; -1 when unknown. */
int xtts_colormap_parse(const char *s);
/* Colour of x in [0, 1] (clamped) under a colormap. */
void xtts_colormap_rgb(xtts_colormap cm, double x, uint8_t rgb[3]);

typedef struct {
    xtts_colormap cmap;
    int width, height;   /* the mel's area in pixels; 0 = frames x n_mels times scale */
    int scale;           /* pixels per frame and per channel when width/height are 0; 0 = automatic:
                            1 for the bare picture, at least 800 x 320 pixels for the figure */
    int fixed_range;     /* 1: map [vmin, vmax]; 0: the mel's own min..max */
    double vmin, vmax;
    int bare;            /* xtts_inspect_write_png: 1 writes the bare picture (xtts_png_write_mel) */
} xtts_png_options;

void xtts_png_options_defaults(xtts_png_options *o);

/* Write mel float32 [n_mels][stride] (first n_frames columns) as an RGB PNG of the mel's
 * pixels alone: time left to right, low frequencies at the bottom. path "-" is stdout.
 * Errors: XTTS_EINPUT (n_mels or n_frames 0), XTTS_ERANGE (the picture is too large),
 * XTTS_ENOMEM, XTTS_EIO (cannot open or write path, a libpng error). */
xtts_status xtts_png_write_mel(const char *path, const float *mel, size_t n_mels, size_t n_frames, size_t stride,
                               const xtts_png_options *o, xtts_error *err);

/* Row y (0 = top) of the picture as w RGB triples: written into scratch (w * 3 bytes), or a
 * pointer to the caller's own row. */
typedef const uint8_t *(*xtts_png_row_fn)(void *ctx, size_t y, uint8_t *scratch);

/* Write a w x h 8-bit RGB PNG to path ("-": standard output), row by row.
 * Errors: XTTS_ENOMEM, XTTS_EIO (cannot open or write path, a libpng error). */
xtts_status xtts_png_write_rgb(const char *path, size_t w, size_t h, xtts_png_row_fn row, void *ctx, xtts_error *err);

/* As xtts_png_write_rgb, into the open stream f (left open; name is for messages), e.g. a memory
 * stream for a data: URI.
 * Errors: XTTS_ENOMEM, XTTS_EIO (a libpng error, a failed write). */
xtts_status xtts_png_write_rgb_stream(FILE *f, const char *name, size_t w, size_t h, xtts_png_row_fn row, void *ctx,
                                      xtts_error *err);

/* The values the colours span: o's range when fixed, else the mel's finite min..max (0..1
 * when it has no finite value). */
void xtts_png_value_range(const float *mel, size_t n_mels, size_t n_frames, size_t stride, const xtts_png_options *o,
                          double *lo, double *hi);

#ifdef __cplusplus
}
#endif
#endif
