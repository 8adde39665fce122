/* figure.c — a record's mel as a readable picture (xtts-cache-inspect --png): the
 * spectrogram with a time axis in seconds, a frequency axis in Hz (ticks where those
 * frequencies fall on the preset's mel scale), a colour bar in the stored units and a title,
 * drawn into an RGB canvas with a built-in 5x7 bitmap font and written with libpng.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/audit/figure.h"
#include "cache/audit/png.h"
#include "kernels/mel_math.h"

/* ---- font: printable ASCII, 5 columns x 7 rows, bit 4 the leftmost column ----------------- */

static const uint8_t font5x7[95][7] = {
    {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}, /* ' ' */
    {0x04, 0x04, 0x04, 0x04, 0x04, 0x00, 0x04}, /* '!' */
    {0x0a, 0x0a, 0x00, 0x00, 0x00, 0x00, 0x00}, /* '"' */
    {0x0a, 0x0a, 0x1f, 0x0a, 0x1f, 0x0a, 0x0a}, /* '#' */
    {0x04, 0x0f, 0x14, 0x0e, 0x05, 0x1e, 0x04}, /* '$' */
    {0x18, 0x19, 0x02, 0x04, 0x08, 0x13, 0x03}, /* '%' */
    {0x0c, 0x12, 0x14, 0x08, 0x15, 0x12, 0x0d}, /* '&' */
    {0x04, 0x04, 0x08, 0x00, 0x00, 0x00, 0x00}, /* '\'' */
    {0x02, 0x04, 0x08, 0x08, 0x08, 0x04, 0x02}, /* '(' */
    {0x08, 0x04, 0x02, 0x02, 0x02, 0x04, 0x08}, /* ')' */
    {0x00, 0x04, 0x15, 0x0e, 0x15, 0x04, 0x00}, /* '*' */
    {0x00, 0x04, 0x04, 0x1f, 0x04, 0x04, 0x00}, /* '+' */
    {0x00, 0x00, 0x00, 0x00, 0x0c, 0x04, 0x08}, /* ',' */
    {0x00, 0x00, 0x00, 0x1f, 0x00, 0x00, 0x00}, /* '-' */
    {0x00, 0x00, 0x00, 0x00, 0x00, 0x0c, 0x0c}, /* '.' */
    {0x00, 0x01, 0x02, 0x04, 0x08, 0x10, 0x00}, /* '/' */
    {0x0e, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0e}, /* '0' */
    {0x04, 0x0c, 0x04, 0x04, 0x04, 0x04, 0x0e}, /* '1' */
    {0x0e, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1f}, /* '2' */
    {0x1f, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0e}, /* '3' */
    {0x02, 0x06, 0x0a, 0x12, 0x1f, 0x02, 0x02}, /* '4' */
    {0x1f, 0x10, 0x1e, 0x01, 0x01, 0x11, 0x0e}, /* '5' */
    {0x06, 0x08, 0x10, 0x1e, 0x11, 0x11, 0x0e}, /* '6' */
    {0x1f, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08}, /* '7' */
    {0x0e, 0x11, 0x11, 0x0e, 0x11, 0x11, 0x0e}, /* '8' */
    {0x0e, 0x11, 0x11, 0x0f, 0x01, 0x02, 0x0c}, /* '9' */
    {0x00, 0x0c, 0x0c, 0x00, 0x0c, 0x0c, 0x00}, /* ':' */
    {0x00, 0x0c, 0x0c, 0x00, 0x0c, 0x04, 0x08}, /* ';' */
    {0x02, 0x04, 0x08, 0x10, 0x08, 0x04, 0x02}, /* '<' */
    {0x00, 0x00, 0x1f, 0x00, 0x1f, 0x00, 0x00}, /* '=' */
    {0x08, 0x04, 0x02, 0x01, 0x02, 0x04, 0x08}, /* '>' */
    {0x0e, 0x11, 0x01, 0x02, 0x04, 0x00, 0x04}, /* '?' */
    {0x0e, 0x11, 0x01, 0x0d, 0x15, 0x15, 0x0e}, /* '@' */
    {0x0e, 0x11, 0x11, 0x1f, 0x11, 0x11, 0x11}, /* 'A' */
    {0x1e, 0x11, 0x11, 0x1e, 0x11, 0x11, 0x1e}, /* 'B' */
    {0x0e, 0x11, 0x10, 0x10, 0x10, 0x11, 0x0e}, /* 'C' */
    {0x1c, 0x12, 0x11, 0x11, 0x11, 0x12, 0x1c}, /* 'D' */
    {0x1f, 0x10, 0x10, 0x1e, 0x10, 0x10, 0x1f}, /* 'E' */
    {0x1f, 0x10, 0x10, 0x1e, 0x10, 0x10, 0x10}, /* 'F' */
    {0x0e, 0x11, 0x10, 0x17, 0x11, 0x11, 0x0f}, /* 'G' */
    {0x11, 0x11, 0x11, 0x1f, 0x11, 0x11, 0x11}, /* 'H' */
    {0x0e, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0e}, /* 'I' */
    {0x07, 0x02, 0x02, 0x02, 0x02, 0x12, 0x0c}, /* 'J' */
    {0x11, 0x12, 0x14, 0x18, 0x14, 0x12, 0x11}, /* 'K' */
    {0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x1f}, /* 'L' */
    {0x11, 0x1b, 0x15, 0x15, 0x11, 0x11, 0x11}, /* 'M' */
    {0x11, 0x11, 0x19, 0x15, 0x13, 0x11, 0x11}, /* 'N' */
    {0x0e, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0e}, /* 'O' */
    {0x1e, 0x11, 0x11, 0x1e, 0x10, 0x10, 0x10}, /* 'P' */
    {0x0e, 0x11, 0x11, 0x11, 0x15, 0x12, 0x0d}, /* 'Q' */
    {0x1e, 0x11, 0x11, 0x1e, 0x14, 0x12, 0x11}, /* 'R' */
    {0x0f, 0x10, 0x10, 0x0e, 0x01, 0x01, 0x1e}, /* 'S' */
    {0x1f, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04}, /* 'T' */
    {0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0e}, /* 'U' */
    {0x11, 0x11, 0x11, 0x11, 0x11, 0x0a, 0x04}, /* 'V' */
    {0x11, 0x11, 0x11, 0x15, 0x15, 0x15, 0x0a}, /* 'W' */
    {0x11, 0x11, 0x0a, 0x04, 0x0a, 0x11, 0x11}, /* 'X' */
    {0x11, 0x11, 0x0a, 0x04, 0x04, 0x04, 0x04}, /* 'Y' */
    {0x1f, 0x01, 0x02, 0x04, 0x08, 0x10, 0x1f}, /* 'Z' */
    {0x0e, 0x08, 0x08, 0x08, 0x08, 0x08, 0x0e}, /* '[' */
    {0x00, 0x10, 0x08, 0x04, 0x02, 0x01, 0x00}, /* '\\' */
    {0x0e, 0x02, 0x02, 0x02, 0x02, 0x02, 0x0e}, /* ']' */
    {0x04, 0x0a, 0x11, 0x00, 0x00, 0x00, 0x00}, /* '^' */
    {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x1f}, /* '_' */
    {0x08, 0x04, 0x02, 0x00, 0x00, 0x00, 0x00}, /* '`' */
    {0x00, 0x00, 0x0e, 0x01, 0x0f, 0x11, 0x0f}, /* 'a' */
    {0x10, 0x10, 0x16, 0x19, 0x11, 0x11, 0x1e}, /* 'b' */
    {0x00, 0x00, 0x0e, 0x10, 0x10, 0x11, 0x0e}, /* 'c' */
    {0x01, 0x01, 0x0d, 0x13, 0x11, 0x11, 0x0f}, /* 'd' */
    {0x00, 0x00, 0x0e, 0x11, 0x1f, 0x10, 0x0e}, /* 'e' */
    {0x06, 0x09, 0x08, 0x1c, 0x08, 0x08, 0x08}, /* 'f' */
    {0x00, 0x0f, 0x11, 0x11, 0x0f, 0x01, 0x0e}, /* 'g' */
    {0x10, 0x10, 0x16, 0x19, 0x11, 0x11, 0x11}, /* 'h' */
    {0x04, 0x00, 0x0c, 0x04, 0x04, 0x04, 0x0e}, /* 'i' */
    {0x02, 0x00, 0x06, 0x02, 0x02, 0x12, 0x0c}, /* 'j' */
    {0x10, 0x10, 0x12, 0x14, 0x18, 0x14, 0x12}, /* 'k' */
    {0x0c, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0e}, /* 'l' */
    {0x00, 0x00, 0x1a, 0x15, 0x15, 0x11, 0x11}, /* 'm' */
    {0x00, 0x00, 0x16, 0x19, 0x11, 0x11, 0x11}, /* 'n' */
    {0x00, 0x00, 0x0e, 0x11, 0x11, 0x11, 0x0e}, /* 'o' */
    {0x00, 0x00, 0x1e, 0x11, 0x1e, 0x10, 0x10}, /* 'p' */
    {0x00, 0x00, 0x0d, 0x13, 0x0f, 0x01, 0x01}, /* 'q' */
    {0x00, 0x00, 0x16, 0x19, 0x10, 0x10, 0x10}, /* 'r' */
    {0x00, 0x00, 0x0e, 0x10, 0x0e, 0x01, 0x1e}, /* 's' */
    {0x08, 0x08, 0x1c, 0x08, 0x08, 0x09, 0x06}, /* 't' */
    {0x00, 0x00, 0x11, 0x11, 0x11, 0x13, 0x0d}, /* 'u' */
    {0x00, 0x00, 0x11, 0x11, 0x11, 0x0a, 0x04}, /* 'v' */
    {0x00, 0x00, 0x11, 0x11, 0x15, 0x15, 0x0a}, /* 'w' */
    {0x00, 0x00, 0x11, 0x0a, 0x04, 0x0a, 0x11}, /* 'x' */
    {0x00, 0x00, 0x11, 0x11, 0x0f, 0x01, 0x0e}, /* 'y' */
    {0x00, 0x00, 0x1f, 0x02, 0x04, 0x08, 0x1f}, /* 'z' */
    {0x02, 0x04, 0x04, 0x08, 0x04, 0x04, 0x02}, /* '{' */
    {0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04}, /* '|' */
    {0x08, 0x04, 0x04, 0x02, 0x04, 0x04, 0x08}, /* '}' */
    {0x00, 0x00, 0x08, 0x15, 0x02, 0x00, 0x00}, /* '~' */
};

