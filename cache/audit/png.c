/* png.c — colormaps, the libpng writer and the bare mel picture (see png.h). */
#include "cache/audit/png.h"

#include <errno.h>
#include <math.h>
#include <png.h>
#include <stdlib.h>
#include <string.h>

FILE *xtts_out_open(const char *path, xtts_error *err) {
    if (!strcmp(path, "-")) return stdout;
    FILE *f = fopen(path, "wb");
    if (!f) xtts_error_set(err, XTTS_EIO, "%s: %s", path, strerror(errno));
    return f;
}

xtts_status xtts_out_close(FILE *f, const char *path, xtts_error *err) {
    int bad = ferror(f);
    if (f == stdout) bad |= fflush(f) != 0;
    else bad |= fclose(f) != 0;
    return bad ? xtts_error_set(err, XTTS_EIO, "%s: write failed", path) : XTTS_OK;
}

int xtts_colormap_parse(const char *s) {
    if (!strcmp(s, "viridis")) return XTTS_CMAP_VIRIDIS;
    if (!strcmp(s, "magma")) return XTTS_CMAP_MAGMA;
    if (!strcmp(s, "gray") || !strcmp(s, "grey")) return XTTS_CMAP_GRAY;
    return -1;
}

static const double viridis_c[7][3] = {
    {0.2777273272234177, 0.005407344544966578, 0.3340998053353061},
    {0.1050930431085774, 1.404613529898575, 1.384590162594685},
    {-0.3308618287255563, 0.214847559468213, 0.09509516302823659},
    {-4.634230498983486, -5.799100973351585, -19.33244095627987},
    {6.228269936347081, 14.17993336680509, 56.69055260068105},
    {4.776384997670288, -13.74514537774601, -65.35303263337234},
    {-5.435455855934631, 4.645852612178535, 26.3124352495832},
};

static const double magma_c[7][3] = {
    {-0.002136485053939582, -0.000749655052795221, -0.005386127855323933},
    {0.2516605407371642, 0.6775232436837668, 2.494026599312351},
    {8.353717279216625, -3.577719514958484, 0.3144679030132573},
    {-27.66873308576866, 14.26473078096533, -13.64921318813922},
    {52.17613981234068, -27.94360607168351, 12.94416944238394},
    {-50.76852536473588, 29.04658282127291, 4.23415299384598},
    {18.65570506591883, -11.48977351997711, -5.601961508734096},
};

void xtts_colormap_rgb(xtts_colormap cm, double x, uint8_t rgb[3]) {
    if (!(x >= 0)) x = 0; /* NaN too */
    if (x > 1) x = 1;
    if (cm == XTTS_CMAP_GRAY) {
        rgb[0] = rgb[1] = rgb[2] = (uint8_t)lround(x * 255);
        return;
    }
    const double(*c)[3] = cm == XTTS_CMAP_MAGMA ? magma_c : viridis_c;
    for (int k = 0; k < 3; k++) {
        double v = c[6][k];
        for (int i = 5; i >= 0; i--) v = v * x + c[i][k];
        if (v < 0) v = 0;
        if (v > 1) v = 1;
        rgb[k] = (uint8_t)lround(v * 255);
    }
}

void xtts_png_options_defaults(xtts_png_options *o) {
    memset(o, 0, sizeof *o);
    o->cmap = XTTS_CMAP_VIRIDIS;
}

typedef struct {
    FILE *f;
    const char *path;
    xtts_error *err;
} png_io;

static void png_err(png_structp p, png_const_charp msg) {
    png_io *io = png_get_error_ptr(p);
    xtts_error_set(io->err, XTTS_EIO, "%s: libpng: %s", io->path, msg);
    png_longjmp(p, 1);
}

static void png_warn(png_structp p, png_const_charp msg) {
    (void)p;
    (void)msg;
}

