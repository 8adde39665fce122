/* png_internal.h — what the two mel pictures of cache/ share (the bare picture of inspect.c and
 * the figure of figure.c): one libpng writer and one colour range. Not installed. */
#ifndef XTTS_PNG_INTERNAL_H
#define XTTS_PNG_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cache/inspect.h"

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

#endif