enum { GLYPH_SCALE = 2, GLYPH_W = 5 * GLYPH_SCALE, GLYPH_H = 7 * GLYPH_SCALE, ADVANCE = 6 * GLYPH_SCALE };

static const uint8_t INK[3] = {0x20, 0x20, 0x20};
static const uint8_t PAPER[3] = {0xff, 0xff, 0xff};

typedef struct {
    uint8_t *px; /* RGB, row after row */
    int w, h;
} canvas;

static void put(canvas *c, int x, int y, const uint8_t rgb[3]) {
    if (x < 0 || y < 0 || x >= c->w || y >= c->h) return;
    memcpy(c->px + ((size_t)y * (size_t)c->w + (size_t)x) * 3, rgb, 3);
}

static void fill(canvas *c, int x, int y, int w, int h, const uint8_t rgb[3]) {
    for (int j = y; j < y + h; j++)
        for (int i = x; i < x + w; i++) put(c, i, j, rgb);
}

/* Width in pixels of s drawn with the font. */
static int text_width(const char *s) {
    size_t n = strlen(s);
    return n ? (int)n * ADVANCE - (ADVANCE - GLYPH_W) : 0;
}

/* s with its top left corner at (x, y); rotated: turned a quarter left, read bottom to top,
 * (x, y) then the bottom left corner. Characters outside printable ASCII are drawn as '?'. */