xtts_status xtts_png_write_rgb_stream(FILE *f, const char *name, size_t w, size_t h, xtts_png_row_fn row, void *ctx,
                                      xtts_error *err) {
    uint8_t *volatile scratch = malloc(w * 3);
    if (!scratch) return xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", name);
    png_io io = {f, name, err};
    png_structp p = png_create_write_struct(PNG_LIBPNG_VER_STRING, &io, png_err, png_warn);
    png_infop info = p ? png_create_info_struct(p) : NULL;
    if (!p || !info) {
        png_destroy_write_struct(&p, NULL);
        free(scratch);
        return xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", name);
    }
    if (setjmp(png_jmpbuf(p))) {
        png_destroy_write_struct(&p, &info);
        free(scratch);
        return err ? err->code : XTTS_EIO;
    }
    png_init_io(p, f);
    png_set_IHDR(p, info, (png_uint_32)w, (png_uint_32)h, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(p, info);
    for (size_t y = 0; y < h; y++) png_write_row(p, row(ctx, y, scratch));
    png_write_end(p, info);
    png_destroy_write_struct(&p, &info);
    free(scratch);
    return XTTS_OK;
}

xtts_status xtts_png_write_rgb(const char *path, size_t w, size_t h, xtts_png_row_fn row, void *ctx, xtts_error *err) {
    FILE *f = xtts_out_open(path, err);
    if (!f) return XTTS_EIO;
    xtts_status st = xtts_png_write_rgb_stream(f, path, w, h, row, ctx, err);
    if (st) {
        if (f != stdout) fclose(f);
        return st;
    }
    return xtts_out_close(f, path, err);
}

void xtts_png_value_range(const float *mel, size_t n_mels, size_t n_frames, size_t stride, const xtts_png_options *o,
                          double *lo, double *hi) {
    if (o->fixed_range) {
        *lo = o->vmin, *hi = o->vmax;
        return;
    }
    *lo = INFINITY, *hi = -INFINITY;
    for (size_t c = 0; c < n_mels; c++)
        for (size_t t = 0; t < n_frames; t++) {
            double v = mel[c * stride + t];
            if (!isfinite(v)) continue;
            if (v < *lo) *lo = v;
            if (v > *hi) *hi = v;
        }
    if (!(*lo <= *hi)) *lo = 0, *hi = 1;
}

/* The bare picture: one pixel block per (frame, channel), scaled to W x H. */
typedef struct {
    const float *mel;
    size_t n_mels, n_frames, stride, W, H;
    double lo, span;
    xtts_colormap cmap;
} bare_mel;

static const uint8_t *bare_mel_row(void *ctx, size_t y, uint8_t *rgb) {
    const bare_mel *b = ctx;
    size_t c = b->n_mels - 1 - (y * b->n_mels / b->H); /* top row of the picture = highest channel */
    for (size_t x = 0; x < b->W; x++)
        xtts_colormap_rgb(b->cmap, (b->mel[c * b->stride + x * b->n_frames / b->W] - b->lo) / b->span, rgb + 3 * x);
    return rgb;
}

xtts_status xtts_png_write_mel(const char *path, const float *mel, size_t n_mels, size_t n_frames, size_t stride,
                               const xtts_png_options *o, xtts_error *err) {
    if (!n_mels || !n_frames) return xtts_error_set(err, XTTS_EINPUT, "%s: empty mel, nothing to draw", path);
    int scale = o->scale > 0 ? o->scale : 1;
    size_t W = o->width > 0 ? (size_t)o->width : n_frames * (size_t)scale;
    size_t H = o->height > 0 ? (size_t)o->height : n_mels * (size_t)scale;
    if (W > 100000 || H > 100000)
        return xtts_error_set(err, XTTS_ERANGE, "%s: picture of %zux%zu pixels is too large", path, W, H);
    double lo, hi;
    xtts_png_value_range(mel, n_mels, n_frames, stride, o, &lo, &hi);
    bare_mel b = {mel, n_mels, n_frames, stride, W, H, lo, hi > lo ? hi - lo : 1, o->cmap};
    return xtts_png_write_rgb(path, W, H, bare_mel_row, &b, err);
}