static void text(canvas *c, int x, int y, const char *s, int rotated) {
    for (int k = 0; s[k]; k++) {
        unsigned char ch = (unsigned char)s[k];
        const uint8_t *g = font5x7[(ch < 32 || ch > 126 ? '?' : ch) - 32];
        for (int gy = 0; gy < 7; gy++)
            for (int gx = 0; gx < 5; gx++) {
                if (!(g[gy] & (0x10 >> gx))) continue;
                int dx = k * ADVANCE + gx * GLYPH_SCALE, dy = gy * GLYPH_SCALE;
                for (int sy = 0; sy < GLYPH_SCALE; sy++)
                    for (int sx = 0; sx < GLYPH_SCALE; sx++) {
                        if (rotated) put(c, x + dy + sy, y - dx - sx, INK);
                        else put(c, x + dx + sx, y + dy + sy, INK);
                    }
            }
    }
}

/* UTF-8 text as the font can draw it: each character outside ASCII one '?', cut with "..."
 * to at most max_px pixels. */
static void drawable(const char *s, int max_px, char *out, size_t cap) {
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p && n + 1 < cap; p++) {
        if ((*p & 0xc0) == 0x80) continue; /* continuation byte */
        out[n++] = *p < 0x80 && *p >= 0x20 ? (char)*p : '?';
    }
    out[n] = 0;
    size_t fit = max_px > GLYPH_W ? (size_t)((max_px + ADVANCE - GLYPH_W) / ADVANCE) : 0;
    if (n > fit) {
        if (fit > 3) memcpy(out + fit - 3, "...", 3);
        out[fit] = 0;
    }
}

/* ---- ticks ----------------------------------------------------------------------------------- */

/* The smallest step of 1, 2 or 5 times a power of ten that cuts span into at most max_ticks. */
static double nice_step(double span, int max_ticks) {
    if (max_ticks < 1) max_ticks = 1;
    if (!(span > 0)) return 1;
    double raw = span / max_ticks, p = pow(10, floor(log10(raw)));
    static const double m[] = {1, 2, 5, 10};
    for (int i = 0; i < 4; i++)
        if (m[i] * p >= raw) return m[i] * p;
    return 10 * p;
}

/* v as a tick label with the decimals its step needs ("0.5", "12", "-4.25"). */
static void tick_label(double v, double step, char *out, size_t cap) {
    int dec = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
    if (dec > 6) dec = 6;
    if (fabs(v) < step * 1e-6) v = 0;
    snprintf(out, cap, "%.*f", dec, v);
}

/* ---- the figure ------------------------------------------------------------------------------- */

typedef struct {
    const float *mel;
    size_t n_mels, n_frames, stride;
    const xtts_png_labels *l;
    const xtts_png_options *o;
    double lo, hi;
    int x0, y0, pw, ph; /* the spectrogram's area */
    int bar_x;          /* the colour bar's left edge */
} figure;

/* The spectrogram's size: --width/--height, else --scale, else at least 800 x 320 pixels in
 * whole pixels per frame and per channel (at most 4000 x 1024). */
static void plot_size(const figure *f, int *pw, int *ph) {
    const xtts_png_options *o = f->o;
    size_t w = o->scale > 0 ? f->n_frames * (size_t)o->scale : f->n_frames * ((800 + f->n_frames - 1) / f->n_frames);
    size_t h = o->scale > 0 ? f->n_mels * (size_t)o->scale : f->n_mels * ((320 + f->n_mels - 1) / f->n_mels);
    if (o->scale <= 0 && w > 4000) w = 4000;
    if (o->scale <= 0 && h > 1024) h = 1024;
    if (o->width > 0) w = (size_t)o->width;
    if (o->height > 0) h = (size_t)o->height;
    *pw = w > 100000 ? 100000 : (int)w;
    *ph = h > 100000 ? 100000 : (int)h;
}

static void draw_spectrogram(canvas *c, const figure *f) {
    double span = f->hi > f->lo ? f->hi - f->lo : 1;
    for (int y = 0; y < f->ph; y++) {
        size_t ch = f->n_mels - 1 - ((size_t)y * f->n_mels / (size_t)f->ph); /* top row: highest channel */
        for (int x = 0; x < f->pw; x++) {
            size_t t = (size_t)x * f->n_frames / (size_t)f->pw;
            uint8_t rgb[3];
            xtts_colormap_rgb(f->o->cmap, (f->mel[ch * f->stride + t] - f->lo) / span, rgb);
            put(c, f->x0 + x, f->y0 + y, rgb);
        }
    }
    /* the frame around it */
    fill(c, f->x0 - 1, f->y0 - 1, f->pw + 2, 1, INK);
    fill(c, f->x0 - 1, f->y0 + f->ph, f->pw + 2, 1, INK);
    fill(c, f->x0 - 1, f->y0 - 1, 1, f->ph + 2, INK);
    fill(c, f->x0 + f->pw, f->y0 - 1, 1, f->ph + 2, INK);
}

/* Time axis under the spectrogram: seconds (frames without a sample rate). */
static void draw_time_axis(canvas *c, const figure *f) {
    const xtts_mel_params *mp = f->l ? f->l->mel : NULL;
    double per_frame = mp && mp->sample_rate > 0 && mp->hop_samples > 0 ? (double)mp->hop_samples / mp->sample_rate : 0;
    double total = per_frame > 0 ? f->n_frames * per_frame : (double)f->n_frames;
    double step = nice_step(total, f->pw / 80);
    int y = f->y0 + f->ph + 1;
    for (int k = 0; k * step <= total + step * 1e-9; k++) {
        double v = k * step;
        int x = f->x0 + (int)lround(v / total * f->pw);
        if (x > f->x0 + f->pw) break;
        fill(c, x, y, 1, 6, INK);
        char lab[32];
        tick_label(v, step, lab, sizeof lab);
        text(c, x - text_width(lab) / 2, y + 9, lab, 0);
    }
    const char *title = per_frame > 0 ? "time (s)" : "frames";
    text(c, f->x0 + (f->pw - text_width(title)) / 2, y + 9 + GLYPH_H + 10, title, 0);
}

/* The height (0 bottom .. 1 top of the spectrogram) at which frequency hz is drawn: the
 * centre of the channel (a fractional one) whose filter peaks there. */
static double freq_position(const xtts_mel_params *mp, size_t n_mels, double hz) {
    double ch;
    if (mp->mel_scale == XTTS_MEL_SCALE_LINEAR) {
        ch = hz * mp->n_fft / mp->sample_rate;
    } else {
        double lo = xtts_hz_to_mel(mp->fmin_hz, mp->mel_scale), hi = xtts_hz_to_mel(mp->fmax_hz, mp->mel_scale);
        ch = (xtts_hz_to_mel(hz, mp->mel_scale) - lo) / (hi - lo) * (double)(n_mels + 1) - 1;
    }
    double y = (ch + 0.5) / (double)n_mels;
    return y < 0 ? 0 : y > 1 ? 1 : y;
}

/* The frequencies that get a tick: on a mel scale octaves from 250 Hz (and 0), on a linear
 * one even steps; those closer than a label's height to the one below are left out. */
static size_t freq_ticks(const figure *f, double *hz, size_t cap) {
    const xtts_mel_params *mp = f->l->mel;
    double top = mp->mel_scale == XTTS_MEL_SCALE_LINEAR ? mp->sample_rate / 2.0 : mp->fmax_hz;
    double bottom = mp->mel_scale == XTTS_MEL_SCALE_LINEAR ? 0 : mp->fmin_hz;
    double cand[64];
    size_t n = 0;
    if (mp->mel_scale == XTTS_MEL_SCALE_LINEAR) {
        double step = nice_step(top, f->ph / 40);
        for (double v = 0; v <= top + 1e-6 && n < 64; v += step) cand[n++] = v;
    } else {
        cand[n++] = 0;
        for (double v = 250; v <= top + 1e-6 && n < 64; v *= 2) cand[n++] = v;
    }
    size_t k = 0;
    int last = -1000;
    for (size_t i = 0; i < n && k < cap; i++) {
        if (cand[i] < bottom - 1e-6) continue;
        int y = (int)lround(freq_position(mp, f->n_mels, cand[i]) * f->ph);
        if (y - last < GLYPH_H + 6) continue;
        hz[k++] = cand[i];
        last = y;
    }
    return k;
}

/* Frequency axis left of the spectrogram (channels without mel parameters). */
static void draw_freq_axis(canvas *c, const figure *f) {
    const char *title;
    if (f->l && f->l->mel && f->l->mel->sample_rate > 0) {
        double hz[64];
        size_t n = freq_ticks(f, hz, 64);
        for (size_t i = 0; i < n; i++) {
            int y = f->y0 + f->ph - (int)lround(freq_position(f->l->mel, f->n_mels, hz[i]) * f->ph);
            fill(c, f->x0 - 7, y, 6, 1, INK);
            char lab[32];
            snprintf(lab, sizeof lab, "%.0f", hz[i]);
            text(c, f->x0 - 10 - text_width(lab), y - GLYPH_H / 2, lab, 0);
        }
        title = f->l->mel->mel_scale == XTTS_MEL_SCALE_LINEAR ? "frequency (Hz)" : "frequency (Hz, mel scale)";
    } else {
        double step = nice_step((double)f->n_mels, f->ph / 40);
        for (double v = 0; v <= (double)f->n_mels; v += step) {
            int y = f->y0 + f->ph - (int)lround(v / f->n_mels * f->ph);
            fill(c, f->x0 - 7, y, 6, 1, INK);
            char lab[32];
            snprintf(lab, sizeof lab, "%.0f", v);
            text(c, f->x0 - 10 - text_width(lab), y - GLYPH_H / 2, lab, 0);
        }
        title = "channel";
    }
    int tw = text_width(title);
    text(c, 10, f->y0 + (f->ph + tw) / 2, title, 1);
}

/* What the stored values are, for the colour bar: "ln(mel magnitude)", "log10(mel power)",
 * whisper's scaled log, or the bare magnitude. */
static void value_unit(const xtts_mel_params *mp, char *out, size_t cap) {
    if (!mp) { snprintf(out, cap, "stored value"); return; }
    const char *what = mp->power == 2 ? "power" : "magnitude";
    const char *kind = mp->mel_scale == XTTS_MEL_SCALE_LINEAR ? "" : "mel ";
    if (mp->whisper_post) snprintf(out, cap, "(log10(%s%s) + 4) / 4", kind, what);
    else if (mp->log_kind == XTTS_LOG_LN) snprintf(out, cap, "ln(%s%s)", kind, what);
    else if (mp->log_kind == XTTS_LOG_LOG10) snprintf(out, cap, "log10(%s%s)", kind, what);
    else snprintf(out, cap, "%s%s", kind, what);
}

/* Colour bar right of the spectrogram: lo at the bottom, hi at the top, ticks, the unit. */
static void draw_colorbar(canvas *c, const figure *f, int label_w) {
    int x = f->bar_x, w = 20;
    for (int y = 0; y < f->ph; y++) {
        uint8_t rgb[3];
        xtts_colormap_rgb(f->o->cmap, 1.0 - (y + 0.5) / f->ph, rgb);
        fill(c, x, f->y0 + y, w, 1, rgb);
    }
    fill(c, x - 1, f->y0 - 1, w + 2, 1, INK);
    fill(c, x - 1, f->y0 + f->ph, w + 2, 1, INK);
    fill(c, x - 1, f->y0 - 1, 1, f->ph + 2, INK);
    fill(c, x + w, f->y0 - 1, 1, f->ph + 2, INK);
    double span = f->hi - f->lo, step = nice_step(span, f->ph / 30 < 2 ? 2 : f->ph / 30);
    for (double v = ceil(f->lo / step - 1e-9) * step; v <= f->hi + step * 1e-9; v += step) {
        int y = f->y0 + f->ph - (int)lround((v - f->lo) / span * f->ph);
        fill(c, x + w + 1, y, 6, 1, INK);
        char lab[32];
        tick_label(v, step, lab, sizeof lab);
        text(c, x + w + 10, y - GLYPH_H / 2, lab, 0);
    }
    char unit[96];
    value_unit(f->l ? f->l->mel : NULL, unit, sizeof unit);
    char shown[96];
    drawable(unit, f->ph + 40, shown, sizeof shown);
    text(c, x + w + 10 + label_w + 12, f->y0 + (f->ph + text_width(shown)) / 2, shown, 1);
}

/* The widest label the colour bar gets. */
static int colorbar_label_width(const figure *f) {
    double span = f->hi - f->lo, step = nice_step(span, f->ph / 30 < 2 ? 2 : f->ph / 30);
    int w = 0;
    for (double v = ceil(f->lo / step - 1e-9) * step; v <= f->hi + step * 1e-9; v += step) {
        char lab[32];
        tick_label(v, step, lab, sizeof lab);
        if (text_width(lab) > w) w = text_width(lab);
    }
    return w;
}

/* ---- PNG ------------------------------------------------------------------------------------- */

static const uint8_t *canvas_row(void *ctx, size_t y, uint8_t *scratch) {
    (void)scratch;
    const canvas *c = ctx;
    return c->px + y * (size_t)c->w * 3;
}

/* The value range the colours span (--range, else the mel's finite min..max), widened when
 * it is a single value so that the colour bar has a scale. */
static void value_range(figure *f) {
    xtts_png_value_range(f->mel, f->n_mels, f->n_frames, f->stride, f->o, &f->lo, &f->hi);
    if (f->hi == f->lo) f->lo -= 0.5, f->hi += 0.5;
}

/* The widest frequency (or channel) label, for the left margin. */
static int freq_label_width(const figure *f) {
    if (!f->l || !f->l->mel || f->l->mel->sample_rate <= 0) return text_width("0000");
    double top = f->l->mel->mel_scale == XTTS_MEL_SCALE_LINEAR ? f->l->mel->sample_rate / 2.0 : f->l->mel->fmax_hz;
    char lab[32];
    snprintf(lab, sizeof lab, "%.0f", top);
    return text_width(lab);
}

xtts_status xtts_png_write_figure(const char *path, const float *mel, size_t n_mels, size_t n_frames, size_t stride,
                                  const xtts_png_labels *labels, const xtts_png_options *o, xtts_error *err) {
    if (!n_mels || !n_frames) return xtts_error_set(err, XTTS_EINPUT, "%s: empty mel, nothing to draw", path);
    figure f = {mel, n_mels, n_frames, stride, labels, o, 0, 0, 0, 0, 0, 0, 0};
    value_range(&f);
    plot_size(&f, &f.pw, &f.ph);
    int cbar_w = colorbar_label_width(&f);
    f.x0 = 10 + GLYPH_H + 12 + freq_label_width(&f) + 12;
    f.y0 = 12 + GLYPH_H + 14;
    f.bar_x = f.x0 + f.pw + 24;
    canvas c = {NULL, f.bar_x + 20 + 10 + cbar_w + 12 + GLYPH_H + 12, f.y0 + f.ph + 8 + GLYPH_H + 10 + GLYPH_H + 12};
    if ((double)c.w * c.h > 60e6)
        return xtts_error_set(err, XTTS_ERANGE, "%s: picture of %dx%d pixels is too large", path, c.w, c.h);
    c.px = malloc((size_t)c.w * (size_t)c.h * 3);
    if (!c.px) return xtts_error_set(err, XTTS_ENOMEM, "%s: out of memory", path);
    fill(&c, 0, 0, c.w, c.h, PAPER);
    draw_spectrogram(&c, &f);
    draw_time_axis(&c, &f);
    draw_freq_axis(&c, &f);
    draw_colorbar(&c, &f, cbar_w);
    if (labels && labels->title) {
        char t[512];
        drawable(labels->title, c.w - 20, t, sizeof t);
        text(&c, text_width(t) <= c.w - f.x0 - 10 ? f.x0 : 10, 12, t, 0); /* over the mel when it fits */
    }
    xtts_status st = xtts_png_write_rgb(path, (size_t)c.w, (size_t)c.h, canvas_row, &c, err);
    free(c.px);
    return st;
}
